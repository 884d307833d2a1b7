import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth agent forward allow|deny|list`: which sign-ins the agent's forwarding socket may hand tokens of.
struct AgentForwardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Mark the sign-ins whose tokens the forwarding socket (for ssh -R) may hand out.",
        discussion: """
            A mark names a sign-in by its name (give one with `portal-auth name`) and follows that sign-in: a name \
            moved to another sign-in, or a sign-in removed, is no longer marked. Marks are kept beside the store \
            file, in <store>.forwarding.json (0600); the agent reads them at each forwarded request. A request on \
            the forwarding socket for a sign-in not marked is refused (status 77, reason "forbidden").

            Examples:
              portal-auth name work --portal https://gis.example.com/portal
              portal-auth agent forward allow work
              portal-auth agent forward list
              portal-auth agent forward deny work
            """,
        subcommands: [AgentForwardAllowCommand.self, AgentForwardDenyCommand.self, AgentForwardListCommand.self])
}

/// The store file the marks are kept beside.
private func marksStorePath(_ store: ArcGISCredentialStore) throws -> String {
    guard let path = store.file?.path else {
        throw UsageProblem(description: "this store keeps no file beside which marks for forwarding can be kept")
    }
    return path
}

struct AgentForwardAllowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow", abstract: "Let the forwarding socket hand out tokens of the sign-in NAME.")

    @Argument(help: ArgumentHelp("The sign-in's name (see `portal-auth status`).", valueName: "name"))
    var name: String

    @OptionGroup var storage: StoreChoiceOptions

    func validate() throws {
        guard SignInPreferences.isValidName(name) else {
            throw ValidationError(
                "\(MessagePart.quoted(DisplayText.path(name), or: "An empty name")) is not a sign-in name: letters, digits and any of -_.@ (up to 64)"
            )
        }
    }

    func run() async throws {
        do {
            let store = try storage.credentialStore()
            let names = try store.preferences().names
            guard let key = names[name] else {
                throw SelectionError.unknownName(name, known: names.keys.sorted())
            }
            let path = try marksStorePath(store)
            var marks = try AgentForwardMarks.load(forStore: path)
            marks.names[name] = key
            try marks.save(forStore: path)
            StandardError.line("Marked \(name) for forwarding: the agent's forwarding socket may hand out its tokens.")
        } catch {
            throw Failure.report(error)
        }
    }
}

struct AgentForwardDenyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny", abstract: "Stop the forwarding socket handing out tokens of the sign-in NAME.")

    @Argument(help: ArgumentHelp("The marked name.", valueName: "name"))
    var name: String

    @OptionGroup var storage: StoreChoiceOptions

    func run() async throws {
        do {
            let path = try marksStorePath(try storage.credentialStore())
            var marks = try AgentForwardMarks.load(forStore: path)
            guard marks.names.removeValue(forKey: name) != nil else {
                StandardError.line("\(DisplayText.path(name)) was not marked for forwarding.")
                return
            }
            try marks.save(forStore: path)
            StandardError.line("\(name) is no longer marked for forwarding.")
        } catch {
            throw Failure.report(error)
        }
    }
}

struct AgentForwardListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the sign-ins marked for forwarding.")

    @OptionGroup var storage: StoreChoiceOptions

    func run() async throws {
        do {
            let store = try storage.credentialStore()
            let marks = try AgentForwardMarks.load(forStore: try marksStorePath(store))
            let names = try store.preferences().names
            guard !marks.names.isEmpty else {
                StandardError.line(
                    "No sign-in is marked for forwarding; mark one with `portal-auth agent forward allow NAME`.")
                return
            }
            for (name, key) in marks.names.sorted(by: { $0.key < $1.key }) {
                Output.result(
                    names[name] == key
                        ? name : "\(name) (no longer marked: the name now names another sign-in, or none)")
            }
        } catch {
            throw Failure.report(error)
        }
    }
}
