package import Foundation
import PortalAuth

/// One call per fuzz target: feeds arbitrary bytes through a parser the way the library meets them, and returns
/// the invariants the input broke (empty when none).
///
/// Shared by the libFuzzer executables under `Tests/Fuzz/` (which crash on a broken invariant so libFuzzer keeps
/// the input) and by the unit test that replays `Fixtures/fuzz/<target>/` on every `swift test`. A target of its
/// own, outside the `PortalAuth` product: it reaches the parsers through PortalAuth's `package` API (not
/// `@testable import`, which would tie fuzzing to debug builds).
package enum FuzzEntryPoints {
    /// The fuzz targets, by the name used for `Fixtures/fuzz/<name>/` and `scripts/fuzz`.
    package static let targets: [String: @Sendable (Data) -> [String]] = [
        "iap-configuration": iapConfiguration,
        "host-pattern": hostPattern,
        "callback-request": callbackRequest,
        "token-response": tokenResponse,
        "stored-credential": storedCredential,
    ]

    // MARK: - IAP configuration loader

    /// The bytes of an IAP configuration file, through the loader's checks, decoder and error messages.
    package static func iapConfiguration(_ data: Data) -> [String] {
        var broken: [String] = []
        let file = URL(fileURLWithPath: "/fuzz/iap.json")
        let report = IAPConfiguration.report(parsing: data, file: file)
        // Exactly one of a configuration and an error.
        if (report.configuration == nil) == (report.error == nil) {
            broken.append("configuration and error are both \(report.configuration == nil ? "absent" : "present")")
        }
        if let error = report.error {
            if error.description.isEmpty { broken.append("an error with an empty description") }
            if error.kind == .invalidConfiguration, error.issues.isEmpty {
                broken.append("an invalid file without issues")
            }
        }
        for issue in report.errors + report.warnings where issue.description.isEmpty {
            broken.append("an issue with an empty description")
        }
        if let configuration = report.configuration {
            for url in probeURLs { _ = configuration.canBeUsed(for: url) }
            if configuration.isLoopbackRedirect {
                do {
                    _ = try LoopbackEndpoint(redirectURL: configuration.redirectURL)
                } catch {
                    broken.append("a loopback redirect URL the listener refuses: \(error)")
                }
            }
            if configuration.hostPatterns.count != configuration.hostsBehindProxy.count {
                broken.append("a valid configuration with an unparsable host pattern")
            }
        }
        return broken
    }

    // MARK: - Host patterns

    /// A host pattern and a URL, separated by the first line feed: parsing, matching, and the rules a match
    /// must keep.
    package static func hostPattern(_ data: Data) -> [String] {
        var broken: [String] = []
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let patternText = String(parts[0])
        let url = parts.count > 1 ? URL(string: String(parts[1])) : nil

        guard let pattern = try? HostPattern(patternText) else { return broken }
        // Parsing is stable: the pattern as written parses to the same pattern.
        if let again = try? HostPattern(pattern.text), again != pattern {
            broken.append("parsing \(patternText.debugDescription) twice gives different patterns")
        } else if (try? HostPattern(pattern.text)) == nil {
            broken.append("\(patternText.debugDescription) parses once but not twice")
        }
        guard let url else { return broken }
        let matched = pattern.matches(url)
        let host = URLNormalization.host(of: url)
        if matched {
            guard let host else {
                broken.append("a match for a URL without a host")
                return broken
            }
            switch pattern.hosts {
            case .any: break
            case .exact(let exact):
                if host != exact { broken.append("an exact pattern matched another host") }
            case .domain(let domain):
                // Never `evilcontoso.com` for `*.contoso.com`.
                if host != domain && !host.hasSuffix("." + domain) {
                    broken.append("a domain pattern matched outside it")
                }
            }
            if let port = pattern.port, URLNormalization.effectivePort(of: url) != port {
                broken.append("a pattern with a port matched another port")
            }
        }
        // The URL's own host, as a pattern that names exactly that host, covers the URL.
        if let host, !host.isEmpty {
            let own = host.contains(":") ? "[\(host)]" : host
            if let ownPattern = try? HostPattern(own), ownPattern.hosts == .exact(host), !ownPattern.matches(url) {
                broken.append("the pattern of a URL's own host \(own.debugDescription) does not match it")
            }
        }
        return broken
    }

    // MARK: - Loopback callback requests

    /// A request as the loopback listener reads it: found in pieces (the listener's incremental scan), parsed,
    /// checked for its Host, evaluated against one pending sign-in, and answered with a page.
    package static func callbackRequest(_ data: Data) -> [String] {
        var broken: [String] = []
        let bytes = Array(data)
        let limit = 16 * 1024

        // The end of the head, found in one pass and in the listener's pieces (each scan starts 2 bytes back).
        let whole = HTTPRequestHead.endOfHead(in: Array(bytes.prefix(limit)))
        var buffer: [UInt8] = []
        var scanned = 0
        var pieced: Int?
        let pieceSize = 1 + Int(bytes.first ?? 0) % 7
        var offset = 0
        while offset < min(bytes.count, limit), pieced == nil {
            let end = min(offset + pieceSize, bytes.count, limit)
            buffer += bytes[offset..<end]
            offset = end
            pieced = HTTPRequestHead.endOfHead(in: buffer, from: scanned - 2)
            scanned = buffer.count
        }
        if whole != pieced {
            broken.append(
                "the incremental scan finds the end at \(String(describing: pieced)), not \(String(describing: whole))")
        }

        let evaluator = CallbackEvaluator(path: "/callback", states: [pendingState], issuer: "https://issuer.example")
        let page: CallbackPage
        if let end = whole {
            do throws(HTTPRequestHead.ParseError) {
                let request = try HTTPRequestHead.parse(bytes[..<end])
                if let host = request.header("Host"), !LoopbackEndpoint.isLoopbackHostHeader(host) {
                    page = .wrongHost
                } else if request.method != "GET" && request.method != "HEAD" {
                    page = .methodNotAllowed
                } else {
                    let outcome = evaluator.evaluate(target: request.target)
                    broken += check(outcome, target: request.target)
                    page = self.page(for: outcome)
                }
            } catch {
                switch error {
                case .unsupportedVersion: page = .versionNotSupported
                case .malformed(let reason): page = .badRequest(reason)
                }
            }
        } else {
            page = .headTooLarge
        }
        for headOnly in [false, true] {
            let response = page.response(headOnly: headOnly).bytes
            if !response.starts(with: Array("HTTP/1.1 ".utf8)) { broken.append("a response that is not HTTP/1.1") }
        }

        // The same bytes pasted back as a redirect URL.
        if let pasted = String(validating: bytes, as: UTF8.self) {
            if let callback = try? evaluator.callback(fromPastedURL: pasted), callback.state != pendingState {
                broken.append("a pasted URL accepted with another state")
            }
        }
        return broken
    }

    private static let pendingState = "s-123"

    /// Accepted means the one pending state and a code; nothing else may end the wait except a refusal.
    private static func check(_ outcome: CallbackEvaluator.Outcome, target: String) -> [String] {
        guard case .accepted(let callback) = outcome else { return [] }
        var broken: [String] = []
        if callback.state != pendingState { broken.append("accepted with another state") }
        if (callback.code ?? "").isEmpty { broken.append("accepted without a code") }
        if let issuer = callback.issuer, issuer != "https://issuer.example" {
            broken.append("accepted with another issuer")
        }
        return broken
    }

    private static func page(for outcome: CallbackEvaluator.Outcome) -> CallbackPage {
        switch outcome {
        case .notFound: .notFound
        case .unknownState(let reason): .unknownState(reason)
        case .malformed(let reason): .malformedCallback(reason)
        case .refused(let error): .failure(error)
        case .accepted: .success(title: "Signed in", message: "You can close this tab.")
        }
    }

    // MARK: - Token responses

    /// A token endpoint's answer: the first byte picks the status and content type, the rest is the body.
    package static func tokenResponse(_ data: Data) -> [String] {
        var broken: [String] = []
        let selector = Int(data.first ?? 0)
        let status = tokenStatuses[selector % tokenStatuses.count]
        let contentType = tokenContentTypes[(selector / tokenStatuses.count) % tokenContentTypes.count]
        var headers: TransportHeaders = []
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        if (300..<400).contains(status) { headers.add(name: "Location", value: "/elsewhere?code=secret") }
        let endpoint = URL(string: "https://portal.example/sharing/rest/oauth2/token")!
        let response = TransportResponse(statusCode: status, headers: headers, body: data.dropFirst(), url: endpoint)
        do {
            let tokens = try TokenResponse.parse(response, endpoint: endpoint)
            if tokens.accessToken.isEmpty { broken.append("a token response with an empty access token") }
            if !(200..<300).contains(status) { broken.append("tokens accepted from HTTP \(status)") }
            // A token long enough to be told apart from the words around it (and from the user name shown there).
            let token = tokens.accessToken
            if token.count >= 8, !(tokens.username ?? "").contains(token), !tokens.tokenType.contains(token),
                tokens.description.contains(token)
            {
                broken.append("the description shows the access token")
            }
        } catch {
            let message = error.description
            if message.isEmpty { broken.append("an error with an empty description") }
            if message.contains("secret") && !data.isEmpty && !String(decoding: data, as: UTF8.self).contains("secret")
            {
                broken.append("the error shows the redirect's query")
            }
        }
        return broken
    }

    private static let tokenStatuses = [200, 200, 200, 201, 302, 400, 401, 403, 404, 429, 500, 502, 503, 204]
    private static let tokenContentTypes: [String?] = [
        "application/json", "application/json; charset=utf-8", nil, "text/plain", "text/html",
        "application/problem+json",
        "",
    ]

    // MARK: - Stored credentials

    /// The bytes of a store file: decoded, every entry read back as a credential, rebuilt as the credential store
    /// does, summarised as `status` shows it, and written again (the store rewrites entries it keeps).
    package static func storedCredential(_ data: Data) -> [String] {
        var broken: [String] = []
        guard let entries = try? StoreDocument.decode(data, path: "/fuzz/credentials.json") else { return broken }
        for (key, entry) in entries {
            guard let record = StoredCredential(json: .object(entry)) else { continue }
            _ = record.credential(persistence: nil, settings: fuzzSettings)
            _ = CredentialSummary(record)
            // The refresh decisions do arithmetic on the stored times and lifetimes.
            _ = TokenKeeper.needsRefresh(record, margin: .seconds(300), now: Date())
            _ = TokenKeeper.needsExchange(record, now: Date())
            _ =
                TokenInfo(
                    accessToken: record.accessToken, expirationDate: record.accessTokenExpiresAt, isSSLRequired: true)?
                .description
            // Writing the entry and reading it back gives the same record (timestamps are whole seconds).
            let written = StoreDocument.encode([key: record.json.objectValue ?? [:]])
            guard let reread = try? StoreDocument.decode(written, path: "/fuzz/credentials.json")[key],
                let again = StoredCredential(json: .object(reread))
            else {
                broken.append("an entry that cannot be read back after writing")
                continue
            }
            if again.json != record.json { broken.append("an entry that changes when written and read back") }
        }
        return broken
    }

    /// Settings for rebuilt credentials; nothing is sent.
    private static let fuzzSettings = SignInSettings(browser: nil)

    // MARK: - Shared probes

    private static let probeURLs: [URL] = [
        "https://maps.contoso.com/arcgis", "http://evilcontoso.com", "https://contoso.com:8443/", "http://[::1]:80/",
        "https://xn--bcher-kva.example/", "http://10.0.0.5", "file:///etc/passwd",
    ].compactMap(URL.init(string:))
}
