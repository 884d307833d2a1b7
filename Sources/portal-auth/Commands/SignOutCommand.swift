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
            Where the identity provider advertises a revocation endpoint, the tokens are revoked there first; \
            whether it did is shown for each sign-in.

            On a terminal it lists the stored sign-ins and asks first (--yes does not ask); scripts, with no \
            terminal, are not asked.

            Exit status: 0 every revocation and sign-out was confirmed; 1 not confirmed on the terminal \
            (nothing changed); 69 some were not (the store is emptied anyway); 130 interrupted (emptied \
            anyway); the store's own errors as for every command.
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
        if !yes, isatty(0) == 1, isatty(2) == 1, !store.summaries.isEmpty {
            guard try await Self.confirmed(store.summaries) else {
                StandardError.line("Nothing was signed out.")
                throw ExitCode(1)
            }
        }
        let report = try await Failure.cancellableOnInterrupt { await manager.signOutReport() }
        store.forgetDeletedSignIns()
        observer.clearStatus()

        let entries = report.revocations + report.invalidations
        switch format {
        case .text:
            Output.result(
                entries.isEmpty
                    ? "No stored sign-ins." : "\(entries.count) stored sign-in\(entries.count == 1 ? "" : "s"):")
            for entry in entries { Output.result("  \(Self.describe(entry))") }
            if let error = report.clearingError {
                Output.diagnostic(
                    "portal-auth: error: the credential store \(DisplayText.path(path)) could not be emptied: \(error)")
            } else {
                Output.result("The credential store \(DisplayText.path(path)) is empty.")
            }
        case .json:
            Output.json(
                .object([
                    "store": .string(path),
                    "store_cleared": .bool(report.clearingError == nil),
                    "credentials": .array(entries.map(Self.json)),
                ]))
        }

        if let error = report.clearingError { throw Failure.report(error) }
        let failures = entries.compactMap(\.error)
        if failures.contains(where: Failure.isInterruption) { throw ExitCode(130) }
        if !report.succeeded { throw ExitCode(69) }
    }

    /// Asks on the terminal whether to sign out of every one of `summaries` (they are listed); only yes goes on.
    private static func confirmed(_ summaries: [CredentialSummary]) async throws -> Bool {
        StandardError.line(
            "This revokes the tokens of every stored sign-in, ends their identity-provider sessions, and empties the store:"
        )
        for summary in summaries {
            let who = summary.username.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? ""
            let target = (summary.kind == .iap ? "IAP " : "portal ") + DisplayText.path(summary.target)
            StandardError.line("  \(target)\(who)")
        }
        let answer = try await Failure.cancellableOnInterrupt {
            try await TerminalInput.line(
                "Sign out of \(summaries.count == 1 ? "it" : "all \(summaries.count)")? [y/N] ")
        }
        let word = answer.trimmingCharacters(in: .whitespaces).lowercased()
        return word == "y" || word == "yes"
    }

    // MARK: - Describing outcomes

    /// "the portal https://… (alice): tokens revoked".
    private static func describe(_ entry: SignOutReport.Entry) -> String {
        let who = entry.credential.username.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? ""
        return "\(entry.credential.targetDescription)\(who): \(entry.text)"
    }

    private static func json(_ entry: SignOutReport.Entry) -> JSONValue {
        .object([
            "kind": .string(entry.credential.kind.name),
            "target": .string(entry.credential.targetDescription),
            "username": Output.json(entry.credential.username),
            "succeeded": .bool(entry.succeeded),
            "tokens_revoked": entry.tokenRevocation.map { .bool($0 == .revoked) } ?? .null,
            "refresh_token_left_valid": entry.logoutResult.map { .bool($0.refreshTokenStaysValid) } ?? .null,
            "refresh_token_expires": entry.logoutResult.flatMap {
                $0.refreshTokenStaysValid ? $0.refreshTokenExpiry : nil
            }
            .map { .string($0.ISO8601Format()) } ?? .null,
            "outcome": .string(entry.code),
            "message": .string(entry.text),
        ])
    }
}

extension SignOutReport.Entry {
    /// The failure, if the outcome carries one.
    fileprivate var error: (any Error)? {
        switch outcome {
        case .revocationFailed(let error), .logoutFailed(let error): return error
        case .revoked, .loggedOut, .logoutNotConfirmed: return nil
        }
    }

    /// A stable word for scripts.
    fileprivate var code: String {
        switch outcome {
        case .revoked: return "revoked"
        case .revocationFailed: return "revocation_failed"
        case .loggedOut: return "logged_out"
        case .logoutNotConfirmed: return "logout_not_confirmed"
        case .logoutFailed: return "logout_failed"
        }
    }

    /// What happened, for people: the outcome, and for IAP sign-ins what became of the tokens.
    fileprivate var text: String {
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
            return "NOT revoked (\(error)); the tokens stay valid on the server until they expire"
        case .loggedOut:
            return "the identity provider confirmed the end of the browser session"
        case .logoutNotConfirmed where logoutResult?.returnWithoutEvidence != nil:
            return "no confirmation from the identity provider; the browser session may remain"
        case .logoutNotConfirmed:
            return "no confirmation from the identity provider in time; the browser session may remain"
        case .logoutFailed(let error) where Failure.isInterruption(error):
            return "interrupted; the browser session may remain"
        case .logoutFailed(let error):
            return
                "sign-out failed (\(error)); the stored sign-in is deleted with the rest, but the browser session may remain: "
                + "sign out on the identity provider's own page"

        }
    }
}
