import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// Registering a scheme handler with the real xdg-utils and desktop-file-utils in a temporary `XDG_DATA_HOME` and
/// `XDG_CONFIG_HOME` (no desktop named in `XDG_CURRENT_DESKTOP`: xdg-mime's generic path, as on a bare session).
@Suite("Scheme handler registration", .serialized)
struct SchemeRegistrationTests {
    private static let scheme = "pa-unit-test-scheme"

    private func environment(_ folder: TemporaryDirectory) -> [String: String] {
        [
            "HOME": folder.path, "XDG_DATA_HOME": "\(folder.path)/data", "XDG_CONFIG_HOME": "\(folder.path)/config",
            "XDG_DATA_DIRS": "\(folder.path)/system",
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
    }

    @Test(
        "Exec arguments are quoted and escaped as the Desktop Entry Specification asks",
        arguments: [
            ("/usr/bin/portal-auth", "/usr/bin/portal-auth"),
            ("handle-redirect", "handle-redirect"),
            ("/opt/My Apps/portal-auth", "\"/opt/My Apps/portal-auth\""),
            ("50%", "50%%"),
            ("a\"b", "\"a\\\\\"b\""),
            ("$HOME", "\"\\\\$HOME\""),
            ("back\\slash", "\"back\\\\\\\\slash\""),
            ("", "\"\""),
        ])
    func execQuoting(argument: String, expected: String) {
        #expect(SchemeRegistration.execArgument(argument) == expected)
    }

    @Test(
        "register writes a valid NoDisplay .desktop file and makes it the default; unregister removes both",
        .tags(.desktopTools), ExternalTools.condition)
    func registerAndUnregister() throws {
        let folder = try TemporaryDirectory()
        let registration = try SchemeRegistration(
            scheme: Self.scheme, command: ["/opt/My Apps/portal-auth", "handle-redirect"],
            environment: environment(folder))
        #expect(try registration.status() == .notRegistered)
        try registration.register()
        #expect(try registration.status() == .registered)
        #expect(registration.desktopFilePath == "\(folder.path)/data/applications/portal-auth-\(Self.scheme).desktop")
        let text = try String(contentsOfFile: registration.desktopFilePath, encoding: .utf8)
        #expect(text.contains("MimeType=x-scheme-handler/\(Self.scheme);\n"))
        #expect(text.contains("NoDisplay=true\n"))
        #expect(text.contains("Exec=\"/opt/My Apps/portal-auth\" handle-redirect %u\n"))
        let validate = try DesktopTool.run(
            "desktop-file-validate", [registration.desktopFilePath], environment: environment(folder))
        #expect(validate.status == 0, "\(validate.output)")
        let cache = try String(contentsOfFile: "\(folder.path)/data/applications/mimeinfo.cache", encoding: .utf8)
        #expect(
            cache.contains("x-scheme-handler/\(Self.scheme)=portal-auth-\(Self.scheme).desktop"),
            "update-desktop-database ran")

        #expect(try registration.unregister())
        #expect(!FileManager.default.fileExists(atPath: registration.desktopFilePath))
        #expect(try registration.status() == .notRegistered)
        #expect(try !registration.unregister(), "nothing left to remove")
    }

    @Test(
        "a scheme another application handles is left alone unless forced; unregistering leaves the other app",
        .tags(.desktopTools), ExternalTools.condition)
    func takeover() throws {
        let folder = try TemporaryDirectory()
        let env = environment(folder)
        let applications = "\(folder.path)/data/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try """
        [Desktop Entry]
        Type=Application
        Name=Other
        Exec=/bin/true %u
        MimeType=x-scheme-handler/\(Self.scheme);

        """.write(toFile: "\(applications)/other-app.desktop", atomically: true, encoding: .utf8)
        try DesktopTool.require(
            "xdg-mime", ["default", "other-app.desktop", "x-scheme-handler/\(Self.scheme)"], environment: env)

        // xdg-mime passes over a default whose program does not exist: a real one here.
        let registration = try SchemeRegistration(
            scheme: Self.scheme, command: ["/bin/true", "handle-redirect"], environment: env)
        #expect(try registration.status() == .handledBy("other-app.desktop"))
        do {
            try registration.register()
            Issue.record("registering over another application must need force")
        } catch {
            #expect(error.kind == .schemeOwnedByAnotherApplication)
            #expect(error.description.contains("other-app.desktop"))
        }
        #expect(!FileManager.default.fileExists(atPath: registration.desktopFilePath))
        try registration.register(force: true)
        #expect(try registration.status() == .registered)
        try registration.unregister()
        #expect(FileManager.default.fileExists(atPath: "\(applications)/other-app.desktop"))
        #expect(try registration.status() != .registered)
    }

    @Test("a scheme that is not a custom one is refused", arguments: ["http", "https", "file", "1abc", "my app", ""])
    func invalidScheme(scheme: String) {
        #expect(throws: SchemeRedirectError.self) { try SchemeRegistration(scheme: scheme, command: ["/bin/true"]) }
    }
}
