import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth iap check`: validates an IAP configuration file and tells which URLs it covers.
struct IAPCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check an IAP configuration file and show which URLs it can be used for.",
        usage: "portal-auth iap check --config <file> [--url <url> ...] [<options>]",
        discussion: """
            Reads the JSON file given with --config, reports every problem at once (with line and column), \
            warns about unknown keys (suggesting the key you probably meant), prints the configuration, and \
            for each --url says whether the configuration applies to it. Nothing secret is printed; a client \
            ID is not a secret. Nothing is sent over the network.

            A configuration file looks like this (Microsoft Entra ID):

              {
                "authorize_url":
                  "https://login.microsoftonline.com/<tenant>/oauth2/v2.0/authorize",
                "token_url":
                  "https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token",
                "logout_url":
                  "https://login.microsoftonline.com/<tenant>/oauth2/v2.0/logout",
                "client_id": "<client_id>",
                "redirect_url": "http://localhost/callback",
                "scope": ["<client_id>/.default", "offline_access", "openid",
                          "profile"],
                "hosts_behind_proxy": ["*.contoso.com"],
                "authorization_prompt_type": ""
              }

            Endpoint URLs must be https (http only on a loopback host). The redirect URL must be absolute; to \
            sign in on Linux it must be a loopback URL (http://127.0.0.1, http://[::1] or http://localhost, \
            any port) or a custom-scheme URL such as my-maps-app://auth (received on a desktop through the \
            scheme's handler: see `portal-auth register-scheme`; without a desktop, paste the final address); \
            otherwise the file is valid but a warning says it cannot be used here. \
            authorization_prompt_type is optional: "" (default), "none", "login", "consent" or \
            "select_account".

            hosts_behind_proxy patterns: "*" matches every host; "*.contoso.com" matches contoso.com and all \
            its subdomains; "maps.contoso.com" matches that host only; ":8443" after a pattern also requires \
            that port; IPv6 addresses go in brackets ("[::1]:8443").

            Examples:
              portal-auth iap check --config contoso-iap.json
              portal-auth iap check --config contoso-iap.json \\
                  --url https://maps.contoso.com/portal --url https://example.com
              portal-auth iap check --config contoso-iap.json --format json

            Exit status: 0 valid (warnings allowed) and every --url covered; 1 valid, but a --url is not \
            covered by hosts_behind_proxy (as grep answers no match); 65 invalid content; 66 the file is \
            missing or unreadable; 64 wrong usage.
            """
    )

    @Option(
        name: .long, help: ArgumentHelp("The IAP configuration file (JSON) to check.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var config: String

    @Option(
        name: .customLong("url"),
        help: ArgumentHelp(
            "A URL to test against hosts_behind_proxy (repeatable).", valueName: "url"))
    var urls: [String] = []

    @Option(help: ArgumentHelp("The output format: text for people, json for scripts.", valueName: "format"))
    var format: OutputFormat = .text

    func validate() throws {
        if config.isEmpty { throw ValidationError("--config needs the path of a JSON file") }
        for text in urls where Self.parseURL(text) == nil {
            throw ValidationError(
                "--url" + MessagePart.given(" \"", text, "\"")
                    + " is not an absolute http or https URL; write it like https://maps.contoso.com/portal")
        }
    }

    func run() async throws {
        let report = await IAPConfiguration.report(from: URL(fileURLWithPath: config))
        let checks = urls.compactMap(Self.parseURL).map { url in
            (url: url, canBeUsed: report.configuration?.canBeUsed(for: url) ?? false)
        }
        switch format {
        case .text: printText(report, checks: checks)
        case .json: Output.json(json(report, checks: checks))
        }
        if let error = report.error { throw ExitStatus.exitCode(for: error.category) }
        // A script asking "does this file cover the URL?" reads the answer from the status.
        if checks.contains(where: { !$0.canBeUsed }) { throw ExitCode(ExitStatus.no) }
    }

    /// `text` as an absolute http(s) URL with a host, or `nil`.
    private static func parseURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }

    // MARK: - Text

    private func printText(_ report: IAPConfigurationReport, checks: [(url: URL, canBeUsed: Bool)]) {
        for warning in report.warnings {
            Output.diagnostic(Output.diagnosticLine(file: config, issue: warning, severity: "warning"))
        }
        for error in report.errors {
            Output.diagnostic(Output.diagnosticLine(file: config, issue: error, severity: "error"))
        }
        guard let configuration = report.configuration else {
            let count = report.errors.count == 1 ? "1 error" : "\(report.errors.count) errors"
            Output.diagnostic("\(DisplayText.path(config)): not a usable IAP configuration (\(count))")
            if !checks.isEmpty {
                Output.diagnostic("\(DisplayText.path(config)): --url not checked because the configuration is invalid")
            }
            return
        }
        let redirectNote =
            configuration.isLoopbackRedirect
            ? "loopback: usable for sign-in here"
            : configuration.isCustomSchemeRedirect
                ? Self.customSchemeNote(configuration)
                : "neither loopback nor a custom scheme: cannot be used to sign in on this platform"
        let prompt = configuration.authorizationPromptType
        let rows: [(String, String)] = [
            ("authorize_url", configuration.authorizeURL.absoluteString),
            ("token_url", configuration.tokenURL.absoluteString),
            ("logout_url", configuration.logoutURL.absoluteString),
            ("client_id", configuration.clientID),
            ("redirect_url", "\(configuration.redirectURL.absoluteString) (\(redirectNote))"),
            ("scope", configuration.scopes.joined(separator: " ")),
            ("hosts_behind_proxy", configuration.hostsBehindProxy.joined(separator: " ")),
            ("authorization_prompt_type", prompt == .unspecified ? "\"\" (unspecified)" : prompt.rawValue),
        ]
        let warnings = report.warnings.count
        Output.result(
            "\(DisplayText.path(config)): valid IAP configuration"
                + (warnings == 0 ? "" : " (\(warnings) warning\(warnings == 1 ? "" : "s"))"))
        let width = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows {
            // Values come from the file: shown without control characters.
            Output.result(
                "  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + DisplayText.neutralised(value))
        }
        for check in checks {
            let verdict =
                check.canBeUsed ? "can be used" : "cannot be used (its host matches no entry of hosts_behind_proxy)"
            Output.result("\(check.url.absoluteString): \(verdict)")
        }
    }

    /// How a custom-scheme redirect signs in here: through the scheme handler on a desktop, else by pasting.
    private static func customSchemeNote(_ configuration: IAPConfiguration) -> String {
        let scheme = configuration.redirectURL.scheme?.lowercased() ?? ""
        guard CustomSchemeRedirect.hasDesktopSession() else {
            return "custom scheme: no desktop session here, so sign-in pastes the final \(scheme): address back"
        }
        let registered = (try? SchemeRegistration.portalAuth(scheme: scheme).status()) == .registered
        return registered
            ? "custom scheme: usable for sign-in on this desktop (portal-auth handles \(scheme): links)"
            : "custom scheme: usable for sign-in on this desktop once registered (portal-auth register-scheme --scheme \(scheme))"
    }

    // MARK: - JSON

    private func json(_ report: IAPConfigurationReport, checks: [(url: URL, canBeUsed: Bool)]) -> JSONValue {
        .object([
            "schema_version": .integer(Self.jsonSchemaVersion),
            "valid": .bool(report.isValid),
            "file": .string(config),
            "errors": .array(report.errors.map(Self.json)),
            "warnings": .array(report.warnings.map(Self.json)),
            "configuration": report.configuration.map(Self.json) ?? .null,
            "urls": .array(
                checks.map { .object(["url": .string($0.url.absoluteString), "can_be_used": .bool($0.canBeUsed)]) }),
        ])
    }

    /// The `schema_version` of `--format json` (CommandLineTool.md lists its fields): raised when a field changes
    /// meaning or goes away.
    static let jsonSchemaVersion: Int64 = 1

    private static func json(_ issue: ConfigurationIssue) -> JSONValue {
        .object([
            "message": .string(issue.message),
            "key": Output.json(issue.key),
            "line": Output.json(issue.line),
            "column": Output.json(issue.column),
        ])
    }

    /// The configuration with the file's keys, plus whether the redirect is usable here.
    private static func json(_ configuration: IAPConfiguration) -> JSONValue {
        .object([
            "authorize_url": .string(configuration.authorizeURL.absoluteString),
            "token_url": .string(configuration.tokenURL.absoluteString),
            "logout_url": .string(configuration.logoutURL.absoluteString),
            "client_id": .string(configuration.clientID),
            "redirect_url": .string(configuration.redirectURL.absoluteString),
            "scope": .array(configuration.scopes.map(JSONValue.string)),
            "hosts_behind_proxy": .array(configuration.hostsBehindProxy.map(JSONValue.string)),
            "authorization_prompt_type": .string(configuration.authorizationPromptType.rawValue),
            "loopback_redirect": .bool(configuration.isLoopbackRedirect),
            "custom_scheme_redirect": .bool(configuration.isCustomSchemeRedirect),
        ])
    }
}
