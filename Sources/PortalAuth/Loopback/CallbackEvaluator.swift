import Foundation

/// Decides what a request to the loopback listener (or a redirect URL pasted back by the user) means for the
/// pending sign-in. Pure: no sockets, no clock, so every rule is tested directly.
///
/// Rules, in order: another path is not found; a `state` missing, repeated or matching no pending sign-in is an
/// unknown state (the caller keeps waiting); a repeated response parameter or an undecodable query is malformed;
/// an `iss` that differs from the expected issuer is refused (RFC 9207, also for error responses); an `error` is the
/// identity provider's refusal; a response without `code` when one is required is refused; anything else is accepted.
package struct CallbackEvaluator: Sendable {
    /// What a request means.
    package enum Outcome: Sendable, Equatable {
        /// Another path (a favicon, a stray request): 404, keep waiting.
        case notFound
        /// A callback that belongs to no pending sign-in: 400 with an explanation, keep waiting.
        case unknownState(UnknownState)
        /// A callback whose query cannot be read: 400, keep waiting.
        case malformed(String)
        /// The matching response is a refusal (identity provider error, issuer mismatch, no code): the wait ends.
        case refused(LoopbackError)
        /// The matching response: the wait ends with it.
        case accepted(LoopbackCallback)

        /// Whether this outcome ends the wait.
        var isFinal: Bool {
            switch self {
            case .refused, .accepted: true
            case .notFound, .unknownState, .malformed: false
            }
        }
    }

    /// Why a callback matched no pending sign-in.
    package enum UnknownState: Sendable, Equatable {
        case missing
        case repeated
        case mismatch
    }

    /// The percent-encoded path of the redirect URL (`/` when it has none).
    let path: String
    /// The `state` values of the pending sign-ins.
    let states: Set<String>
    /// The issuer the response's `iss` must equal, when known.
    let issuer: String?
    /// Whether an accepted response needs a `code` (a sign-in; a logout confirmation has none).
    let requiresCode: Bool

    /// The parameters that must not appear twice (RFC 6749 §3.1).
    private static let singleParameters: Set<String> = [
        "state", "code", "error", "error_description", "error_uri", "iss",
    ]

    package init(path: String, states: Set<String>, issuer: String? = nil, requiresCode: Bool = true) {
        self.path = path.isEmpty ? "/" : path
        self.states = states
        self.issuer = issuer
        self.requiresCode = requiresCode
    }

    // MARK: - Requests

    /// Evaluates an HTTP request target: origin form (`/callback?…`) or absolute form (`http://host/callback?…`).
    package func evaluate(target: String) -> Outcome {
        let (requestPath, query) = Self.splitTarget(target)
        guard Self.samePath(requestPath, path) else { return .notFound }
        let parameters: [LoopbackCallback.Parameter]
        switch Self.parseQuery(query) {
        case .success(let parsed): parameters = parsed
        case .failure(let failure): return .malformed(failure.reason)
        }
        return evaluate(parameters)
    }

    /// Evaluates decoded query parameters of a request to the redirect path.
    func evaluate(_ parameters: [LoopbackCallback.Parameter]) -> Outcome {
        let stateValues = parameters.filter { $0.name == "state" }.map(\.value)
        guard let state = stateValues.first else { return .unknownState(.missing) }
        guard stateValues.count == 1 else { return .unknownState(.repeated) }
        guard states.contains(where: { Self.constantTimeEqual($0, state) }) else { return .unknownState(.mismatch) }

        for name in Self.singleParameters where parameters.count(where: { $0.name == name }) > 1 {
            return .malformed("the parameter \(name) appears more than once")
        }
        let callback = LoopbackCallback(parameters: parameters)
        if let issuer, let received = callback.issuer, received != issuer {
            return .refused(.issuerMismatch(expected: issuer, received: received))
        }
        if let error = callback["error"] {
            return .refused(
                .identityProviderError(
                    code: error, description: callback["error_description"], uri: callback["error_uri"])
            )
        }
        if requiresCode, (callback.code ?? "").isEmpty {
            return .refused(.invalidResponse("the response has neither a code nor an error"))
        }
        return .accepted(callback)
    }

    // MARK: - Pasted redirect URLs

    /// The advice for an address that seems cut short.
    private static let cutShort =
        "; the address may be cut short: paste all of it, from the browser's address bar (it is long; "
        + "a terminal may show it over several lines)"

    /// The last value of the query parameter `name` in `target`, percent-decoded.
    private static func parameter(_ name: String, in target: String) -> String? {
        URLComponents(string: target)?.queryItems?.last { $0.name == name }?.value
    }

    /// The callback in a redirect URL the user pasted back (from a browser on another machine), or the reason it
    /// is not the awaited response.
    package func callback(fromPastedURL text: String) throws(LoopbackError) -> LoopbackCallback {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("/") || trimmed.contains("://") else {
            throw .notAwaitedResponse("it is not an address; paste the whole address from the browser's address bar")
        }
        let withoutFragment = trimmed.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        switch evaluate(target: String(withoutFragment)) {
        case .accepted(let callback):
            return callback
        case .refused(let error):
            throw error
        case .notFound:
            throw .notAwaitedResponse(
                "its path is not \(path); paste the address the browser shows after signing in")
        case .unknownState(.missing):
            throw .notAwaitedResponse(
                "it has no state parameter" + (withoutFragment.contains("code=") ? Self.cutShort : ""))
        case .unknownState(.repeated):
            throw .notAwaitedResponse("it has more than one state parameter")
        case .unknownState(.mismatch):
            // A state that is the start of this sign-in's: the address was cut short (a terminal's line end, a
            // partial selection), not taken from another sign-in.
            if let pasted = Self.parameter("state", in: String(withoutFragment)), !pasted.isEmpty,
                states.contains(where: { $0.count > pasted.count && $0.hasPrefix(pasted) })
            {
                throw .notAwaitedResponse(
                    "it is cut short: its state is only the start of this sign-in's" + Self.cutShort)
            }
            throw .notAwaitedResponse("its state belongs to another sign-in (an earlier attempt?)")
        case .malformed(let reason):
            throw .notAwaitedResponse(reason)
        }
    }

    // MARK: - Pieces

    /// The path and the query (without `?`) of a request target; absolute form loses its scheme and authority.
    static func splitTarget(_ target: Substring) -> (path: Substring, query: Substring) {
        var rest = target
        // Absolute form only when the target does not start with "/": a query may hold "://" itself (an
        // `iss=https://…` written without percent escapes, which RFC 3986 allows in a query).
        if !rest.hasPrefix("/"), let schemeEnd = rest.range(of: "://") {
            rest = rest[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            rest = rest[authorityEnd...]
        }
        guard let mark = rest.firstIndex(of: "?") else { return (rest.isEmpty ? "/" : rest, "") }
        let path = rest[..<mark]
        return (path.isEmpty ? "/" : path, rest[rest.index(after: mark)...])
    }

    static func splitTarget(_ target: String) -> (path: Substring, query: Substring) {
        splitTarget(target[...])
    }

    /// Whether two paths are the same once percent escapes are decoded.
    private static func samePath(_ requestPath: Substring, _ expected: String) -> Bool {
        if requestPath == expected[...] { return true }
        guard let decodedRequest = percentDecoded(requestPath, plusAsSpace: false),
            let decodedExpected = percentDecoded(expected[...], plusAsSpace: false)
        else { return false }
        return decodedRequest == decodedExpected
    }

    struct QueryError: Error, Equatable {
        let reason: String
    }

    /// Parses `application/x-www-form-urlencoded` pairs (`+` is a space); empty pieces are skipped.
    static func parseQuery(_ query: Substring) -> Result<[LoopbackCallback.Parameter], QueryError> {
        var parameters: [LoopbackCallback.Parameter] = []
        for piece in query.split(separator: "&") {
            let pair = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecoded(pair[0], plusAsSpace: true),
                let value = pair.count > 1 ? percentDecoded(pair[1], plusAsSpace: true) : ""
            else { return .failure(QueryError(reason: "the query has an invalid percent escape or is not UTF-8")) }
            parameters.append(.init(name: name, value: value))
        }
        return .success(parameters)
    }

    /// Decodes `%XX` escapes (and `+` when asked); nil for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring, plusAsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusAsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Compares secrets without stopping at the first difference (only the length leaks).
    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8), right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
