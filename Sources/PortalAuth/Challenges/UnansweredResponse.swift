package import Foundation
import PortalAuthCore
package import PortalAuthTransport

/// What a response that `AuthenticationManager.data(for:)` returned as an answer still says about access: a
/// refusal nothing answered, or a redirect to a sign-in page that no known configuration covers. A script must not
/// take either for the resource (an HTML sign-in page printed as the body, exit status 0).
package enum UnansweredResponse: Sendable, Equatable {
    /// HTTP 401 or 403: the server refused the request, and no challenge the manager reads was in it (or none could
    /// be answered).
    case refused(statusCode: Int)
    /// A redirect (3xx) whose target carries the requested URL back as a parameter (plain, percent-encoded or
    /// base64, as LemonLDAP::NG's `?url=` does): a sign-in portal that returns there after the sign-in.
    case signInRedirect(host: String)

    /// The refusal or sign-in redirect in `response` to a request for `url`, or nil for an ordinary answer.
    package static func detect(in response: TransportResponse, for url: URL) -> UnansweredResponse? {
        if response.statusCode == 401 || response.statusCode == 403 { return .refused(statusCode: response.statusCode) }
        guard (300..<400).contains(response.statusCode), let location = response.headers["Location"],
            let target = URL(string: location, relativeTo: url)?.absoluteURL,
            let host = URLNormalization.host(of: target), carriesReturn(target, to: url)
        else { return nil }
        return .signInRedirect(host: host)
    }

    /// Whether a query parameter of `target` names `url` (its host, port and path), plainly or base64-encoded.
    static func carriesReturn(_ target: URL, to url: URL) -> Bool {
        guard let host = URLNormalization.host(of: url) else { return false }
        let path = url.path(percentEncoded: false)
        let wanted = (host + (url.port.map { ":\($0)" } ?? "") + (path == "/" ? "" : path)).lowercased()
        let values = (URLComponents(url: target, resolvingAgainstBaseURL: false)?.queryItems ?? []).compactMap(\.value)
        return values.contains { value in
            let candidates = [value, base64Decoded(value)].compactMap { $0?.lowercased() }
            return candidates.contains { $0.contains(wanted) }
        }
    }

    /// `text` decoded from base64 or base64url (padding optional), when that gives UTF-8.
    private static func base64Decoded(_ text: String) -> String? {
        guard text.count >= 8, text.count <= 8192 else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        guard let data = Data(base64Encoded: standard) else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
