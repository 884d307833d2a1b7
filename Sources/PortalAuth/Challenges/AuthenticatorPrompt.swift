import Foundation

/// How an `Authenticator` asks a person for what a challenge needs: the seam between the library, which never
/// prints, and a user interface (the command-line tool's terminal prompt, a test's scripted answers).
///
/// Every method may throw `CancellationError` when the person cancels (Ctrl-C); the challenge is then cancelled.
public protocol AuthenticatorPrompt: Sendable {
    /// Whether a person can be asked now (a terminal is attached). When false the authenticator never calls the
    /// other methods and continues without a credential.
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
    func clientCertificate(for space: ProtectionSpace, previousFailure: String?) async throws -> ClientCertificateAnswer?
}
