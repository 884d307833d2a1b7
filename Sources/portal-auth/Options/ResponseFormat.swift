import ArgumentParser

/// How `portal-auth request` prints the response.
enum ResponseFormat: String, CaseIterable, ExpressibleByArgument {
    /// The body as received, nothing else.
    case body
    /// One JSON object: status, URL without query, headers (without credentials), body (as JSON when it is).
    case json
}
