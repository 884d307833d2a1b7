import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth name`: gives a stored sign-in a name to pick it with `--name`, renames or removes one.
struct NameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "name",
        abstract: "Give a stored sign-in a name (pick it later with --name NAME).",
        usage: "portal-auth name <name> [<selection>] [<options>]\nportal-auth name --remove <name>",
        discussion: """
            Names are letters, digits and any of -_.@ (up to 64). A name given to another sign-in moves to this one. \
            `--name OLD` as the selection renames: the old name goes. `login --name` and `iap login --name` \
            name a sign-in when it is made.

            Examples:
              portal-auth name work --portal https://gis.example.com/portal
              portal-auth name home --name work
              portal-auth name --remove home
            """
    )

    @Argument(help: ArgumentHelp("The new name (with --remove: the name to remove).", valueName: "name"))
    var newName: String

    @Flag(help: "Remove the name instead of giving it.")
    var remove = false

    @OptionGroup var selection: CredentialSelection

    @OptionGroup var storage: StoreChoiceOptions

    func validate() throws {
        guard SignInPreferences.isValidName(newName) else {
            throw ValidationError(
                "\(MessagePart.quoted(newName, or: "an empty name")) is not a sign-in name: letters, digits and any of -_.@ (up to 64)"
            )
        }
        if remove && !selection.words.isEmpty { throw ValidationError("--remove takes only the name") }
    }

    func run() async throws {
        do {
            let store = try storage.credentialStore()
            if remove {
                guard try store.preferences().names[newName] != nil else {
                    throw SelectionError.unknownName(newName, known: try store.preferences().names.keys.sorted())
                }
                try store.updatePreferences { $0.names[newName] = nil }
                StandardError.line("Removed the name \(newName).")
                return
            }
            guard let credential = try await SelectedCredential.find(selection.target, in: store)?.credential,
                let key = SignInSelection.storeKey(of: credential)
            else { throw SignInNeeded(reason: TokenCommand.nothingStored(for: selection.target), command: nil) }
            try store.updatePreferences { preferences in
                if let old = selection.name, old != newName { preferences.names[old] = nil }
                preferences.names[newName] = key
            }
            StandardError.line("Named \(credential.targetDescription) \(newName); pick it with --name \(newName).")
        } catch {
            throw Failure.report(error)
        }
    }
}
