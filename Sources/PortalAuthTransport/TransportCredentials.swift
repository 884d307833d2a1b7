public import Foundation

/// What the transport presents to, or accepts from, the server of one request: an HTTP password
/// (Basic/Digest through libcurl), a TLS client certificate, and a self-signed server certificate to trust.
///
/// Everything here is bound to the request's host: a redirect to another host drops it. Descriptions never
/// show passwords or certificate bytes.
public struct TransportCredentials: Sendable, CustomStringConvertible {
    /// A username and password answered to an HTTP authentication challenge (`CURLOPT_HTTPAUTH`).
    public struct Password: Sendable, CustomStringConvertible {
        /// The HTTP authentication schemes libcurl may use.
        public struct Schemes: OptionSet, Sendable {
            public let rawValue: Int
            /// Creates a set of schemes from its bits.
            public init(rawValue: Int) { self.rawValue = rawValue }
            /// Basic (RFC 7617): only over https, or to loopback.
            public static let basic = Schemes(rawValue: 1 << 0)
            /// Digest (RFC 7616).
            public static let digest = Schemes(rawValue: 1 << 1)
        }

        /// The username.
        public var username: String
        /// The password; never shown.
        public var password: String
        /// The schemes allowed; libcurl picks the one the server asks for.
        public var schemes: Schemes

        /// Creates a password credential.
        public init(username: String, password: String, schemes: Schemes = [.basic, .digest]) {
            self.username = username
            self.password = password
            self.schemes = schemes
        }

        public var description: String { "password for \(username)" }
    }

    /// A TLS client certificate with its private key, as PKCS#12 (`.p12`/`.pfx`) bytes.
    public struct ClientCertificate: Sendable, CustomStringConvertible {
        /// The PKCS#12 bytes.
        public var pkcs12: Data
        /// The password that protects them; never shown.
        public var password: String

        /// Creates a client certificate from PKCS#12 bytes.
        public init(pkcs12: Data, password: String) {
            self.pkcs12 = pkcs12
            self.password = password
        }

        public var description: String { "PKCS#12 client certificate (\(pkcs12.count) bytes)" }
    }

    /// The password for HTTP authentication, if any.
    public var password: Password?
    /// The client certificate, if any.
    public var clientCertificate: ClientCertificate?
    /// PEM certificates to trust for this host instead of the CA bundle (a self-signed server the user chose to
    /// trust); verification of the chain and of the host name stays on.
    public var trustedServerCertificates: Data?

    /// Creates credentials; all are absent by default.
    public init(
        password: Password? = nil, clientCertificate: ClientCertificate? = nil, trustedServerCertificates: Data? = nil
    ) {
        self.password = password
        self.clientCertificate = clientCertificate
        self.trustedServerCertificates = trustedServerCertificates
    }

    /// Whether nothing is set.
    public var isEmpty: Bool {
        password == nil && clientCertificate == nil && trustedServerCertificates == nil
    }

    public var description: String {
        var parts: [String] = []
        if let password { parts.append(password.description) }
        if let clientCertificate { parts.append(clientCertificate.description) }
        if trustedServerCertificates != nil { parts.append("trusted server certificate") }
        return parts.isEmpty ? "no credentials" : parts.joined(separator: ", ")
    }
}
