package import Foundation
import PortalAuthCore
package import PortalAuthTransport

/// The tokens a token endpoint returned: the standard OAuth fields (RFC 6749 §5.1, OpenID Connect's `id_token`)
/// and ArcGIS's (`username`, `ssl`, `refresh_token_expires_in`).
///
/// The `description` shows which tokens are present and their lifetimes, never the tokens.
package struct TokenResponse: Sendable, Equatable, CustomStringConvertible {
    /// The access token.
    package var accessToken: String
    /// The token type; `Bearer` when the response has none (ArcGIS sends none).
    package var tokenType: String
    /// The access token's lifetime from the response time (`expires_in`).
    package var expiresIn: Duration?
    /// The refresh token, when one was issued (it rotates with some providers: keep the newest).
    package var refreshToken: String?
    /// The refresh token's lifetime (ArcGIS `refresh_token_expires_in`).
    package var refreshTokenExpiresIn: Duration?
    /// The OpenID Connect ID token (a JWT), unverified.
    package var idToken: String?
    /// The granted scopes (`scope`, space-separated or an array); `nil` when not stated.
    package var scopes: [String]?
    /// The ArcGIS user name.
    package var username: String?
    /// ArcGIS `ssl`: the token must only be sent over https.
    package var isSSLRequired: Bool?

    /// Creates a token response.
    package init(
        accessToken: String, tokenType: String = "Bearer", expiresIn: Duration? = nil, refreshToken: String? = nil,
        refreshTokenExpiresIn: Duration? = nil, idToken: String? = nil, scopes: [String]? = nil,
        username: String? = nil, isSSLRequired: Bool? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.refreshTokenExpiresIn = refreshTokenExpiresIn
        self.idToken = idToken
        self.scopes = scopes
        self.username = username
        self.isSSLRequired = isSSLRequired
    }

    package var description: String {
        var parts = ["\(tokenType) access token"]
        if let expiresIn { parts.append("expires in \(expiresIn)") }
        if refreshToken != nil {
            parts.append("refresh token" + (refreshTokenExpiresIn.map { " (expires in \($0))" } ?? ""))
        }
        if idToken != nil { parts.append("ID token") }
        if let username { parts.append("user \(username)") }
        return parts.joined(separator: ", ")
    }

    // MARK: - Parsing

    /// Reads a token endpoint's response, or throws the error it reports.
    ///
    /// - Success: HTTP 2xx, a JSON object (content type JSON, `text/plain` as older ArcGIS servers send, or none)
    ///   with a non-empty `access_token`. `expires_in` and `refresh_token_expires_in` may be numbers or numeric
    ///   strings.
    /// - Refusal: an OAuth error object (`error`, `error_description`, `error_uri`) with any status, the ArcGIS
    ///   envelope `{"error":{"code":…}}`, usually with HTTP 200, or HTTP 400/401 whatever the body.
    /// - Anything else: a server failure (5xx), an unexpected status, or an invalid response.
    ///
    /// - Parameter endpoint: the URL the request went to, named (without query) in errors.
    package static func parse(_ response: TransportResponse, endpoint: URL) throws(TokenEndpointError) -> TokenResponse
    {
        let status = response.statusCode
        let parsed = Result { () throws(JSONSyntaxError) in try JSONValue.parse(response.body) }

        if case .success(let json) = parsed, let refusal = refusal(in: json, status: status, endpoint: endpoint) {
            throw refusal
        }
        guard (200..<300).contains(status) else {
            // RFC 6749 §5.2 puts refusals on 400 (and 401 for client authentication); some providers (Glewlwyd
            // for a rotated-out refresh token) send them with an empty or non-JSON body: still a refusal.
            let kind: TokenEndpointError.Kind =
                status >= 500 ? .serverFailure : (status == 400 || status == 401) ? .refused : .unexpectedStatus
            var problem = bodySummary(response, parsed)
            if (300..<400).contains(status), let location = response.headers["Location"],
                let target = URL(string: location, relativeTo: response.url)?.absoluteURL
            {
                problem = "a redirect to \(RedactedURL(target)), which a token endpoint must not send"
            }
            throw TokenEndpointError(kind, endpoint: endpoint, statusCode: status, problem: problem)
        }
        func invalid(_ problem: String) -> TokenEndpointError {
            TokenEndpointError(.invalidResponse, endpoint: endpoint, statusCode: status, problem: problem)
        }
        if let type = response.mediaType, !isJSONCompatible(type) {
            throw invalid("content type \(TokenEndpointError.clean(type, limit: 60)), not JSON" + titleSuffix(response))
        }
        let json: JSONValue
        switch parsed {
        case .success(let value): json = value
        case .failure(let error): throw invalid(syntaxProblem(error))
        }
        guard let object = json.objectValue else { throw invalid("a JSON \(json.typeName), not an object") }
        return try TokenFields(object: object, invalid: invalid).response()
    }

    /// The refresh token of an answer that `parse(_:endpoint:)` refused for another of its members (a malformed
    /// `expires_in`, an access token with control characters), and its lifetime when that one is readable; nil when
    /// the answer is no 2xx JSON object, reports an error, or holds no refresh token that could be used.
    ///
    /// A provider that rotates refresh tokens has replaced the one sent by the time it answers: the new one is kept
    /// even when the rest of the answer is refused, or the next refresh sends the spent one (and a provider with
    /// reuse detection then ends the whole sign-in).
    package static func issuedRefreshToken(in response: TransportResponse) -> (token: String, lifetime: Duration?)? {
        guard (200..<300).contains(response.statusCode), let json = try? JSONValue.parse(response.body),
            let object = json.objectValue, object["error"] == nil,
            let token = object["refresh_token"]?.stringValue, !token.isEmpty,
            TokenCharacters.problem(inToken: token) == nil
        else { return nil }
        let fields = TokenFields(object: object) { problem in
            TokenEndpointError(
                .invalidResponse, endpoint: response.url, statusCode: response.statusCode, problem: problem)
        }
        return (token, try? fields.duration("refresh_token_expires_in"))
    }

    // MARK: - Errors in the body

    /// The refusal or failure a JSON body reports, if it reports one.
    private static func refusal(in json: JSONValue, status: Int, endpoint: URL) -> TokenEndpointError? {
        if let envelope = ArcGISErrorEnvelope(json: json) {
            let failing = status >= 500 || (envelope.code ?? 0) >= 500 || isFailureCode(envelope.oauthError)
            return TokenEndpointError(
                failing ? .serverFailure : .refused, endpoint: endpoint, statusCode: status,
                errorCode: envelope.oauthError, errorDescription: envelope.oauthErrorDescription,
                arcGISCode: envelope.code, arcGISMessage: envelope.message ?? envelope.details.first)
        }
        guard let code = json["error"]?.stringValue else { return nil }
        let failing = status >= 500 || isFailureCode(code)
        return TokenEndpointError(
            failing ? .serverFailure : .refused, endpoint: endpoint, statusCode: status, errorCode: code,
            errorDescription: json["error_description"]?.stringValue, errorURI: json["error_uri"]?.stringValue)
    }

    /// OAuth codes that mean the provider failed rather than refused.
    private static func isFailureCode(_ code: String?) -> Bool {
        code == "server_error" || code == "temporarily_unavailable"
    }

    // MARK: - Describing bodies without echoing them

    private static func isJSONCompatible(_ mediaType: String) -> Bool {
        mediaType == "application/json" || mediaType.hasSuffix("+json") || mediaType == "text/json"
            || mediaType == "text/plain" || mediaType == "text/javascript"
    }

    /// A short, safe summary of a body that is not a token response.
    private static func bodySummary(_ response: TransportResponse, _ parsed: Result<JSONValue, JSONSyntaxError>)
        -> String
    {
        if response.body.isEmpty { return "an empty body" }
        if case .success(let json) = parsed { return "a JSON \(json.typeName) without an error code" }
        let type = response.mediaType.map { TokenEndpointError.clean($0, limit: 60) } ?? "no content type"
        return "\(response.body.count) bytes of \(type)" + titleSuffix(response)
    }

    /// ` titled "502 Bad Gateway"` for an HTML page with a title, else empty.
    private static func titleSuffix(_ response: TransportResponse) -> String {
        let text = String(decoding: response.body.prefix(16 * 1024), as: UTF8.self)
        guard let open = text.range(of: "<title", options: .caseInsensitive),
            let start = text[open.upperBound...].firstIndex(of: ">"),
            let close = text.range(
                of: "</title>", options: .caseInsensitive, range: text.index(after: start)..<text.endIndex)
        else { return "" }
        let title = TokenEndpointError.clean(String(text[text.index(after: start)..<close.lowerBound]), limit: 80)
        return title.isEmpty ? "" : " titled \"\(title)\""
    }

    /// The position of a syntax error; jansson's own text can quote the body, which may hold a token.
    private static func syntaxProblem(_ error: JSONSyntaxError) -> String {
        error.line > 0 ? "not valid JSON (error at line \(error.line), column \(error.column))" : "not valid JSON"
    }
}

/// The members of a successful token response, read with their types checked.
private struct TokenFields {
    let object: JSONObject
    let invalid: (String) -> TokenEndpointError

    func response() throws(TokenEndpointError) -> TokenResponse {
        guard let accessToken = try token("access_token"), !accessToken.isEmpty else {
            throw invalid("no access_token")
        }
        return TokenResponse(
            accessToken: accessToken,
            tokenType: try token("token_type") ?? "Bearer",
            expiresIn: try duration("expires_in"),
            refreshToken: try token("refresh_token"),
            refreshTokenExpiresIn: try duration("refresh_token_expires_in"),
            idToken: try token("id_token"),
            scopes: try scopes(),
            username: try userName("username"),
            isSSLRequired: try bool("ssl"))
    }

    /// A token-like string, refused when it holds what a header line or a terminal must not get (CR LF, ESC, …).
    private func token(_ key: String) throws(TokenEndpointError) -> String? {
        guard let text = try string(key) else { return nil }
        if let problem = TokenCharacters.problem(inToken: text) {
            throw invalid(
                "\(key) cannot be used: \(problem); the identity provider's answer was refused and nothing was stored")
        }
        return text
    }

    /// The user name, refused when it holds control characters.
    private func userName(_ key: String) throws(TokenEndpointError) -> String? {
        guard let text = try string(key) else { return nil }
        if let problem = TokenCharacters.problem(inUserName: text) {
            throw invalid(
                "\(key) cannot be used: \(problem); the identity provider's answer was refused and nothing was stored")
        }
        return text
    }

    private func string(_ key: String) throws(TokenEndpointError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let text = value.stringValue else { throw invalid("\(key) is a \(value.typeName), not a string") }
        return text
    }

    /// Seconds as a number or a numeric string ("7200"); negative or non-finite values are invalid.
    func duration(_ key: String) throws(TokenEndpointError) -> Duration? {
        guard let value = object[key], value != .null else { return nil }
        let seconds = value.doubleValue ?? value.stringValue.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard let seconds, seconds.isFinite, seconds >= 0, seconds < 1e12 else {
            throw invalid("\(key) is not a number of seconds")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private func bool(_ key: String) throws(TokenEndpointError) -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        if let flag = value.boolValue { return flag }
        switch value.stringValue?.lowercased() {
        case "true": return true
        case "false": return false
        default: throw invalid("\(key) is not a Boolean")
        }
    }

    /// `scope` as a space-separated string (RFC 6749 §3.3) or an array of strings.
    private func scopes() throws(TokenEndpointError) -> [String]? {
        guard let value = object["scope"], value != .null else { return nil }
        if let text = value.stringValue { return text.split(separator: " ").map(String.init) }
        if let items = value.arrayValue {
            let names = items.compactMap(\.stringValue)
            if names.count == items.count { return names }
        }
        throw invalid("scope is neither a string nor an array of strings")
    }
}
