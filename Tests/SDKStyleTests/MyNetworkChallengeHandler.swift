import Foundation
import PortalAuth

/// An app's own network challenge handler, as the SDK's "Handle authentication challenges" page writes it.
final class MyNetworkChallengeHandler: NetworkAuthenticationChallengeHandler {
    /// The certificate file and password this app's "picker" answers with.
    let certificate: (file: URL, password: String)?

    init(certificate: (file: URL, password: String)?) {
        self.certificate = certificate
    }

    func handleNetworkAuthenticationChallenge(
        _ challenge: NetworkAuthenticationChallenge
    ) async -> NetworkAuthenticationChallenge.Disposition {
        switch challenge.kind {
        case .ntlm, .basic, .digest:
            // Prompts the user for a username and password to create a `NetworkCredential`.
            return .continueWithCredential(.password(username: "username", password: "password"))
        case .clientCertificate:
            // Prompts the user for a client certificate to create a `NetworkCredential`.
            guard let certificate else { return .cancel }
            do {
                return .continueWithCredential(try .certificate(at: certificate.file, password: certificate.password))
            } catch {
                return .continueWithoutCredential
            }
        case .serverTrust:
            // Prompts the user to trust the server; this app does not.
            return .continueWithoutCredential
        case .negotiate:
            // Rejects the negotiate challenge so the next authentication protection space is tried.
            return .rejectProtectionSpace
        }
    }
}
