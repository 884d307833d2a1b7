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
