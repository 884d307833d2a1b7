import Foundation
import Glibc
import Testing
@testable import PortalAuth

@Suite("Browser launch page")
struct BrowserLaunchPageTests {
    private static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-launch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("the page is private, escapes the URL, loads nothing else, and is removed once")
    func page() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("pages")
        let target = URL(string: "https://idp.example/authorize?a=1&b=%22%3Cscript%3E&c='x'")!
        let page = try BrowserLaunchPage(forwardingTo: target, in: folder)
        var info = stat()
        #expect(lstat(folder.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(lstat(page.fileURL.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // One name for sign-in and sign-out pages alike (a sign-out page named signin-… misled people).
        #expect(
            page.fileURL.lastPathComponent.hasPrefix("launch-") && page.fileURL.pathExtension == "html",
            "\(page.fileURL.lastPathComponent)")
        let html = try String(contentsOf: page.fileURL, encoding: .utf8)
        #expect(
            html.contains(#"content="0;url=https://idp.example/authorize?a=1&amp;b=%22%3Cscript%3E&amp;c=&#39;x&#39;""#)
        )
        #expect(!html.contains("src="), "nothing is loaded from elsewhere")
        #expect(html.contains(#"<meta name="referrer" content="no-referrer">"#))
        page.remove()
        page.remove()
        #expect(access(page.fileURL.path, F_OK) != 0)
    }

    @Test("a folder that is a symbolic link, or open to others, is not used as it is")
    func folderChecks() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = directory.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        // The link is not followed: the page goes to the user's own cache folder instead (issue 43).
        let elsewhere = try BrowserLaunchPage(forwardingTo: URL(string: "https://idp.example/")!, in: link)
        #expect(!elsewhere.fileURL.path.hasPrefix(directory.path), "\(elsewhere.fileURL.path)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: real.path).isEmpty)
        elsewhere.remove()
        chmod(real.path, 0o755)
        let page = try BrowserLaunchPage(forwardingTo: URL(string: "https://idp.example/")!, in: real)
        var info = stat()
        #expect(
            lstat(real.path, &info) == 0 && info.st_mode & 0o777 == 0o700, "closed to others before the page is written"
        )
        page.remove()
    }

    @Test("the folder: the override, else the runtime folder, else the cache folder")
    func folderChoice() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(
            BrowserLaunchPage.directory(environment: [
                "PORTAL_AUTH_LAUNCH_DIR": "/x/y", "XDG_RUNTIME_DIR": runtime.path,
            ]).path == "/x/y")
        #expect(
            BrowserLaunchPage.directory(environment: ["XDG_RUNTIME_DIR": runtime.path]).path == runtime.path
                + "/portal-auth")
        #expect(
            BrowserLaunchPage.directory(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]).path
                == "/c/portal-auth/launch")
        #expect(BrowserLaunchPage.directory(environment: ["HOME": "/h"]).path == "/h/.cache/portal-auth/launch")
        chmod(runtime.path, 0o755)
        #expect(
            BrowserLaunchPage.directory(environment: ["XDG_RUNTIME_DIR": runtime.path, "HOME": "/h"]).path
                == "/h/.cache/portal-auth/launch",
            "a runtime folder open to others is not used")
    }

    @Test("a browser started from /snap/bin gets its snap's own runtime folder")
    func snap() {
        #expect(BrowserLaunchPage.snapName(of: "/usr/bin/env", path: "") == nil)
        if access("/snap/bin/firefox", X_OK) == 0 {
            #expect(BrowserLaunchPage.snapName(of: "firefox --new-window", path: "/snap/bin") == "firefox")
        }
    }

    @Test("launch returns the page, which the caller removes; a launch that fails leaves no page")
    func launchAndRemove() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var opener = CommandBrowserOpener(command: "true")
        opener.launchDirectory = directory
        let page = try #require(try opener.launch(URL(string: "https://idp.example/a?state=S")!) { _ in })
        #expect(access(page.fileURL.path, F_OK) == 0)
        page.remove()
        #expect(access(page.fileURL.path, F_OK) != 0)

        var missing = CommandBrowserOpener(command: "/nonexistent/browser-xyz")
        missing.launchDirectory = directory
        #expect(throws: BrowserError.self) { _ = try missing.launch(URL(string: "https://idp.example/")!) { _ in } }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
