import Foundation
import Testing

@testable import PortalAuth

/// Reading a store file's entries and its recorded place of the secrets in one parse (issue 17) gives what the
/// two separate readings give.
@Suite("store document: entries and recorded backend from one parse")
struct StoreDocumentTests {
    static let documents: [String] = [
        #"{"format": "portal-auth-credentials", "version": 1, "entries": {}}"#,
        #"{"format": "portal-auth-credentials", "version": 1, "secrets": "keyring", "entries": {"a": {"x": 1}}}"#,
        #"{"format": "portal-auth-credentials", "version": 1, "secrets": "file", "entries": {"a": {}, "b": {"y": "z"}}}"#,
        #"{"format": "portal-auth-credentials", "version": 1, "secrets": "cloud", "entries": {}}"#,
        #"{"format": "portal-auth-credentials", "version": 1, "secrets": 7, "entries": {}}"#,
    ]

    @Test("decodeRecording equals decode plus recordedBackend", arguments: documents)
    func same(text: String) throws {
        let data = Data(text.utf8)
        let both = try StoreDocument.decodeRecording(data, path: "/s.json")
        let entries = try StoreDocument.decode(data, path: "/s.json")
        #expect(both.entries.keys.sorted() == entries.keys.sorted())
        for (key, value) in entries { #expect(both.entries[key]?.members.map(\.key) == value.members.map(\.key)) }
        #expect(both.recorded == StoreDocument.recordedBackend(data))
    }

    @Test("the recorded backend is read where it is well-formed", arguments: [
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
