import Synchronization

/// The process-wide settings of the ArcGIS Maps SDK that concern authentication: the shared
/// `AuthenticationManager` every page and sample of the SDK uses, and the API key.
///
/// ```swift
/// ArcGISEnvironment.authenticationManager.handleChallenges(using: authenticator)
/// let response = try await ArcGISEnvironment.authenticationManager.data(for: .get(url))
/// ```
///
/// The manager starts with in-memory stores; `setupPersistentCredentialStorage()` makes the ArcGIS one persistent.
public enum ArcGISEnvironment {
    /// The manager shared by the whole process.
    public static let authenticationManager = AuthenticationManager()

    private static let key = Mutex<APIKey?>(nil)

    /// The API key access token sent with requests that no stored credential covers (see
    /// `AuthenticationManager.data(for:)`); nil (the default) sends none.
    public static var apiKey: APIKey? {
        get { key.withLock { $0 } }
        set { key.withLock { $0 = newValue } }
    }
}
