import ArgumentParser

/// How a command prints its result: for people, or as one JSON object for scripts.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    /// Lines for people: results on stdout, problems on stderr.
    case text
    /// One JSON object on stdout, nothing on stderr.
    case json
}
