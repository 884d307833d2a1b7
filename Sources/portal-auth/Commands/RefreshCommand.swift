import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth refresh`: refreshes a stored sign-in's tokens now, whatever their expiry.
struct RefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Refresh the tokens of a stored sign-in now.",
        usage: "portal-auth refresh [<selection>] [--format <format>] [<options>]",
        discussion: """
            Sends the refresh token to the identity provider (ArcGIS: exchange_refresh_token instead when the \
            refresh token is within its exchange interval of expiring) and stores the new tokens, under the \
            store's lock. If another process refreshed the same sign-in while this one waited for the lock, its \
            tokens are kept and no request is sent. Prints a status line on standard error, and the new token on \
            standard output only with --format (or --print-token). A refresh request once sent is waited for \
            beyond --timeout if need be (up to 60 s): its answer holds the refresh token that replaces the one \
            sent, which a provider that rotates them no longer takes.

            Exit status: 0 refreshed; 64 wrong usage; 65 the store is corrupted; 69 the identity provider is \
            unreachable or failing, or its answer unusable, such as an access token that expired as it came (the \
            stored sign-in is kept, with any new refresh token); 77 a sign-in is needed.
            """
    )

    @OptionGroup var selection: CredentialSelection

    @Flag(
        name: .customLong("print-token"),
        help: "Also print the new access token on standard output (as --format plain).")
    var printToken = false

    @Option(
        help: ArgumentHelp(
            "Print the new token on standard output: plain, header or json (the shape `token --format json` prints) "
                + "(default: none, or plain with --print-token).",
            valueName: "format"))
    var format: TokenFormat?

    @OptionGroup var session: StoreOptions

    /// The values, for `RefreshInvocation` (which the fast path in `FastCommandLine` fills in too).
    var invocation: RefreshInvocation {
        RefreshInvocation(
            selection: selection.arguments, printToken: printToken, format: format, session: session.arguments)
    }

    func run() async throws {
        try await invocation.run()
    }
}
