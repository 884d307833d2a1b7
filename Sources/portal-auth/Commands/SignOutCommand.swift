import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth sign-out`: revoke every portal sign-in, log out of every IAP sign-in, empty the store.
struct SignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "Revoke every portal sign-in, sign out of every IAP sign-in, and empty the credential store.",
        usage: "portal-auth sign-out [--format <format>] [<options>]",
        discussion: """
            Revokes the tokens of every stored portal sign-in (as `portal-auth revoke`), then signs out of \
            the identity provider of every stored IAP sign-in (as `portal-auth iap logout`: a browser tab for \
            each identity-provider session, confirmed on a loopback port within --timeout), then deletes every \
            entry of the store, whatever the previous steps gave. Prints what became of each sign-in.

            IAP sign-ins of one identity-provider session (the same sid, else the same user, in their ID tokens, \
            at the same logout endpoint) get one browser logout, which ends that session for all of them. IAP \
            sign-ins whose redirect URL has the same fixed port are signed out of one after another. \
            Where the identity provider advertises a revocation endpoint, the refresh token is revoked there, \
            with or without a browser. Where no browser can be used (no display, an SSH session) and there is \
            no terminal to paste on, no browser logout runs: the browser session at the identity provider \
            stays, and is named for each sign-in. For each sign-in the result says what ended and what stays \
            valid, and until when (a refresh token that was not revoked, the browser session, the last access \
            token).

            On a terminal it lists the stored sign-ins and asks first (--yes does not ask); scripts, with no \
            terminal, are not asked.

            Exit status: 0 every revocation and sign-out was confirmed; 1 not confirmed on the terminal \
            (nothing changed); 69 some were not, or a browser session stays because no browser could be used \
            (the store is emptied anyway); 130 interrupted (emptied anyway); the store's own errors as for \
            every command.
            """
    )

    @Option(help: "Output format: text for people, json for scripts.")
    var format: OutputFormat = .text

    @Flag(
        name: [.customShort("y"), .long],
        help: "Do not ask for confirmation (on a terminal sign-out asks first; elsewhere it never asks).")
    var yes = false

    @OptionGroup var session: LogoutOptions

    func run() async throws {
        let (settings, observer) = session.signOutSettings()
        let manager = AuthenticationManager(settings: settings)
        let path: String
        let store: ArcGISCredentialStore
        do {
            store = try session.credentialStore(settings: settings)
            manager.arcGISCredentialStore = store
            path = store.file?.path ?? "memory"
        } catch {
            throw Failure.report(error)
        }
        let summaries = Dictionary(store.summaries.map { ($0.storeKey, $0) }) { first, _ in first }
        if !yes, isatty(0) == 1, isatty(2) == 1, !summaries.isEmpty {
            guard try await Self.confirmed(store, summaries: summaries, settings: settings) else {
                StandardError.line("Nothing was signed out.")
                throw ExitCode(1)
            }
        }
        let report = try await Failure.cancellableOnInterrupt { await manager.signOutReport() }
        store.forgetDeletedSignIns()
        observer.clearStatus()

        let entries = report.revocations + report.invalidations
        let now = settings.clock.now
        switch format {
        case .text:
            Output.result(
                entries.isEmpty
                    ? "No stored sign-ins." : "\(entries.count) stored sign-in\(entries.count == 1 ? "" : "s"):")
            for entry in entries { Output.result("  \(Self.describe(entry, now: now))") }
            if let error = report.clearingError {
                Output.diagnostic(
                    "portal-auth: error: the credential store \(DisplayText.path(path)) could not be emptied: \(error)")
            } else {
                Output.result("The credential store \(DisplayText.path(path)) is empty.")
            }
        case .json:
            Output.json(
                .object([
                    "schema_version": .integer(Self.jsonSchemaVersion),
                    "store": .string(path),
                    "store_cleared": .bool(report.clearingError == nil),
                    "credentials": .array(
                        entries.map {
                            Self.json(
                                $0,
                                summary: ArcGISCredentialStore.storeKey(of: $0.credential).flatMap { summaries[$0] },
                                now: now)
                        }),
                ]))
        }

        if let error = report.clearingError { throw Failure.report(error) }
        let failures = entries.compactMap(\.error)
        if failures.contains(where: Failure.isInterruption) { throw ExitCode(130) }
        if !report.succeeded { throw ExitCode(69) }
    }

    /// Asks on the terminal whether to sign out of every stored sign-in of `store`: each is listed with what will
    /// be revoked and ended and what will not (a refresh token its identity provider cannot revoke, a browser session
    /// no browser here can end); only yes goes on.
    private static func confirmed(
        _ store: ArcGISCredentialStore, summaries: [String: CredentialSummary], settings: SignInSettings
    ) async throws -> Bool {
        StandardError.line("This signs out of every stored sign-in and empties the store:")
        let noBrowser = IAPCredential.browserLogoutUnavailable(settings: settings)
        var count = 0
        for credential in store.credentials {
            guard let summary = ArcGISCredentialStore.storeKey(of: credential).flatMap({ summaries[$0] }) else {
                continue
            }
            let who = summary.username.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? ""
            switch credential.kind {
            case .oAuthUser:
                count += 1
                StandardError.line(
                    "  portal \(DisplayText.path(summary.target))\(who): its tokens are revoked at the portal")
            case .iap(let iap):
                count += 1
                let revocation = await iap.advertisedRevocationEndpoint()
                let tokens =
                    revocation.map {
                        "its refresh token is revoked at \(DisplayText.neutralised($0.absoluteString, limit: 300))"
                    }
                    ?? "its refresh token is NOT revoked (the identity provider offers no revocation endpoint) and stays valid "
                    + (summary.refreshTokenExpirationDate.map { "until \($0.ISO8601Format())" }
                        ?? "until the identity provider expires it")
                let session =
                    noBrowser.map { "its browser session is NOT ended (no browser here: \($0))" }
                    ?? "its browser session is ended in the browser"
                StandardError.line("  IAP \(DisplayText.path(summary.target))\(who): \(tokens); \(session)")
            default:
                continue
            }
        }
        let question = "Sign out of \(count == 1 ? "it" : "all \(count)")? [y/N] "
        let answer = try await Failure.cancellableOnInterrupt { try await TerminalInput.line(question) }
        let word = answer.trimmingCharacters(in: .whitespaces).lowercased()
        return word == "y" || word == "yes"
    }

    // MARK: - Describing outcomes

    /// The version of the JSON this command prints (its fields are documented in the man page); raised when a field
    /// changes meaning or goes away.
    static let jsonSchemaVersion: Int64 = 1

    /// "the portal https://… (alice): tokens revoked".
    private static func describe(_ entry: SignOutReport.Entry, now: Date) -> String {
        let who = entry.credential.username.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? ""
        return "\(entry.credential.targetDescription)\(who): \(entry.text(now: now))"
    }

    /// One sign-in's outcome for scripts: the same identity fields as `status` (`kind`, `key`, `target`, `url`,
    /// `configuration_file`, `username`), and what ended and what stays valid.
    static func json(_ entry: SignOutReport.Entry, summary: CredentialSummary?, now: Date) -> JSONValue {
        func date(_ value: Date?) -> JSONValue { value.map { .string($0.ISO8601Format()) } ?? .null }
        let result = entry.logoutResult
        let isIAP = entry.credential.kind.name == CredentialKind.iap.rawValue
        let tokensRevoked: Bool
        let refreshLeft: Bool
        switch entry.outcome {
        case .revoked:
            (tokensRevoked, refreshLeft) = (true, false)
        case .revocationFailed:
            (tokensRevoked, refreshLeft) = (false, summary?.hasRefreshToken ?? true)
        default:
            tokensRevoked = result?.revocation == .revoked
            refreshLeft = result?.refreshTokenStaysValid ?? (summary?.hasRefreshToken ?? true)
        }
        let refreshExpiry = result?.refreshTokenExpiry ?? summary?.refreshTokenExpirationDate
        let accessExpiry = result?.accessTokenExpiry ?? summary?.accessTokenExpirationDate
        let sessionEnded: JSONValue = isIAP ? .bool(result?.isSessionEndConfirmed ?? false) : .null
        let revocation: String
        switch (entry.outcome, result?.revocation) {
        case (.revoked, _), (_, .revoked?): revocation = "revoked"
        case (.revocationFailed, _), (_, .failed?): revocation = "failed"
        case (_, .notOffered?): revocation = "not_offered"
        default: revocation = "unknown"
        }
        var skipped: String?
        if case .browserLogoutSkipped(let reason) = entry.outcome { skipped = reason }
        return .object([
            "kind": .string(entry.credential.kind.name),
            "key": Output.json(summary?.storeKey),
            "target": .string(summary?.target ?? entry.credential.targetDescription),
            "url": Output.json(summary?.url.absoluteString),
            "configuration_file": Output.json(summary?.configurationFile),
            "username": Output.json(entry.credential.username),
            "outcome": .string(entry.code),
            "succeeded": .bool(entry.succeeded),
            "revocation": .string(revocation),
            "tokens_revoked": .bool(tokensRevoked),
            "session_ended": sessionEnded,
            "browser_logout_skipped": Output.json(skipped),
            "refresh_token_left_valid": .bool(refreshLeft),
            "refresh_token_expires_at": refreshLeft ? date(refreshExpiry) : .null,
            "access_token_expires_at": date(accessExpiry),
            "still_valid": .array(entry.stillValidItems(now: now).map { .string($0) }),
            "message": .string(entry.text(now: now)),
        ])
    }
}

extension SignOutReport.Entry {
    /// The failure, if the outcome carries one.
    fileprivate var error: (any Error)? {
        switch outcome {
        case .revocationFailed(let error), .logoutFailed(let error): return error
        case .revoked, .loggedOut, .logoutNotConfirmed, .browserLogoutSkipped: return nil
        }
    }

    /// A stable word for scripts.
    fileprivate var code: String {
        switch outcome {
        case .revoked: return "revoked"
        case .revocationFailed: return "revocation_failed"
        case .loggedOut: return "logged_out"
        case .logoutNotConfirmed: return "logout_not_confirmed"
        case .browserLogoutSkipped: return "browser_logout_skipped"
        case .logoutFailed: return "logout_failed"
        }
    }

    /// What stays valid, one item each (the library's words: `SignOutReport.Entry.leftValid(now:)`).
    fileprivate func stillValidItems(now: Date) -> [String] {
        if let result = logoutResult { return result.stillValid(now: now) }
        return leftValid(now: now).map { [$0] } ?? []
    }

    /// What happened, for people: the outcome, what became of the tokens, and for a sign-in whose browser session
    /// stays, until when its last access token may still be accepted.
    fileprivate func text(now: Date) -> String {
        var text = tokensText
        if case .browserLogoutSkipped = outcome, let result = logoutResult, let expiry = result.accessTokenExpiry,
            expiry > now
        {
            text +=
                "; the last access token may be accepted until \(expiry.ISO8601Format()) by services that check it "
                + "without asking the identity provider"
        }
        return text
    }

    private var tokensText: String {
        var text = outcomeText
        if let result = logoutResult, let unconfirmed = LogoutWords.returnWithoutEvidence(result) {
            text += " (\(unconfirmed))"
        }
        switch tokenRevocation {
        case .revoked?:
            return text + "; the tokens were revoked"
        case .failed, .notOffered:
            // A refresh token left valid is named with where and until when (a sign-in without one has nothing left).
            if let result = logoutResult {
                return LogoutWords.refreshTokenLeft(result).map { text + "; but \($0)" } ?? text
            }
            if case .failed(let why)? = tokenRevocation {
                return text + "; but the tokens were NOT revoked (\(why)): they stay usable until they expire"
            }
            return text
        case nil:
            return text
        }
    }

    private var outcomeText: String {
        switch outcome {
        case .revoked:
            return "tokens revoked"
        case .revocationFailed(let error) where Failure.isInterruption(error):
            return "interrupted; the tokens may still be valid on the server"
        case .revocationFailed(let error):
            return
                "NOT revoked (\(ErrorReport.toolWords("\(error)"))); the tokens stay valid on the server until they expire"
        case .loggedOut:
            return "the identity provider confirmed the end of the browser session"
        case .logoutNotConfirmed where logoutResult?.returnWithoutEvidence != nil:
            return "no confirmation from the identity provider; the browser session may remain"
        case .logoutNotConfirmed:
            return "no confirmation from the identity provider in time; the browser session may remain"
        case .browserLogoutSkipped(let reason):
            return
                "no browser logout could run here (\(DisplayText.neutralised(reason, limit: 300))), so the browser session at "
                + "the identity provider stays: sign out on its own page in the browser you signed in with"
        case .logoutFailed(let error) where Failure.isInterruption(error):
            return "interrupted; the browser session may remain"
        case .logoutFailed(let error):
            return
                "sign-out failed (\(ErrorReport.toolWords("\(error)"))); the stored sign-in is deleted with the rest, but the "
                + "browser session may remain: "
                + "sign out on the identity provider's own page"

        }
    }
}
