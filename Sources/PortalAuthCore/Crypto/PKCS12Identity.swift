internal import CPortalAuthOpenSSL
package import Foundation

/// Opens a PKCS#12 (`.p12`/`.pfx`) file with OpenSSL, as libcurl will when it presents it, so that a wrong
/// password and a wrong or damaged file are told apart before any connection.
///
/// Order of checks: `d2i_PKCS12` (is it PKCS#12 at all?), `PKCS12_verify_mac` (does the password fit? the MAC
/// is keyed by the password, so a mismatch means the password is wrong), `PKCS12_parse` (can the contents be
/// decrypted: a failure after a good MAC is an unsupported cipher or damage), then the certificate and key are
/// checked to belong together.
package enum PKCS12Identity {
    /// The certificate of the identity in `data`.
    ///
    /// - Throws: `PKCS12Error` of kind `notPKCS12`, `wrongPassword`, `unsupportedEncryption`, `noIdentity`, or
    ///   `libraryMissing` when OpenSSL cannot be opened.
    package static func open(_ data: Data, password: String) throws(PKCS12Error) -> X509Certificate {
        do { try OpenSSLLibrary.loadCrypto() } catch {
            throw PKCS12Error(.libraryMissing, "OpenSSL is needed to open it and is missing: \(error)")
        }
        defer { pa_ERR_clear_error() }
        let parsed: OpaquePointer? = data.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            return pa_d2i_PKCS12(nil, &cursor, bytes.count)
        }
        guard let pkcs12 = parsed else {
            let text = String(decoding: data.prefix(64), as: UTF8.self)
            let detail =
                text.contains("-----BEGIN")
                ? "it is PEM text; make a .p12 with openssl pkcs12 -export -in CERT.pem -inkey KEY.pem -out FILE.p12"
                : data.isEmpty ? "the file is empty" : "OpenSSL cannot decode it (\(openSSLErrorText()))"
            throw PKCS12Error(.notPKCS12, detail)
        }
        defer { pa_PKCS12_free(pkcs12) }

        if pa_PKCS12_mac_present(pkcs12) == 1 {
            // OpenSSL's own tool tries an empty password both as "" and as no password.
            let fits =
                pa_PKCS12_verify_mac(pkcs12, password, Int32(password.utf8.count)) == 1
                || (password.isEmpty && pa_PKCS12_verify_mac(pkcs12, nil, 0) == 1)
            if !fits { throw PKCS12Error(.wrongPassword, "MAC verification failed") }
        }

        var key: OpaquePointer?
        var certificate: OpaquePointer?
        guard pa_PKCS12_parse(pkcs12, password, &key, &certificate, nil) == 1 else {
            let reason = openSSLErrorText()
            if pa_PKCS12_mac_present(pkcs12) != 1 {
                throw PKCS12Error(.wrongPassword, "the file has no MAC; decryption failed: \(reason)")
            }
            let unsupported = reason.lowercased().contains("unsupported")
            throw PKCS12Error(unsupported ? .unsupportedEncryption : .notPKCS12, reason)
        }
        defer { if let key { pa_EVP_PKEY_free(key) } }
        let owned = certificate.map(X509Certificate.init(owning:))
        guard let key else {
            throw PKCS12Error(.noIdentity, "it holds no private key, only certificates")
        }
        guard let owned else {
            throw PKCS12Error(.noIdentity, "it holds no certificate for its private key")
        }
        guard owned.isPaired(with: key) else {
            throw PKCS12Error(.noIdentity, "its private key does not belong to the certificate \(owned.subject)")
        }
        return owned
    }
}

/// Why a PKCS#12 file does not open: the Crypto layer's own error, which the credential layer above turns into
/// a `CertificateImportError` naming the file.
package struct PKCS12Error: Error, Sendable, Equatable {
    /// What went wrong.
    package enum Kind: Sendable, Equatable {
        /// Not PKCS#12 at all, or damaged.
        case notPKCS12
        /// The password does not fit the file's MAC, or does not decrypt a file without MAC.
        case wrongPassword
        /// Encryption OpenSSL does not load by default.
        case unsupportedEncryption
        /// No private key, no certificate for it, or the two do not belong together.
        case noIdentity
        /// OpenSSL's libcrypto cannot be opened (the file was not looked at).
        case libraryMissing
    }

    /// What went wrong.
    package let kind: Kind
    /// OpenSSL's or the check's own text; never the password.
    package let detail: String

    package init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }
}
