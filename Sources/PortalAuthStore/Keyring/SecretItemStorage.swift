/// The operations on Secret Service items that the keyring store needs: the seam between the store's logic and
/// libsecret (``SecretServiceClient``); tests give an in-memory one.
///
/// Items are found by their string attributes; `search` and `clear` match every item that has the given
/// attributes (and maybe more), `lookup` one of them.
package protocol SecretItemStorage: Sendable {
    /// Checks that the keyring can be used now: a Secret Service answers and its default collection is unlocked.
    func probe() throws(KeyringError)
    /// Stores `secret` under `attributes` in the default collection, replacing an item with the same attributes.
    func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName)
        throws(KeyringError)
    /// The secret of an item with `attributes`; nil when there is none.
    func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String?
    /// Deletes every item with `attributes`; whether there was one.
    @discardableResult
    func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool
    /// The attributes of every item with `attributes`.
    func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String: String]]
}

/// The Secret Service schemas of this library's items.
package enum SecretSchemaName: Sendable, Equatable {
    /// `org.portalauth.Credential`: a stored sign-in's entry (attributes `store`, `entry`, `generation`, `sequence`).
    case credential
    /// `org.portalauth.NetworkCredential`: a network credential (attributes `kind`, `host`, `port`, `username`, `file`,
    /// and `added_by`, the app that added it).
    case network
    /// `org.portalauth.AppNetworkCredential`: a network credential of an app's own store (the attributes of `network`
    /// but `added_by`, and `store`, the path of the app's store file). A schema of its own, so that no removal of the
    /// shared ones (which match every item with the attributes given) reaches an app's.
    case appNetwork
}
