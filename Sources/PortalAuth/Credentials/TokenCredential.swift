public import Foundation
import PortalAuthStore
import PortalAuthTransport

/// A credential for token-secured ArcGIS resources, made from a username and password with the portal's or
/// server's `generateToken` operation (ArcGIS token authentication).
///
/// The password stays in this object so that an expired token can be generated again; it is never shown. A
/// persistent `ArcGISCredentialStore` keeps the credential across restarts, the password with it (the kind needs it
/// to renew): in the desktop keyring where one is used, else in the 0600 store file, as the other tokens.
///
/// ```swift
/// let credential = try await TokenCredential.credential(
///     for: URL(string: "https://gis.example.com/portal")!, username: "alice", password: password,
///     tokenExpirationMinutes: 60)
/// let token = try await credential.tokenInfo.accessToken
/// ```
public final class TokenCredential: ArcGISCredential, CustomStringConvertible, @unchecked Sendable {
    /// The referer sent with `client=referer` unless another is given; requests carrying the token must send it.
    public static let defaultReferer = "app://portal-auth"

    /// The URL the credential was made for (a portal, a server or one of their resources).
    public let url: URL
    /// The user the token is for.
    public override var username: String? { user }
    private let user: String
    /// The referer the token is bound to.
    public override var referer: String { boundReferer }
    private let boundReferer: String
    /// The token lifetime asked for, in minutes; `nil` for the server's default (60 minutes on a portal).
    public let tokenExpirationMinutes: Int?
    /// The `generateToken` endpoint used.
    public var tokenServiceURL: URL { service.generateTokenURL }

    let service: TokenService
    let token: RegeneratingToken
    /// Kept to renew the token, and for a persistent store; never shown.
    let password: String

    private init(
        url: URL, username: String, password: String, referer: String, tokenExpirationMinutes: Int?,
        service: TokenService,
        token: RegeneratingToken
    ) {
        self.url = url
        self.user = username
        self.password = password
        self.boundReferer = referer
        self.tokenExpirationMinutes = tokenExpirationMinutes
        self.service = service
        self.token = token
        super.init()
    }

    public override var kind: Kind { .token(self) }

    // MARK: - Creating

    /// Generates a token for `username` at the token service of `url` and returns the credential.
    ///
    /// `url` may be a portal (`https://h/portal`, `https://www.arcgis.com`), a URL under its `sharing/rest`, or a
    /// server resource (`https://h/server/rest/services/…`), whose token service `{root}/rest/info` names.
    ///
    /// - Parameters:
    ///   - url: the portal, a URL under its `sharing/rest`, or a server resource.
    ///   - username: the ArcGIS user to generate the token for.
    ///   - password: the user's password, kept in the credential to generate the token again (never printed).
    ///   - tokenExpirationMinutes: the token lifetime to ask for (`expiration`); the server's default when `nil`.
    ///   - referer: the referer the token is bound to (`client=referer`).
    ///   - httpClient: the HTTP client; libcurl by default.
    /// - Throws: a token-service error (a `CategorizedError`: `credentialsRefused` for a wrong username or password — the password is never
    ///   repeated —, `invalidURL`, `discoveryFailed`, `notTokenSecured`), a token-endpoint error (a `CategorizedError`), a transport error (a `CategorizedError`),
    ///   `CancellationError`.
    public static func credential(
        for url: URL, username: String, password: String, tokenExpirationMinutes: Int? = nil,
        referer: String = TokenCredential.defaultReferer, httpClient: (any TransportClient)? = nil
    ) async throws -> TokenCredential {
        try await credential(
            for: url, username: username, password: password, tokenExpirationMinutes: tokenExpirationMinutes,
            referer: referer, httpClient: httpClient ?? CurlHTTPClient(), now: { Date() })
    }

    /// `credential(for:…)` with a clock, for tests.
    static func credential(
        for url: URL, username: String, password: String, tokenExpirationMinutes: Int?, referer: String,
        httpClient: any TransportClient, now: @escaping @Sendable () -> Date
    ) async throws -> TokenCredential {
        let minutes = tokenExpirationMinutes.flatMap { $0 > 0 ? $0 : nil }
        let service = try await TokenService.discover(for: url, httpClient: httpClient)
        let generate = generator(
            service: service, username: username, password: password, minutes: minutes, referer: referer,
            httpClient: httpClient, now: now)
        return restored(
            url: url, username: username, password: password, referer: referer, tokenExpirationMinutes: minutes,
            service: service,
            token: try await generate(), httpClient: httpClient, now: now)
    }

    /// The credential with `token` as its current token (a new one, or one read back from a store).
    static func restored(
        url: URL, username: String, password: String, referer: String, tokenExpirationMinutes minutes: Int?,
        service: TokenService,
        token initial: TokenInfo, httpClient: any TransportClient, now: @escaping @Sendable () -> Date
    ) -> TokenCredential {
        let generate = generator(
            service: service, username: username, password: password, minutes: minutes, referer: referer,
            httpClient: httpClient, now: now)
        return TokenCredential(
            url: url, username: username, password: password, referer: referer, tokenExpirationMinutes: minutes,
            service: service,
            token: RegeneratingToken(initial: initial, now: now, generate: generate))
    }

    /// What generates a new token for the user.
    private static func generator(
        service: TokenService, username: String, password: String, minutes: Int?, referer: String,
        httpClient: any TransportClient, now: @escaping @Sendable () -> Date
    ) -> @Sendable () async throws -> TokenInfo {
        {
            try await service.generateToken(
                username: username, password: password, expirationMinutes: minutes, referer: referer,
                httpClient: httpClient, now: now())
        }
    }

    // MARK: - Tokens

    /// A valid token, generated again with the kept password when it is about to expire.
    public var tokenInfo: TokenInfo {
        get async throws { try await token.valid() }
    }

    /// A valid token; with `forceRegeneration`, a new one even if the current one has not expired (the server
    /// answered 498 Invalid token).
    public func tokenInfo(forceRegeneration: Bool) async throws -> TokenInfo {
        try await token.valid(force: forceRegeneration)
    }

    // MARK: - ArcGISCredential

    public override var targetDescription: String { "the token service \(RedactedURL(service.generateTokenURL))" }

    /// Whether `url` is on the portal or server the token was generated for (its root, as `rest/info` or the
    /// portal URL gives it).
    public override func canBeUsed(for url: URL) -> Bool {
        OAuthUserConfiguration.url(url, isWithin: service.root)
    }

    public var description: String {
        "TokenCredential(\(user) at \(RedactedURL(service.root)), password: <redacted>)"
    }
}
