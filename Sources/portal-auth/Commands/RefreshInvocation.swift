import Foundation
import PortalAuth

/// What `portal-auth refresh` does, given its option values: both the ArgumentParser command (`RefreshCommand`)
/// and the fast path (`FastCommandLine`) run this.
struct RefreshInvocation {
    var selection: SelectionArguments
    var printToken = false
    var format: TokenFormat?
    var session: SessionArguments

    /// Refreshes and reports (or reports the failure and throws its `ExitCode`).
    func run() async throws {
        do {
            let store = try session.credentialStore()
            let target = selection.target
            guard let credential = try await SelectedCredential.find(target, in: store) else {
                throw SignInNeeded(
                    reason: TokenInvocation.nothingStored(for: target),
                    command: SelectedCredential.signInCommand(
                        for: target, store: session.store, preferences: try store.preferences()))
            }
            let issued: IssuedToken
            do {
                // Signals cancel instead of killing: a refresh already sent is still stored (see TokenInvocation).
                issued = try await Failure.cancellableOnInterrupt {
                    try await credential.token(minimumValidity: .zero, force: true, idToken: false)
                }
            } catch let error as CredentialError where error.requiresSignIn {
                throw SignInNeeded(reason: "\(error)", command: credential.signInCommand(store: session.store))
            }
            let who = issued.username.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? ""
            StandardError.line(
                "Refreshed the tokens for \(issued.target)\(who); the access token is valid until "
                    + "\(UTCTimestamp.iso8601(issued.expirationDate)) (\(issued.secondsLeft()) s).")
            if let format = format ?? (printToken ? .plain : nil) {
                try TokenInvocation.print(issued, format: format, headerName: nil)
            }
        } catch {
            throw Failure.report(error)
        }
    }
}
