public import Foundation

/// A server asked for a network credential: an HTTP password (401 with `WWW-Authenticate`), a TLS client
/// certificate, or the decision to trust a certificate that does not verify.
///
/// The manager gives it to its `NetworkAuthenticationChallengeHandler`, which answers with a `Disposition`:
///
/// ```swift
/// switch challenge.kind {
/// case .basic, .digest, .ntlm: return .continueWithCredential(.password(username: "username", password: "password"))
/// case .clientCertificate: return .continueWithCredential(try .certificate(at: file, password: "password"))
/// case .serverTrust: return .continueWithCredential(.serverTrust)
/// case .negotiate: return .rejectProtectionSpace
/// }
/// ```
public struct NetworkAuthenticationChallenge: Sendable, CustomStringConvertible {
    /// What the server asked for.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// HTTP Basic authentication (RFC 7617).
        case basic
        /// HTTP Digest authentication (RFC 7616).
        case digest
        /// NTLM (Integrated Windows Authentication). libcurl here answers Basic and Digest only: a password given
        /// for NTLM is tried with those.
        case ntlm
        /// Negotiate (Kerberos/SPNEGO, Integrated Windows Authentication); not supported here: reject it so the
        /// next scheme the server offers is tried.
        case negotiate
        /// A TLS client certificate (PKI).
        case clientCertificate
        /// The server's certificate does not verify (self-signed, unknown issuer).
        case serverTrust

        public var description: String {
            switch self {
            case .basic: return "Basic"
            case .digest: return "Digest"
            case .ntlm: return "NTLM"
            case .negotiate: return "Negotiate"
            case .clientCertificate: return "client certificate"
            case .serverTrust: return "server trust"
            }
        }
    }

    /// How the request that raised the challenge goes on.
    public enum Disposition: Sendable {
        /// Continue with this credential: it is added to the network credential store for the protection space
        /// (a server trust bound to the certificate the server presented) and the request is sent again, once.
        case continueWithCredential(NetworkCredential)
        /// The request fails with the challenge's `error`.
        case continueWithoutCredential
        /// The request fails with `ArcGISChallengeCancellationError`.
        case cancel
        /// Skip this scheme: the handler is asked about the next one the server offered, if any; else as
        /// `continueWithoutCredential`.
        case rejectProtectionSpace
    }

    /// What the server asked for.
    public let kind: Kind
    /// The URL of the request that was challenged.
    public let requestURL: URL
    /// The host and port the credential will be kept for.
    public let protectionSpace: ProtectionSpace
    /// The realm of an HTTP challenge, when the server named one.
    public let realm: String?
    /// For `.serverTrust`: the certificate the server presented (read without trusting it), to show before
    /// deciding. A `.serverTrust` answer trusts this certificate only.
    public let serverCertificate: CertificateInfo?
    /// The error the request fails with unless a credential is given.
    public let error: any Error

    init(
        kind: Kind, requestURL: URL, protectionSpace: ProtectionSpace, realm: String? = nil,
        serverCertificate: CertificateInfo? = nil, error: any Error
    ) {
        self.kind = kind
        self.requestURL = requestURL
        self.protectionSpace = protectionSpace
        self.realm = realm
        self.serverCertificate = serverCertificate
        self.error = error
    }

    /// The host that asked.
    public var host: String { protectionSpace.host }
    /// The port that asked.
    public var port: Int { protectionSpace.port }

    public var description: String {
        "NetworkAuthenticationChallenge(\(kind) for \(protectionSpace)\(realm.map { ", realm \($0)" } ?? ""))"
    }
}

/// Answers network authentication challenges (HTTP Basic/Digest/NTLM/Negotiate, client certificates, untrusted
/// servers) for an `AuthenticationManager`: set it as `networkAuthenticationChallengeHandler`, or use
/// `handleChallenges(using:)`.
///
/// Challenges are raised one at a time: a handler is never asked twice at once by the same manager, and a request
/// the handler itself sends through that manager's `data(for:)` must not be challenged (it would wait for the
/// handler); send such requests with an `TransportClient` directly, as the credentials' own factories do.
public protocol NetworkAuthenticationChallengeHandler: Sendable {
    /// Decides how the challenged request goes on.
    func handleNetworkAuthenticationChallenge(
        _ challenge: NetworkAuthenticationChallenge
    ) async -> NetworkAuthenticationChallenge.Disposition
}
