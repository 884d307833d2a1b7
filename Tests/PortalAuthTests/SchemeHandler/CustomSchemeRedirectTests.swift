import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore

/// Which redirect URLs are custom-scheme ones, how received addresses match, and the configurations that use them.
@Suite("Custom-scheme redirect URLs")
struct CustomSchemeRedirectTests {
    @Test(
        "custom schemes are told from the web, files and the out-of-band URN",
        arguments: [
            ("my-maps-app://auth", true),
            ("msauth.com.contoso.maps://auth", true),
            ("MY-Maps-App://auth", true),
            ("x+y.z-1:/callback", true),
            ("http://127.0.0.1/callback", false),
            ("https://app.example.com/callback", false),
            ("file:///tmp/x", false),
            ("urn:ietf:wg:oauth:2.0:oob", false),
            ("javascript:alert(1)", false),
            ("my-maps-app://auth#fragment", false),
            ("my-maps-app://user:pw@auth", false),
        ])
    func classification(url: String, isCustom: Bool) throws {
        let parsed = try #require(URL(string: url))
        #expect((CustomSchemeRedirect(parsed) != nil) == isCustom)
    }

    @Test(
        "scheme names follow RFC 3986",
        arguments: [
            ("my-maps-app", true), ("a1+.-", true), ("1app", false), ("my_app", false), ("", false), ("é", false),
        ])
    func schemeSyntax(name: String, isValid: Bool) {
        #expect(CustomSchemeRedirect.isValidScheme(name) == isValid)
    }

    @Test("a received address matches on scheme (any case) and host; the evaluator gets its path and query")
    func target() {
        let redirect = CustomSchemeRedirect(URL(string: "my-maps-app://auth")!)!
        #expect(redirect.target(of: "my-maps-app://auth?code=a&state=b") == "/?code=a&state=b")
        #expect(redirect.target(of: "MY-MAPS-APP://AUTH?code=a") == "/?code=a")
        #expect(redirect.target(of: "my-maps-app://auth/?state=b#frag") == "/?state=b")
        #expect(redirect.target(of: "my-maps-app://other?code=a") == nil)
        #expect(redirect.target(of: "other://auth?code=a") == nil)
        #expect(redirect.mimeType == "x-scheme-handler/my-maps-app")
    }

    @Test("a desktop session is DISPLAY or WAYLAND_DISPLAY")
    func desktopSession() {
        #expect(CustomSchemeRedirect.hasDesktopSession(environment: ["DISPLAY": ":0"]))
        #expect(CustomSchemeRedirect.hasDesktopSession(environment: ["WAYLAND_DISPLAY": "wayland-0"]))
        #expect(!CustomSchemeRedirect.hasDesktopSession(environment: ["DISPLAY": ""]))
        #expect(!CustomSchemeRedirect.hasDesktopSession(environment: [:]))
    }

    @Test("an OAuth configuration with a custom-scheme redirect is valid; an http one on a remote host is not")
    func oauthConfiguration() throws {
        let portal = URL(string: "https://www.arcgis.com")!
        let custom = OAuthUserConfiguration(
            portalURL: portal, clientID: "abc", redirectURL: URL(string: "my-maps-app://auth")!)
        try custom.validate()
        #expect(custom.isCustomSchemeRedirect && !custom.isLoopbackRedirect)
        let remote = OAuthUserConfiguration(
            portalURL: portal, clientID: "abc", redirectURL: URL(string: "http://app.example.com/cb")!)
        #expect(throws: ConfigurationError.self) { try remote.validate() }
        let javascript = OAuthUserConfiguration(
            portalURL: portal, clientID: "abc", redirectURL: URL(string: "javascript:alert(1)")!)
        #expect(throws: ConfigurationError.self) { try javascript.validate() }
    }
}
