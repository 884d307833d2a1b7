"""A browser command for the tests: headless Chromium driven through Selenium.

    portal-auth-test-browser URL

Behaves like xdg-open: returns at once (the work goes on in a detached process), unless
PORTAL_AUTH_TEST_BROWSER_FOREGROUND=1. The detached process opens URL in a fresh
headless Chromium profile, signs in on the test server's login form (and on Glewlwyd's and
LemonLDAP::NG's), answers the consent
page (Authorize, or Cancel with PORTAL_AUTH_TEST_BROWSER_ACTION=deny), confirms a logout
page, and stops once the browser has reached a loopback redirect (127.0.0.1, localhost,
[::1] on another port than the server) and that page has loaded. On the device flow's
verification page (RFC 8628) it submits the code (filled in from the address, or
PORTAL_AUTH_TEST_BROWSER_USER_CODE), authorizes (or denies), and stops on the status page. It records each step,
and the final page's title and text, in the browser log (no query strings, no secrets),
then quits Chromium and leaves no process behind.

A redirect to a custom scheme (my-maps-app://auth?…, the SDK's native-app redirect): a real
desktop browser hands such a navigation to xdg-open, which headless Chromium cannot be made
to do; the driver reads the redirect's Location from Chromium's network log and passes it to
`xdg-open` itself (as the browser would). From there on everything is the desktop's real
chain: the desktop database, the scheme's handler, its channel to the waiting sign-in.

Environment:
  PORTAL_AUTH_TEST_BROWSER_ACTION   allow (default) | deny | none (open the URL and wait)
  PORTAL_AUTH_TEST_BROWSER_TIMEOUT  seconds before giving up (default 60)
  PORTAL_AUTH_TEST_BROWSER_FOREGROUND=1  run in the foreground; exit status tells the outcome
  PORTAL_AUTH_TEST_BROWSER_LOG      log file (default $PORTAL_AUTH_TEST_RUN_DIR/browser.log)
  PORTAL_AUTH_TEST_BROWSER_SCREENSHOT  PNG of the final page, when set
  PORTAL_AUTH_TEST_BROWSER_PROFILE  a Chromium profile directory kept between runs (the
                                    server session survives: single sign-on, logout
                                    confirmation); default a fresh temporary profile
  PORTAL_AUTH_TEST_BROWSER_REMOTE=1  act as a browser on another machine: the test server is
                                    reachable, every other loopback port is not (a dead proxy), so
                                    the final redirect never reaches the tool and must be pasted
  PORTAL_AUTH_TEST_BROWSER_FINAL_URL_FILE  write the address the browser ended on there (0600; it
                                    holds the authorization code: tests only)
  PORTAL_AUTH_TEST_BROWSER_SCHEME_FILE  a custom-scheme redirect is written to this file (0600)
                                    instead of going to xdg-open: what a person on another
                                    machine copies from the address bar to paste back
  PORTAL_AUTH_TEST_BROWSER_CODE_FILE  the code the portal's out-of-band approval page shows
                                    (urn:ietf:wg:oauth:2.0:oob) is written there (0600), as a person copies it
  PORTAL_AUTH_TEST_BROWSER_HEADED=1  with DISPLAY set, run Chromium with a window (under Xvfb)
  PORTAL_AUTH_TEST_USERNAME, PORTAL_AUTH_TEST_PASSWORD_FILE  credentials (else read from
                                    the run directory's authserver.env)
Exit status (foreground): 0 reached the loopback redirect, 1 sign-in failed, 2 the server
showed an error page, 3 timed out, 4 browser failure, 64 usage.
"""
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent

EXIT_OK, EXIT_LOGIN_FAILED, EXIT_ERROR_PAGE, EXIT_TIMEOUT, EXIT_BROWSER = 0, 1, 2, 3, 4


def run_dir():
    return Path(
        os.environ.get("PORTAL_AUTH_TEST_RUN_DIR")
        or os.environ.get("PORTAL_AUTH_RUN_DIR")
        or PROJECT_ROOT / ".run"
    )


def log_path():
    return Path(os.environ.get("PORTAL_AUTH_TEST_BROWSER_LOG") or run_dir() / "browser.log")


def without_query(url):
    try:
        parts = urlsplit(url)
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    except ValueError:
        return "(unparsable URL)"


class Log:
    def __init__(self, path):
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, message):
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {message}\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)


def env_file_values():
    """Variables of the server's authserver.env, a fallback when the caller's
    environment lacks them."""
    values = {}
    path = run_dir() / "authserver.env"
    try:
        for line in path.read_text().splitlines():
            if line.startswith("export ") and "=" in line:
                name, _, value = line[len("export "):].partition("=")
                values[name] = shlex.split(value)[0] if value else ""
    except OSError:
        pass
    return values


def credentials():
    fallback = env_file_values()
    username = os.environ.get("PORTAL_AUTH_TEST_USERNAME") or fallback.get("PORTAL_AUTH_TEST_USERNAME")
    password_file = os.environ.get("PORTAL_AUTH_TEST_PASSWORD_FILE") or fallback.get(
        "PORTAL_AUTH_TEST_PASSWORD_FILE"
    )
    password = None
    if password_file:
        try:
            password = Path(password_file).read_text().strip()
        except OSError:
            password = None
    server = os.environ.get("PORTAL_AUTH_TEST_SERVER") or fallback.get("PORTAL_AUTH_TEST_SERVER")
    return username, password, server


def origin(url):
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return (parts.scheme, (parts.hostname or "").lower(), port)


def own_processes():
    """Pids of our descendants and of the other members of our session."""
    me = os.getpid()
    sid = os.getsid(0)
    parents, sessions = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode("utf-8", "replace")
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] in ("Z", "X"):  # exited, waiting to be reaped: nothing to kill
                continue
            parents[int(entry)] = int(fields[1])
            sessions[int(entry)] = int(fields[3])
        except (OSError, ValueError):
            continue
    found = {pid for pid, session in sessions.items() if sid == me and session == sid}
    frontier = [me]
    while frontier:
        current = frontier.pop()
        for pid, parent in parents.items():
            if parent == current and pid not in found:
                found.add(pid)
                frontier.append(pid)
    found.discard(me)
    return found


def sweep(log):
    """Kills whatever Chromium or chromedriver left behind."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = own_processes()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        time.sleep(0.3)
    left = own_processes()
    if left:
        log(f"warning: processes left after cleanup: {sorted(left)}")


def launch_page_target(url):
    """The URL the tool's private launch page (file://) forwards to, or None."""
    parts = urlsplit(url)
    if parts.scheme != "file":
        return None
    try:
        with open(unquote(parts.path), encoding="utf-8") as page:
            match = re.search(r'id="continue" rel="noreferrer" href="([^"]*)"', page.read())
    except OSError:
        return None
    return html.unescape(match.group(1)) if match else None


class Driver:
    def __init__(self, url, log):
        self.url = url
        self.log = log
        self.action = (os.environ.get("PORTAL_AUTH_TEST_BROWSER_ACTION") or "allow").strip().lower()
        self.timeout = float(os.environ.get("PORTAL_AUTH_TEST_BROWSER_TIMEOUT") or 60)
        self.screenshot = os.environ.get("PORTAL_AUTH_TEST_BROWSER_SCREENSHOT")
        self.username, self.password, server = credentials()
        # The tool starts the browser on its private launch page (a file:// page that forwards to the identity
        # provider, keeping the URL out of the browser's arguments): that is not the server's origin.
        self.server_origins = set() if self.is_launch_address(url) else {origin(url)}
        target = launch_page_target(url)
        if target:
            self.server_origins.add(origin(target))  # the identity provider (or a proxy in front of it)
        if server:
            self.server_origins.add(origin(server))
        for provider in ("PORTAL_AUTH_GLEWLWYD_BASE", "PORTAL_AUTH_LEMONLDAP_PORTAL"):
            if os.environ.get(provider):
                self.server_origins.add(origin(os.environ[provider]))
        self.driver = None
        self.profile = None
        self.keep_profile = False
        self.lemonldap_submitted = False

    def start_browser(self):
        os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager reach the network
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        persistent = os.environ.get("PORTAL_AUTH_TEST_BROWSER_PROFILE")
        if persistent:
            Path(persistent).mkdir(parents=True, exist_ok=True)
            self.profile, self.keep_profile = persistent, True
        else:
            self.profile = tempfile.mkdtemp(prefix="portal-auth-test-browser-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        headed = os.environ.get("PORTAL_AUTH_TEST_BROWSER_HEADED") == "1" and os.environ.get("DISPLAY")
        if not headed:
            options.add_argument("--headless=new")
        for argument in (
            "--no-sandbox",
            "--disable-dev-shm-usage",
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--password-store=basic",
            "--window-size=1024,768",
        ):
            options.add_argument(argument)
        if os.environ.get("PORTAL_AUTH_TEST_BROWSER_REMOTE") == "1":
            # Loopback is normally never proxied; "<-loopback>" lifts that, and only the servers stay direct.
            direct = ";".join(f"{host}:{port}" for _scheme, host, port in sorted(self.server_origins))
            options.add_argument("--proxy-server=http://127.0.0.1:9")
            options.add_argument(f"--proxy-bypass-list=<-loopback>;{direct}")
        options.page_load_strategy = "none"  # poll instead of blocking on slow loopback pages
        # The network log shows a redirect's Location even when Chromium cannot follow it (a custom scheme).
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        service = Service(CHROMEDRIVER, log_output=os.devnull)
        self.driver = webdriver.Chrome(service=service, options=options)

    def quit(self):
        if self.driver is not None:
            done = threading.Event()

            def quit_driver():
                try:
                    self.driver.quit()
                except Exception:  # noqa: BLE001
                    pass
                done.set()

            threading.Thread(target=quit_driver, daemon=True).start()
            done.wait(15)
            self.driver = None
        if self.profile and not self.keep_profile:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None

    @staticmethod
    def is_launch_address(url):
        # The tool's private launch page (a file that forwards to the identity provider).
        parts = urlsplit(url)
        return parts.scheme == "file" or parts.path.startswith("/launch-")

    def is_redirect_target(self, url):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or self.is_launch_address(url):
            return False
        host = (parts.hostname or "").lower()
        return host in LOOPBACK_HOSTS and origin(url) not in self.server_origins

    @staticmethod
    def custom_scheme_of(url):
        scheme = urlsplit(url).scheme.lower() if "://" in url or ":" in url else ""
        if not scheme or scheme in ("http", "https", "about", "data", "blob", "chrome", "file", "javascript"):
            return None
        return scheme

    def custom_scheme_redirect(self):
        """The custom-scheme address a response of this page redirected to, from the network log; or None."""
        try:
            entries = self.driver.get_log("performance")
        except Exception:  # noqa: BLE001 - logging unavailable: no hand-off
            return None
        for entry in entries:
            try:
                message = json.loads(entry["message"])["message"]
            except (KeyError, ValueError, TypeError):
                continue
            params = message.get("params", {})
            candidates = []
            if message.get("method") == "Network.responseReceivedExtraInfo":
                candidates.append(params.get("headers", {}))
            elif message.get("method") == "Network.requestWillBeSent":
                candidates.append((params.get("redirectResponse") or {}).get("headers", {}))
                url = params.get("request", {}).get("url", "")
                if self.custom_scheme_of(url):
                    return url
            for headers in candidates:
                for name, value in (headers or {}).items():
                    if name.lower() == "location" and self.custom_scheme_of(value):
                        return value
        return None

    def hand_off(self, address):
        """Does what a desktop browser does with a custom-scheme address: xdg-open it."""
        scheme = self.custom_scheme_of(address)
        copy_to = os.environ.get("PORTAL_AUTH_TEST_BROWSER_SCHEME_FILE")
        if copy_to:
            temporary = f"{copy_to}.tmp{os.getpid()}"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(address + "\n")
            os.replace(temporary, copy_to)
            self.log(f"redirect to {scheme}: copied for pasting")
            return EXIT_OK
        self.log(f"redirect to {scheme}: handed to xdg-open")
        try:
            completed = subprocess.run(
                ["xdg-open", address], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, timeout=60, check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            self.log(f"xdg-open failed: {type(error).__name__}")
            return EXIT_BROWSER
        self.log(f"xdg-open {scheme}: exit {completed.returncode}")
        return EXIT_OK if completed.returncode == 0 else EXIT_ERROR_PAGE

    def script(self, source, *args):
        return self.driver.execute_script(source, *args)

    def page_state(self):
        """(kind, ready_state, acted) of the current document."""
        return self.script(
            """
            const meta = document.querySelector('meta[name="portalauth-test-page"]');
            return [meta ? meta.content : null, document.readyState, window.__portalAuthActed === true];
            """
        )

    @staticmethod
    def glewlwyd_login(url):
        """The callback_url when `url` is Glewlwyd's login page (its own single-page application), else None."""
        from urllib.parse import parse_qs

        parts = urlsplit(url)
        if not parts.path.endswith("/login.html"):
            return None
        return (parse_qs(parts.query).get("callback_url") or [None])[0]

    def act_glewlwyd(self, url, callback):
        """Glewlwyd's login page: signs in and grants the scopes through the same API its page uses (from the page,
        so the browser holds the session cookie), then continues to the authorization endpoint as its page does."""
        from urllib.parse import parse_qs

        query = parse_qs(urlsplit(url).query)
        client_id = (query.get("client_id") or [""])[0]
        scope = (query.get("scope") or [""])[0]
        where = without_query(url)
        if (query.get("prompt") or [""])[0] == "end_session":
            return self.glewlwyd_end_session(query, callback, where)
        if self.action == "deny":
            self.log(f"glewlwyd: cancel at {where}")
            self.mark_acted()
            self.script("window.location = arguments[0];", callback.split("?")[0] + "?error=access_denied")
            return None
        if not self.username or not self.password:
            self.log("no credentials: set PORTAL_AUTH_TEST_USERNAME and PORTAL_AUTH_TEST_PASSWORD_FILE")
            return EXIT_LOGIN_FAILED
        self.mark_acted()
        result = self.driver.execute_async_script(
            """
            const [username, password, clientID, scope, done] = arguments;
            const json = {"Content-Type": "application/json"};
            (async () => {
              let r = await fetch("api/auth/", {method: "POST", headers: json, credentials: "include",
                                                body: JSON.stringify({username, password})});
              if (!r.ok) return done("login " + r.status);
              if (scope) {
                r = await fetch("api/auth/grant/" + encodeURIComponent(clientID), {method: "PUT", headers: json,
                                credentials: "include", body: JSON.stringify({scope})});
                if (!r.ok) return done("grant " + r.status);
              }
              done("ok");
            })().catch(e => done("error " + e));
            """,
            self.username, self.password, client_id, scope,
        )
        if result != "ok":
            self.log(f"glewlwyd: sign-in failed at {where}: {result}")
            return EXIT_LOGIN_FAILED
        self.log(f"signed in as {self.username} at {where} (glewlwyd)")
        self.script("window.location = arguments[0];", callback + ("&" if "?" in callback else "?") + "g_continue")
        return None

    def glewlwyd_end_session(self, query, callback, where):
        """Glewlwyd's sign-out page: ends the OpenID session and the Glewlwyd session as its page does, then goes to
        the callback (the client's post_logout_redirect_uri); with action=deny it stays."""
        self.mark_acted()
        if self.action == "deny":
            self.log(f"glewlwyd: sign-out declined at {where}")
            return None
        sid = (query.get("sid") or [""])[0]
        plugin = (query.get("plugin") or ["oidc"])[0]
        result = self.driver.execute_async_script(
            """
            const [plugin, sid, done] = arguments;
            (async () => {
              let r = await fetch("api/" + plugin + "/session/" + encodeURIComponent(sid), {method: "DELETE", credentials: "include"});
              if (!r.ok) return done("session " + r.status);
              r = await fetch("api/auth/", {method: "DELETE", credentials: "include"});
              done(r.ok ? "ok" : "auth " + r.status);
            })().catch(e => done("error " + e));
            """,
            plugin, sid,
        )
        self.log(f"logout: glewlwyd end_session at {where}: {result}")
        if result != "ok":
            return EXIT_ERROR_PAGE
        self.script("window.location = arguments[0];", callback)
        return None

    def lemonldap_login(self):
        """Whether the page is LemonLDAP::NG's login form (its portal's `lform` with the user and password fields)."""
        return self.script(
            """
            const form = document.querySelector('form[id^="lform"]');
            return !!(form && form.querySelector('input[name="user"]') && form.querySelector('input[name="password"]'));
            """
        )

    def act_lemonldap(self, url):
        """LemonLDAP::NG's login form: types the test user's login and password and submits the form (its hidden
        token included), as a person does; the form shown again after that is a refused sign-in (the portal shows
        a message above the form on its first page too, so the message alone says nothing)."""
        from selenium.webdriver.common.by import By

        where = without_query(url)
        if self.lemonldap_submitted:
            text = self.driver.find_element(By.TAG_NAME, "body").text.replace("\n", " ")[:200]
            self.log(f"lemonldap: sign-in rejected at {where}: {text}")
            return EXIT_LOGIN_FAILED
        if not self.username or not self.password:
            self.log("no credentials: set PORTAL_AUTH_TEST_USERNAME and PORTAL_AUTH_TEST_PASSWORD_FILE")
            return EXIT_LOGIN_FAILED
        self.mark_acted()
        self.script(
            """
            const [username, password] = arguments;
            const form = document.querySelector('form[id^="lform"]');
            form.querySelector('input[name="user"]').value = username;
            form.querySelector('input[name="password"]').value = password;
            const button = form.querySelector('button[type="submit"]');
            if (button) button.click(); else form.submit();
            """,
            self.username, self.password,
        )
        self.lemonldap_submitted = True
        self.log(f"signed in as {self.username} at {where} (lemonldap)")
        return None

    def mark_acted(self):
        self.script("window.__portalAuthActed = true;")

    def click(self, element_id):
        self.script("document.getElementById(arguments[0]).click();", element_id)

    def act(self, kind, url):
        """Handles one page of the test server. Returns an exit status to stop with, or None."""
        from selenium.webdriver.common.by import By

        where = without_query(url)
        if kind == "error":
            text = self.driver.find_element(By.TAG_NAME, "body").text.replace("\n", " ")[:300]
            self.log(f"error page at {where}: {text}")
            return EXIT_ERROR_PAGE
        if self.action == "none":
            return None
        if kind == "login":
            if self.driver.find_elements(By.ID, "login-error"):
                self.log(f"sign-in rejected at {where}")
                return EXIT_LOGIN_FAILED
            if not self.username or not self.password:
                self.log("no credentials: set PORTAL_AUTH_TEST_USERNAME and PORTAL_AUTH_TEST_PASSWORD_FILE")
                return EXIT_LOGIN_FAILED
            self.mark_acted()
            self.driver.find_element(By.ID, "id_username").send_keys(self.username)
            self.driver.find_element(By.ID, "id_password").send_keys(self.password)
            self.click("login-submit")
            self.log(f"signed in as {self.username} at {where}")
        elif kind == "consent":
            self.mark_acted()
            button = "deny" if self.action == "deny" else "allow"
            self.click(button)
            self.log(f"consent: clicked {'Cancel' if button == 'deny' else 'Authorize'} at {where}")
        elif kind == "device-code":
            # The device flow's verification page (RFC 8628), with the code filled in from
            # verification_uri_complete, or typed from PORTAL_AUTH_TEST_BROWSER_USER_CODE.
            self.mark_acted()
            typed = os.environ.get("PORTAL_AUTH_TEST_BROWSER_USER_CODE")
            if typed:
                field = self.driver.find_element(By.ID, "id_user_code")
                field.clear()
                field.send_keys(typed)
            refusal = self.driver.find_elements(By.ID, "device-code-error")
            if refusal:
                reason = " ".join(refusal[0].text.split())[:200]
                self.log(f"device code refused at {where}: {reason}")
                return EXIT_ERROR_PAGE
            self.click("device-code-submit")
            self.log(f"device code: submitted at {where}")
        elif kind == "device-consent":
            self.mark_acted()
            button = "device-deny" if self.action == "deny" else "device-accept"
            self.click(button)
            self.log(f"device consent: clicked {'Deny' if button == 'device-deny' else 'Authorize'} at {where}")
        elif kind == "device-done":
            return self.finish(url)
        elif kind == "oob-approval":
            return self.copy_out_of_band_code(where)
        elif kind == "logout-confirm":
            self.mark_acted()
            button = "logout-cancel" if self.action == "deny" else "logout-confirm"
            self.click(button)
            self.log(f"logout: clicked {'Cancel' if button == 'logout-cancel' else 'Sign out'} at {where}")
        return None

    def copy_out_of_band_code(self, where):
        """The portal's out-of-band approval page: the code a person copies into the application goes to
        PORTAL_AUTH_TEST_BROWSER_CODE_FILE (0600; never to the log)."""
        from selenium.webdriver.common.by import By

        code = self.driver.find_element(By.ID, "oob-code").get_attribute("value") or ""
        copy_to = os.environ.get("PORTAL_AUTH_TEST_BROWSER_CODE_FILE")
        if copy_to:
            fd = os.open(copy_to, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(code + "\n")
        self.log(f"out-of-band code shown at {where} ({len(code)} characters){', copied' if copy_to else ''}")
        return EXIT_OK if code else EXIT_ERROR_PAGE

    def finish(self, url):
        """On the loopback redirect: wait for the page, record it."""
        from selenium.webdriver.common.by import By

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.script("return document.readyState") == "complete":
                    break
            except Exception:  # noqa: BLE001 - the page may still be committing
                pass
            time.sleep(0.1)
        title, text = "", ""
        try:
            title = self.driver.title
            text = self.driver.find_element(By.TAG_NAME, "body").text
        except Exception:  # noqa: BLE001
            pass
        text = re.sub(r"\?\S*", "?…", " ".join(text.split()))[:500]
        self.log(f"reached {without_query(url)} title={title!r} text={text!r}")
        final_file = os.environ.get("PORTAL_AUTH_TEST_BROWSER_FINAL_URL_FILE")
        if final_file:
            fd = os.open(final_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(url + "\n")
        if self.screenshot:
            try:
                self.driver.save_screenshot(self.screenshot)
            except Exception:  # noqa: BLE001
                pass
        return EXIT_OK

    def run(self):
        self.log(f"open {without_query(self.url)} action={self.action} timeout={self.timeout:g}s")
        started = time.monotonic()
        try:
            self.start_browser()
        except Exception as error:  # noqa: BLE001
            self.log(f"cannot start Chromium: {error!r}")
            return EXIT_BROWSER
        self.driver.get(self.url)
        deadline = started + self.timeout
        last_where = None
        while time.monotonic() < deadline:
            try:
                url = self.driver.current_url
                if url != last_where:
                    last_where = url
                if self.is_redirect_target(url):
                    status = self.finish(url)
                    self.log(f"done in {time.monotonic() - started:.1f}s")
                    return status
                address = self.custom_scheme_redirect()
                if address:
                    status = self.hand_off(address)
                    self.log(f"done in {time.monotonic() - started:.1f}s")
                    return status
                kind, ready, acted = self.page_state()
                if kind and not acted and ready in ("interactive", "complete"):
                    status = self.act(kind, url)
                    if status is not None:
                        return status
                callback = None if kind else self.glewlwyd_login(url)
                if callback and not acted and ready == "complete" and self.action != "none":
                    status = self.act_glewlwyd(url, callback)
                    if status is not None:
                        return status
                lemonldap = None if kind or callback or acted or ready != "complete" else self.lemonldap_login()
                if lemonldap and self.action != "none":
                    status = self.act_lemonldap(url)
                    if status is not None:
                        return status
            except Exception as error:  # noqa: BLE001 - navigation in progress, retry
                message = str(error).splitlines()[0] if str(error) else type(error).__name__
                if "invalid session id" in message or "disconnected" in message:
                    self.log(f"browser went away: {message}")
                    return EXIT_BROWSER
            time.sleep(0.15)
        where = without_query(last_where or self.url)
        self.log(f"timeout after {self.timeout:g}s at {where}")
        return EXIT_TIMEOUT


def daemonize(log_file):
    """Forks: the parent returns to the caller at once; the child leads a new session
    with stdin from /dev/null and stdout/stderr appended to the log."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    output = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(devnull, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(devnull)
    os.close(output)


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: portal-auth-test-browser URL\n")
        return 64
    url = argv[1]
    log = Log(log_path())
    if os.environ.get("PORTAL_AUTH_TEST_BROWSER_FOREGROUND") != "1":
        daemonize(log.path)

    driver = Driver(url, log)
    status = EXIT_BROWSER

    def watchdog():
        time.sleep(driver.timeout + 30)
        log("watchdog: still running long after the timeout; killing the browser")
        sweep(log)
        os._exit(EXIT_TIMEOUT)

    threading.Thread(target=watchdog, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        status = driver.run()
    except KeyboardInterrupt:
        log("interrupted")
        status = EXIT_BROWSER
    except Exception:  # noqa: BLE001
        log("unexpected failure:\n" + traceback.format_exc())
        status = EXIT_BROWSER
    finally:
        driver.quit()
        sweep(log)
        log(f"exit {status}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
