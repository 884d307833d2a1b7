"""Settings of the PortalAuth test authorization server.

A loopback-only django-oauth-toolkit (DOT) server for the project's integration tests
and demo: never deploy it. Everything it writes lives under the run directory
(PORTAL_AUTH_RUN_DIR, default <project>/.run): the sqlite database, the OIDC RSA key
and the generated secrets.
"""
import os
import stat
from pathlib import Path

SERVER_DIR = Path(__file__).resolve().parent.parent          # Tests/AuthServer
PROJECT_ROOT = SERVER_DIR.parent.parent
RUN_DIR = Path(os.environ.get("PORTAL_AUTH_RUN_DIR") or PROJECT_ROOT / ".run").resolve()
RUN_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
SECRETS_DIR = RUN_DIR / "secrets"
SECRETS_DIR.mkdir(mode=0o700, exist_ok=True)

# The externally visible base URL, set by scripts/authserver (which picks the port).
BASE_URL = os.environ.get("PORTAL_AUTH_TEST_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
ISSUER = BASE_URL + "/o"

# Access-token lifetime at start; POST /testctl/config changes it at run time.
ACCESS_TOKEN_SECONDS = int(os.environ.get("PORTAL_AUTH_TEST_ACCESS_TOKEN_SECONDS", "3600"))
# ID-token lifetime (DOT's ID_TOKEN_EXPIRE_SECONDS), fixed at start; the access-token lifetime unless given.
ID_TOKEN_SECONDS = int(os.environ.get("PORTAL_AUTH_TEST_ID_TOKEN_SECONDS", "") or ACCESS_TOKEN_SECONDS)
# Refresh tokens die this long after their access token expired (DOT's rule); 90 days.
REFRESH_TOKEN_SECONDS = 90 * 24 * 3600


def _secret_file(name, make):
    """Returns the content of a 0600 file under SECRETS_DIR, creating it once."""
    path = SECRETS_DIR / name
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(make())
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    return path.read_text()


def _django_secret():
    import secrets

    return secrets.token_urlsafe(48)


def _rsa_key():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


SECRET_KEY = _secret_file("django-secret-key", _django_secret)
OIDC_RSA_PRIVATE_KEY = _secret_file("oidc-rsa.pem", _rsa_key)

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]

INSTALLED_APPS = [
    "portaltest",  # first, so its templates override DOT's
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]

MIDDLEWARE = [
    "portaltest.middleware.LoopbackOnlyMiddleware",
    "portaltest.middleware.TokenEndpointStatsMiddleware",
    "portaltest.oidccases.OIDCCaseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]

ROOT_URLCONF = "authserver.urls"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ],
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(RUN_DIR / "authserver.sqlite3"),
        "OPTIONS": {
            # Concurrent token requests (16+ processes) must queue, not fail.
            "timeout": 60,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# A cheaper PBKDF2 than Django's default: logins, client-secret checks and
# generateToken stay fast on the 2-core test machines.
PASSWORD_HASHERS = ["portaltest.hashers.TestPBKDF2PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = []

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
SESSION_COOKIE_NAME = "portalauth_test_session"
CSRF_COOKIE_NAME = "portalauth_test_csrf"

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en-us"
USE_I18N = False

SCOPES = {
    "openid": "OpenID Connect sign-in",
    "profile": "Your name and username",
    "email": "Your e-mail address",
    "offline_access": "Stay signed in (refresh tokens)",
    "read": "Read your content",
    "write": "Change your content",
}

def _access_token_lifetime(request):
    from portaltest.runtime import access_token_lifetime

    return access_token_lifetime(request)


OAUTH2_PROVIDER = {
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,         # S256 only
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,      # no implicit grant
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,  # RFC 9207 `iss` on the DOT face
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": ISSUER,
    "OIDC_RSA_PRIVATE_KEY": OIDC_RSA_PRIVATE_KEY,
    "OIDC_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    # No confirmation page when the id_token_hint names the signed-in user (or nobody is signed in).
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
    "OIDC_RP_INITIATED_LOGOUT_DELETE_TOKENS": True,
    "OIDC_RP_INITIATED_LOGOUT_ACCEPT_EXPIRED_TOKENS": True,
    "OAUTH2_VALIDATOR_CLASS": "portaltest.validators.TestOAuth2Validator",
    # The device authorization grant (RFC 8628): ID tokens in its token responses.
    "OIDC_SERVER_CLASS": "portaltest.device.TestOIDCServer",
    "OAUTH_DEVICE_VERIFICATION_URI": ISSUER + "/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": ISSUER + "/device/?user_code={user_code}",
    # RFC 8628 says 5 s; 1 s keeps the tests short (slow_down still adds 5 s).
    "DEVICE_FLOW_INTERVAL": int(os.environ.get("PORTAL_AUTH_TEST_DEVICE_INTERVAL", "1")),
    "SCOPES": SCOPES,
    "DEFAULT_SCOPES": ["read", "write"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_SECONDS,
    "ID_TOKEN_EXPIRE_SECONDS": ID_TOKEN_SECONDS,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 120,
    "REFRESH_TOKEN_EXPIRE_SECONDS": REFRESH_TOKEN_SECONDS,
    # Rotation with no grace period: an old refresh token fails at once with invalid_grant.
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "REFRESH_TOKEN_REUSE_PROTECTION": os.environ.get("PORTAL_AUTH_TEST_REUSE_PROTECTION", "") == "1",
    # RFC 8252 section 7.3 (any port for 127.0.0.1 and [::1]) extended to "localhost".
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # my-maps-app: the custom-scheme redirect of the SDK's configurations (received through the desktop's
    # x-scheme-handler; see portaltest/management/commands/bootstrap.py).
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https", "my-maps-app"],
    "REQUEST_APPROVAL_PROMPT": "force",
    "EXTRA_SERVER_KWARGS": {
        # Lifetimes decided per request (run-time config, portal `expiration`).
        "token_expires_in": lambda request: _access_token_lifetime(request),
    },
}


LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"no_query": {"()": "portaltest.logfilters.StripQueryStrings"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["no_query"]},
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        "django.server": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "portaltest": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "oauth2_provider": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
    },
}
