import Foundation
import PortalAuthStore
import Synchronization

/// The default challenge handler, in the role of the ArcGIS Maps SDK toolkit's `Authenticator`, for terminals
/// and other user interfaces reached through an `AuthenticatorPrompt`.
///
/// - `.iap` challenge: the browser sign-in of the first of `iapConfigurations` that can be used for the URL; with
///   none, continue without a credential.
/// - `.oAuthOrToken` challenge: the browser sign-in of the first matching `oAuthUserConfigurations`; else, as a
///   `.token` challenge, a username and password asked through the prompt, turned into a `TokenCredential`
///   (asked again, up to `maximumAttempts` times, when the server refuses them).
/// - HTTP Basic, Digest, NTLM: a username and password through the prompt. Negotiate: rejected, so the next
///   scheme the server offers is tried.
/// - Client certificate: a .p12/.pfx file and its password through the prompt (asked again when it cannot be
///   opened).
/// - Untrusted server: not trusted, unless `promptForUntrustedHosts` is set, then the prompt is asked with the
///   certificate's subject, issuer, validity and fingerprint.
///
/// What `Authenticator()` does by default, and how to change it:
///
/// - **Browser sign-ins start by themselves.** `signInSettings` is `SignInSettings()` unless given: an OAuth or IAP
///   challenge of a configured portal or proxy starts a sign-in with its automatic method (the system browser; where
///   nobody would see one, a remote path such as a device code — see `SignInSettings.signInMethod`).
///   `Authenticator(signInSettings:)` gives other settings (a time limit, an observer that shows progress or the
///   device code in the app); `signInSettings: nil` never starts a sign-in (an IAP challenge then continues without
///   a credential, an OAuth challenge is answered as a token challenge).
/// - **Questions go to the terminal.** `prompt` is `TerminalAuthenticatorPrompt()` unless given: it asks when
///   standard input and standard error are a terminal. Where there is none (an app, a service, a pipe) a token
///   challenge fails with an `AuthenticationChallengeError` that names the challenge and says that nobody could be
///   asked; password and certificate challenges continue without a credential (the request fails with the
///   challenge's error) and an untrusted server is refused. `Authenticator(prompt:)` gives the app's own prompt;
///   `prompt: nil` never asks (a token challenge continues without a credential).
///
/// So `Authenticator(prompt: nil, signInSettings: nil)` never asks anyone: it answers from the stores alone. A
/// person cancelling cancels the challenge.
///
/// ```swift
/// // An app without a terminal: its own prompt, and sign-ins that report to its window.
/// let authenticator = Authenticator(prompt: myPrompt, signInSettings: SignInSettings(observer: myObserver))
/// ```
///
/// The manager knows the hosts of its `iapConfigurations` as behind a proxy while it is the manager's ArcGIS
/// handler (`AuthenticationManager.iapConfigurations` is the way for other handlers).
///
/// As the toolkit's, with the SDK's labels:
///
/// ```swift
/// let authenticator = Authenticator(promptForUntrustedHosts: false, oAuthUserConfigurations: [configuration])
/// ArcGISEnvironment.authenticationManager.handleChallenges(using: authenticator)
/// ```
///
/// With a prompt (the Linux addition that stands in for the toolkit's SwiftUI views):
///
/// ```swift
/// let authenticator = Authenticator(prompt: myPrompt)
/// authenticator.oAuthUserConfigurations.append(OAuthUserConfiguration(portalURL: portal, clientID: "abc123"))
/// authenticator.iapConfigurations.append(try await .configuration(from: URL(filePath: "iap.json")))
/// manager.handleChallenges(using: authenticator)
/// ```
public final class Authenticator: ArcGISAuthenticationChallengeHandler, NetworkAuthenticationChallengeHandler, Sendable
{
    private struct State: Sendable {
        var oAuthUserConfigurations: [OAuthUserConfiguration] = []
        var iapConfigurations: [IAPConfiguration] = []
        var promptForUntrustedHosts: Bool
    }

    private let state: Mutex<State>
    /// Asks the person: the terminal (`TerminalAuthenticatorPrompt`) by default; nil never asks.
    public let prompt: (any AuthenticatorPrompt)?
    /// How browser sign-ins run (method, browser, time limit, observer, HTTP client): `SignInSettings()` by default,
    /// so configured OAuth and IAP challenges start a sign-in by themselves; nil never starts one.
    public let signInSettings: SignInSettings?
    /// How many times a refused password or an unusable certificate file is asked for before giving up.
    public let maximumAttempts: Int

    /// Creates an authenticator; `Authenticator(promptForUntrustedHosts:oAuthUserConfigurations:iapConfigurations:)`
    /// and `Authenticator(oAuthUserConfigurations:)` are the toolkit's forms.
    ///
    /// - Parameters:
    ///   - prompt: how to ask for passwords, certificates and trust: the terminal by default (without one, a token
    ///     challenge fails with an error naming it); nil never asks.
    ///   - signInSettings: how OAuth and IAP sign-ins run: `SignInSettings()` by default (the automatic method, the
    ///     system browser); nil never starts one.
    ///   - promptForUntrustedHosts: whether to ask before trusting a server whose certificate does not verify
    ///     (otherwise such a server is refused).
    ///   - oAuthUserConfigurations: the portals whose OAuth challenges are answered with a browser sign-in.
    ///   - iapConfigurations: the Identity-Aware Proxies whose challenges are answered with a browser sign-in.
    ///   - maximumAttempts: how many wrong passwords or unusable certificate files are asked for, at least 1.
    public init(
        prompt: (any AuthenticatorPrompt)? = TerminalAuthenticatorPrompt(),
        signInSettings: SignInSettings? = SignInSettings(),
        promptForUntrustedHosts: Bool = false, oAuthUserConfigurations: [OAuthUserConfiguration] = [],
        iapConfigurations: [IAPConfiguration] = [], maximumAttempts: Int = 3
    ) {
        self.prompt = prompt
        self.signInSettings = signInSettings
        self.maximumAttempts = max(1, maximumAttempts)
        state = Mutex(
            State(
                oAuthUserConfigurations: oAuthUserConfigurations, iapConfigurations: iapConfigurations,
                promptForUntrustedHosts: promptForUntrustedHosts))
    }

    /// The portals whose OAuth challenges are answered with a browser sign-in, first match first.
    public var oAuthUserConfigurations: [OAuthUserConfiguration] {
        get { state.withLock { $0.oAuthUserConfigurations } }
        set { state.withLock { $0.oAuthUserConfigurations = newValue } }
    }

    /// The Identity-Aware Proxies whose challenges are answered with a browser sign-in, first match first. The
    /// manager also recognises their hosts' redirects to the identity provider as challenges.
    public var iapConfigurations: [IAPConfiguration] {
        get { state.withLock { $0.iapConfigurations } }
        set { state.withLock { $0.iapConfigurations = newValue } }
    }

    /// Whether to ask before trusting a server whose certificate does not verify; off by default.
    public var promptForUntrustedHosts: Bool {
        get { state.withLock { $0.promptForUntrustedHosts } }
        set { state.withLock { $0.promptForUntrustedHosts = newValue } }
    }

    /// The prompt when a person can be asked now.
    private var activePrompt: (any AuthenticatorPrompt)? {
        guard let prompt, prompt.canPrompt else { return nil }
        return prompt
    }

    // MARK: - ArcGIS challenges

    public func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition {
        do {
            switch challenge.kind {
            case .iap:
                guard let settings = signInSettings,
                    let configuration = iapConfigurations.first(where: { $0.canBeUsed(for: challenge.requestURL) })
                else { return .continueWithoutCredential }
                return .continueWithCredential(
                    try await IAPCredential.credential(for: configuration, settings: settings))
            case .oAuthOrToken:
                if let settings = signInSettings,
                    let configuration = oAuthUserConfigurations.first(where: { $0.canBeUsed(for: challenge.requestURL) }
                    )
                {
                    return .continueWithCredential(
                        try await OAuthUserCredential.credential(for: configuration, settings: settings))
                }
                return try await tokenCredential(for: challenge)
            case .token:
                return try await tokenCredential(for: challenge)
            }
        } catch is CancellationError {
            return .cancel
        }
    }

    /// Username and password through the prompt → generateToken, asked again while the server refuses them.
    private func tokenCredential(for challenge: ArcGISAuthenticationChallenge) async throws
        -> ArcGISAuthenticationChallenge.Disposition
    {
        guard let prompt = activePrompt else {
            guard self.prompt != nil else { return .continueWithoutCredential }
            // A prompt that cannot ask now (no terminal): say so, naming the challenge, instead of a bare refusal.
            let error = challenge.error
            throw AuthenticationChallengeError(
                error.kind, url: challenge.requestURL, statusCode: error.statusCode,
                detail: error.detail + "; nobody could be asked for a username and password (no terminal): "
                    + "run where a person can answer, give the Authenticator a prompt, or add a credential to the store first"
            )
        }
        var failure: String?
        for attempt in 1...maximumAttempts {
            let request = LoginRequest(purpose: .arcGISToken, url: challenge.requestURL, previousFailure: failure)
            guard let answer = try await prompt.login(request) else { return .continueWithoutCredential }
            do {
                return .continueWithCredential(
                    try await TokenCredential.credential(
                        for: challenge, username: answer.username, password: answer.password))
            } catch let error as TokenServiceError where error.kind == .credentialsRefused && attempt < maximumAttempts
            {
                failure = error.description
            }
        }
        return .continueWithoutCredential  // not reached: the last refusal is thrown above
    }

    // MARK: - Network challenges

    public func handleNetworkAuthenticationChallenge(
        _ challenge: NetworkAuthenticationChallenge
    ) async -> NetworkAuthenticationChallenge.Disposition {
        do {
            switch challenge.kind {
            case .basic, .digest, .ntlm:
                guard let prompt = activePrompt else { return .continueWithoutCredential }
                let request = LoginRequest(
                    purpose: .http(challenge.kind), url: challenge.requestURL, realm: challenge.realm)
                guard let answer = try await prompt.login(request) else { return .continueWithoutCredential }
                return .continueWithCredential(.password(username: answer.username, password: answer.password))
            case .negotiate:
                return .rejectProtectionSpace
            case .clientCertificate:
                return try await certificateCredential(for: challenge)
            case .serverTrust:
                guard promptForUntrustedHosts, let prompt = activePrompt, let certificate = challenge.serverCertificate,
                    try await prompt.shouldTrust(certificate, for: challenge.protectionSpace)
                else { return .continueWithoutCredential }
                return .continueWithCredential(.serverTrust)
            }
        } catch {
            return .cancel
        }
    }

    /// A .p12/.pfx file and password through the prompt, asked again while it cannot be opened.
    private func certificateCredential(for challenge: NetworkAuthenticationChallenge) async throws
        -> NetworkAuthenticationChallenge.Disposition
    {
        guard let prompt = activePrompt else { return .continueWithoutCredential }
        var failure: String?
        for _ in 1...maximumAttempts {
            guard
                let answer = try await prompt.clientCertificate(
                    for: challenge.protectionSpace, previousFailure: failure)
            else {
                return .continueWithoutCredential
            }
            do {
                return .continueWithCredential(try .certificate(at: answer.file, password: answer.password))
            } catch let error as CertificateImportError {
                failure = error.description
            }
        }
        return .continueWithoutCredential
    }
}
