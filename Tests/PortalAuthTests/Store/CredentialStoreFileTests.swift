import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

@Suite("Credential store file: format, permissions, atomic writes")
struct CredentialStoreFileTests {
    // MARK: - Reading and writing

    @Test("a missing store reads as empty and reading creates nothing")
    func missingIsEmpty() throws {
        let temporary = try TemporaryDirectory()
        let snapshot = try temporary.store().read()
        #expect(snapshot.isEmpty)
        #expect(!snapshot.isChanged)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty)
    }

    @Test("update creates missing directories 0700, the store and lock file 0600, and leaves existing parents alone")
    func createsPrivateFiles() async throws {
        let temporary = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: "\(temporary.path)/home", withIntermediateDirectories: false)
        #expect(chmod("\(temporary.path)/home", 0o755) == 0)
        let store = temporary.store("home/.local/state/portal-auth/credentials.json")

        try await store.update { $0.set(["user": .string("ann")], for: "https://portal.example/ client") }

        #expect(try permissions(of: "\(temporary.path)/home") == 0o755)
        #expect(try permissions(of: "\(temporary.path)/home/.local") == 0o700)
        #expect(try permissions(of: "\(temporary.path)/home/.local/state/portal-auth") == 0o700)
        #expect(try permissions(of: store.path) == 0o600)
        #expect(try permissions(of: store.location.lockPath) == 0o600)
    }

    @Test("entries round-trip through a pretty-printed, versioned file")
    func roundTrip() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        let entry: JSONObject = [
            "refresh_token": .string("r1"), "expires": .integer(1_800_000_000), "scopes": .array([.string("openid")]),
        ]
        try await store.update { snapshot in
            snapshot.set(entry, for: "b")
            snapshot.set(counterEntry(1), for: "a")
        }
        let snapshot = try store.read()
        #expect(snapshot.keys == ["a", "b"])
        #expect(snapshot.entry(for: "b") == entry)

        let text = String(decoding: try contents(of: store.path), as: UTF8.self)
        let document = try JSONValue.parse(text)
        #expect(document["format"] == .string("portal-auth-credentials"))
        #expect(document["version"] == .integer(1))
        #expect(text.contains("\n  \"entries\": {\n"))
    }

    @Test("snapshot helpers track changes")
    func snapshotHelpers() {
        var snapshot = StoreSnapshot(entries: ["a": counterEntry(1), "b": counterEntry(2)])
        #expect(!snapshot.isChanged)
        snapshot.set(counterEntry(1), for: "a")
        #expect(!snapshot.isChanged, "setting an equal entry is no change")
        #expect(snapshot.remove("b") == counterEntry(2))
        #expect(snapshot.isChanged)
        snapshot.removeAll()
        #expect(snapshot.isEmpty)
        #expect(snapshot.remove("missing") == nil)
    }

    @Test("removing entries writes them away; an unchanged update writes nothing")
    func removeAndNoOp() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await store.update {
            $0.set(counterEntry(1), for: "a"); $0.set(counterEntry(2), for: "b")
        }
        _ = try await store.update { $0.remove("a") }
        #expect(try store.read().keys == ["b"])

        let before = try inode(of: store.path)
        let seen = try await store.update { $0.entry(for: "b") }
        #expect(seen == counterEntry(2))
        #expect(try inode(of: store.path) == before, "a read-only update must not replace the file")

        try await store.update { $0.removeAll() }
        #expect(try store.read().isEmpty)
    }

    @Test("an actor-isolated caller can use non-Sendable state in the body")
    @MainActor
    func mainActorCaller() async throws {
        final class Tally { var seen: [String] = [] }
        let tally = Tally()
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await store.withExclusiveAccess { snapshot in
            try await Task.sleep(for: .milliseconds(1))
            snapshot.set(counterEntry(1), for: "a")
            tally.seen = snapshot.keys
        }
        #expect(tally.seen == ["a"])
    }

    @Test("a throwing body writes nothing and its error comes out")
    func throwingBody() async throws {
        struct Boom: Error {}
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await store.update { $0.set(counterEntry(1), for: "a") }
        await #expect(throws: Boom.self) {
            try await store.update { snapshot in
                snapshot.removeAll()
                throw Boom()
            }
        }
        #expect(try store.read().entry(for: "a") == counterEntry(1))
    }

    @Test("atomic writes leave only the store and its lock file; a killed writer's temporary file is swept")
    func noTemporaryFiles() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        for value in 1...5 { try await store.update { $0.set(counterEntry(Int64(value)), for: "a") } }
        #expect(try temporary.listing() == ["credentials.json", "credentials.json.lock"])

        let leftover = "\(temporary.path)/state/\(AtomicFileWriter.temporaryPrefix(for: store.path))999-dead"
        try writeFile("{half", to: leftover)
        try await store.update { increment(&$0, key: "a") }
        #expect(try temporary.listing() == ["credentials.json", "credentials.json.lock"])
        #expect(try store.read().entry(for: "a") == counterEntry(6))
    }

    // MARK: - Permissions

    @Test(
        "a store other users can access is refused with the chmod that fixes it",
        arguments: [0o640, 0o604, 0o660, 0o644, 0o606] as [mode_t])
    func refusesOpenFile(mode: mode_t) async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await store.update { $0.set(counterEntry(1), for: "a") }
        #expect(chmod(store.path, mode) == 0)

        let expected = "chmod 600 \(store.path)"
        for attempt in [{ _ = try store.read() }, { try await store.update { increment(&$0, key: "a") } }]
            as [() async throws -> Void]
        {
            await #expect {
                try await attempt()
            } throws: { error in
                let error = error as? CredentialStoreError
                return error?.kind == .unsafePermissions && error?.category == .local
                    && error?.path == store.path && error?.description.contains(expected) == true
            }
        }
        #expect(
            try permissions(of: store.path) == UInt32(mode),
            "the store's mode must not be changed behind the user's back")
        #expect(chmod(store.path, 0o600) == 0)
        #expect(try store.read().entry(for: "a") == counterEntry(1))
    }

    @Test("a directory others can write is refused with chmod 700; a readable one (0755, 0711) is allowed")
    func refusesOpenDirectory() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await store.update { $0.set(counterEntry(1), for: "a") }
        let directory = store.location.directory
        for mode: mode_t in [0o770, 0o720, 0o702, 0o777, 0o730] {
            #expect(chmod(directory, mode) == 0)
            #expect {
                try store.read()
            } throws: { error in
                let error = error as? CredentialStoreError
                return error?.kind == .unsafePermissions && error?.path == directory
                    && error?.description.contains("chmod 700 \(directory)") == true
            }
        }
        #expect(chmod(directory, 0o755) == 0)
        #expect(try store.read().entry(for: "a") == counterEntry(1))
        #expect(chmod(directory, 0o711) == 0)
        #expect(try store.read().entry(for: "a") == counterEntry(1))
        try await store.update { increment(&$0, key: "a") }
        #expect(try permissions(of: directory) == 0o711)
    }

    @Test("a symbolic link or a directory at the store path is refused")
    func refusesNonRegular() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try writeFile(
            #"{"format": "portal-auth-credentials", "version": 1, "entries": {}}"#, to: "\(temporary.path)/real.json")
        try FileManager.default.createDirectory(atPath: store.location.directory, withIntermediateDirectories: true)
        #expect(chmod(store.location.directory, 0o700) == 0)
        #expect(symlink("\(temporary.path)/real.json", store.path) == 0)
        #expect(throws: CredentialStoreError.notRegularFile(store.path)) { try store.read() }

        let directoryStore = temporary.store("state/dir.json")
        try FileManager.default.createDirectory(atPath: directoryStore.path, withIntermediateDirectories: false)
        #expect(throws: CredentialStoreError.notRegularFile(directoryStore.path)) { try directoryStore.read() }
    }

    // MARK: - Corruption and versions

    static let secret = "eyJSECRET-refresh-token"

    @Test("a store that is not JSON is reported with the path, line and column — and no file contents")
    func corruptedRead() throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try writeFile(
            "{\n  \"format\": \"portal-auth-credentials\",\n  \"entries\": {\"k\": {\"t\": \(Self.secret)}}\n}",
            to: store.path)
        // jansson quotes the offending text; the store's error must not pass it on.
        let raw = try contents(of: store.path)
        do {
            _ = try JSONValue.parse(raw)
            Issue.record("expected a syntax error")
        } catch {
            #expect(error.message.contains("SECRET"))
        }
        #expect {
            try store.read()
        } throws: { error in
            guard let error = error as? CredentialStoreError else { return false }
            return error.kind == .corrupted && error.category == .invalidContent
                && error.syntaxError?.line == 3 && (error.syntaxError?.column ?? 0) > 0
                && error.description.contains(store.path) && error.description.contains("line 3, column")
                && !error.description.contains("SECRET")
        }
    }

    static let wrongShapes: [(String, String)] = [
        ("[]", "top level is an array"),
        (#"{"format": "something-else", "version": 1, "entries": {}}"#, "\"format\""),
        (#"{"format": "portal-auth-credentials", "entries": {}}"#, "\"version\""),
        (#"{"format": "portal-auth-credentials", "version": 0, "entries": {}}"#, "\"version\""),
        (#"{"format": "portal-auth-credentials", "version": 1}"#, "\"entries\""),
        (
            #"{"format": "portal-auth-credentials", "version": 1, "entries": {"k": "eyJSECRET"}}"#,
            "entry \"k\" is a string"
        ),
        ("", "line"),
    ]

    @Test("a store of the wrong shape is corrupted, never empty", arguments: wrongShapes)
    func wrongShape(text: String, reason: String) throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try writeFile(text, to: store.path)
        #expect {
            try store.read()
        } throws: { error in
            let description = (error as? CredentialStoreError)?.description ?? ""
            return (error as? CredentialStoreError)?.kind == .corrupted && description.contains(reason)
                && !description.contains("SECRET")
        }
    }

    @Test("by default an update refuses a corrupted store and leaves it byte for byte")
    func corruptedUpdateFails() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try writeFile("{not json", to: store.path)
        await #expect {
            try await store.update { $0.set(counterEntry(1), for: "a") }
        } throws: { error in
            (error as? CredentialStoreError)?.kind == .corrupted
        }
        #expect(try contents(of: store.path) == Data("{not json".utf8))
        #expect(try temporary.listing() == ["credentials.json", "credentials.json.lock"])
    }

    @Test("keepAsideAndStartEmpty moves the corrupted store aside, reports it, and starts a new store")
    func corruptedUpdateRecovers() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        let bad =
            "{\"format\": \"portal-auth-credentials\", \"version\": 1, \"entries\": {\"k\": {\"t\": \"\(Self.secret)\"}"
        try writeFile(bad, to: store.path)

        let recovery = try await store.update(onCorruption: .keepAsideAndStartEmpty) { snapshot in
            #expect(snapshot.isEmpty)
            snapshot.set(counterEntry(1), for: "a")
            return snapshot.recovery
        }
        let kept = try #require(recovery).keptCopyPath
        #expect(kept.hasPrefix("\(store.path).corrupt-"))
        #expect(kept.hasSuffix("Z"))
        #expect(try contents(of: kept) == Data(bad.utf8))
        #expect(try permissions(of: kept) == 0o600)
        #expect(try store.read().entry(for: "a") == counterEntry(1))
        #expect(recovery?.description.contains(kept) == true)
        #expect(recovery?.description.contains("SECRET") == false)

        // A second corruption within the same second gets a name of its own; the first copy stays.
        try writeFile("garbage", to: store.path)
        let second = try await store.update(onCorruption: .keepAsideAndStartEmpty) { $0.recovery?.keptCopyPath }
        let secondPath = try #require(second)
        #expect(secondPath != kept)
        #expect(try contents(of: secondPath) == Data("garbage".utf8))
        #expect(try contents(of: kept) == Data(bad.utf8))
    }

    @Test("a store of a newer version is refused and never rewritten, even when recovering")
    func newerVersion() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        let newer = #"{"format": "portal-auth-credentials", "version": 2, "entries": []}"#
        try writeFile(newer, to: store.path)
        let isUnsupported: @Sendable (any Error) -> Bool = { error in
            let error = error as? CredentialStoreError
            return error?.kind == .unsupportedVersion && error?.category == .invalidContent
                && error?.description.contains("version 2") == true && error?.description.contains(store.path) == true
        }
        #expect(performing: { try store.read() }, throws: isUnsupported)
        await #expect(
            performing: {
                try await store.update(onCorruption: .keepAsideAndStartEmpty) { $0.set(counterEntry(1), for: "a") }
            }, throws: isUnsupported)
        #expect(try contents(of: store.path) == Data(newer.utf8))
        #expect(try temporary.listing() == ["credentials.json", "credentials.json.lock"])
    }
}
