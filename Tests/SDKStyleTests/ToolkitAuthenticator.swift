import Foundation
import PortalAuth

/// The toolkit's `Authenticator`, written as the toolkit writes it: a `@MainActor final class` whose conformances to
/// both handler protocols are extensions, switching over the SDK's three ArcGIS challenge kinds. Its SwiftUI
/// prompts are replaced by scripted answers (`login`, `certificate`); it records the kinds it was asked about.
@MainActor
final class ToolkitAuthenticator {
    /// A value indicating whether we should prompt the user when encountering an untrusted host.
    let promptForUntrustedHosts: Bool
    /// The OAuth user configurations that this authenticator can work with.
    var oAuthUserConfigurations: [OAuthUserConfiguration] = []
    /// The IAP configurations that this authenticator can work with.
    var iapConfigurations: [IAPConfiguration] = []

    /// What the username and password view would collect; nil cancels.
    var login: (username: String, password: String)?
    /// A Boolean value indicating if an OAuth challenge is currently being handled.
    private(set) var isHandlingOAuthChallenge = false
    /// The kinds of the ArcGIS challenges handled, in order.
    private(set) var handledKinds: [ArcGISAuthenticationChallenge.Kind] = []

    init(
        promptForUntrustedHosts: Bool = false,
        oAuthUserConfigurations: [OAuthUserConfiguration] = [],
        iapConfigurations: [IAPConfiguration] = []
    ) {
        self.promptForUntrustedHosts = promptForUntrustedHosts
        self.oAuthUserConfigurations = oAuthUserConfigurations
        self.iapConfigurations = iapConfigurations
    }
}

extension ToolkitAuthenticator: ArcGISAuthenticationChallengeHandler {
    func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition {
        await Task.yield()
        handledKinds.append(challenge.kind)

        switch challenge.kind {
        case .iap:
            // Without a matching IAP configuration, the request that raised the challenge fails.
            guard let configuration = iapConfigurations.first(where: { $0.canBeUsed(for: challenge.requestURL) }) else {
                return .continueWithoutCredential
            }
            do {
                return .continueWithCredential(try await IAPCredential.credential(for: configuration))
            } catch is CancellationError {
                return .cancel
            }
        case .oAuthOrToken:
            // OAuth when a configuration matches; otherwise as a token challenge.
            guard let configuration = oAuthUserConfigurations.first(where: { $0.canBeUsed(for: challenge.requestURL) })
            else {
                fallthrough
            }
            do {
                isHandlingOAuthChallenge = true
                defer { isHandlingOAuthChallenge = false }
                return .continueWithCredential(try await OAuthUserCredential.credential(for: configuration))
            } catch is CancellationError {
                return .cancel
            }
        case .token:
            // The username and password view's answer.
            guard let login else { return .cancel }
            return .continueWithCredential(
                try await TokenCredential.credential(for: challenge, username: login.username, password: login.password)
            )
        }
    }
}

extension ToolkitAuthenticator: NetworkAuthenticationChallengeHandler {
    func handleNetworkAuthenticationChallenge(
        _ challenge: NetworkAuthenticationChallenge
    ) async -> NetworkAuthenticationChallenge.Disposition {
        // Default handling of untrusted servers unless the app asked to be prompted.
        guard promptForUntrustedHosts || challenge.kind != .serverTrust else {
            return .continueWithoutCredential
        }
        if challenge.kind == .negotiate {
            // Let the next protection space be tried.
            return .rejectProtectionSpace
        }
        guard let login else { return .cancel }
        return .continueWithCredential(.password(username: login.username, password: login.password))
    }
}

extension AuthenticationManager {
    /// The toolkit's sign-out, beside PortalAuth's own `signOut()` (this one shadows it in this module): revoke the
    /// OAuth tokens, invalidate the IAP credentials, clear the stores.
    func signOut() async {
        await revokeOAuthTokens()
        await invalidateIAPCredentials()
        await clearCredentialStores()
    }
}
