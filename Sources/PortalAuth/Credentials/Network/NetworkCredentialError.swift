package import Foundation
import PortalAuthCore

/// A network credential that cannot be made or used: a certificate file that cannot be read or opened, a server
/// trust that does not fit the host. The message names the file or host, never a password. Match on `kind`; the
/// set of kinds may grow.
package struct NetworkCredentialError: CategorizedError, CustomStringConvertible, Equatable {
    /// What went wrong, for matching: `error.kind == .wrongPassword`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String

        /// The certificate file is missing or unreadable.
        public static let fileUnreadable = Kind(name: "fileUnreadable")
        /// The file is not PKCS#12 (`.p12`/`.pfx`): another format, or damaged.
        public static let notPKCS12 = Kind(name: "notPKCS12")
        /// The password does not open the PKCS#12 file.
        public static let wrongPassword = Kind(name: "wrongPassword")
        /// The PKCS#12 file uses encryption OpenSSL does not load by default (RC2, 3DES of old exports).
        public static let unsupportedEncryption = Kind(name: "unsupportedEncryption")
        /// The PKCS#12 file lacks a certificate or its private key, or they do not belong together.
        public static let noIdentity = Kind(name: "noIdentity")
        /// The certificate's validity period has ended, or has not begun.
        public static let certificateExpired = Kind(name: "certificateExpired")
        /// Bytes that are not a certificate.
        public static let certificateUnreadable = Kind(name: "certificateUnreadable")
        /// A server trust without the certificate seen on the server, or for a certificate that does not name the host.
        public static let serverTrustUnusable = Kind(name: "serverTrustUnusable")

        public var description: String { name }
    }

    /// What went wrong.
    public let kind: Kind
    /// The certificate file, when a file is concerned.
    public let file: URL?
    /// What was wrong, with OpenSSL's or the system's own text where there is one.
    public let detail: String

    init(_ kind: Kind, file: URL? = nil, detail: String) {
        self.kind = kind
        self.file = file
        self.detail = detail
    }

    public var category: ErrorCategory {
        switch kind {
        case .fileUnreadable: return .unreadableInput
        case .wrongPassword: return .refused
        case .serverTrustUnusable: return .usage
        default: return .invalidContent
        }
    }

    public var description: String {
        // An empty path or detail leaves its words out (issue 45).
        let path = MessagePart.nonBlank(file?.path)
        let name = path ?? "the certificate file"
        let said = MessagePart.given(": ", detail)
        switch kind {
        case .fileUnreadable:
            return "Cannot read the certificate file\(MessagePart.given(" ", path))\(said)."
        case .notPKCS12:
            return "\(name) is not a PKCS#12 (.p12/.pfx) file\(said)."
        case .wrongPassword:
            return "The password does not open the certificate file\(MessagePart.given(" ", path)). Check the password "
                + "for this file."
        case .unsupportedEncryption:
            return
                "\(name) uses encryption that OpenSSL 3 does not load by default\(MessagePart.given(" (", detail, ")")). "
                + "Re-export it with current encryption: openssl pkcs12 -legacy -in OLD.p12 -nodes | openssl pkcs12 -export "
                + "-out NEW.p12"
        case .noIdentity:
            return "\(name) cannot identify you\(said)."
        case .certificateExpired:
            return "The certificate in \(name) \(MessagePart.or(detail, "is not valid now")). Get a new certificate."
        case .certificateUnreadable:
            return "Cannot read \(path ?? "the certificate")\(said)."
        default:
            return "Cannot trust the server\(said)."
        }
    }
}
