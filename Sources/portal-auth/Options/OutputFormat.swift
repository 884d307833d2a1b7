import ArgumentParser

/// How a command prints its result: for people, or as one JSON object for scripts.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    /// Lines for people: results on stdout, problems on stderr.
    case text
    /// One JSON object on stdout, nothing on stderr.
    case json
}

/// How `portal-auth request` prints the response.
enum ResponseFormat: String, CaseIterable, ExpressibleByArgument {
    /// The body as received, nothing else.
    case body
    /// One JSON object: status, URL without query, headers (without credentials), body (as JSON when it is).
    case json
}

/// How `portal-auth token` prints the token.
enum TokenFormat: String, CaseIterable, ExpressibleByArgument {
    /// The token alone and a newline.
    case plain
    /// An HTTP header line: `X-Esri-Authorization: Bearer …` for a portal, `Authorization: Bearer …` for IAP.
    case header
    /// One JSON object: the token, its type, expiry and owner.
    case json

    /// The help of `--format` of the commands that have a portal generate a token (`generate-token`, `app-token`).
    static let generatedTokenHelp = ArgumentHelp(
        "Output format: plain (the token alone), header (X-Esri-Authorization: Bearer ...) or json.",
        valueName: "format")
}
