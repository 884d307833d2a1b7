package import Foundation
import PortalAuthCore
import PortalAuthStore

/// Picks the stored sign-in a command works on: the one place that decides, for `token` (and its fast path),
/// `refresh`, `revoke`, `request`, `exec` and `status`.
///
/// - `--portal`, `--iap`, `--url`, `--name` pick what they name (nil when nothing stored matches).
/// - Nothing said: the only stored portal or IAP sign-in; with several, the default (`portal-auth use`);
///   with several and no default, `SelectionError.ambiguous`.
package enum SignInSelection {
    /// The stored portal or IAP credential `query` names in `store`, or nil when none is stored.
    ///
    /// - Throws: `SelectionError` when the query is ambiguous, names an unknown name, names an IAP configuration file
    ///   that now names another provider or client than the sign-in stored for it or that another user could change,
    ///   or the preferences file cannot be read.
    package static func select(_ query: SignInQuery, in store: ArcGISCredentialStore, preferences: SignInPreferences)
        async throws(SelectionError) -> ArcGISCredential?
    {
        let candidates = store.credentials.filter { $0.kind.oAuthUser != nil || $0.kind.iap != nil }
        switch query {
        case .portal(let url, let clientID):
            return store.oauthUserCredential(portalURL: url, clientID: clientID)
        case .iap(let file):
            // A file another user could change is not used, not even to pick the sign-in stored for it.
            if let refusal = ConfigurationFileReader.untrusted(file) { throw .untrustedConfiguration(refusal) }
            if let found = store.iapCredentials(configurationFile: file).first {
                // The file is the truth: when it names another provider or client than the sign-in stored for it,
                // a sign-in to the file's provider and client is the one it names, and without one, a sign-in is
                // needed (what differs is said).
                guard let change = found.configurationChange else { return found }
                if let current = store.iapCredential(for: change.current) { return current }
                throw .configurationChanged(file: file.path, differences: change.differences)
            }
            // An identical copy of the file elsewhere: the same identity provider and client.
            guard let configuration = try? await IAPConfiguration.configuration(from: file) else { return nil }
            return store.iapCredential(for: configuration)
        case .url(let url):
            return candidates.first { $0.canBeUsed(for: url) }
        case .name(let name):
            guard let key = preferences.names[name] else {
                throw .unknownName(name, known: preferences.names.keys.sorted())
            }
            return candidates.first { storeKey(of: $0) == key }
        case .automatic:
            if candidates.count <= 1 { return candidates.first }
            if let key = preferences.defaultKey, let found = candidates.first(where: { storeKey(of: $0) == key }) {
                return found
            }
            throw .ambiguous(choices: candidates.map { describe($0, preferences: preferences) })
        }
    }

    /// The store key of a portal or IAP credential (what preferences point at).
    package static func storeKey(of credential: ArcGISCredential) -> String? {
        credential.kind.tokenKeeping?.storeKey
    }

    /// "the portal https://… (alice, client ID abc) [name: work]".
    package static func describe(_ credential: ArcGISCredential, preferences: SignInPreferences) -> String {
        var words = [credential.username.map { DisplayText.neutralised($0, limit: 80) }].compactMap { $0 }
        switch credential.kind {
        case .oAuthUser(let user): words.append("client ID \(user.configuration.clientID)")
        case .iap(let iap): words.append("client ID \(iap.configuration.clientID)")
        default: break
        }
        let name = storeKey(of: credential).flatMap(preferences.name(of:)).map { " [name: \($0)]" } ?? ""
        return "\(credential.targetDescription) (\(words.joined(separator: ", ")))\(name)"
    }
}

/// Which stored sign-in to use, as a command line or a caller says it.
package enum SignInQuery: Sendable, Equatable {
    /// The portal sign-in (with this client ID, when several apps are signed in to it).
    case portal(URL, clientID: String?)
    /// The IAP sign-in made with this configuration file, or with an identical copy of it elsewhere.
    case iap(file: URL)
    /// The first portal or IAP sign-in that covers this URL.
    case url(URL)
    /// The sign-in given this name (`portal-auth name`, `login --name`).
    case name(String)
    /// Nothing said: the only stored sign-in, else the default one.
    case automatic
}
