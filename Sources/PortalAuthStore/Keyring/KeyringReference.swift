/// Where the secrets of a store entry are kept in the keyring: the entry's item of that generation.
///
/// In the store file the entry then holds `"keyring": {"generation": "…", "sequence": N}` instead of its
/// tokens. Every write of the entry's secrets makes a new item (a new random generation, the next sequence number)
/// before the file points at it, and removes the old item only after: a process killed in between leaves the old
/// item (which the file still names) or an unnamed newer one, which the next writer takes over (it holds the
/// rotated refresh token) — never no item.
struct KeyringReference: Sendable, Equatable {
    /// A random name of this write of the item.
    var generation: String
    /// Increases with every write of the entry's item; a higher one than the file names is a newer write.
    var sequence: Int64
}
