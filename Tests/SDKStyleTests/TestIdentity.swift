import Foundation
import Testing

/// A client certificate and key in a PKCS#12 file, made with the `openssl` command for the test, and a file of
/// garbage beside it.
struct TestIdentity {
    static let commonName = "alice sdk-style"

    let directory: URL
    let password = "p12-password"
    var file: URL { directory.appending(path: "alice.p12") }
    var garbage: URL { directory.appending(path: "garbage.p12") }

    static func make() throws -> TestIdentity {
        let directory = FileManager.default.temporaryDirectory.appending(path: "pa-sdk-p12-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let identity = TestIdentity(directory: directory)
        try openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(commonName)",
            "-keyout", directory.appending(path: "key.pem").path, "-out", directory.appending(path: "cert.pem").path,
        ])
        try openssl([
            "pkcs12", "-export", "-inkey", directory.appending(path: "key.pem").path,
            "-in", directory.appending(path: "cert.pem").path, "-out", identity.file.path,
            "-passout", "pass:\(identity.password)",
        ])
        try Data("this is not PKCS#12".utf8).write(to: identity.garbage)
        return identity
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl \(arguments.first ?? "") failed")
    }
}
