import ArgumentParser

/// How a token command prints the token it got.
enum TokenFormat: String, CaseIterable, ExpressibleByArgument {
    /// The token alone on stdout (for `$(…)`); one line about it on stderr.
    case plain
    /// One JSON object on stdout (token, expiry, ssl, referer), nothing on stderr.
    case json
}
