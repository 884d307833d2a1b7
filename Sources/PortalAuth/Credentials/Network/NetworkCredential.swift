public import Foundation

/// A credential for the network layer rather than for ArcGIS tokens: an HTTP password (Basic, Digest), a TLS
/// client certificate (PKI), or the decision to trust a server whose certificate is self-signed.
///
/// ```swift
/// let password = NetworkCredential.password(username: "alice", password: secret)
/// let certificate = try NetworkCredential.certificate(at: URL(fileURLWithPath: "alice.p12"), password: secret)
/// let trust = NetworkCredential.serverTrust
/// ```
///
/// A network credential is kept for one protection space (host and port) in a `NetworkCredentialStore`, which
/// turns it into the `TransportCredentials` of the requests to that space. Descriptions never show passwords.
public struct NetworkCredential: Sendable, CustomStringConvertible {
    /// The kind of a credential.
    public enum Kind: Sendable, Hashable {
        /// A username and password for HTTP Basic or Digest authentication.
        case password
        /// A client certificate with its private key (PKCS#12).
        case certificate
        /// Trust in a server's certificate that the system does not trust.
        case serverTrust
    }

    private enum Storage: Sendable {
        case password(TransportCredentials.Password)
        case certificate(TransportCredentials.ClientCertificate, file: URL, info: CertificateInfo)
        case serverTrust(CertificateInfo?)
    }

    private let storage: Storage

    private init(_ storage: Storage) {
        self.storage = storage
    }

    // MARK: - Making credentials

    /// A username and password for HTTP Basic or Digest authentication (libcurl answers the scheme the server
    /// asks for; Basic only over https or to loopback hosts).
    public static func password(username: String, password: String) -> NetworkCredential {
        NetworkCredential(.password(.init(username: username, password: password)))
    }

    /// A client certificate with its private key from a PKCS#12 file (`.p12` or `.pfx`), opened now to check it.
    ///
    /// - Throws: `NetworkCredentialError`, naming the file: `fileUnreadable`, `notPKCS12` (another format or a
    ///   damaged file), `wrongPassword`, `unsupportedEncryption` (old RC2/3DES exports), `noIdentity` (no
    ///   certificate or key, or not a pair), `certificateExpired` (the validity period has ended or not begun).
    public static func certificate(at url: URL, password: String) throws -> NetworkCredential {
        try certificate(at: url, password: password, now: Date())
    }

    /// `certificate(at:password:)` at a given time, for tests.
    static func certificate(at url: URL, password: String, now: Date) throws -> NetworkCredential {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            let reason = !exists ? "no such file" : isDirectory.boolValue ? "it is a directory"
                : !FileManager.default.isReadableFile(atPath: url.path) ? "permission denied" : error.localizedDescription
            throw NetworkCredentialError(.fileUnreadable, file: url, detail: reason)
        }
        let info = try CertificateInfo(PKCS12Identity.open(data, password: password, file: url))
        if let notAfter = info.notAfter, notAfter < now {
            throw NetworkCredentialError(.certificateExpired, file: url, detail: "(\(info.subject)) expired at \(notAfter.ISO8601Format())")
        }
        if let notBefore = info.notBefore, notBefore > now {
            throw NetworkCredentialError(.certificateExpired, file: url, detail: "(\(info.subject)) is not valid before \(notBefore.ISO8601Format())")
        }
        return NetworkCredential(.certificate(.init(pkcs12: data, password: password), file: url, info: info))
    }

    /// Trust in the certificate of the server that raised a server-trust challenge, for that server's host
    /// and port only. The store binds it to the certificate seen on the server (`bound(to:)`).
    public static var serverTrust: NetworkCredential { NetworkCredential(.serverTrust(nil)) }

    /// This server trust bound to `certificate`, the certificate the server presented; other kinds unchanged.
    ///
    /// Later requests to the protection space trust this one certificate as if it were a certificate authority
    /// (libcurl's `CURLOPT_CAINFO_BLOB`), with chain and host-name verification still on: a server there that
    /// presents another self-signed certificate is refused again, and no other host is affected.
    public func bound(to certificate: CertificateInfo) -> NetworkCredential {
        guard case .serverTrust = storage else { return self }
        return NetworkCredential(.serverTrust(certificate))
    }

    // MARK: - Reading

    /// The kind.
    public var kind: Kind {
        switch storage {
        case .password: return .password
        case .certificate: return .certificate
        case .serverTrust: return .serverTrust
        }
    }

    /// The username of a password credential.
    public var username: String? {
        if case .password(let password) = storage { return password.username }
        return nil
    }

    /// The file of a certificate credential.
    public var certificateFile: URL? {
        if case .certificate(_, let file, _) = storage { return file }
        return nil
    }

    /// The client certificate of a certificate credential, or the trusted server certificate of a bound server trust.
    public var certificate: CertificateInfo? {
        switch storage {
        case .password: return nil
        case .certificate(_, _, let info): return info
        case .serverTrust(let info): return info
        }
    }

    /// What the transport presents or accepts for a request with this credential; a server trust not bound to
    /// a certificate gives nothing.
    public var transportCredentials: TransportCredentials {
        switch storage {
        case .password(let password): return TransportCredentials(password: password)
        case .certificate(let certificate, _, _): return TransportCredentials(clientCertificate: certificate)
        case .serverTrust(let info): return TransportCredentials(trustedServerCertificates: info.map { Data($0.pem.utf8) })
        }
    }

    public var description: String {
        switch storage {
        case .password(let password): return "password for \(password.username)"
        case .certificate(_, let file, let info): return "client certificate \(info.subject) from \(file.path)"
        case .serverTrust(let info): return "server trust" + (info.map { " in \($0.subject) (SHA-256 \($0.sha256Fingerprint))" } ?? "")
        }
    }
}
