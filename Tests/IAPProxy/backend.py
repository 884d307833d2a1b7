#!/usr/bin/env python3
"""The application behind the test Identity-Aware Proxy (scripts/iap-proxy): a tiny JSON service on 127.0.0.1.

    backend.py PORT

Apache + mod_auth_openidc forwards every request it lets through (mod_proxy_http); this answers with what the proxy
told it, never with a token: the host and path asked for, the user (`OIDC_CLAIM_sub`), the audience and issuer of
the token or session the proxy accepted, and whether a bearer token reached it. `/signin.html` is the proxy's own
sign-in page (not protected): a link that starts the proxy's browser sign-in."""
import html
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many connections at once: the default backlog of 5 drops handshakes under load


class Handler(BaseHTTPRequestHandler):
    server_version = "iap-backend/1"

    def log_message(self, format, *args):  # the proxy's access log has the requests (without query strings)
        pass

    def _send(self, status, content_type, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _answer(self):
        path = self.path.split("?", 1)[0]
        if path == "/signin.html":
            host = html.escape(self.headers.get("Host", ""))
            page = ("<!doctype html><html><head><title>Sign in</title></head><body>"
                    f"<h1>Sign in to {host}</h1><p><a href=\"/auth/\">Continue with your identity provider</a></p>"
                    "</body></html>")
            self._send(200, "text/html; charset=utf-8", page)
            return
        claims = {name: self.headers.get(f"OIDC_CLAIM_{name}") for name in ("sub", "username", "aud", "iss", "azp")}
        body = {
            "app": "iap-backend",
            "method": self.command,
            "host": self.headers.get("Host"),
            "path": path,
            "user": claims["sub"] or claims["username"],
            "claims": {name: value for name, value in claims.items() if value is not None},
            # Whether the proxy passed a bearer token on (mod_auth_openidc keeps the Authorization header); never the token.
            "bearer": (self.headers.get("Authorization") or "").lower().startswith("bearer "),
        }
        self._send(200, "application/json", json.dumps(body, sort_keys=True) + "\n")

    do_GET = _answer
    do_HEAD = _answer

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._answer()


def main():
    server = Server(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
