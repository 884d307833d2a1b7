import PortalAuth

/// A custom-scheme sign-in on a desktop where portal-auth does not handle the scheme yet (exit 77).
struct SchemeRedirectSetupNeeded: CategorizedError, CustomStringConvertible {
    let scheme: String
    let command: String

    var description: String {
        "portal-auth is not registered as the handler of \(scheme): links, which this sign-in's redirect URL needs. "
            + "Run once: \(command)"
    }

    var category: ErrorCategory { .refused }
}
