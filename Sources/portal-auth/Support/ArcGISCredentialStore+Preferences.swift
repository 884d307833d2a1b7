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
}
