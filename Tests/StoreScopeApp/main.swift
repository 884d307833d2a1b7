// An app built on PortalAuth's public API only, as an app developer writes one, for the integration test of one
// machine with two apps and the tool on its stores ("Store scopes: two apps and the tool", issue 45):
//
//     portal-auth-test-app (--own ID | --shared ID) add NAME | add-password NAME | list | sign-out
//
// `add NAME` adds a pregenerated token for https://NAME.example/arcgis (no network); `add-password NAME` a network
// credential (a password) for that host; `list` prints one line per credential the app holds (`iap URL`,
// `portal URL`, `token URL`, `password HOST`); `sign-out` runs the manager's signOut().
import Foundation
import PortalAuth

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3, ["--own", "--shared"].contains(arguments[0]) else {
    FileHandle.standardError.write(
        Data(
            "usage: portal-auth-test-app (--own ID | --shared ID) add NAME | add-password NAME | list | sign-out\n".utf8
        ))
    exit(64)
}
let scope: CredentialStoreScope = arguments[0] == "--own" ? .app(arguments[1]) : .shared(as: arguments[1])
let manager = ArcGISEnvironment.authenticationManager
do {
    try await manager.setupPersistentCredentialStorage(access: .whenUnlocked, scope: scope)
    switch arguments[2] {
    case "add" where arguments.count == 4:
        let url = URL(string: "https://\(arguments[3]).example/arcgis")!
        let info = TokenInfo(
            accessToken: "token-\(arguments[3])", expirationDate: Date().addingTimeInterval(3600), isSSLRequired: true)!
        try await manager.arcGISCredentialStore.addAndPersist(PregeneratedTokenCredential(url: url, tokenInfo: info))
    case "add-password" where arguments.count == 4:
        let space = ProtectionSpace(url: URL(string: "https://\(arguments[3]).example/arcgis")!)!
        try await manager.networkCredentialStore.add(
            .password(username: "user-\(arguments[3])", password: "password-\(arguments[3])"), for: space)
        try await manager.networkCredentialStore.waitForPersistence()
    case "list":
        for credential in manager.arcGISCredentialStore.credentials {
            switch credential.kind {
            case .iap(let iap): print("iap \(iap.configuration.authorizeURL)")
            case .oAuthUser(let user): print("portal \(user.configuration.portalURL)")
            case .pregeneratedToken(let token): print("token \(token.url)")
            case .token, .oAuthApplication: print("other")
            }
        }
        for space in await manager.networkCredentialStore.protectionSpaces {
            print("password \(space.host)")
        }
    case "sign-out":
        await manager.signOut()
        try await manager.arcGISCredentialStore.waitForPersistence()
        try await manager.networkCredentialStore.waitForPersistence()
        print("signed out")
    default:
        FileHandle.standardError.write(Data("unknown command \(arguments[2])\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("portal-auth-test-app: \(error)\n".utf8))
    exit(70)
}
