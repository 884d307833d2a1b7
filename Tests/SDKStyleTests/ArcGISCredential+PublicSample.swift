import Foundation
import PortalAuth

// As the samples of the ArcGIS Maps SDK for Swift write it (their utility-network samples), with the local test
// server's portal and user in place of sampleserver7 and viewer01.
extension ArcGISCredential {
    /// The public credentials for the data in this sample.
    /// - Note: Never hardcode login information in a production application. This is done solely
    /// for the sake of the sample.
    static var publicSample: ArcGISCredential {
        get async throws {
            try await TokenCredential.credential(
                for: LocalServer.portal,
                username: "alice",
                password: LocalServer.password
            )
        }
    }
}
