import Foundation
import PortalAuth

/// What the agent does with a token request: what `portal-auth token` does with the same selection and options
/// (`TokenInvocation`, never interactive), on a store opened for the request, so that the store stays the truth.
///
/// Tokens are kept in memory (`AgentTokenCache`) with the state of the store file, its preferences file and the
/// IAP configuration file they came from: a request is answered from memory, without reading the store or the
/// keyring, while those files are unchanged and the token stays valid for its `min_valid`.
struct AgentTokenService: Sendable {
    /// The agent's `--store`, `--ca-bundle` and `--timeout` (which counts from each request's start).
    let session: SessionArguments
    /// The tokens handed out, kept while the store is unchanged.
    let cache = AgentTokenCache()
    /// The clock of the cache's validity check.
    var now: @Sendable () -> Date = { Date() }

    /// The answer to `request`: the token, or the failure with the message `token` prints and its exit status.
    func answer(_ request: AgentRequest) async -> AgentAnswer {
        guard case .token(let asked) = request else {
            return .failure(.badRequest("this request is answered by the agent itself"))
        }
        var watched = watchedPaths()
        // No store path (an error the store's read reports): nothing is kept.
        guard !watched.isEmpty else { return await read(asked) }
        if case .iap(let file) = asked.selection { watched.append(file.path) }
        // Taken before the store is read: a change after this point is seen by the next request.
        let marker = AgentTokenCache.Marker.of(watched)
        if let kept = cache.token(for: asked, now: now()) { return .token(kept) }
        let answer = await read(asked)
        if case .token(let token) = answer {
            cache.keep(token, for: asked, marker: marker.adding(token.configurationFile.map { [$0] } ?? []))
        }
        return answer
    }

    /// The answer to `request` from memory — a kept token whose files are unchanged, valid for the request's
    /// `min_valid` — or nil (then `answer(_:)` reads the store). Blocks on nothing but a few `stat` calls: the
    /// server runs it on its own thread.
    func kept(_ request: AgentRequest) -> AgentAnswer? {
        guard case .token(let asked) = request, let token = cache.token(for: asked, now: now()) else { return nil }
        return .token(token)
    }

    /// The store file and its preferences file.
    private func watchedPaths() -> [String] {
        cache.watchedPaths {
            guard let path = try? session.storeFile().path else { return nil }
            return [path, SignInPreferences.path(forStore: path)]
        }
    }

    /// The answer read from the store, refreshed under its lock when needed.
    private func read(_ asked: AgentTokenRequest) async -> AgentAnswer {
        var session = self.session
        session.start = .now
        let selection = SelectionArguments(query: asked.selection)
        var invocation = TokenInvocation(selection: selection, session: session)
        invocation.minValid = asked.minValid
        invocation.idToken = asked.idToken
        invocation.proxyToken = asked.proxyToken.map { $0 == .idToken ? .id : .access }
        invocation.forHosts = asked.forHosts
        invocation.watchesInterrupts = false
        invocation.arguments = asked.forHosts ? [] : ["token"] + selection.words
        do {
            return .token(try await invocation.obtain().agentToken)
        } catch {
            return .failure(Self.failure(for: error))
        }
    }

    /// The protocol's failure for `error`, worded as the tool words it.
    static func failure(for error: any Error) -> AgentFailure {
        return AgentFailure(.init(Failure.category(of: error)), ErrorReport.message(for: error, hasTerminal: false))
    }
}

extension SelectionArguments {
    /// The option values that select what `query` says.
    init(query: SignInQuery) {
        switch query {
        case .portal(let url, let clientID): self.init(portal: url.absoluteString, clientID: clientID)
        case .iap(let file): self.init(iap: file.path)
        case .url(let url): self.init(url: url.absoluteString)
        case .name(let name): self.init(name: name)
        case .automatic: self.init()
        }
    }
}

extension IssuedToken {
    /// The token as the agent hands it out.
    var agentToken: AgentToken {
        AgentToken(
            kind: kind, target: target, url: url, username: username, clientID: clientID,
            configurationFile: configurationFile, value: value, type: type, expirationDate: expirationDate,
            idToken: idToken, idTokenExpirationDate: idTokenExpirationDate, isIDToken: isIDToken, issuedAt: issuedAt)
    }

    /// A token the agent handed out.
    init(_ token: AgentToken) {
        self.init(
            kind: token.kind, target: token.target, url: token.url, clientID: token.clientID,
            configurationFile: token.configurationFile, username: token.username, value: token.value,
            type: token.type, expirationDate: token.expirationDate, idToken: token.idToken,
            idTokenExpirationDate: token.idTokenExpirationDate, isIDToken: token.isIDToken, issuedAt: token.issuedAt)
    }
}

/// `token` and `exec` asking the agent: when `PORTAL_AUTH_AGENT` names a socket, or (with no store named by `--store`
/// or `PORTAL_AUTH_STORE`, whose tokens an agent of the default store would not hold) the default socket answers.
/// Nothing listening there means the store is read as without an agent; the agent's failures are the tool's.
enum AgentAsk {
    /// The socket to try; nil when no agent is to be asked (`PORTAL_AUTH_AGENT=off` says never), or when the default
    /// socket names nothing: one failed `access(2)` on every run without an agent, where asking would cost a socket,
    /// a failed connect and a close (nothing there is what the askers answer nil for, so the store is read either
    /// way). A socket named by `PORTAL_AUTH_AGENT` is always asked: what its absence means is theirs to say.
    static func socket(store: String?) -> String? {
        guard let found = AgentSocket.clientPath(), found.path != "off" else { return nil }
        if found.explicit { return found.path }
        if store != nil || ProcessEnvironment.value(of: "PORTAL_AUTH_STORE") != nil { return nil }
        guard access(found.path, F_OK) == 0 || (errno != ENOENT && errno != ENOTDIR) else { return nil }
        return found.path
    }

    /// The agent `request` gets its tokens from (through `AuthenticationManager.tokenAgent`), nil when none is to be
    /// asked. Whether one serves is told by the token request itself (`TokenAgentError.isNotServing`: then the
    /// caller reads the store): one connection per run. Only a request that carries a token of its own, for which
    /// the library asks the agent nothing, asks for the agent's status first, so that the store is read when none
    /// serves.
    ///
    /// - Throws: `AgentSocketError` when the agent cannot be talked to.
    static func forRequest(_ request: TransportRequest, session: SessionArguments, proxyToken: IAPTokenInfo.Token?)
        throws -> TokenAgent?
    {
        guard let path = socket(store: session.store) else { return nil }
        if !AuthenticationManager.asksTokenAgentFirst(for: request) {
            do {
                _ = try AgentSocket.ask(.status, at: path, timeout: .seconds(session.timeout))
            } catch  where error.code == .notServing {
                return nil
            }
        }
        return TokenAgent(socketPath: path, timeout: .seconds(session.timeout), proxyToken: proxyToken)
    }

    /// The agent's token for `request`, or nil when no agent serves (then the caller reads the store). With
    /// `wakingPromptly` the calling thread asks for a short time slice first (`TimeSlice`), so that it runs as soon
    /// as the answer arrives rather than after other processes' slices: for `token`, which starts no process that
    /// would inherit it.
    ///
    /// - Throws: the agent's `AgentFailure` (the message and exit status `token` gives for it), or
    ///   `AgentSocketError` when the agent cannot be talked to.
    static func token(_ request: AgentTokenRequest, session: SessionArguments, wakingPromptly: Bool = false) throws
        -> IssuedToken?
    {
        guard let path = socket(store: session.store) else { return nil }
        if wakingPromptly { TimeSlice.requestShort() }
        guard let answer = try answer(to: request, at: path, timeout: session.timeout) else { return nil }
        switch answer {
        case .token(let token): return IssuedToken(token)
        case .failure(let failure): throw failure
        case .status, .stopping:
            throw AgentSocketError(
                .socket, "the agent at \(DisplayText.path(path)) answered another request than the one sent")
        }
    }

    /// The agent's answer; nil when nothing listens at `path`.
    private static func answer(to request: AgentTokenRequest, at path: String, timeout: Int) throws(AgentSocketError)
        -> AgentAnswer?
    {
        do {
            return try AgentSocket.ask(.token(request), at: path, timeout: .seconds(timeout))
        } catch {
            if error.code == .notServing { return nil }
            throw error
        }
    }
}
