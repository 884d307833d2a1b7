import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// The credential layer's account of the Crypto layer's `PKCS12Error`: each kind becomes the SDK-style error that
/// names the file.
@Suite("Certificate import errors from PKCS#12 errors")
struct CertificateImportErrorTests {
    static let mappings: [(PKCS12Error.Kind, NetworkCredentialError.Kind)] = [
        (.notPKCS12, .notPKCS12), (.wrongPassword, .wrongPassword), (.unsupportedEncryption, .unsupportedEncryption),
        (.noIdentity, .noIdentity), (.libraryMissing, .fileUnreadable),
    ]

    @Test("each kind maps to the credential layer's kind, and the message names the file", arguments: mappings)
    func mapping(_ kind: PKCS12Error.Kind, expected: NetworkCredentialError.Kind) {
        let file = URL(fileURLWithPath: "/home/someone/client.p12")
        let error = CertificateImportError(PKCS12Error(kind, "the detail"), file: file)
        #expect(error.kind == expected)
        #expect(error.file == file)
        #expect(error.description.contains("/home/someone/client.p12"))
    }

    @Test("OpenSSL missing: the file is reported unreadable, with the loader's reason and the package to install")
    func libraryMissing() {
        let reason = "OpenSSL is needed to open it and is missing: libcrypto.so.3 could not be loaded; install libssl3"
        let error = CertificateImportError(
            PKCS12Error(.libraryMissing, reason), file: URL(fileURLWithPath: "/tmp/a.p12"))
        #expect(error == .fileUnreadable)
        #expect(error.category == .unreadableInput)
        #expect(error.description == "Cannot read the certificate file /tmp/a.p12: \(reason).")
    }
}
