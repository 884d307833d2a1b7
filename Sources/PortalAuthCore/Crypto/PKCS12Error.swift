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
