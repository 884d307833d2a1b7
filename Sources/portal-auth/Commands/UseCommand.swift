import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth use`: makes a stored sign-in the default one, used when a command is not told which.
struct UseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Make a stored sign-in the default for token, refresh, revoke, exec and status.",
        usage: "portal-auth use (<selection> | --clear) [<options>]",
        discussion: """
            With one stored sign-in, commands use it without --portal, --iap, --url or --name. With several, \
            they use the default set here; `portal-auth status` marks it. The choice is kept beside the store \
            file (<store>.preferences.json, never a token).

            Examples:
              portal-auth use --portal https://www.arcgis.com
              portal-auth use --name work
              portal-auth use --clear
            """
    )

    @OptionGroup var selection: CredentialSelection

    @Flag(help: "Forget the default sign-in.")
    var clear = false

    @OptionGroup var storage: StoreChoiceOptions

    func validate() throws {
        if clear && !selection.words.isEmpty {
            throw ValidationError("--clear takes no sign-in; give one or the other")
        }
    }

    func run() async throws {
        do {
            let store = try storage.credentialStore()
            if clear {
                try store.updatePreferences { $0.defaultKey = nil }
                StandardError.line("No default sign-in now.")
                return
            }
            guard let credential = try await SelectedCredential.find(selection.target, in: store)?.credential,
                let key = SignInSelection.storeKey(of: credential)
            else { throw SignInNeeded(reason: TokenCommand.nothingStored(for: selection.target), command: nil) }
            try store.updatePreferences { $0.defaultKey = key }
            StandardError.line(
                "Default sign-in: \(SignInSelection.describe(credential, preferences: try store.preferences())).")
        } catch {
            throw Failure.report(error)
        }
    }
}
