import Foundation
import Testing

/// `token` and `refresh` read by the fast path (`FastCommandLine`) and by the full ArgumentParser command give the
/// same stdout, stderr and exit status, over a table of stores and command lines (issue 17).
///
/// Each case runs three times on a fresh copy of its store: with `PORTAL_AUTH_FAST_PATH=only` (the fast path,
/// or exit 70 with a fixed message when it does not take the command line), with `PORTAL_AUTH_FAST_PATH=off`
/// (the full parser) and without the variable. The table says which command lines the fast path takes, so a
/// fast path that silently stopped taking them fails here too.
@Suite("token and refresh: the fast path and the full parser agree")
struct FastPathDifferentialTests {
    /// How a case names its store.
    enum StoreChoice: String, Sendable {
        /// `--store PATH`.
        case path
        /// `PORTAL_AUTH_STORE=PATH`.
        case environment
        /// `--store file`: the file at `$XDG_STATE_HOME/portal-auth/credentials.json`.
        case file
        /// `--store auto` with no session bus: that file too.
        case auto
        /// No option and no variable (auto): that file too.
        case unnamed
        /// `--store keyring` with no session bus: refused at once.
        case keyring
    }

    /// One command line on one store.
    struct Case: Sendable, CustomTestStringConvertible {
        let store: FastPathStore
        let arguments: [String]
        /// Whether the fast path takes this command line (else the full parser does, also without the variable).
        let fast: Bool
        /// How the store is named.
        var storeChoice = StoreChoice.path
        /// Commands run first on the store (by the full parser), e.g. `name` and `use` (issue 16).
        var prepare: [[String]] = []

        var testDescription: String {
            let prepared = prepare.map { "\($0.joined(separator: " ")); " }.joined()
            return
                "\(store) (\(storeChoice)): \(prepared)\(arguments.joined(separator: " "))\(fast ? "" : " (full parser)")"
        }
    }

    private static let portal = FastPathStore.portal

    /// The table: every store with the common command lines, then options, bad values and forms the fast path
    /// leaves to the full parser.
    static let cases: [Case] = {
        var cases: [Case] = []
        for store in FastPathStore.allCases {
            cases.append(Case(store: store, arguments: ["token", "--portal", portal], fast: true))
            cases.append(Case(store: store, arguments: ["token", "--portal", portal, "--format", "json"], fast: true))
            cases.append(Case(store: store, arguments: ["refresh", "--portal", portal, "--timeout", "20"], fast: true))
            cases.append(Case(store: store, arguments: ["refresh", "--format", "json"], fast: true))
            cases.append(Case(store: store, arguments: ["token"], fast: true))
        }
        // Every way of naming the store (issue 14, 16): the same store chosen, the same refusal of a keyring
        // that cannot be used.
        for choice in [StoreChoice.file, .auto, .unnamed, .keyring, .environment] {
            cases.append(
                Case(store: .valid, arguments: ["token", "--format", "json"], fast: true, storeChoice: choice))
            cases.append(
                Case(
                    store: .expired, arguments: ["token", "--portal", portal, "--format", "json"], fast: true,
                    storeChoice: choice))
            cases.append(
                Case(store: .missing, arguments: ["token", "--portal", portal], fast: true, storeChoice: choice))
            cases.append(
                Case(
                    store: .several, arguments: ["refresh", "--name", "work", "--format", "header"], fast: true,
                    storeChoice: choice,
                    prepare: [["name", "work", "--portal", portal, "--client-id", "app2"]]))
        }
        // The default sign-in and names (issue 16).
        let name = ["name", "work", "--portal", portal, "--client-id", "app2"]
        let use = ["use", "--portal", portal, "--client-id", "app1"]
        let useIAP = ["use", "--iap", FastPathStore.iapFile]
        let named: [(arguments: [String], fast: Bool, prepare: [[String]])] = [
            (["token", "--name", "work"], true, [name]),
            (["token", "--name", "work", "--format", "json"], true, [name]),
            (["token", "--name", "other"], true, [name]),
            (["token", "--name", "other", "--format", "json"], true, [name]),
            (["token", "--name", "work"], true, []),
            (["token"], true, [use]),
            (["token", "--format", "json"], true, [use]),
            (["token", "--format", "header"], true, [useIAP]),
            (["token", "--id-token", "--format", "json"], true, [useIAP]),
            (["token", "--id-token"], true, [use]),
            (["token", "--format", "json"], true, [name]),
            (["refresh"], true, [use]),
            (["refresh", "--name", "work", "--format", "json"], true, [name]),
            (["token", "--portal", portal, "--client-id", "app2", "--format", "json"], true, [use]),
            (["token", "--name", "bad name"], false, []),
            (["token", "--name", "work", "--portal", portal], false, [name]),
            (["refresh", "--format", "xml"], false, [use]),
            (["refresh", "--name", "work", "--print-token", "--format", "json"], true, [name]),
        ]
        cases += named.map { Case(store: .several, arguments: $0.arguments, fast: $0.fast, prepare: $0.prepare) }

        let several: [(arguments: [String], fast: Bool)] = [
            (["token", "--portal", portal, "--client-id", "app2", "--format", "header"], true),
            (["token", "--portal=\(portal)", "--client-id=app1", "--format=json"], true),
            (["token", "--url", "https://maps.contoso.com/app/", "--format", "json"], true),
            (["token", "--url", "\(portal)/sharing/rest/portals/self"], true),
            (["token", "--url", "https://elsewhere.example.org/"], true),
            (["token", "--iap", FastPathStore.iapFile, "--id-token"], true),
            (["token", "--iap", FastPathStore.iapFile, "--id-token", "--format", "json", "--min-valid", "60"], true),
            (["token", "--iap", FastPathStore.iapFile, "--format", "header", "--header-name", "X-Token"], true),
            (["token", "--iap", "/etc/portal-auth/other.json"], true),
            (["token", "--url", "https://maps.contoso.com/app/", "--proxy-token", "access", "--format", "json"], true),
            (["token", "--iap", FastPathStore.iapFile, "--proxy-token", "id"], true),
            (["token", "--portal", portal, "--client-id", "app1", "--id-token"], true),
            (["token", "--portal", portal, "--client-id", "app1", "--min-valid", "0"], true),
            (["token", "--portal", portal, "--client-id", "app2", "--min-valid", "100000", "--timeout", "20"], true),
            (["token", "--portal", "https://GIS.example.com/portal/", "--client-id", "app1"], true),
            (["token", "--portal", "https://other.example.com/portal", "--client-id", "x"], true),
            (["refresh", "--portal", portal, "--client-id", "app2", "--print-token", "--timeout", "20"], true),
            (["refresh", "--url", "https://nowhere.example.org/"], true),
            // Bad values and combinations: the full parser reports them.
            (["token", "--portal", portal, "--min-valid", "-1"], false),
            (["token", "--iap", FastPathStore.iapFile, "--proxy-token", "both"], false),
            (["token", "--iap", FastPathStore.iapFile, "--proxy-token", "id", "--id-token"], false),
            (["token", "--portal", portal, "--min-valid", "soon"], false),
            (["token", "--portal", portal, "--format", "xml"], false),
            (["token", "--portal", portal, "--header-name", "X-Token"], false),
            (["token", "--portal", portal, "--format", "header", "--header-name", "Bad Name"], false),
            (["token", "--portal", "gis.example.com/portal"], false),
            (["token", "--portal", portal, "--iap", FastPathStore.iapFile], false),
            (["token", "--client-id", "app1"], false),
            (["token", "--portal", portal, "--timeout", "0"], false),
            (["token", "--portal", portal, "--ca-bundle", "/nonexistent/ca.pem"], false),
            (["token", "--portal", portal, "--portal", portal], false),
            (["token", "--portal", portal, "--format"], false),
            (["token", "--portal", ""], false),
            (["token", "--portal", portal, "--id-token=yes"], false),
            (["token", "--portal", portal, "extra"], false),
            (["token", "--portal", portal, "--", "--format", "json"], false),
            (["refresh", "--portal", portal, "--min-valid", "10"], false),
            // Options the fast path leaves to the full parser.
            (["token", "--portal", portal, "--interactive"], false),
            (["token", "--portal", portal, "--no-browser"], false),
            (["token", "--help"], false),
            (["token", "-h"], false),
            (["refresh", "--help"], false),
            (["status"], false),
        ]
        cases += several.map { Case(store: .several, arguments: $0.arguments, fast: $0.fast) }
        cases.append(
            Case(
                store: .valid, arguments: ["token", "--portal", portal, "--format", "header"], fast: true,
                storeChoice: .environment))
        return cases
    }()

    @Test("same stdout, stderr and exit status", arguments: cases)
    func samePathResults(_ testCase: Case) async throws {
        // One moment for the three stores, so that their expiry times are the same.
        let now = Int64(Date().timeIntervalSince1970)
        let fast = try await run(testCase, mode: "only", now: now)
        let full = try await run(testCase, mode: "off", now: now)
        let automatic = try await run(testCase, mode: nil, now: now)
        if testCase.fast {
            #expect(!fast.stderr.contains("PORTAL_AUTH_FAST_PATH=only"), "the fast path refused it:\n\(fast.stderr)")
            #expect(fast == full, "fast path:\n\(fast)\nfull parser:\n\(full)")
        } else {
            #expect(
                fast.status == 70 && fast.stderr.contains("PORTAL_AUTH_FAST_PATH=only"),
                "the fast path took it:\n\(fast)")
        }
        #expect(automatic == full, "automatic:\n\(automatic)\nfull parser:\n\(full)")
        #expect(!full.stderr.contains("RT-"), "a refresh token reached stderr")
    }

    // MARK: - Running

    /// What one run printed, with the seconds left (which tick between runs) masked.
    struct Outcome: Equatable, CustomStringConvertible {
        let status: Int32
        let stdout: String
        let stderr: String
        var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    private func run(_ testCase: Case, mode: String?, now: Int64) async throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "portal-auth-fast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("state")
        // No session bus (and none at $XDG_RUNTIME_DIR/bus): auto falls back to the file, keyring is refused.
        var environment = [
            "XDG_STATE_HOME": state.path, "XDG_RUNTIME_DIR": directory.path, "DBUS_SESSION_BUS_ADDRESS": "",
            "PORTAL_AUTH_STORE": "",
        ]
        var store = directory.appendingPathComponent("credentials.json")
        var storeWords: [String] = []
        switch testCase.storeChoice {
        case .path: storeWords = ["--store", store.path]
        case .environment: environment["PORTAL_AUTH_STORE"] = store.path
        case .file, .auto, .unnamed, .keyring:
            let folder = state.appendingPathComponent("portal-auth")
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            store = folder.appendingPathComponent("credentials.json")
            if testCase.storeChoice != .unnamed { storeWords = ["--store", testCase.storeChoice.rawValue] }
        }
        try testCase.store.write(to: store, now: now)
        // The preparation names the store itself: `--store keyring` would refuse it.
        let prepareWords = testCase.storeChoice == .keyring ? ["--store", store.path] : storeWords
        for command in testCase.prepare {
            let prepared = try await ToolRunner.run(
                command + prepareWords, environment: environment.merging(["PORTAL_AUTH_FAST_PATH": "off"]) { $1 },
                timeout: .seconds(60))
            try #require(prepared.status == 0, "preparing with \(command): \(prepared)")
        }
        environment["PORTAL_AUTH_FAST_PATH"] = mode ?? ""
        var arguments = testCase.arguments
        if arguments.first == "token" || arguments.first == "refresh" { arguments += storeWords }
        let result = try await ToolRunner.run(arguments, environment: environment, timeout: .seconds(60))
        #expect(!result.timedOut, "\(result)")
        return Outcome(
            status: result.status,
            stdout: Self.masked(result.stdout, directory: directory),
            stderr: Self.masked(result.stderr, directory: directory))
    }

    /// `text` with the run's directory, the seconds-left figures (`"expires_in": 7199`, `(99 s)`) and libcurl's
    /// time to a failed connect (`after 1 ms`, which ticks between runs on a loaded machine) masked.
    private static func masked(_ text: String, directory: URL) -> String {
        var text = text.replacingOccurrences(of: directory.path, with: "DIR")
        for pattern in [#"(_in": )[0-9]+"#, #"\(([0-9]+) s\)"#, #"valid for [0-9]+ s"#, #"after [0-9]+ ms"#] {
            text = text.replacingOccurrences(of: pattern, with: "N", options: .regularExpression)
        }
        return text
    }
}
