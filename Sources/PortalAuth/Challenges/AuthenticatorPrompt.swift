public import Foundation

/// How an `Authenticator` asks a person for what a challenge needs: the seam between the library, which never
/// prints, and a user interface (the command-line tool's terminal prompt, a test's scripted answers).
///
/// Every method may throw `CancellationError` when the person cancels (Ctrl-C); the challenge is then cancelled.
public protocol AuthenticatorPrompt: Sendable {
    /// Whether a person can be asked now (for the terminal prompt: a terminal is attached). When false the
    /// authenticator never calls the other methods: a token challenge fails with an error that names it, the other
    /// challenges continue without a credential.
    var canPrompt: Bool { get }

    /// Asks for a username and password; nil when the person declines.
    func login(_ request: LoginRequest) async throws -> LoginAnswer?

    /// Asks whether to trust `certificate`, which `space` presented and which does not verify.
    func shouldTrust(_ certificate: CertificateInfo, for space: ProtectionSpace) async throws -> Bool

    /// Asks for a client certificate file (.p12/.pfx) and its password; nil when the person declines.
    ///
    /// - Parameters:
    ///   - space: the server that asks for a client certificate.
    ///   - previousFailure: why the previous answer could not be used (wrong password, not PKCS#12), to show.
    func clientCertificate(for space: ProtectionSpace, previousFailure: String?) async throws
        -> ClientCertificateAnswer?
}

/// What an `Authenticator` asks a username and password for.
public struct LoginRequest: Sendable {
    /// What the password is for.
    public enum Purpose: Sendable, Hashable {
        /// An ArcGIS token (generateToken) for the portal or server of `url`.
        case arcGISToken
        /// HTTP authentication (`scheme`: Basic, Digest, NTLM) of the server of `url`.
        case http(NetworkAuthenticationChallenge.Kind)
    }

    /// What the password is for.
    public let purpose: Purpose
    /// The challenged URL.
    public let url: URL
    /// The realm the server named, if any.
    public let realm: String?
    /// Why the previous answer was refused ("Unable to generate token."), to show before asking again.
    public let previousFailure: String?

    /// Creates a request.
    public init(purpose: Purpose, url: URL, realm: String? = nil, previousFailure: String? = nil) {
        self.purpose = purpose
        self.url = url
        self.realm = realm
        self.previousFailure = previousFailure
    }
}

/// A username and password a person gave. `description` never shows the password.
public struct LoginAnswer: Sendable, CustomStringConvertible {
    /// The username.
    public let username: String
    /// The password.
    public let password: String

    /// Creates an answer.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    public var description: String { "LoginAnswer(\(username), password: <redacted>)" }
}

/// A client certificate file and its password a person gave. `description` never shows the password.
public struct ClientCertificateAnswer: Sendable, CustomStringConvertible {
    /// The PKCS#12 file (.p12/.pfx).
    public let file: URL
    /// Its password.
    public let password: String

    /// Creates an answer.
    public init(file: URL, password: String) {
        self.file = file
        self.password = password
    }

    public var description: String { "ClientCertificateAnswer(\(file.path), password: <redacted>)" }
}
