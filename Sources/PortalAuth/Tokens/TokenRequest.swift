package import Foundation
package import PortalAuthTransport

/// One request to an OAuth 2.0 token endpoint (RFC 6749 §3.2): a grant, the client and how it authenticates, and the
/// parameters that go with them. It builds the form and posts it; every token request of the library is one (the
/// sign-in's code exchange, the refresh, the device-code poll, the application's client credentials), as AppAuth's
/// `OIDTokenRequest` with its grant types.
///
/// Holds secrets (codes, PKCE verifiers, refresh tokens, client secrets): its `description` and mirror name the grant
/// and the endpoint only, never a parameter's value.
package struct TokenRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What the client offers in exchange for tokens (`grant_type` and its parameters).
    package enum Grant: Sendable, Equatable {
        /// An authorization code with the redirect URI it was sent to and the PKCE verifier (RFC 6749 §4.1.3,
        /// RFC 7636 §4.5).
        case authorizationCode(code: String, redirectURI: String, codeVerifier: String)
        /// A refresh token (RFC 6749 §6).
        case refreshToken(String)
        /// ArcGIS: a refresh token exchanged for a new one before it expires (`exchange_refresh_token`, with the
        /// redirect URI of the sign-in).
        case exchangeRefreshToken(String, redirectURI: String)
        /// A device code the person approved (RFC 8628 §3.4).
        case deviceCode(String)
        /// The client's own credentials (RFC 6749 §4.4).
        case clientCredentials

        /// The `grant_type` sent.
        package var type: String {
            switch self {
            case .authorizationCode: return "authorization_code"
            case .refreshToken: return "refresh_token"
            case .exchangeRefreshToken: return "exchange_refresh_token"
            case .deviceCode: return "urn:ietf:params:oauth:grant-type:device_code"
            case .clientCredentials: return "client_credentials"
            }
        }
    }

    /// How the client authenticates to the token endpoint (RFC 6749 §2.3).
    package enum ClientAuthentication: Sendable, Equatable {
        /// A public client: its `client_id` only (the sign-ins, with PKCE or a device code).
        case none
        /// A confidential client's `client_secret` in the form, beside `client_id` (RFC 6749 §2.3.1; ArcGIS
        /// application credentials).
        case secretInForm(String)
    }

    /// The token endpoint.
    package var tokenURL: URL
    /// The grant.
    package var grant: Grant
    /// The client.
    package var clientID: String
    /// How the client authenticates.
    package var authentication: ClientAuthentication
    /// The `scope` sent, space-separated; nil to send none (a refresh keeps the scope granted, RFC 6749 §6).
    package var scope: String?
    /// Provider parameters sent after the standard ones (ArcGIS: `expiration`, `f`).
    package var extraParameters: [(String, String)]

    /// A request of `grant` for `clientID` at `tokenURL`.
    package init(
        tokenURL: URL, grant: Grant, clientID: String, authentication: ClientAuthentication = .none,
        scope: String? = nil,
        extraParameters: [(String, String)] = []
    ) {
        self.tokenURL = tokenURL
        self.grant = grant
        self.clientID = clientID
        self.authentication = authentication
        self.scope = scope
        self.extraParameters = extraParameters
    }

    /// The form's fields, in the order sent: `grant_type`, the code and its redirect URI or the device code,
    /// `client_id` (and `client_secret`), the refresh token (and the exchange's redirect URI), the PKCE verifier,
    /// `scope`, then the extra parameters.
    package var fields: [(String, String)] {
        var fields = [("grant_type", grant.type)]
        switch grant {
        case .authorizationCode(let code, let redirectURI, _):
            fields += [("code", code), ("redirect_uri", redirectURI)]
        case .deviceCode(let deviceCode): fields.append(("device_code", deviceCode))
        case .refreshToken, .exchangeRefreshToken, .clientCredentials: break
        }
        fields.append(("client_id", clientID))
        if case .secretInForm(let secret) = authentication { fields.append(("client_secret", secret)) }
        switch grant {
        case .refreshToken(let token): fields.append(("refresh_token", token))
        case .exchangeRefreshToken(let token, let redirectURI):
            fields += [("refresh_token", token), ("redirect_uri", redirectURI)]
        case .authorizationCode(_, _, let verifier): fields.append(("code_verifier", verifier))
        case .deviceCode, .clientCredentials: break
        }
        if let scope { fields.append(("scope", scope)) }
        return fields + extraParameters
    }

    /// The HTTP request: a form `POST` to the token endpoint that asks for JSON.
    package var transportRequest: TransportRequest {
        .form(tokenURL, fields: fields)
    }

    /// Posts the request with `client` and returns the endpoint's answer as it came (``TokenResponse/parse(_:endpoint:)``
    /// reads it).
    ///
    /// - Parameters:
    ///   - outlastingDeadline: await the answer past the client's overall deadline once sent (see
    ///     `TransportRequest.outlastsDeadline`): a refresh, whose answer holds the refresh token that replaces the one
    ///     sent.
    ///   - timeLimit: the request's own limit (`TransportRequest.timeLimit`), or `nil` for the client's.
    package func send(
        with client: any TransportClient, outlastingDeadline: Bool = false, timeLimit: Duration? = nil
    ) async throws -> TransportResponse {
        var request = transportRequest
        request.outlastsDeadline = outlastingDeadline
        request.timeLimit = timeLimit
        return try await client.send(request)
    }

    /// The grant type and the endpoint without its query; never a parameter's value.
    package var description: String { "token request (\(grant.type)) to \(RedactedURL(tokenURL))" }

    package var debugDescription: String { description }

    /// The same as ``description``: `dump` and the debugger show no secret either.
    package var customMirror: Mirror {
        Mirror(
            self, children: ["grant_type": grant.type, "token_url": RedactedURL(tokenURL).description],
            displayStyle: .struct)
    }
}
