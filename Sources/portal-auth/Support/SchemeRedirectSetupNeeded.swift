import PortalAuth

/// A custom-scheme sign-in on a desktop where portal-auth does not handle the scheme yet (exit 77).
struct SchemeRedirectSetupNeeded: CategorizedError, CustomStringConvertible {
    let scheme: String
    let command: String

    var description: String {
        "portal-auth is not registered as the handler of "
            + MessagePart.or(MessagePart.given("", scheme, ": links"), "the redirect URL's scheme")
            + ", which this sign-in's redirect URL needs"
            + MessagePart.or(
                MessagePart.given(". Run once: ", command),
                ". Register it with: portal-auth register-scheme --scheme SCHEME")
    }

    var category: ErrorCategory { .refused }
}
