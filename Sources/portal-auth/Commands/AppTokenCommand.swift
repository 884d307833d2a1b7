import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth app-token`: an application token with the client credentials grant.
struct AppTokenCommand: AsyncParsableCommand {
    /// The environment variable read for the client secret when no file is given.
    static let secretVariable = "PORTAL_AUTH_CLIENT_SECRET"

    static let configuration = CommandConfiguration(
        commandName: "app-token",
        abstract: "Get an application token for a client ID and secret (OAuth 2.0 client credentials).",
        usage: "portal-auth app-token --portal <url> --client-id <id> [<options>]",
        discussion: """
            Asks the portal's {portal}/sharing/rest/oauth2/token for a token of the application itself (no user), \
            with grant_type=client_credentials. Prints the token alone on stdout. Nothing is stored.

            The client secret is never taken from the command line: it is read from --client-secret-file (the \
            first line; - for standard input), else from $\(secretVariable).

            Example:
              portal-auth app-token --portal https://www.arcgis.com --client-id abc123 \\
                  --client-secret-file ~/.config/portal-auth/app.secret

            Exit status: 0 success; 64 wrong usage (or no secret given); 66 the secret file cannot be read; \
            69 the portal is unavailable; 77 the client ID or secret was refused; 130 interrupted.
            """
    )

    @Option(
        help: ArgumentHelp(
            "The portal URL, e.g. https://www.arcgis.com or https://gis.example.com/portal.", valueName: "url"))
    var portal: String

    @Option(name: .customLong("client-id"), help: ArgumentHelp("The application's client ID.", valueName: "id"))
    var clientID: String

    @Option(
        name: .customLong("client-secret-file"),
        help: ArgumentHelp(
            "File holding the client secret (- for standard input); default $\(secretVariable).", valueName: "file"))
    var clientSecretFile: String?

    @Option(
        help: ArgumentHelp("Token lifetime to ask for, in minutes (default: the portal's, 120).", valueName: "minutes"))
    var expiration: Int?

    @Option(help: TokenFormat.generatedTokenHelp)
    var format: TokenFormat = .plain

    @OptionGroup var transport: TransportOptions

    func validate() throws {
        guard let url = URL(string: portal), url.host != nil else {
            throw ValidationError(
                "--portal" + MessagePart.given(" \"", portal, "\"")
                    + " is not an absolute URL; write it like https://www.arcgis.com")
        }
        guard !clientID.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("--client-id is empty")
        }
        if let expiration, expiration <= 0 {
            throw ValidationError("--expiration must be a positive number of minutes, not \(expiration)")
        }
    }

    func run() async throws {
        let url = URL(string: portal)!
        do {
            let secret = try readSecret()
            let (clientID, expiration, client) = (clientID, expiration, transport.httpClient)
            let credential = try await Failure.cancellableOnInterrupt {
                try await OAuthApplicationCredential.credential(
                    for: url, clientID: clientID, clientSecret: secret, tokenExpirationMinutes: expiration,
                    httpClient: client)
            }
            let info = try await credential.tokenInfo
            try TokenPrinter.print(
                info, format: format, kind: .oauthApplication, url: credential.portalURL, username: nil,
                clientID: clientID,
                summary: "Application token for \(clientID) from \(credential.tokenURL.absoluteString).")
        } catch {
            throw Failure.report(error)
        }
    }

    /// The secret from the file, else from the environment.
    private func readSecret() throws -> String {
        if let clientSecretFile { return try SecretInput.contentOfFile(clientSecretFile, naming: "client secret") }
        if let secret = ProcessInfo.processInfo.environment[Self.secretVariable], !secret.isEmpty { return secret }
        throw InputError.usage("no client secret: give --client-secret-file FILE, or set \(Self.secretVariable)")
    }
}
