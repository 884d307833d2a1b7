import Foundation
import Logging
import Synchronization
import Testing
@testable import PortalAuth
@testable import PortalAuthStore
import PortalAuthTesting

/// `setupPersistentCredentialStorage(access:)` where no keyring can be used (issue 34): the private files, the place
/// reported, the tokens kept for the next session; and the strict form that wants the keyring only. The keyring is the
/// in-memory Secret Service (`InMemorySecretStorage`), the environment a dictionary: nothing of the machine's is used.
@Suite("Persistent credential storage without a keyring")
struct PersistentStorageFallbackTests {
    let space = ProtectionSpace(host: "gis.example.com", port: 443)

    /// A home of its own: the state folder inside `directory`, and no session bus unless `bus` is given.
    static func environment(_ directory: TemporaryDirectory, bus: Bool = false) -> [String: String] {
        var environment = [
            "HOME": directory.path, "XDG_STATE_HOME": "\(directory.path)/state",
            "XDG_RUNTIME_DIR": "\(directory.path)/runtime",
        ]
        if bus { environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory.path)/runtime/bus" }
        return environment
    }

    static func manager(_ lines: LogLines = LogLines()) -> AuthenticationManager {
        AuthenticationManager(
            settings: SignInSettings(
                browser: nil, httpClient: ScriptedHTTPClient([]),
                logger: Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }))
    }

    static func mode(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test(
        "no session bus: both stores go to private 0600 files, the place and its reason are reported and logged, and the next manager finds the tokens"
    )
    func noSessionBus() async throws {
        let directory = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        let lines = LogLines()
        let manager = Self.manager(lines)
        try await manager.setupPersistentCredentialStorage(
            requiringKeyring: false, environment: Self.environment(directory), storage: storage)

        // TemporaryDirectory's path may hold "//"; the store's paths are normalised.
        let root = directory.path.replacingOccurrences(of: "//", with: "/")
        let storeFile = "\(root)/state/portal-auth/credentials.json"
        let networkFile = "\(root)/state/portal-auth/credentials-network.json"
        let arcGIS = manager.arcGISCredentialStore.storageLocation
        #expect(arcGIS.kind == .file)
        #expect(arcGIS.path == storeFile)
        #expect(arcGIS.reason?.contains("no D-Bus session bus") == true, "\(arcGIS)")
        let network = manager.networkCredentialStore.storageLocation
        #expect(network.kind == .file)
        #expect(network.path == networkFile)
        #expect(manager.networkCredentialStore.isPersistent)
        #expect(lines.text.contains("persistent credential storage set up"), "\(lines.text)")
        #expect(
            lines.text.contains("the private file \(storeFile)")
                && lines.text.contains("the private file \(networkFile)"), "\(lines.text)")
        #expect(storage.calls == 0, "without a bus the keyring is not even asked")

        try await manager.arcGISCredentialStore.addAndPersist(
            SignOutFakes.portalCredential(http: ScriptedHTTPClient([])))
        try await manager.networkCredentialStore.add(.password(username: "alice", password: "pw-secret-1"), for: space)
        try await manager.networkCredentialStore.waitForPersistence()
        #expect(try Self.mode(of: storeFile) == 0o600)
        #expect(try Self.mode(of: networkFile) == 0o600)
        #expect(try Self.mode(of: "\(directory.path)/state/portal-auth") == 0o700)
        #expect(
            try String(contentsOfFile: storeFile, encoding: .utf8).contains("REFRESH-SECRET"),
            "the tokens are in the file itself")
        #expect(try String(contentsOfFile: networkFile, encoding: .utf8).contains("pw-secret-1"))
        #expect(storage.items.isEmpty)
        #expect(!lines.text.contains("REFRESH-SECRET") && !lines.text.contains("pw-secret-1"), "no secret in the log")

        // The next session.
        let next = Self.manager()
        try await next.setupPersistentCredentialStorage(
            requiringKeyring: false, environment: Self.environment(directory), storage: storage)
        #expect(next.arcGISCredentialStore.credentials.map(\.kind.name) == ["oauth-user"])
        let password = await next.networkCredentialStore.transportCredentials(
            for: URL(string: "https://gis.example.com/portal")!
        ).password
        #expect(password?.username == "alice" && password?.password == "pw-secret-1")
    }

    @Test(
        "a locked keyring: the private files, with the keyring's reason; an unlocked one: the keyring for both stores")
    func lockedOrUnlocked() async throws {
        let directory = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        storage.setProbeError(KeyringError(.locked, message: "the default collection is locked"))
        let locked = Self.manager()
        try await locked.setupPersistentCredentialStorage(
            requiringKeyring: false, environment: Self.environment(directory, bus: true), storage: storage)
        #expect(locked.arcGISCredentialStore.storageLocation.kind == .file)
        #expect(
            locked.arcGISCredentialStore.storageLocation.reason?.contains("the default collection is locked") == true)
        #expect(locked.networkCredentialStore.storageLocation.kind == .file)

        storage.setProbeError(nil)
        let unlocked = Self.manager()
        try await unlocked.setupPersistentCredentialStorage(
            requiringKeyring: false, environment: Self.environment(directory, bus: true), storage: storage)
        #expect(unlocked.arcGISCredentialStore.storageLocation.kind == .keyring)
        #expect(unlocked.networkCredentialStore.storageLocation.kind == .keyring)
        try await unlocked.networkCredentialStore.add(.password(username: "alice", password: "pw-secret-2"), for: space)
        #expect(storage.items.map(\.secret) == ["pw-secret-2"], "in the keyring, not a file")
    }

    @Test(
        "requiringKeyring without a keyring: throws the keyring's error, both stores stay as they were, nothing is written"
    )
    func strictWithoutKeyring() async throws {
        let directory = try TemporaryDirectory()
        let manager = Self.manager()
        let arcGIS = manager.arcGISCredentialStore
        let network = manager.networkCredentialStore
        let error = await #expect(throws: KeyringError.self) {
            try await manager.setupPersistentCredentialStorage(
                requiringKeyring: true, environment: Self.environment(directory), storage: InMemorySecretStorage())
        }
        #expect(error?.kind == .noSessionBus)
        #expect(manager.arcGISCredentialStore === arcGIS)
        #expect(manager.networkCredentialStore === network)
        #expect(!FileManager.default.fileExists(atPath: "\(directory.path)/state"), "no file made")
    }

    @Test(
        "requiringKeyring, the keyring gone between the two stores: the ArcGIS store is put back and the error thrown")
    func strictRollsBack() async throws {
        let directory = try TemporaryDirectory()
        let storage = ProbeFailingAfter(probes: 1)
        let manager = Self.manager()
        let arcGIS = manager.arcGISCredentialStore
        let network = manager.networkCredentialStore
        let error = await #expect(throws: KeyringError.self) {
            try await manager.setupPersistentCredentialStorage(
                requiringKeyring: true, environment: Self.environment(directory, bus: true), storage: storage)
        }
        #expect(error?.kind == .noService)
        #expect(storage.probes == 2, "the ArcGIS store was made persistent first")
        #expect(manager.arcGISCredentialStore === arcGIS)
        #expect(manager.networkCredentialStore === network)
        #expect(manager.arcGISCredentialStore.storageLocation == .memory)
    }

    @Test(
        "the network credentials' file: each change is applied to the file as re-read, so two stores on one file keep both; removals reach it"
    )
    func networkFileMerges() async throws {
        let directory = try TemporaryDirectory()
        let path = "\(directory.path)/state/credentials-network.json"
        let first = try NetworkCredentialFile(path: path, logger: Logger(label: "test"))
        let second = try NetworkCredentialFile(path: path, logger: Logger(label: "test"))
        let a = try NetworkCredentialStore(
            keyring: NetworkCredentialKeyring(storage: first), file: first, location: .memory)
        let b = try NetworkCredentialStore(
            keyring: NetworkCredentialKeyring(storage: second), file: second, location: .memory)
        try await a.add(.password(username: "alice", password: "pw-a"), for: space)
        try await b.add(
            .password(username: "bob", password: "pw-b"), for: ProtectionSpace(host: "other.example.com", port: 443))
        try await a.waitForPersistence()
        try await b.waitForPersistence()

        let reread = try NetworkCredentialFile(path: path, logger: Logger(label: "test"))
        let loaded = try NetworkCredentialStore(
            keyring: NetworkCredentialKeyring(storage: reread), file: reread, location: .memory)
        #expect(await loaded.protectionSpaces.map(\.host) == ["gis.example.com", "other.example.com"])

        await a.remove(.password, for: space)
        try await a.waitForPersistence()
        let after = try NetworkCredentialFile(path: path, logger: Logger(label: "test"))
        #expect(try after.search(attributes: [:], schema: .network).map { $0["username"] } == ["bob"])
        #expect(NetworkCredentialFile.path(besideStoreAt: "/s/credentials.json") == "/s/credentials-network.json")
    }
}

/// A Secret Service that answers its first `probes` probes and then has gone away (`noService`).
private final class ProbeFailingAfter: SecretItemStorage {
    private let inner = InMemorySecretStorage()
    private let answered: Int
    private let count = Mutex(0)

    init(probes: Int) { answered = probes }

    /// How many probes were made.
    var probes: Int { count.withLock { $0 } }

    func probe() throws(KeyringError) {
        let made = count.withLock { count -> Int in
            count += 1
            return count
        }
        if made > answered { throw KeyringError(.noService, message: "nothing owns org.freedesktop.secrets") }
    }

    func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName)
        throws(KeyringError)
    {
        try inner.store(secret, attributes: attributes, label: label, schema: schema)
    }

    func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String? {
        try inner.lookup(attributes: attributes, schema: schema)
    }

    func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool {
        try inner.clear(attributes: attributes, schema: schema)
    }

    func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String: String]] {
        try inner.search(attributes: attributes, schema: schema)
    }
}
