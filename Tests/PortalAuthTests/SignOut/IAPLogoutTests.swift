import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthTransport

@Suite("IAP logout: RP-initiated logout confirmed on the loopback", .timeLimit(.minutes(1)))
struct IAPLogoutTests {
    typealias Fakes = SignOutFakes

    /// Discovery without a revocation endpoint (as DOT and Entra).
    static let plainDiscovery = Fakes.HTTP(
        status: 200,
        body:
            #"{"issuer":"https://idp.example.com/oauth2","authorization_endpoint":"https://idp.example.com/oauth2/authorize"}"#
    )

    @Test(
        "the browser gets client_id, post_logout_redirect_uri on the listener's port, state and id_token_hint; the redirect back confirms"
    )
    func confirmed() async throws {
        let browser = Fakes.Browser.redirectingBack()
        let observer = Fakes.Observer()
        let credential = Fakes.iapCredential(http: Self.plainDiscovery)
        let confirmed = try await credential.invalidate(
            settings: Fakes.settings(http: Self.plainDiscovery, browser: browser, observer: observer))
        #expect(confirmed)

        let opened = try #require(browser.urls.first)
        #expect(opened.absoluteString.hasPrefix(Fakes.logoutURL.absoluteString + "?"))
        let query = Fakes.query(of: opened)
        #expect(query["client_id"] == "iap-client")
        #expect(query["id_token_hint"] == "ID.TOKEN.SECRET")
        #expect((query["state"]?.count ?? 0) >= 43)
        let redirect = try #require(query["post_logout_redirect_uri"].flatMap(URL.init(string:)))
        #expect(redirect.host == "127.0.0.1" && redirect.path == "/callback" && (redirect.port ?? 0) > 0)

        // What the observer is given: the logout URL, which works on any machine, without the ID token (issue 45);
        // the private launch page that carries the ID token only to an observer of this machine's terminal.
        let shown = try #require(observer.urls.first)
        #expect(!shown.isFileURL, "\(shown)")
        #expect(shown.absoluteString.hasPrefix(Fakes.logoutURL.absoluteString + "?"), "\(shown)")
        #expect(!shown.absoluteString.contains("ID.TOKEN"), "the observer never sees the ID token")
        let page = try #require(observer.pages.first)
        #expect(page.isFileURL && !page.absoluteString.contains("ID.TOKEN"))
        #expect(!FileManager.default.fileExists(atPath: page.path), "the page is removed when the logout ends")
        await #expect(throws: CredentialError.self) { _ = try await credential.tokenInfo }
    }

    @Test(
        "the page shown for opening by hand is private and carries id_token_hint and the state: opened instead of the browser, it confirms (issue 23)"
    )
    func pageOpenedByHand() async throws {
        let launchDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pa-logout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: launchDirectory) }
        let observer = Fakes.Observer()
        // No browser command opens anything; the person opens the shown page, whose script sends the browser on.
        let pageContent = Mutex<String?>(nil)
        let person = Task {
            var shown: URL?
            while shown == nil, !Task.isCancelled {
                shown = observer.pages.first
                if shown == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let page = try #require(shown)
            let attributes = try FileManager.default.attributesOfItem(atPath: page.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let html = try String(contentsOf: page, encoding: .utf8)
            pageContent.withLock { $0 = html }
            // The address the page forwards to, as a browser reads it from the page's link.
            let target = try #require(
                html.components(separatedBy: "href=\"").dropFirst().first?.components(separatedBy: "\"").first)
            let url = try #require(URL(string: target.replacingOccurrences(of: "&amp;", with: "&")))
            let query = Fakes.query(of: url)
            #expect(query["id_token_hint"] == "ID.TOKEN.SECRET")
            let back = try #require(
                URL(string: "\(query["post_logout_redirect_uri"] ?? "")?state=\(query["state"] ?? "")"))
            _ = try await CurlHTTPClient().send(.get(back))
        }
        defer { person.cancel() }
        var opener = CommandBrowserOpener(command: "true")
        opener.launchDirectory = launchDirectory
        let settings = Fakes.settings(http: Self.plainDiscovery, browser: opener, observer: observer)
        let confirmed = try await Fakes.iapCredential(http: Self.plainDiscovery).invalidate(settings: settings)
        #expect(confirmed, "the page opened by hand ended the session")
        try await person.value
        #expect(pageContent.withLock { $0 }?.contains("id_token_hint") == true)
        let shown = try #require(observer.pages.first)
        #expect(shown.path.hasPrefix(launchDirectory.path + "/"), "the page goes where the browser command's pages go")
        #expect(!FileManager.default.fileExists(atPath: shown.path), "removed when the logout ends")
    }

    @Test("without an ID token the logout URL itself is shown (nothing to hide)")
    func noIDToken() async throws {
        var record = Fakes.record(.iap)
        record.idToken = nil
        let observer = Fakes.Observer()
        let credential = Fakes.iapCredential(record, http: Self.plainDiscovery)
        _ = try await credential.invalidate(
            settings: Fakes.settings(
                http: Self.plainDiscovery, browser: Fakes.Browser.redirectingBack(), observer: observer))
        let shown = try #require(observer.urls.first)
        #expect(shown.absoluteString.hasPrefix(Fakes.logoutURL.absoluteString + "?"))
        #expect(Fakes.query(of: shown)["id_token_hint"] == nil)
    }

    @Test("no redirect back within the timeout: false, and the credential is unusable all the same")
    func timeout() async throws {
        let browser = Fakes.Browser()
        let credential = Fakes.iapCredential(http: Self.plainDiscovery)
        // The fake browser never redirects back: only the 1 s timeout ends this (the suite's time limit guards a hang).
        let confirmed = try await credential.invalidate(
            settings: Fakes.settings(http: Self.plainDiscovery, browser: browser, timeout: .seconds(1)))
        #expect(!confirmed)
        #expect(browser.urls.count == 1)
        await #expect(throws: CredentialError.self) { _ = try await credential.tokenInfo }
    }

    @Test("a redirect back with an error is the identity provider's refusal")
    func refusal() async throws {
        let browser = Fakes.Browser.redirectingBack(extra: "&error=access_denied")
        let credential = Fakes.iapCredential(http: Self.plainDiscovery)
        let error = await #expect(throws: LoopbackError.self) {
            try await credential.invalidate(settings: Fakes.settings(http: Self.plainDiscovery, browser: browser))
        }
        #expect(error?.identityProviderErrorCode == "access_denied")
    }

    @Test(
        "an advertised revocation_endpoint gets the refresh token (RFC 7009) before the browser opens; its failure does not stop the logout"
    )
    func advertisedRevocation() async throws {
        for revocationStatus in [200, 503] {
            let http = Fakes.HTTP { request, _ in
                if request.url == Fakes.discoveryURL {
                    return Fakes.response(
                        body: """
                            {"issuer":"https://idp.example.com/oauth2","authorization_endpoint":"https://idp.example.com/oauth2/authorize",
                             "revocation_endpoint":"https://idp.example.com/oauth2/revoke"}
                            """, url: request.url)
                }
                return Fakes.response(status: revocationStatus, body: "{}", url: request.url)
            }
            let browser = Fakes.Browser.redirectingBack()
            let confirmed = try await Fakes.iapCredential(http: http).invalidate(
                settings: Fakes.settings(http: http, browser: browser))
            #expect(confirmed)
            #expect(http.requests.map(\.url.path) == ["/oauth2/.well-known/openid-configuration", "/oauth2/revoke"])
            let fields = Fakes.fields(of: http.requests[1])
            #expect(
                fields == ["token": "REFRESH-SECRET", "token_type_hint": "refresh_token", "client_id": "iap-client"])
        }
    }

    @Test("a discovery document for another authorize endpoint is not trusted for revocation")
    func foreignDiscovery() async throws {
        let http = Fakes.HTTP(
            body:
                #"{"issuer":"https://idp.example.com/oauth2","authorization_endpoint":"https://evil.example.com/authorize","revocation_endpoint":"https://evil.example.com/revoke"}"#
        )
        _ = try await Fakes.iapCredential(http: http).invalidate(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
        // Only the sign-in's issuer's document is asked for, and nothing else.
        #expect(
            http.requests.map(\.url.path) == ["/oauth2/.well-known/openid-configuration"],
            "only the discovery request, no revocation")
    }
}
