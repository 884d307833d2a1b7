internal import CPortalAuthSecret
import Glibc
import PortalAuthCore
import Synchronization

/// The Secret Service through libsecret (``SecretItemStorage``), loaded on first use; every call is bounded by a
/// time limit, so an absent or hung keyring daemon fails fast instead of hanging the caller.
///
/// The calls of a process may also share one deadline (``limitCalls(until:)``, the tool's `--timeout`): no call waits
/// past it, and once the Secret Service has failed to answer in time, later calls fail at once instead of waiting
/// again (a stopped daemon does not come back within one command).
package struct SecretServiceClient: SecretItemStorage {
    /// How long ``probe()`` waits for the session bus and the Secret Service.
    var probeTimeout: Duration = .seconds(3)
    /// How long one item operation may take.
    var operationTimeout: Duration = .seconds(15)

    package init() {}

    /// The deadline of every call in this process, and the time-out that makes later calls fail at once.
    private static let shared = Mutex<(deadline: ContinuousClock.Instant?, unanswered: KeyringError?)>((nil, nil))

    /// Makes every keyring call of this process end by `deadline` (nil: only each call's own limit), so that a hung
    /// Secret Service cannot make a command outlast its `--timeout`.
    package static func limitCalls(until deadline: ContinuousClock.Instant?) {
        shared.withLock { $0.deadline = deadline }
    }

    /// The time limit of one call: its own, cut to what is left before the shared deadline.
    ///
    /// - Throws: `KeyringError` `.timedOut` at once when the deadline has passed, or when the Secret Service already
    ///   failed to answer in time in this process.
    private static func limit(_ own: Duration) throws(KeyringError) -> (milliseconds: Int32, cut: Bool) {
        let (deadline, unanswered) = shared.withLock { ($0.deadline, $0.unanswered) }
        if let unanswered { throw unanswered }
        guard let deadline else { return (milliseconds(own), false) }
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .milliseconds(1) else {
            throw KeyringError(
                .timedOut, message: "the time limit for keyring calls ran out before the Secret Service was asked")
        }
        return left < own ? (milliseconds(left), true) : (milliseconds(own), false)
    }

    /// `check(status:message:)`, remembering a time-out so that later calls do not wait for the same silence.
    private static func finish(_ status: Int32, _ message: UnsafeMutablePointer<CChar>?, cut: Bool) throws(KeyringError)
    {
        do {
            try check(status, message)
        } catch  where error.kind == .timedOut {
            let reason =
                cut
                ? "the time limit for keyring calls ran out while waiting for the Secret Service (\(error.message))"
                : error.message
            // Only within a command's deadline: a long-running program asks again at its next call.
            let unanswered = KeyringError(.timedOut, message: "\(reason); not asked again by this command")
            shared.withLock { if $0.deadline != nil { $0.unanswered = unanswered } }
            throw KeyringError(.timedOut, message: reason)
        }
    }

    package func probe() throws(KeyringError) {
        let limit = try Self.limit(probeTimeout)
        var message: UnsafeMutablePointer<CChar>?
        let status = pa_secret_probe(limit.milliseconds, &message)
        try Self.finish(status, message, cut: limit.cut)
    }

    package func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName)
        throws(KeyringError)
    {
        let limit = try Self.limit(operationTimeout)
        var message: UnsafeMutablePointer<CChar>?
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_store(Self.schemaCode(schema), names, values, count, label, secret, limit.milliseconds, &message)
        }
        try Self.finish(status, message, cut: limit.cut)
    }

    package func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String? {
        let limit = try Self.limit(operationTimeout)
        var message: UnsafeMutablePointer<CChar>?
        var secret: UnsafeMutablePointer<CChar>?
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_lookup(Self.schemaCode(schema), names, values, count, limit.milliseconds, &secret, &message)
        }
        defer { pa_secret_free(secret) }
        if Int(status) == Int(PA_SECRET_NOT_FOUND) { return nil }
        try Self.finish(status, message, cut: limit.cut)
        return secret.map { String(cString: $0) }
    }

    @discardableResult
    package func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool {
        let limit = try Self.limit(operationTimeout)
        var message: UnsafeMutablePointer<CChar>?
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_clear(Self.schemaCode(schema), names, values, count, limit.milliseconds, &message)
        }
        if Int(status) == Int(PA_SECRET_NOT_FOUND) { return false }
        try Self.finish(status, message, cut: limit.cut)
        return true
    }

    package func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String:
        String]]
    {
        let limit = try Self.limit(operationTimeout)
        var message: UnsafeMutablePointer<CChar>?
        var result: UnsafeMutablePointer<CChar>?
        var length = 0
        let status = Self.withAttributes(attributes) { names, values, count in
            pa_secret_search(
                Self.schemaCode(schema), names, values, count, limit.milliseconds, &result, &length, &message)
        }
        defer { free(result) }
        try Self.finish(status, message, cut: limit.cut)
        guard let result else { return [] }
        return Self.parseItems(
            UnsafeBufferPointer(start: UnsafeRawPointer(result).assumingMemoryBound(to: UInt8.self), count: length))
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
                body(
                    nameBuffer.baseAddress ?? UnsafePointer(bitPattern: 8)!,
                    valueBuffer.baseAddress ?? UnsafePointer(bitPattern: 8)!, Int32(pairs.count))
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
        case .appNetwork: return Int32(PA_SECRET_SCHEMA_APP_NETWORK)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
