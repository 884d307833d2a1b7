public import Foundation
import PortalAuthStore
import PortalAuthTransport

extension ArcGISCredentialStore {
    /// Every OAuth user credential for a portal (every client ID when `clientID` is nil), in store order.
    public func oauthUserCredentials(portalURL: URL, clientID: String? = nil) -> [OAuthUserCredential] {
        let wanted = URLNormalization.comparable(portalURL)
        return credentials.compactMap(\.kind.oAuthUser).filter {
            URLNormalization.comparable($0.configuration.portalURL) == wanted && (clientID == nil || $0.configuration.clientID == clientID)
        }
    }

    /// Every IAP credential signed in with the configuration file at `path` (symbolic links resolved), whatever
    /// its client ID: found also when the file itself is gone or no longer loads.
    public func iapCredentials(configurationFile path: String) -> [IAPCredential] {
        let wanted = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return credentials.compactMap(\.kind.iap).filter { $0.keeper.current.configurationFile == wanted }
    }

    /// Every IAP credential signed in to the identity provider and client of `configuration` (any user, any copy
    /// of its file).
    public func iapCredentials(for configuration: IAPConfiguration) -> [IAPCredential] {
        credentials.compactMap(\.kind.iap).filter { $0.isSignIn(to: configuration) }
    }
}
