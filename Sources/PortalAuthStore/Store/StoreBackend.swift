/// Where the credential store keeps the secrets of its entries (refresh, access and ID tokens).
package enum StoreBackend: String, Sendable, Equatable, CaseIterable {
    /// In the store file itself (0600 in a 0700 folder).
    case file
    /// In the desktop keyring (the Secret Service: GNOME Keyring, KWallet, KeePassXC) through libsecret; the store
    /// file then holds an index without secrets (who, where, expiry, and which keyring item).
    case keyring
}
