public import Foundation
import PortalAuthCore

/// A `portal-auth` agent of this user: the process that holds the sign-ins of the credential store it reads and
/// hands out short-lived tokens over a Unix socket (never a refresh token; it refreshes itself, under the store's
/// lock).
///
/// An app that cannot read the credential store — a sandbox, a container, a remote machine reached through a
/// forwarded socket — gets its tokens from the agent instead. Choosing it is explicit: set it on the manager, and
/// `data(for:)` asks it for the token of every URL that no credential of the manager's own store covers:
///
/// ```swift
/// let manager = AuthenticationManager()
/// manager.tokenAgent = TokenAgent.environmentDefault      // $PORTAL_AUTH_AGENT, else the default socket
/// let response = try await manager.data(for: .get(URL(string: "https://gis.example.com/portal/sharing/rest/portals/self?f=json")!))
/// ```
///
/// or ask it directly for the token sent to a URL (the portal's access token, or for a host behind an
/// Identity-Aware Proxy the token the proxy wants):
///
/// ```swift
/// let agent = TokenAgent(socketPath: "/run/user/1000/portal-auth/agent.sock")
/// let token = try await agent.token(for: URL(string: "https://maps.contoso.com/portal/sharing/rest/portals/self")!)
/// request.headers.replaceOrAdd(name: token.isForProxy ? "Authorization" : "X-Esri-Authorization",
///                              value: "Bearer \(token.value)")
/// ```
///
/// The agent answers only processes of its own user. When it is not running, `token(for:minimumValidity:)` throws
/// `TokenAgentError` (category `.unavailable`); a URL no stored sign-in covers, or a sign-in whose refresh token
/// was refused, throws one whose `requiresSignIn` is true (`data(for:)` then sends the request without a token, and
/// the server's challenge reaches the challenge handler).
public struct TokenAgent: Sendable, Hashable, CustomStringConvertible {
    /// The agent's socket.
    public let socketPath: String
    /// How long an answer is waited for (a refresh against a slow identity provider included).
    public var timeout: Duration
    /// For a host behind an Identity-Aware Proxy: which of the sign-in's tokens to ask for (`.idToken`, as the
    /// ArcGIS Maps SDK sends, or `.accessToken`); nil for the choice stored with the sign-in.
    public var proxyToken: IAPTokenInfo.Token?

    /// The agent listening on `socketPath`.
    public init(socketPath: String, timeout: Duration = .seconds(60), proxyToken: IAPTokenInfo.Token? = nil) {
        self.socketPath = socketPath
        self.timeout = timeout
        self.proxyToken = proxyToken
    }

    /// The agent the environment names: the socket in `$PORTAL_AUTH_AGENT` when set (nil when it is `off`), else
    /// `$XDG_RUNTIME_DIR/portal-auth/agent.sock`; nil when neither is set.
    public static var environmentDefault: TokenAgent? {
        guard let found = AgentSocket.clientPath(), found.path != "off" else { return nil }
        return TokenAgent(socketPath: found.path)
    }

    public var description: String { "TokenAgent(\(DisplayText.path(socketPath)))" }

    /// A token from the agent.
    ///
    /// `description` never shows the token.
    public struct Token: Sendable, Hashable, CustomStringConvertible {
        /// The token to send.
        public let value: String
        /// When it expires.
        public let expirationDate: Date
        /// Whether it is for an Identity-Aware Proxy (sent as `Authorization: Bearer`) rather than an ArcGIS token
        /// (sent as `X-Esri-Authorization: Bearer`).
        public let isForProxy: Bool
        /// The signed-in user, when known.
        public let username: String?
        /// When the agent's sign-in got the token (the sign-in or its last refresh); nil from an agent that does not
        /// say. A proxy's refusal of a token at least a minute old asks the agent for a newer one (as for a stored
        /// credential); a younger token refused would be refused again.
        public let issueDate: Date?
        /// Whether `value` is an ID token (for a proxy).
        let isIDToken: Bool

        init(_ token: AgentToken) {
            value = token.value
            expirationDate = token.expirationDate
            isForProxy = token.kind == .iap
            username = token.username
            isIDToken = token.isIDToken
            issueDate = token.issuedAt
        }

        public var description: String {
            "TokenAgent.Token(<redacted>, expires \(UTCTimestamp.iso8601(expirationDate))"
                + (isForProxy ? ", for a proxy)" : ")")
        }
    }

    /// The token the agent's stored sign-in that covers `url` sends there, valid for at least `minimumValidity`
    /// (refreshed by the agent first when it has less left; a token the provider issues for less is handed out in
    /// the first half of its lifetime).
    ///
    /// - Throws: `TokenAgentError`: `requiresSignIn` when no stored sign-in covers `url` or its refresh token was
    ///   refused (sign in where the agent's store is); category `.unavailable` when the agent is not running or
    ///   cannot reach the identity provider, `.timedOut` when it did not answer within `timeout`.
    public func token(for url: URL, minimumValidity: Duration = .seconds(300)) async throws -> Token {
        let seconds = max(0, min(Int(minimumValidity.components.seconds), Int(AgentProtocol.maximumMinValid)))
        let request = AgentRequest.token(
            AgentTokenRequest(selection: .url(url), minValid: seconds, proxyToken: proxyToken, forHosts: true))
        let (path, timeout) = (socketPath, self.timeout)
        let answer: AgentAnswer
        do {
            answer = try await BlockingWork.run { try AgentSocket.ask(request, at: path, timeout: timeout) }
        } catch let error as AgentSocketError {
            throw TokenAgentError(socketError: error, socketPath: path)
        }
        switch answer {
        case .token(let token): return Token(token)
        case .failure(let failure): throw TokenAgentError(failure: failure, socketPath: path)
        case .status, .stopping:
            throw TokenAgentError(
                category: .local, socketPath: path,
                description: "the agent at \(DisplayText.path(path)) answered another request than the one sent")
        }
    }
}

/// Why a `TokenAgent` gave no token: its `category` (`.refused` when only a sign-in can help), and its
/// `description`, which says what happened and what to do (never a token).
public struct TokenAgentError: Error, Sendable, CategorizedError, CustomStringConvertible {
    public let category: ErrorCategory
    /// The agent's socket.
    public let socketPath: String
    public let description: String
    /// Whether the agent holds no usable sign-in for what was asked: nothing stored covers it (see
    /// `isNothingStored`), or its refresh token was refused.
    public var requiresSignIn: Bool { category == .refused }
    /// Whether nothing the agent stores covers what was asked (as opposed to a stored sign-in that cannot be
    /// refreshed).
    public let isNothingStored: Bool
    /// Whether nothing listens on the socket (no agent running there, or a socket file left behind).
    package let isNotServing: Bool

    init(
        category: ErrorCategory, socketPath: String, description: String, isNothingStored: Bool = false,
        isNotServing: Bool = false
    ) {
        self.category = category
        self.socketPath = socketPath
        self.description = description
        self.isNothingStored = isNothingStored
        self.isNotServing = isNotServing
    }

    /// The agent's failure, with its message as the agent words it.
    init(failure: AgentFailure, socketPath: String) {
        self.init(
            category: failure.category, socketPath: socketPath, description: failure.message,
            isNothingStored: failure.reason == .signInNeeded
                && failure.message.hasPrefix(AgentTokenRequest.nothingStoredPrefix))
    }

    /// The socket's failure, worded for an app.
    init(socketError error: AgentSocketError, socketPath: String) {
        let description: String
        switch error.code {
        case .notServing:
            description =
                "no token agent answers\(MessagePart.given(" on ", DisplayText.path(socketPath))); start it where the sign-ins are stored, or "
                + "choose another TokenAgent"
        case .alreadyServing, .busy, .timedOut, .socket:
            description = error.message
        }
        self.init(
            category: error.category, socketPath: socketPath, description: description,
            isNotServing: error.code == .notServing)
    }
}

extension AgentTokenRequest {
    /// How the agent's message begins when no stored sign-in covers a URL that was asked for.
    package static let nothingStoredPrefix = "no stored portal or IAP sign-in covers "
}
