import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// No message interpolates an empty value (issue 45: "… If the provider publishes its discovery document under
/// another issuer, give ;"): every case of the errors a refresh and a sign-in's discovery report is rendered with
/// empty inputs, and the text must read as a sentence without a gap where the value was.
@Suite("Messages with empty values")
struct EmptyValueMessageTests {
    /// The marks an empty interpolation leaves: empty brackets, a space before punctuation, a doubled space or
    /// punctuation, a colon or space at the end.
    static func gaps(in text: String) -> [String] {
        let marks = ["()", "( ", " )", " ,", " ;", " .", " :", "  ", ":.", ":;", ";.", ",,", ", ,", ": ,", "\"\""]
        var found = marks.filter { text.contains($0) }
        if text.hasSuffix(":") || text.hasSuffix(" ") || text.hasPrefix(" ") { found.append("an open end") }
        return found
    }

    static let credentialErrors: [(String, CredentialError)] = [
        ("signInRequired", .signInRequired("", because: "")),
        ("refreshTokenRejected", .refreshTokenRejected("", detail: "")),
        ("unavailable", .unavailable("", attempts: 0, lastError: "")),
        ("outcomeUnknown", .outcomeUnknown("", reason: "")),
        ("refreshedButNotStored", .refreshedButNotStored("", store: "", reason: "")),
        ("notStored", .notStored("")),
        ("invalidated", .invalidated("")),
        ("insecureTransport", .insecureTransport("", url: "")),
    ]

    @Test("every CredentialError case with empty inputs has no gap", arguments: credentialErrors)
    func credentialError(name: String, error: CredentialError) {
        #expect(Self.gaps(in: error.description).isEmpty, "\(name): \(error.description)")
    }

    @Test("every DiscoveryError case with empty inputs has no gap")
    func discoveryError() throws {
        let document = try #require(URL(string: "https://idp.example/.well-known/openid-configuration"))
        let configured = try #require(URL(string: "https://idp.example/authorize"))
        let errors: [(String, DiscoveryError)] = [
            ("issuerMismatch", .issuerMismatch(document: document, claimed: "", expected: "")),
            ("issuerMismatch without a claim", .issuerMismatch(document: document, claimed: nil, expected: "")),
            (
                "authorizeEndpointMismatch",
                .authorizeEndpointMismatch(document: document, advertised: "", configured: configured)
            ),
            ("unusableKeySet", .unusableKeySet(document: document, value: "", problem: "")),
        ]
        for (name, error) in errors {
            #expect(Self.gaps(in: error.description).isEmpty, "\(name): \(error.description)")
        }
    }

    @Test("the gap check finds the sentence of the report")
    func checkFindsReportedSentence() {
        #expect(!Self.gaps(in: "If the provider publishes its discovery document under another issuer, give ;").isEmpty)
    }
}
