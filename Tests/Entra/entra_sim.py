#!/usr/bin/env python3
"""A simulation of Microsoft Entra ID (the seed's IAP provider) for the integration tests, built from Microsoft's
published protocol documents; Tests/Entra/README.md lists them, and each behaviour below names its source.

    entra_sim.py --dir DIR --env ENV_FILE --ca DIR/ca.pem --cert DIR/server.pem --key DIR/server.key [--lifetime S]

Two listeners on 127.0.0.1, ephemeral ports:
  - the CONNECT proxy (the tools get it as https_proxy): CONNECT to login.microsoftonline.com, graph.microsoft.com,
    login.microsoftonline.us, login.chinacloudapi.cn or *.msappproxy.net, port 443, is tunnelled to the TLS server;
    every other name is refused (403). Plain GET/POST /control/... on the same port steer the simulation (below).
  - the TLS server (certificate of the test CA made by scripts/entra) answering for those names by the Host header.

It writes ENV_FILE (PORTAL_AUTH_ENTRA_* variables, see README.md) and the tenants' IAP configurations into DIR/configs
once it listens, logs one JSON line per request to DIR/requests.log (host, method, path, status, bearer: no query, no
token), and exits on SIGTERM or after --lifetime seconds. Standard library + `cryptography` (in .venv).
"""
import argparse
import base64
import datetime
import hashlib
import html
import json
import os
import secrets
import select
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

arguments = argparse.ArgumentParser()
arguments.add_argument("--dir", required=True)
arguments.add_argument("--env", required=True)
arguments.add_argument("--ca", required=True)
arguments.add_argument("--cert", required=True)
arguments.add_argument("--key", required=True)
arguments.add_argument("--lifetime", type=float, default=6 * 3600)
options = arguments.parse_args()

# ---------------------------------------------------------------------------------------------------------------------
# The directory: tenants, domains, users, app registrations.
# v2-protocols-oidc.md ("Find your app's OpenID configuration document URI", tenant table): {tenant} is a GUID or a
# domain (contoso.onmicrosoft.com, a verified custom domain), or organizations, common, consumers.

PUBLIC = "login.microsoftonline.com"
USGOV = "login.microsoftonline.us"  # authentication-national-cloud.md: "Azure Government"
CHINA = "login.chinacloudapi.cn"  # authentication-national-cloud.md: "Microsoft Azure operated by 21Vianet"
GRAPH = "graph.microsoft.com"
GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000"  # Microsoft Graph's application ID (userinfo.md's audience)
# id-token-claims-reference.md, `tid`: "9188040d-6c67-4c5b-b112-36a304b66dad" is the tenant of personal accounts.
CONSUMERS_TID = "9188040d-6c67-4c5b-b112-36a304b66dad"

CONTOSO = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"  # the seed's tenant (Fixtures/iap/entra.json)
FABRIKAM = "b5c2e8a1-7d3f-4e6a-9c1b-2f8d4a6e0c55"  # another organization (multi-tenant sign-ins, forged tid)
GOVTENANT = "c7d1a2b3-4e5f-4a6b-8c9d-0e1f2a3b4c5d"  # a tenant in the US Government cloud
CLIENT = "6731de76-14a6-49ae-97bc-6eba6914391e"  # the seed's client: multi-tenant, public client flows allowed
NO_PUBLIC_CLIENT = "0d8a9b7c-6e5f-4a3b-9c2d-1e0f9a8b7c6d"  # "Allow public client flows" off (AADSTS7000218)
GOV_CLIENT = "5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716"

TENANTS = {
    CONTOSO: {"cloud": PUBLIC, "domains": ["contoso.onmicrosoft.com", "contoso.com"], "region": "NA"},
    FABRIKAM: {"cloud": PUBLIC, "domains": ["fabrikam.onmicrosoft.com"], "region": "EU"},
    GOVTENANT: {"cloud": USGOV, "domains": ["agency.onmicrosoft.us"], "region": "NA"},
}
USERS = {
    "alice@contoso.com": {"tid": CONTOSO, "oid": "0a1b2c3d-0000-4000-8000-00000000a11c", "name": "Alice Contoso"},
    "bob@fabrikam.onmicrosoft.com": {"tid": FABRIKAM, "oid": "0a1b2c3d-0000-4000-8000-000000000b0b", "name": "Bob Fabrikam"},
    "carol@agency.onmicrosoft.us": {"tid": GOVTENANT, "oid": "0a1b2c3d-0000-4000-8000-00000000ca01", "name": "Carol Agency"},
}
DEFAULT_USER = {CONTOSO: "alice@contoso.com", FABRIKAM: "bob@fabrikam.onmicrosoft.com", GOVTENANT: "carol@agency.onmicrosoft.us"}
# App registrations (home tenant, whether it is multi-tenant, "Allow public client flows", redirect URIs).
# reply-url.md: "http://localhost" matches any port ("the port component is ignored for loopback"); [::1] is refused.
APPS = {
    CLIENT: {"home": CONTOSO, "multitenant": True, "public": True, "name": "PortalAuth IAP",
             "redirects": ["http://localhost/callback", "http://127.0.0.1/callback"]},
    NO_PUBLIC_CLIENT: {"home": CONTOSO, "multitenant": False, "public": False, "name": "Web-only registration",
                       "redirects": ["http://localhost/callback"]},
    GOV_CLIENT: {"home": GOVTENANT, "multitenant": False, "public": True, "name": "PortalAuth IAP (US Gov)",
                 "redirects": ["http://localhost/callback"]},
}
# The app proxy (application-proxy-configure-native-client-application.md): one published app in Contoso whose
# native-client registration is CLIENT.
APP_PROXY_HOST = "maps-contoso.msappproxy.net"
APP_PROXY_TENANT = CONTOSO


def tenant_of(segment, cloud):
    """The tenant GUID a path segment names in `cloud` (a GUID or a verified domain), or None."""
    lowered = segment.lower()
    for tid, tenant in TENANTS.items():
        if tenant["cloud"] == cloud and (lowered == tid or lowered in tenant["domains"]):
            return tid
    return None


# ---------------------------------------------------------------------------------------------------------------------
# Keys. signing-key-rollover.md: "at any moment, Microsoft Entra ID may sign an ID token using any one of a certain set
# of public-private key pairs"; the JWKS holds more than one key, each with `kid` = `x5t` (the certificate's SHA-1
# thumbprint, base64url) and `x5c`. Planned rollover: a new key is published first, used later. Emergency rollover: the
# signing key is withdrawn at once and a new one used.

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_key(name):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "accounts.accesscontrol.windows.net")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                   .public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=365))
                   .sign(private, hashes.SHA256()))
    der = certificate.public_bytes(serialization.Encoding.DER)
    thumbprint = b64url(hashlib.sha1(der).digest())
    numbers = private.public_key().public_numbers()
    return {
        "name": name, "private": private, "kid": thumbprint,
        "jwk": {"kty": "RSA", "use": "sig", "kid": thumbprint, "x5t": thumbprint,
                "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")), "e": "AQAB",
                "x5c": [base64.b64encode(der).decode()]},
    }


lock = threading.RLock()
state = {}


def reset():
    """The state every test starts from: two published keys (the first signs), no pending failure."""
    with lock:
        if "key_pool" not in state:
            # Made once (2048-bit RSA costs CPU): two published, one for each rollover, one never published.
            state["key_pool"] = [make_key(n) for n in ("first", "second", "planned", "emergency", "unpublished")]
        first, second, planned, emergency, unpublished = state["key_pool"]
        state.update({
            "published": [first, second], "signing": first, "planned": planned, "emergency": emergency,
            "unpublished": unpublished,
            "codes": {}, "refresh_tokens": {}, "device_codes": {}, "fail_next": None, "forge_next": None,
            "next_user": None, "counts": {}, "logouts": [], "sessions": {},
        })


reset()


def count(name):
    with lock:
        state["counts"][name] = state["counts"].get(name, 0) + 1


def sign(claims, key, header_extra=None):
    header = {"typ": "JWT", "alg": "RS256", "kid": key["kid"]}
    header.update(header_extra or {})
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    signature = key["private"].sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + b64url(signature)


def verify(token):
    """The claims of a JWT signed by a published key, or None."""
    try:
        header_b64, payload_b64, signature_b64 = token.split(".")
        header = json.loads(base64.urlsafe_b64decode(header_b64 + "=" * (-len(header_b64) % 4)))
        with lock:
            key = next((k for k in state["published"] if k["kid"] == header.get("kid")), None)
        if key is None:
            return None
        signature = base64.urlsafe_b64decode(signature_b64 + "=" * (-len(signature_b64) % 4))
        key["private"].public_key().verify(signature, f"{header_b64}.{payload_b64}".encode(), padding.PKCS1v15(),
                                           hashes.SHA256())
        claims = json.loads(base64.urlsafe_b64decode(payload_b64 + "=" * (-len(payload_b64) % 4)))
        return claims if claims.get("exp", 0) > time.time() else None
    except Exception:
        return None


# ---------------------------------------------------------------------------------------------------------------------
# Discovery documents.

def v2_document(cloud, segment, tid):
    """v2-protocols-oidc.md ("Sample response"): issuer https://{cloud}/{tid}/v2.0 and endpoints named by the tenant's
    GUID even when the document was asked for with a domain; for common and organizations the endpoints keep the
    segment and the issuer is the literal template https://{cloud}/{tenantid}/v2.0; consumers names its GUID."""
    if tid is None:  # common, organizations
        path, issuer_tenant = segment, "{tenantid}"
    elif segment == "consumers":
        path, issuer_tenant = "consumers", CONSUMERS_TID
    else:
        path, issuer_tenant = tid, tid
    base = f"https://{cloud}/{path}"
    graph = GRAPH if cloud == PUBLIC else ("graph.microsoft.us" if cloud == USGOV else "microsoftgraph.chinacloudapi.cn")
    return {
        "token_endpoint": f"{base}/oauth2/v2.0/token",
        "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"],
        "jwks_uri": f"{base}/discovery/v2.0/keys",
        "response_modes_supported": ["query", "fragment", "form_post"],
        "subject_types_supported": ["pairwise"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
        "scopes_supported": ["openid", "profile", "email", "offline_access"],
        "issuer": f"https://{cloud}/{issuer_tenant}/v2.0",
        "request_uri_parameter_supported": False,
        # userinfo.md: "https://graph.microsoft.com/oidc/userinfo" (Graph's, for Graph-audience tokens only).
        "userinfo_endpoint": f"https://{graph}/oidc/userinfo",
        "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
        "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
        "http_logout_supported": True,
        "frontchannel_logout_supported": True,
        "end_session_endpoint": f"{base}/oauth2/v2.0/logout",
        "claims_supported": ["sub", "iss", "cloud_instance_name", "cloud_instance_host_name", "cloud_graph_host_name",
                             "msgraph_host", "aud", "exp", "iat", "auth_time", "acr", "nonce", "preferred_username",
                             "name", "tid", "ver", "at_hash", "c_hash", "email"],
        "kerberos_endpoint": f"{base}/kerberos",
        "tenant_region_scope": TENANTS[tid]["region"] if tid in TENANTS else None,
        "cloud_instance_name": cloud.removeprefix("login."),
        "cloud_graph_host_name": "graph.windows.net",
        "msgraph_host": graph,
        "rbac_url": "https://pas.windows.net",
    }
    # No revocation_endpoint: Entra publishes none (refresh-tokens.md, "Revocation": only server-side events revoke).


def v1_document(cloud, segment, tid):
    """The v1.0 document at /{tenant}/.well-known/openid-configuration (v2-protocols-oidc.md: the v1.0 endpoints);
    its issuer is https://sts.windows.net/{tid}/ and its endpoints the v1 ones: a walk up from the v2 authorize URL
    finds this document first."""
    path = segment if tid is None else tid
    issuer_tenant = "{tenantid}" if tid is None else tid
    base = f"https://{cloud}/{path}"
    return {
        "token_endpoint": f"{base}/oauth2/token",
        "jwks_uri": f"https://{cloud}/common/discovery/keys",
        "issuer": f"https://sts.windows.net/{issuer_tenant}/",
        "authorization_endpoint": f"{base}/oauth2/authorize",
        "device_authorization_endpoint": f"{base}/oauth2/devicecode",
        "end_session_endpoint": f"{base}/oauth2/logout",
        "userinfo_endpoint": f"{base}/openid/userinfo",
        "response_types_supported": ["code", "id_token", "code id_token", "token id_token", "token"],
        "subject_types_supported": ["pairwise"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid"],
        "cloud_instance_name": cloud.removeprefix("login."),
    }


# ---------------------------------------------------------------------------------------------------------------------
# Errors. reference-error-codes.md ("Handling error codes in your application", sample response): `error`,
# `error_description` beginning "AADSTSnnnnn: " and ending with a CRLF trailer (Trace ID, Correlation ID, Timestamp),
# `error_codes`, `timestamp`, `trace_id`, `correlation_id`, `error_uri`. The texts are those of the table there.

ERRORS = {
    # Public client flows off on the registration (reference-error-codes.md: InvalidClient... the request body must
    # contain client_assertion or client_secret); MSAL Python's tests meet it as invalid_client, HTTP 401.
    7000218: (401, "invalid_client", "The request body must contain the following parameter: 'client_assertion' or 'client_secret'."),
    # reply-url.md / reference-error-codes.md: RedirectUriMismatch (shown on the sign-in page, never to the app).
    50011: (400, "invalid_request", "The redirect URI '{redirect}' specified in the request does not match the redirect URIs configured for the application '{client}'. Make sure the redirect URI sent in the request matches one added to your application in the Azure portal. Navigate to https://aka.ms/redirectUriMismatchError to learn more about how to fix this."),
    700016: (400, "unauthorized_client", "Application with identifier '{client}' was not found in the directory '{tenant}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant."),
    65001: (400, "invalid_grant", "The user or administrator has not consented to use the application with ID '{client}' named '{name}'. Send an interactive authorization request for this user and resource."),
    # MFA on refresh: interaction_required with a `claims` challenge (AzureAD/azure-activedirectory-library-for-nodejs
    # issue 151 shows 50079 so; microsoft/vscode-azureappservice issue 2592 shows 50076 so).
    50076: (400, "interaction_required", "Due to a configuration change made by your administrator, or because you moved to a new location, you must use multi-factor authentication to access '{client}'."),
    50079: (400, "interaction_required", "Due to a configuration change made by your administrator, or because you moved to a new location, you must enroll in multi-factor authentication to access '{client}'."),
    # refresh-tokens.md ("Token timeouts": 90 days of inactivity; "Revocation": password change and the like).
    700082: (400, "invalid_grant", "The refresh token has expired due to inactivity. The token was issued on 2026-08-01T09:00:00.0000000Z and was inactive for 90.00:00:00."),
    50173: (400, "invalid_grant", "The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password. The grant was issued on '2026-08-01T09:00:00.0000000Z' and the TokensValidFrom date (before which tokens are not valid) for this user is '2026-09-01T09:00:00.0000000Z'."),
    53003: (400, "access_denied", "Access has been blocked by Conditional Access policies. The access policy does not allow token issuance."),
    90002: (400, "invalid_request", "Tenant '{tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant."),
    # v2-oauth2-device-code.md ("Expected errors"): authorization_pending while the user has not finished.
    70016: (400, "authorization_pending", "OAuth 2.0 device flow error. Authorization is pending. Continue polling."),
    # reference-error-codes.md: InvalidGrant for an unknown or consumed code, a bad PKCE verifier.
    70008: (400, "invalid_grant", "The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource."),
    501481: (400, "invalid_grant", "The Code_Verifier does not match the code_challenge supplied in the authorization request."),
    9002313: (400, "invalid_request", "Invalid request. Request is malformed or invalid."),
}


def error_body(code, **values):
    status, error, text = ERRORS[code]
    values.setdefault("client", CLIENT)
    values.setdefault("tenant", CONTOSO)
    values.setdefault("name", APPS.get(values["client"], {}).get("name", "app"))
    values.setdefault("redirect", "")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    trace, correlation = str(uuid.uuid4()), str(uuid.uuid4())
    body = {
        "error": error,
        "error_description": f"AADSTS{code}: {text.format(**values)}\r\nTrace ID: {trace}\r\nCorrelation ID: {correlation}\r\nTimestamp: {now}",
        "error_codes": [code], "timestamp": now, "trace_id": trace, "correlation_id": correlation,
        "error_uri": f"https://{values.get('cloud', PUBLIC)}/error?code={code}",
    }
    if error == "interaction_required":
        body["claims"] = json.dumps({"access_token": {"capolids": {"essential": True, "values": [str(uuid.uuid4())]}}})
    if code == 700016 or code == 90002:
        pass
    return status, body


# ---------------------------------------------------------------------------------------------------------------------
# Tokens.

def scopes_of(text):
    return [s for s in (text or "").split() if s]


def resource_of(scopes):
    """The audience the scopes ask for: `{client}/.default` (or any `{client}/...`, `api://{client}/...`) names the
    app itself; Graph scopes (User.Read, https://graph.microsoft.com/...) name Graph."""
    for scope in scopes:
        if scope in ("openid", "profile", "email", "offline_access"):
            continue
        head = scope.rsplit("/", 1)[0] if "/" in scope else ""
        if head.startswith("api://"):
            head = head[len("api://"):]
        if head in APPS:
            return head
        return GRAPH_APP_ID
    return GRAPH_APP_ID


def issue_tokens(grant, cloud):
    """The token response for `grant` (client, tid, upn, scopes, nonce) and the new refresh token's record.
    id-token-claims-reference.md (v2.0): aud = client ID, iss = https://{cloud}/{tid}/v2.0, tid, oid, sub (pairwise per
    app), ver "2.0", nonce, preferred_username, name, iat/nbf/exp, uti, rh. access-token-claims-reference.md: a v2
    access token for the app itself: aud = the app's client ID, iss v2, scp, tid, oid, ver "2.0", azp."""
    now = int(time.time())
    user = USERS[grant["upn"]]
    tid = user["tid"]
    client = grant["client"]
    issuer = f"https://{cloud}/{tid}/v2.0"
    sub = b64url(hashlib.sha256(f"{user['oid']}:{client}".encode()).digest())[:43]
    id_claims = {
        "aud": client, "iss": issuer, "iat": now, "nbf": now, "exp": now + 3600, "name": user["name"],
        "oid": user["oid"], "preferred_username": grant["upn"], "rh": "0.AAAA" + b64url(secrets.token_bytes(24)),
        "sub": sub, "tid": tid, "uti": b64url(secrets.token_bytes(16)), "ver": "2.0",
        "sid": grant.get("sid", str(uuid.uuid4())),
    }
    if grant.get("nonce"):
        id_claims["nonce"] = grant["nonce"]
    resource = resource_of(grant["scopes"])
    access_claims = {
        "aud": resource if resource != GRAPH_APP_ID else "https://graph.microsoft.com", "iss": issuer,
        "iat": now, "nbf": now, "exp": now + 3600, "azp": client, "azpacr": "0", "name": user["name"],
        "oid": user["oid"], "preferred_username": grant["upn"], "rh": id_claims["rh"],
        "scp": "user_impersonation" if resource != GRAPH_APP_ID else "openid profile User.Read email",
        "sub": sub, "tid": tid, "uti": b64url(secrets.token_bytes(16)), "ver": "2.0",
    }
    with lock:
        key = state["signing"]
        forge = state["forge_next"]
        state["forge_next"] = None
    id_key = key
    if forge == "unpublished-key":
        id_key = state["unpublished"]
    elif forge == "other-tenant":
        # A token of another tenant's user whose iss names Contoso: through organizations the template with this tid
        # gives Fabrikam's issuer, not the one in `iss`.
        id_claims["tid"] = FABRIKAM if tid != FABRIKAM else CONTOSO
    elif forge == "v1-issuer":
        id_claims["iss"] = f"https://sts.windows.net/{tid}/"
        id_claims["ver"] = "1.0"
    refresh = "1.AAAA" + b64url(secrets.token_bytes(48))  # opaque (refresh-tokens.md: "opaque to the client")
    body = {
        "token_type": "Bearer",
        # The granted permissions of the resource (v2-oauth2-auth-code-flow.md, "Successful response": scope).
        "scope": f"{resource}/user_impersonation" if resource != GRAPH_APP_ID else "openid profile User.Read email",
        "expires_in": 3600, "ext_expires_in": 3600,
        "access_token": sign(access_claims, key),
        "refresh_token": refresh,
    }
    if "openid" in grant["scopes"]:
        body["id_token"] = sign(id_claims, id_key)
    record = dict(grant)
    return body, refresh, record


# ---------------------------------------------------------------------------------------------------------------------
# The TLS server.

LOG_PATH = os.path.join(options.dir, "requests.log")
log_lock = threading.Lock()


def log_request(host, method, path, status, bearer):
    with log_lock, open(LOG_PATH, "a") as log:
        log.write(json.dumps({"host": host, "method": method, "path": path, "status": status, "bearer": bearer}) + "\n")


def loopback_match(registered, given):
    """reply-url.md: for http://localhost (and 127.0.0.1) the port is ignored; everything else must match exactly.
    [::1] is not supported."""
    r, g = urllib.parse.urlsplit(registered), urllib.parse.urlsplit(given)
    if r.scheme == "http" and r.hostname in ("localhost", "127.0.0.1"):
        return g.scheme == "http" and g.hostname == r.hostname and (g.path or "/") == (r.path or "/") and not g.query
    return registered == given


def redirect_allowed(client, redirect):
    app = APPS.get(client)
    return app is not None and any(loopback_match(r, redirect) for r in app["redirects"])


def app_visible(client, tid):
    app = APPS.get(client)
    return app is not None and (app["home"] == tid or app["multitenant"])


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64


class TLSHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    # -- answers

    def answer(self, status, body=b"", content_type="application/json; charset=utf-8", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.status_sent = status

    def page(self, status, title, text):
        self.answer(status, f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head><body>"
                            f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>",
                    "text/html; charset=utf-8")

    def redirect(self, location):
        self.answer(302, b"", "text/html; charset=utf-8", [("Location", location)])

    def error_json(self, code, **values):
        status, body = error_body(code, **values)
        self.answer(status, body)

    def error_page(self, code, **values):
        """Errors of the authorize and logout pages are shown to the person, never redirected to the app
        (reference-error-codes.md; reply-url.md for 50011)."""
        _, body = error_body(code, **values)
        self.page(400, "Sign in to your account", body["error_description"].split("\r\n")[0])

    # -- dispatch

    def handle_one(self, method):
        self.status_sent = 0
        host = (self.headers.get("Host") or "").split(":")[0].lower()
        path, _, query = self.path.partition("?")
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}
        form = {}
        if method == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode(errors="replace")
            form = {k: v[-1] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}
        bearer = (self.headers.get("Authorization") or "").startswith("Bearer ")
        try:
            if host in (PUBLIC, USGOV, CHINA):
                self.login(host, method, path, params, form)
            elif host == GRAPH or host == "graph.microsoft.us":
                self.graph(path)
            elif host.endswith(".msappproxy.net"):
                self.app_proxy(host, path)
            else:
                self.answer(421, {"error": "misdirected"})
        except BrokenPipeError:
            pass
        finally:
            log_request(host, method, path, self.status_sent, bearer)

    def do_GET(self):
        self.handle_one("GET")

    def do_POST(self):
        self.handle_one("POST")

    # -- login.microsoftonline.*

    def login(self, cloud, method, path, params, form):
        parts = [p for p in path.split("/") if p]
        if not parts:
            self.answer(404, {"error": "not_found"})
            return
        segment = parts[0].lower()
        rest = "/".join(parts[1:])
        if rest == "oauth2/v2.0/authorize":
            count("authorize")  # every authorization request, whatever the page answers
        special = segment in ("common", "organizations", "consumers")
        tid = None if segment in ("common", "organizations") else (
            CONSUMERS_TID if segment == "consumers" else tenant_of(segment, cloud))
        if not special and tid is None:
            # reference-error-codes.md: AADSTS90002 InvalidTenantName; the discovery document answers 400 with
            # error "invalid_tenant".
            if rest.endswith("openid-configuration"):
                status, body = error_body(90002, tenant=segment, cloud=cloud)
                body["error"] = "invalid_tenant"
                self.answer(400, body)
            elif rest.endswith("authorize") or rest.endswith("logout"):
                self.error_page(90002, tenant=segment, cloud=cloud)
            else:
                self.error_json(90002, tenant=segment, cloud=cloud)
            return
        if rest == "v2.0/.well-known/openid-configuration":
            count("discovery_v2")
            self.answer(200, v2_document(cloud, segment, tid))
        elif rest == ".well-known/openid-configuration":
            count("discovery_v1")
            self.answer(200, v1_document(cloud, segment, tid))
        elif rest in ("discovery/v2.0/keys", "discovery/keys"):
            count("keys")
            with lock:
                keys = [dict(k["jwk"]) for k in state["published"]]
            if rest == "discovery/v2.0/keys":
                # The v2 JWKS names each key's issuer (the template for common/organizations).
                issuer_tenant = "{tenantid}" if tid is None else tid
                for key in keys:
                    key["issuer"] = f"https://{cloud}/{issuer_tenant}/v2.0"
            self.answer(200, {"keys": keys})
        elif rest == "oauth2/v2.0/authorize" and method == "GET":
            self.authorize(cloud, segment, tid, params)
        elif rest == "oauth2/v2.0/token" and method == "POST":
            self.token(cloud, segment, tid, form)
        elif rest == "oauth2/v2.0/devicecode" and method == "POST":
            self.devicecode(cloud, segment, tid, form)
        elif rest == "oauth2/v2.0/logout":
            self.logout(cloud, params)
        elif rest == "oauth2/v2.0/logoutsession":
            self.logout_session(params)
        elif rest == "oauth2/authorize" and method == "GET":
            # The v1 authorize page the app proxy sends browsers to: a sign-in page, not a client's business.
            self.page(200, "Sign in to your account", "Microsoft Entra sign-in (v1.0 endpoint).")
        else:
            self.answer(404, {"error": "not_found"})

    def authorize(self, cloud, segment, tid, params):
        """v2-oauth2-auth-code-flow.md ("Request an authorization code"). Sign-in without a person: the test user of
        the authority's tenant (or `login_hint`, or the user set by /control/next-user) is signed in at once, and the
        page redirects to the app with `code` and `state` (no `iss`: Entra does not send RFC 9207's parameter)."""
        client = params.get("client_id", "")
        redirect = params.get("redirect_uri", "")
        if segment == "consumers":
            self.error_page(700016, client=client, tenant=CONSUMERS_TID)  # a work account app is not in consumers
            return
        if client not in APPS:
            self.error_page(700016, client=client, tenant=tid or segment)
            return
        if not redirect_allowed(client, redirect):
            self.error_page(50011, client=client, redirect=redirect)
            return
        separator = "&" if "?" in redirect else "?"
        state_value = params.get("state")
        if "ESTSAUTHPERSISTENT=" not in (self.headers.get("Cookie") or ""):
            # No session cookie: a client reading the page itself, not the person's browser (entra-browser sends the
            # cookie of a signed-in session). prompt=none without a session answers login_required
            # (v2-oauth2-auth-code-flow.md); otherwise Entra shows its sign-in page.
            if params.get("prompt") == "none":
                query = {"error": "login_required",
                         "error_description": "AADSTS50058: A silent sign-in request was sent but no user is signed in."}
                if state_value is not None:
                    query["state"] = state_value
                self.redirect(redirect + separator + urllib.parse.urlencode(query))
            else:
                self.page(200, "Sign in to your account", "Enter your email, phone, or Skype.")
            return
        with lock:
            upn = state["next_user"] or params.get("login_hint") or None
            state["next_user"] = None
        if upn not in USERS:
            upn = DEFAULT_USER.get(tid) if tid else DEFAULT_USER[APPS[client]["home"]]
        user = USERS[upn]
        if tid is not None and user["tid"] != tid or not app_visible(client, user["tid"]):
            self.error_page(700016, client=client, tenant=user["tid"])
            return
        code = "1.AAAA" + b64url(secrets.token_bytes(48))
        with lock:
            state["codes"][code] = {
                "client": client, "redirect": redirect, "upn": upn, "scopes": scopes_of(params.get("scope")),
                "nonce": params.get("nonce"), "challenge": params.get("code_challenge"),
                "method": params.get("code_challenge_method", "plain"), "segment": segment, "expires": time.time() + 600,
            }
        query = {"code": code}
        if state_value is not None:
            query["state"] = state_value
        query["session_state"] = str(uuid.uuid4())
        self.redirect(redirect + separator + urllib.parse.urlencode(query))

    def token(self, cloud, segment, tid, form):
        grant_type = form.get("grant_type", "")
        count("token_" + grant_type)
        client = form.get("client_id", "")
        with lock:
            failure = state["fail_next"]
            state["fail_next"] = None
        if failure:
            self.error_json(failure, client=client, tenant=tid or segment, cloud=cloud)
            return
        if client not in APPS:
            self.error_json(700016, client=client, tenant=tid or segment, cloud=cloud)
            return
        if not APPS[client]["public"]:
            # A public client (no secret) redeeming for an app without "Allow public client flows".
            self.error_json(7000218, client=client, cloud=cloud)
            return
        if grant_type == "authorization_code":
            with lock:
                grant = state["codes"].pop(form.get("code", ""), None)
            if grant is None or grant["expires"] < time.time() or grant["client"] != client:
                self.error_json(70008, client=client, cloud=cloud)
                return
            if form.get("redirect_uri") != grant["redirect"]:
                self.error_json(50011, client=client, redirect=form.get("redirect_uri", ""), cloud=cloud)
                return
            verifier = form.get("code_verifier", "")
            expected = grant["challenge"]
            if expected:
                computed = b64url(hashlib.sha256(verifier.encode()).digest()) if grant["method"] == "S256" else verifier
                if computed != expected:
                    self.error_json(501481, client=client, cloud=cloud)
                    return
        elif grant_type == "refresh_token":
            with lock:
                grant = state["refresh_tokens"].get(form.get("refresh_token", ""))
            if grant is None or grant["client"] != client:
                self.error_json(70008, client=client, cloud=cloud)
                return
            grant = dict(grant)
            if form.get("scope"):
                grant["scopes"] = scopes_of(form["scope"])
        elif grant_type in ("urn:ietf:params:oauth:grant-type:device_code", "device_code"):
            with lock:
                record = state["device_codes"].get(form.get("device_code", ""))
                if record is not None:
                    record["polls"] += 1
            if record is None:
                self.error_json(70008, client=client, cloud=cloud)
                return
            if record["polls"] < 2:
                # v2-oauth2-device-code.md ("Expected errors"): authorization_pending until the user finishes (the
                # simulated user finishes before the second poll).
                self.error_json(70016, client=client, cloud=cloud)
                return
            with lock:
                state["device_codes"].pop(form.get("device_code", ""), None)
            grant = record["grant"]
        else:
            self.error_json(9002313, client=client, cloud=cloud)
            return
        body, refresh, record = issue_tokens(grant, cloud)
        with lock:
            # refresh-tokens.md: a new refresh token with every redemption; the old one is not revoked ("Refresh
            # tokens replace themselves with a fresh token upon every use" — the one used stays valid until it expires).
            state["refresh_tokens"][refresh] = record
        self.answer(200, body)

    def devicecode(self, cloud, segment, tid, form):
        """v2-oauth2-device-code.md ("Device authorization response"): device_code, user_code, verification_uri
        https://microsoft.com/devicelogin, expires_in 900, interval 5, message; no verification_uri_complete."""
        count("devicecode")
        client = form.get("client_id", "")
        if client not in APPS:
            self.error_json(700016, client=client, tenant=tid or segment, cloud=cloud)
            return
        upn = DEFAULT_USER.get(tid) if tid else DEFAULT_USER[APPS[client]["home"]]
        device_code = "DAQABAAEAAAD" + b64url(secrets.token_bytes(48))
        user_code = "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(9))
        with lock:
            state["device_codes"][device_code] = {
                "polls": 0, "grant": {"client": client, "upn": upn, "scopes": scopes_of(form.get("scope")),
                                      "segment": segment}}
        self.answer(200, {
            "user_code": user_code, "device_code": device_code,
            "verification_uri": "https://microsoft.com/devicelogin", "expires_in": 900, "interval": 5,
            "message": f"To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter "
                       f"the code {user_code} to authenticate.",
        })

    def logout(self, cloud, params):
        """v2-protocols-oidc.md ("Send a sign-out request"): the person picks the account to sign out of unless
        `logout_hint` names it; then Entra ends the browser session and returns to `post_logout_redirect_uri` when it
        is a registered redirect URI of the app, with `state`; tokens are untouched."""
        count("logout")
        target = params.get("post_logout_redirect_uri")
        session = b64url(secrets.token_bytes(16))
        with lock:
            state["sessions"][session] = {"target": target, "state": params.get("state"),
                                          "client": params.get("client_id"), "hint": params.get("logout_hint")}
        if params.get("logout_hint"):
            self.logout_session({"session": session})
            return
        # The account picker ("Pick an account": the account the browser is signed in with).
        link = f"logoutsession?session={session}"
        self.answer(200, "<!DOCTYPE html><html><head><title>Sign out</title></head><body><h1>Pick an account</h1>"
                         f"<p>Which account do you want to sign out of?</p><a id=\"pick-account\" href=\"{link}\">"
                         "alice@contoso.com</a></body></html>", "text/html; charset=utf-8")

    def logout_session(self, params):
        with lock:
            session = state["sessions"].pop(params.get("session", ""), None)
        if session is None:
            self.page(400, "Sign out", "This sign-out request is not known.")
            return
        target = session["target"]
        client = session["client"]
        registered = target and any(
            loopback_match(r, target) for app in ([APPS[client]] if client in APPS else APPS.values())
            for r in app["redirects"])
        with lock:
            state["logouts"].append({"redirected": bool(registered), "state_sent": session["state"] is not None})
        if not registered:
            self.page(200, "You signed out of your account", "It's a good idea to close all browser windows.")
            return
        query = {} if session["state"] is None else {"state": session["state"]}
        separator = "&" if "?" in target else "?"
        self.redirect(target + (separator + urllib.parse.urlencode(query) if query else ""))

    # -- graph.microsoft.com

    def graph(self, path):
        """userinfo.md: UserInfo is Microsoft Graph's and accepts only tokens whose audience is Graph; another
        audience answers 401 (Graph's error body, "Access token validation failure. Invalid audience.")."""
        if path != "/oidc/userinfo":
            self.answer(404, {"error": {"code": "NotFound", "message": "Resource not found"}})
            return
        count("userinfo")
        authorization = self.headers.get("Authorization") or ""
        claims = verify(authorization[7:]) if authorization.startswith("Bearer ") else None
        challenge = ('Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", '
                     f'client_id="{GRAPH_APP_ID}"')
        if claims is None or claims.get("aud") not in ("https://graph.microsoft.com", GRAPH_APP_ID):
            text = "Invalid audience." if claims is not None else "Invalid signature."
            self.answer(401, {"error": {"code": "InvalidAuthenticationToken",
                                        "message": f"Access token validation failure. {text}",
                                        "innerError": {"date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                                       "request-id": str(uuid.uuid4())}}},
                        headers=[("WWW-Authenticate", challenge)])
            return
        self.answer(200, {"sub": claims["sub"], "name": claims.get("name"), "family_name": None,
                          "given_name": None, "picture": "https://graph.microsoft.com/v1.0/me/photo/$value",
                          "email": claims.get("preferred_username")})

    # -- *.msappproxy.net

    def app_proxy(self, host, path):
        """application-proxy-configure-native-client-application.md: a native client sends the user's token for the
        published app as a bearer token; without a valid one the proxy answers as to a browser, a 302 to
        https://login.microsoftonline.com/{tid}/oauth2/authorize (the v1 endpoint). The simulation admits a token
        signed by a published key, unexpired, for the published app's registration (aud) and tenant (tid): the access
        token, or the ID token the ArcGIS Maps SDK sends to hosts behind an IAP."""
        count("app_proxy")
        authorization = self.headers.get("Authorization") or ""
        claims = verify(authorization[7:]) if authorization.startswith("Bearer ") else None
        if host != APP_PROXY_HOST:
            self.page(404, "Not found", "This corporate app can't be accessed.")
            return
        if claims is None or claims.get("aud") not in (CLIENT, f"api://{CLIENT}") or claims.get("tid") != APP_PROXY_TENANT:
            query = urllib.parse.urlencode({
                "response_type": "code", "client_id": CLIENT, "scope": "openid", "nonce": str(uuid.uuid4()),
                "redirect_uri": f"https://{host}/", "state": b64url(secrets.token_bytes(24)),
            })
            self.redirect(f"https://{PUBLIC}/{APP_PROXY_TENANT}/oauth2/authorize?{query}")
            return
        kind = "access" if "scp" in claims else "id"
        self.answer(200, {"app": "entra-app-proxy", "path": path, "token_kind": kind, "oid": claims.get("oid"),
                          "tid": claims.get("tid"), "user": claims.get("preferred_username")})


# ---------------------------------------------------------------------------------------------------------------------
# The CONNECT proxy and the control endpoints.

ALLOWED_HOSTS = (PUBLIC, GRAPH, USGOV, CHINA, "graph.microsoft.us")


def allowed(host):
    host = host.lower()
    return host in ALLOWED_HOSTS or (host.endswith(".msappproxy.net") and host.count(".") == 2)


class ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_CONNECT(self):
        host, _, port = self.path.rpartition(":")
        if not allowed(host) or port != "443":
            count("proxy_refused")
            log_request(host.lower(), "CONNECT", "", 403, False)
            self.json(403, {"error": f"the Entra simulation's proxy reaches only {', '.join(ALLOWED_HOSTS)} and *.msappproxy.net"})
            self.close_connection = True
            return
        try:
            upstream = socket.create_connection(("127.0.0.1", tls_port))
        except OSError:
            self.json(502, {"error": "the simulation's TLS server is not there"})
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        client = self.connection
        sockets = [client, upstream]
        try:
            while True:
                readable, _, broken = select.select(sockets, [], sockets, 120)
                if broken or not readable:
                    break
                done = False
                for source in readable:
                    data = source.recv(65536)
                    if not data:
                        done = True
                        break
                    (upstream if source is client else client).sendall(data)
                if done:
                    break
        except OSError:
            pass
        finally:
            upstream.close()
            self.close_connection = True

    def do_GET(self):
        self.control("GET")

    def do_POST(self):
        self.control("POST")

    def control(self, method):
        """GET /control/state: counts, published keys, logouts. POST /control/reset; /control/fail-next?code=N (the
        next token call answers AADSTS N); /control/forge-next?kind=unpublished-key|other-tenant|v1-issuer (the next
        ID token); /control/rollover?kind=planned|emergency; /control/next-user?upn=U (the next sign-in)."""
        path, _, query = self.path.partition("?")
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(query).items()}
        if method == "POST":
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path == "/control/state":
            with lock:
                self.json(200, {"counts": dict(state["counts"]), "logouts": list(state["logouts"]),
                                "published_kids": [k["kid"] for k in state["published"]],
                                "signing_kid": state["signing"]["kid"],
                                "unpublished_kid": state["unpublished"]["kid"],
                                "refresh_tokens": len(state["refresh_tokens"])})
        elif method != "POST":
            self.json(404, {"error": "not_found"})
        elif path == "/control/reset":
            reset()
            self.json(200, {"ok": True})
        elif path == "/control/fail-next":
            code = int(params.get("code", "0"))
            if code not in ERRORS:
                self.json(400, {"error": f"unknown code {code}; known: {sorted(ERRORS)}"})
                return
            with lock:
                state["fail_next"] = code
            self.json(200, {"ok": True})
        elif path == "/control/forge-next":
            if params.get("kind") not in ("unpublished-key", "other-tenant", "v1-issuer"):
                self.json(400, {"error": "kind: unpublished-key, other-tenant or v1-issuer"})
                return
            with lock:
                state["forge_next"] = params["kind"]
            self.json(200, {"ok": True})
        elif path == "/control/rollover":
            with lock:
                if params.get("kind") == "planned":
                    # signing-key-rollover.md: the new key is in the JWKS before it signs; then it signs, and the
                    # old one stays published for a while.
                    new = state["planned"]
                    if new not in state["published"]:
                        state["published"].append(new)
                    state["signing"] = new
                elif params.get("kind") == "emergency":
                    # The signing key is withdrawn at once; a new key signs from now on.
                    old = state["signing"]
                    state["published"] = [k for k in state["published"] if k is not old]
                    new = state["emergency"]
                    if new not in state["published"]:
                        state["published"].append(new)
                    state["signing"] = new
                else:
                    self.json(400, {"error": "kind: planned or emergency"})
                    return
                self.json(200, {"signing_kid": state["signing"]["kid"],
                                "published_kids": [k["kid"] for k in state["published"]]})
        elif path == "/control/next-user":
            if params.get("upn") not in USERS:
                self.json(400, {"error": f"upn: one of {sorted(USERS)}"})
                return
            with lock:
                state["next_user"] = params["upn"]
            self.json(200, {"ok": True})
        else:
            self.json(404, {"error": "not_found"})


# ---------------------------------------------------------------------------------------------------------------------
# Start.

def iap_config(cloud, segment, client=CLIENT, redirect="http://localhost/callback", hosts=("*.msappproxy.net",)):
    base = f"https://{cloud}/{segment}/oauth2/v2.0"
    return {
        "authorize_url": f"{base}/authorize", "token_url": f"{base}/token", "logout_url": f"{base}/logout",
        "client_id": client, "redirect_url": redirect,
        "scope": [f"{client}/.default", "offline_access", "openid", "profile"],
        "hosts_behind_proxy": list(hosts), "authorization_prompt_type": "",
    }


CONFIGS = {
    # The seed's IAP JSON (Fixtures/iap/entra.json) with each tenant form.
    "guid": iap_config(PUBLIC, CONTOSO),
    "onmicrosoft": iap_config(PUBLIC, "contoso.onmicrosoft.com"),
    "custom-domain": iap_config(PUBLIC, "contoso.com"),
    "organizations": iap_config(PUBLIC, "organizations"),
    "common": iap_config(PUBLIC, "common"),
    "consumers": iap_config(PUBLIC, "consumers"),
    "usgov": iap_config(USGOV, GOVTENANT, client=GOV_CLIENT, hosts=("*.msappproxy.us",)),
    "no-public-client": iap_config(PUBLIC, CONTOSO, client=NO_PUBLIC_CLIENT),
    "unknown-client": iap_config(PUBLIC, CONTOSO, client="11111111-2222-4333-8444-555555555555"),
    "unknown-tenant": iap_config(PUBLIC, "nowhere.onmicrosoft.com"),
    "unregistered-redirect": iap_config(PUBLIC, CONTOSO, redirect="http://localhost/elsewhere"),
}


def main():
    global tls_port
    os.makedirs(os.path.join(options.dir, "configs"), exist_ok=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    tls = Server(("127.0.0.1", 0), TLSHandler)
    tls.socket = context.wrap_socket(tls.socket, server_side=True)
    tls_port = tls.server_address[1]
    proxy = Server(("127.0.0.1", 0), ProxyHandler)
    proxy_port = proxy.server_address[1]
    for name, config in CONFIGS.items():
        with open(os.path.join(options.dir, "configs", f"{name}.json"), "w") as file:
            json.dump(config, file, indent=2)
    here = os.path.dirname(os.path.abspath(__file__))
    values = {
        "PORTAL_AUTH_ENTRA_PROXY": f"http://127.0.0.1:{proxy_port}",
        "PORTAL_AUTH_ENTRA_CONTROL": f"http://127.0.0.1:{proxy_port}/control",
        "PORTAL_AUTH_ENTRA_CA_BUNDLE": os.path.abspath(options.ca),
        "PORTAL_AUTH_ENTRA_BROWSER": os.path.join(here, "entra-browser"),
        "PORTAL_AUTH_ENTRA_CONFIGS": os.path.abspath(os.path.join(options.dir, "configs")),
        "PORTAL_AUTH_ENTRA_REQUEST_LOG": os.path.abspath(LOG_PATH),
        "PORTAL_AUTH_ENTRA_APP": f"https://{APP_PROXY_HOST}",
        "PORTAL_AUTH_ENTRA_TENANT_ID": CONTOSO,
        "PORTAL_AUTH_ENTRA_OTHER_TENANT_ID": FABRIKAM,
        "PORTAL_AUTH_ENTRA_GOV_TENANT_ID": GOVTENANT,
        "PORTAL_AUTH_ENTRA_CLIENT_ID": CLIENT,
    }
    temporary = options.env + ".tmp"
    with open(temporary, "w") as file:
        for name, value in values.items():
            file.write(f"export {name}='{value}'\n")
    os.replace(temporary, options.env)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=tls.serve_forever, daemon=True).start()
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    print(f"PORTS {proxy_port} {tls_port}", flush=True)
    time.sleep(options.lifetime)
    os._exit(0)


tls_port = 0
if __name__ == "__main__":
    main()
