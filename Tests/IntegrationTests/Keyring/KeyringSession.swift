import Foundation
import Testing
@testable import PortalAuth

/// A private desktop keyring for a test: `scripts/keyring start` with a folder of its own (a D-Bus session bus
/// and gnome-keyring-daemon, unlocked with a random password), stopped when the value goes away.
final class KeyringSession: Sendable {
    /// The session bus address the tool is given.
    let busAddress: String
    let directory: URL
    /// Whether this value started the keyring (and stops it).
    private let owned: Bool

    /// The keyring `scripts/test` started (`PORTAL_AUTH_TEST_KEYRING_ENV` names its environment file), else a new one.
    static func shared() throws -> KeyringSession {
        guard let file = ProcessInfo.processInfo.environment["PORTAL_AUTH_TEST_KEYRING_ENV"], !file.isEmpty else {
            return try KeyringSession()
        }
        return try KeyringSession(environmentFile: URL(fileURLWithPath: file))
    }

    private init(environmentFile: URL) throws {
        directory = environmentFile.deletingLastPathComponent()
        owned = false
        busAddress = try Self.busAddress(in: environmentFile)
    }

    private static func busAddress(in file: URL) throws -> String {
        let environment = try String(contentsOf: file, encoding: .utf8)
        let line = try #require(
            environment.split(separator: "\n").first { $0.hasPrefix("export DBUS_SESSION_BUS_ADDRESS=") })
        return String(line.dropFirst("export DBUS_SESSION_BUS_ADDRESS=".count)).trimmingCharacters(
            in: CharacterSet(charactersIn: "'"))
    }

    /// The project's `scripts/keyring`.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/keyring").path
    }

    /// Starts a keyring (or only a session bus, `busOnly`) in a new temporary folder.
    init(busOnly: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-keyring-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let started = try Self.run(["start"] + (busOnly ? ["--bus-only"] : []), directory: directory)
        try #require(started.status == 0, "scripts/keyring start failed: \(started.output)")
        owned = true
        busAddress = try Self.busAddress(in: directory.appendingPathComponent("keyring.env"))
    }

    deinit {
        guard owned else { return }
        _ = try? Self.run(["stop"], directory: directory)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Locks the login collection, as a screen lock would.
    func lock() throws {
        let result = try Self.run(["lock"], directory: directory)
        try #require(result.status == 0, "scripts/keyring lock failed: \(result.output)")
    }

    /// Kills gnome-keyring-daemon (SIGKILL, as a crash); the session bus stays.
    func killDaemon() throws {
        let result = try Self.run(["kill-daemon"], directory: directory)
        try #require(result.status == 0, "scripts/keyring kill-daemon failed: \(result.output)")
    }

    /// Starts gnome-keyring-daemon again on the same bus with the keyring's password, as a new login does: the login
    /// collection is unlocked, with its items as the daemon saved them.
    func unlock() throws {
        let result = try Self.run(["unlock"], directory: directory)
        try #require(result.status == 0, "scripts/keyring unlock failed: \(result.output)")
    }

    /// Stops (SIGSTOP, `stopped` true) or continues (SIGCONT) gnome-keyring-daemon: a Secret Service that never
    /// answers while its name stays on the bus.
    func pauseDaemon(_ stopped: Bool) throws {
        let text = try String(contentsOf: directory.appendingPathComponent("daemon.pid"), encoding: .utf8)
        let pid = try #require(
            Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), "no daemon pid in \(directory.path)")
        try #require(kill(pid, stopped ? SIGSTOP : SIGCONT) == 0, "cannot signal the keyring daemon \(pid)")
    }

    /// The attributes of the portal-auth items of the store at `storePath` (`secret-tool search`).
    func items(storePath: String) throws -> [[String: String]] {
        let result = try Self.command(
            ["secret-tool", "search", "--all", "--unlock", "store", storePath], bus: busAddress)
        var items: [[String: String]] = []
        for line in result.output.split(separator: "\n") {
            if line.hasPrefix("[/") { items.append([:]) }
            if line.hasPrefix("attribute."), let equals = line.range(of: " = ") {
                items[items.count - 1][String(line[line.index(line.startIndex, offsetBy: 10)..<equals.lowerBound])] =
                    String(line[equals.upperBound...])
            }
        }
        return items
    }

    /// The entry a store's keyring item holds (for checks the tool itself never prints).
    func itemEntry(storePath: String, key: String, generation: String) throws -> JSONValue {
        let result = try Self.command(
            ["secret-tool", "lookup", "store", storePath, "entry", key, "generation", generation], bus: busAddress)
        try #require(result.status == 0, "no item: \(result.output)")
        return try JSONValue.parse(result.output)
    }

    // MARK: - Running

    struct Output {
        let status: Int32
        let output: String
    }

    private static func run(_ arguments: [String], directory: URL) throws -> Output {
        try command(["bash", script] + arguments, environment: ["PORTAL_AUTH_KEYRING_DIR": directory.path])
    }

    private static func command(_ arguments: [String], bus: String? = nil, environment: [String: String] = [:]) throws
        -> Output
    {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let bus { merged["DBUS_SESSION_BUS_ADDRESS"] = bus }
        process.environment = merged
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
