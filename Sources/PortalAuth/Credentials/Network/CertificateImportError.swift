public import Foundation
import PortalAuthCore

/// A PKCS#12 file that cannot be imported as a client certificate (`NetworkCredential.certificate(at:password:)`),
/// as in the ArcGIS Maps SDK: compare with `.invalidData` and `.invalidPassword`, or switch over it.
///
/// ```swift
/// catch let error as CertificateImportError {
///     switch error {
///     case .invalidData: print("The certificate file was invalid.")
///     case .invalidPassword: print("The password was invalid.")
///     default: print(error)
///     }
/// }
/// ```
///
/// Two errors are equal when they have the same SDK code (`invalidData` covers every damaged, foreign or incomplete
/// file); `kind` gives the finer reason, `file` and `detail` the particulars. The message names the file, never the
/// password.
public struct CertificateImportError: CategorizedError, CustomStringConvertible, Hashable {
    /// The file is not PKCS#12, is damaged, or lacks a certificate and its key.
    public static let invalidData = CertificateImportError(.notPKCS12, file: nil, detail: "")
    /// The password does not open the file.
    public static let invalidPassword = CertificateImportError(.wrongPassword, file: nil, detail: "")
    /// Linux addition: the file is missing or unreadable.
    public static let fileUnreadable = CertificateImportError(.fileUnreadable, file: nil, detail: "")
    /// Linux addition: the file uses encryption OpenSSL 3 does not load by default (RC2, 3DES of old exports).
    public static let unsupportedEncryption = CertificateImportError(.unsupportedEncryption, file: nil, detail: "")
    /// Linux addition: the certificate's validity period has ended or not begun.
    public static let certificateExpired = CertificateImportError(.certificateExpired, file: nil, detail: "")

    /// The finer reason (`notPKCS12`, `noIdentity`, `wrongPassword`, …).
    package let kind: NetworkCredentialError.Kind
    /// The certificate file, when known.
    public let file: URL?
    /// What was wrong, with OpenSSL's or the system's own text where there is one.
    public let detail: String

    init(_ kind: NetworkCredentialError.Kind, file: URL?, detail: String) {
        self.kind = kind
        self.file = file
        self.detail = detail
    }

    /// The credential layer's account of a PKCS#12 file that does not open, naming the file.
    init(_ error: PKCS12Error, file: URL) {
        let kind: NetworkCredentialError.Kind
        switch error.kind {
        case .notPKCS12: kind = .notPKCS12
        case .wrongPassword: kind = .wrongPassword
        case .unsupportedEncryption: kind = .unsupportedEncryption
        case .noIdentity: kind = .noIdentity
        case .libraryMissing: kind = .fileUnreadable
        }
        self.init(kind, file: file, detail: error.detail)
    }

    /// The SDK's code: `invalidData` for every file that is not a usable PKCS#12 identity.
    private var code: NetworkCredentialError.Kind {
        switch kind {
        case .notPKCS12, .noIdentity, .certificateUnreadable: return .notPKCS12
        default: return kind
        }
    }

    public static func == (lhs: CertificateImportError, rhs: CertificateImportError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var category: ErrorCategory { NetworkCredentialError(kind, file: file, detail: detail).category }

    public var description: String { NetworkCredentialError(kind, file: file, detail: detail).description }
}
