import Foundation
import PortalAuthCore

/// The IAP logouts of a sign-out: one browser logout per identity-provider session, those sharing a fixed redirect
/// port one after another.
///
/// Two IAP sign-ins at one provider from the same browser share one provider session: the first browser logout ends
/// it, and the provider has nothing left to confirm for the second (Glewlwyd then sends the browser nowhere, and the
/// second logout would wait out its time to report "no confirmation"). So sign-ins are grouped by session: the same
/// logout endpoint and issuer, and the same `sid` claim in their ID tokens (OpenID Connect Front-Channel Logout §3:
/// the provider's session identifier) or, without `sid`, the same subject. Each group gets one browser logout, with
/// its first sign-in's ID token as `id_token_hint`; every sign-in of it has its refresh token revoked where the
/// provider offers revocation, is made unusable, and shares the group's confirmation.
enum IAPSessionLogouts {
    /// Logs `credentials` out and returns one entry each, in their order.
    static func run(_ credentials: [IAPCredential], settings: SignInSettings) async -> [SignOutReport.Entry] {
        var records: [StoredCredential] = []
        for credential in credentials { records.append(await credential.latestRecord()) }
        let sessions = sessions(of: records)
        // Sessions whose logout listens on the same fixed port run one after another; the others at once.
        var lanes: [[[Int]]] = []
        var laneOfPort: [Int: Int] = [:]
        for session in sessions {
            let port = records[session[0]].redirectURL.port ?? 0
            if port != 0, let lane = laneOfPort[port] {
                lanes[lane].append(session)
            } else {
                if port != 0 { laneOfPort[port] = lanes.count }
                lanes.append([session])
            }
        }
        return await withTaskGroup(of: [(Int, SignOutReport.Entry)].self) { group in
            for lane in lanes {
                group.addTask {
                    var done: [(Int, SignOutReport.Entry)] = []
                    for session in lane { done += await logOut(session: session, of: credentials, settings: settings) }
                    return done
                }
            }
            var entries = [SignOutReport.Entry?](repeating: nil, count: credentials.count)
            for await finished in group {
                for (index, entry) in finished { entries[index] = entry }
            }
            return entries.map { $0! }
        }
    }

    /// The indexes of `records`, grouped by provider session (see the type's description), in their first order.
    static func sessions(of records: [StoredCredential]) -> [[Int]] {
        var groups: [[Int]] = []
        var groupOfKey: [String: Int] = [:]
        for (index, record) in records.enumerated() {
            guard let key = sessionKey(record) else {
                groups.append([index])
                continue
            }
            if let group = groupOfKey[key] {
                groups[group].append(index)
            } else {
                groupOfKey[key] = groups.count
                groups.append([index])
            }
        }
        return groups
    }

    /// Which provider session `record` belongs to; `nil` when that cannot be told (no ID token, no logout URL).
    static func sessionKey(_ record: StoredCredential) -> String? {
        guard let logoutURL = record.logoutURL, let idToken = record.idToken else { return nil }
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]),
            let claims = try? JSONValue.parse(Data(bytes)).objectValue, let issuer = claims["iss"]?.stringValue
        else { return nil }
        let session: String
        if let sid = claims["sid"]?.stringValue, !sid.isEmpty {
            session = "sid " + sid
        } else if let subject = claims["sub"]?.stringValue, !subject.isEmpty {
            session = "sub " + subject
        } else {
            return nil
        }
        return [logoutURL.absoluteString, issuer, session].joined(separator: "\n")
    }

    /// One browser logout for the session's first sign-in; the others are revoked and made unusable, and share its
    /// confirmation.
    private static func logOut(session: [Int], of credentials: [IAPCredential], settings: SignInSettings) async -> [(
        Int, SignOutReport.Entry
    )] {
        let first = credentials[session[0]]
        let outcome: SignOutReport.Outcome
        var done: [(Int, SignOutReport.Entry)] = []
        do {
            let result = try await first.logOut(settings: settings)
            outcome =
                result.browserLogoutSkipped.map { .browserLogoutSkipped($0) }
                ?? (result.isSessionEndConfirmed ? .loggedOut : .logoutNotConfirmed)
            var entry = SignOutReport.Entry(credential: first, outcome: outcome)
            entry.logoutResult = result
            done.append((session[0], entry))
        } catch {
            outcome = .logoutFailed(error)
            done.append((session[0], SignOutReport.Entry(credential: first, outcome: outcome)))
        }
        for index in session.dropFirst() {
            let credential = credentials[index]
            var result = await credential.endWithoutBrowserLogout(settings: settings)
            if case .loggedOut = outcome { result.isSessionEndConfirmed = true }
            if case .browserLogoutSkipped(let reason) = outcome { result.browserLogoutSkipped = reason }
            var entry = SignOutReport.Entry(credential: credential, outcome: outcome)
            entry.logoutResult = result
            done.append((index, entry))
        }
        return done
    }
}
