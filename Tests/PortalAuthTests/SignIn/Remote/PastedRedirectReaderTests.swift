import Foundation
import Testing
@testable import PortalAuth

/// Paste-back: what a pasted line means for the awaited redirect (loopback or custom scheme), and the out-of-band code.
@Suite("Pasted addresses and codes")
struct PastedRedirectReaderTests {
    @Test(
        "a pasted line is checked against the expected redirect and state",
        arguments: [
            ("http://127.0.0.1:5000/callback?code=c1&state=s", "http://127.0.0.1:5000/callback", "c1", nil),
            ("  my-app://auth?code=c2&state=s  ", "my-app://auth", "c2", nil),
            (
                "http://127.0.0.1:5000/callback?code=c1&state=other", "http://127.0.0.1:5000/callback", nil,
                "another sign-in"
            ),
            (
                "https://evil.example/callback?code=c1&state=s", "http://127.0.0.1:5000/callback", nil,
                "does not start with http://127.0.0.1:5000/callback"
            ),
            ("other-app://auth?code=c1&state=s", "my-app://auth", nil, "does not start with my-app://auth"),
            (
                "http://127.0.0.1:5000/elsewhere?code=c1&state=s", "http://127.0.0.1:5000/callback", nil,
                "its path is not /callback"
            ),
            ("c1", "http://127.0.0.1:5000/callback", nil, "it is not an address"),
        ] as [(String, String, String?, String?)])
    func pasted(line: String, redirect: String, code: String?, reason: String?) throws {
        let result = Result { () throws(LoopbackError) in
            try PastedRedirectReader.callback(
                fromPasted: line, expectedRedirect: URL(string: redirect)!, state: "s", issuer: nil)
        }
        switch result {
        case .success(let callback):
            #expect(callback.code == code)
        case .failure(let error):
            #expect(code == nil)
            #expect(error.kind == .notAwaitedResponse)
            #expect(error.description.contains(reason ?? "?"), "\(error.description)")
        }
    }

    @Test("an error in the pasted address ends the sign-in with the identity provider's error")
    func pastedError() {
        let thrown = #expect(throws: LoopbackError.self) {
            try PastedRedirectReader.callback(
                fromPasted: "my-app://auth?error=access_denied&state=s",
                expectedRedirect: URL(string: "my-app://auth")!, state: "s", issuer: nil)
        }
        #expect(thrown?.kind == .identityProviderError)
    }

    @Test("the reader explains a bad paste through the observer and reads the next line; end of input is an error")
    func reader() async throws {
        let observer = RecordingSignInObserver()
        let settings = SignInSettings(
            browser: nil, observer: observer,
            pastedLines: {
                AsyncStream { continuation in
                    continuation.yield("nonsense")
                    continuation.yield("my-app://auth?code=ok&state=s")
                    continuation.finish()
                }
            })
        let reader = PastedRedirectReader(settings: settings)
        let callback = try await reader.callback(
            authorizationURL: URL(string: "https://idp.example/authorize")!,
            expectedRedirect: URL(string: "my-app://auth")!, state: "s")
        #expect(callback.code == "ok")
        #expect(
            observer.events == [
                "paste-prompt",
                "paste-rejected: The pasted address is not the awaited sign-in response: it is not an address; paste the whole address from the browser's address bar.",
            ])
        let empty = PastedRedirectReader(
            settings: SignInSettings(browser: nil, pastedLines: { AsyncStream { $0.finish() } }))
        await #expect(throws: SignInError.self) {
            try await empty.callback(
                authorizationURL: URL(string: "https://idp.example/a")!,
                expectedRedirect: URL(string: "my-app://auth")!, state: "s")
        }
    }

    @Test(
        "out-of-band: the code alone, or the approval page's address",
        arguments: [
            ("AbC123-xyz", "AbC123-xyz", nil),
            ("https://gis.example/portal/sharing/rest/oauth2/approval?code=K9&state=s", "K9", nil),
            ("https://gis.example/portal/sharing/rest/oauth2/approval?code=K9&state=t", nil, "another sign-in"),
            ("https://gis.example/portal/sharing/rest/oauth2/approval?state=s", nil, "it has no code"),
            ("two words", nil, "does not look like a code"),
        ] as [(String, String?, String?)])
    func outOfBand(line: String, code: String?, reason: String?) {
        let result = Result { () throws(LoopbackError) in try OutOfBandFlow.code(fromPasted: line, state: "s") }
        switch result {
        case .success(let found): #expect(found == code)
        case .failure(let error):
            #expect(code == nil && error.description.contains(reason ?? "?"), "\(error.description)")
        }
    }
}
