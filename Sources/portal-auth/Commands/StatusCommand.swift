import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth status`: what is signed in, never a token; its exit status says whether a token can be had.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the stored sign-ins: who, where, and when their tokens expire (never a token).",
        usage: "portal-auth status [<selection>] [--quiet] [--format <fmt>] [<options>]",
        discussion: """
            Reads the store only: no request is sent. The sign-in that counts is the one the options pick, \
            else the only one or the default (`portal-auth use`), else any. It is usable when its access \
            token is valid or its refresh token is held, not expired, and was not refused at the last refresh.

            --claims adds what the stored tokens say about themselves, decoded from the access token (when it \
            is a JWT; ArcGIS portal tokens are not) and the ID token: issuer, audience, authorized party, client \
            ID, subject, scopes, issued, not before, expires. These are the facts to compare when a service or \
            proxy refuses a token (its audience, a missing scope). The token itself and its signature are never \
            printed, and nothing is checked or sent.

            --url, --portal, --iap or --name show only the sign-in they pick (the one `token` and `request` \
            would use); when none is stored for it, one line on standard error says so (exit 77). Under \
            --format json the entry that counts has "selected": true (see the field table in the \
            documentation).

            Examples:
              portal-auth status
              portal-auth status --claims --url https://maps.contoso.com/portal
              portal-auth status --quiet || portal-auth login \\
                  --portal https://www.arcgis.com --client-id abc123

            Exit status: 0 the sign-in that counts is usable; 77 nothing is stored for it, or its refresh \
            token expired or was refused (sign in again); 64 wrong usage; 65 the store file is corrupted; \
            70 its permissions are unsafe.
            """
    )

    @OptionGroup var selection: CredentialSelection

    @Option(help: "Output format: text for people, json for scripts.")
    var format: OutputFormat = .text

    @Flag(name: .shortAndLong, help: "Print nothing; only the exit status tells (a cheap \"am I signed in?\").")
    var quiet = false

    @Option(name: .customLong("proxy-token"), help: ProxyTokenChoice.help)
    var proxyToken: ProxyTokenChoice?

    @Flag(
        help:
            "Also show the claims of the stored access token (when a JWT) and ID token: issuer, audience, scopes, expiry (never the token)."
    )
    var claims = false

    func validate() throws {
        _ = try ProxyTokenChoice.resolved(proxyToken)
    }

    @OptionGroup var session: StoreOptions

    func run() async throws {
        let store: ArcGISCredentialStore
        let preferences: SignInPreferences
        let selectedKey: String?
        do {
            store = try session.credentialStore()
            preferences = try store.preferences()
            selectedKey = try await selected(in: store, preferences: preferences)
        } catch {
            if quiet { throw ExitStatus.exitCode(for: (error as? any CategorizedError)?.category ?? .local) }
            throw Failure.report(error)
        }
        let summaries = store.summaries.sorted { ($0.kind.rawValue, $0.target) < ($1.kind.rawValue, $1.target) }
        let now = Date()
        // Several and no default, without options: usable when any is.
        let counted = selectedKey.map { key in summaries.filter { $0.storeKey == key } } ?? summaries
        let usable = counted.contains { $0.isUsable(at: now) }
        // A selection shows only what it picks; nothing picked is said in one line.
        let selecting: Bool
        if case .automatic = selection.target { selecting = false } else { selecting = true }
        if !quiet {
            // Nothing picked: the one line alone in text (the JSON document still says where it looked).
            if !(selecting && counted.isEmpty && format == .text) {
                show(
                    selecting ? counted : summaries, all: summaries, store: store, preferences: preferences,
                    selectedKey: selectedKey, now: now)
            }
            if selecting && counted.isEmpty {
                StandardError.line("portal-auth: \(TokenInvocation.nothingStored(for: selection.target))")
            }
        }
        if !usable { throw ExitStatus.exitCode(for: .refused) }
    }

    /// Which token `request`, `exec` and `token --url` send to the hosts behind the proxy: the one chosen
    /// (`--proxy-token`, `$PORTAL_AUTH_PROXY_TOKEN`, else the one stored with the sign-in, else the ID token), the
    /// access token when no ID token is held.
    private func sentToProxy(_ summary: CredentialSummary) -> ProxyTokenChoice {
        let chosen =
            ((try? ProxyTokenChoice.override(proxyToken)) ?? nil) ?? ProxyTokenChoice.stored(summary.proxyToken) ?? .id
        return chosen == .id && summary.idTokenExpirationDate == nil ? .access : chosen
    }

    /// "the ID token, as the ArcGIS Maps SDK sends it (--proxy-token access sends the access token)".
    private func proxyTokenLine(_ summary: CredentialSummary) -> String {
        let overridden = ((try? ProxyTokenChoice.override(proxyToken)) ?? nil) != nil
        let stored = ProxyTokenChoice.stored(summary.proxyToken)
        switch sentToProxy(summary) {
        case .access where summary.idTokenExpirationDate == nil:
            return "the access token (no ID token is held: add openid to the scope)"
        case let choice where !overridden && stored == choice:
            let other: ProxyTokenChoice = choice == .id ? .access : .id
            return
                "\(choice.phrase) (stored with the sign-in: iap login --proxy-token \(choice.rawValue); --proxy-token \(other.rawValue) overrides it)"
        case .id:
            return
                "the ID token, as the ArcGIS Maps SDK sends it (--proxy-token access or PORTAL_AUTH_PROXY_TOKEN=access sends the access token)"
        case .access: return "the access token (chosen; --proxy-token id sends the ID token)"
        }
    }

    /// The sign-in that is the default: the one chosen (`portal-auth use`, the newest sign-in), else the only one.
    private func defaultKey(_ summaries: [CredentialSummary], preferences: SignInPreferences) -> String? {
        if let key = preferences.defaultKey, summaries.contains(where: { $0.storeKey == key }) { return key }
        return summaries.count == 1 ? summaries[0].storeKey : nil
    }

    /// The store key of the sign-in that counts; nil for "any" (no options, several, no default).
    private func selected(in store: ArcGISCredentialStore, preferences: SignInPreferences) async throws -> String? {
        if case .automatic = selection.target {
            do {
                return try await SignInSelection.select(.automatic, in: store, preferences: preferences).flatMap(
                    SignInSelection.storeKey(of:))
            } catch {
                return nil
            }
        }
        return try await SignInSelection.select(selection.target, in: store, preferences: preferences).flatMap(
            SignInSelection.storeKey(of:))
            ?? "-"  // nothing stored for what was asked: nothing counts
    }

    // MARK: - Showing

    /// Shows `summaries` (all stored, or the one a selection picks), with the default told among `all`.
    private func show(
        _ summaries: [CredentialSummary], all: [CredentialSummary], store: ArcGISCredentialStore,
        preferences: SignInPreferences, selectedKey: String?, now: Date
    ) {
        let defaultKey = defaultKey(all, preferences: preferences)
        switch format {
        case .json:
            Output.json(
                .object([
                    "schema_version": .integer(Self.jsonSchemaVersion),
                    "store": .string(store.file?.path ?? ""),
                    "secrets_in": .string(store.file?.backend.rawValue ?? "memory"),
                    "secrets_in_reason": Output.json(store.file?.backendReason.map(ErrorReport.toolWords)),
                    "default": Output.json(defaultKey),
                    "credentials": .array(
                        summaries.map {
                            json(
                                $0, preferences: preferences, defaultKey: defaultKey, selectedKey: selectedKey,
                                now: now)
                        }),
                    "unreadable_entries": .array(store.unreadableEntries.map { .string($0) }),
                ]))
        case .text:
            Output.result("Credential store: \(store.file.map { DisplayText.path($0.path) } ?? "memory")")
            if let file = store.file {
                let place =
                    file.backend == .keyring
                    ? "the desktop keyring (Secret Service); the store file is their index" : "the store file"
                Output.result(
                    "Tokens kept in: \(place)\(file.backendReason.map { " (\(ErrorReport.toolWords($0)))" } ?? "")")
            }
            if all.isEmpty {
                Output.result("No stored sign-ins. Sign in with `portal-auth login` or `portal-auth iap login`.")
            }
            for summary in summaries {
                var marks: [String] = []
                if defaultKey == summary.storeKey { marks.append("default") }
                if let name = preferences.name(of: summary.storeKey) {
                    marks.append("name: \(DisplayText.neutralised(name, limit: 200))")
                }
                let suffix = marks.isEmpty ? "" : " (\(marks.joined(separator: ", ")))"
                Output.result("")
                Output.result(
                    (summary.kind == .iap
                        ? "IAP \(DisplayText.path(summary.target))" : "Portal \(DisplayText.path(summary.target))")
                        + suffix)
                Output.result("  client ID:      \(summary.clientID)")
                Output.result(
                    "  user:           \(summary.username.map { DisplayText.neutralised($0, limit: 200) } ?? "unknown")"
                )
                if let tenant = summary.entraTenantID {
                    Output.result("  tenant:         \(tenant) (the Microsoft Entra directory signed in to)")
                }
                if let name = summary.userInfoName {
                    Output.result("  name:           \(DisplayText.neutralised(name, limit: 200))")
                }
                if let email = summary.userInfoEmail {
                    Output.result("  e-mail:         \(DisplayText.neutralised(email, limit: 200))")
                }
                Output.result("  access token:   \(Self.describe(summary.accessTokenExpirationDate, now: now))")
                Output.result("  refresh token:  \(Self.refreshState(summary, now: now))")
                if let idExpiry = summary.idTokenExpirationDate {
                    Output.result("  ID token:       \(Self.describe(idExpiry, now: now))")
                }
                if !summary.hostsBehindProxy.isEmpty {
                    Output.result("  hosts:          \(summary.hostsBehindProxy.joined(separator: ", "))")
                }
                if summary.kind == .iap { Output.result("  sent to hosts:  \(proxyTokenLine(summary))") }
                if !summary.isUsable(at: now) {
                    Output.result("  sign in again:  the stored tokens cannot give a new access token")
                }
                if claims {
                    for line in ClaimsText.lines(summary.accessTokenClaims, of: "access token", now: now) {
                        Output.result("  " + line)
                    }
                    if summary.kind == .iap || summary.idTokenClaims != nil {
                        for line in ClaimsText.lines(summary.idTokenClaims, of: "ID token", now: now) {
                            Output.result("  " + line)
                        }
                    }
                }
            }
            for key in store.unreadableEntries {
                Output.diagnostic(
                    "portal-auth: warning: the stored entry \(DisplayText.path(key)) cannot be read; sign in again to replace it"
                )
            }
        }
    }

    /// The `schema_version` of `--format json` (CommandLineTool.md lists its fields): raised when a field changes
    /// meaning or goes away.
    static let jsonSchemaVersion: Int64 = 1

    /// "refused at the last refresh (invalid_grant)", "valid until …", "held, expiry not told by the server", "none".
    static func refreshState(_ summary: CredentialSummary, now: Date) -> String {
        guard summary.hasRefreshToken else { return "none" }
        if let refusal = summary.refreshTokenRefusal {
            return
                "refused by the identity provider at the last refresh (\(DisplayText.neutralised(refusal, limit: 200)))"
        }
        return summary.refreshTokenExpirationDate.map { describe($0, now: now) }
            ?? "held, expiry not told by the server"
    }

    /// "valid until 2026-11-22T10:00:00Z (in 59 min)" or "expired … (3 min ago)"; days past 48 hours.
    static func describe(_ date: Date, now: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now))
        let span = Self.span(abs(seconds))
        return seconds > 0
            ? "valid until \(date.ISO8601Format()) (in \(span))" : "expired at \(date.ISO8601Format()) (\(span) ago)"
    }

    /// "45 s", "59 min", "5 h 3 min", "13 d 4 h" (days from 48 hours on).
    static func span(_ seconds: Int) -> String {
        if seconds >= 48 * 3600 { return "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h" }
        if seconds >= 3600 { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        if seconds >= 60 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }

    private func json(
        _ summary: CredentialSummary, preferences: SignInPreferences, defaultKey: String?, selectedKey: String?,
        now: Date
    ) -> JSONValue {
        func date(_ value: Date?) -> JSONValue { value.map { .string($0.ISO8601Format()) } ?? .null }
        var object: JSONObject = [
            "kind": .string(summary.kind.rawValue),
            "key": .string(summary.storeKey),
            "name": Output.json(preferences.name(of: summary.storeKey)),
            "default": .bool(defaultKey == summary.storeKey),
            "selected": .bool(selectedKey == summary.storeKey),
            "target": .string(summary.target),
            "url": .string(summary.url.absoluteString),
            "configuration_file": Output.json(summary.configurationFile),
            "client_id": .string(summary.clientID),
            "username": Output.json(summary.username),
            "entra_tenant_id": Output.json(summary.entraTenantID),
            "userinfo_name": Output.json(summary.userInfoName),
            "userinfo_email": Output.json(summary.userInfoEmail),
            "usable": .bool(summary.isUsable(at: now)),
            "access_token_expires_at": date(summary.accessTokenExpirationDate),
            "access_token_valid": .bool(summary.accessTokenExpirationDate > now),
            "has_refresh_token": .bool(summary.hasRefreshToken),
            "refresh_token_expires_at": date(summary.refreshTokenExpirationDate),
            "refresh_token_refused": Output.json(summary.refreshTokenRefusal),
            "id_token_expires_at": date(summary.idTokenExpirationDate),
            "hosts_behind_proxy": .array(summary.hostsBehindProxy.map { .string($0) }),
            "proxy_token": summary.kind == .iap ? .string(sentToProxy(summary).rawValue) : .null,
            "proxy_token_stored": Output.json(ProxyTokenChoice.stored(summary.proxyToken)?.rawValue),
            "updated_at": date(summary.updatedAt),
        ]
        if claims {
            object["access_token_claims"] = ClaimsText.json(summary.accessTokenClaims)
            object["id_token_claims"] = ClaimsText.json(summary.idTokenClaims)
        }
        return .object(object)
    }
}
