import Testing
@testable import PortalAuth

@Suite("Loopback callback evaluation")
struct CallbackEvaluatorTests {
    let evaluator = CallbackEvaluator(path: "/callback", states: ["s-1", "s-2"], issuer: "https://idp.example/")

    // MARK: - Outcomes that keep the wait going

    @Test(
        "requests that do not end the wait",
        arguments: [
            ("/favicon.ico", CallbackEvaluator.Outcome.notFound),
            ("/callback/", .notFound),
            ("/CALLBACK?state=s-1&code=c", .notFound),
            ("/callbackx?state=s-1&code=c", .notFound),
            ("/callback", .unknownState(.missing)),
            ("/callback?code=c", .unknownState(.missing)),
            ("/callback?state=nope&code=c", .unknownState(.mismatch)),
            ("/callback?state=s-&code=c", .unknownState(.mismatch)),
            ("/callback?state=S-1&code=c", .unknownState(.mismatch)),
            ("/callback?state=&code=c", .unknownState(.mismatch)),
            ("/callback?state=s-1&state=s-1&code=c", .unknownState(.repeated)),
            ("/callback?state=s-1&code=a&code=b", .malformed("the parameter code appears more than once")),
            ("/callback?state=s-1&code=%zz", .malformed("the query has an invalid percent escape or is not UTF-8")),
            ("/callback?state=s-1&code=%FF", .malformed("the query has an invalid percent escape or is not UTF-8")),
            ("/callback?state=s-1&code=%4", .malformed("the query has an invalid percent escape or is not UTF-8")),
        ])
    func keepsWaiting(target: String, expected: CallbackEvaluator.Outcome) {
        let outcome = evaluator.evaluate(target: target)
        #expect(outcome == expected)
        #expect(!outcome.isFinal)
    }

    // MARK: - Final outcomes

    @Test("the matching response is accepted with all its parameters, decoded")
    func accepts() throws {
        let outcome = evaluator.evaluate(
            target: "/callback?code=a%2Bb+c&state=s-2&iss=https%3A%2F%2Fidp.example%2F&session_state=x&flag")
        let callback = try #require(outcome.acceptance, "expected acceptance, got \(outcome)")
        #expect(callback.code == "a+b c")
        #expect(callback.state == "s-2")
        #expect(callback.issuer == "https://idp.example/")
        #expect(callback["session_state"] == "x")
        #expect(callback["flag"] == "")
        #expect(callback.parameters.map(\.name) == ["code", "state", "iss", "session_state", "flag"])
        #expect(outcome.isFinal)
    }

    @Test("absolute-form targets, an empty redirect path, and an unencoded URL in the query work")
    func absoluteForm() {
        let root = CallbackEvaluator(path: "", states: ["s"])
        #expect(root.evaluate(target: "/?state=s&code=c").isFinal)
        #expect(root.evaluate(target: "http://127.0.0.1:8080?state=s&code=c").isFinal)
        #expect(evaluator.evaluate(target: "http://127.0.0.1:8080/callback?state=s-1&code=c").isFinal)
        #expect(evaluator.evaluate(target: "http://127.0.0.1:8080/other?state=s-1&code=c") == .notFound)
        // An issuer written without percent escapes in the query (RFC 3986 allows ":" and "/" there).
        let unencoded = evaluator.evaluate(target: "/callback?state=s-1&code=c&iss=https://idp.example/")
        #expect(unencoded.acceptance?.issuer == "https://idp.example/", "\(unencoded)")
        #expect(evaluator.evaluate(target: "/other?state=s-1&code=c&iss=https://idp.example/") == .notFound)
        #expect(
            evaluator.evaluate(target: "http://127.0.0.1:8080/callback?state=s-1&code=c&iss=https://idp.example/")
                .isFinal)
    }

    @Test("percent-encoded paths compare decoded")
    func encodedPath() {
        let spaced = CallbackEvaluator(path: "/my%20callback", states: ["s"])
        #expect(spaced.evaluate(target: "/my%20callback?state=s&code=c").isFinal)
        #expect(spaced.evaluate(target: "/my%20Callback?state=s&code=c") == .notFound)
    }

    @Test("an identity provider error ends the wait with that error")
    func identityProviderError() throws {
        let outcome = evaluator.evaluate(
            target:
                "/callback?error=access_denied&error_description=User+said+no&error_uri=https%3A%2F%2Fdocs&state=s-1")
        let error = try #require(outcome.refusal, "expected a refusal, got \(outcome)")
        #expect(error.kind == .identityProviderError)
        #expect(error.category == .refused)
        #expect(error.identityProviderErrorCode == "access_denied")
        #expect(error.identityProviderErrorDescription == "User said no")
        #expect(error.identityProviderErrorURI == "https://docs")
        #expect(error.description.contains("access_denied"))
    }

    @Test("an error with a wrong state is only an unknown state")
    func errorWithWrongState() {
        #expect(evaluator.evaluate(target: "/callback?error=access_denied&state=other") == .unknownState(.mismatch))
    }

    @Test(
        "an iss other than the expected issuer is refused, also on error responses (RFC 9207)",
        arguments: [
            "/callback?state=s-1&code=c&iss=https%3A%2F%2Fevil.example%2F",
            "/callback?state=s-1&code=c&iss=https%3A%2F%2Fidp.example",  // no trailing slash: exact comparison
            "/callback?state=s-1&error=access_denied&iss=https%3A%2F%2Fevil.example%2F",
        ])
    func issuerMismatch(target: String) throws {
        let outcome = evaluator.evaluate(target: target)
        let error = try #require(outcome.refusal, "expected a refusal, got \(outcome)")
        #expect(error.kind == .issuerMismatch)
        #expect(error.category == .refused)
        #expect(error.description.contains("https://idp.example/"))
    }

    @Test("without an expected issuer any iss is accepted; without iss the response is accepted")
    func issuerOptional() {
        let noIssuer = CallbackEvaluator(path: "/callback", states: ["s"])
        #expect(noIssuer.evaluate(target: "/callback?state=s&code=c&iss=https%3A%2F%2Fx").isFinal)
        #expect(evaluator.evaluate(target: "/callback?state=s-1&code=c").acceptance != nil)
    }

    @Test("a sign-in needs a code; a logout confirmation does not")
    func codeRequirement() throws {
        let error = try #require(
            evaluator.evaluate(target: "/callback?state=s-1").refusal,
            "a sign-in response without code should be refused")
        #expect(error.kind == .invalidResponse)
        let logout = CallbackEvaluator(path: "/callback", states: ["s-1"], requiresCode: false)
        let callback = try #require(
            logout.evaluate(target: "/callback?state=s-1").acceptance, "a logout confirmation should be accepted")
        #expect(callback.code == nil)
    }

    // MARK: - Pasted URLs

    @Test("a pasted redirect URL gives its callback")
    func pasted() throws {
        let callback = try evaluator.callback(
            fromPastedURL: "  http://127.0.0.1:53817/callback?code=abc&state=s-1#ignored \n")
        #expect(callback.code == "abc")
    }

    @Test(
        "a pasted text that is not the awaited response says why",
        arguments: [
            ("hello", "not an address"),
            ("http://127.0.0.1:5/other?code=a&state=s-1", "path is not /callback"),
            ("http://127.0.0.1:5/callback?code=a", "no state"),
            ("http://127.0.0.1:5/callback?code=a&state=old", "another sign-in"),
            // Cut short (issue 28, point 3): not "another sign-in".
            (
                "http://127.0.0.1:5/callback?code=a&state=s-",
                "it is cut short: its state is only the start of this sign-in's"
            ),
            ("http://127.0.0.1:5/callback?code=abc", "the address may be cut short"),
            ("http://127.0.0.1:5/callback?code=%&state=s-1", "invalid percent escape"),
        ])
    func pastedRejected(text: String, reason: String) {
        #expect {
            try evaluator.callback(fromPastedURL: text)
        } throws: { error in
            guard let error = error as? LoopbackError else { return false }
            return error.kind == .notAwaitedResponse && error.category == .invalidContent
                && error.description.contains(reason) && !error.description.contains("s-1")
        }
    }

    @Test("a pasted error response throws the identity provider's error")
    func pastedError() {
        #expect(throws: LoopbackError.self) {
            try evaluator.callback(fromPastedURL: "http://localhost/callback?error=access_denied&state=s-1")
        }
    }

    @Test("the callback's description names parameters, never values")
    func redactedDescription() {
        let callback = LoopbackCallback(parameters: [
            .init(name: "code", value: "SECRET"), .init(name: "state", value: "S"),
        ])
        #expect(callback.description == "LoopbackCallback(parameters: code, state)")
    }
}

extension CallbackEvaluator.Outcome {
    /// The error of a refusal, else nil.
    var refusal: LoopbackError? {
        if case .refused(let error) = self { return error }
        return nil
    }

    /// The callback of an acceptance, else nil.
    var acceptance: LoopbackCallback? {
        if case .accepted(let callback) = self { return callback }
        return nil
    }
}
