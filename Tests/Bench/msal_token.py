"""MSAL for Python as a peer of `portal-auth token` (used by scripts/bench).

    msal_token.py seed   DIR   sign in with MSAL's authorization-code flow (initiate_auth_code_flow +
                               acquire_token_by_auth_code_flow: code + PKCE, redirect http://127.0.0.1:PORT);
                               the authorize URL goes to the project's real browser driver
                               (BENCH_BROWSER_COMMAND, foreground), the redirect is caught by a loopback
                               receiver here; persist the token cache and the HTTP cache in DIR.
                               (Not acquire_token_interactive: since 1.3x its receiver takes only
                               response_mode=form_post, which django-oauth-toolkit does not implement.)
    msal_token.py silent DIR   acquire_token_silent from the persisted caches; print the access token
    msal_token.py silent-nohttpcache DIR   the same without the persisted HTTP cache (so MSAL fetches the
                               OIDC discovery document again, one GET to the server)

Environment: PORTAL_AUTH_TEST_ISSUER (the OIDC authority: MSAL takes https only, so scripts/bench runs a
bench instance of the server behind Tests/Bench/tls_front.py), PORTAL_AUTH_TEST_BENCH_MSAL_CLIENT_ID,
BENCH_CA_FILE (the self-signed certificate of the TLS front), and for seed BENCH_BROWSER_COMMAND and
BENCH_BROWSER_URL_REWRITE="https://127.0.0.1:TLSPORT http://127.0.0.1:BACKENDPORT": headless Chromium would
refuse the self-signed certificate, so the browser is sent to the same server's plain-http port (the
server, its pages and its session are the same; MSAL's token request still goes through TLS).
The cache files are the recipe of MSAL's documentation: a SerializableTokenCache serialized to a file, and
the `http_cache` dict pickled to a file (written only when MSAL changed it)."""
import os
import http.server
import pickle
import subprocess
import sys
import threading
import urllib.parse

import msal

SCOPES = ["read"]  # MSAL adds openid, profile, offline_access itself


def seed(app):
    """The authorization-code flow with MSAL's own PKCE, state, nonce and code exchange."""
    received = {}

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            query = urllib.parse.urlsplit(self.path).query
            if query:
                received.update(urllib.parse.parse_qsl(query))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"MSAL bench: you can close this window")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    flow = app.initiate_auth_code_flow(SCOPES, redirect_uri=f"http://127.0.0.1:{server.server_port}")
    url = flow["auth_uri"]
    old, new = os.environ["BENCH_BROWSER_URL_REWRITE"].split()
    if url.startswith(old + "/"):
        url = new + url[len(old):]
    environment = dict(os.environ, PORTAL_AUTH_TEST_BROWSER_FOREGROUND="1")
    subprocess.run([os.environ["BENCH_BROWSER_COMMAND"], url], check=True, env=environment)
    server.shutdown()
    if "code" not in received and "error" not in received:
        sys.exit("msal: the browser did not reach the redirect URI")
    return app.acquire_token_by_auth_code_flow(flow, received)


def main():
    mode, directory = sys.argv[1], sys.argv[2]
    token_cache_path = os.path.join(directory, "msal-token-cache.json")
    http_cache_path = os.path.join(directory, "msal-http-cache.pickle")

    cache = msal.SerializableTokenCache()
    if os.path.exists(token_cache_path):
        with open(token_cache_path) as handle:
            cache.deserialize(handle.read())
    http_cache = None
    if mode != "silent-nohttpcache":
        http_cache = {}
        if os.path.exists(http_cache_path):
            with open(http_cache_path, "rb") as handle:
                http_cache = pickle.load(handle)
    snapshot = dict(http_cache) if http_cache is not None else None

    app = msal.PublicClientApplication(
        os.environ["PORTAL_AUTH_TEST_BENCH_MSAL_CLIENT_ID"],
        oidc_authority=os.environ.get("BENCH_MSAL_ISSUER") or os.environ["PORTAL_AUTH_TEST_ISSUER"],
        token_cache=cache,
        http_cache=http_cache,
        verify=os.environ["BENCH_CA_FILE"],  # (requests prefers $REQUESTS_CA_BUNDLE: scripts/bench sets it too)
    )
    if mode == "seed":
        result = seed(app)
    else:
        accounts = app.get_accounts()
        if not accounts:
            sys.exit("msal: no account in the token cache; seed first")
        result = app.acquire_token_silent(SCOPES, account=accounts[0])
    if not result or "access_token" not in result:
        sys.exit(f"msal: no token: {(result or {}).get('error')} {(result or {}).get('error_description')}")

    if cache.has_state_changed:
        fd = os.open(token_cache_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(cache.serialize())
    if http_cache is not None and http_cache != snapshot:
        fd = os.open(http_cache_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(http_cache, handle)
    if mode == "seed":
        print(f"msal: signed in ({result.get('token_source')})", file=sys.stderr)
    else:
        print(result["access_token"])


if __name__ == "__main__":
    main()
