import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth generate-token`: an ArcGIS token for a username and password (generateToken).
struct GenerateTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-token",
        abstract: "Get an ArcGIS token for a username and password (the generateToken operation).",
        usage: "portal-auth generate-token --portal <url> --username <name> [<options>]",
        discussion: """
            Finds the token service of the portal or server ({portal}/sharing/rest/generateToken for a portal, \
            the tokenServicesUrl of {root}/rest/info for a server URL such as https://host/server/rest/services) \
            and asks it for a token bound to a referer (client=referer). Prints the token alone on stdout. \
            Requests that carry it must send the same Referer header.

            The password is never taken from the command line: give it on standard input with --password-stdin, \
            or type it when asked (a terminal is needed; nothing is echoed). Nothing is stored.

            Examples:
              portal-auth generate-token --username alice \\
                  --portal https://gis.example.com/portal
              printf '%s\\n' "$PASSWORD" | portal-auth generate-token \\
                  --portal https://gis.example.com/portal --username alice \\
                  --password-stdin --expiration 30 --format json

            Exit status: 0 success; 64 wrong usage (or no terminal to ask for the password); 69 the server is \
            unavailable; 77 the username or password was refused; 130 interrupted.
            """
    )

    @Option(
        help: ArgumentHelp(
            "The portal URL (https://host/portal) or a server or service URL (https://host/server/rest/services/...).",
            valueName: "url"))
    var portal: String

    @Option(help: ArgumentHelp("The portal or server user name.", valueName: "name"))
    var username: String

    @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Option(
        help: ArgumentHelp(
            "Token lifetime to ask for, in minutes (default: the server's, 60 on a portal).", valueName: "minutes"))
    var expiration: Int?

    @Option(
        help: ArgumentHelp("Referer the token is bound to; requests with the token must send it.", valueName: "referer")
    )
    var referer: String = TokenCredential.defaultReferer

    @Option(help: TokenFormat.generatedTokenHelp)
    var format: TokenFormat = .plain

    @OptionGroup var transport: TransportOptions

    func validate() throws {
        guard let url = URL(string: portal), url.host != nil else {
            throw ValidationError(
                "--portal" + MessagePart.given(" \"", portal, "\"")
                    + " is not an absolute URL; write it like https://gis.example.com/portal")
        }
        guard !username.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("--username is empty")
        }
        if let expiration, expiration <= 0 {
            throw ValidationError("--expiration must be a positive number of minutes, not \(expiration)")
        }
        guard !referer.isEmpty else {
            throw ValidationError("--referer is empty; leave it out for the default \(TokenCredential.defaultReferer)")
        }
    }

    func run() async throws {
        let url = URL(string: portal)!
        do {
            let password = try await readPassword()
            let (username, expiration, referer, client) = (username, expiration, referer, transport.httpClient)
            let credential = try await Failure.cancellableOnInterrupt {
                try await TokenCredential.credential(
                    for: url, username: username, password: password, tokenExpirationMinutes: expiration,
                    referer: referer, httpClient: client)
            }
            let info = try await credential.tokenInfo
            try TokenPrinter.print(
                info, format: format, kind: .token, url: url, username: username, clientID: nil,
                extra: [
                    ("referer", .string(credential.referer)),
                    ("token_service_url", .string(credential.tokenServiceURL.absoluteString)),
                ],
                summary:
                    "Token for \(username) from \(credential.tokenServiceURL.absoluteString); send it with Referer: \(credential.referer)."
            )
        } catch {
            throw Failure.report(error)
        }
    }

    /// The password from standard input, or asked for on the terminal.
    private func readPassword() async throws -> String {
        if passwordStdin { return try SecretInput.firstLineOfStandardInput(naming: "password") }
        guard TerminalInput.isAvailable else {
            throw InputError.usage(
                "no terminal to ask for the password of \(username): give it on standard input with --password-stdin")
        }
        return try await TerminalInput.password("Password for \(username) at \(URL(string: portal)?.host ?? portal): ")
    }
}
