import PortalAuth

/// A request that only turns out to be wrong once the stored sign-in is known (`--id-token` for a portal
/// sign-in): a usage error (exit 64) found after parsing, where `ValidationError` no longer applies.
struct UsageProblem: CategorizedError, CustomStringConvertible {
    let description: String
    var category: ErrorCategory { .usage }
}
