import Foundation
import PortalAuthCore

/// The `Authenticator`'s questions on the terminal, its default prompt: user names and file paths echoed,
/// passwords never, on standard error (standard output stays the program's). Ctrl-C or Ctrl-D cancels the
/// challenge. `portal-auth request --interactive` asks with it.
///
/// It can prompt only when standard input and standard error are both a terminal; elsewhere (an app, a service, a
/// pipe) `canPrompt` is false: the `Authenticator` then fails a token challenge with an error that names it, and
/// continues without a credential on password and certificate challenges.
public struct TerminalAuthenticatorPrompt: AuthenticatorPrompt {
    /// A prompt on the process's terminal.
    public init() {}

    /// Whether a person is there: standard input and standard error are a terminal.
    public var canPrompt: Bool { TerminalInput.isAvailable }

    public func login(_ request: LoginRequest) async throws -> LoginAnswer? {
        if let failure = request.previousFailure { TerminalInput.say(DisplayText.neutralised(failure, limit: 500)) }
        let host = request.url.host ?? request.url.absoluteString
        switch request.purpose {
        case .arcGISToken:
            TerminalInput.say("\(RedactedURL(request.url)) needs an ArcGIS sign-in (a token is generated for \(host)).")
        case .http(let scheme):
            let realm = request.realm.map { ", realm \"\(DisplayText.neutralised($0, limit: 200))\"" } ?? ""
            TerminalInput.say("\(host) asks for a username and password (HTTP \(scheme)\(realm)).")
        }
        let username = try await TerminalInput.line("Username (empty to skip): ").trimmingCharacters(in: .whitespaces)
        guard !username.isEmpty else { return nil }
        let password = try await TerminalInput.password(
            "Password for \(DisplayText.neutralised(username, limit: 200)): ")
        return LoginAnswer(username: username, password: password)
    }

    public func shouldTrust(_ certificate: CertificateInfo, for space: ProtectionSpace) async throws -> Bool {
        TerminalInput.say("The certificate of \(space) is not trusted:")
        TerminalInput.say("    subject:  \(DisplayText.neutralised(certificate.subject, limit: 300))")
        TerminalInput.say(
            "    issuer:   \(certificate.isSelfSigned ? "itself (self-signed)" : DisplayText.neutralised(certificate.issuer, limit: 300))"
        )
        if let notBefore = certificate.notBefore, let notAfter = certificate.notAfter {
            TerminalInput.say("    valid:    \(notBefore.ISO8601Format()) to \(notAfter.ISO8601Format())")
        }
        TerminalInput.say("    SHA-256:  \(certificate.sha256Fingerprint)")
        TerminalInput.say(
            "Compare the fingerprint with the one the server's administrator gives you before trusting it.")
        let answer = try await TerminalInput.line("Trust this certificate for \(space) during this run? [y/N] ")
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    public func clientCertificate(for space: ProtectionSpace, previousFailure: String?) async throws
        -> ClientCertificateAnswer?
    {
        if let previousFailure { TerminalInput.say(DisplayText.neutralised(previousFailure, limit: 500)) }
        TerminalInput.say("\(space) asks for a TLS client certificate.")
        let path = try await TerminalInput.line("Certificate file (.p12/.pfx, empty to skip): ").trimmingCharacters(
            in: .whitespaces)
        guard !path.isEmpty else { return nil }
        let expanded = NSString(string: path).expandingTildeInPath
        let password = try await TerminalInput.secret("Password for \(DisplayText.neutralised(expanded, limit: 300)): ")
        return ClientCertificateAnswer(file: URL(fileURLWithPath: expanded), password: password)
    }
}
