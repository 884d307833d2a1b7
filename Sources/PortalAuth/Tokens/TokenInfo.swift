public import Foundation
import PortalAuthCore

/// An ArcGIS access token and when it expires.
///
/// `description` never shows the token itself.
public struct TokenInfo: Sendable, Hashable, CustomStringConvertible {
    /// The access token.
    public let accessToken: String
    /// When the access token expires.
    public let expirationDate: Date
    /// Whether the token may only be sent over HTTPS.
    public let isSSLRequired: Bool

    /// Creates token information; `nil` when the token is empty.
    public init?(accessToken: String, expirationDate: Date, isSSLRequired: Bool) {
        guard !accessToken.isEmpty else { return nil }
        self.accessToken = accessToken
        self.expirationDate = expirationDate
        self.isSSLRequired = isSSLRequired
    }

    /// Whether the token is still valid for at least `margin` at `now`.
    public func isValid(for margin: Duration = .zero, at now: Date = Date()) -> Bool {
        expirationDate.timeIntervalSince(now) > margin.timeInterval
    }

    public var description: String {
        "TokenInfo(accessToken: <redacted>, expirationDate: \(expirationDate.ISO8601Format()), isSSLRequired: \(isSSLRequired))"
    }
}
