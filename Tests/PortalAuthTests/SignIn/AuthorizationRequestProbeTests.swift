import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// The look at the authorization URL before the browser opens: a provider that rejects the request (issue 11: an
/// unregistered redirect URL or port, a wrong client ID) is reported at once, not after the whole timeout.
@Suite("Authorization URL check: a rejected sign-in request is reported at once")
struct AuthorizationRequestProbeTests {
    static let redirect = URL(string: "http://127.0.0.1:43210/callback")!
    static let authorize = URL(string: "https://idp.example/oauth2/authorize?client_id=c")!

    static func response(_ status: Int, location: String? = nil, contentType: String = "text/html", body: String = "")
        -> TransportResponse
    {
        var headers: [(name: String, value: String)] = [("Content-Type", contentType)]
        if let location { headers.append(("Location", location)) }
        return TransportResponse(
            statusCode: status, headers: TransportHeaders(headers), body: Data(body.utf8), url: authorize)
    }

    @Test("a redirect back to the loopback with error is a rejection carrying the provider's code and text")
    func redirectWithError() throws {
        let finding = AuthorizationRequestProbe.finding(
            in: Self.response(
                302,
                location:
                    "http://127.0.0.1:43210/callback?error=invalid_request&error_description=Invalid%20redirect_uri%1B%5B31m&state=s"
            ),
            redirectURI: Self.redirect)
        guard case .rejected(let error) = finding else { Issue.record("not a rejection: \(finding)"); return }
        #expect(error.identityProviderErrorCode == "invalid_request")
        #expect(error.identityProviderErrorDescription?.contains("Invalid redirect_uri") == true)
        #expect(
            error.identityProviderErrorDescription?.contains("\u{1B}") == false, "no terminal escape from the server")
    }

    @Test(
        "what is not a finding",
        arguments: [
            ("a redirect to the login page", 302, "https://idp.example/login?next=%2Foauth2%2Fauthorize", ""),
            (
                "login_required, as prompt=none without cookies always gets", 302,
                "http://127.0.0.1:43210/callback?error=login_required&state=s", ""
            ),
            ("a sign-in page", 200, nil, "<html><title>Sign in</title></html>"),
            ("a failing server (the browser may fare better)", 503, nil, ""),
        ] as [(String, Int, String?, String)])
    func nothing(name: String, status: Int, location: String?, body: String) {
        let finding = AuthorizationRequestProbe.finding(
            in: Self.response(status, location: location, body: body), redirectURI: Self.redirect)
        guard case .nothing = finding else { Issue.record("\(name): \(finding)"); return }
    }

    @Test(
        "a JSON 401 (a portal's \"authenticate first\" to a client asking for JSON, as LemonLDAP::NG sends) is an answer",
        arguments: [
            #"{"error":9,"result":0}"#, #"{"error":"You need to be authenticated"}"#, #"{"result":0}"#,
        ])
    func jsonUnauthorized(body: String) {
        let finding = AuthorizationRequestProbe.finding(
            in: Self.response(401, contentType: "application/json", body: body), redirectURI: Self.redirect)
        guard case .nothing = finding else { Issue.record("\(body): \(finding)"); return }
    }

    @Test("a JSON 401 with an OAuth refusal, and an HTML 401, are still findings")
    func unauthorizedFindings() {
        let refusal = AuthorizationRequestProbe.finding(
            in: Self.response(401, contentType: "application/json", body: #"{"error":"invalid_client"}"#),
            redirectURI: Self.redirect)
        guard case .refused = refusal else { Issue.record("not a refusal: \(refusal)"); return }
        let page = AuthorizationRequestProbe.finding(
            in: Self.response(401, body: "<html><title>Unauthorized client</title></html>"), redirectURI: Self.redirect)
        guard case .errorPage(let said) = page else { Issue.record("not an error page: \(page)"); return }
        #expect(said.contains("Unauthorized client"))
    }

    @Test(
        "an error page is reported with its OAuth error or its title",
        arguments: [
            (
                400, "application/json", #"{"error":"access_denied","error_description":"Not for you"}"#,
                "access_denied (Not for you)"
            ),
            (
                403, "text/html", "<html><head><title>Error: mismatching_redirect_uri</title></head></html>",
                "titled \"Error: mismatching_redirect_uri\""
            ),
        ])
    func errorPage(status: Int, contentType: String, body: String, mentions: String) {
        let finding = AuthorizationRequestProbe.finding(
            in: Self.response(status, contentType: contentType, body: body), redirectURI: Self.redirect)
        guard case .errorPage(let said) = finding else { Issue.record("not an error page: \(finding)"); return }
        #expect(said.contains("HTTP \(status)") && said.contains(mentions), "\(said)")
    }

    @Test(
        "an OAuth error about the request itself (an unknown client ID) is a refusal no browser gets past",
        arguments: [
            "invalid_client", "invalid_request", "unauthorized_client",
        ])
    func refusal(code: String) {
        let body = #"{"error":"\#(code)","error_description":"Invalid client_id"}"#
        let finding = AuthorizationRequestProbe.finding(
            in: Self.response(400, contentType: "application/json", body: body), redirectURI: Self.redirect)
        guard case .refused(let said) = finding else { Issue.record("not a refusal: \(finding)"); return }
        #expect(said.contains("HTTP 400") && said.contains("\(code) (Invalid client_id)"), "\(said)")
    }

    @Test("an unknown client ID or an endpoint nothing answers at ends the sign-in before the browser opens")
    func failsBeforeBrowser() async throws {
        let refusing = ScriptedHTTPClient([
            .success(
                Self.response(
                    400, contentType: "application/json",
                    body: #"{"error":"invalid_client","error_description":"Invalid client_id"}"#))
        ])
        let unreachable = ScriptedHTTPClient([
            .failure(TransportError(.cannotConnect, url: RedactedURL(Self.authorize), detail: "refused"))
        ])
        for (client, expected) in [(refusing, ErrorCategory.refused), (unreachable, .unavailable)] {
            let browser = RecordingBrowserOpener(.succeeds)
            let settings = SignInSettings(
                browser: browser, timeout: .seconds(600), httpClient: client, signInMethod: .browser)
            let configuration = OAuthUserConfiguration(
                portalURL: URL(string: "https://gis.example/portal")!, clientID: "wrong")
            do {
                _ = try await OAuthUserCredential.credential(for: configuration, settings: settings)
                Issue.record("the sign-in went on")
            } catch let error as any CategorizedError {
                #expect(error.category == expected, "\(error)")
                if expected == .refused {
                    #expect("\(error)".contains("invalid_client (Invalid client_id)"), "\(error)")
                }
            }
            #expect(browser.urls.isEmpty, "no browser tab shows the error")
        }
    }

    /// An observer that records the problems it is told about.
    final class Observer: SignInObserver {
        let problems = Mutex<[String]>([])
        func signInRequestProblem(_ message: String) { problems.withLock { $0.append(message) } }
    }

    @Test(
        "a sign-in whose authorization request the provider rejects ends at once with the provider's error, not at the timeout"
    )
    func signInEndsAtOnce() async throws {
        let http = ScriptedHTTPClient { _, request in
            if request.url.path.hasSuffix("/authorize") {
                let query = SignOutFakes.query(of: request.url)
                let back =
                    "\(query["redirect_uri"] ?? "")?error=invalid_request&error_description=redirect_uri%20is%20not%20registered&state=\(query["state"] ?? "")"
                return TransportResponse(statusCode: 302, headers: [("Location", back)], body: Data(), url: request.url)
            }
            return TransportResponse(statusCode: 404, headers: [], body: Data(), url: request.url)
        }
        let browser = SignOutFakes.Browser()  // shows the provider's error page: never redirects back
        let settings = SignInSettings(
            browser: browser, timeout: .seconds(120), httpClient: http,
            environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false))
        let error = await #expect(throws: LoopbackError.self) {
            _ = try await IAPCredential.credential(for: IAPSignInConformanceTests.configuration(), settings: settings)
        }
        #expect(error?.identityProviderErrorCode == "invalid_request")
        #expect(error?.identityProviderErrorDescription == "redirect_uri is not registered")
    }

    @Test("an error page is told to the observer at once, and the sign-in still completes when the browser does better")
    func errorPageWarnsAndWaits() async throws {
        let provider = IAPSignInConformanceTests.goodProvider { url in
            TransportResponse(
                statusCode: 403, headers: [("Content-Type", "text/html")],
                body: Data("<title>Forbidden client</title>".utf8), url: url)
        }
        let observer = Observer()
        let settings = SignInSettings(
            browser: provider.browser, timeout: .seconds(120), observer: observer, httpClient: provider.http,
            environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false))
        let credential = try await IAPCredential.credential(
            for: IAPSignInConformanceTests.configuration(), settings: settings)
        #expect(try await credential.tokenInfo.accessToken == "ACCESS-1")
        #expect(observer.problems.withLock { $0 } == ["it answers HTTP 403 with a page titled \"Forbidden client\""])
    }
}
