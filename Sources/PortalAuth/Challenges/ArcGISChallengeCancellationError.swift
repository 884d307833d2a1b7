public import Foundation
import PortalAuthCore

/// A request failed because the challenge handler cancelled an ArcGIS or network authentication challenge
/// (answered `.cancel`), as in the ArcGIS Maps SDK: for example the person closed the sign-in.
public struct ArcGISChallengeCancellationError: CategorizedError, CustomStringConvertible, Equatable {
    /// The URL of the request whose challenge was cancelled.
    public let requestURL: URL

    /// Creates the error for the request to `requestURL`.
    public init(requestURL: URL) {
        self.requestURL = requestURL
    }

    /// A cancellation by the person: exit 130 in the tool.
    public var category: ErrorCategory { .cancelled }

    public var description: String {
        "The authentication challenge of \(RedactedURL(requestURL)) was cancelled."
    }
}
