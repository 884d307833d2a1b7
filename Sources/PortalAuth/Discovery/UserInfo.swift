import Foundation
import PortalAuthCore
import PortalAuthTransport

/// What an OpenID provider's UserInfo endpoint (OIDC Core §5.3) says of the signed-in user.
struct UserInfo: Sendable, Equatable {
    /// `sub`: must be the ID token's (OIDC Core §5.3.2).
    let subject: String
    /// `name`, else `preferred_username`.
    let name: String?
    /// `email`.
    let email: String?

    /// Asks `endpoint` with the access token in the `Authorization` header (RFC 6750 §2.1, never in the URL).
    ///
    /// - Throws: `UserInfoError`: `isSubjectMismatch` when its `sub` is not `expectedSubject` (the sign-in then
    ///   fails: the answer is about another user), else why it could not be read (reported; the sign-in goes on).
    static func fetch(
        from endpoint: URL, accessToken: String, expectedSubject: String, httpClient: any TransportClient
    ) async throws(UserInfoError) -> UserInfo {
        let request = TransportRequest(
            method: .get, url: endpoint,
            headers: [("Accept", "application/json"), ("Authorization", "Bearer \(accessToken)")])
        let response: TransportResponse
        do {
            response = try await httpClient.send(request)
        } catch {
            throw UserInfoError(endpoint: endpoint, problem: "\(error)", isSubjectMismatch: false)
        }
        guard response.statusCode == 200 else {
            throw UserInfoError(
                endpoint: endpoint, problem: "it answered HTTP \(response.statusCode)", isSubjectMismatch: false)
        }
        guard let object = try? JSONValue.parse(response.body).objectValue else {
            let type = response.mediaType.map { " (\(DisplayText.neutralised($0, limit: 60)))" } ?? ""
            throw UserInfoError(
                endpoint: endpoint, problem: "its answer\(type) is not a JSON object", isSubjectMismatch: false)
        }
        guard let subject = object["sub"]?.stringValue else {
            throw UserInfoError(endpoint: endpoint, problem: "its answer has no sub", isSubjectMismatch: true)
        }
        guard subject == expectedSubject else {
            throw UserInfoError(
                endpoint: endpoint,
                problem:
                    "its sub \(DisplayText.neutralised(subject, limit: 120)) is not the ID token's (OIDC Core §5.3.2): "
                    + "the answer is about another user", isSubjectMismatch: true)
        }
        func text(_ key: String) -> String? {
            guard let value = object[key]?.stringValue, !value.isEmpty, !DisplayText.containsControlCharacters(value)
            else { return nil }
            return String(value.prefix(200))
        }
        return UserInfo(subject: subject, name: text("name") ?? text("preferred_username"), email: text("email"))
    }
}

/// The UserInfo endpoint could not be read, or spoke of another user than the ID token.
package struct UserInfoError: Error, Sendable, CustomStringConvertible, CategorizedError {
    let endpoint: URL
    let problem: String
    /// Whether the answer's `sub` is not the ID token's (or missing): the sign-in fails.
    let isSubjectMismatch: Bool

    public var category: ErrorCategory { .invalidContent }
    public var description: String {
        "the UserInfo endpoint \(RedactedURL(endpoint)) was " + (isSubjectMismatch ? "refused" : "not read")
            + MessagePart.given(": ", problem)
    }
}
