import PortalAuth

/// An error with a line of advice after it, of the same category.
struct Advised: CategorizedError, CustomStringConvertible {
    let error: any CategorizedError
    let advice: String
    var category: ErrorCategory { error.category }
    var description: String { "\(error)\n\(advice)" }
}
