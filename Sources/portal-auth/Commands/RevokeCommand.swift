import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth revoke`: revoke a portal sign-in's tokens at the portal, then delete it.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a portal sign-in's tokens at the portal and delete the stored sign-in.",
        discussion: """
            Sends the refresh token to the portal's oauth2/revokeToken endpoint, which revokes the access \
            tokens made with it too, then deletes the stored sign-in. The sign-in is deleted also when the \
            revocation fails; its tokens then stay valid on the portal until they expire. Without \
            --client-id every stored sign-in to the portal is revoked.

            Example:
              portal-auth revoke --portal https://www.arcgis.com

            Exit status: 0 revoked and deleted, also when nothing was stored for the portal; 69 the \
            revocation failed (the sign-in was deleted anyway); 130 interrupted (deleted anyway); others \
            as for every command (see `portal-auth help`).
            """
    )

    @Option(help: ArgumentHelp("The portal URL, as given to `portal-auth login`.", valueName: "url"))
    var portal: String

    @Option(name: .customLong("client-id"), help: ArgumentHelp("Only the sign-in made with this client ID.", valueName: "id"))
    var clientID: String?

    @OptionGroup var session: SessionOptions

    func validate() throws {
        guard URL(string: portal)?.host != nil else {
            throw ValidationError("--portal \"\(portal)\" is not an absolute URL; write it like https://www.arcgis.com")
        }
    }

    func run() async throws {
        let portalURL = URL(string: portal)!
        let store: ArcGISCredentialStore
        do {
            store = try session.credentialStore()
        } catch {
            throw Failure.report(error)
        }
        let credentials = store.oauthUserCredentials(portalURL: portalURL, clientID: clientID)
        if credentials.isEmpty {
            let client = clientID.map { " with client ID \($0)" } ?? ""
            StandardError.line("No stored sign-in to the portal \(portal)\(client); nothing to revoke. `portal-auth status` lists the stored sign-ins.")
            return
        }
        var failure: ExitCode?
        for credential in credentials {
            let failed = await revokeAndDelete(credential, from: store)
            failure = failure ?? failed
            if failed?.rawValue == 130 { throw ExitCode(130) }  // the rest stays stored: the user stopped
        }
        if let failure { throw failure }
    }

    /// Revokes, then deletes whatever the revocation gave; the exit code of the first problem, if any.
    private func revokeAndDelete(_ credential: OAuthUserCredential, from store: ArcGISCredentialStore) async -> ExitCode? {
        let name = "\(credential.targetDescription) (\(credential.username.map { "user \(DisplayText.neutralised($0, limit: 200)), " } ?? "")client ID \(credential.configuration.clientID))"
        let refreshExpiry = credential.refreshTokenExpirationDate
        var problem: ExitCode?
        do {
            try await Failure.cancellableOnInterrupt { try await credential.revokeToken() }
        } catch {
            problem = Failure.isInterruption(error) ? ExitCode(130) : ExitCode(69)
            if !Failure.isInterruption(error) { StandardError.line("portal-auth: error: \(error)") }
        }
        do {
            try await store.remove(credential)
        } catch {
            StandardError.line("portal-auth: error: the sign-in to \(name) could not be deleted: \(error)")
            return problem ?? Failure.report(error)
        }
        switch problem?.rawValue {
        case nil:
            StandardError.line("Revoked the tokens of \(name) and deleted the stored sign-in.")
        case 130:
            StandardError.line("portal-auth: interrupted; the stored sign-in to \(name) was deleted, but its tokens may still be valid on the portal.")
        default:
            let until = refreshExpiry.map { " (the refresh token until \($0.ISO8601Format()))" } ?? ""
            StandardError.line("The stored sign-in to \(name) was deleted anyway; its tokens stay valid on the portal until they expire\(until).")
        }
        return problem
    }
}
