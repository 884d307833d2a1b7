public import Foundation
import PortalAuthCore

/// An HTTP request: method, URL, ordered header fields, an optional body, and the credentials the
/// transport applies for the request's host.
///
/// The `description` names the method, the URL without its query, and sizes: never header values or the body,
/// which hold codes, tokens and secrets.
public struct TransportRequest: Sendable, CustomStringConvertible {
    /// An HTTP method.
    public struct Method: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        /// Creates a method from its token, e.g. `"PATCH"`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// `GET`.
        public static let get = Method(rawValue: "GET")
        /// `POST`.
        public static let post = Method(rawValue: "POST")
        /// `HEAD`.
        public static let head = Method(rawValue: "HEAD")
        /// `PUT`.
        public static let put = Method(rawValue: "PUT")
        /// `DELETE`.
        public static let delete = Method(rawValue: "DELETE")

        public var description: String { rawValue }
    }

    /// The method.
    public var method: Method
    /// The URL; `http` is allowed only to loopback hosts.
    public var url: URL
    /// The header fields, sent in this order.
    public var headers: TransportHeaders
    /// The body, or `nil` for none.
    public var body: Data?
    /// Password, client certificate and server trust for this request's host; dropped when a redirect leaves it.
    public var credentials: TransportCredentials
    /// Whether the answer is awaited past the client's overall deadline (`TransportConfiguration.deadline`) once the
    /// request has started: for a request that cannot be taken back, whose answer must be had (a refresh that
    /// rotates the refresh token: cut short, the new one is lost and the one held is spent). It still does not start
    /// after the deadline, and still ends within `TransportConfiguration.Timeouts.total`.
    package var outlastsDeadline = false
    /// The longest the request may take, from the moment it is sent to its answer, redirects included, or `nil` for
    /// only the client's own limits. `CurlHTTPClient` ends the request there (libcurl's own timer, a transport error
    /// timedOut); other clients ignore it, and a caller that needs the limit with them keeps the time itself.
    package var timeLimit: Duration?

    /// Creates a request.
    public init(
        method: Method = .get, url: URL, headers: TransportHeaders = [], body: Data? = nil,
        credentials: TransportCredentials = TransportCredentials()
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.credentials = credentials
    }

    // MARK: - Common requests

    /// A `GET` that asks for JSON.
    public static func get(_ url: URL) -> TransportRequest {
        TransportRequest(method: .get, url: url, headers: [("Accept", "application/json")])
    }

    /// A `POST` of `fields` as `application/x-www-form-urlencoded` that asks for JSON:
    /// the shape of every OAuth token, revocation and ArcGIS REST request.
    public static func form(_ url: URL, fields: [(String, String)]) -> TransportRequest {
        TransportRequest(
            method: .post, url: url,
            headers: [
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Accept", "application/json"),
            ],
            body: Data(utf8Of: FormEncoding.encode(fields))
        )
    }

    // MARK: - Description

    /// The method and the URL without query, with the number of header fields and body bytes.
    public var description: String {
        "\(method) \(RedactedURL(url)) (\(headers.fields.count) header fields, \(body?.count ?? 0)-byte body)"
    }
}
