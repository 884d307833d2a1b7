/// What an update does when the store file it re-reads under the lock is corrupted.
package enum CorruptedStorePolicy: Sendable, Equatable {
    /// Throw a `corrupted` ``CredentialStoreError`` and leave the file as it is (the default: a refresh in a
    /// script must not quietly drop every other credential).
    case fail
    /// Move the file aside to `<store>.corrupt-<UTC time>` (its bytes and mode kept), start from an empty store,
    /// and say so in ``StoreSnapshot/recovery``: for a sign-in, which is about to store a new credential anyway.
    /// The file is moved when the update reads it, before the body runs, whether or not the body then changes
    /// anything; a newer-version store is never moved (that is `unsupportedVersion`, not corruption).
    case keepAsideAndStartEmpty
}
