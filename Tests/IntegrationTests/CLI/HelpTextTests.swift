import Foundation
import Testing
import PortalAuth

/// The help texts as a person reads them at 80 columns and copies examples from them.
@Suite("help texts")
struct HelpTextTests {
    /// Every command, as `portal-auth help` takes it.
    static let commands: [[String]] = [
        [], ["login"], ["iap"], ["iap", "check"], ["iap", "login"], ["iap", "logout"], ["status"], ["use"], ["name"],
        ["token"],
        ["exec"], ["refresh"], ["revoke"], ["sign-out"], ["generate-token"], ["app-token"], ["request"],
        ["register-scheme"],
        ["unregister-scheme"], ["handle-redirect"], ["completion"],
    ]

    @Test("at most 80 columns, no example wrapped by the help printer, URLs with ? quoted", arguments: commands)
    func layout(command: [String]) async throws {
        let result = try await ToolRunner.run(["help"] + command, environment: ["COLUMNS": "80"])
        #expect(result.status == 0, "\(result)")
        var previous = ""
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            #expect(line.count <= 80, "longer than 80 columns: \(line)")
            // An indented example line followed by an unindented one: the help printer wrapped the example.
            let previousIsExample =
                previous.hasPrefix("  ") && !previous.hasPrefix("   ")
                && !previous.trimmingCharacters(in: .whitespaces).hasPrefix("-")
            #expect(
                !(previousIsExample && !line.isEmpty && !line.hasPrefix(" ")), "wrapped example: \(previous) / \(line)")
            for match in line.matches(of: /https?:\/\/\S*\?\S*/) {
                let before = line[..<match.range.lowerBound].last
                #expect(before == "'" || before == "\"", "a URL with ? must be quoted to paste into a shell: \(line)")
            }
            previous = line
        }
    }

    @Test(
        "options a command never uses are not offered",
        arguments: [
            ("status", ["--browser", "--no-browser", "--device-code", "--browser-command"]),
            ("refresh", ["--browser", "--no-browser", "--device-code", "--browser-command"]),
            ("revoke", ["--browser", "--no-browser", "--device-code", "--browser-command"]),
            ("exec", ["--browser", "--no-browser", "--device-code", "--browser-command"]),
        ])
    func unusedOptions(command: String, absent: [String]) async throws {
        let result = try await ToolRunner.run(["help", command])
        for option in absent {
            #expect(
                !result.stdout.contains(option + " ") && !result.stdout.contains(option + "\n"),
                "\(command) offers \(option)")
        }
        #expect(result.stdout.contains("--store"))
    }

    @Test(
        "sign-out and iap logout offer the browser for the logout page, not sign-in options",
        arguments: [["sign-out"], ["iap", "logout"]])
    func logoutOptions(command: [String]) async throws {
        let result = try await ToolRunner.run(["help"] + command)
        #expect(result.status == 0, "\(result)")
        #expect(!result.stdout.contains("--device-code"), "\(command) offers --device-code")
        #expect(result.stdout.contains("--browser-command") && result.stdout.contains("identity provider's logout"))
        #expect(result.stdout.contains("--no-browser"))
    }

    @Test("the top-level help begins with what to run (a portal login first) and shows its usage on the first screen")
    func topLevelOrder() async throws {
        let result = try await ToolRunner.run(["--help"], environment: ["COLUMNS": "80"])
        let lines = result.stdout.components(separatedBy: "\n")
        let usage = try #require(lines.firstIndex { $0.hasPrefix("USAGE: portal-auth <subcommand>") })
        #expect(usage < 24, "USAGE on line \(usage + 1)")
        let firstExample = try #require(lines.first { $0.hasPrefix("  portal-auth ") })
        #expect(firstExample.hasPrefix("  portal-auth login --portal "))
        let exitStatus = try #require(lines.firstIndex { $0.hasPrefix("Exit status:") })
        let subcommands = try #require(lines.firstIndex { $0.hasPrefix("SUBCOMMANDS:") })
        #expect(exitStatus > subcommands, "the reference text follows the commands")
        #expect(result.stdout.hasSuffix("See 'portal-auth help <subcommand>' for detailed help.\n"))
        let again = try await ToolRunner.run(["help"], environment: ["COLUMNS": "80"])
        #expect(again.stdout == result.stdout, "`help` and `--help` agree")
    }

    @Test(
        "every error begins the same way: the parser's own messages in small letters too",
        arguments: [
            ["token", "--format", "xml"], ["refresh", "--min-valid", "3"], ["login"], ["request"], ["iap", "check"],
            ["token", "--portal", "https://gis.example.com/portal", "--url", "https://gis.example.com/x"],
        ])
    func errorCase(arguments: [String]) async throws {
        let result = try await ToolRunner.run(arguments, environment: ["PORTAL_AUTH_STORE": "/nonexistent/store.json"])
        #expect(result.status != 0)
        let first = try #require(result.stderrLines.first)
        #expect(first.hasPrefix("portal-auth: error: "), "\(first)")
        let word = first.dropFirst("portal-auth: error: ".count)
        #expect(
            word.first.map { !$0.isUppercase || word.dropFirst().first?.isUppercase == true } == true,
            "capitalised: \(first)")
    }

    @Test("the top-level help lists the environment variables")
    func environment() async throws {
        let result = try await ToolRunner.run(["--help"])
        for variable in [
            "PORTAL_AUTH_STORE", "XDG_STATE_HOME", "PORTAL_AUTH_CA_BUNDLE", "PORTAL_AUTH_PROXY_TOKEN",
            "PORTAL_AUTH_CLIENT_SECRET", "PORTAL_AUTH_LAUNCH_DIR", "BROWSER", "https_proxy",
        ] {
            #expect(
                result.stdout.contains("\n  \(variable) ") || result.stdout.contains("\n  \(variable),"),
                "\(variable) missing")
        }
    }

    @Test("completion scripts for bash, zsh and fish; bash reads its script")
    func completionScripts() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let result = try await ToolRunner.run(["completion", shell])
            #expect(
                result.status == 0 && result.stdout.contains("portal-auth") && result.stdout.contains("---completion"),
                "\(shell): \(result.stderr)")
            if shell == "bash" {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "pa-completion-\(UUID().uuidString).bash")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(result.stdout.utf8).write(to: file)
                let process = ChildProcess()
                process.executableURL = URL(fileURLWithPath: "/bin/bash")
                process.arguments = ["-n", file.path]
                try process.run()
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "bash -n rejects the completion script")
                #expect(result.stdout.contains("'!*.@(json)'"), "configuration files complete as .json files")
            }
        }
    }

    /// The options that take a value and have no default: they pick a sign-in or give what the command needs.
    static let optionsWithoutDefault: Set<String> = [
        "--portal", "--client-id", "--iap", "--url", "--name", "--config", "--username", "--data", "--data-file",
        "--header", "--scheme",
    ]

    @Test(
        "every other option that takes a value says its default (issue 45: the manual page shows them)",
        arguments: commands)
    func optionDefaults(command: [String]) async throws {
        let result = try await ToolRunner.run(["help"] + command, environment: ["COLUMNS": "200"])
        #expect(result.status == 0, "\(result)")
        // Each option of the OPTIONS sections with its help, continuation lines included.
        var inOptions = false
        var current: String?
        var help: [String: String] = [:]
        for line in result.stdout.components(separatedBy: "\n") {
            if (try? /[A-Z ]*OPTIONS:/.wholeMatch(in: line)) != nil {
                (inOptions, current) = (true, nil)
                continue
            }
            guard inOptions else { continue }
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                current = nil
            } else if let match = try? #/  (?:-\w, )?(--[\w-]+)( <[^>]+>)?.*/#.wholeMatch(in: line) {
                current = match.output.2 == nil ? nil : String(match.output.1)
                if let current { help[current] = line }
            } else if let current {
                help[current, default: ""] += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        for (option, text) in help.sorted(by: { $0.key < $1.key }) where !Self.optionsWithoutDefault.contains(option) {
            #expect(
                text.lowercased().contains("default"),
                "portal-auth \(command.joined(separator: " ")) \(option) says no default: \(text)")
        }
    }

    /// The variables `portal-auth exec` sets for its command (named in `help exec`), which the tool never reads.
    static let setForExec: Set<String> = [
        "PORTAL_AUTH_TOKEN", "ARCGIS_TOKEN", "PORTAL_AUTH_ID_TOKEN", "PORTAL_AUTH_KIND", "PORTAL_AUTH_TOKEN_EXPIRES_AT",
        "PORTAL_AUTH_TOKEN_TYPE", "PORTAL_AUTH_URL",
    ]

    /// Every environment variable the sources of the tool and the library read: a string literal of upper-case
    /// words joined by `_` (`XDG_CACHE_HOME`), or a one-word literal on a line that reads the environment
    /// (`environment["PATH"]`, `getenv("COLUMNS")`, a list of variable names); libcurl's option names are not.
    static func variablesRead() throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        var names: Set<String> = []
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") && !file.hasPrefix("PortalAuthTesting/") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                let readsEnvironment = ["environment[", "getenv(", "value(", "lookup(", "Names", "variable"].contains {
                    line.contains($0)
                }
                for match in line.matches(of: /"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)"/) {
                    let name = String(match.output.1)
                    guard !name.hasPrefix("CURLOPT_"), !name.hasPrefix("CURLINFO_"), !setForExec.contains(name) else {
                        continue
                    }
                    if name.contains("_") || (readsEnvironment && name.count > 3) { names.insert(name) }
                }
            }
        }
        return names
    }

    @Test("the help's Environment (the manual page's ENVIRONMENT) lists every variable the sources read (issue 45)")
    func everyVariableRead() async throws {
        let read = try Self.variablesRead()
        #expect(read.isSuperset(of: ["PORTAL_AUTH_STORE", "WSL_DISTRO_NAME", "SSH_TTY", "HOME", "PATH", "COLUMNS"]))
        let result = try await ToolRunner.run(["--help"], environment: ["COLUMNS": "80"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "Environment:" })
        let section = lines[(start + 1)...].prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        let listed = Set(
            section.joined(separator: " ").matches(of: /[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*/).map {
                String($0.output)
            })
        let missing = read.subtracting(listed).sorted()
        #expect(missing.isEmpty, "the help's Environment lacks \(missing)")
    }

    /// The manual page installed beside the tool (`scripts/install`: DIR/bin/portal-auth, DIR/share/man/man1/portal-auth.1).
    static var installedManualPage: URL? {
        let page = URL(fileURLWithPath: BinaryLocator.toolPath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "share/man/man1/portal-auth.1")
        return FileManager.default.fileExists(atPath: page.path) ? page : nil
    }

    @Test(
        "the installed manual page: EXIT STATUS with the real table, ENVIRONMENT and FILES sections, --version once",
        .enabled(if: installedManualPage != nil))
    func manualPage() throws {
        let page = try String(contentsOf: try #require(Self.installedManualPage), encoding: .utf8)
        let lines = page.components(separatedBy: "\n")
        func section(_ title: String) -> [String] {
            guard let start = lines.firstIndex(where: { $0 == ".Sh \(title)" || $0 == ".Sh \"\(title)\"" }) else {
                return []
            }
            return Array(lines[(start + 1)...].prefix { !$0.hasPrefix(".Sh ") })
        }
        let exit = section("EXIT STATUS")
        #expect(!exit.contains { $0.hasPrefix(".Ex") }, "the generic exit status is gone")
        for status in ["0 ", "1 ", "22 ", "64 ", "77 ", "130 "] {
            #expect(exit.contains { $0.hasPrefix(status) }, "EXIT STATUS lacks \(status)")
        }
        let environment = section("ENVIRONMENT").joined(separator: "\n")
        for variable in ["PORTAL_AUTH_STORE", "PORTAL_AUTH_PROXY_TOKEN", "PORTAL_AUTH_CA_BUNDLE", "BROWSER"] {
            #expect(environment.contains(variable), "ENVIRONMENT lacks \(variable)")
        }
        #expect(section("FILES").joined().contains("credentials.json"))
        #expect(lines.filter { $0 == ".It Fl -version" }.count == 1, "--version is listed once, under the tool")
        let description = section("DESCRIPTION")
        #expect(!description.contains("Exit status:") && !description.contains("Environment:"), "moved, not repeated")
    }
}
