import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

/// Files and folders another user of the machine owns or can write (issue 43, items 2, 3 and 8): a configuration
/// file that decides where a token goes, the folders the library creates, the launch pages a killed run left.
/// The tests that give a file to a second user (`nobody`) need root, as `scripts/test` runs them.
@Suite("Files and folders other users can change", .serialized)
struct OtherUsersFilesTests {
    static let needsRoot = ConditionTrait.enabled(if: geteuid() == 0, "needs root to give a file to another user")

    /// `nobody`'s user ID.
    static var nobody: uid_t {
        guard let entry = getpwnam("nobody") else { return 65534 }
        return entry.pointee.pw_uid
    }

    /// A scratch folder of this user, closed to others, removed at the end.
    private static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-others-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(chmod(directory.path, 0o700) == 0)
        return directory
    }

    private static func folder(_ url: URL, mode: mode_t) throws -> URL {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        #expect(chmod(url.path, mode) == 0)
        return url
    }

    private static func write(_ text: String, to url: URL, mode: mode_t = 0o644) throws {
        try Data(text.utf8).write(to: url)
        #expect(chmod(url.path, mode) == 0)
    }

    private static func untrusted(_ url: URL) async -> ConfigurationError? {
        do {
            _ = try await IAPConfiguration.configuration(from: url)
            return nil
        } catch {
            return error.kind == .untrustedFile ? error : nil
        }
    }

    // MARK: - Item 2: configuration files

    @Test("a configuration file others can write is refused, naming the file, its mode and owner and the chmod")
    func configurationWritableByOthers() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("iap.json")
        try Self.write(FixtureFiles.iapJSON(), to: file, mode: 0o666)
        let error = try #require(await Self.untrusted(file))
        #expect(error.category == .unreadableInput)
        #expect(error.description.contains(file.path))
        #expect(error.description.contains("mode 0666"))
        #expect(error.description.contains("run `chmod go-w \(file.path)`"), "\(error)")

        #expect(chmod(file.path, 0o644) == 0)
        #expect(await Self.untrusted(file) == nil, "the same file closed to writers is used")
    }

    @Test("a configuration file in a folder others can write, or reached through a link in one, is refused")
    func configurationBelowSharedFolder() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shared = try Self.folder(directory.appendingPathComponent("shared"), mode: 0o777)
        let file = shared.appendingPathComponent("iap.json")
        try Self.write(FixtureFiles.iapJSON(), to: file)
        let error = try #require(await Self.untrusted(file))
        #expect(error.description.contains("other users can write \(shared.path) (mode 0777"), "\(error)")
        #expect(error.description.contains("chmod go-w \(shared.path)"))

        // A link in the shared folder to a file in a private one: the link could be pointed elsewhere.
        let own = try Self.folder(directory.appendingPathComponent("own"), mode: 0o700)
        let real = own.appendingPathComponent("real.json")
        try Self.write(FixtureFiles.iapJSON(), to: real)
        let link = shared.appendingPathComponent("link.json")
        #expect(symlink(real.path, link.path) == 0)
        let throughLink = try #require(await Self.untrusted(link))
        #expect(throughLink.description.contains(shared.path))
        #expect(await Self.untrusted(real) == nil, "the file itself, named directly, is used")

        // A link in a private folder into the shared one: the file's folder decides.
        let inward = own.appendingPathComponent("inward.json")
        #expect(symlink(file.path, inward.path) == 0)
        #expect(await Self.untrusted(inward) != nil)
    }

    @Test(
        "a configuration file of another user is refused, with the chown that fixes it",
        .tags(.root), ExternalTools.condition, Self.needsRoot)
    func configurationOwnedByAnotherUser() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("iap.json")
        try Self.write(FixtureFiles.iapJSON(), to: file, mode: 0o644)
        #expect(chown(file.path, Self.nobody, Self.nobody) == 0)
        let error = try #require(await Self.untrusted(file))
        #expect(error.description.contains("belongs to another user (mode 0644, owner nobody"), "\(error)")
        #expect(error.description.contains("run `sudo chown root \(file.path)`"), "\(error)")
    }

    @Test(
        "in a shared sticky folder, a file re-created by another user is refused; the user's own file is used",
        .tags(.root), ExternalTools.condition, Self.needsRoot)
    func configurationInStickyFolder() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(chmod(directory.path, 0o755) == 0)
        let sticky = try Self.folder(directory.appendingPathComponent("tmp"), mode: 0o1777)
        let file = sticky.appendingPathComponent("iap.json")
        try Self.write(FixtureFiles.iapJSON(), to: file, mode: 0o644)
        #expect(await Self.untrusted(file) == nil, "the user's own file, closed to writers, in a sticky folder")
        #expect(chown(file.path, Self.nobody, Self.nobody) == 0)
        let error = try #require(await Self.untrusted(file))
        #expect(error.description.contains("sits in the shared folder \(sticky.path)"), "\(error)")
    }

    @Test("a stored IAP sign-in takes nothing from its file once others can write it")
    func storedSignInKeepsItsCopy() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("iap.json")
        try Self.write(FixtureFiles.iapJSON(), to: file)
        let stored = try await IAPConfiguration.configuration(from: file)
        let widened = FixtureFiles.iapJSON(replacing: ["hosts_behind_proxy": #"["*.example.com", "evil.example.net"]"#])
        try Self.write(widened, to: file, mode: 0o666)
        #expect(IAPConfigurationChange.reading(stored) == .unchanged, "the widened hosts of a file others can write")
        #expect(chmod(file.path, 0o644) == 0)
        guard case .updated(let current) = IAPConfigurationChange.reading(stored) else {
            Issue.record("the user's own edit is taken")
            return
        }
        #expect(current.hostsBehindProxy.contains("evil.example.net"))
    }

    // MARK: - Item 3: folders the library creates

    @Test(
        "a launch-page folder planted by another user in a shared folder is not used: the page goes elsewhere",
        .tags(.root), ExternalTools.condition, Self.needsRoot)
    func plantedLaunchFolder() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(chmod(directory.path, 0o755) == 0)
        let shared = try Self.folder(directory.appendingPathComponent("cache"), mode: 0o1777)
        let theirs = try Self.folder(directory.appendingPathComponent("theirs"), mode: 0o777)
        #expect(chown(theirs.path, Self.nobody, Self.nobody) == 0)
        // A link named as the tool's folder, planted by another user.
        #expect(symlink(theirs.path, shared.appendingPathComponent("portal-auth").path) == 0)
        #expect(lchown(shared.appendingPathComponent("portal-auth").path, Self.nobody, Self.nobody) == 0)
        let linked = try BrowserLaunchPage(
            forwardingTo: URL(string: "https://idp.example/")!, in: shared.appendingPathComponent("portal-auth/launch"))
        defer { linked.remove() }
        #expect(!linked.fileURL.path.hasPrefix(shared.path), "\(linked.fileURL.path)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs.path).isEmpty)

        // A 0777 folder of theirs under the same name.
        let planted = try Self.folder(shared.appendingPathComponent("planted"), mode: 0o777)
        #expect(chown(planted.path, Self.nobody, Self.nobody) == 0)
        let page = try BrowserLaunchPage(
            forwardingTo: URL(string: "https://idp.example/")!, in: planted.appendingPathComponent("launch"))
        defer { page.remove() }
        #expect(!page.fileURL.path.hasPrefix(shared.path), "\(page.fileURL.path)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.path).isEmpty)
    }

    @Test("a store, lock or socket folder below a folder others can write is refused, naming that folder")
    func folderBelowSharedFolder() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shared = try Self.folder(directory.appendingPathComponent("shared"), mode: 0o777)
        let state = shared.appendingPathComponent("state/portal-auth").path
        #expect(throws: CredentialStoreError.self) { try StoreFileSystem.ensurePrivateDirectory(state) }
        #expect(access(state, F_OK) != 0, "nothing is created below the shared folder")
        do {
            try StoreFileSystem.ensurePrivateDirectory(state)
        } catch {
            #expect(error.kind == .unsafePermissions)
            #expect(error.description.contains("other users can write \(shared.path) (mode 0777"), "\(error)")
        }
        #expect(throws: SchemeRedirectError.self) {
            _ = try RedirectChannelDirectory.prepare(environment: ["XDG_RUNTIME_DIR": shared.path])
        }

        // The same folders below a private one are made 0700, every missing component.
        let own = directory.appendingPathComponent("own/state/portal-auth").path
        try StoreFileSystem.ensurePrivateDirectory(own)
        var info = stat()
        #expect(lstat(own, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(lstat(directory.appendingPathComponent("own/state").path, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    // MARK: - Item 8: leftover launch pages

    /// Sets the modification time of `name` in `directory` to `seconds` ago.
    private static func age(_ name: String, in directory: URL, by seconds: Int) {
        let then = time(nil) - seconds
        var times = [timespec(tv_sec: then, tv_nsec: 0), timespec(tv_sec: then, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, directory.appendingPathComponent(name).path, &times, 0) == 0)
    }

    @Test("launch pages a killed run left are removed by the next page made there; young and foreign files stay")
    func staleLaunchPages() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = "launch-" + String(repeating: "A", count: 21) + "b.html"
        let young = "launch-" + String(repeating: "C", count: 21) + "d.html"
        let other = "notes.html"
        let odd = "launch-short.html"
        for name in [old, young, other, odd] {
            try Self.write("<html>id_token_hint=x</html>", to: directory.appendingPathComponent(name), mode: 0o600)
        }
        for name in [old, other, odd] { Self.age(name, in: directory, by: 3600) }
        Self.age(young, in: directory, by: 60)
        let page = try BrowserLaunchPage(forwardingTo: URL(string: "https://idp.example/")!, in: directory)
        defer { page.remove() }
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(left == [young, other, odd, page.fileURL.lastPathComponent])
    }

    @Test(
        "a leftover page of another user is not removed", .tags(.root), ExternalTools.condition, Self.needsRoot)
    func foreignStalePage() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let theirs = "launch-" + String(repeating: "E", count: 22) + ".html"
        let ours = "launch-" + String(repeating: "F", count: 22) + ".html"
        for name in [theirs, ours] {
            try Self.write("x", to: directory.appendingPathComponent(name), mode: 0o600)
            Self.age(name, in: directory, by: 86400)
        }
        #expect(chown(directory.appendingPathComponent(theirs).path, Self.nobody, Self.nobody) == 0)
        let page = try BrowserLaunchPage(forwardingTo: URL(string: "https://idp.example/")!, in: directory)
        defer { page.remove() }
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(left == [theirs, page.fileURL.lastPathComponent])
    }
}
