import Foundation

extension TokenKeepingCredential {
    /// The newest record of this credential: the store file's entry when the credential is persisted and the
    /// entry is at least as recent as the one in memory (another process may have rotated the refresh token
    /// since this one loaded it), else the one in memory. Used where an old token would be useless: revocation
    /// and logout. The store (and its keyring) is read on `BlockingWork`'s pool.
    func latestRecord() async -> StoredCredential {
        let inMemory = keeper.current
        guard let persistence = keeper.persistence,
              let entry = try? await BlockingWork.runIgnoringCancellation({ try persistence.store.read().entry(for: persistence.key) }),
              let stored = StoredCredential(json: .object(entry)),
              stored.updatedAt >= inMemory.updatedAt
        else { return inMemory }
        return stored
    }
}
