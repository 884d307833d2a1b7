/// A corrupted store that an update moved aside before starting from an empty store.
///
/// The caller should tell the user both paths: their credentials may be recoverable from the kept copy.
public struct CorruptedStoreRecovery: Sendable, Equatable, CustomStringConvertible {
    /// The store path that held the corrupted file.
    public let storePath: String
    /// Where the corrupted file now is (same directory, same bytes, same mode).
    public let keptCopyPath: String
    /// Why the file was unusable: the position and parser message, or the shape problem (never file contents).
    public let reason: String

    public var description: String {
        "The credential store \(storePath) was corrupted (\(reason)); it was moved to \(keptCopyPath) "
            + "and a new store was started. Credentials in it may need a new sign-in."
    }
}

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
