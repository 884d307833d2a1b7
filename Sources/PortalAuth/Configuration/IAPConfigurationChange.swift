import Foundation
import PortalAuthCore
import PortalAuthTransport

/// What the configuration file a stored IAP sign-in was made with says now, beside the copy the sign-in keeps.
///
/// The file is the truth: while it names the same identity provider (authorize and token URLs) and client ID, the
/// sign-in uses the file's current configuration — a host added to `hosts_behind_proxy` gets the token at once.
/// When the provider or the client differ, the stored tokens belong to another app registration than the file's;
/// the sign-in keeps its stored copy, and what differs is said, to be fixed by signing in again with the file.
package enum IAPConfigurationChange: Sendable, Equatable {
    /// The file says what the stored copy says (or could not be read: it moved, or is being edited).
    case unchanged
    /// The same provider and client: the file's configuration, to use instead of the stored copy.
    case updated(IAPConfiguration)
    /// Another provider or client: `current` is the file's configuration, `differences` say what differs
    /// ("the client ID is now X (the sign-in's: Y)").
    case differs(current: IAPConfiguration, differences: [String])

    /// How the file at `stored.sourceFile` compares with `stored`, read now (on the caller's thread: a file of at
    /// most 1 MiB; the store is loaded off the cooperative pool).
    package static func reading(_ stored: IAPConfiguration) -> IAPConfigurationChange {
        guard let file = stored.sourceFile,
            let data = try? ConfigurationFileReader.readBlocking(file, limit: ConfigurationError.maximumFileSize),
            let current = IAPConfiguration.report(parsing: data, file: file).configuration
        else { return .unchanged }
        return compare(stored: stored, current: current)
    }

    /// How `current` (the file's configuration now) compares with `stored` (the sign-in's copy).
    package static func compare(stored: IAPConfiguration, current: IAPConfiguration) -> IAPConfigurationChange {
        var differences: [String] = []
        func differ(_ what: String, _ now: URL, _ then: URL) {
            guard URLNormalization.comparable(now) != URLNormalization.comparable(then) else { return }
            differences.append(
                "\(what) is now \(DisplayText.neutralised(now.absoluteString, limit: 300)) (the sign-in's: "
                    + "\(DisplayText.neutralised(then.absoluteString, limit: 300)))")
        }
        differ("the identity provider's authorize_url", current.authorizeURL, stored.authorizeURL)
        differ("token_url", current.tokenURL, stored.tokenURL)
        if current.clientID != stored.clientID {
            differences.append(
                "client_id is now \(DisplayText.neutralised(current.clientID, limit: 200)) (the sign-in's: "
                    + "\(DisplayText.neutralised(stored.clientID, limit: 200)))")
        }
        if !differences.isEmpty { return .differs(current: current, differences: differences) }
        return current == stored ? .unchanged : .updated(current)
    }
}
