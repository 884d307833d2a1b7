import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// The one vocabulary of credential kinds: its spellings are the store file's and the tool's, unchanged, and each
/// reader takes only its own kinds.
@Suite("Credential kinds")
struct CredentialKindTests {
    @Test(
        "each kind's spelling, as store files hold it and the tool prints it",
        arguments: [
            (CredentialKind.oauthUser, "oauth-user", true), (.iap, "iap", true), (.token, "token", false),
            (.oauthApplication, "oauth-application", false), (.pregeneratedToken, "pregenerated-token", false),
        ])
    func spelling(kind: CredentialKind, spelled: String, isSignIn: Bool) {
        #expect(kind.rawValue == spelled)
        #expect(CredentialKind(rawValue: spelled) == kind)
        #expect(kind.isSignIn == isSignIn)
        #expect(CredentialSummary.Kind(rawValue: spelled) == kind, "the summaries' kind is the same type")
    }

    @Test("every kind has a spelling of its own")
    func distinct() {
        #expect(Set(CredentialKind.allCases.map(\.rawValue)).count == CredentialKind.allCases.count)
    }

    @Test("a credential names its kind with the vocabulary, and a store entry of it is written with that spelling")
    func credentialNamesItsKind() throws {
        let info = try #require(
            TokenInfo(
                accessToken: "AT", expirationDate: Date(timeIntervalSince1970: 1_900_000_000), isSSLRequired: false))
        let credential = PregeneratedTokenCredential(
            url: URL(string: "https://gis.example.com/portal")!, tokenInfo: info)
        #expect(credential.kind.credentialKind == .pregeneratedToken)
        #expect(credential.kind.name == "pregenerated-token")
        let (key, entry) = try #require(CredentialStoreEntry.entry(for: credential))
        #expect(entry["kind"] == .string("pregenerated-token"))
        #expect(key.hasPrefix("pregenerated-token|"))
        #expect(CredentialStoreEntry.isEntry(entry))
    }

    @Test(
        "a sign-in record reads only the sign-in kinds; the entry kinds are CredentialStoreEntry's",
        arguments: CredentialKind.allCases)
    func readers(kind: CredentialKind) {
        let json = StoredCredentialLimitsTests.entry([
            "kind": .string(kind.rawValue), "logout_url": .string("https://idp.example/logout"),
        ])
        #expect((StoredCredential(json: json) != nil) == kind.isSignIn)
        #expect(CredentialStoreEntry.isEntry(json.objectValue ?? [:]) == !kind.isSignIn)
    }

    @Test("an unknown kind is read by neither")
    func unknown() {
        let json = StoredCredentialLimitsTests.entry(["kind": .string("oauth_user")])
        #expect(StoredCredential(json: json) == nil)
        #expect(!CredentialStoreEntry.isEntry(json.objectValue ?? [:]))
    }
}
