#!/usr/bin/env python3
"""A fault-injecting HTTP proxy in front of the test authorization server (standard library only).

    fault_proxy.py --upstream http://127.0.0.1:PORT [--lifetime SECONDS]

It binds 127.0.0.1 on an ephemeral port, prints "PORT <n>" on stdout, and forwards every request to the
upstream unchanged (Host header included, so the server's own redirects and URLs point back at the proxy).
It exits when stdin closes (the test that started it ended, however it ended; --ignore-stdin for scripts), on
SIGTERM, or after --lifetime.

Faults hit token requests only (POST to a path ending in /oauth2/token, /o/token/ or Glewlwyd's /oidc/token), the
next `count` of them
(-1: all until cleared). Arm one with

    POST /__fault__   {"mode": MODE, "count": 1, "seconds": 30}
    GET /__fault__    {"mode", "remaining", "token_requests", "faulted"}
    DELETE /__fault__ back to forwarding everything

Modes:
  status-500    500 with an HTML error page, upstream not asked
  reset         reads the request, then closes with a TCP reset
  close         reads the request, then closes without a byte
  stall         reads the request, then sends nothing for `seconds` (default 30), then closes
  truncate      forwards; the answer's JSON body cut in half, with a Content-Length that matches the cut
  cut           forwards; the full Content-Length announced but only half the body sent, then closed
  wrong-type    forwards; the answer's Content-Type replaced by text/html
  html-200      200 text/html sign-in page (a captive portal), upstream not asked
  garbage       bytes that are not HTTP, then closed
  no-id-token   forwards; the answer's JSON without its "id_token" (a refresh answered as OIDC Core 12.2 allows)
  bad-id-token  forwards; an `id_token` in the JSON answer replaced by text that is not a JWT (the rest kept)
  slow          forwards at once (the server processes it: a rotating one replaces the refresh token), then holds
                the answer for `seconds` before sending it
  expires-in    forwards; the JSON answer's "expires_in" replaced by `value` (any JSON: 0, "soon", -5)
"""
import argparse
import http.client
import json
import signal
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

STOP = threading.Event()
MODES = {"status-500", "reset", "close", "stall", "truncate", "cut", "wrong-type", "html-200", "garbage", "no-id-token",
         "bad-id-token", "slow", "expires-in"}
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade", "content-length"}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many connections at once: the default backlog of 5 drops handshakes under load


class Fault:
    """The armed fault and the counters, shared by the handler threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.mode = None
        self.remaining = 0
        self.seconds = 30.0
        self.value = None
        self.token_requests = 0
        self.faulted = 0

    def take(self):
        """The mode for this token request, or None to forward it."""
        with self.lock:
            self.token_requests += 1
            if self.mode is None or self.remaining == 0:
                return None
            if self.remaining > 0:
                self.remaining -= 1
            self.faulted += 1
            return self.mode

    def state(self):
        with self.lock:
            return {"mode": self.mode, "remaining": self.remaining, "token_requests": self.token_requests,
                    "faulted": self.faulted}


def without_id_token(answer):
    """The JSON token response without its id_token; any other body unchanged."""
    try:
        tokens = json.loads(answer)
    except ValueError:
        return answer
    if not isinstance(tokens, dict):
        return answer
    tokens.pop("id_token", None)
    return json.dumps(tokens).encode()


FAULT = Fault()
UPSTREAM = None  # (host, port)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        self.route()

    do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = do_GET

    def route(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path
        if path == "/__fault__":
            return self.control(body)
        is_token = self.command == "POST" and (
            path.endswith("/oauth2/token") or path.endswith("/o/token/") or path.endswith("/oidc/token"))
        mode = FAULT.take() if is_token else None
        if mode == "status-500":
            page = b"<html><head><title>500 Internal Server Error</title></head><body>Oops</body></html>"
            return self.answer(500, [("Content-Type", "text/html")], page)
        if mode == "html-200":
            page = b"<html><head><title>Sign in to the guest network</title></head><body><form></form></body></html>"
            return self.answer(200, [("Content-Type", "text/html; charset=utf-8")], page)
        if mode == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_now()
            return
        if mode == "close":
            self.close_now()
            return
        if mode == "stall":
            STOP.wait(FAULT.seconds)
            self.close_now()
            return
        if mode == "garbage":
            self.wfile.write(b"\x16\x03\x01 this is not HTTP at all\r\n\r\n")
            self.close_now()
            return
        status, headers, answer = self.forward(body)
        if mode == "truncate":
            answer = answer[: len(answer) // 2]
        elif mode == "no-id-token":
            answer = without_id_token(answer)
        elif mode == "bad-id-token":
            try:
                document = json.loads(answer)
                if isinstance(document, dict) and "id_token" in document:
                    document["id_token"] = "not-a-jwt"
                    answer = json.dumps(document).encode()
            except ValueError:
                pass
        elif mode == "slow":
            STOP.wait(FAULT.seconds)
        elif mode == "expires-in":
            try:
                document = json.loads(answer)
                if isinstance(document, dict) and "access_token" in document:
                    document["expires_in"] = FAULT.value
                    answer = json.dumps(document).encode()
            except ValueError:
                pass
        elif mode == "wrong-type":
            headers = [(n, v) for n, v in headers if n.lower() != "content-type"] + [("Content-Type", "text/html")]
        elif mode == "cut":
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(answer[: len(answer) // 2])
            self.wfile.flush()
            self.close_now()
            return
        self.answer(status, headers, answer)

    # MARK: - Pieces

    def forward(self, body):
        connection = http.client.HTTPConnection(*UPSTREAM, timeout=60)
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
        if body:
            headers["Content-Length"] = str(len(body))
        connection.request(self.command, self.path, body=body or None, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        kept = [(n, v) for n, v in response.getheaders() if n.lower() not in HOP_BY_HOP]
        connection.close()
        return response.status, kept, answer

    def answer(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True

    def close_now(self):
        self.close_connection = True
        try:
            self.connection.close()
        except OSError:
            pass

    def control(self, body):
        if self.command == "POST":
            try:
                request = json.loads(body or b"{}")
                mode = request["mode"]
                if mode not in MODES:
                    raise ValueError(f"unknown mode {mode}; one of {sorted(MODES)}")
                with FAULT.lock:
                    FAULT.mode = mode
                    FAULT.remaining = int(request.get("count", 1))
                    FAULT.seconds = float(request.get("seconds", 30))
                    FAULT.value = request.get("value")
            except (ValueError, KeyError, TypeError) as error:
                return self.answer(400, [("Content-Type", "application/json")], json.dumps({"error": str(error)}).encode())
        elif self.command == "DELETE":
            with FAULT.lock:
                FAULT.mode, FAULT.remaining = None, 0
        self.answer(200, [("Content-Type", "application/json")], json.dumps(FAULT.state()).encode())


def main():
    global UPSTREAM
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT of the real server")
    parser.add_argument("--lifetime", type=float, default=600, help="seconds before exiting by itself")
    parser.add_argument("--ignore-stdin", action="store_true", help="keep running when stdin closes (scripts)")
    options = parser.parse_args()
    upstream = urlsplit(options.upstream)
    if upstream.scheme != "http" or upstream.hostname not in ("127.0.0.1", "localhost", "::1"):
        parser.error("--upstream must be an http URL on a loopback address")
    UPSTREAM = (upstream.hostname, upstream.port or 80)

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(1):
                pass
        except (OSError, ValueError):
            pass
        STOP.set()

    if not options.ignore_stdin:
        threading.Thread(target=watch_stdin, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: STOP.set())
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    STOP.wait(options.lifetime)
    STOP.set()
    server.shutdown()


if __name__ == "__main__":
    main()
