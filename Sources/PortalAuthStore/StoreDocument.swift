package import Foundation
package import PortalAuthCore

/// The store file's format:
///
/// ```json
/// {
///   "format": "portal-auth-credentials",
///   "version": 1,
///   "entries": { "<key>": { … }, … }
/// }
/// ```
///
/// `"secrets": "file"` or `"keyring"` (optional, written by `portal-auth store migrate`) records where the user
/// chose to keep the secrets; the automatic choice follows it. Older readers ignore it.
///
/// Pretty-printed with keys in sorted order, so two writes of the same entries give the same bytes.
/// A file of a newer version is refused (never rewritten by this version); anything else that is not this
/// shape is corrupted.
package enum StoreDocument {
    /// The value of the `format` member.
    static let formatName = "portal-auth-credentials"
    /// The version this code reads and writes.
    static let currentVersion: Int64 = 1

    /// The entries of a store file's bytes.
    ///
    /// - Throws: `corrupted` (with the parser's position, or the shape problem) or `unsupportedVersion`.
    package static func decode(_ data: Data, path: String) throws(CredentialStoreError) -> [String: JSONObject] {
        try decodeRecording(data, path: path).entries
    }

    /// The entries of a store file's bytes and the place of the secrets it records (nil when none or unknown),
    /// from one parse: every command reads the store, and parsing it twice was a tenth of `portal-auth token`.
    ///
    /// - Throws: as ``decode(_:path:)``.
    static func decodeRecording(
        _ data: Data, path: String
    ) throws(CredentialStoreError) -> (entries: [String: JSONObject], recorded: StoreBackend?) {
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch {
            throw .corrupted(path, syntax: error)
        }
        guard let document = root.objectValue else {
            throw .corrupted(path, reason: "the top level is \(article(root.typeName)), not an object")
        }
        guard document["format"]?.stringValue == formatName else {
            throw .corrupted(path, reason: "it has no \"format\": \"\(formatName)\" member")
        }
        guard let version = document["version"]?.integerValue, version >= 1 else {
            throw .corrupted(path, reason: "\"version\" is missing or not a positive integer")
        }
        if version > currentVersion { throw .unsupportedVersion(path, found: version) }
        guard let entries = document["entries"]?.objectValue else {
            throw .corrupted(path, reason: "\"entries\" is missing or not an object")
        }
        var result: [String: JSONObject] = [:]
        for (key, value) in entries.members {
            guard let entry = value.objectValue else {
                throw .corrupted(path, reason: "entry \"\(key)\" is \(article(value.typeName)), not an object")
            }
            result[key] = entry
        }
        return (result, Self.recorded(in: document))
    }

    /// The member recording the chosen place of the secrets.
    static let secretsMember = "secrets"

    /// The place of the secrets recorded in a store document's top-level object.
    private static func recorded(in document: JSONObject) -> StoreBackend? {
        document[secretsMember]?.stringValue.flatMap(StoreBackend.init(rawValue:))
    }

    /// The bytes of a store file holding `entries` (and recording `backend` as the chosen place of the secrets).
    package static func encode(_ entries: [String: JSONObject], recording backend: StoreBackend? = nil) -> Data {
        let sorted = entries.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.object($0.value)) }
        var members: [(key: String, value: JSONValue)] = [
            (key: "format", value: .string(formatName)),
            (key: "version", value: .integer(currentVersion)),
        ]
        if let backend { members.append((key: secretsMember, value: .string(backend.rawValue))) }
        members.append((key: "entries", value: .object(JSONObject(sorted))))
        let document: JSONValue = .object(JSONObject(members))
        return Data(utf8Of: document.serialized(indent: 2) + "\n")
    }

    private static func article(_ typeName: String) -> String {
        (typeName.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + typeName
    }
}
