import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// The library speaks to apps: no error a library caller can receive names a command-line option (`--something`);
/// it names the library's settings and API. The tool words its own advice from the same cases.
@Suite("Library error wording")
struct LibraryErrorWordingTests {
    /// `--` and a letter, as an option is written (not a range of dashes, not `---`).
    static func flags(in text: String) -> [String] {
        let pattern = /(?:^|[^\w-])(--[a-zA-Z][a-zA-Z0-9-]*)/
        return text.matches(of: pattern).map { String($0.output.1) }
    }

    static let url = URL(string: "https://idp.example/o/authorize")!
    static let redirect = URL(string: "http://127.0.0.1:8400/callback")!

    /// Every case of the sign-in errors, with sample payloads.
    static var signInErrors: [any Error] {
        [
            SignInError.timedOut(after: .seconds(300), redirect: redirect),
            SignInError.missingCode(),
            SignInError.pastedURLRejected("it does not start with http://127.0.0.1"),
            SignInError.inputClosed(),
            SignInError.notLoopbackRedirect(URL(string: "https://app.example/callback")!),
            SignInError.missingIssuer(expected: "https://idp.example/o"),
            SignInError.browserFailed("the browser command exited with status 3"),
            SignInError.noRemotePath("there is no display (DISPLAY and WAYLAND_DISPLAY are not set)"),
            SignInError.noRemotePath("paste-back was asked for", deviceCodeRuledOut: true),
            SignInError.noRemoteLogout("this is an SSH session without a forwarded display"),
            SignInError.methodUnsupported(
                "out-of-band codes (urn:ietf:wg:oauth:2.0:oob) are an ArcGIS portal sign-in; an identity provider offers the device code instead."
            ),
            SignInError.portalHasNoDeviceCode(),
            SignInError.urlUnheard(),
            SignInError.unheard("the browser could not be started (the browser command exited with status 3)"),
            SignInError.requestRefused(authorizeURL: url, "invalid_client"),
            SignInError.missingIDToken(tokenURL: url),
            DeviceCodeError.notOffered(authorizeURL: url),
            DeviceCodeError.denied,
            DeviceCodeError.expired,
            DeviceCodeError.timedOut(after: .seconds(300)),
            DeviceCodeError.invalidResponse(endpoint: url, problem: "HTTP 500"),
            BrowserError(command: "firefox", reason: "No such file or directory"),
            SelectionError.ambiguous(choices: ["the portal https://gis.example/portal (alice, client ID abc)"]),
            SelectionError.unknownName("work", known: []),
            SelectionError.unknownName("work", known: ["home"]),
            SelectionError.unreadablePreferences("/home/alice/.local/state/portal-auth/preferences.json"),
            DiscoveryError.issuerMismatch(
                document: url, claimed: "https://evil.example", expected: "https://idp.example/o"),
            DiscoveryError.authorizeEndpointMismatch(
                document: url, advertised: "https://evil.example/authorize", configured: url),
        ]
    }

    /// Every case of the store's and the transport's errors.
    static var storeAndTransportErrors: [any Error] {
        let path = "/home/alice/.local/state/portal-auth/credentials.json"
        let stores: [any Error] = [
            CredentialStoreError.noLocation(),
            CredentialStoreError.unsafeFile(path, mode: 0o644, ownedByOther: false),
            CredentialStoreError.unsafeFile(path, mode: 0o600, ownedByOther: true),
            CredentialStoreError.unsafeDirectory(path, mode: 0o777, ownedByOther: false),
            CredentialStoreError.unsafeDirectory(path, mode: 0o700, ownedByOther: true),
            CredentialStoreError.notRegularFile(path),
            CredentialStoreError.corrupted(path, reason: "not JSON"),
            CredentialStoreError.unsupportedVersion(path, found: 99),
            CredentialStoreError.lockTimeout(path + ".lock", after: .seconds(30), holder: "process 42"),
            CredentialStoreError.cancelled(path + ".lock"),
            CredentialStoreError.fileSystem("write", path, SystemError(call: "open", errno: EACCES)),
        ]
        let keyring: [any Error] = [
            KeyringError.Kind.noLibrary, .noSessionBus, .noService, .locked, .timedOut, .failed, .corruptedItem,
        ]
        .map { KeyringError($0, message: "sample") }
        let kinds: [TransportError.Kind] = [
            .insecureHTTP, .unsupportedURL, .invalidHeader, .cannotResolveHost, .cannotConnect, .timedOut,
            .tlsVerificationFailed,
            .tlsHandshakeFailed, .caBundleUnusable, .clientCertificateUnusable, .clientCertificateRequired,
            .connectionFailed,
            .invalidResponse, .responseTooLarge, .responseHeadersTooLarge, .tooManyRedirects, .invalidRedirect,
            .curlSetup,
            .libraryUnavailable, .transferFailed,
        ]
        let transport: [any Error] = kinds.map {
            TransportError(
                $0, url: RedactedURL(url), detail: "sample detail", curlCode: 60, context: "/etc/ssl/bundle.pem")
        }
        return stores + keyring + transport
    }

    @Test("no sign-in, device-code, selection, discovery or browser error names a command-line option")
    func signInErrorsNameNoFlag() {
        for error in Self.signInErrors {
            let text = "\(error)"
            #expect(!text.isEmpty)
            #expect(Self.flags(in: text).isEmpty, "\(type(of: error)): \(text)")
        }
    }

    @Test("no store, keyring or transport error names a command-line option")
    func storeErrorsNameNoFlag() {
        for error in Self.storeAndTransportErrors {
            let text = "\(error)"
            #expect(Self.flags(in: text).isEmpty, "\(type(of: error)): \(text)")
        }
    }

    @Test("a refresh that failed after a server or network failure says \"try again later\" once (issue 45)")
    func tryAgainLaterOnce() {
        let endpoint = URL(string: "https://idp.example/o/token")!
        let failures = [
            "\(TokenEndpointError(.serverFailure, endpoint: endpoint, statusCode: 503))",
            "\(TransportError(.timedOut, url: RedactedURL(endpoint), detail: "Operation timed out"))",
        ]
        for failure in failures {
            #expect(failure.contains("try again later"), "\(failure)")
            for error in [
                CredentialError.unavailable("the portal https://gis.example/portal", attempts: 3, lastError: failure),
                CredentialError.outcomeUnknown("the portal https://gis.example/portal", reason: failure),
            ] {
                let text = "\(error)"
                #expect(text.components(separatedBy: "try again later").count == 2, "\(text)")
            }
        }
    }

    @Test("the errors an app can act on name the settings to change")
    func namesSettings() {
        #expect(
            "\(SignInError.timedOut(after: .seconds(300), redirect: Self.redirect))".contains("SignInSettings.timeout"))
        #expect("\(SignInError.noRemotePath("there is no display"))".contains("SignInSettings.browser"))
        #expect("\(DeviceCodeError.timedOut(after: .seconds(300)))".contains("SignInSettings.timeout"))
        #expect("\(KeyringError(.noSessionBus, message: "no bus"))".contains("PORTAL_AUTH_STORE=file"))
    }

    @Test(
        "the scan finds options",
        arguments: [
            ("use --no-browser", ["--no-browser"]), ("--store file", ["--store"]), ("a -- b", []), ("x---y", []),
            ("PORTAL_AUTH_STORE", []),
        ])
    func scanFinds(text: String, expected: [String]) {
        #expect(Self.flags(in: text) == expected)
    }

    /// A backstop for the cases no list above holds (errors made deep inside a flow): no string literal of the
    /// library's sources names an option, outside comments.
    @Test("no string literal of Sources/PortalAuth* names a command-line option")
    func sourcesNameNoFlag() throws {
        let sources = try LibraryPublicNamesTests.sources()
        #expect(
            sources.contains { $0.path.hasPrefix("PortalAuth/") }
                && sources.contains { $0.path.hasPrefix("PortalAuthStore/") })
        var found: [String] = []
        for source in sources {
            for (number, line) in source.lines.enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), let quote = code.firstIndex(of: "\"") else { continue }
                let literal = String(code[quote...]).components(separatedBy: " // ")[0]
                if !Self.flags(in: literal).isEmpty { found.append("\(source.path):\(number + 1): \(code)") }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
