import Foundation
import Testing

/// The store files of `Fixtures/store/` (one per format the store has had), put where the tool reads its store.
enum StoreFixture {
    /// Writes the fixture `name` to `path` (0600, its folders made 0700), as the version that wrote it would have.
    static func seed(_ name: String, at path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/store/\(name)")
        try #require(
            FileManager.default.createFile(
                atPath: path, contents: try Data(contentsOf: fixture), attributes: [.posixPermissions: 0o600]))
    }
}
