import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth status`: what is signed in, never a token.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the stored sign-ins: who, where, and when their tokens expire (never a token).",
        discussion: """
            Exit status 0 also when nothing is stored; 65 when the store file is corrupted; 70 when its \
            permissions are unsafe.
            """
    )

    @Option(help: "Output format: text for people, json for scripts.")
    var format: OutputFormat = .text

    @OptionGroup var session: SessionOptions

    func run() async throws {
        let store: ArcGISCredentialStore
        do {
            store = try session.credentialStore()
        } catch {
            throw Failure.report(error)
        }
        let summaries = store.summaries.sorted { ($0.kind.rawValue, $0.target) < ($1.kind.rawValue, $1.target) }
        let now = Date()
        switch format {
        case .json:
            Output.json(.object([
                "store": .string(store.file?.path ?? ""),
                "secrets_in": .string(store.file?.backend.rawValue ?? "memory"),
                "secrets_in_reason": Output.json(store.file?.backendReason),
                "credentials": .array(summaries.map { json($0, now: now) }),
                "unreadable_entries": .array(store.unreadableEntries.map { .string($0) }),
            ]))
        case .text:
            Output.result("Credential store: \(store.file?.path ?? "memory")")
            if let file = store.file {
                let place = file.backend == .keyring ? "the desktop keyring (Secret Service); the store file is their index" : "the store file"
                Output.result("Tokens kept in: \(place)\(file.backendReason.map { " (\($0))" } ?? "")")
            }
            if summaries.isEmpty { Output.result("No stored sign-ins. Sign in with `portal-auth login` or `portal-auth iap login`.") }
            for summary in summaries {
                Output.result("")
                Output.result(summary.kind == .iap ? "IAP \(summary.target)" : "Portal \(summary.target)")
                Output.result("  client ID:      \(summary.clientID)")
                Output.result("  user:           \(summary.username.map { DisplayText.neutralised($0, limit: 200) } ?? "unknown")")
                Output.result("  access token:   \(Self.describe(summary.accessTokenExpirationDate, now: now))")
                let refresh = summary.hasRefreshToken ? (summary.refreshTokenExpirationDate.map { Self.describe($0, now: now) } ?? "held, expiry not told by the server") : "none"
                Output.result("  refresh token:  \(refresh)")
                if let idExpiry = summary.idTokenExpirationDate { Output.result("  ID token:       \(Self.describe(idExpiry, now: now))") }
                if !summary.hostsBehindProxy.isEmpty { Output.result("  hosts:          \(summary.hostsBehindProxy.joined(separator: ", "))") }
            }
            for key in store.unreadableEntries {
                Output.diagnostic("warning: the stored entry \(key) cannot be read; sign in again to replace it")
            }
        }
    }

    /// "expires 2026-11-22T10:00:00Z (in 59 min)" or "expired … (3 min ago)".
    static func describe(_ date: Date, now: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now))
        let span = abs(seconds) >= 3600 ? "\(abs(seconds) / 3600) h \(abs(seconds) % 3600 / 60) min" : abs(seconds) >= 60 ? "\(abs(seconds) / 60) min" : "\(abs(seconds)) s"
        return seconds > 0 ? "valid until \(date.ISO8601Format()) (in \(span))" : "expired at \(date.ISO8601Format()) (\(span) ago)"
    }

    private func json(_ summary: CredentialSummary, now: Date) -> JSONValue {
        func date(_ value: Date?) -> JSONValue { value.map { .string($0.ISO8601Format()) } ?? .null }
        return .object([
            "kind": .string(summary.kind.rawValue),
            "target": .string(summary.target),
            "client_id": .string(summary.clientID),
            "username": Output.json(summary.username),
            "access_token_expires_at": date(summary.accessTokenExpirationDate),
            "access_token_valid": .bool(summary.accessTokenExpirationDate > now),
            "has_refresh_token": .bool(summary.hasRefreshToken),
            "refresh_token_expires_at": date(summary.refreshTokenExpirationDate),
            "id_token_expires_at": date(summary.idTokenExpirationDate),
            "hosts_behind_proxy": .array(summary.hostsBehindProxy.map { .string($0) }),
            "updated_at": date(summary.updatedAt),
        ])
    }
}
