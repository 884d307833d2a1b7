import Foundation
import Testing
@testable import PortalAuth

/// The machines a sign-in runs on (issue 34, "Done when"): what each sets and takes away from this process's
/// environment, for the tool (a child's environment) and for the library client (this process's, while its case runs).
enum MachineEnvironment: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A display (Xvfb) and `$BROWSER`: the desktop case.
    case display
    /// No display (`DISPLAY`, `WAYLAND_DISPLAY` unset) and `$BROWSER` naming a command that drives the real Chromium.
    case browserVariable
    /// No display, no terminal, no `$BROWSER`: the device code is shown by the app (the tool's standard error, the
    /// library client's observer), and the test's browser approves it.
    case deviceCode
    /// No D-Bus session at all (`DBUS_SESSION_BUS_ADDRESS` unset, no bus in `XDG_RUNTIME_DIR`): the automatic store
    /// is the private file, which keeps the sign-in. The browser is named explicitly (this case is about storage).
    case noSessionBus
    /// WSL without WSLg, simulated: `WSL_DISTRO_NAME` set, no display, no `$BROWSER`, and a `wslview` on `PATH` that
    /// drives the real Chromium.
    case wsl

    var testDescription: String {
        switch self {
        case .display: "a display (Xvfb)"
        case .browserVariable: "no display, $BROWSER"
        case .deviceCode: "no display, no terminal, device code shown by the app"
        case .noSessionBus: "no D-Bus session"
        case .wsl: "WSL (WSL_DISTRO_NAME, wslview)"
        }
    }

    /// Whether a browser can be opened there (the sign-out's browser logout needs one).
    var opensBrowser: Bool { self != .deviceCode }

    /// The variables every process of the case is without.
    static let removed = [
        "DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "WSL_DISTRO_NAME", "WSL_INTEROP", "SSH_CONNECTION", "SSH_CLIENT",
        "SSH_TTY",
        "PORTAL_AUTH_STORE",
    ]
}

/// One machine prepared for a case: its scratch folder, store, Xvfb when it has a display, the browser command that
/// records each launch, and the variables.
final class PreparedMachine: @unchecked Sendable {
    let environment: MachineEnvironment
    let provider: IAPProxyServer.Provider
    let store: ScratchStore
    /// The browser driver (headless Chromium through Selenium).
    let driver: String
    /// A command that records its URL's launch in `launches` and runs the driver: `$BROWSER`, `wslview`, the named
    /// browser command.
    let browser: String
    /// What the variables of the case set (and `MachineEnvironment.removed` takes away).
    let variables: [String: String]
    private let desktop: VirtualDesktop?

    init(_ environment: MachineEnvironment, provider: IAPProxyServer.Provider, proxy: IAPProxyServer) throws {
        self.environment = environment
        self.provider = provider
        store = try ScratchStore()
        driver = provider.name == "glewlwyd" ? try GlewlwydServer.current().browser : try TestServer.current().browser
        let bin = store.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let name = environment == .wsl ? "wslview" : "test-browser"
        browser = bin.appendingPathComponent(name).path
        let script =
            "#!/bin/sh\necho launched >> '\(store.directory.appendingPathComponent("launches").path)'\nexec '\(driver)' \"$@\"\n"
        try Data(script.utf8).write(to: URL(fileURLWithPath: browser))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: browser)

        // The provider's browser credentials and log; the store at the scratch path, or (no session bus) chosen.
        var variables = try proxy.environment(provider, store)
        variables["XDG_STATE_HOME"] = store.directory.appendingPathComponent("state-home").path
        switch environment {
        case .display:
            let desktop = try VirtualDesktop()
            self.desktop = desktop
            variables.merge(desktop.environment) { $1 }
            variables["BROWSER"] = browser
        case .browserVariable:
            desktop = nil
            variables["BROWSER"] = browser
        case .deviceCode:
            desktop = nil
        case .noSessionBus:
            desktop = nil
            variables["PORTAL_AUTH_STORE"] = nil
            let runtime = store.directory.appendingPathComponent("runtime")
            try FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            variables["XDG_RUNTIME_DIR"] = runtime.path
        case .wsl:
            desktop = nil
            variables["WSL_DISTRO_NAME"] = "PortalAuthTest"
            variables["PATH"] = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        }
        self.variables = variables
    }

    /// The variables the tool's processes are without.
    var removed: [String] {
        MachineEnvironment.removed + (environment == .noSessionBus ? ["DBUS_SESSION_BUS_ADDRESS"] : [])
    }

    /// The store file: the scratch path, or where the automatic choice puts it.
    var storePath: String {
        variables["PORTAL_AUTH_STORE"]
            ?? store.directory.appendingPathComponent("state-home/portal-auth/credentials.json").path
    }

    /// How many times the recording browser command was started.
    var launches: Int {
        let text =
            (try? String(contentsOfFile: store.directory.appendingPathComponent("launches").path, encoding: .utf8))
            ?? ""
        return text.split(separator: "\n").count
    }

    /// The stored entries (none when the file is not there).
    func entries() throws -> [String: JSONValue] {
        guard FileManager.default.fileExists(atPath: storePath) else { return [:] }
        guard
            case .object(let entries)? = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: storePath)))[
                "entries"]
        else { return [:] }
        return Dictionary(uniqueKeysWithValues: entries.members.map { ($0.key, $0.value) })
    }

    /// The permission bits of the store file.
    func storeMode() throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: storePath)[.posixPermissions] as? Int)
    }

    /// Runs `body` with this process's environment as the machine's (for the library client and the browsers it
    /// starts), and puts it back afterwards. The suite is serialized, and `scripts/test` runs the integration tests
    /// one at a time, so nothing else reads the environment meanwhile.
    func withProcessEnvironment<T>(_ body: () async throws -> T) async rethrows -> T {
        let names = Set(removed + Array(variables.keys))
        var saved: [String: String?] = [:]
        for name in names { saved[name] = ProcessInfo.processInfo.environment[name] }
        for name in removed { unsetenv(name) }
        for (name, value) in variables { setenv(name, value, 1) }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        return try await body()
    }
}
