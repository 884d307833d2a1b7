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

            Without a terminal and without a browser that can be seen (no display, an SSH session), no \
            browser logout can run: the refresh token is still revoked where the identity provider \
            advertises a revocation endpoint (that needs no browser), the sign-in is deleted, and what stays \
            valid is named: the browser session at the identity provider, a refresh token that was not \
            revoked (where and until when), the last access token (until when). The same rule as \
            `portal-auth sign-out` and the library's signOut().

            Exit status: 0 confirmed; 69 the session end was confirmed but the revocation endpoint refused or \
            failed (the tokens stay usable until they expire; deleted anyway), or no browser logout could \
            run here (the browser session stays; deleted anyway); 75 no confirmation in time, or \
            a return without evidence of an ended session (deleted anyway); 77 the identity \
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
            if let reason = result.browserLogoutSkipped {
                let access =
                    result.accessTokenExpiry.flatMap { expiry in
                        expiry > settings.clock.now
                            ? " The last access token may be accepted until \(expiry.ISO8601Format()) by services that check it "
                                + "without asking the identity provider." : nil
                    } ?? ""
                StandardError.line(
                    "portal-auth: warning: no browser logout could run here (\(DisplayText.neutralised(reason, limit: 300))), so the "
                        + "browser session at the identity provider stays\(who): sign out on its own page in the browser you signed "
                        + "in with (or run this command on a terminal next time: over SSH, ssh -t gives it one). The stored sign-in "
                        + "for \(DisplayText.path(config)) was deleted.\(access)")
                return ExitCode(69)
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
