import Foundation
import PortalAuth

/// How `status --claims` shows a token's claims (`TokenClaims`): never the token or its signature, and every text
/// claim neutralised for the terminal (the token's words are the identity provider's).
enum ClaimsText {
    /// The lines for one token: a heading, then one indented line per claim the token has; one line saying so when
    /// it is not a JWT (or, for an ID token, when none is held).
    static func lines(_ claims: TokenClaims?, of token: String, now: Date) -> [String] {
        guard let claims else {
            return token == "ID token"
                ? ["ID token claims: none (no ID token is held)"]
                : ["\(token) claims: none (not a JWT: the token is opaque, only its issuer can read it)"]
        }
        var rows: [(String, String)] = []
        if let issuer = claims.issuer { rows.append(("issuer", text(issuer))) }
        rows.append(
            ("audience", claims.audiences.isEmpty ? "none named" : claims.audiences.map(text).joined(separator: ", ")))
        if let party = claims.authorizedParty { rows.append(("authorized party", text(party))) }
        if let client = claims.clientID { rows.append(("client ID", text(client))) }
        if let subject = claims.subject { rows.append(("subject", text(subject))) }
        rows.append(("scopes", claims.scopes.isEmpty ? "none named" : claims.scopes.map(text).joined(separator: " ")))
        if let issued = claims.issuedAt { rows.append(("issued", moment(issued, now: now))) }
        if let notBefore = claims.notBefore { rows.append(("not before", moment(notBefore, now: now))) }
        if let expires = claims.expirationDate { rows.append(("expires", moment(expires, now: now))) }
        let header = [claims.algorithm.map { "alg \(text($0))" }, claims.type.map { "typ \(text($0))" }].compactMap {
            $0
        }
        if !header.isEmpty { rows.append(("signed", header.joined(separator: ", ") + " (not checked here)")) }
        let width = rows.map(\.0.count).max() ?? 0
        return ["\(token) claims:"]
            + rows.map { "  " + ($0.0 + ":").padding(toLength: width + 1, withPad: " ", startingAt: 0) + "  " + $0.1 }
    }

    /// The claims as a JSON object (`iss`, `aud` as an array, `azp`, `client_id`, `sub`, `scopes`, `iat`, `nbf`, `exp`
    /// as UTC times, `alg`, `typ`), or null. Strings as the token has them (JSON escapes them).
    static func json(_ claims: TokenClaims?) -> JSONValue {
        guard let claims else { return .null }
        func date(_ value: Date?) -> JSONValue { value.map { .string($0.ISO8601Format()) } ?? .null }
        return .object([
            "iss": Output.json(claims.issuer),
            "aud": .array(claims.audiences.map(JSONValue.string)),
            "azp": Output.json(claims.authorizedParty),
            "client_id": Output.json(claims.clientID),
            "sub": Output.json(claims.subject),
            "scopes": .array(claims.scopes.map(JSONValue.string)),
            "iat": date(claims.issuedAt),
            "nbf": date(claims.notBefore),
            "exp": date(claims.expirationDate),
            "alg": Output.json(claims.algorithm),
            "typ": Output.json(claims.type),
        ])
    }

    private static func text(_ claim: String) -> String { DisplayText.neutralised(claim, limit: 200) }

    /// "2026-11-27T15:00:00Z (3 min ago)" or "(in 2 min)".
    private static func moment(_ date: Date, now: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now))
        let span = StatusCommand.span(abs(seconds))
        return "\(date.ISO8601Format()) (" + (seconds > 0 ? "in \(span))" : "\(span) ago)")
    }
}
