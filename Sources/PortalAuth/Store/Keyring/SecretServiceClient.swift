internal import CSecret
import Glibc

/// The Secret Service through libsecret (``SecretItemStorage``), loaded on first use; every call is bounded by a
/// time limit, so an absent or hung keyring daemon fails fast instead of hanging the caller.
struct SecretServiceClient: SecretItemStorage {
    /// How long ``probe()`` waits for the session bus and the Secret Service.
    var probeTimeout: Duration = .seconds(3)
    /// How long one item operation may take.
    var operationTimeout: Duration = .seconds(15)

    func probe() throws(KeyringError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = pa_secret_probe(Self.milliseconds(probeTimeout), &message)
        try Self.check(status, message)
    }

    func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName) throws(KeyringError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_store(Self.schemaCode(schema), names, values, count, label, secret, Self.milliseconds(operationTimeout), &message)
        }
        try Self.check(status, message)
    }

    func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        var secret: UnsafeMutablePointer<CChar>?
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_lookup(Self.schemaCode(schema), names, values, count, Self.milliseconds(operationTimeout), &secret, &message)
        }
        defer { pa_secret_free(secret) }
        if Int(status) == Int(PA_SECRET_NOT_FOUND) { return nil }
        try Self.check(status, message)
        return secret.map { String(cString: $0) }
    }

    @discardableResult
    func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool {
        var message: UnsafeMutablePointer<CChar>?
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_clear(Self.schemaCode(schema), names, values, count, Self.milliseconds(operationTimeout), &message)
        }
        if Int(status) == Int(PA_SECRET_NOT_FOUND) { return false }
        try Self.check(status, message)
        return true
    }

    func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String: String]] {
        var message: UnsafeMutablePointer<CChar>?
        var result: UnsafeMutablePointer<CChar>?
        var length = 0
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_search(Self.schemaCode(schema), names, values, count, Self.milliseconds(operationTimeout), &result, &length, &message)
        }
        defer { free(result) }
        try Self.check(status, message)
        guard let result else { return [] }
        return Self.parseItems(UnsafeBufferPointer(start: UnsafeRawPointer(result).assumingMemoryBound(to: UInt8.self), count: length))
    }

    // MARK: - Helpers

    /// Items as `name\0value\0…\0` runs, one more `\0` after each item.
    static func parseItems(_ bytes: UnsafeBufferPointer<UInt8>) -> [[String: String]] {
        var items: [[String: String]] = []
        var current: [String: String] = [:]
        var strings: [String] = []
        var start = 0
        for index in 0..<bytes.count where bytes[index] == 0 {
            if index == start {  // an empty string: the end of an item
                items.append(current)
                current = [:]
                strings = []
            } else {
                strings.append(String(decoding: bytes[start..<index], as: UTF8.self))
                if strings.count == 2 {
                    current[strings[0]] = strings[1]
                    strings = []
                }
            }
            start = index + 1
        }
        return items
    }

    private static func withAttributes(
        _ attributes: [String: String],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>, Int32) -> Int32
    ) -> Int32 {
        let pairs = attributes.sorted { $0.key < $1.key }
        let names = pairs.map { strdup($0.key) }
        let values = pairs.map { strdup($0.value) }
        defer {
            names.forEach { free($0) }
            values.forEach { free($0) }
        }
        let namePointers = names.map { UnsafePointer($0) }
        let valuePointers = values.map { UnsafePointer($0) }
        return namePointers.withUnsafeBufferPointer { nameBuffer in
            valuePointers.withUnsafeBufferPointer { valueBuffer in
                body(nameBuffer.baseAddress ?? UnsafePointer(bitPattern: 8)!, valueBuffer.baseAddress ?? UnsafePointer(bitPattern: 8)!, Int32(pairs.count))
            }
        }
    }

    private static func check(_ status: Int32, _ message: UnsafeMutablePointer<CChar>?) throws(KeyringError) {
        defer { free(message) }
        guard Int(status) != Int(PA_SECRET_OK) else { return }
        let text = message.map { DisplayText.neutralised(String(cString: $0), limit: 400) } ?? "unknown error"
        let kind: KeyringError.Kind
        switch Int(status) {
        case Int(PA_SECRET_NO_LIBRARY): kind = .noLibrary
        case Int(PA_SECRET_NO_BUS): kind = .noSessionBus
        case Int(PA_SECRET_NO_SERVICE): kind = .noService
        case Int(PA_SECRET_LOCKED): kind = .locked
        case Int(PA_SECRET_TIMED_OUT): kind = .timedOut
        default: kind = .failed
        }
        throw KeyringError(kind, message: text)
    }

    private static func schemaCode(_ schema: SecretSchemaName) -> Int32 {
        switch schema {
        case .credential: return Int32(PA_SECRET_SCHEMA_CREDENTIAL)
        case .network: return Int32(PA_SECRET_SCHEMA_NETWORK)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
