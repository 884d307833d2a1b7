import Foundation
import PortalAuth

/// The `Authenticator`'s questions on the terminal: user names and file paths echoed, passwords never, on
/// standard error (standard output stays the response's). Ctrl-C or Ctrl-D cancels the challenge.
struct TerminalAuthenticatorPrompt: AuthenticatorPrompt {
    /// Whether a person is there: standard input and standard error are a terminal.
    var canPrompt: Bool { SecretInput.canPrompt }

    func login(_ request: LoginRequest) async throws -> LoginAnswer? {
        if let failure = request.previousFailure { StandardError.line("portal-auth: \(failure)") }
        let host = request.url.host ?? request.url.absoluteString
        switch request.purpose {
        case .arcGISToken:
            StandardError.line("\(RedactedURL(request.url)) needs an ArcGIS sign-in (a token is generated for \(host)).")
        case .http(let scheme):
            StandardError.line("\(host) asks for a username and password (HTTP \(scheme)\(request.realm.map { ", realm \"\(DisplayText.neutralised($0, limit: 200))\"" } ?? "")).")
        }
        return try await cancellable {
            let username = try await SecretInput.line("Username (empty to skip): ").trimmingCharacters(in: .whitespaces)
            guard !username.isEmpty else { return nil }
            let password = try await SecretInput.password("Password for \(username): ")
            return LoginAnswer(username: username, password: password)
        }
    }

    func shouldTrust(_ certificate: CertificateInfo, for space: ProtectionSpace) async throws -> Bool {
        StandardError.line("The certificate of \(space) is not trusted:")
        StandardError.line("    subject:  \(DisplayText.neutralised(certificate.subject, limit: 300))")
        StandardError.line("    issuer:   \(certificate.isSelfSigned ? "itself (self-signed)" : DisplayText.neutralised(certificate.issuer, limit: 300))")
        if let notBefore = certificate.notBefore, let notAfter = certificate.notAfter {
            StandardError.line("    valid:    \(notBefore.ISO8601Format()) to \(notAfter.ISO8601Format())")
        }
        StandardError.line("    SHA-256:  \(certificate.sha256Fingerprint)")
        StandardError.line("Compare the fingerprint with the one the server's administrator gives you before trusting it.")
        let answer = try await cancellable {
            try await SecretInput.line("Trust this certificate for \(space) during this run? [y/N] ")
        }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    func clientCertificate(for space: ProtectionSpace, previousFailure: String?) async throws -> ClientCertificateAnswer? {
        if let previousFailure { StandardError.line("portal-auth: \(previousFailure)") }
        StandardError.line("\(space) asks for a TLS client certificate.")
        return try await cancellable {
            let path = try await SecretInput.line("Certificate file (.p12/.pfx, empty to skip): ").trimmingCharacters(in: .whitespaces)
            guard !path.isEmpty else { return nil }
            let expanded = NSString(string: path).expandingTildeInPath
            let password = try await SecretInput.prompt("Password for \(expanded): ")
            return ClientCertificateAnswer(file: URL(fileURLWithPath: expanded), password: password)
        }
    }

    /// Runs `body`, turning the prompt's cancellation (Ctrl-C, Ctrl-D) into `CancellationError`.
    private func cancellable<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as InputError where error.category == .cancelled {
            throw CancellationError()
        }
    }
}
