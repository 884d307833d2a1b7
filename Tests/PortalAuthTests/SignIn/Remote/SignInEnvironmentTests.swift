import Testing
@testable import PortalAuth

/// Whether a browser started here can reach the person, from the environment variables.
@Suite("Sign-in environment")
struct SignInEnvironmentTests {
    @Test(
        "display and SSH variables decide",
        arguments: [
            ([:], false, "there is no display"),
            (["DISPLAY": ":0"], true, nil),
            (["WAYLAND_DISPLAY": "wayland-0"], true, nil),
            (["DISPLAY": " "], false, "there is no display"),
            (["SSH_CONNECTION": "10.0.0.2 5555 10.0.0.1 22"], false, "SSH session"),
            (["SSH_TTY": "/dev/pts/3", "DISPLAY": ":0"], false, "SSH session"),
            (["SSH_CONNECTION": "10.0.0.2 5555 10.0.0.1 22", "DISPLAY": "localhost:10.0"], true, nil),
            (["SSH_CLIENT": "10.0.0.2 5555 22", "WAYLAND_DISPLAY": "wayland-0"], false, "SSH session"),
        ] as [([String: String], Bool, String?)])
    func decides(environment: [String: String], canShow: Bool, reason: String?) {
        let described = SignInEnvironment.current(environment)
        #expect(described.canShowBrowser == canShow)
        if let reason {
            #expect(described.reasonBrowserCannotShow?.contains(reason) == true)
        } else {
            #expect(described.reasonBrowserCannotShow == nil)
        }
    }
}
