package import Foundation
import PortalAuthTransport

/// The URL rules shared by both configurations: what a redirect and an endpoint URL must look like. Hosts and
/// URLs are compared through `URLNormalization` (Transport).
package enum URLRules {
    // MARK: - Redirects

    /// Whether `url` can receive a loopback redirect on this machine: `http` to a loopback host.
    package static func isLoopbackRedirect(_ url: URL) -> Bool {
        guard url.scheme?.lowercased() == "http", let host = URLNormalization.host(of: url) else { return false }
        return URLNormalization.isLoopbackHost(host)
    }

    // MARK: - Rules

    /// Why `url` cannot be an endpoint (absolute http(s) with a host, no user or password, a valid port,
    /// https unless the host is loopback), or `nil` when it can.
    package static func endpointProblem(_ url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased() else {
            return
                "must be an absolute URL such as https://login.example.com/authorize, found \"\(url.absoluteString)\""
        }
        guard scheme == "http" || scheme == "https" else {
            return "must be an https URL, found scheme \"\(scheme)\" in \"\(url.absoluteString)\""
        }
        guard url.user == nil, url.password == nil else {
            // The URL is not repeated: it holds a password.
            return "must not contain a user name or password; put credentials nowhere in the configuration"
        }
        guard let host = URLNormalization.host(of: url) else {
            return "must name a host, found \"\(url.absoluteString)\""
        }
        if let port = url.port, !(1...65535).contains(port) {
            return "has port \(port), which is outside 1-65535"
        }
        if scheme == "http", !URLNormalization.isLoopbackHost(host) {
            return
                "must use https (http is allowed only for loopback hosts: 127.0.0.0/8, [::1], localhost and *.localhost), found \"\(url.absoluteString)\""
        }
        return nil
    }

    /// Why `url` cannot be a redirect URL in a file (it must be absolute), or `nil` when it can.
    static func absoluteURLProblem(_ url: URL) -> String? {
        guard let scheme = url.scheme, !scheme.isEmpty else {
            return "must be an absolute URL such as http://localhost/callback, found \"\(url.absoluteString)\""
        }
        return nil
    }

    /// What is wrong with a redirect URL: not absolute, or with a fragment, which a redirect URI must not have
    /// (RFC 6749 §3.1.2; the loopback listener could never match it).
    static func redirectURLProblem(_ url: URL) -> String? {
        if let problem = absoluteURLProblem(url) { return problem }
        if url.fragment != nil {
            return
                "must not contain a fragment (the part from #; RFC 6749 section 3.1.2), found \"\(url.absoluteString)\"; remove it"
        }
        return nil
    }

    /// The text of a URL-valued JSON string as a URL, or `nil` when Foundation cannot parse it.
    package static func url(from text: String) -> URL? {
        guard !text.isEmpty, text.allSatisfy({ !$0.isWhitespace }) else { return nil }
        return URL(string: text)
    }
}
