import Foundation
import Testing

@testable import PortalAuth
@testable import PortalAuthStore

/// Reading a store file's entries and its recorded place of the secrets in one parse (issue 17).
@Suite("store document: entries and recorded backend from one parse")
struct StoreDocumentTests {
    /// Documents and the place of the secrets each records.
    static let documents: [(String, StoreBackend?)] = [
        (#"{"format": "portal-auth-credentials", "version": 1, "entries": {}}"#, nil),
        (
            #"{"format": "portal-auth-credentials", "version": 1, "secrets": "keyring", "entries": {"a": {"x": 1}}}"#,
            .keyring
        ),
        (
            #"{"format": "portal-auth-credentials", "version": 1, "secrets": "file", "entries": {"a": {}, "b": {"y": "z"}}}"#,
            .file
        ),
        (#"{"format": "portal-auth-credentials", "version": 1, "secrets": "cloud", "entries": {}}"#, nil),
        (#"{"format": "portal-auth-credentials", "version": 1, "secrets": 7, "entries": {}}"#, nil),
    ]

    @Test("decodeRecording gives decode's entries and the recorded backend", arguments: documents)
    func same(text: String, recorded: StoreBackend?) throws {
        let data = Data(text.utf8)
        let both = try StoreDocument.decodeRecording(data, path: "/s.json")
        let entries = try StoreDocument.decode(data, path: "/s.json")
        #expect(both.entries.keys.sorted() == entries.keys.sorted())
        for (key, value) in entries { #expect(both.entries[key]?.members.map(\.key) == value.members.map(\.key)) }
        #expect(both.recorded == recorded)
    }

    @Test(
        "the recorded backend is read where it is well-formed",
        arguments: [
            ("keyring", StoreBackend.keyring), ("file", .file), ("cloud", nil),
        ] as [(String, StoreBackend?)])
    func recorded(value: String, expected: StoreBackend?) throws {
        let text = #"{"format": "portal-auth-credentials", "version": 1, "secrets": "\#(value)", "entries": {}}"#
        #expect(try StoreDocument.decodeRecording(Data(text.utf8), path: "/s.json").recorded == expected)
    }

    @Test("a corrupted document fails the same way")
    func corrupted() {
        let data = Data(#"{"format": "portal-auth-credentials", "version": 1, "secrets": "file"}"#.utf8)
        #expect(throws: CredentialStoreError.self) { try StoreDocument.decodeRecording(data, path: "/s.json") }
        #expect(throws: CredentialStoreError.self) { try StoreDocument.decode(data, path: "/s.json") }
    }
}
