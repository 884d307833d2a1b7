import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// `NetworkCredential.certificate(at:password:)`: PKCS#12 files made with openssl, opened with OpenSSL.
@Suite("Certificate credentials: loading .p12 files", .tags(.openssl), ExternalTools.condition)
struct CertificateCredentialTests {
    static let password = "p12-Passw0rd"

    /// A client identity and its .p12 file, removed afterwards.
    static func withIdentity<T>(_ body: (TestCertificate, URL) async throws -> T) async throws -> T {
        let identity = try await TestCertificate.make(name: "alice client", altNames: "email:alice@example.test")
        defer { identity.remove() }
        let file = identity.directory.appendingPathComponent("alice.p12")
        try await BlockingWork.run { try identity.pkcs12(password: password) }.write(to: file)
        return try await body(identity, file)
    }

    /// Runs `body` and returns the `CertificateImportError` it throws.
    static func loadError(_ file: URL, password: String = password, now: Date = Date()) throws -> CertificateImportError
    {
        try #require(throws: CertificateImportError.self) {
            _ = try NetworkCredential.certificate(at: file, password: password, now: now)
        }
    }

    @Test("the .p12 made by openssl loads with its password and goes to the transport as PKCS#12")
    func loads() async throws {
        try await Self.withIdentity { identity, file in
            let credential = try NetworkCredential.certificate(at: file, password: Self.password)
            #expect(credential.kind == .certificate)
            #expect(credential.certificateFile == file)
            let info = try #require(credential.certificate)
            #expect(info.subject == "/CN=alice client")
            #expect(info.isSelfSigned)
            #expect(info.sha256Fingerprint.count == 32 * 3 - 1)
            #expect(info.notAfter.map { $0 > Date() } == true)
            let transport = credential.transportCredentials
            #expect(transport.clientCertificate?.pkcs12 == (try Data(contentsOf: file)))
            #expect(transport.clientCertificate?.password == Self.password)
            #expect(transport.password == nil && transport.trustedServerCertificates == nil)
            #expect(!"\(credential)".contains(Self.password))
        }
    }

    @Test("a wrong password and a wrong file give distinct errors that name the file")
    func wrongPasswordVersusWrongFile() async throws {
        try await Self.withIdentity { identity, file in
            let wrongPassword = try Self.loadError(file, password: "not-the-password")
            #expect(wrongPassword.kind == .wrongPassword)
            #expect(wrongPassword.category == .refused)
            #expect(wrongPassword.description.contains(file.path))
            #expect(!wrongPassword.description.contains("not-the-password"))

            let pem = try Self.loadError(identity.certificate)
            #expect(pem.kind == .notPKCS12)
            #expect(pem.category == .invalidContent)
            #expect(pem.description.contains(identity.certificate.path))
            #expect(pem.description.contains("openssl pkcs12 -export"), "PEM input gets the conversion command")
            #expect(pem.kind != wrongPassword.kind)
        }
    }

    @Test(
        "damaged, empty, missing and directory paths are reported for what they are",
        arguments: [
            ("garbage", NetworkCredentialError.Kind.notPKCS12, "OpenSSL cannot decode it"),
            ("truncated", .notPKCS12, "OpenSSL cannot decode it"),
            ("empty", .notPKCS12, "the file is empty"),
            ("missing", .fileUnreadable, "no such file"),
            ("directory", .fileUnreadable, "it is a directory"),
        ])
    func badFiles(shape: String, kind: NetworkCredentialError.Kind, phrase: String) async throws {
        try await Self.withIdentity { identity, file in
            let target = identity.directory.appendingPathComponent("bad-\(shape).p12")
            switch shape {
            case "garbage": try Data((0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: target)
            case "truncated": try Data(contentsOf: file).prefix(200).write(to: target)
            case "empty": try Data().write(to: target)
            case "directory": try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            default: break
            }
            let error = try Self.loadError(target)
            #expect(error.kind == kind, "\(error)")
            #expect(error.description.contains(phrase), "\(error)")
            #expect(error.description.contains(target.path))
        }
    }

    @Test("a .p12 without a private key cannot identify anyone")
    func noKey() async throws {
        try await Self.withIdentity { identity, _ in
            let file = identity.directory.appendingPathComponent("nokey.p12")
            try await BlockingWork.run {
                try runTool(
                    "openssl",
                    [
                        "pkcs12", "-export", "-nokeys", "-in", identity.certificate.path, "-out", file.path, "-passout",
                        "pass:\(Self.password)",
                    ])
            }
            let error = try Self.loadError(file)
            #expect(error.kind == .noIdentity, "\(error)")
            #expect(error.description.contains("no private key"))
        }
    }

    @Test("an old export encrypted with RC2/3DES gets re-export advice, not a password error")
    func legacyEncryption() async throws {
        try await Self.withIdentity { identity, _ in
            let file = identity.directory.appendingPathComponent("legacy.p12")
            try await BlockingWork.run {
                try runTool(
                    "openssl",
                    [
                        "pkcs12", "-export", "-legacy", "-in", identity.certificate.path, "-inkey", identity.key.path,
                        "-out", file.path, "-passout", "pass:\(Self.password)",
                    ])
            }
            let error = try Self.loadError(file)
            #expect(error.kind == .unsupportedEncryption, "\(error)")
            #expect(error.description.contains("openssl pkcs12 -legacy"))
            #expect(
                try Self.loadError(file, password: "wrong").kind == .wrongPassword,
                "the password is still checked first")
        }
    }

    @Test("an expired certificate, or one not yet valid, is refused at loading with its dates")
    func validityPeriod() async throws {
        try await Self.withIdentity { _, file in
            let expired = try Self.loadError(file, now: Date().addingTimeInterval(3 * 86400))
            #expect(expired.kind == .certificateExpired)
            #expect(expired.description.contains("expired at"))
            let early = try Self.loadError(file, now: Date().addingTimeInterval(-86400))
            #expect(early.kind == .certificateExpired)
            #expect(early.description.contains("not valid before"))
        }
    }
}
