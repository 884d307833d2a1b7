public import Foundation
import PortalAuthTransport

/// A credential for the network layer rather than for ArcGIS tokens, as in the ArcGIS Maps SDK: an HTTP password
/// (Basic, Digest, NTLM through libcurl), a TLS client certificate (PKI), or the decision to trust a server whose
/// certificate does not verify.
///
/// ```swift
/// let password = NetworkCredential.password(username: "alice", password: secret)
/// let certificate = try NetworkCredential.certificate(at: URL(fileURLWithPath: "alice.p12"), password: secret)
/// switch credential {
/// case .password(let password): print(password.username)
/// case .certificate(let certificate): print(certificate.identityName)
/// case .serverTrust: print("trusted")
/// }
/// ```
///
/// A network credential is kept for one protection space (host and port) in a `NetworkCredentialStore`, which
/// turns it into the `TransportCredentials` of the requests to that space. Descriptions never show passwords.
public enum NetworkCredential: Sendable, CustomStringConvertible {
    /// A username and password for HTTP Basic, Digest or NTLM authentication.
    case password(PasswordCredential)
    /// A client certificate with its private key (PKCS#12).
    case certificate(CertificateCredential)
    /// Trust in the certificate of the server that raised a server-trust challenge, for that server's host and
    /// port only; the store keeps it with the certificate seen on the server (`NetworkCredentialStore.trust(_:for:)`).
    case serverTrust

    /// The kind of a credential, without its content.
    public enum Kind: Sendable, Hashable {
        /// A username and password.
        case password
        /// A client certificate.
        case certificate
        /// Trust in a server's certificate.
        case serverTrust
    }

    // MARK: - Making credentials

    /// A username and password for HTTP Basic or Digest authentication (libcurl answers the scheme the server
    /// asks for; Basic only over https or to loopback hosts).
    public static func password(username: String, password: String) -> NetworkCredential {
        .password(PasswordCredential(username: username, password: password))
    }

    /// A client certificate with its private key from a PKCS#12 file (`.p12` or `.pfx`), opened now to check it.
    ///
    /// - Throws: `CertificateImportError`, naming the file: `.invalidData` (another format, a damaged file, no
    ///   certificate or key, or not a pair), `.invalidPassword`; and, on Linux, `.fileUnreadable`,
    ///   `.unsupportedEncryption` (old RC2/3DES exports) and `.certificateExpired` (the validity period has ended or
    ///   not begun). Its `kind` tells the finer reason.
    public static func certificate(at url: URL, password: String) throws -> NetworkCredential {
        try certificate(at: url, password: password, now: Date())
    }

    /// `certificate(at:password:)` at a given time, for tests.
    static func certificate(at url: URL, password: String, now: Date) throws -> NetworkCredential {
        .certificate(try CertificateCredential(file: url, password: password, now: now))
    }

    // MARK: - Reading

    /// The kind.
    public var kind: Kind {
        switch self {
        case .password: return .password
        case .certificate: return .certificate
        case .serverTrust: return .serverTrust
        }
    }

    /// The username of a password credential.
    public var username: String? {
        if case .password(let password) = self { return password.username }
        return nil
    }

    /// The file of a certificate credential.
    public var certificateFile: URL? {
        if case .certificate(let certificate) = self { return certificate.file }
        return nil
    }

    /// The client certificate of a certificate credential.
    public var certificate: CertificateInfo? {
        if case .certificate(let certificate) = self { return certificate.info }
        return nil
    }

    /// What the transport presents for a request with this credential; a server trust gives nothing by itself (the
    /// store holds the trusted certificate).
    public var transportCredentials: TransportCredentials {
        switch self {
        case .password(let password): return TransportCredentials(password: password.transport)
        case .certificate(let certificate): return TransportCredentials(clientCertificate: certificate.transport)
        case .serverTrust: return TransportCredentials()
        }
    }

    public var description: String {
        switch self {
        case .password(let password): return password.description
        case .certificate(let certificate): return certificate.description
        case .serverTrust: return "server trust"
        }
    }
}

/// A username and password for HTTP authentication (`NetworkCredential.password`), as in the ArcGIS Maps SDK.
///
/// The password is kept in memory for the transport only; `description` never shows it.
import PortalAuthTransport

public struct PasswordCredential: Sendable, CustomStringConvertible {
    /// The username.
    public let username: String
    /// What libcurl is given.
    let transport: TransportCredentials.Password

    /// A username and password for Basic or Digest authentication.
    public init(username: String, password: String) {
        self.username = username
        self.transport = TransportCredentials.Password(username: username, password: password)
    }

    public var description: String { "password for \(username)" }
}
