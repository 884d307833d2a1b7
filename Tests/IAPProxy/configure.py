#!/usr/bin/env python3
"""Configures the test Identity-Aware Proxy (scripts/iap-proxy): Apache httpd + mod_auth_openidc in front of
Tests/IAPProxy/backend.py, protected by the project's test providers that are running (the django-oauth-toolkit
server of scripts/authserver and Glewlwyd of scripts/glewlwyd; their environment variables say which).

    configure.py --dir DIR --port P --tls-port T --backend-port B --env FILE [--public-dir D] [--user U --group G]

For each provider PROVIDER (`authserver`, `glewlwyd`) it
- registers the proxy's own confidential client `portal-auth-iap-proxy` there, with this run's redirect URLs (the
  proxy's browser sign-in; the secret in DIR/secrets/, 0600), and (django-oauth-toolkit) a second public client
  `portal-auth-test-other` like the test client, whose tokens the proxy refuses (Glewlwyd's is provisioned by
  Tests/Glewlwyd/provision.py);
- writes the Apache configuration DIR/httpd.conf: name-based virtual hosts on 127.0.0.1:P
    app.PROVIDER.localhost     /auth/    OIDCUnAuthAction auth (a browser is sent to the provider: 302)
                               /api/     OIDCUnAuthAction 401  (401 without a sign-in request)
                               /portal/  302 to the proxy's own page /signin.html without a session or bearer token
                               /signin.html  that page (not protected)
    post.PROVIDER.localhost    /         OIDCUnAuthAction auth with OIDCProviderAuthRequestMethod POST (a 200 page
                                         that posts itself to the authorize endpoint)
    access.PROVIDER.localhost  /         accepts access tokens instead of ID tokens (see below)
  and a TLS front on 127.0.0.1:T (Apache mod_ssl + mod_proxy_http, certificate of a local CA made here) through which
  mod_auth_openidc reaches each provider's token endpoint and JWKS (it wants those over https), /PROVIDER/ -> provider;
- writes IAP configuration files (the provider's test client, hosts_behind_proxy ["*.PROVIDER.localhost"]) and the
  environment file FILE for the integration tests.

Bearer tokens (native clients): `AuthType auth-openidc` is mod_auth_openidc's mixed mode, a request with
`Authorization: Bearer` is checked as an OAuth 2.0 resource server would (OIDCOAuthAcceptTokenAs header), any other as
a browser session. On app. and post. hosts the token must be a JWT signed with a key of the provider's JWKS
(OIDCOAuthVerifyJwksUri, unexpired); `Require claim` then admits only the provider's issuer and the audiences of the
test client (an ID token of portal-auth-test / portal-auth-glewlwyd) and the proxy's own client (browser sessions): an
ID token of another client of the same provider is refused. On access. hosts: Glewlwyd's access tokens are JWTs
(same key; their `aud` names no client, so the check is the issuer and the scope `openid`), django-oauth-toolkit's are
opaque and checked by RFC 7662 introspection with the proxy's client.
"""
import argparse
import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Glewlwyd"))

PROXY_CLIENT = "portal-auth-iap-proxy"
MODULES = "/usr/lib/apache2/modules"
PATHS = ("/redirect_uri",)


def private_write(path, text, mode=0o600):
    temporary = f"{path}.tmp{os.getpid()}"
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w") as f:
        f.write(text)
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def secret(directory, name):
    path = os.path.join(directory, "secrets", name)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if not os.path.exists(path):
        private_write(path, secrets.token_urlsafe(24))
    with open(path) as f:
        return f.read().strip()


def redirect_urls(provider, port):
    return [f"http://{prefix}.{provider}.localhost:{port}/redirect_uri" for prefix in ("app", "post", "access")]


def register_glewlwyd(base, redirects, client_secret):
    from provision import ADMIN, API  # Tests/Glewlwyd/provision.py

    api = API(base)
    api.call("POST", "/api/auth/", {"username": ADMIN[0], "password": ADMIN[1]})
    api.upsert("/api/client/", PROXY_CLIENT, {
        "client_id": PROXY_CLIENT, "name": "portal-auth test IAP proxy (mod_auth_openidc)", "description": "",
        "confidential": True, "secret": client_secret, "enabled": True, "redirect_uri": redirects,
        "authorization_type": ["code", "refresh_token"], "scope": [], "post_logout_redirect_uris": [],
        "token_endpoint_auth_method": ["client_secret_basic"],
    })


DOT_REGISTRATION = """
import os
from oauth2_provider.models import get_application_model
Application = get_application_model()
client, _ = Application.objects.get_or_create(client_id=os.environ["IAP_PROXY_CLIENT_ID"])
client.name = "portal-auth test IAP proxy (mod_auth_openidc)"
client.client_type = Application.CLIENT_CONFIDENTIAL
client.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
client.redirect_uris = os.environ["IAP_PROXY_REDIRECTS"]
client.skip_authorization = True
client.algorithm = Application.RS256_ALGORITHM
client.hash_client_secret = False
client.client_secret = os.environ["IAP_PROXY_CLIENT_SECRET"]
client.save()
# A second public client like the test client, whose tokens the proxy refuses (another audience).
test_client = Application.objects.get(client_id=os.environ["IAP_TEST_CLIENT_ID"])
other, _ = Application.objects.get_or_create(client_id=os.environ["IAP_OTHER_CLIENT_ID"])
other.name = "PortalAuth Test (a client the IAP proxy does not accept)"
other.client_type = Application.CLIENT_PUBLIC
other.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
other.redirect_uris = test_client.redirect_uris
other.post_logout_redirect_uris = test_client.post_logout_redirect_uris
other.skip_authorization = False
other.algorithm = Application.RS256_ALGORITHM
other.client_secret = ""
other.hash_client_secret = False
other.save()
"""
DOT_OTHER_CLIENT = "portal-auth-test-other"


def register_authserver(python, redirects, client_secret, run_dir):
    environment = dict(os.environ, DJANGO_SETTINGS_MODULE="authserver.settings", PYTHONDONTWRITEBYTECODE="1",
                       PORTAL_AUTH_RUN_DIR=run_dir, IAP_PROXY_CLIENT_ID=PROXY_CLIENT,
                       IAP_PROXY_REDIRECTS=" ".join(redirects), IAP_PROXY_CLIENT_SECRET=client_secret,
                       IAP_TEST_CLIENT_ID=os.environ["PORTAL_AUTH_TEST_CLIENT_ID"], IAP_OTHER_CLIENT_ID=DOT_OTHER_CLIENT)
    environment["PORTAL_AUTH_TEST_BASE_URL"] = os.environ["PORTAL_AUTH_TEST_SERVER"]
    subprocess.run([python, os.path.join(ROOT, "Tests", "AuthServer", "manage.py"), "shell", "-c", DOT_REGISTRATION],
                   cwd=os.path.join(ROOT, "Tests", "AuthServer"), env=environment, check=True,
                   stdout=subprocess.DEVNULL)


def providers(args):
    """The running providers: name, issuer, browser-facing endpoints, back-channel base, test client."""
    found = []
    if os.environ.get("PORTAL_AUTH_TEST_SERVER"):
        base = os.environ["PORTAL_AUTH_TEST_SERVER"].rstrip("/")
        found.append({
            "name": "authserver", "base": base, "issuer": os.environ["PORTAL_AUTH_TEST_ISSUER"],
            "authorize_path": "/o/authorize/", "end_session_path": "/o/logout/",
            "token_path": "/o/token/", "jwks_path": "/o/.well-known/jwks.json", "introspect_path": "/o/introspect/",
            "client": os.environ["PORTAL_AUTH_TEST_CLIENT_ID"], "iap_config": os.environ["PORTAL_AUTH_TEST_IAP_CONFIG"],
            "scope": "openid profile", "other_client": DOT_OTHER_CLIENT,
        })
    if os.environ.get("PORTAL_AUTH_GLEWLWYD_BASE"):
        base = os.environ["PORTAL_AUTH_GLEWLWYD_BASE"].rstrip("/")
        found.append({
            "name": "glewlwyd", "base": base, "issuer": os.environ["PORTAL_AUTH_GLEWLWYD_ISSUER"],
            "authorize_path": "/api/oidc/auth", "end_session_path": "/api/oidc/end_session",
            "token_path": "/api/oidc/token", "jwks_path": "/api/oidc/jwks", "introspect_path": None,
            "client": os.environ["PORTAL_AUTH_GLEWLWYD_CLIENT_ID"], "iap_config": os.environ["PORTAL_AUTH_GLEWLWYD_IAP_CONFIG"],
            "other_client": os.environ.get("PORTAL_AUTH_GLEWLWYD_OTHER_CLIENT_ID"),
            "scope": "openid",
        })
    return found


def tls_front(p, args):
    """The provider's endpoints over https: the TLS front's virtual host for it (same paths)."""
    return f"https://{p['name']}.localhost:{args.tls_port}"


def provider_settings(p, args, passphrase, client_secret, post=False):
    front = tls_front(p, args)
    return f"""
    OIDCProviderIssuer {p['issuer']}
    OIDCProviderAuthorizationEndpoint {front}{p['authorize_path']}
    OIDCProviderTokenEndpoint {front}{p['token_path']}
    OIDCProviderTokenEndpointAuth client_secret_basic
    OIDCProviderJwksUri {front}{p['jwks_path']}
    OIDCProviderEndSessionEndpoint {front}{p['end_session_path']}
    OIDCProviderAuthRequestMethod {'POST' if post else 'GET'}
    OIDCClientID {PROXY_CLIENT}
    OIDCClientSecret {client_secret}
    OIDCRedirectURI /redirect_uri
    OIDCCryptoPassphrase {passphrase}
    OIDCScope "{p['scope']}"
    OIDCPKCEMethod S256
    OIDCCABundlePath {args.ca_bundle}
    OIDCSSLValidateServer On
    OIDCOAuthSSLValidateServer On
    OIDCOAuthAcceptTokenAs header
    OIDCPassClaimsAs headers
    OIDCCookieSameSite On
    OIDCSessionInactivityTimeout 3600
"""


def vhost(p, prefix, args, body):
    return f"""
<VirtualHost 127.0.0.1:{args.port}>
    ServerName {prefix}.{p['name']}.localhost:{args.port}
    UseCanonicalName Off
    ProxyPreserveHost On
{body}
</VirtualHost>
"""


def requirements(p, audiences):
    lines = "\n".join(f"            Require claim aud:{a}" for a in audiences)
    return f"""        <RequireAll>
            Require claim iss:{p['issuer']}
            <RequireAny>
{lines}
            </RequireAny>
        </RequireAll>"""


def app_hosts(p, args, passphrase, client_secret):
    admitted = requirements(p, [p["client"], PROXY_CLIENT])
    backend = f"http://127.0.0.1:{args.backend_port}/"
    common = provider_settings(p, args, passphrase, client_secret) + f"""
    OIDCOAuthVerifyJwksUri {tls_front(p, args)}{p['jwks_path']}
    ProxyPass /redirect_uri !
    ProxyPass / {backend}
    <Location /redirect_uri>
        AuthType openid-connect
        Require valid-user
    </Location>
"""
    app = common + f"""
    <Location /auth/>
        AuthType auth-openidc
        OIDCUnAuthAction auth
{admitted}
    </Location>
    <Location /api/>
        AuthType auth-openidc
        OIDCUnAuthAction 401
{admitted}
    </Location>
    # The proxy's own sign-in page: without a session cookie or a bearer token, /portal/ answers 302 /signin.html.
    RewriteEngine On
    RewriteCond %{{HTTP:Authorization}} !^Bearer\\s [NC]
    RewriteCond %{{HTTP_COOKIE}} !mod_auth_openidc_session=
    RewriteRule ^/portal/ /signin.html [R=302,L]
    <Location /portal/>
        AuthType auth-openidc
        OIDCUnAuthAction auth
{admitted}
    </Location>
"""
    post = provider_settings(p, args, passphrase, client_secret, post=True) + f"""
    OIDCOAuthVerifyJwksUri {tls_front(p, args)}{p['jwks_path']}
    ProxyPass /redirect_uri !
    ProxyPass / {backend}
    <Location />
        AuthType auth-openidc
        OIDCUnAuthAction auth
{admitted}
    </Location>
    <Location /redirect_uri>
        AuthType openid-connect
        Require valid-user
    </Location>
"""
    if p["introspect_path"]:
        access_check = f"""
    OIDCOAuthIntrospectionEndpoint {tls_front(p, args)}{p['introspect_path']}
    OIDCOAuthIntrospectionEndpointAuth client_secret_basic
    OIDCOAuthClientID {PROXY_CLIENT}
    OIDCOAuthClientSecret {client_secret}
    # django-oauth-toolkit's introspection answer names the user as `username` (no `sub`).
    OIDCOAuthRemoteUserClaim username
"""
        access_require = "        Require valid-user"
    else:
        access_check = f"""
    OIDCOAuthVerifyJwksUri {tls_front(p, args)}{p['jwks_path']}
"""
        # Glewlwyd's access tokens: its issuer, the scope granted, and no ID-token nonce/at_hash.
        access_require = f"""        <RequireAll>
            Require claim iss:{p['issuer']}
            Require claim type:access_token
        </RequireAll>"""
    access = provider_settings(p, args, passphrase, client_secret) + access_check + f"""
    ProxyPass /redirect_uri !
    ProxyPass / {backend}
    <Location />
        AuthType oauth20
{access_require}
    </Location>
"""
    return vhost(p, "app", args, app) + vhost(p, "post", args, post) + vhost(p, "access", args, access)


def httpd_conf(args, found, passphrase, secrets_by_provider):
    d = args.dir
    # mod_log_config and mod_unixd (User, Group) are built into Debian's apache2.
    modules = ["mpm_event", "authz_core", "authz_user", "authn_core", "proxy", "proxy_http", "ssl", "socache_shmcb", "rewrite",
               "setenvif", "auth_openidc"]
    loads = "\n".join(f"LoadModule {m}_module {MODULES}/mod_{m}.so" for m in modules)
    user = f"User {args.user}\nGroup {args.group}\n" if args.user else ""
    hosts = "".join(app_hosts(p, args, passphrase, secrets_by_provider[p["name"]]) for p in found)
    fronts = "".join(f"""
# The TLS front of {p['name']}: mod_auth_openidc's back channel (token endpoint, JWKS, introspection) and the
# authorization and end-session endpoints it sends browsers to (it accepts only https URLs for all of them).
<VirtualHost 127.0.0.1:{args.tls_port}>
    ServerName {p['name']}.localhost
    SSLEngine on
    SSLCertificateFile {d}/tls/server.pem
    SSLCertificateKeyFile {d}/tls/server.key
    ProxyPass / {p['base']}/
    ProxyPassReverse / {p['base']}/
</VirtualHost>
""" for p in found)
    return f"""# Generated by Tests/IAPProxy/configure.py for scripts/iap-proxy: do not edit (rewritten at every start).
ServerRoot {d}
{loads}
{user}PidFile {d}/httpd.pid
DefaultRuntimeDir {d}/runtime
Mutex file:{d}/runtime default
ErrorLog {d}/error.log
LogLevel warn auth_openidc:{args.log_level}
# No query strings (authorization codes), no tokens: method, host, path, status, whether a bearer token came.
SetEnvIf Authorization "^[Bb]earer " bearer=yes
LogFormat "%v %m %U %>s bearer=%{{bearer}}e" iap
CustomLog {d}/access.log iap
ServerName 127.0.0.1
ServerTokens Prod
StartServers 1
ServerLimit 2
ThreadsPerChild 16
MaxRequestWorkers 32
MinSpareThreads 4
MaxSpareThreads 32
Timeout 30
KeepAlive On
ProxyTimeout 30
Listen 127.0.0.1:{args.port}
Listen 127.0.0.1:{args.tls_port}
SSLSessionCache shmcb:{d}/runtime/ssl_scache(512000)
OIDCCacheType shm
{fronts}{hosts}"""


def main():
    parser = argparse.ArgumentParser()
    for name in ("--dir", "--port", "--tls-port", "--backend-port", "--env", "--ca-bundle"):
        parser.add_argument(name, required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--user")
    parser.add_argument("--group")
    parser.add_argument("--log-level", default="warn")
    args = parser.parse_args()
    found = providers(args)
    if not found:
        raise SystemExit("no provider is running: start scripts/authserver or scripts/glewlwyd first "
                         "(their .run/*.env files are read)")
    passphrase = secret(args.dir, "crypto-passphrase")
    secrets_by_provider = {}
    for p in found:
        client_secret = secret(args.dir, f"{p['name']}-proxy-client.secret")
        secrets_by_provider[p["name"]] = client_secret
        redirects = redirect_urls(p["name"], args.port)
        if p["name"] == "glewlwyd":
            register_glewlwyd(p["base"], redirects, client_secret)
        else:
            register_authserver(args.python, redirects, client_secret, args.run_dir)
    private_write(os.path.join(args.dir, "httpd.conf"), httpd_conf(args, found, passphrase, secrets_by_provider))

    lines = [f"export PORTAL_AUTH_IAP_PROXY_PORT={args.port}",
             f"export PORTAL_AUTH_IAP_PROXY_PROVIDERS=\"{' '.join(p['name'] for p in found)}\"",
             f"export PORTAL_AUTH_IAP_PROXY_ACCESS_LOG={args.dir}/access.log",
             f"export PORTAL_AUTH_IAP_PROXY_ERROR_LOG={args.dir}/error.log",
             f"export PORTAL_AUTH_IAP_PROXY_CLIENT_ID={PROXY_CLIENT}"]
    for p in found:
        upper = p["name"].upper()
        with open(p["iap_config"]) as f:
            config = json.load(f)
        config["hosts_behind_proxy"] = [f"*.{p['name']}.localhost"]
        config_path = os.path.join(args.dir, f"{p['name']}-iap.json")
        private_write(config_path, json.dumps(config, indent=2) + "\n", 0o644)
        for prefix in ("app", "post", "access"):
            lines.append(f"export PORTAL_AUTH_IAP_PROXY_{upper}_{prefix.upper()}=http://{prefix}.{p['name']}.localhost:{args.port}")
        lines.append(f"export PORTAL_AUTH_IAP_PROXY_{upper}_CONFIG={config_path}")
        if p.get("other_client"):
            # The provider's client whose tokens the proxy refuses (another audience).
            other = dict(config, client_id=p["other_client"])
            other_path = os.path.join(args.dir, f"{p['name']}-other-iap.json")
            private_write(other_path, json.dumps(other, indent=2) + "\n", 0o644)
            lines.append(f"export PORTAL_AUTH_IAP_PROXY_{upper}_OTHER_CONFIG={other_path}")
        lines.append(f"export PORTAL_AUTH_IAP_PROXY_{upper}_ISSUER={p['issuer']}")
    private_write(args.env, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
