import Synchronization
@testable import PortalAuth
@testable import PortalAuthStore

/// A Secret Service in memory, matching items as libsecret does (every given attribute, plus the schema), with
/// switches for the failures the store must survive.
final class InMemorySecretStorage: SecretItemStorage {
    struct Item: Equatable {
        var schema: SecretSchemaName
        var attributes: [String: String]
        var secret: String
    }

    private struct State {
        var items: [Item] = []
        var probeError: KeyringError?
        var failStores = false
        var calls = 0
    }

    private let state = Mutex(State())

    /// The items now.
    var items: [Item] { state.withLock { $0.items } }
    /// How many calls reached the keyring (the probe included).
    var calls: Int { state.withLock { $0.calls } }

    /// Makes `probe()` fail with `error` (nil: succeed).
    func setProbeError(_ error: KeyringError?) { state.withLock { $0.probeError = error } }
    /// Makes every `store` fail.
    func setFailingStores(_ failing: Bool) { state.withLock { $0.failStores = failing } }
    /// Adds an item as another program (or a killed writer) would.
    func plant(_ item: Item) { state.withLock { $0.items.append(item) } }

    func probe() throws(KeyringError) {
        let error = state.withLock { state -> KeyringError? in
            state.calls += 1
            return state.probeError
        }
        if let error { throw error }
    }

    func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName)
        throws(KeyringError)
    {
        let failing = state.withLock { state -> Bool in
            state.calls += 1
            guard !state.failStores else { return true }
            state.items.removeAll { $0.schema == schema && $0.attributes == attributes }
            state.items.append(Item(schema: schema, attributes: attributes, secret: secret))
            return false
        }
        if failing { throw KeyringError(.failed, message: "store refused by the test") }
    }

    func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String? {
        state.withLock { state in
            state.calls += 1
            return state.items.first { Self.matches($0, attributes, schema) }?.secret
        }
    }

    func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool {
        state.withLock { state in
            state.calls += 1
            let before = state.items.count
            state.items.removeAll { Self.matches($0, attributes, schema) }
            return state.items.count != before
        }
    }

    func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String: String]] {
        state.withLock { state in
            state.calls += 1
            return state.items.filter { Self.matches($0, attributes, schema) }.map(\.attributes)
        }
    }

    private static func matches(_ item: Item, _ attributes: [String: String], _ schema: SecretSchemaName) -> Bool {
        item.schema == schema && attributes.allSatisfy { item.attributes[$0.key] == $0.value }
    }
}
