public import Foundation

/// What an `Authenticator` asks a username and password for.
public struct LoginRequest: Sendable {
    /// What the password is for.
    public enum Purpose: Sendable, Hashable {
        /// An ArcGIS token (generateToken) for the portal or server of `url`.
        case arcGISToken
        /// HTTP authentication (`scheme`: Basic, Digest, NTLM) of the server of `url`.
        case http(NetworkAuthenticationChallenge.Kind)
    }

    /// What the password is for.
    public let purpose: Purpose
    /// The challenged URL.
    public let url: URL
    /// The realm the server named, if any.
    public let realm: String?
    /// Why the previous answer was refused ("Unable to generate token."), to show before asking again.
    public let previousFailure: String?

    /// Creates a request.
    public init(purpose: Purpose, url: URL, realm: String? = nil, previousFailure: String? = nil) {
        self.purpose = purpose
        self.url = url
        self.realm = realm
        self.previousFailure = previousFailure
    }
}
