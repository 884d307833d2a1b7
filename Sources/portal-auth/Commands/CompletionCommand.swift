import ArgumentParser
import PortalAuth

/// `portal-auth completion bash|zsh|fish`: prints the shell completion script.
struct CompletionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Print the completion script for bash, zsh or fish.",
        discussion: """
            Completes commands and options everywhere; --iap, --config and --store offer .json files, and \
            --portal and --name the portals and names of the stored sign-ins (asked from portal-auth as you \
            type). `scripts/install` installs the three scripts; by hand:

              dir=~/.local/share/bash-completion/completions
              mkdir -p "$dir" && portal-auth completion bash > "$dir/portal-auth"
              portal-auth completion zsh > "${fpath[1]}/_portal-auth"
              portal-auth completion fish \\
                  > ~/.config/fish/completions/portal-auth.fish
            """
    )

    @Argument(
        help: ArgumentHelp("The shell: bash, zsh or fish.", valueName: "shell"),
        completion: .list(["bash", "zsh", "fish"]))
    var shell: String

    func validate() throws {
        guard CompletionShell(rawValue: shell) != nil, ["bash", "zsh", "fish"].contains(shell) else {
            throw ValidationError(
                "\(MessagePart.quoted(shell, or: "an empty name")) is not a shell this can complete for; give bash, zsh or fish"
            )
        }
    }

    func run() throws {
        guard let shell = CompletionShell(rawValue: shell) else { return }
        print(PortalAuthCommand.completionScript(for: shell))
    }
}
