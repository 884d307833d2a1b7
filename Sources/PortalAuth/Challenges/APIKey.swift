import Foundation

/// An API key access token (ArcGIS Location Platform or ArcGIS Online), as `ArcGISEnvironment.apiKey` takes it.
///
/// `description` never shows the key.
public struct APIKey: Sendable, Hashable, CustomStringConvertible {
    /// The key itself.
    public let rawValue: String

    /// Wraps a key; nil for an empty or blank string.
    public init?(_ rawValue: String) {
        guard !rawValue.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        self.rawValue = rawValue
    }

    public var description: String { "APIKey(<redacted>)" }
}
