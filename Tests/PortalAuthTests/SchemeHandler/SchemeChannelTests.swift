import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

/// The private channel between a waiting custom-scheme sign-in and the scheme's handler: a real Unix socket in a
/// temporary `XDG_RUNTIME_DIR`, the real forwarder, the same evaluator as the loopback listener.
@Suite("Custom-scheme redirect channel")
struct SchemeChannelTests {
    private let redirect = CustomSchemeRedirect(URL(string: "my-maps-app://auth")!)!

    private func environment(_ folder: TemporaryDirectory) -> [String: String] {
        ["XDG_RUNTIME_DIR": folder.path]
    }

    private func receiver(
        _ folder: TemporaryDirectory,
        peer: @escaping SchemeRedirectReceiver.PeerCredentialReader = { try PeerCredentials.of($0) }
    ) throws -> SchemeRedirectReceiver {
        let directory = try RedirectChannelDirectory.prepare(environment: environment(folder))
        return try SchemeRedirectReceiver(redirect: redirect, directory: directory, peerCredentials: peer)
    }

    /// Forwards `address` as the handler would, off the cooperative pool. The wait for the receiver's answer is a hang
    /// guard only: the receiver serves once its waiting task has had a turn on a possibly busy cooperative pool.
    private func forward(_ address: String, _ folder: TemporaryDirectory) async throws
        -> SchemeRedirectForwarder.Delivery
    {
        let environment = environment(folder)
        return try await BlockingWork.run {
            try SchemeRedirectForwarder.forward(address, environment: environment, timeout: .seconds(60))
        }
    }

    /// The error of forwarding `address`, which must fail.
    private func rejection(_ address: String, _ folder: TemporaryDirectory) async throws -> SchemeRedirectError {
        do {
            let delivery = try await forward(address, folder)
            Issue.record("forwarding was expected to fail, but gave \(delivery)")
            throw CancellationError()
        } catch let error as SchemeRedirectError {
            return error
        }
    }

    // MARK: - Delivery

    @Test("the handler's address reaches the sign-in with its state; the socket is gone afterwards")
    func accepted() async throws {
        let folder = try TemporaryDirectory()
        let receiver = try receiver(folder)
        let socket = try #require(receiver.socketPath)
        #expect(try permissions(of: socket) == 0o600)
        #expect(try permissions(of: "\(folder.path)/portal-auth") == 0o700)
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: nil) }
        #expect(try await forward("my-maps-app://auth?code=code-1&state=state-1", folder) == .accepted)
        let callback = try await wait.value
        #expect(callback.code == "code-1")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test("an address with an unknown state is rejected and says so; the sign-in keeps waiting for its own")
    func unknownState() async throws {
        let folder = try TemporaryDirectory()
        let receiver = try receiver(folder)
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: nil) }
        let error = try await rejection("my-maps-app://auth?code=secret-code&state=someone-elses", folder)
        #expect(error.kind == .noMatchingSignIn)
        #expect(error.description.contains("matches no waiting sign-in"))
        #expect(error.description.contains("its state belongs to no request of this sign-in"))
        #expect(!error.description.contains("secret-code") && !error.description.contains("someone-elses"))

        #expect(try await forward("my-maps-app://auth?code=code-1&state=state-1", folder) == .accepted)
        #expect(try await wait.value.code == "code-1")
    }

    @Test(
        "another scheme, host or path, or no state, is not this sign-in's",
        arguments: [
            ("other-app://auth?code=c&state=state-1", "not for another scheme or host"),
            ("my-maps-app://elsewhere?code=c&state=state-1", "not for another scheme or host"),
            ("my-maps-app://auth/other?code=c&state=state-1", "its path is not /"),
            ("my-maps-app://auth?code=c", "it has no state parameter"),
            ("my-maps-app://auth?code=c&state=state-1&state=state-1", "more than one state parameter"),
        ])
    func notThisSignIn(address: String, reason: String) async throws {
        let folder = try TemporaryDirectory()
        let receiver = try receiver(folder)
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: nil) }
        let error = try await rejection(address, folder)
        if address.hasPrefix("other-app:") {
            #expect(error.kind == .noWaitingSignIn || error.kind == .noMatchingSignIn)
        } else {
            #expect(error.kind == .noMatchingSignIn)
        }
        #expect(error.description.contains(reason), "\(error)")
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.value }
    }

    @Test("two sign-ins at once are told apart by state, whichever is answered first")
    func twoSignIns() async throws {
        let folder = try TemporaryDirectory()
        let first = try receiver(folder)
        let second = try receiver(folder)
        let firstWait = Task { try await first.waitForCallback(state: "state-A", issuer: nil) }
        let secondWait = Task { try await second.waitForCallback(state: "state-B", issuer: nil) }

        #expect(try await forward("my-maps-app://auth?code=code-B&state=state-B", folder) == .accepted)
        #expect(try await secondWait.value.code == "code-B")
        #expect(try await forward("my-maps-app://auth?code=code-A&state=state-A", folder) == .accepted)
        #expect(try await firstWait.value.code == "code-A")
        let left = try FileManager.default.contentsOfDirectory(atPath: "\(folder.path)/portal-auth")
        #expect(left.isEmpty, "both sockets are removed: \(left)")
    }

    @Test("the identity provider's error reaches the matching sign-in and ends it; the handler is told")
    func refusal() async throws {
        let folder = try TemporaryDirectory()
        let receiver = try receiver(folder)
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: nil) }
        let delivery = try await forward(
            "my-maps-app://auth?error=access_denied&error_description=No&state=state-1", folder)
        guard case .refusalDelivered(let message) = delivery else {
            Issue.record("expected a delivered refusal, got \(delivery)")
            return
        }
        #expect(message.contains("access_denied"))
        do {
            _ = try await wait.value
            Issue.record("the sign-in should end with the refusal")
        } catch let error as LoopbackError {
            #expect(error.kind == .identityProviderError)
        }
    }

    @Test("an iss that is not the expected issuer is refused (RFC 9207), as on the loopback path")
    func issuerMismatch() async throws {
        let folder = try TemporaryDirectory()
        let receiver = try receiver(folder)
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: "https://idp.example.com") }
        let delivery = try await forward(
            "my-maps-app://auth?code=c&state=state-1&iss=https%3A%2F%2Fevil.example.com", folder)
        #expect(delivery != .accepted)
        do {
            _ = try await wait.value
            Issue.record("the sign-in should end with the mismatch")
        } catch let error as LoopbackError {
            #expect(error.kind == .issuerMismatch)
        }
    }

    // MARK: - Who may talk

    @Test("a connection whose peer (SO_PEERCRED) is another user is refused before its address is read")
    func otherUser() async throws {
        let folder = try TemporaryDirectory()
        let otherUID = getuid() &+ 1
        let receiver = try receiver(folder, peer: { _ in PeerCredentials(pid: 4242, uid: otherUID, gid: 0) })
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: nil) }
        let error = try await rejection("my-maps-app://auth?code=code-1&state=state-1", folder)
        #expect(error.kind == .noMatchingSignIn)
        #expect(error.description.contains("belongs to another user"))
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.value }
    }

    @Test("a peer whose credentials cannot be read is refused")
    func unknownPeer() async throws {
        let folder = try TemporaryDirectory()
        let receiver = try receiver(
            folder, peer: { _ in throw SystemError(call: "getsockopt(SO_PEERCRED)", errno: EINVAL) })
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: nil) }
        let error = try await rejection("my-maps-app://auth?code=code-1&state=state-1", folder)
        #expect(error.description.contains("cannot tell who is connecting"))
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.value }
    }

    @Test("the kernel's peer credentials of a Unix socket name this process and user")
    func realPeerCredentials() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let peer = try PeerCredentials.of(ends[0])
        #expect(peer.uid == getuid())
        #expect(peer.pid == getpid())
        #expect(peer.gid == getgid())
    }

    // MARK: - Nobody waiting, folders

    @Test("with no sign-in waiting, or only a dead one's socket, the handler says so and removes the dead socket")
    func nobodyWaiting() async throws {
        let folder = try TemporaryDirectory()
        let error = try await rejection("my-maps-app://auth?code=c&state=s", folder)
        #expect(error.kind == .noWaitingSignIn)

        let directory = try RedirectChannelDirectory.prepare(environment: environment(folder))
        let stale = "\(directory)/signin-stale.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try UnixSocketAddress(path: stale)
        _ = try address.withPointer { (pointer, length) throws(SystemError) in
            try syscall("bind") { bind(fd, pointer, length) }
        }
        close(fd)  // bound, never listening, as after a crash
        let again = try await rejection("my-maps-app://auth?code=c&state=s", folder)
        #expect(again.kind == .noWaitingSignIn)
        #expect(!FileManager.default.fileExists(atPath: stale))
    }

    @Test("the channel folder is made private; one that is not a folder, or no XDG_RUNTIME_DIR, is an error")
    func folder() throws {
        let folder = try TemporaryDirectory()
        let path = "\(folder.path)/portal-auth"
        #expect(mkdir(path, 0o755) == 0)
        #expect(chmod(path, 0o755) == 0)
        #expect(try RedirectChannelDirectory.prepare(environment: environment(folder)) == path)
        #expect(try permissions(of: path) == 0o700)

        let other = try TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: "\(other.path)/portal-auth", contents: Data())
        #expect(throws: SchemeRedirectError.self) {
            try RedirectChannelDirectory.prepare(environment: environment(other))
        }
        #expect(throws: SchemeRedirectError.self) { try RedirectChannelDirectory.prepare(environment: [:]) }
        #expect(throws: SchemeRedirectError.self) {
            try RedirectChannelDirectory.prepare(environment: ["XDG_RUNTIME_DIR": "relative"])
        }
    }

    @Test("cancelling the sign-in ends the wait and removes its socket")
    func cancellation() async throws {
        let folder = try TemporaryDirectory()
        let receiver = try receiver(folder)
        let socket = try #require(receiver.socketPath)
        let wait = Task { try await receiver.waitForCallback(state: "state-1", issuer: nil) }
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.value }
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    // MARK: - Pasting and choosing the receiver

    @Test("a pasted custom-scheme address is checked by the same rules")
    func pasted() throws {
        let receiver = try SchemeRedirectReceiver(redirect: redirect, directory: nil)
        defer { receiver.close() }
        #expect(receiver.socketPath == nil)
        let callback = try receiver.callback(
            fromPastedURL: "  my-maps-app://auth?code=c-1&state=s-1\n", state: "s-1", issuer: nil)
        #expect(callback.code == "c-1")
        #expect(throws: LoopbackError.self) {
            try receiver.callback(
                fromPastedURL: "http://127.0.0.1/callback?code=c&state=s-1", state: "s-1", issuer: nil)
        }
        #expect(throws: LoopbackError.self) {
            try receiver.callback(fromPastedURL: "my-maps-app://auth?code=c&state=other", state: "s-1", issuer: nil)
        }
        do {
            _ = try receiver.callback(
                fromPastedURL: "my-maps-app://auth?error=access_denied&state=s-1", state: "s-1", issuer: nil)
        } catch {
            #expect(error.kind == .identityProviderError)
        }
    }

    @Test("a custom scheme waits on the channel on a desktop, needs pasting without one, and loopback stays loopback")
    func receiverChoice() throws {
        let folder = try TemporaryDirectory()
        let url = URL(string: "my-maps-app://auth")!
        let quiet = SignInSettings(browser: nil)
        do {
            _ = try RedirectReceiver.make(
                redirectURL: url, configuration: .init(), settings: quiet, environment: environment(folder))
            Issue.record("without a desktop session and without pasting, the sign-in cannot finish")
        } catch let error as SchemeRedirectError {
            #expect(error.kind == .noDesktopSession)
            #expect(error.description.contains("neither DISPLAY nor WAYLAND_DISPLAY is set"))
        }
        var pasting = quiet
        pasting.acceptsPastedRedirect = true
        let remote = try RedirectReceiver.make(
            redirectURL: url, configuration: .init(), settings: pasting, environment: environment(folder))
        guard case .scheme(let paste) = remote else { Issue.record("expected the scheme receiver"); return }
        #expect(paste.socketPath == nil)
        remote.close()

        var desktop = environment(folder)
        desktop["WAYLAND_DISPLAY"] = "wayland-0"
        let local = try RedirectReceiver.make(
            redirectURL: url, configuration: .init(), settings: quiet, environment: desktop)
        guard case .scheme(let channel) = local else { Issue.record("expected the scheme receiver"); return }
        #expect(channel.socketPath?.hasPrefix("\(folder.path)/portal-auth/signin-") == true)
        #expect(local.redirectURL == url)
        local.close()

        let loopback = try RedirectReceiver.make(
            redirectURL: URL(string: "http://127.0.0.1/callback")!, configuration: .init(), settings: quiet,
            environment: desktop)
        guard case .loopback = loopback else { Issue.record("expected the loopback listener"); return }
        loopback.close()
    }
}
