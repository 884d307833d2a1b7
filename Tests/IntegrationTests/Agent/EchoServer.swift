import Foundation
import Glibc
import PortalAuth

/// A loopback ArcGIS-like server for `portal-auth request` (issue 46): `{"error": {"code": 499, …}}` without
/// `X-Esri-Authorization`, else the header echoed; used by `AgentRequestTests` and by `AgentForwardingTests` over SSH.
final class EchoServer {
    let process = ChildProcess()
    let port: Int

    init(folder: URL) throws {
        let script = """
            import http.server, json, os, sys
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    sent = self.headers.get("X-Esri-Authorization")
                    body = {"sent": sent} if sent else {"error": {"code": 499, "message": "Token Required", "details": []}}
                    data = json.dumps(body).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                def log_message(self, *args):
                    pass
                def date_time_string(self, timestamp=None):
                    return "Thu, 01 Jan 2026 00:00:00 GMT"  # the same in every answer
            server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
            with open(sys.argv[1] + ".tmp", "w") as file:
                file.write(str(server.server_address[1]))
            os.rename(sys.argv[1] + ".tmp", sys.argv[1])
            server.serve_forever()
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let portFile = folder.appendingPathComponent("echo.port").path
        process.arguments = ["-I", "-c", script, portFile]
        process.standardInput = nil
        process.standardOutput = nil
        try process.run()
        // The port, once the server listens (a hang guard of 30 s, not a measurement).
        let deadline = ContinuousClock.now + .seconds(30)
        while access(portFile, F_OK) != 0 && process.isRunning && ContinuousClock.now < deadline {
            usleep(20_000)
        }
        let line = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? "nothing"
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw AgentCommandTests.AgentStartFailure(output: "the echo server said \(line)")
        }
        self.port = port
    }

    var portal: String { "http://127.0.0.1:\(port)/portal" }

    func stop() {
        if process.isRunning {
            // SIGKILL: the child inherits the test process's signal mask, in which SIGTERM may be blocked.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
