import PortalAuth

extension ArcGISCredentialStore {
    /// Stores a new sign-in; when the store file was corrupted, says on standard error where the unreadable copy
    /// was kept (it is renamed, never overwritten).
    func keepSignIn(_ credential: ArcGISCredential) async throws {
        if let recovery = try await addAndPersist(credential) { StandardError.line("warning: \(recovery.description)") }
    }
}
