import Foundation
import PortalAuthCore
import PortalAuthStore

/// An ArcGIS portal sign-in with the out-of-band redirect `urn:ietf:wg:oauth:2.0:oob`: the person opens the
/// authorization URL on any machine, signs in, and the portal's page shows a code to paste here. PKCE still binds the
/// code to this sign-in. The app's registration must list the out-of-band redirect URI.
struct OutOfBandFlow: Sendable {
    /// The out-of-band redirect URI (OAuth 2.0 for installed applications).
    static let redirectURI = "urn:ietf:wg:oauth:2.0:oob"

    /// The authorization endpoint.
    var authorizeURL: URL
    /// The token endpoint.
    var tokenURL: URL
    /// The public client.
    var clientID: String
    /// Parameters added to the authorization URL.
    var extraParameters: [(String, String)]

    /// Runs the sign-in; the pasted code is exchanged with the PKCE verifier.
    func run(settings: SignInSettings) async throws -> AuthorizationCodeFlow.Result {
        let request = try AuthorizationRequest(clientID: clientID, redirectURI: Self.redirectURI, wantsNonce: false)
        let url = request.url(endpoint: authorizeURL, extra: extraParameters)
        settings.observer.outOfBandCodeRequested(authorizationURL: url)
        let state = request.state
        let timeoutError = SignInError.timedOut(after: settings.timeout, redirect: URL(string: Self.redirectURI)!)
        let code = try await withDeadline(settings.timeout, onTimeout: { timeoutError }) {
            try await Self.readCode(settings: settings, state: state)
        }
        settings.observer.exchangingCode()
        let response = try await request.tokenRequest(code: code, tokenURL: tokenURL).send(with: settings.httpClient)
        let tokens = try TokenResponse.parse(response, endpoint: tokenURL)
        return AuthorizationCodeFlow.Result(
            tokens: tokens, request: request, redirectURI: Self.redirectURI, receivedAt: Date())
    }

    /// Reads pasted lines until one holds this sign-in's code; a line that does not is explained and the next read.
    private static func readCode(settings: SignInSettings, state: String) async throws -> String {
        for await line in settings.pastedLines() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            try Task.checkCancellation()
            switch outcome(of: line, state: state) {
            case .success(let code):
                return code
            case .failure(let error) where error.kind == .notAwaitedResponse:
                settings.observer.pastedRedirectRejected(error.description)
            case .failure(let error):
                throw error
            }
        }
        try Task.checkCancellation()
        throw SignInError.inputClosed()
    }

    /// ``code(fromPasted:state:)`` as a value.
    static func outcome(of line: String, state: String) -> Result<String, LoopbackError> {
        do {
            return .success(try code(fromPasted: line, state: state))
        } catch {
            return .failure(error)
        }
    }

    /// The code in a pasted line: the code alone, or the address of the portal's approval page (`…?code=…`), whose
    /// `state`, when present, must be this sign-in's and whose `error` ends the sign-in.
    static func code(fromPasted text: String, state: String) throws(LoopbackError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.contains("://") || trimmed.contains("?") {
            let (_, query) = CallbackEvaluator.splitTarget(
                trimmed.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
            let items = URLComponents(string: "x:?" + query)?.queryItems ?? []
            if let error = items.first(where: { $0.name == "error" })?.value {
                throw .identityProviderError(
                    code: error, description: items.first { $0.name == "error_description" }?.value, uri: nil)
            }
            if let pastedState = items.first(where: { $0.name == "state" })?.value, pastedState != state {
                throw .notAwaitedResponse("its state belongs to another sign-in (an earlier attempt?)")
            }
            guard let code = items.first(where: { $0.name == "code" })?.value, !code.isEmpty else {
                throw .notAwaitedResponse("it has no code; paste the code the portal's page shows")
            }
            return code
        }
        guard (4...4096).contains(trimmed.count),
            trimmed.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw .notAwaitedResponse(
                "it does not look like a code; paste the code the portal's page shows, without spaces")
        }
        return trimmed
    }
}
