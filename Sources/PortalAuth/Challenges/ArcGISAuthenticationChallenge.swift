public import Foundation
import PortalAuthCore
import PortalAuthTransport

/// An ArcGIS resource asked for a credential: the server answered a request with ArcGIS error 499 (token
/// required) or 498 (invalid token), or an Identity-Aware Proxy in front of the host asked for a sign-in.
///
/// Its `kind` has the ArcGIS Maps SDK's three cases — `.iap`, `.oAuthOrToken` and `.token` — so a handler written
/// for the SDK (the toolkit's `Authenticator` switches over all three) compiles and behaves the same.
///
/// The manager gives it to its `ArcGISAuthenticationChallengeHandler`, which answers with a `Disposition`:
///
/// ```swift
/// func handleArcGISAuthenticationChallenge(
///     _ challenge: ArcGISAuthenticationChallenge
/// ) async throws -> ArcGISAuthenticationChallenge.Disposition {
///     switch challenge.kind {
///     case .iap:
///         guard let configuration = iapConfigurations.first(where: { $0.canBeUsed(for: challenge.requestURL) }) else {
///             return .continueWithoutCredential
///         }
///         return .continueWithCredential(try await IAPCredential.credential(for: configuration))
///     case .oAuthOrToken, .token:
///         if let configuration = oAuthUserConfigurations.first(where: { $0.canBeUsed(for: challenge.requestURL) }) {
///             return .continueWithCredential(try await OAuthUserCredential.credential(for: configuration))
///         }
///         return .continueWithCredential(
///             try await TokenCredential.credential(for: challenge, username: "username", password: "password"))
///     }
/// }
/// ```
public struct ArcGISAuthenticationChallenge: Sendable, CustomStringConvertible {
    /// What the server asked for.
    public enum Kind: Sendable, Hashable {
        /// A sign-in to the identity provider of an Identity-Aware Proxy: the proxy answered 401, redirected to an
        /// authorization request or to its sign-in page, or sent a page that posts itself to the identity provider
        /// (see `AuthenticationManager.data(for:)`). Answer with an `IAPCredential`.
        case iap
        /// A resource of a portal, or of a server federated with one, asked for a token (ArcGIS error 499 or 498):
        /// answer with an `OAuthUserCredential` (or `OAuthApplicationCredential`), or without OAuth with a
        /// `TokenCredential` or `PregeneratedTokenCredential`.
        case oAuthOrToken
        /// A resource of a stand-alone ArcGIS Server (its `rest/info` names no owning portal) asked for a token:
        /// ArcGIS token authentication without OAuth, answered with a username and password `TokenCredential` (or a
        /// `PregeneratedTokenCredential`).
        case token
    }

    /// How the request that raised the challenge goes on.
    public enum Disposition: Sendable {
        /// Continue with this credential: it is added to the ArcGIS credential store and the request is sent again,
        /// once.
        case continueWithCredential(ArcGISCredential)
        /// The request fails with the challenge's `error`.
        case continueWithoutCredential
        /// The request fails with `ArcGISChallengeCancellationError`.
        case cancel
    }

    /// The URL of the request that was challenged.
    public let requestURL: URL
    /// What the server asked for.
    public let kind: Kind
    /// The error the request fails with unless a credential is given.
    public let error: AuthenticationChallengeError
    /// The HTTP client of the manager that raised the challenge (so a `TokenCredential` made for the challenge
    /// reaches the server the same way).
    let httpClient: any TransportClient

    init(requestURL: URL, kind: Kind, error: AuthenticationChallengeError, httpClient: any TransportClient) {
        self.requestURL = requestURL
        self.kind = kind
        self.error = error
        self.httpClient = httpClient
    }

    public var description: String {
        "ArcGISAuthenticationChallenge(\(kind) for \(RedactedURL(requestURL)))"
    }
}

/// Answers ArcGIS authentication challenges (OAuth, ArcGIS token, Identity-Aware Proxy) for an
/// `AuthenticationManager`: set it as `arcGISAuthenticationChallengeHandler`, or use `handleChallenges(using:)`.
///
/// Challenges are raised one at a time: a handler is never asked twice at once by the same manager, and a request
/// the handler itself sends through that manager's `data(for:)` must not be challenged (it would wait for the
/// handler); send such requests with an `TransportClient` directly, as the credentials' own factories do.
///
/// Its one requirement is the ArcGIS Maps SDK's, so a `@MainActor final class` (as the toolkit's `Authenticator`)
/// conforms. The manager learns which hosts sit behind an Identity-Aware Proxy from the IAP credentials in its
/// store and from `AuthenticationManager.iapConfigurations`, not from the handler (see `data(for:)` for the
/// sign-in requests it recognises from any proxy).
public protocol ArcGISAuthenticationChallengeHandler: Sendable {
    /// Decides how the challenged request goes on; a thrown error fails the request with that error.
    func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition
}

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

extension TokenCredential {
    /// Generates a token for `username` at the token service of the challenged resource (its portal, or the
    /// server that `{root}/rest/info` names), through the HTTP client of the manager that raised the challenge.
    ///
    /// - Throws: as `credential(for:username:password:tokenExpirationMinutes:referer:httpClient:)`;
    ///   a token-service error (credentialsRefused; a `CategorizedError`) for a wrong username or password.
    public static func credential(
        for challenge: ArcGISAuthenticationChallenge, username: String, password: String,
        tokenExpirationMinutes: Int? = nil
    ) async throws -> TokenCredential {
        try await credential(
            for: challenge.requestURL, username: username, password: password,
            tokenExpirationMinutes: tokenExpirationMinutes,
            httpClient: challenge.httpClient)
    }
}
