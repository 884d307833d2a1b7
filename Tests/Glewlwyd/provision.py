#!/usr/bin/env python3
"""Provisions a freshly started Glewlwyd through its admin REST API, idempotently.

Creates or updates: the OpenID Connect plugin instance `oidc` (RS256 with the keys made by scripts/glewlwyd, PKCE
required, refresh tokens rotated on every use, end_session, RFC 7009 revocation restricted to an admin scope so that
public clients are refused), the user `alice` (password in <dir>/alice.password), and the public client
`portal-auth-glewlwyd` with a loopback redirect URL on a fixed free port (Glewlwyd compares redirect URLs exactly),
and a second public client `portal-auth-glewlwyd-other` with the same redirect URL (the client the test IAP proxy of
scripts/iap-proxy does not accept). Writes an IAP configuration file for each client and the environment file the
tests source.
"""
import argparse
import http.cookiejar
import json
import os
import secrets
import socket
import sys
import urllib.error
import urllib.request

ADMIN = ("admin", "password")  # the package's initial administrator (its sqlite init script)
CLIENT_ID = "portal-auth-glewlwyd"
# A second public client of the same provider, with the same redirect URL: its tokens are valid at Glewlwyd but not
# for the test IAP proxy (scripts/iap-proxy admits only CLIENT_ID's audience), the "refused token" of its tests.
OTHER_CLIENT_ID = "portal-auth-glewlwyd-other"
USER = "alice"


class API:
    def __init__(self, base):
        self.base = base.rstrip("/")
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def call(self, method, path, body=None, ok=(200,)):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with self.opener.open(request, timeout=20) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode(errors="replace")
        if status not in ok:
            raise SystemExit(f"{method} {path}: HTTP {status} {text[:500]}")
        return status, (json.loads(text) if text.strip().startswith(("{", "[")) else None)

    def upsert(self, collection, name, body):
        status, _ = self.call("GET", f"{collection}{name}", ok=(200, 404))
        if status == 404:
            self.call("POST", collection, body)
        else:
            self.call("PUT", f"{collection}{name}", body)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def plugin_parameters(base, directory):
    with open(os.path.join(directory, "oidc-key.pem")) as f:
        key = f.read()
    with open(os.path.join(directory, "oidc-cert.pem")) as f:
        cert = f.read()
    return {
        "iss": f"{base}/api/oidc",
        "jwt-type": "rsa", "jwt-key-size": "256", "key": key, "cert": cert, "jwks-show": True, "default-kid": "",
        "jwks-private": "", "jwks-public": "", "jwks-uri": "", "jwks-x5c": [], "client-sign_kid-parameter": "",
        "access-token-duration": 3600, "refresh-token-duration": 1209600, "code-duration": 600,
        "refresh-token-rolling": True,
        # Every refresh returns a new refresh token and ends the old one (as Entra and the security BCP do).
        "refresh-token-one-use": "always", "client-refresh-token-one-use-parameter": "refresh-token-one-use",
        "allow-non-oidc": False,
        "auth-type-code-enabled": True, "auth-type-code-revoke-replayed": False, "auth-type-token-enabled": False,
        "auth-type-id-token-enabled": False, "auth-type-none-enabled": False, "auth-type-password-enabled": False,
        "auth-type-client-enabled": False, "auth-type-device-enabled": False, "auth-type-refresh-enabled": True,
        "scope": [], "additional-parameters": [], "claims": [],
        "service-documentation": "https://github.com/babelouest/glewlwyd/tree/master/docs",
        "op-policy-uri": "", "op-tos-uri": "", "request-parameter-allow": True,
        "request-uri-allow-https-non-secure": False, "secret-type": "pairwise",
        "address-claim": {"type": "no", "formatted": "", "street_address": "", "locality": "", "region": "",
                          "postal_code": "", "country": "", "mandatory": False},
        "name-claim": "on-demand", "name-claim-scope": [], "email-claim": "no", "email-claim-scope": [],
        "scope-claim": "no", "scope-claim-scope": [], "allowed-scope": ["openid"],
        # PKCE required of public clients; plain refused.
        "pkce-allowed": True, "pkce-method-plain-allowed": False, "pkce-required": True, "pkce-required-public-client": True,
        # RFC 7009 revocation advertised, but only for holders of g_admin: a public client's revocation gets 401.
        "introspection-revocation-allowed": True, "introspection-revocation-auth-scope": ["g_admin"],
        "introspection-revocation-allow-target-client": False,
        "register-client-allowed": False, "register-client-auth-scope": [], "register-client-credentials-scope": [],
        "register-client-management-allowed": False, "register-resource-specify-allowed": False,
        "register-resource-default": [],
        # end_session_endpoint (RP-initiated logout).
        "session-management-allowed": True, "session-cookie-name": "GLEWLWYD_OIDC_SESSION_ID",
        "session-cookie-expiration": 2419200,
        "client-pubkey-parameter": "", "client-jwks-parameter": "jwks", "client-jwks_uri-parameter": "jwks_uri",
        "request-maximum-exp": 3600, "encrypt-out-token-allow": False,
        "device-authorization-expiration": 600, "device-authorization-interval": 5,
        "client-cert-header-name": "SSL_CLIENT_CERT", "client-cert-use-endpoint-aliases": False,
        "client-cert-self-signed-allowed": False, "oauth-dpop-allowed": False, "oauth-dpop-iat-duration": 10,
        "resource-allowed": False, "resource-scope": {}, "resource-client-property": "",
        "resource-scope-and-client-property": False, "resource-change-allowed": False,
        "oauth-rar-allowed": False, "rar-types-client-property": "authorization_data_types",
        "rar-allow-auth-unsigned": False, "rar-allow-auth-unencrypted": True, "rar-types": {},
        "oauth-par-allowed": False, "oauth-par-duration": 90, "oauth-par-required": False,
        "oauth-par-request_uri-prefix": "urn:ietf:params:oauth:request_uri:",
        "prompt-continue-client-property": "", "restrict-scope-client-property": "", "jwks-public-uri": "",
        # RFC 9207: iss in authorization responses.
        "oauth-as-iss-id": True,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--env", required=True)
    args = parser.parse_args()
    base = args.base.rstrip("/")
    api = API(base)
    api.call("POST", "/api/auth/", {"username": ADMIN[0], "password": ADMIN[1]})

    api.upsert("/api/mod/plugin/", "oidc", {
        "module": "oidc", "name": "oidc", "display_name": "OpenID Connect", "enabled": True,
        "parameters": plugin_parameters(base, args.dir),
    })
    api.call("PUT", "/api/mod/plugin/oidc/disable", ok=(200, 400, 404))
    api.call("PUT", "/api/mod/plugin/oidc/enable", ok=(200, 400, 404))

    password_file = os.path.join(args.dir, "alice.password")
    if not os.path.exists(password_file):
        with open(os.open(password_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(secrets.token_urlsafe(18))
    with open(password_file) as f:
        password = f.read().strip()
    api.upsert("/api/user/", USER, {
        "username": USER, "name": "Alice", "email": "alice@example.com", "enabled": True,
        "password": password, "scope": ["openid", "g_profile"],
    })

    # The client back end keeps only the properties its data format names; the OIDC plugin matches
    # post_logout_redirect_uri against the client's `post_logout_redirect_uris`.
    _, module = api.call("GET", "/api/mod/client/database")
    formats = module["parameters"].setdefault("data-format", {})
    if "post_logout_redirect_uris" not in formats:
        formats["post_logout_redirect_uris"] = {"multiple": True, "read": True, "write": True}
        api.call("PUT", "/api/mod/client/database", module)
        api.call("PUT", "/api/mod/client/database/disable", ok=(200, 400, 404))
        api.call("PUT", "/api/mod/client/database/enable", ok=(200, 400, 404))

    redirect_port = free_port()
    redirect = f"http://127.0.0.1:{redirect_port}/callback"
    api.upsert("/api/client/", CLIENT_ID, {
        "client_id": CLIENT_ID, "name": "portal-auth tests", "description": "", "confidential": False,
        "enabled": True, "redirect_uri": [redirect], "authorization_type": ["code", "refresh_token"],
        "scope": [], "post_logout_redirect_uris": [redirect], "token_endpoint_auth_method": ["none"],
    })

    api.upsert("/api/client/", OTHER_CLIENT_ID, {
        "client_id": OTHER_CLIENT_ID, "name": "portal-auth tests (a client the IAP proxy does not accept)",
        "description": "", "confidential": False, "enabled": True, "redirect_uri": [redirect],
        "authorization_type": ["code", "refresh_token"], "scope": [], "post_logout_redirect_uris": [redirect],
        "token_endpoint_auth_method": ["none"],
    })

    iap_config = os.path.join(args.dir, "glewlwyd-iap.json")
    other_config = os.path.join(args.dir, "glewlwyd-other-iap.json")
    for path, client in ((iap_config, CLIENT_ID), (other_config, OTHER_CLIENT_ID)):
        with open(path, "w") as f:
            json.dump({
                "authorize_url": f"{base}/api/oidc/auth", "token_url": f"{base}/api/oidc/token",
                "logout_url": f"{base}/api/oidc/end_session", "client_id": client, "redirect_url": redirect,
                "scope": ["openid"], "hosts_behind_proxy": ["app.glewlwyd.localhost"], "authorization_prompt_type": "",
            }, f, indent=2)

    with open(args.env, "w") as f:
        f.write(f"export PORTAL_AUTH_GLEWLWYD_BASE={base}\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_ISSUER={base}/api/oidc\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_CLIENT_ID={CLIENT_ID}\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_REDIRECT={redirect}\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_IAP_CONFIG={iap_config}\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_OTHER_CLIENT_ID={OTHER_CLIENT_ID}\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_OTHER_IAP_CONFIG={other_config}\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_USER={USER}\n")
        f.write(f"export PORTAL_AUTH_GLEWLWYD_PASSWORD_FILE={password_file}\n")
    print("provisioned", base, file=sys.stderr)


if __name__ == "__main__":
    main()
