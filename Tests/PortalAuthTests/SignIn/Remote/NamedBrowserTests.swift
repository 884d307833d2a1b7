import Foundation
import Logging
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore

/// A browser the person or the app named (`$BROWSER`, a browser command, WSL's Windows browser) is tried by the
/// automatic method without a display; when it fails the sign-in takes the remote path at once; and a sign-in that
/// can reach nobody stops at once, with a log record of what to set. The environment is injected: nothing here
/// depends on this machine's DISPLAY, BROWSER or kernel.
@Suite("Named browsers and sign-ins nobody hears", .serialized)
struct NamedBrowserTests {
    static let noDisplay = SignInEnvironment(hasDisplay: false, isSSHSession: false, hasForwardedDisplay: false)
    static let sshSession = SignInEnvironment(hasDisplay: false, isSSHSession: true, hasForwardedDisplay: false)
    static let linuxKernel = "6.1.0-27-amd64"

    /// A named browser: records what it opened, then exits with `status`; on success it "signs in" by handing the
    /// redirect to the pasted lines (as a browser reaching the loopback would).
    final class NamedBrowser: BrowserOpener {
        let status: Int32
        let board: RemoteSignInChoiceTests.PasteBoard
        let nonce: FakeIdentityProvider.NonceBox
        private let opened = Mutex<[URL]>([])
        init(status: Int32, board: RemoteSignInChoiceTests.PasteBoard, nonce: FakeIdentityProvider.NonceBox) {
            (self.status, self.board, self.nonce) = (status, board, nonce)
        }
        var isVisibleWithoutDisplay: Bool { true }
        var urls: [URL] { opened.withLock { $0 } }
        func open(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError) {
            opened.withLock { $0.append(url) }
            if status == 0 {
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                nonce.set(items.first { $0.name == "nonce" }?.value)
                let redirect = items.first { $0.name == "redirect_uri" }?.value ?? ""
                let state = items.first { $0.name == "state" }?.value ?? ""
                board.continuation.yield("\(redirect)?code=the-code&state=\(state)")
            }
            onExit(status)
        }
    }

    @Test(
        "$BROWSER and a browser command are named browsers; xdg-open is not",
        arguments: [
            (["BROWSER": "w3m"], true),
            (["BROWSER": "firefox:chromium"], true),
            ([:], false),
            (["BROWSER": "  "], false),
        ] as [([String: String], Bool)])
    func namedBrowser(environment: [String: String], visible: Bool) {
        let opener = CommandBrowserOpener.systemDefault(environment: environment, kernelRelease: Self.linuxKernel)
        #expect(opener.isVisibleWithoutDisplay == visible)
        #expect(
            CommandBrowserOpener.systemDefault(
                override: "my-browser", environment: [:], kernelRelease: Self.linuxKernel
            ).isVisibleWithoutDisplay)
        #expect(
            SignInSettings.browserCommand("/usr/bin/firefox", arguments: ["--new-window", "%s"]).isVisibleWithoutDisplay
        )
    }

    @Test(
        "an app's browser command keeps its words whole",
        arguments: [
            ("/opt/My Browser/run", ["--new-window", "%s"], ["/opt/My Browser/run", "--new-window", "%s"]),
            ("browser", ["it's", ""], ["browser", "it's", ""]),
        ])
    func browserCommandWords(executable: String, arguments: [String], words: [String]) throws {
        let opener = try #require(
            SignInSettings.browserCommand(executable, arguments: arguments) as? CommandBrowserOpener)
        #expect(opener.commands.map(CommandBrowserOpener.splitWords) == [words])
    }

    @Test(
        "$BROWSER without a display: the automatic method takes the browser path over SSH, not the device code the provider offers"
    )
    func namedBrowserWithoutDisplay() async throws {
        var provider = FakeIdentityProvider()
        let nonce = FakeIdentityProvider.NonceBox()
        provider.nonce = nonce
        let board = RemoteSignInChoiceTests.PasteBoard()
        let browser = NamedBrowser(status: 0, board: board, nonce: nonce)
        let observer = RecordingSignInObserver()
        let settings = SignInSettings(
            browser: browser, timeout: .seconds(600), observer: observer, acceptsPastedRedirect: true,
            httpClient: provider.client(), clock: ManualClock(), environment: Self.sshSession,
            pastedLines: { board.stream })
        let credential = try await IAPCredential.credential(
            for: FakeIdentityProvider.configuration(), using: .automatic, settings: settings)
        #expect(credential.username == "alice")
        #expect(browser.urls.count == 1)
        #expect(observer.events == ["browser", "exchange"], "\(observer.events)")
    }

    @Test("a failing $BROWSER (a real command, exit 1) without a display: the device code at once, told why")
    func failingBrowserGoesRemote() async throws {
        var provider = FakeIdentityProvider()
        provider.pollErrors = ["authorization_pending"]
        provider.issuedAt = FakeIdentityProvider.now
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var browser = CommandBrowserOpener.systemDefault(
            environment: ["BROWSER": "false"], kernelRelease: Self.linuxKernel)
        browser.launchDirectory = folder
        let observer = RecordingSignInObserver()
        // No pasted lines would ever come and the time limit is long: only going on at once can end this sign-in.
        let settings = SignInSettings(
            browser: browser, timeout: .seconds(3600), observer: observer, acceptsPastedRedirect: true,
            httpClient: provider.client(), clock: ManualClock(), environment: Self.noDisplay,
            pastedLines: { AsyncStream { _ in } })
        let credential = try await IAPCredential.credential(
            for: FakeIdentityProvider.configuration(), using: .automatic, settings: settings)
        #expect(credential.username == "alice")
        #expect(
            observer.events == [
                "browser", "no-browser: the browser could not be started (the browser command exited with status 1)",
                "device-code WDJB-MJHT",
            ], "\(observer.events)")
    }

    @Test(
        "WSL (WSL_DISTRO_NAME or a Microsoft kernel) with wslview on PATH: wslview, tried without a display",
        arguments: [
            (["WSL_DISTRO_NAME": "Debian"], linuxKernel),
            ([:], "5.15.153.1-microsoft-standard-WSL2"),
        ] as [([String: String], String)])
    func wslview(variables: [String: String], kernel: String) throws {
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.executable("wslview", in: folder, script: "exit 0")
        let opener = CommandBrowserOpener.systemDefault(
            environment: variables.merging(["PATH": folder.path]) { $1 }, kernelRelease: kernel)
        #expect(opener.commands == [folder.path + "/wslview"])
        #expect(opener.isVisibleWithoutDisplay)
        #expect(opener.addressStyle == .fileURL)
        // $BROWSER still comes first; and without WSL, xdg-open.
        #expect(
            CommandBrowserOpener.systemDefault(
                environment: variables.merging(["PATH": folder.path, "BROWSER": "w3m"]) { $1 }, kernelRelease: kernel
            ).commands == ["w3m"])
        #expect(
            CommandBrowserOpener.systemDefault(environment: ["PATH": folder.path], kernelRelease: Self.linuxKernel)
                .commands == ["xdg-open"])
    }

    @Test("WSL without wslview: cmd.exe /c start \"\" with the launch page as a \\\\wsl$ path Windows can read")
    func windowsBrowser() async throws {
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("arguments").path
        try Self.executable("cmd.exe", in: folder, script: "printf '%s\\n' \"$@\" > '\(output)'")
        var opener = CommandBrowserOpener.systemDefault(
            environment: ["WSL_DISTRO_NAME": "Debian", "PATH": folder.path], kernelRelease: Self.linuxKernel)
        #expect(opener.addressStyle == .windowsPath(distribution: "Debian"))
        #expect(opener.isVisibleWithoutDisplay)
        opener.launchDirectory = folder.appendingPathComponent("pages")
        let exits = AsyncStream.makeStream(of: Int32.self)
        let page = try opener.launch(URL(string: "https://idp.example/authorize?state=s")!) {
            exits.continuation.yield($0)
        }
        defer { page?.remove() }
        var statuses = exits.stream.makeAsyncIterator()
        #expect(await statuses.next() == 0)
        let words = try String(contentsOfFile: output, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map(String.init)
        let pagePath = try #require(page?.fileURL.path)
        #expect(words.prefix(3) == ["/c", "start", ""])
        #expect(words.dropFirst(3).first == "\\\\wsl$\\Debian" + pagePath.replacingOccurrences(of: "/", with: "\\"))
    }

    @Test(
        "WSL with neither wslview nor cmd.exe on PATH (appendWindowsPath=false): the refusal names WSL and the fix",
        arguments: [
            (["WSL_DISTRO_NAME": "Debian"], linuxKernel, "appendWindowsPath=false"),
            ([:], "5.15.153.1-microsoft-standard-WSL2", "appendWindowsPath=false"),
        ] as [([String: String], String, String)])
    func wslWithoutWindowsBrowser(variables: [String: String], kernel: String, fix: String) throws {
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let opener = CommandBrowserOpener.systemDefault(
            environment: variables.merging(["PATH": folder.path]) { $1 }, kernelRelease: kernel)
        #expect(opener.commands == ["xdg-open"])
        let settings = SignInSettings(browser: opener, environment: Self.noDisplay)
        let reason = try #require(settings.remoteReason)
        #expect(reason.contains("there is no display"), "\(reason)")
        #expect(reason.contains("WSL") && reason.contains(fix) && reason.contains("wslview"), "\(reason)")
        #expect(settings.reasonBrowserUnused == reason)
        // Not WSL: the display alone.
        let linux = SignInSettings(
            browser: CommandBrowserOpener.systemDefault(
                environment: ["PATH": folder.path], kernelRelease: Self.linuxKernel),
            environment: Self.noDisplay)
        #expect(linux.remoteReason?.contains("WSL") == false)
    }

    @Test(
        "no observer, no terminal, a browser that fails: the sign-in stops at once with what to set, and the log says it too",
        arguments: [SignInMethod.browser, .automatic])
    func nobodyToTell(method: SignInMethod) async throws {
        let lines = LogLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }
        var provider = FakeIdentityProvider()
        provider.offersDeviceCode = true
        let browser = RecordingBrowserOpener(.exits(3))
        let settings = SignInSettings(
            browser: browser, timeout: .seconds(3600), httpClient: provider.client(), logger: logger,
            clock: ManualClock(),
            environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false),
            signInMethod: method)
        let error = await #expect(throws: SignInError.self) {
            try await IAPCredential.credential(for: FakeIdentityProvider.configuration(), settings: settings)
        }
        #expect(browser.urls.count == 1)
        let text = try #require(error?.description)
        #expect(text.contains("the browser could not be started (the browser command exited with status 3)"), "\(text)")
        #expect(
            text.contains("SignInSettings.observer") && text.contains("SignInSettings.browserCommand(_:arguments:)"),
            "\(text)")
        #expect(lines.text.contains("sign-in stopped: nothing can reach the person"), "\(lines.text)")
        #expect(lines.text.contains("SignInSettings.observer"), "\(lines.text)")
    }

    @Test("no observer, no display, a provider with a device code: no silent device-code wait, an error at once")
    func silentDeviceCode() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }
        let settings = SignInSettings(
            browser: RecordingBrowserOpener(.succeeds), timeout: .seconds(3600),
            httpClient: FakeIdentityProvider().client(),
            logger: logger, clock: ManualClock(), environment: Self.noDisplay)
        let error = await #expect(throws: SignInError.self) {
            try await IAPCredential.credential(for: FakeIdentityProvider.configuration(), settings: settings)
        }
        #expect(error?.description.contains("there is no display") == true, "\(String(describing: error))")
        #expect(lines.text.contains("sign-in stopped"))
    }

    /// Addresses handed from the test's observer to the app's paste provider, one at a time.
    actor Mailbox {
        private var items: [String] = []
        private var waiting: CheckedContinuation<String?, Never>?
        func put(_ item: String) {
            if let waiting {
                self.waiting = nil
                waiting.resume(returning: item)
            } else {
                items.append(item)
            }
        }
        func take() async -> String? {
            if !items.isEmpty { return items.removeFirst() }
            return await withCheckedContinuation { waiting = $0 }
        }
    }

    @Test(
        "an app takes the pasted address from its own UI (takePastedAddresses), not standard input; a wrong one is explained and asked again"
    )
    func appPastedAddress() async throws {
        var provider = FakeIdentityProvider()
        provider.offersDeviceCode = false
        let nonce = FakeIdentityProvider.NonceBox()
        provider.nonce = nonce
        let mailbox = Mailbox()
        let observer = RecordingSignInObserver { url in
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            nonce.set(items.first { $0.name == "nonce" }?.value)
            let redirect = items.first { $0.name == "redirect_uri" }?.value ?? ""
            let state = items.first { $0.name == "state" }?.value ?? ""
            Task {
                await mailbox.put("https://elsewhere.example/callback?code=x&state=\(state)")
                await mailbox.put("\(redirect)?code=the-code&state=\(state)")
            }
        }
        var settings = SignInSettings(
            browser: nil, timeout: .seconds(3600), observer: observer, httpClient: provider.client(),
            environment: Self.noDisplay, signInMethod: .pasteBack)
        #expect(!settings.acceptsPastedRedirect)
        let asked = Mutex(0)
        settings.takePastedAddresses {
            asked.withLock { $0 += 1 }
            return await mailbox.take()
        }
        #expect(settings.acceptsPastedRedirect)
        let credential = try await IAPCredential.credential(
            for: FakeIdentityProvider.configuration(), settings: settings)
        #expect(credential.username == "alice")
        #expect(asked.withLock { $0 } == 2, "the provider is asked again after a rejected address")
        let events = observer.events
        #expect(events.first == "paste-prompt" && events.last == "exchange", "\(events)")
        #expect(events.contains { $0.hasPrefix("paste-rejected: ") }, "\(events)")
    }

    // MARK: - Helpers

    static func scratchFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pa-named-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return folder
    }

    static func executable(_ name: String, in folder: URL, script: String) throws {
        let path = folder.appendingPathComponent(name).path
        try "#!/bin/sh\n\(script)\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    }
}
