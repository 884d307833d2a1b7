#!/usr/bin/env python3
"""End-to-end self-check of the test authorization server and the browser driver.

Run through `scripts/authserver selfcheck` (starts the server when needed). Drives real
sign-ins with headless Chromium through both faces, calls the token endpoints with curl,
and checks every behaviour the Swift tests rely on. Exits non-zero when a check fails.
"""
import argparse
import base64
import hashlib
import html
from http.cookiejar import CookieJar
import json
import os
import re
import secrets
import shlex
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer

ENV = {}
RESULTS = []
TIMINGS = {}


def load_env(path):
    for line in open(path, encoding="utf-8"):
        if line.startswith("export ") and "=" in line:
            name, _, value = line[len("export "):].strip().partition("=")
            ENV[name] = shlex.split(value)[0] if value else ""
    os.environ.update(ENV)


def server(path=""):
    return ENV["PORTAL_AUTH_TEST_SERVER"] + path


def portal(path=""):
    return ENV["PORTAL_AUTH_TEST_PORTAL"] + path


def check(name, condition, detail=""):
    RESULTS.append((name, bool(condition)))
    mark = "ok  " if condition else "FAIL"
    print(f"  {mark} {name}" + (f" — {detail}" if detail and not condition else ""), flush=True)
    return bool(condition)


# ---------------------------------------------------------------- HTTP helpers


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def http(method, url, data=None, headers=None, opener=None, follow=False):
    """(status, headers, body text) without raising on HTTP errors."""
    body = urllib.parse.urlencode(data).encode() if isinstance(data, dict) else data
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    if opener is None:
        opener = urllib.request.build_opener() if follow else urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def get_json(url, **kwargs):
    status, headers, body = http("GET", url, **kwargs)
    try:
        return status, headers, json.loads(body)
    except ValueError:
        return status, headers, {"_raw": body}


def curl_form(url, fields, basic=None):
    """POST form fields with curl; returns (HTTP status, parsed JSON)."""
    command = ["curl", "-sS", "--max-time", "30", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", url]
    for key, value in fields.items():
        command += ["--data-urlencode", f"{key}={value}"]
    if basic:
        command += ["-u", f"{basic[0]}:{basic[1]}"]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    body, _, status = output.rpartition("\n")
    try:
        return int(status), json.loads(body)
    except ValueError:
        return int(status), {"_raw": body}


def post_json(url, payload):
    return http("POST", url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})


# ---------------------------------------------------------------- loopback listener


class Listener:
    """A throwaway loopback redirect listener: records the first request on /callback or
    /logout, answers it with a small page, 404 to anything else."""

    def __init__(self, host="127.0.0.1"):
        self.hits = []
        self.event = threading.Event()
        listener = self
        family = socket.AF_INET6 if ":" in host else socket.AF_INET

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                path, _, query = self.path.partition("?")
                if path not in ("/callback", "/logout"):
                    self.send_response(404)
                    self.end_headers()
                    return
                listener.hits.append((path, dict(urllib.parse.parse_qsl(query))))
                page = b"<!doctype html><title>Signed in</title><p>You can close this window.</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                listener.event.set()

            def log_message(self, *args):
                pass

        class Server(HTTPServer):
            address_family = family

        self.server = Server((host, 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait(self, timeout=75):
        if not self.event.wait(timeout):
            return None
        return self.hits[0]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def pkce():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def browse(url, action="allow", listener=None, timeout=75, profile=None):
    """Runs the browser command like a client would (without waiting for it), then waits
    for the loopback listener. Returns ((path, params) or None, seconds)."""
    env = dict(os.environ, PORTAL_AUTH_TEST_BROWSER_ACTION=action)
    if profile:
        env["PORTAL_AUTH_TEST_BROWSER_PROFILE"] = profile
    started = time.monotonic()
    launched = subprocess.run([ENV["PORTAL_AUTH_TEST_BROWSER"], url], env=env, timeout=10)
    returned = time.monotonic() - started
    TIMINGS.setdefault("browser command returned after (s)", round(returned, 2))
    hit = listener.wait(timeout) if listener else None
    return launched.returncode, hit, time.monotonic() - started


def browser_log():
    return os.path.join(ENV["PORTAL_AUTH_TEST_RUN_DIR"], "browser.log")


def log_size():
    try:
        return os.path.getsize(browser_log())
    except OSError:
        return 0


def log_since(offset):
    time.sleep(1.5)  # the driver logs its last lines after the redirect
    with open(browser_log(), encoding="utf-8") as handle:
        handle.seek(offset)
        return handle.read()


def wait_no_browser_processes(timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = browser_processes()
        if not left:
            return []
        time.sleep(0.5)
    return browser_processes()


def browser_processes():
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if "portal-auth-test-browser" in cmdline or "browser_driver.py" in cmdline:
            found.append((int(entry), cmdline[:120]))
    return found


def decode_jwt_verified(token, expected_audience, nonce=None):
    from jwcrypto import jwk, jwt

    _s, _h, jwks = get_json(server("/o/.well-known/jwks.json"))
    keyset = jwk.JWKSet.from_json(json.dumps(jwks))
    verified = jwt.JWT(jwt=token, key=keyset, algs=["RS256"])
    claims = json.loads(verified.claims)
    return claims


class BrowserlessSession:
    """A cookie session signed in through the login form (for checks that need no browser)."""

    def __init__(self):
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def csrf(self):
        return next((c.value for c in self.jar if c.name == "portalauth_test_csrf"), "")

    def login(self, username, password):
        http("GET", server("/accounts/login/"), opener=self.opener)
        status, headers, _ = http(
            "POST",
            server("/accounts/login/"),
            data={"username": username, "password": password, "csrfmiddlewaretoken": self.csrf(), "next": "/"},
            headers={"Referer": server("/accounts/login/")},
            opener=self.opener,
        )
        return status == 302

    def get(self, url):
        return http("GET", url, opener=self.opener)

    def consent(self, url, allow=True):
        """Loads a consent page and submits it; returns the redirect Location."""
        status, _, page = self.get(url)
        if status != 200:
            return f"(consent page answered {status})"
        fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
        fields = {k: html.unescape(v) for k, v in fields.items()}
        if allow:
            fields["allow"] = "Authorize"
        status, headers, _ = http("POST", url, data=fields, headers={"Referer": url}, opener=self.opener)
        return headers.get("Location", "") if headers else ""


# ---------------------------------------------------------------- checks


def authorize_url(base, redirect_uri, challenge, state, **extra):
    params = {
        "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    params.update(extra)
    return base + "?" + urllib.parse.urlencode(params)


def check_discovery():
    print("discovery")
    status, _, config = get_json(server("/o/.well-known/openid-configuration"))
    check("discovery answers", status == 200)
    check("issuer is PORTAL_AUTH_TEST_ISSUER", config.get("issuer") == ENV["PORTAL_AUTH_TEST_ISSUER"], config.get("issuer"))
    check("S256 only", config.get("code_challenge_methods_supported") == ["S256"])
    check("end_session_endpoint advertised", config.get("end_session_endpoint", "").endswith("/o/logout/"))
    _, _, jwks = get_json(server("/o/.well-known/jwks.json"))
    check("JWKS has an RS256 key", any(k.get("alg") == "RS256" for k in jwks.get("keys", [])))
    _, _, health = get_json(server("/testctl/health"))
    check("health", health.get("status") == "ok")


def oidc_login(host="127.0.0.1", action="allow", prompt=None, profile=None):
    listener = Listener("::1" if host == "[::1]" else "127.0.0.1")
    verifier, challenge = pkce()
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    redirect_uri = f"http://{host}:{listener.port}/callback"
    extra = {"scope": "openid profile email offline_access", "nonce": nonce}
    if prompt:
        extra["prompt"] = prompt
    url = authorize_url(server("/o/authorize/"), redirect_uri, challenge, state, **extra)
    try:
        rc, hit, seconds = browse(url, action, listener, profile=profile)
    finally:
        listener.close()
    return {"rc": rc, "hit": hit, "seconds": seconds, "verifier": verifier, "state": state, "nonce": nonce,
            "redirect_uri": redirect_uri}


def check_oidc_face():
    print("OIDC face (/o/): browser sign-in, PKCE, ID token, rotation, revocation, IAP app")
    login = oidc_login()
    TIMINGS["browser sign-in, OIDC face (s)"] = round(login["seconds"], 1)
    check("browser command returns at once", login["rc"] == 0 and TIMINGS["browser command returned after (s)"] < 3)
    hit = login["hit"]
    if not check("loopback callback received", hit is not None):
        return None
    path, params = hit
    check("callback carries the state", params.get("state") == login["state"])
    check("callback carries iss (RFC 9207)", params.get("iss") == ENV["PORTAL_AUTH_TEST_ISSUER"], params.get("iss"))
    token_url = server("/o/token/")
    status, tokens = curl_form(token_url, {"grant_type": "authorization_code", "code": "x", "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
                                           "redirect_uri": login["redirect_uri"], "code_verifier": login["verifier"]})
    check("a wrong code fails with invalid_grant", status == 400 and tokens.get("error") == "invalid_grant", tokens)
    status, tokens = curl_form(token_url, {"grant_type": "authorization_code", "code": params["code"], "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
                                           "redirect_uri": login["redirect_uri"], "code_verifier": "wrong" * 10})
    check("a wrong code_verifier fails", status == 400 and tokens.get("error") == "invalid_grant", tokens)
    # The code was not consumed by the failures above? DOT invalidates nothing on a failed
    # verifier, so the real exchange still works.
    status, tokens = curl_form(token_url, {"grant_type": "authorization_code", "code": params["code"], "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
                                           "redirect_uri": login["redirect_uri"], "code_verifier": login["verifier"]})
    if not check("code exchange", status == 200 and "access_token" in tokens and "refresh_token" in tokens and "id_token" in tokens, tokens):
        return None
    claims = decode_jwt_verified(tokens["id_token"], ENV["PORTAL_AUTH_TEST_CLIENT_ID"])
    check("ID token RS256-signed, iss/aud/nonce", claims.get("iss") == ENV["PORTAL_AUTH_TEST_ISSUER"]
          and claims.get("aud") == ENV["PORTAL_AUTH_TEST_CLIENT_ID"] and claims.get("nonce") == login["nonce"], claims)
    check("ID token names the user", claims.get("preferred_username") == ENV["PORTAL_AUTH_TEST_USERNAME"], claims)
    status, _, info = get_json(server("/o/userinfo/"), headers={"Authorization": f"Bearer {tokens['access_token']}"})
    check("userinfo", status == 200 and info.get("preferred_username") == ENV["PORTAL_AUTH_TEST_USERNAME"], info)

    iap = ENV["PORTAL_AUTH_TEST_IAP_URL"]
    status, _, body = get_json(iap + "reports/1", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    check("IAP app: 200 with the access token", status == 200 and body.get("user") == ENV["PORTAL_AUTH_TEST_USERNAME"] and body.get("path") == "/reports/1", body)
    status, headers, _ = http("GET", iap, headers={"Accept": "application/json"})
    check("IAP app: 401 + WWW-Authenticate: Bearer for JSON clients", status == 401 and headers.get("WWW-Authenticate", "").startswith("Bearer "))
    status, headers, _ = http("GET", iap)
    check("IAP app: 302 to the authorize endpoint for browsers", status == 302 and headers.get("Location", "").startswith(ENV["PORTAL_AUTH_TEST_ISSUER"] + "/authorize/"))

    http("POST", server("/testctl/reset-stats"), data=b"")
    old_refresh = tokens["refresh_token"]
    status, refreshed = curl_form(token_url, {"grant_type": "refresh_token", "refresh_token": old_refresh, "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]})
    check("refresh", status == 200 and "access_token" in refreshed, refreshed)
    check("refresh rotates the refresh token", refreshed.get("refresh_token") not in (None, old_refresh))
    check("refresh returns a new ID token", "id_token" in refreshed)
    status, body = curl_form(token_url, {"grant_type": "refresh_token", "refresh_token": old_refresh, "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]})
    check("reusing the old refresh token fails: HTTP 400 invalid_grant", status == 400 and body.get("error") == "invalid_grant", (status, body))
    status, _, _ = get_json(iap, headers={"Authorization": f"Bearer {tokens['access_token']}", "Accept": "application/json"})
    check("the access token from before the rotation is dead", status == 401)
    _, _, stats = get_json(server("/testctl/stats"))
    check("stats count the refreshes", stats.get("token_requests_by_face", {}).get("oauth", {}).get("refresh_token") == 2
          and stats.get("token_errors", {}).get("refresh_token") == 1, stats)

    http("POST", server("/testctl/expire-access-tokens"), data=b"")
    status, _, _ = get_json(iap, headers={"Authorization": f"Bearer {refreshed['access_token']}", "Accept": "application/json"})
    check("testctl expire-access-tokens: the token is refused", status == 401)
    status, again = curl_form(token_url, {"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"], "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]})
    check("refresh after forced expiry", status == 200, again)
    status, _ = curl_form(server("/o/revoke_token/"), {"token": again["refresh_token"], "token_type_hint": "refresh_token", "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]})
    check("RFC 7009 revocation answers 200", status == 200)
    status, body = curl_form(token_url, {"grant_type": "refresh_token", "refresh_token": again["refresh_token"], "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]})
    check("a revoked refresh token fails with invalid_grant", status == 400 and body.get("error") == "invalid_grant", body)
    status, _, _ = get_json(iap, headers={"Authorization": f"Bearer {again['access_token']}", "Accept": "application/json"})
    check("revoking the refresh token killed its access token", status == 401)
    status, _ = curl_form(server("/o/revoke_token/"), {"token": "unknown-token", "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]})
    check("revoking an unknown token answers 200", status == 200)
    return tokens


def check_loopback_matching():
    print("redirect URI matching (signed-in session, no browser)")
    session = BrowserlessSession()
    password = open(ENV["PORTAL_AUTH_TEST_PASSWORD_FILE"]).read().strip()
    check("form sign-in with the test password", session.login(ENV["PORTAL_AUTH_TEST_USERNAME"], password))
    check("a wrong password is refused", not BrowserlessSession().login(ENV["PORTAL_AUTH_TEST_USERNAME"], "wrong"))
    _verifier, challenge = pkce()
    cases = [
        ("http://127.0.0.1:51234/callback", True),
        ("http://127.0.0.1:1/callback", True),
        ("http://localhost:40000/callback", True),
        ("http://[::1]:40001/callback", True),
        ("http://127.0.0.1/callback", True),
        ("http://127.0.0.1:51234/other", False),
        ("https://127.0.0.1:51234/callback", False),
        ("http://127.0.0.2:51234/callback", False),
        ("http://example.com:51234/callback", False),
    ]
    for redirect_uri, allowed in cases:
        status, _, body = session.get(authorize_url(server("/o/authorize/"), redirect_uri, challenge, "s"))
        ok = (status == 200 and 'id="allow"' in body) if allowed else (status == 400 and "oauth-error" in body)
        check(f"{'accepted' if allowed else 'refused '} {redirect_uri}", ok, status)
    url = authorize_url(server("/o/authorize/"), "http://127.0.0.1:5/callback", challenge, "s")
    url = re.sub(r"&code_challenge=[^&]*&code_challenge_method=S256", "", url)
    status, headers, _ = session.get(url)
    location = headers.get("Location", "") if headers else ""
    check("PKCE required (no code_challenge → error=invalid_request)", status == 302 and "error=invalid_request" in location, (status, location[:80]))
    location = session.consent(authorize_url(server("/o/authorize/"), "http://127.0.0.1:5/callback", challenge, "s", code_challenge_method="plain"))
    check("plain PKCE refused (at consent)", location.startswith("http://127.0.0.1:5/callback?") and "error=" in location and "code=" not in location, location[:80])
    location = session.consent(authorize_url(server("/o/authorize/"), "http://127.0.0.1:5/callback", challenge, "s", scope="openid", nonce="n"))
    check("consent through a plain HTTP session gives a code", "code=" in location, location[:60])
    status, headers, _ = session.get(authorize_url(server("/o/authorize/"), "http://127.0.0.1:5/callback", challenge, "s", scope="openid", prompt="none"))
    location = headers.get("Location", "") if headers else ""
    check("prompt=none with a session → error=consent_required", status == 302 and "error=consent_required" in location, (status, location[:80]))
    status, headers, body = session.get(server("/o/logout/"))
    check("logout confirmation page (signed in, no id_token_hint)", status == 200 and 'id="logout-confirm"' in body, status)


def check_prompt_none():
    print("prompt=none without a browser session")
    login = oidc_login(prompt="none")
    hit = login["hit"]
    check("prompt=none → error=login_required to the loopback", hit is not None and hit[1].get("error") == "login_required"
          and hit[1].get("state") == login["state"], hit)


def check_other_loopbacks():
    print("loopback variants through the browser")
    login = oidc_login(host="localhost")
    check("localhost:<any port> redirect: code received", login["hit"] is not None and "code" in login["hit"][1], login["hit"])
    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
        ipv6 = True
    except OSError:
        ipv6 = False
    if ipv6:
        login = oidc_login(host="[::1]")
        check("[::1]:<any port> redirect: code received", login["hit"] is not None and "code" in login["hit"][1], login["hit"])
    else:
        print("  skip [::1] (no IPv6 loopback here)")


def check_deny():
    print("denied consent")
    login = oidc_login(action="deny")
    hit = login["hit"]
    check("Cancel → error=access_denied with the state", hit is not None and hit[1].get("error") == "access_denied"
          and hit[1].get("state") == login["state"], hit)


def check_logout():
    print("RP-initiated logout")
    login = oidc_login()
    path, params = login["hit"]
    status, tokens = curl_form(server("/o/token/"), {"grant_type": "authorization_code", "code": params["code"], "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
                                                   "redirect_uri": login["redirect_uri"], "code_verifier": login["verifier"]})
    if not check("sign-in for logout", status == 200, tokens):
        return
    listener = Listener()
    state = secrets.token_urlsafe(12)
    url = server("/o/logout/") + "?" + urllib.parse.urlencode({
        "id_token_hint": tokens["id_token"],
        "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
        "post_logout_redirect_uri": f"http://127.0.0.1:{listener.port}/callback",
        "state": state,
    })
    try:
        _rc, hit, seconds = browse(url, "allow", listener)
    finally:
        listener.close()
    TIMINGS["browser logout (s)"] = round(seconds, 1)
    check("logout redirects to the loopback with the state", hit is not None and hit[0] == "/callback" and hit[1].get("state") == state, hit)
    status, _, _ = get_json(ENV["PORTAL_AUTH_TEST_IAP_URL"], headers={"Authorization": f"Bearer {tokens['access_token']}", "Accept": "application/json"})
    check("logout deleted the user's tokens", status == 401)
    status, body = curl_form(server("/o/token/"), {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]})
    check("refresh after logout fails with invalid_grant", status == 400 and body.get("error") == "invalid_grant", body)
    listener = Listener()
    url = server("/o/logout/") + "?" + urllib.parse.urlencode({
        "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
        "post_logout_redirect_uri": f"http://127.0.0.1:{listener.port}/logout",
        "state": state,
    })
    try:
        _rc, hit, _s = browse(url, "allow", listener)
    finally:
        listener.close()
    check("logout without id_token_hint, /logout path: redirected", hit is not None and hit[0] == "/logout" and hit[1].get("state") == state, hit)

    # A kept browser profile: the server session survives, so the second sign-in needs no
    # password and a logout without id_token_hint shows the confirmation page.
    import tempfile
    import shutil
    profile = tempfile.mkdtemp(prefix="portal-auth-selfcheck-profile-")
    try:
        first = oidc_login(profile=profile)
        second = oidc_login(profile=profile, prompt="none")
        check("kept profile: prompt=none with a session → consent_required", second["hit"] is not None
              and second["hit"][1].get("error") == "consent_required", second["hit"])
        listener = Listener()
        url = server("/o/logout/") + "?" + urllib.parse.urlencode({
            "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"],
            "post_logout_redirect_uri": f"http://127.0.0.1:{listener.port}/callback",
            "state": state,
        })
        before = log_size()
        try:
            _rc, hit, _s = browse(url, "allow", listener, profile=profile)
        finally:
            listener.close()
        check("kept profile: the driver confirms the logout page", hit is not None and hit[1].get("state") == state
              and "logout: clicked Sign out" in log_since(before), hit)
    finally:
        time.sleep(1)
        shutil.rmtree(profile, ignore_errors=True)


def portal_login(expiration=30, action="allow"):
    listener = Listener()
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    redirect_uri = f"http://127.0.0.1:{listener.port}/callback"
    url = authorize_url(portal("/sharing/rest/oauth2/authorize"), redirect_uri, challenge, state,
                        expiration=str(expiration), locale="en", style="light")
    try:
        rc, hit, seconds = browse(url, action, listener)
    finally:
        listener.close()
    return {"hit": hit, "seconds": seconds, "verifier": verifier, "state": state, "redirect_uri": redirect_uri}


def portal_token(fields):
    status, body = curl_form(portal("/sharing/rest/oauth2/token"), dict(fields, f="json"))
    return status, body


def self_with(token=None, header=None):
    headers = {}
    url = portal("/sharing/rest/portals/self?f=json")
    if token and header:
        headers[header] = f"Bearer {token}"
    elif token:
        url += "&token=" + urllib.parse.quote(token)
    return get_json(url, headers=headers)[2]


def check_portal_face():
    print("portal face (/arcgis/sharing/rest/): sign-in, ArcGIS fields, envelopes, exchange, revoke")
    client_id = ENV["PORTAL_AUTH_TEST_CLIENT_ID"]
    login = portal_login(expiration=30)
    TIMINGS["browser sign-in, portal face (s)"] = round(login["seconds"], 1)
    hit = login["hit"]
    if not check("portal authorize → loopback callback with code", hit is not None and "code" in hit[1], hit):
        return
    check("portal callback: state, no iss", hit[1].get("state") == login["state"] and "iss" not in hit[1], hit[1].keys())
    status, body = portal_token({"grant_type": "authorization_code", "code": "bogus", "client_id": client_id,
                                 "redirect_uri": login["redirect_uri"], "code_verifier": login["verifier"]})
    error = body.get("error", {})
    check("bad code → HTTP 200 envelope 400 invalid_grant", status == 200 and error.get("code") == 400 and error.get("error") == "invalid_grant"
          and error.get("details") == [] and "message" in error, body)
    status, tokens = portal_token({"grant_type": "authorization_code", "code": hit[1]["code"], "client_id": client_id,
                                   "redirect_uri": login["redirect_uri"], "code_verifier": login["verifier"]})
    if not check("code exchange", status == 200 and "access_token" in tokens, tokens):
        return
    check("ArcGIS fields: username, ssl=false, expires_in", tokens.get("username") == ENV["PORTAL_AUTH_TEST_USERNAME"]
          and tokens.get("ssl") is False and isinstance(tokens.get("expires_in"), int), tokens.keys())
    check("refresh_token_expires_in follows expiration=30 (minutes)", 1700 <= tokens.get("refresh_token_expires_in", 0) <= 1800,
          tokens.get("refresh_token_expires_in"))
    access = tokens["access_token"]
    check("portals/self: 499 without a token", self_with().get("error", {}).get("code") == 499)
    check("portals/self: 498 with a bad token", self_with("nope").get("error", {}).get("code") == 498)
    for header in (None, "X-Esri-Authorization", "Authorization"):
        body = self_with(access, header)
        check(f"portals/self: the user with token via {header or 'token='}", body.get("user", {}).get("username") == ENV["PORTAL_AUTH_TEST_USERNAME"], body)
    status, _, body = get_json(portal("/rest/services?f=json"), headers={"X-Esri-Authorization": f"Bearer {access}"})
    check("server resource /arcgis/rest/services accepts the token", status == 200 and body.get("user") == ENV["PORTAL_AUTH_TEST_USERNAME"], body)
    check("server resource: 499 without a token", get_json(portal("/rest/services/Maps/MapServer?f=json"))[2].get("error", {}).get("code") == 499)

    http("POST", server("/testctl/reset-stats"), data=b"")
    refresh = tokens["refresh_token"]
    status, refreshed = portal_token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id})
    check("refresh_token grant", status == 200 and "access_token" in refreshed and refreshed.get("username") == ENV["PORTAL_AUTH_TEST_USERNAME"], refreshed)
    check("refresh_token grant keeps the refresh token (ArcGIS: none in the answer)", "refresh_token" not in refreshed, refreshed.keys())
    check("portals/self accepts the refreshed token", "user" in self_with(refreshed["access_token"]))
    _, _, stats = get_json(server("/testctl/stats"))
    check("stats: one portal refresh", stats.get("token_requests_by_face", {}).get("portal", {}).get("refresh_token") == 1
          and stats.get("token_requests_total") == 1, stats)

    http("POST", server("/testctl/expire-access-tokens"), data=b"")
    check("after testctl expire-access-tokens: 498", self_with(refreshed["access_token"]).get("error", {}).get("code") == 498)
    status, refreshed = portal_token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id})
    check("refresh after forced expiry", status == 200 and "user" in self_with(refreshed.get("access_token", "")), refreshed)

    status, body = portal_token({"grant_type": "exchange_refresh_token", "refresh_token": refresh, "client_id": client_id,
                                 "redirect_uri": "http://127.0.0.1:1/nowhere"})
    check("exchange_refresh_token with a wrong redirect_uri → envelope", body.get("error", {}).get("code") == 400, body)
    status, exchanged = portal_token({"grant_type": "exchange_refresh_token", "refresh_token": refresh, "client_id": client_id,
                                      "redirect_uri": login["redirect_uri"]})
    check("exchange_refresh_token returns a new refresh token", status == 200 and exchanged.get("refresh_token") not in (None, refresh), exchanged)
    check("exchange: refresh_token_expires_in renewed (30 min)", 1700 <= exchanged.get("refresh_token_expires_in", 0) <= 1800, exchanged)
    status, body = portal_token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id})
    error = body.get("error", {})
    check("the exchanged (old) refresh token is dead: envelope 400 invalid_grant", error.get("code") == 400 and error.get("error") == "invalid_grant", body)
    new_refresh = exchanged["refresh_token"]
    status, body = portal_token({"grant_type": "refresh_token", "refresh_token": new_refresh, "client_id": client_id})
    check("the new refresh token works", status == 200 and "access_token" in body, body)

    # Rotation on the portal face, switched on at run time.
    post_json(server("/testctl/config"), {"portal_rotate_refresh_tokens": True})
    status, rotated = portal_token({"grant_type": "refresh_token", "refresh_token": new_refresh, "client_id": client_id})
    check("testctl config portal_rotate_refresh_tokens: refresh rotates", rotated.get("refresh_token") not in (None, new_refresh), rotated)
    status, body = portal_token({"grant_type": "refresh_token", "refresh_token": new_refresh, "client_id": client_id})
    check("…and the previous one is dead", body.get("error", {}).get("error") == "invalid_grant", body)
    http("DELETE", server("/testctl/config"))
    new_refresh = rotated.get("refresh_token", new_refresh)
    current_access = rotated.get("access_token", "")

    status, body = curl_form(portal("/sharing/rest/oauth2/revokeToken"), {"client_id": client_id, "auth_token": new_refresh, "token_type_hint": "refresh_token", "f": "json"})
    check("revokeToken (refresh token) → success", body == {"success": True}, body)
    check("revoking the refresh token revoked its access token (498)", self_with(current_access).get("error", {}).get("code") == 498)
    status, body = portal_token({"grant_type": "refresh_token", "refresh_token": new_refresh, "client_id": client_id})
    check("refresh with the revoked token: envelope invalid_grant", body.get("error", {}).get("error") == "invalid_grant", body)
    status, body = curl_form(portal("/sharing/rest/oauth2/revokeToken"), {"client_id": client_id, "auth_token": "never-issued", "f": "json"})
    check("revokeToken of an unknown token → success", body == {"success": True}, body)

    # Refresh-token expiry (ArcGIS 498) through testctl.
    login = portal_login(expiration=60)
    status, tokens = portal_token({"grant_type": "authorization_code", "code": (login["hit"] or ("", {}))[1].get("code", ""), "client_id": client_id,
                                   "redirect_uri": login["redirect_uri"], "code_verifier": login["verifier"]})
    check("second portal sign-in (expiration=60)", status == 200 and 3500 <= tokens.get("refresh_token_expires_in", 0) <= 3600, tokens)
    http("POST", server("/testctl/expire-refresh-tokens"), data=b"")
    status, body = portal_token({"grant_type": "refresh_token", "refresh_token": tokens.get("refresh_token", ""), "client_id": client_id})
    error = body.get("error", {})
    check("expired refresh token → envelope 498 'refresh_token expired'", error.get("code") == 498 and error.get("error") == "invalid_grant", body)


def check_generate_token_and_app():
    print("generateToken, rest/info, client credentials")
    status, _, info = get_json(portal("/rest/info?f=json"))
    check("rest/info names the token service", info.get("authInfo", {}).get("isTokenBasedSecurity") is True
          and info["authInfo"].get("tokenServicesUrl") == portal("/sharing/rest/generateToken"), info)
    password = open(ENV["PORTAL_AUTH_TEST_PASSWORD_FILE"]).read().strip()
    fields = {"username": ENV["PORTAL_AUTH_TEST_USERNAME"], "password": password, "expiration": "15", "client": "referer",
              "referer": "http://127.0.0.1", "f": "json"}
    before = time.time()
    status, body = curl_form(portal("/sharing/rest/generateToken"), fields)
    check("generateToken (good password)", status == 200 and "token" in body and body.get("ssl") is False, body)
    expires = body.get("expires", 0) / 1000
    check("generateToken expires is epoch ms, expiration minutes later", before + 14 * 60 < expires < time.time() + 15 * 60 + 5, expires)
    check("the generated token works on portals/self", "user" in self_with(body.get("token")))
    status, body = curl_form(portal("/sharing/rest/generateToken"), dict(fields, password="wrong"))
    error = body.get("error", {})
    check("generateToken (bad password) → envelope 400 'Unable to generate token.'", status == 200 and error.get("code") == 400
          and error.get("message") == "Unable to generate token.", body)

    secret = open(ENV["PORTAL_AUTH_TEST_APP_SECRET_FILE"]).read().strip()
    app_id = ENV["PORTAL_AUTH_TEST_APP_CLIENT_ID"]
    status, body = curl_form(server("/o/token/"), {"grant_type": "client_credentials"}, basic=(app_id, secret))
    check("client_credentials on /o/token/ (Basic)", status == 200 and "access_token" in body and "refresh_token" not in body, body)
    status, body = curl_form(server("/o/token/"), {"grant_type": "client_credentials", "client_id": app_id, "client_secret": "wrong"})
    check("client_credentials with a wrong secret → 401 invalid_client", status == 401 and body.get("error") == "invalid_client", body)
    status, body = portal_token({"grant_type": "client_credentials", "client_id": app_id, "client_secret": secret, "expiration": "20"})
    check("client_credentials on the portal face (expiration=20)", status == 200 and body.get("expires_in") == 1200, body)
    app_self = self_with(body.get("access_token"))
    check("portals/self with an app token: appInfo, no user", "appInfo" in app_self and "user" not in app_self, app_self)
    status, body = portal_token({"grant_type": "client_credentials", "client_id": app_id, "client_secret": "wrong"})
    check("portal client_credentials with a wrong secret → envelope 400 invalid_client", body.get("error", {}).get("error") == "invalid_client", body)


def check_concurrency_and_faults():
    print("concurrency, stats, injected faults")
    secret = open(ENV["PORTAL_AUTH_TEST_APP_SECRET_FILE"]).read().strip()
    app_id = ENV["PORTAL_AUTH_TEST_APP_CLIENT_ID"]
    http("POST", server("/testctl/reset-stats"), data=b"")

    def one(_):
        return curl_form(server("/o/token/"), {"grant_type": "client_credentials", "client_id": app_id, "client_secret": secret})[0]

    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(one, range(16)))
    _, _, stats = get_json(server("/testctl/stats"))
    check("16 concurrent token requests all answered 200", statuses == [200] * 16, statuses)
    check("stats counted exactly 16 client_credentials requests", stats.get("token_requests", {}).get("client_credentials") == 16, stats)
    post_json(server("/testctl/config"), {"fail_next_token_requests": 1, "fail_status": 503})
    first = one(0)
    second = one(0)
    check("injected failure: the next token request gets 503, then 200", (first, second) == (503, 200), (first, second))
    post_json(server("/testctl/config"), {"token_delay_ms": 300})
    started = time.monotonic()
    one(0)
    check("token_delay_ms slows the token endpoint", time.monotonic() - started >= 0.3)
    status, _, config = get_json(server("/testctl/config"))
    status, _, _ = http("POST", server("/testctl/config"), data=json.dumps({"nope": 1}).encode())
    check("unknown config keys are refused", status == 400)
    http("DELETE", server("/testctl/config"))
    post_json(server("/testctl/config"), {"access_token_seconds": 7})
    status, body = curl_form(server("/o/token/"), {"grant_type": "client_credentials", "client_id": app_id, "client_secret": secret})
    check("config access_token_seconds=7 → expires_in 7", body.get("expires_in") == 7, body)
    http("DELETE", server("/testctl/config"))

    # Device grant (RFC 8628 §3.5): a poll sooner than the interval gets slow_down, and the client must then keep 5 s more.
    http("POST", server("/testctl/reset-stats"), data=b"")
    post_json(server("/testctl/config"), {"device_interval_seconds": 30})
    status, grant = curl_form(server("/o/device-authorization/"), {"client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"], "scope": "openid"})
    check("device authorization with interval 30 (test control)", status == 200 and grant.get("interval") == 30, status)
    poll = {"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": grant.get("device_code", ""),
            "client_id": ENV["PORTAL_AUTH_TEST_CLIENT_ID"]}
    answers = [curl_form(server("/o/token/"), poll)[1].get("error") for _ in range(3)]
    _, _, stats = get_json(server("/testctl/stats"))
    check("polls sooner than the interval → slow_down (the first poll: pending)",
          answers == ["authorization_pending", "slow_down", "slow_down"], answers)
    check("stats record the poll answers in order", stats.get("device_polls") == answers, stats.get("device_polls"))
    http("DELETE", server("/testctl/config"))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", required=True, help="the authserver.env file")
    parser.add_argument("--quick", action="store_true", help="skip the slower browser variants")
    args = parser.parse_args()
    load_env(args.env)
    started = time.monotonic()
    check_discovery()
    check_loopback_matching()
    check_oidc_face()
    check_deny()
    check_prompt_none()
    if not args.quick:
        check_other_loopbacks()
    check_logout()
    check_portal_face()
    check_generate_token_and_app()
    check_concurrency_and_faults()
    left = wait_no_browser_processes()
    check("no browser processes left behind", not left, left)
    TIMINGS["selfcheck total (s)"] = round(time.monotonic() - started, 1)
    print("timings: " + ", ".join(f"{k}: {v}" for k, v in TIMINGS.items()))
    passed = sum(1 for _, ok in RESULTS if ok)
    failed = len(RESULTS) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
