import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth iap logout`: end the identity-provider session of an IAP sign-in and delete it.
struct IAPLogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Sign out of the identity provider of an IAP sign-in and delete the stored sign-in.",
        discussion: """
            Opens the configuration's logout_url in the browser (OpenID Connect RP-initiated logout, with \
            the stored ID token as id_token_hint) and waits on the loopback redirect URL for the identity \
            provider to redirect back, which confirms the sign-out. The stored sign-in is deleted in every \
            case; without a confirmation within --timeout the browser session may remain. --no-browser \
            prints the URL to open by hand (without the ID token). The configuration file may be gone: the \
            sign-in is found by its path.

            Example:
              portal-auth iap logout --config contoso-iap.json --timeout 60

            Exit status: 0 confirmed; 75 no confirmation in time (deleted anyway); 77 the identity \
            provider redirected back with an error (deleted anyway); 130 interrupted (deleted anyway); \
            0 also when nothing was stored for the file.
            """
    )

    @Option(help: ArgumentHelp("The IAP configuration JSON file used to sign in.", valueName: "file"))
    var config: String

    @OptionGroup var session: SessionOptions

    func run() async throws {
        let (settings, observer) = session.signOutSettings()
        let store: ArcGISCredentialStore
        do {
            store = try session.credentialStore(settings: settings)
        } catch {
            throw Failure.report(error)
        }
        let credentials = store.iapCredentials(configurationFile: config)
        if credentials.isEmpty {
            StandardError.line("No stored IAP sign-in for \(config); nothing to sign out of. `portal-auth status` lists the stored sign-ins.")
            return
        }
        var failure: ExitCode?
        for credential in credentials {
            let failed = await logOutAndDelete(credential, from: store, settings: settings, observer: observer)
            failure = failure ?? failed
            if failed?.rawValue == 130 { break }  // the rest stays stored: the user stopped
        }
        if let failure { throw failure }
    }

    /// Logs out, then deletes whatever the logout gave; the exit code of the problem, if any.
    private func logOutAndDelete(
        _ credential: IAPCredential, from store: ArcGISCredentialStore, settings: SignInSettings, observer: TerminalLogoutObserver
    ) async -> ExitCode? {
        let outcome: Result<Bool, any Error>
        do {
            outcome = .success(try await Failure.cancellableOnInterrupt { try await credential.invalidate(settings: settings) })
        } catch {
            outcome = .failure(error)
        }
        observer.clearStatus()
        let who = credential.username.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? ""
        do {
            try await store.remove(credential)
        } catch {
            StandardError.line("portal-auth: error: the IAP sign-in for \(config)\(who) could not be deleted: \(error)")
            return Failure.report(error)
        }
        switch outcome {
        case .success(true):
            StandardError.line("The identity provider confirmed the sign-out\(who). The stored sign-in for \(config) was deleted.")
            return nil
        case .success(false):
            StandardError.line(
                "No confirmation from the identity provider within \(session.timeout) s. The stored sign-in for \(config) was "
                    + "deleted, but the browser session may remain: open the URL above in that browser to finish signing out.")
            return ExitCode(75)
        case .failure(let error) where Failure.isInterruption(error):
            StandardError.line("portal-auth: interrupted; the stored sign-in for \(config) was deleted, but the browser session may remain.")
            return ExitCode(130)
        case .failure(let error):
            return Failure.report(error, hint: "The stored sign-in for \(config) was deleted anyway; the browser session may remain.")
        }
    }
}
