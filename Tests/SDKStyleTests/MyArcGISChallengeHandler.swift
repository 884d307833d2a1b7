import Foundation
import PortalAuth

/// An app's own ArcGIS challenge handler, as the SDK's "Handle authentication challenges" page writes it: an OAuth
/// sign-in for a portal it has a configuration for, else a `TokenCredential` from a username and password.
final class MyArcGISChallengeHandler: ArcGISAuthenticationChallengeHandler {
    /// The OAuth user configurations for this challenge handler.
    let oAuthUserConfigurations: [OAuthUserConfiguration]
    /// What the "prompt" of this app answers: a username and password, or nil to cancel.
    let login: (username: String, password: String)?

    init(oAuthUserConfigurations: [OAuthUserConfiguration] = [], login: (username: String, password: String)?) {
        self.oAuthUserConfigurations = oAuthUserConfigurations
        self.login = login
    }

    func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition {
        switch challenge.kind {
        case .iap:
            // This app signs in to no Identity-Aware Proxy.
            return .continueWithoutCredential
        case .oAuthOrToken:
            // If an OAuth user configuration is available for the challenge then create an `OAuthUserCredential`.
            guard let configuration = oAuthUserConfigurations.first(where: { $0.canBeUsed(for: challenge.requestURL) })
            else {
                fallthrough
            }
            return .continueWithCredential(
                try await OAuthUserCredential.credential(for: configuration)
            )
        case .token:
            // If not, prompt the user for a username and password to create a `TokenCredential`.
            guard let login else { return .cancel }
            return .continueWithCredential(
                try await TokenCredential.credential(for: challenge, username: login.username, password: login.password)
            )
        }
    }
}
