import PortalAuth

extension ArcGISCredentialStore {
    /// The preferences (default sign-in, names, remembered apps) kept beside this store's file; empty for a store
    /// in memory.
    func preferences() throws -> SignInPreferences {
        guard let path = file?.path else { return SignInPreferences() }
        return try SignInPreferences.load(forStore: path)
    }

    /// Changes the preferences kept beside this store's file and writes them.
    func updatePreferences(_ change: (inout SignInPreferences) -> Void) throws {
        guard let path = file?.path else { return }
        var preferences = try SignInPreferences.load(forStore: path)
        let before = preferences
        change(&preferences)
        if preferences != before { try preferences.save(forStore: path) }
    }

    /// Drops the default and the names that point at sign-ins no longer stored (after `revoke`, `iap logout`,
    /// `sign-out`); the remembered apps stay. A failure only warns: the sign-ins themselves are already gone.
    func forgetDeletedSignIns() {
        let kept = Set(credentials.compactMap(SignInSelection.storeKey(of:)))
        do {
            try updatePreferences { $0.forgetAllBut(kept) }
        } catch {
            StandardError.line(
                "portal-auth: warning: the default and names of deleted sign-ins could not be forgotten: \(error)")
        }
    }
}
