"""The expiry burst's server for scripts/bench's library section (issue 27): an ArcGIS portal face on loopback
(plain http) whose generateToken issues a new token each time and whose portals/self accepts only the newest one,
until it has served `--expire-after` requests with it: from then on that token is refused (ArcGIS 498, as a portal
answers for an expired token) until a new one is generated. GET /stats tells how many tokens were generated.

    python3 burst_server.py PORT_FILE [--expire-after N]
"""
import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"generated": 0, "accepted": None, "served_with_current": 0, "refused": 0}
EXPIRE_AFTER = 40


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # 64 clients connect at once: the default backlog of 5 drops their handshakes


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if not self.path.split("?")[0].endswith("/sharing/rest/generateToken"):
            self.send_json({"error": {"code": 404, "message": "not found"}})
            return
        with LOCK:
            STATE["generated"] += 1
            token = "burst-token-%d" % STATE["generated"]
            STATE["accepted"] = token
            STATE["served_with_current"] = 0
        self.send_json({"token": token, "expires": int((time.time() + 3600) * 1000), "ssl": False})

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/stats":
            with LOCK:
                self.send_json(dict(STATE))
            return
        header = self.headers.get("X-Esri-Authorization", "")
        token = header[len("Bearer "):] if header.startswith("Bearer ") else None
        with LOCK:
            ok = token is not None and token == STATE["accepted"]
            if ok:
                STATE["served_with_current"] += 1
                # The token expires on the server's side after EXPIRE_AFTER requests (once: the first token only).
                if STATE["generated"] == 1 and STATE["served_with_current"] >= EXPIRE_AFTER:
                    STATE["accepted"] = None
            else:
                STATE["refused"] += 1
        if ok:
            self.send_json({"user": {"username": "bench"}})
        else:
            self.send_json({"error": {"code": 498, "message": "Invalid token.", "details": []}})


def main():
    global EXPIRE_AFTER
    parser = argparse.ArgumentParser()
    parser.add_argument("port_file")
    parser.add_argument("--expire-after", type=int, default=40)
    args = parser.parse_args()
    EXPIRE_AFTER = args.expire_after
    server = Server(("127.0.0.1", 0), Handler)
    with open(args.port_file, "w") as handle:
        handle.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
