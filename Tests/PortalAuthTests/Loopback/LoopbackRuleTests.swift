import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

/// The one loopback rule (issue 35, item 10), one table for its three users: the configuration check (an http
/// endpoint is allowed only to a loopback host), the transport (http only to loopback) and the redirect listener.
enum LoopbackRuleTable {
    /// A host as a URL writes it, and whether it is loopback.
    static let hosts: [(String, Bool)] = [
        ("localhost", true), ("LOCALHOST", true), ("localhost.", true), ("LocalHost", true),
        ("auth.localhost", true), ("maps.localhost", true), ("A.B.Localhost", true), ("a.b.localhost.", true),
        ("127.0.0.1", true), ("127.8.9.10", true), ("127.255.255.255", true), ("[::1]", true),
        ("[0:0:0:0:0:0:0:1]", true),
        ("localhost.evil", false), ("notlocalhost", false), ("a..localhost", false), ("localhost.example.com", false),
        ("128.0.0.1", false), ("126.255.255.255", false), ("0.0.0.0", false), ("10.0.0.1", false), ("[::2]", false),
        ("[::]", false), ("[::ffff:127.0.0.1]", false), ("example.com", false), ("127.0.0.1.nip.io", false),
        ("127.evil", false),
    ]
}

@Suite("The one loopback rule, as each of its users applies it")
struct LoopbackRuleTests {
    @Test("the rule", arguments: LoopbackRuleTable.hosts)
    func rule(host: String, loopback: Bool) {
        #expect(URLNormalization.isLoopbackHost(host) == loopback)
        #expect((URLNormalization.loopbackHost(host) != nil) == loopback)
    }

    @Test("the transport sends http only to a loopback host", arguments: LoopbackRuleTable.hosts)
    func transport(host: String, loopback: Bool) {
        #expect(RequestTarget.isLoopback(host: host) == loopback)
    }

    @Test("the configuration check allows an http endpoint only on a loopback host", arguments: LoopbackRuleTable.hosts)
    func configurationCheck(host: String, loopback: Bool) throws {
        let url = try #require(URL(string: "http://\(host):8080/authorize"))
        let problem = URLRules.endpointProblem(url)
        #expect((problem == nil) == loopback, "\(problem ?? "allowed")")
        #expect(URLRules.isLoopbackRedirect(url) == loopback)
    }

    @Test("the redirect listener takes a redirect URL only on a loopback host", arguments: LoopbackRuleTable.hosts)
    func listener(host: String, loopback: Bool) throws {
        let url = try #require(URL(string: "http://\(host):0/callback"))
        let endpoint = try? LoopbackEndpoint(redirectURL: url)
        #expect((endpoint != nil) == loopback)
        #expect(LoopbackEndpoint.isLoopbackHostHeader("\(host):8080") == loopback)
    }

    @Test("names under localhost are bound on both address families, as localhost is")
    func namesUnderLocalhost() throws {
        let endpoint = try LoopbackEndpoint(redirectURL: #require(URL(string: "http://auth.localhost/callback")))
        #expect(endpoint.addresses == [.ipv4("127.0.0.1"), .ipv6Loopback])
        #expect(endpoint.url(withPort: 5555).absoluteString == "http://auth.localhost:5555/callback")
    }

    @Test("an IAP file with endpoints on a name under localhost loads")
    func iapFileOnLocalhostName() throws {
        let json = #"""
            {"authorize_url": "http://auth.localhost:8080/authorize", "token_url": "http://auth.localhost:8080/token",
             "logout_url": "http://auth.localhost:8080/logout", "client_id": "c", "redirect_url": "http://localhost/callback",
             "scope": ["openid"], "hosts_behind_proxy": ["*.localhost"]}
            """#
        let report = IAPConfiguration.report(parsing: Data(json.utf8), file: URL(filePath: "/tmp/iap.json"))
        #expect(report.error == nil, "\(String(describing: report.error))")
        #expect(report.configuration?.authorizeURL.host() == "auth.localhost")
    }
}
