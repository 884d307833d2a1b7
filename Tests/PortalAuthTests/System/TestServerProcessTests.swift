import Foundation
import Glibc
import Testing
import TestSupport

/// `TestServerProcess` (Tests/TestSupport), the one way the tests start a server: its ready line, its port, a server
/// that ends or never gets ready, and stopping by process ID. The deadlines where success is expected are generous
/// (a loaded machine); no test measures a duration.
@Suite("TestServerProcess: start a server, wait for it, stop it")
struct TestServerProcessTests {
    @Test("a ready line on its output is seen (whole lines only, after other output), and the log keeps the rest")
    func readyLine() throws {
        let server = try TestServerProcess(
            "/bin/sh", ["-c", #"echo "starting up" >&2; printf 'PORT 1'; sleep 0.2; echo 23; exec sleep 600"#],
            readiness: .announcedPort, deadline: .seconds(120))
        defer { server.stop() }
        #expect(server.readyLine == "PORT 123")
        #expect(try server.announcedPort() == 123)
        #expect(server.isRunning)
        #expect(server.logTail().contains("starting up"), "\(server.logTail())")
    }

    @Test("a process that ends before its ready line: the error names the command, what it waited for, and its log")
    func endsBeforeReady() throws {
        let error = #expect(throws: TestServerProcess.StartError.self) {
            _ = try TestServerProcess(
                "/bin/sh", ["-c", #"echo "cannot bind: address in use" >&2; exit 3"#],
                readiness: .line(startingWith: "READY"), deadline: .seconds(120))
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("/bin/sh -c"), "\(text)")
        #expect(text.contains(#"a line starting with "READY""#), "\(text)")
        #expect(text.contains("exit status 3"), "\(text)")
        #expect(error?.logTail.contains("cannot bind: address in use") == true, "\(text)")
    }

    @Test("a process that never gets ready: the deadline ends the wait, the error says so and carries its log")
    func deadlinePasses() throws {
        let error = #expect(throws: TestServerProcess.StartError.self) {
            _ = try TestServerProcess(
                "/bin/sh", ["-c", "echo still starting; exec sleep 600"], readiness: .line(startingWith: "READY"),
                deadline: .milliseconds(300))
        }
        #expect(error?.reason.contains("deadline passed") == true, "\(String(describing: error))")
        #expect(error?.logTail.contains("still starting") == true, "\(String(describing: error))")
    }

    @Test("stop ends it by its process ID even when it ignores SIGTERM, reaps it, and a second stop changes nothing")
    func stopReaps() throws {
        let server = try TestServerProcess(
            "/bin/sh", ["-c", #"trap "" TERM; echo READY; exec sleep 600"#], readiness: .line(startingWith: "READY"),
            deadline: .seconds(120))
        let pid = server.processIdentifier
        #expect(pid > 0 && kill(pid, 0) == 0, "it runs")
        server.stop(grace: .milliseconds(100))
        #expect(!server.isRunning)
        // Reaped: no process (not even a zombie) has that ID any more.
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
        server.stop()
        #expect(!server.isRunning)
    }

    @Test("a program that is not there: the error names it")
    func missingProgram() throws {
        let error = #expect(throws: TestServerProcess.StartError.self) {
            _ = try TestServerProcess("/nonexistent/server", ["--serve"], readiness: .port(1))
        }
        #expect(error?.command == "/nonexistent/server --serve", "\(String(describing: error))")
    }
}

/// The port form needs a program that listens: python3.
@Suite("TestServerProcess: waiting for a port", .tags(.python), ExternalTools.condition)
struct TestServerProcessPortTests {
    @Test("the wait ends once the port accepts connections, not before: the server has said it listens by then")
    func portAccepted() throws {
        let port = try Self.freePort()
        let script = """
            import socket, sys, time
            time.sleep(0.3)
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", int(sys.argv[1])))
            print("listening", flush=True)
            s.listen()
            time.sleep(600)
            """
        let server = try TestServerProcess(
            "python3", ["-c", script, "\(port)"], readiness: .port(port), deadline: .seconds(120))
        defer { server.stop() }
        #expect(server.isRunning)
        #expect(server.readyLine == nil)
        #expect(server.logTail().contains("listening"), "\(server.logTail())")
    }

    /// A port nothing listens on now (bound to 0 and closed again).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
