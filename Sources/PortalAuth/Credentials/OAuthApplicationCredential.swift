public import Foundation
import PortalAuthStore
import PortalAuthTransport

/// A credential for an application rather than a user: the OAuth 2.0 client credentials grant at the portal's
/// `sharing/rest/oauth2/token`, with the application's client ID and secret.
///
/// The secret stays in this object so that an expired token can be asked for again; it is never shown. A
/// persistent `ArcGISCredentialStore` keeps the credential across restarts, the secret with it (the kind needs it
/// to renew): in the desktop keyring where one is used, else in the 0600 store file, as the other tokens. Read it
/// from a file or the environment, never from a command line.
///
/// ```swift
/// let credential = try await OAuthApplicationCredential.credential(
///     for: URL(string: "https://www.arcgis.com")!, clientID: "abc123", clientSecret: secret, tokenExpirationMinutes: 120)
/// let token = try await credential.tokenInfo.accessToken
/// ```
public final class OAuthApplicationCredential: ArcGISCredential, CustomStringConvertible, @unchecked Sendable {
    /// The token lifetime a portal gives an application token when none is asked for: two hours.
    public static let defaultTokenExpirationMinutes = 120

    /// The portal.
    public var portalURL: URL { configuration.portalURL }
    /// The application's client ID.
    public var clientID: String { configuration.clientID }
    /// The token lifetime asked for, in minutes; `nil` for the portal's default.
    public let tokenExpirationMinutes: Int?
    /// The token endpoint, `{portal}/sharing/rest/oauth2/token`.
    public var tokenURL: URL { configuration.tokenURL }

    /// The portal's OAuth endpoints and URL matching (the redirect URL is not used).
    private let configuration: OAuthUserConfiguration
    let token: RegeneratingToken
    /// Kept to renew the token, and for a persistent store; never shown.
    let clientSecret: String

    private init(
        configuration: OAuthUserConfiguration, clientSecret: String, tokenExpirationMinutes: Int?,
        token: RegeneratingToken
    ) {
        self.configuration = configuration
        self.clientSecret = clientSecret
        self.tokenExpirationMinutes = tokenExpirationMinutes
        self.token = token
        super.init()
    }

    public override var kind: Kind { .oAuthApplication(self) }

    // MARK: - Creating

    /// Asks the portal for an application token and returns the credential.
    ///
    /// - Parameters:
    ///   - portalURL: the portal, e.g. `https://www.arcgis.com` or `https://gis.example.com/portal`.
    ///   - clientID: the application's client ID.
    ///   - clientSecret: the application's client secret; never repeated in errors.
    ///   - tokenExpirationMinutes: the token lifetime to ask for (`expiration`); the portal's default (2 hours)
    ///     when `nil`.
    ///   - httpClient: the HTTP client; libcurl by default.
    /// - Throws: `ConfigurationError` for an unusable portal URL or an empty client ID, a token-service error (a `CategorizedError`)
    ///   (`credentialsRefused` for a wrong client ID or secret), a token-endpoint error (a `CategorizedError`), a transport error (a `CategorizedError`),
    ///   `CancellationError`.
    public static func credential(
        for portalURL: URL, clientID: String, clientSecret: String, tokenExpirationMinutes: Int? = nil,
        httpClient: (any TransportClient)? = nil
    ) async throws -> OAuthApplicationCredential {
        try await credential(
            for: portalURL, clientID: clientID, clientSecret: clientSecret,
            tokenExpirationMinutes: tokenExpirationMinutes,
            httpClient: httpClient ?? CurlHTTPClient(), now: { Date() })
    }

    /// `credential(for:…)` with a clock, for tests.
    static func credential(
        for portalURL: URL, clientID: String, clientSecret: String, tokenExpirationMinutes: Int?,
        httpClient: any TransportClient, now: @escaping @Sendable () -> Date
    ) async throws -> OAuthApplicationCredential {
        let minutes = tokenExpirationMinutes.flatMap { $0 > 0 ? $0 : nil }
        let configuration = OAuthUserConfiguration(portalURL: portalURL, clientID: clientID)
        try configuration.validate()
        let initial = try await requestToken(
            at: configuration.tokenURL, clientID: clientID, clientSecret: clientSecret, expirationMinutes: minutes,
            httpClient: httpClient, now: now())
        return try restored(
            portalURL: portalURL, clientID: clientID, clientSecret: clientSecret, tokenExpirationMinutes: minutes,
            token: initial,
            httpClient: httpClient, now: now)
    }

    /// The credential with `token` as its current token (a new one, or one read back from a store).
    static func restored(
        portalURL: URL, clientID: String, clientSecret: String, tokenExpirationMinutes minutes: Int?,
        token initial: TokenInfo,
        httpClient: any TransportClient, now: @escaping @Sendable () -> Date
    ) throws -> OAuthApplicationCredential {
        let configuration = OAuthUserConfiguration(portalURL: portalURL, clientID: clientID)
        try configuration.validate()
        let generate: @Sendable () async throws -> TokenInfo = {
            try await requestToken(
                at: configuration.tokenURL, clientID: clientID, clientSecret: clientSecret, expirationMinutes: minutes,
                httpClient: httpClient, now: now())
        }
        return OAuthApplicationCredential(
            configuration: configuration, clientSecret: clientSecret, tokenExpirationMinutes: minutes,
            token: RegeneratingToken(initial: initial, now: now, generate: generate))
    }

    /// One client credentials request: `grant_type=client_credentials`, `client_id`, `client_secret`,
    /// `expiration`, `f=json` → `{access_token, expires_in}`.
    private static func requestToken(
        at tokenURL: URL, clientID: String, clientSecret: String, expirationMinutes: Int?,
        httpClient: any TransportClient, now: Date
    ) async throws -> TokenInfo {
        let request = TokenRequest(
            tokenURL: tokenURL, grant: .clientCredentials, clientID: clientID,
            authentication: .secretInForm(clientSecret),
            extraParameters: (expirationMinutes.map { [("expiration", String($0))] } ?? []) + [("f", "json")])
        let response = try await request.send(with: httpClient)
        let tokens: TokenResponse
        do {
            tokens = try TokenResponse.parse(response, endpoint: tokenURL)
        } catch {
            throw refusal(error, tokenURL: tokenURL, clientID: clientID, clientSecret: clientSecret)
        }
        let lifetime = tokens.expiresIn ?? .seconds(60 * (expirationMinutes ?? defaultTokenExpirationMinutes))
        return TokenInfo(
            accessToken: tokens.accessToken, expirationDate: now.addingTimeInterval(lifetime.timeInterval),
            isSSLRequired: tokens.isSSLRequired ?? false)!
    }

    /// A refusal as `TokenServiceError.credentialsRefused` (without the secret, should the portal repeat it); any
    /// other failure as it is.
    private static func refusal(_ error: TokenEndpointError, tokenURL: URL, clientID: String, clientSecret: String)
        -> any Error
    {
        guard error.kind == .refused else { return error }
        let said = [
            error.errorCode, error.errorDescription, error.arcGISCode.map { "ArcGIS error \($0)" }, error.arcGISMessage,
        ]
        .compactMap { $0 }
        .map { clientSecret.count >= 4 ? $0.replacingOccurrences(of: clientSecret, with: "<redacted>") : $0 }
        return TokenServiceError(
            .credentialsRefused, url: RedactedURL(tokenURL), principal: "the client ID \(clientID) and its secret",
            detail: said.joined(separator: " "))
    }

    // MARK: - Tokens

    /// A valid token, asked for again with the kept secret when it is about to expire.
    public var tokenInfo: TokenInfo {
        get async throws { try await token.valid() }
    }

    /// A valid token; with `forceRegeneration`, a new one even if the current one has not expired (the server
    /// answered 498 Invalid token).
    public func tokenInfo(forceRegeneration: Bool) async throws -> TokenInfo {
        try await token.valid(force: forceRegeneration)
    }

    // MARK: - ArcGISCredential

    /// Never a user name: the token is the application's.
    public override var username: String? { nil }

    public override var targetDescription: String { "the portal \(portalURL.absoluteString) (application \(clientID))" }

    /// Whether `url` is on the portal (ArcGIS Online: any https `arcgis.com` host).
    public override func canBeUsed(for url: URL) -> Bool { configuration.canBeUsed(for: url) }

    public var description: String {
        "OAuthApplicationCredential(\(RedactedURL(portalURL)), client ID \(clientID), secret: <redacted>)"
    }
}
