#!/usr/bin/env python3
"""A tiny HTTP(S) server for fault injection in the transport tests (standard library only).

It binds 127.0.0.1 on an ephemeral port and prints "PORT <n>" on stdout. It exits when stdin closes
(the test that started it ended, however it ended), on SIGTERM, or after --lifetime seconds.

Paths (the behaviour is chosen by the path, so one server serves a whole test):
  /json                         200 {"ok": true}
  /status/<code>                <code> with a small JSON body
  /html/<code>                  <code> with an HTML error page (title "<code> Bad Gateway")
  /reply?status=&type=&body=    any status, Content-Type and body (body_hex=: a body of any bytes)
  /echo                         200 JSON: method, path, query, headers (ordered pairs), body
  /big?bytes=N[&chunked=1]      N bytes, with Content-Length or chunked
  /slow?seconds=S               headers at once, then one body byte every 0.2 s for S seconds
  /stall                        reads the request, never answers
  /garbage                      bytes that are not HTTP, then close
  /reset                        closes the connection with a TCP reset
  /redirect?to=URL&status=302   a redirect
  /interim                      a 100 Continue with a field of its own, then 200 with a folded field, then close
  /basic?user=U&password=P      401 + WWW-Authenticate: Basic unless the credentials match, else /echo
  /digest?user=U&password=P     the same with Digest (RFC 7616, MD5, qop=auth)
Options: --tls-cert FILE --tls-key FILE (serve https), --client-ca FILE (require a client certificate).
"""
import argparse
import base64
import hashlib
import re
import json
import os
import signal
import socket
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

STOP = threading.Event()
DIGEST_NONCE = base64.b64encode(os.urandom(12)).decode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        self.route()

    do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_GET

    # MARK: - Helpers

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status, body=b"", content_type="application/json", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status, value, extra=()):
        self.send(status, json.dumps(value).encode(), "application/json", extra)

    # MARK: - Routes

    def route(self):
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        body = self.read_body()
        path = parts.path
        if path == "/json":
            self.send_json(200, {"ok": True})
        elif path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            self.send_json(code, {"status": code})
        elif path.startswith("/html/"):
            code = int(path.rsplit("/", 1)[1])
            page = f"<html><head><title>{code} Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
            self.send(code, page.encode(), "text/html; charset=utf-8")
        elif path == "/reply":
            reply = bytes.fromhex(query["body_hex"]) if "body_hex" in query else query.get("body", "").encode()
            self.send(int(query.get("status", "200")), reply,
                      query.get("type", "application/json"))
        elif path == "/echo":
            self.echo(parts, body)
        elif path == "/big":
            self.big(int(query.get("bytes", "0")), query.get("chunked") == "1")
        elif path == "/peer":
            # The client's port: the same for requests sent over one kept-alive connection.
            self.send_json(200, {"port": self.client_address[1]})
        elif path == "/big-header":
            # One response header field of `bytes` bytes (libcurl refuses a header section over 100 KiB).
            self.send(200, b"{}", "application/json", [("X-Padding", "a" * int(query.get("bytes", "0")))])
        elif path == "/slow":
            self.slow(float(query.get("seconds", "5")))
        elif path == "/stall":
            STOP.wait()
        elif path == "/interim":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n"
                             b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Folded: a\r\n \t b\r\n"
                             b"X-Empty:\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            self.wfile.flush()
            self.close_connection = True
        elif path == "/garbage":
            self.wfile.write(b"THIS IS NOT HTTP\r\n\r\n\x00\xff garbage\r\n")
            self.wfile.flush()
            self.close_connection = True
        elif path == "/reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif path == "/redirect":
            self.send(int(query.get("status", "302")), b"", "text/plain", [("Location", query.get("to", "/json"))])
        elif path == "/basic":
            expected = "Basic " + base64.b64encode(f"{query.get('user')}:{query.get('password')}".encode()).decode()
            if self.headers.get("Authorization") == expected:
                self.echo(parts, body)
            else:
                self.send_json(401, {"error": "unauthorized"}, [("WWW-Authenticate", 'Basic realm="fault"')])
        elif path == "/digest":
            if self.digest_matches(query.get("user", ""), query.get("password", "")):
                self.echo(parts, body)
            else:
                challenge = 'Digest realm="fault", qop="auth", algorithm=MD5, nonce="%s"' % DIGEST_NONCE
                self.send_json(401, {"error": "unauthorized"}, [("WWW-Authenticate", challenge)])
        else:
            self.send_json(404, {"error": "no such path", "path": path})

    def digest_matches(self, user, password):
        header = self.headers.get("Authorization") or ""
        if not header.startswith("Digest "):
            return False
        fields = {k: a or b for k, a, b in re.findall(r'(\w+)=(?:"([^"]*)"|([^\s,]*))', header[7:])}
        if fields.get("username") != user or fields.get("nonce") != DIGEST_NONCE:
            return False
        md5 = lambda text: hashlib.md5(text.encode()).hexdigest()
        ha1 = md5(f"{user}:fault:{password}")
        ha2 = md5(f"{self.command}:{fields.get('uri', '')}")
        expected = md5(f"{ha1}:{DIGEST_NONCE}:{fields.get('nc', '')}:{fields.get('cnonce', '')}:auth:{ha2}")
        return fields.get("response") == expected

    def echo(self, parts, body):
        self.send_json(200, {
            "method": self.command,
            "path": parts.path,
            "query": parts.query,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body": body.decode("utf-8", "replace"),
        })

    def big(self, size, chunked):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        block = b"a" * 65536
        remaining = size
        try:
            while remaining > 0:
                piece = block[:min(remaining, len(block))]
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                else:
                    self.wfile.write(piece)
                remaining -= len(piece)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client stopped reading at its limit

    def slow(self, seconds):
        count = max(1, int(seconds / 0.2))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(count))
        self.end_headers()
        try:
            for _ in range(count):
                if STOP.wait(0.2):
                    return
                self.wfile.write(b".")
                self.wfile.flush()
        except OSError:
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # tests open 64 connections at once: the default backlog of 5 drops handshakes under load

    def __init__(self, address, tls_context):
        super().__init__(address, Handler)
        self.tls_context = tls_context

    def get_request(self):
        connection, address = super().get_request()
        if self.tls_context is None:
            return connection, address
        # The handshake happens in the handler thread (do_handshake_on_connect), not in the accept loop.
        return self.tls_context.wrap_socket(connection, server_side=True), address

    def handle_error(self, request, client_address):
        pass  # handshake failures and resets are the point of these tests


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--client-ca")
    parser.add_argument("--lifetime", type=float, default=300)
    args = parser.parse_args()

    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args.client_ca)

    server = Server(("127.0.0.1", 0), context)
    print(f"PORT {server.server_address[1]}", flush=True)

    def stop(*_):
        STOP.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    threading.Timer(args.lifetime, stop).start()
    server.serve_forever(poll_interval=0.1)
    os._exit(0)  # do not wait for stalled handler threads


if __name__ == "__main__":
    main()
