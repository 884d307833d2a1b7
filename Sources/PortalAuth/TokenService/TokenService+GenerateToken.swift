import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

extension TokenService {
    /// The portal's default token lifetime when neither the request nor the answer states one.
    static let defaultExpirationMinutes = 60

    /// Asks the service for a token: `POST generateToken` with `username`, `password`, `expiration`,
    /// `client=referer`, `referer`, `f=json` → `{token, expires (epoch ms), ssl}`.
    ///
    /// - Throws: `TokenServiceError.credentialsRefused` for an ArcGIS error envelope (`400 Unable to generate
    ///   token.`), `TokenEndpointError` for failures and answers without a token, `TransportError`.
    func generateToken(
        username: String, password: String, expirationMinutes: Int?, referer: String,
        httpClient: any TransportClient, now: Date = Date()
    ) async throws -> TokenInfo {
        var fields = [("username", username), ("password", password)]
        if let expirationMinutes { fields.append(("expiration", String(expirationMinutes))) }
        fields += [("client", "referer"), ("referer", referer), ("f", "json")]
        let response = try await httpClient.send(.form(generateTokenURL, fields: fields))
        return try Self.tokenInfo(
            from: response, endpoint: generateTokenURL, principal: "the username and password of \(username)",
            secret: password, defaultLifetime: .seconds(60 * (expirationMinutes ?? Self.defaultExpirationMinutes)),
            now: now)
    }

    /// Reads a `generateToken` answer.
    ///
    /// - Parameters:
    ///   - principal: who is refused in the message (`the username and password of alice`).
    ///   - secret: removed from any text of the server that is repeated.
    ///   - defaultLifetime: used when the answer has no `expires`.
    static func tokenInfo(
        from response: TransportResponse, endpoint: URL, principal: String, secret: String, defaultLifetime: Duration,
        now: Date
    ) throws -> TokenInfo {
        let status = response.statusCode
        let json = try? JSONValue.parse(response.body)
        if let json, let envelope = ArcGISErrorEnvelope(json: json) {
            if status >= 500 || (envelope.code ?? 0) >= 500 {
                throw TokenEndpointError(
                    .serverFailure, endpoint: endpoint, statusCode: status,
                    arcGISCode: envelope.code, arcGISMessage: envelope.message)
            }
            let said = ([envelope.message] + envelope.details.map(Optional.some)).compactMap { $0 }
                .map { secret.count >= 4 ? $0.replacingOccurrences(of: secret, with: "<redacted>") : $0 }
            throw TokenServiceError(
                .credentialsRefused, url: RedactedURL(endpoint), principal: principal,
                detail: (envelope.code.map { "ArcGIS error \($0) " } ?? "") + said.joined(separator: " "))
        }
        guard response.isSuccess else {
            throw TokenEndpointError(
                status >= 500 ? .serverFailure : .unexpectedStatus, endpoint: endpoint, statusCode: status)
        }
        guard let object = json?.objectValue else {
            throw TokenEndpointError(
                .invalidResponse, endpoint: endpoint, statusCode: status, problem: "not a JSON object")
        }
        guard let token = object["token"]?.stringValue, !token.isEmpty else {
            throw TokenEndpointError(.invalidResponse, endpoint: endpoint, statusCode: status, problem: "no token")
        }
        if let problem = TokenCharacters.problem(inToken: token) {
            throw TokenEndpointError(
                .invalidResponse, endpoint: endpoint, statusCode: status,
                problem: "the token cannot be used: \(problem); nothing was stored")
        }
        let expires: Date
        if let value = object["expires"], value != .null {
            guard let milliseconds = value.doubleValue ?? value.stringValue.flatMap(Double.init), milliseconds.isFinite,
                milliseconds > 0
            else {
                throw TokenEndpointError(
                    .invalidResponse, endpoint: endpoint, statusCode: status,
                    problem: "expires is not a time in milliseconds")
            }
            expires = Date(timeIntervalSince1970: milliseconds / 1000)
        } else {
            expires = now.addingTimeInterval(defaultLifetime.timeInterval)
        }
        let ssl = object["ssl"]?.boolValue ?? (object["ssl"]?.stringValue?.lowercased() == "true")
        return TokenInfo(accessToken: token, expirationDate: expires, isSSLRequired: ssl)!
    }
}
