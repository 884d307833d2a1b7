import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth iap logout`: end the identity-provider session of an IAP sign-in and delete it.
struct IAPLogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Sign out of the identity provider of an IAP sign-in and delete the stored sign-in.",
        usage: "portal-auth iap logout --config <file> [<options>]",
        discussion: """
            Opens the configuration's logout_url in the browser (OpenID Connect RP-initiated logout, with \
            the stored ID token as id_token_hint) and waits on the loopback redirect URL for the identity \
            provider to redirect back with the logout's state. That return confirms the sign-out unless the \
            provider's UserInfo endpoint (where it advertises one) still accepts the sign-in's access token \
            afterwards: then nothing shows that a session ended (a provider may return without ending \
            anything when the browser does not hold its session). Once the logout has run, the stored \
            sign-in is deleted in every case; without a confirmation within --timeout the browser session \
            may remain. --no-browser \
            prints the URL to open by hand (without the ID token, so a provider that needs it may ignore it). The configuration file may be gone: the \
            sign-in is found by its path.

            Example:
              portal-auth iap logout --config contoso-iap.json --timeout 60

            Where the identity provider advertises a revocation endpoint (RFC 7009), the refresh token is \
            revoked there after the logout; the outcome of each step is shown, and a refresh token that \
            was not revoked (no revocation endpoint, or the revocation failed) is named with where it \
            stays valid and until when.

            Without a terminal and without a browser that can be seen (no display, an SSH session), the \
            logout cannot be confirmed: nothing is revoked or deleted, the sign-in is kept, and the \
            commands that work are shown (exit 64).

            Exit status: 0 confirmed; 69 the session end was confirmed but the revocation endpoint refused or \
            failed (the tokens stay usable until they expire; deleted anyway); 75 no confirmation in time, or \
            a return without evidence of an ended session (deleted anyway); 64 no terminal and no browser \
            here (nothing done, the sign-in kept); 77 the identity \
            provider redirected back with an error (deleted anyway); 130 interrupted (deleted anyway); \
            0 also when nothing was stored for the file.
            """
    )

    @Option(
        help: ArgumentHelp("The IAP configuration JSON file used to sign in.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var config: String

    @OptionGroup var session: LogoutOptions

    func run() async throws {
        let (settings, observer) = session.signOutSettings()
        let store: ArcGISCredentialStore
        do {
            store = try session.credentialStore(settings: settings)
        } catch {
            throw Failure.report(error)
        }
        var credentials = store.iapCredentials(configurationFile: config)
        // A copy of the file signed in with elsewhere: the same provider and client.
        if credentials.isEmpty,
            let configuration = try? await IAPConfiguration.configuration(from: URL(fileURLWithPath: config))
        {
            credentials = store.iapCredentials(for: configuration)
        }
        if credentials.isEmpty {
            StandardError.line(
                "No stored IAP sign-in for \(DisplayText.path(config)); nothing to sign out of. `portal-auth status` lists the stored sign-ins."
            )
            return
        }
        // Nothing is deleted or revoked that cannot be signed out yet: without a browser that reaches the person and
        // without a terminal to paste on, the sign-in is kept and a command that works is given.
        if let reason = IAPCredential.browserLogoutUnavailable(settings: settings) {
            let again = ShellWord.command(["portal-auth"] + CommandLine.arguments.dropFirst())
            let withBrowser = ShellWord.command(
                ["portal-auth", "iap", "logout", "--config", config, "--browser", "--browser-command", "CMD"]
                    + (session.storage.store.map { ["--store", $0] } ?? []))
            StandardError.line(
                "portal-auth: the stored IAP sign-in for \(DisplayText.path(config)) was kept: nothing was revoked or deleted. No browser "
                    + "is opened here (\(reason)) and there is no terminal to paste the address the browser ends on, so the identity "
                    + "provider's session cannot be ended from here (over SSH, ssh -t gives the command a terminal).\n"
                    + "Run this on a terminal:\n    \(again)\n"
                    + "or with a browser command CMD that opens a browser the person can see (one that reaches this machine's "
                    + "loopback, such as wslview on WSL):\n    \(withBrowser)")
            throw ExitCode(64)
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
        _ credential: IAPCredential, from store: ArcGISCredentialStore, settings: SignInSettings,
        observer: TerminalLogoutObserver
    ) async -> ExitCode? {
        let outcome: Result<IAPLogoutResult, any Error>
        do {
            outcome = .success(
                try await Failure.cancellableOnInterrupt { try await credential.logOut(settings: settings) })
        } catch {
            outcome = .failure(error)
        }
        observer.clearStatus()
        let who = credential.username.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? ""
        do {
            try await store.remove(credential)
            store.forgetDeletedSignIns()
        } catch {
            StandardError.line(
                "portal-auth: error: the IAP sign-in for \(DisplayText.path(config))\(who) could not be deleted: \(error)"
            )
            return Failure.report(error)
        }
        switch outcome {
        case .success(let result):
            if result.revocation == .revoked { StandardError.line("The identity provider revoked the tokens\(who).") }
            if let left = LogoutWords.refreshTokenLeft(result) {
                StandardError.line(
                    LogoutWords.isEntraByDesign(result) ? "\(left)\(who)." : "portal-auth: warning: \(left)\(who).")
            }
            if result.isSessionEndConfirmed {
                StandardError.line(
                    "The identity provider confirmed the end of the browser session\(who). The stored sign-in for \(DisplayText.path(config)) was deleted."
                )
            } else if let unconfirmed = LogoutWords.returnWithoutEvidence(result) {
                StandardError.line(
                    "portal-auth: warning: \(unconfirmed)\(who). The stored sign-in for \(DisplayText.path(config)) was deleted, but "
                        + "the session may remain: sign out on the identity provider's own page in the browser you signed in with."
                )
                return ExitCode(75)
            } else {
                // What was printed for opening by hand (the private page carrying the ID token, or the logout URL)
                // served only while the command waited: the page is gone now.
                StandardError.line(
                    "No confirmation from the identity provider within \(session.timeout) s. The stored sign-in for \(DisplayText.path(config)) was "
                        + "deleted, but the browser session may remain (the page or URL above served only while this command "
                        + "waited). To be sure, sign out on the identity provider's own page in that browser.")
                return ExitCode(75)
            }
            if case .failed = result.revocation { return ExitCode(69) }
            return nil
        case .failure(let error) where Failure.isInterruption(error):
            StandardError.line(
                "portal-auth: interrupted; the stored sign-in for \(DisplayText.path(config)) was deleted, but the browser session may remain."
            )
            return ExitCode(130)
        case .failure(let error):
            return Failure.report(
                session.terminalNeeded(error),
                hint:
                    "The stored sign-in for \(DisplayText.path(config)) was deleted anyway; the browser session may remain."
            )
        }
    }
}
