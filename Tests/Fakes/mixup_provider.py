#!/usr/bin/env python3
"""A hostile identity provider A for the mix-up test (issue 25.1, RFC 9700 §4.4): it relays the user's sign-in to the
honest provider B (the bundled server) and hopes to be sent B's code and the PKCE verifier (standard library only).

    mixup_provider.py --honest http://127.0.0.1:PORT/o --document claim-honest|none [--lifetime SECONDS]

It binds 127.0.0.1 on an ephemeral port, prints "PORT <n>" on stdout, and exits when stdin closes, on SIGTERM, or
after --lifetime. Its paths:

  GET  /oauth2/authorize   302 to B's authorize endpoint with the same query (same client_id, redirect_uri, state,
                           PKCE challenge): B signs the user in and redirects back with B's code and B's iss
  GET  /oauth2/.well-known/openid-configuration
                           with --document claim-honest: a document that names A's endpoints but claims B's issuer
                           (and that B sends iss); with --document none: 404
  POST /oauth2/token       records that a code (and verifier) arrived, then redeems it at B (as a thief would)
  GET  /__log__            {"token_requests": N, "codes": N, "verifiers": N} (no values)
"""
import argparse
import json
import signal
import sys
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

arguments = argparse.ArgumentParser()
arguments.add_argument("--honest", required=True, help="B's issuer, e.g. http://127.0.0.1:8000/o")
arguments.add_argument("--document", choices=["claim-honest", "none"], required=True)
arguments.add_argument("--lifetime", type=float, default=600)
options = arguments.parse_args()

log = {"token_requests": 0, "codes": 0, "verifiers": 0}
lock = threading.Lock()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many connections at once: the default backlog of 5 drops handshakes under load


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, status, document):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path, _, query = self.path.partition("?")
        base = f"http://127.0.0.1:{self.server.server_address[1]}/oauth2"
        if path == "/oauth2/authorize":
            self.send_response(302)
            self.send_header("Location", f"{options.honest}/authorize/?{query}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/oauth2/.well-known/openid-configuration" and options.document == "claim-honest":
            self.send_json(200, {
                "issuer": options.honest, "authorization_endpoint": f"{base}/authorize", "token_endpoint": f"{base}/token",
                "authorization_response_iss_parameter_supported": True,
            })
        elif path == "/__log__":
            with lock:
                self.send_json(200, dict(log))
        else:
            self.send_json(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        if self.path != "/oauth2/token":
            self.send_json(404, {"error": "not_found"})
            return
        with lock:
            log["token_requests"] += 1
            log["codes"] += "code" in form
            log["verifiers"] += "code_verifier" in form
        request = urllib.request.Request(
            f"{options.honest}/token/", data=urllib.parse.urlencode({k: v[0] for k, v in form.items()}).encode(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                self.send_json(answer.status, json.loads(answer.read()))
        except urllib.error.HTTPError as error:
            self.send_json(error.code, json.loads(error.read() or b"{}"))


server = Server(("127.0.0.1", 0), Handler)
print(f"PORT {server.server_address[1]}", flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
threading.Timer(options.lifetime, lambda: server.shutdown()).start()
try:
    sys.stdin.read()  # returns when the test that started this ends
finally:
    server.shutdown()
