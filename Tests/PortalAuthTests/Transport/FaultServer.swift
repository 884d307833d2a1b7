import Foundation
import PortalAuth
import Testing
import TestSupport

/// The fault-injection server of `Tests/Fakes/fault_server.py`, started on 127.0.0.1 with an ephemeral port through
/// `TestServerProcess`.
///
/// It stops when `stop()` closes its stdin, and by itself if this test process dies (stdin closes) or after
/// its lifetime.
final class FaultServer: Sendable {
    /// The port it listens on.
    let port: Int
    /// `http` or `https`.
    let scheme: String
    private let server: TestServerProcess

    /// Starts a server (blocking); `tls` serves https with that certificate, `clientCA` then requires client
    /// certificates.
    init(tls: TestCertificate? = nil, clientCA: URL? = nil) throws {
        var arguments = ["--lifetime", "120"]
        if let tls { arguments += ["--tls-cert", tls.certificate.path, "--tls-key", tls.key.path] }
        if let clientCA { arguments += ["--client-ca", clientCA.path] }
        server = try TestServerProcess.fake("fault_server.py", arguments)
        port = try server.announcedPort()
        self.scheme = tls == nil ? "http" : "https"
    }

    /// A URL on this server, e.g. `url("/echo?x=1")`; `host` may be another loopback name such as `localhost`.
    func url(_ pathAndQuery: String, host: String = "127.0.0.1") -> URL {
        URL(string: "\(scheme)://\(host):\(port)\(pathAndQuery)")!
    }

    /// Stops the server.
    func stop() {
        server.stop()
    }

    /// Runs `body` with a started server and stops it afterwards, whatever happens.
    static func with<T>(
        tls: TestCertificate? = nil, clientCA: URL? = nil, _ body: (FaultServer) async throws -> T
    ) async throws -> T {
        let server = try await BlockingWork.run { try FaultServer(tls: tls, clientCA: clientCA) }
        defer { server.stop() }
        return try await body(server)
    }

    /// Runs `body` with a TLS server presenting a new self-signed certificate, that certificate, and a stranger's
    /// (which the server's does not chain to); both are removed afterwards.
    static func withStranger<T>(
        _ body: (FaultServer, TestCertificate, TestCertificate) async throws -> T
    ) async throws -> T {
        let certificate = try await TestCertificate.make()
        let stranger = try await TestCertificate.make()
        defer {
            certificate.remove()
            stranger.remove()
        }
        return try await with(tls: certificate) { server async throws in
            try await body(server, certificate, stranger)
        }
    }
}

/// The fault server could not start.
struct FaultServerError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A self-signed certificate for 127.0.0.1/localhost made with `openssl req -x509` in a temporary folder.
struct TestCertificate: Sendable {
    /// The folder holding the files.
    let directory: URL
    /// The certificate (PEM).
    let certificate: URL
    /// Its private key (PEM, unencrypted).
    let key: URL

    /// Makes a new certificate with common name `name` and the given subject alternative names in a new
    /// temporary folder.
    static func make(name: String = "127.0.0.1", altNames: String = "IP:127.0.0.1,DNS:localhost") async throws
        -> TestCertificate
    {
        try await BlockingWork.run { try makeBlocking(name: name, altNames: altNames) }
    }

    private static func makeBlocking(name: String, altNames: String) throws -> TestCertificate {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("portal-auth-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        try runTool(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key.path, "-out", certificate.path, "-days", "1", "-subj", "/CN=\(name)",
                "-addext", "subjectAltName=\(altNames)",
            ])
        return TestCertificate(directory: directory, certificate: certificate, key: key)
    }

    /// Packs the certificate and key as PKCS#12 protected by `password`.
    func pkcs12(password: String) throws -> Data {
        let output = directory.appendingPathComponent("identity.p12")
        try runTool(
            "openssl",
            [
                "pkcs12", "-export", "-in", certificate.path, "-inkey", key.path, "-out", output.path,
                "-passout", "pass:\(password)",
            ])
        return try Data(contentsOf: output)
    }

    /// Removes the folder.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs a tool from PATH and fails when it exits non-zero.
func runTool(_ tool: String, _ arguments: [String]) throws {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw FaultServerError(message: "\(tool) \(arguments.first ?? "") exited with \(process.terminationStatus)")
    }
}
