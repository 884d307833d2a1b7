import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth revoke`: revoke a portal sign-in's tokens at the portal, then delete it.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a portal sign-in's tokens at the portal and delete the stored sign-in.",
        usage: "portal-auth revoke [<selection>] [<options>]",
        discussion: """
            Sends the refresh token to the portal's oauth2/revokeToken endpoint, which revokes the access \
            tokens made with it too, then deletes the stored sign-in. The sign-in is deleted also when the \
            revocation fails; its tokens then stay valid on the portal until they expire. Without \
            --client-id every stored sign-in to the portal is revoked; without --portal, the sign-in \
            picked as for `portal-auth token` (the only one, the default, --name NAME, --url URL). The \
            app's client ID stays known, so `portal-auth token --interactive` can sign in again.

            Example:
              portal-auth revoke --portal https://www.arcgis.com

            Exit status: 0 revoked and deleted, also when nothing was stored for the portal; 69 the \
            revocation failed (the sign-in was deleted anyway); 130 interrupted (deleted anyway); others \
            as for every command (see `portal-auth help`).
            """
    )

    @OptionGroup var selection: CredentialSelection

    @OptionGroup var session: StoreOptions

    func run() async throws {
        let store: ArcGISCredentialStore
        let credentials: [OAuthUserCredential]
        do {
            store = try session.credentialStore()
            credentials = try await chosen(in: store)
        } catch {
            throw Failure.report(error)
        }
        if credentials.isEmpty {
            StandardError.line(
                "\(TokenCommand.nothingStored(for: selection.target)); nothing to revoke. `portal-auth status` lists the stored sign-ins."
            )
            return
        }
        // The apps stay known (so `token --interactive` and the printed commands can name the client ID); a default
        // or name that pointed at a deleted sign-in goes with it.
        try? store.updatePreferences { preferences in
            for configuration in credentials.map(\.configuration).reversed() {
                preferences.remember(
                    .init(
                        portalURL: configuration.portalURL, clientID: configuration.clientID,
                        redirectURL: configuration.redirectURL))
            }
        }
        defer { store.forgetDeletedSignIns() }
        var failure: ExitCode?
        for credential in credentials {
            let failed = await revokeAndDelete(credential, from: store)
            failure = failure ?? failed
            if failed?.rawValue == 130 { throw ExitCode(130) }  // the rest stays stored: the user stopped
        }
        if let failure { throw failure }
    }

    /// The portal sign-ins to revoke: every one for `--portal` without `--client-id`, else the one selected.
    private func chosen(in store: ArcGISCredentialStore) async throws -> [OAuthUserCredential] {
        if case .portal(let url, let clientID) = selection.target {
            return store.oauthUserCredentials(portalURL: url, clientID: clientID)
        }
        switch try await SelectedCredential.find(selection.target, in: store) {
        case .portal(let credential)?: return [credential]
        case .iap(let credential, let file)?:
            // The command ready to paste: the file the sign-in was made with, and this command's store.
            let command = file.map {
                ShellWord.command(
                    ["portal-auth", "iap", "logout", "--config", $0] + (session.store.map { ["--store", $0] } ?? []))
            }
            throw UsageProblem(
                description: "\(credential.targetDescription) is an IAP sign-in: end it with"
                    + (command.map { ":\n    \($0)" }
                        ?? " `portal-auth iap logout --config FILE` (the IAP file it was signed in with)"))
        case nil: return []
        }
    }

    /// Revokes, then deletes whatever the revocation gave; the exit code of the first problem, if any.
    private func revokeAndDelete(_ credential: OAuthUserCredential, from store: ArcGISCredentialStore) async
        -> ExitCode?
    {
        let name =
            "\(credential.targetDescription) (\(credential.username.map { "user \(DisplayText.neutralised($0, limit: 200)), " } ?? "")client ID \(credential.configuration.clientID))"
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
            StandardError.line(
                "portal-auth: interrupted; the stored sign-in to \(name) was deleted, but its tokens may still be valid on the portal."
            )
        default:
            let until = refreshExpiry.map { " (the refresh token until \($0.ISO8601Format()))" } ?? ""
            StandardError.line(
                "The stored sign-in to \(name) was deleted anyway; its tokens stay valid on the portal until they expire\(until)."
            )
        }
        return problem
    }
}
