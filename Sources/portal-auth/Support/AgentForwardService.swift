import Foundation
import PortalAuth

/// What the agent does with a token request on its forwarding socket: the sign-in the request selects must be marked
/// for forwarding (`agent forward allow`), the policy's confirmation must come, then the answer is the main socket's
/// (`AgentTokenService`: access and ID tokens only). What is refused is said on the agent's standard error, with the
/// sign-in; the remote is told only that no marked sign-in matches.
struct AgentForwardService: Sendable {
    let service: AgentTokenService
    let policy: AgentForwardPolicy

    func answer(_ request: AgentRequest, peer: PeerCredentials) async -> AgentAnswer {
        guard case .token(let asked) = request else { return await service.answer(request) }
        let remote = AgentRemote.of(pid: peer.pid)
        let found: (name: String?, target: String)?
        do {
            found = try await markedSignIn(for: asked.selection)
        } catch {
            StandardError.line(
                "portal-auth: agent: a forwarded request from \(remote.description) failed: "
                    + ErrorReport.message(for: error, hasTerminal: false))
            // A selection that picks nothing (a name not known, several sign-ins and no default) is answered as
            // one not marked; else the reason's exit status, not its message, which may name other sign-ins.
            if error is SelectionError { return .failure(policy.refuseUnmarked()) }
            return .failure(
                AgentFailure(
                    AgentFailure.Reason(Failure.category(of: error)),
                    "the agent could not pick a sign-in for this request (its output says why); name one with --url, --portal, --iap or --name"
                ))
        }
        guard let found, let name = found.name else {
            StandardError.line(
                "portal-auth: agent: refused a forwarded request from \(remote.description): "
                    + (found.map { "\($0.target) is not marked for forwarding" } ?? "no stored sign-in matches it"))
            return .failure(policy.refuseUnmarked())
        }
        do {
            try await policy.authorize(signIn: name, target: found.target, remote: remote)
        } catch {
            StandardError.line("portal-auth: agent: refused \(remote.description): \(error.message)")
            return .failure(error)
        }
        return await service.answer(request)
    }

    /// The sign-in `selection` picks: its marked name (nil when not marked) and what it is; nil when none is stored.
    private func markedSignIn(for selection: SignInQuery) async throws -> (name: String?, target: String)? {
        let store = try service.session.credentialStore()
        let target = SelectionArguments(query: selection).target
        guard let credential = try await SelectedCredential.find(target, in: store, storeOption: service.session.store),
            let key = SignInSelection.storeKey(of: credential.credential)
        else { return nil }
        guard let path = store.file?.path else { return (nil, credential.target) }
        let marks = try AgentForwardMarks.load(forStore: path)
        return (marks.markedName(of: key, names: try store.preferences().names), credential.target)
    }
}
