"""Creates or updates everything the tests rely on (idempotent, run at every start):
the test user, the OAuth applications, their secrets (0600 files under the run
directory), the IAP configuration file and the environment file for the tests."""
import json
import os
import secrets
import shlex

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.core.management.base import BaseCommand
from oauth2_provider.models import get_application_model

from portaltest.portal import GENERATE_TOKEN_CLIENT_ID

USERNAME = "alice"
PUBLIC_CLIENT_ID = "portal-auth-test"
APP_CLIENT_ID = "portal-auth-app"
# Clients of the peers that scripts/bench compares with (MSAL for Python, oidc-agent).
BENCH_MSAL_CLIENT_ID = "portal-auth-bench-msal"
BENCH_AGENT_CLIENT_ID = "portal-auth-bench-agent"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
# The custom-scheme redirect the SDK's IAP files and ArcGIS native apps use; a desktop hands it to the
# scheme's handler (portal-auth handle-redirect). Registered exactly (no port rules apply).
CUSTOM_SCHEME_REDIRECT = "my-maps-app://auth"
# ArcGIS's out-of-band redirect: the portal face shows the code on its approval page instead of redirecting.
OUT_OF_BAND_REDIRECT = "urn:ietf:wg:oauth:2.0:oob"


def _write_private(path, text):
    """Writes `text` to `path` atomically with mode 0600."""
    temporary = f"{path}.tmp{os.getpid()}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def _secret(name):
    path = settings.SECRETS_DIR / name
    if not path.exists():
        _write_private(path, secrets.token_urlsafe(24))
    return path, path.read_text().strip()


class Command(BaseCommand):
    help = "Bootstraps the PortalAuth test authorization server (idempotent)."

    def handle(self, *args, **options):
        password_path, password = _secret("alice.password")
        app_secret_path, app_secret = _secret("portal-auth-app.secret")
        agent_secret_path, agent_secret = _secret("portal-auth-bench-agent.secret")

        User = get_user_model()
        user, _ = User.objects.get_or_create(username=USERNAME)
        user.first_name, user.last_name, user.email = "Alice", "Tester", "alice@example.test"
        user.is_active = True
        if not user.has_usable_password() or not user.check_password(password):
            user.set_password(password)
        user.save()

        Application = get_application_model()
        redirect_paths = os.environ.get("PORTAL_AUTH_TEST_REDIRECT_PATHS", "/callback").split()
        redirects = [f"http://{host}{p}" for p in redirect_paths for host in LOOPBACK_HOSTS]
        logout_redirects = redirects + [f"http://{host}/logout" for host in LOOPBACK_HOSTS if "/logout" not in redirect_paths]

        public, _ = Application.objects.get_or_create(client_id=PUBLIC_CLIENT_ID)
        public.name = "PortalAuth Test"
        public.client_type = Application.CLIENT_PUBLIC
        public.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
        public.redirect_uris = " ".join(redirects + [CUSTOM_SCHEME_REDIRECT, OUT_OF_BAND_REDIRECT])
        public.post_logout_redirect_uris = " ".join(logout_redirects)
        public.skip_authorization = False
        public.algorithm = Application.RS256_ALGORITHM
        public.user = None
        public.client_secret = ""
        public.hash_client_secret = False
        public.save()

        app, _ = Application.objects.get_or_create(client_id=APP_CLIENT_ID)
        app.name = "PortalAuth Test App (client credentials)"
        app.client_type = Application.CLIENT_CONFIDENTIAL
        app.authorization_grant_type = Application.GRANT_CLIENT_CREDENTIALS
        app.redirect_uris = ""
        app.algorithm = Application.NO_ALGORITHM
        app.hash_client_secret = True
        if not app.client_secret or not check_password(app_secret, app.client_secret):
            app.client_secret = app_secret
        app.save()

        internal, _ = Application.objects.get_or_create(client_id=GENERATE_TOKEN_CLIENT_ID)
        internal.name = "ArcGIS generateToken (internal)"
        internal.client_type = Application.CLIENT_PUBLIC
        internal.authorization_grant_type = Application.GRANT_PASSWORD
        internal.redirect_uris = ""
        internal.client_secret = ""
        internal.hash_client_secret = False
        internal.algorithm = Application.NO_ALGORITHM
        internal.save()

        # MSAL for Python's acquire_token_interactive: public, authorization code + PKCE, redirect
        # http://localhost:PORT with no path (any port, as for the test client).
        msal_client, _ = Application.objects.get_or_create(client_id=BENCH_MSAL_CLIENT_ID)
        msal_client.name = "PortalAuth bench: MSAL for Python"
        msal_client.client_type = Application.CLIENT_PUBLIC
        msal_client.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
        msal_client.redirect_uris = " ".join(f"http://{host}" for host in LOOPBACK_HOSTS)
        msal_client.skip_authorization = False
        msal_client.algorithm = Application.RS256_ALGORITHM
        msal_client.client_secret = ""
        msal_client.hash_client_secret = False
        msal_client.save()

        # oidc-agent (oidc-gen --flow=password, non-interactive): confidential, password grant.
        agent_client, _ = Application.objects.get_or_create(client_id=BENCH_AGENT_CLIENT_ID)
        agent_client.name = "PortalAuth bench: oidc-agent"
        agent_client.client_type = Application.CLIENT_CONFIDENTIAL
        agent_client.authorization_grant_type = Application.GRANT_PASSWORD
        agent_client.redirect_uris = ""
        agent_client.algorithm = Application.RS256_ALGORITHM
        agent_client.hash_client_secret = True
        if not agent_client.client_secret or not check_password(agent_secret, agent_client.client_secret):
            agent_client.client_secret = agent_secret
        agent_client.save()

        base = settings.BASE_URL
        run_dir = settings.RUN_DIR
        iap_path = run_dir / "iap-local.json"
        iap = {
            "authorize_url": f"{settings.ISSUER}/authorize/",
            "token_url": f"{settings.ISSUER}/token/",
            "logout_url": f"{settings.ISSUER}/logout/",
            "client_id": PUBLIC_CLIENT_ID,
            "redirect_url": "http://127.0.0.1/callback",
            "scope": ["openid", "profile", "email", "offline_access"],
            "hosts_behind_proxy": ["localhost"],
            "authorization_prompt_type": "",
        }
        _write_private(iap_path, json.dumps(iap, indent=2) + "\n")
        iap_scheme_path = run_dir / "iap-scheme.json"
        _write_private(iap_scheme_path, json.dumps(dict(iap, redirect_url=CUSTOM_SCHEME_REDIRECT), indent=2) + "\n")

        browser = settings.PROJECT_ROOT / "Tests" / "BrowserDriver" / "portal-auth-test-browser"
        port = base.rsplit(":", 1)[1]
        variables = {
            "PORTAL_AUTH_TEST_SERVER": base,
            "PORTAL_AUTH_TEST_PORT_IN_USE": port,
            "PORTAL_AUTH_TEST_PORTAL": f"{base}/arcgis",
            "PORTAL_AUTH_TEST_ISSUER": settings.ISSUER,
            "PORTAL_AUTH_TEST_CLIENT_ID": PUBLIC_CLIENT_ID,
            "PORTAL_AUTH_TEST_APP_CLIENT_ID": APP_CLIENT_ID,
            "PORTAL_AUTH_TEST_APP_SECRET_FILE": str(app_secret_path),
            "PORTAL_AUTH_TEST_USERNAME": USERNAME,
            "PORTAL_AUTH_TEST_PASSWORD_FILE": str(password_path),
            "PORTAL_AUTH_TEST_IAP_CONFIG": str(iap_path),
            "PORTAL_AUTH_TEST_IAP_SCHEME_CONFIG": str(iap_scheme_path),
            "PORTAL_AUTH_TEST_SCHEME_REDIRECT": CUSTOM_SCHEME_REDIRECT,
            "PORTAL_AUTH_TEST_IAP_URL": base.replace("127.0.0.1", "localhost") + "/iap/app/",
            "PORTAL_AUTH_TEST_TESTCTL": f"{base}/testctl",
            "PORTAL_AUTH_TEST_BROWSER": str(browser),
            "PORTAL_AUTH_TEST_RUN_DIR": str(run_dir),
            "PORTAL_AUTH_TEST_BENCH_MSAL_CLIENT_ID": BENCH_MSAL_CLIENT_ID,
            "PORTAL_AUTH_TEST_BENCH_AGENT_CLIENT_ID": BENCH_AGENT_CLIENT_ID,
            "PORTAL_AUTH_TEST_BENCH_AGENT_SECRET_FILE": str(agent_secret_path),
        }
        lines = ["# Written by scripts/authserver start; source it. Secrets are in the named 0600 files."]
        lines += [f"export {name}={shlex.quote(value)}" for name, value in variables.items()]
        _write_private(run_dir / "authserver.env", "\n".join(lines) + "\n")
        self.stdout.write(f"bootstrapped {base}")
