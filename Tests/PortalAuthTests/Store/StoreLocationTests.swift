import Testing
@testable import PortalAuth
@testable import PortalAuthStore

@Suite("Credential store location")
struct StoreLocationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let explicit: String?
        let environment: [String: String]
        let path: String
        let source: StoreLocation.Source
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "explicit path beats everything", explicit: "/opt/x.json",
            environment: ["PORTAL_AUTH_STORE": "/e/s.json", "XDG_STATE_HOME": "/xdg", "HOME": "/home/u"],
            path: "/opt/x.json", source: .explicit),
        Case(
            name: "PORTAL_AUTH_STORE beats XDG and HOME", explicit: nil,
            environment: ["PORTAL_AUTH_STORE": "/e/s.json", "XDG_STATE_HOME": "/xdg", "HOME": "/home/u"],
            path: "/e/s.json", source: .environment),
        Case(
            name: "XDG_STATE_HOME beats HOME", explicit: nil,
            environment: ["XDG_STATE_HOME": "/xdg/", "HOME": "/home/u"],
            path: "/xdg/portal-auth/credentials.json", source: .xdgStateHome),
        Case(
            name: "HOME default", explicit: nil, environment: ["HOME": "/home/u"],
            path: "/home/u/.local/state/portal-auth/credentials.json", source: .home),
        Case(
            name: "relative XDG_STATE_HOME is ignored", explicit: nil,
            environment: ["XDG_STATE_HOME": "state", "HOME": "/home/u"],
            path: "/home/u/.local/state/portal-auth/credentials.json", source: .home),
        Case(
            name: "empty variables count as unset", explicit: "",
            environment: ["PORTAL_AUTH_STORE": "", "XDG_STATE_HOME": "", "HOME": "/home/u"],
            path: "/home/u/.local/state/portal-auth/credentials.json", source: .home),
        Case(
            name: "relative PORTAL_AUTH_STORE is taken against the current directory", explicit: nil,
            environment: ["PORTAL_AUTH_STORE": "./dir//s.json", "HOME": "/home/u"],
            path: "/work/here/dir/s.json", source: .environment),
        Case(
            name: "relative explicit path is taken against the current directory", explicit: "s.json",
            environment: [:], path: "/work/here/s.json", source: .explicit),
    ]

    @Test("resolves by precedence", arguments: cases)
    func resolves(_ example: Case) throws {
        let location = try StoreLocation.resolve(
            explicitPath: example.explicit, environment: example.environment, currentDirectory: "/work/here")
        #expect(location.path == example.path)
        #expect(location.source == example.source)
    }

    @Test("no HOME and no override is an error that says what to set")
    func noLocation() {
        #expect {
            try StoreLocation.resolve(environment: ["XDG_STATE_HOME": "relative"], currentDirectory: "/")
        } throws: { error in
            let error = error as? CredentialStoreError
            return error?.kind == .noLocation && error?.category == .local
                && error?.description.contains("PORTAL_AUTH_STORE") == true
        }
    }

    @Test("directory and lock file sit beside the store")
    func derivedPaths() {
        let location = StoreLocation(path: "/a/b/credentials.json")
        #expect(location.directory == "/a/b")
        #expect(location.lockPath == "/a/b/credentials.json.lock")
        #expect(StoreLocation(path: "/top.json").directory == "/")
    }
}
