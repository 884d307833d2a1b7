import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth store migrate --to keyring|file`: moves every stored sign-in's secrets to the keyring or the file.
struct StoreMigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract:
            "Move the stored sign-ins' tokens into the desktop keyring or into the store file, keeping the sign-ins.",
        discussion: """
            --to keyring moves every token into the keyring (the store file keeps an index without secrets); \
            --to file moves them back into the store file and removes the keyring items. The choice is recorded \
            in the store file, so the automatic choice (--store auto, the default) follows it from then on. \
            Without a migration, the automatic choice moves a sign-in into the keyring the next time it changes \
            (a refresh or a new sign-in) while the keyring answers.

            Exit status: 0 done; 70 the keyring is absent or locked, or a file could not be written; 65 some \
            entries could not be moved (their keyring item is missing or corrupted; they are kept as they were).
            """
    )

    /// The two places.
    enum Target: String, ExpressibleByArgument, CaseIterable {
        case keyring, file
    }

    @Option(help: "Where the tokens go: keyring or file.")
    var to: Target

    @Option(
        help: ArgumentHelp(
            "The store file (index) to migrate.", discussion: "Default: $XDG_STATE_HOME/portal-auth/credentials.json.",
            valueName: "path"))
    var store: String?

    func run() async throws {
        do {
            let environment = ProcessInfo.processInfo.environment
            // The index at a given path, else at the default place; the target decides where the secrets go.
            var path: String?
            if case .path(let given) = CredentialStoreFile.Choice(
                store ?? environment[StoreLocation.environmentVariable])
            {
                path = given
            }
            let file = try CredentialStoreFile.select(store: path ?? "file", environment: environment)
            let target: StoreBackend = to == .keyring ? .keyring : .file
            let left = try await file.migrate(to: target)
            let place = target == .keyring ? "the desktop keyring" : "the store file \(file.path)"
            if left.isEmpty {
                Output.result(
                    "The stored sign-ins' tokens are now in \(place); the store file \(file.path) records the choice.")
            } else {
                Output.result(
                    "Moved to \(place), except \(left.count) entr\(left.count == 1 ? "y" : "ies") whose keyring item could not be read:"
                )
                for key in left { Output.result("  \(DisplayText.neutralised(key, limit: 300))") }
                throw ExitCode(65)
            }
        } catch {
            throw Failure.report(error)
        }
    }
}
