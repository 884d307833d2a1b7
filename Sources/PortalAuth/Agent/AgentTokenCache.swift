package import Foundation
import PortalAuthCore
import Synchronization

/// The tokens the agent handed out, kept in memory so that a request answers without reading the store (nor the
/// keyring) while nothing changed: the store stays the truth.
///
/// A token is kept with the `Marker` of the files it came from (the store file, its preferences file, an IAP
/// configuration file) taken *before* they were read, and given again only while every one of them is as it was —
/// a sign-in, sign-out, refresh or revocation by any process replaces the store file (an atomic rename: a new inode
/// and times), so the next request sees it at once — and while it stays valid for the request's `min_valid`, the
/// rule by which the store would give the same token without refreshing.
package final class AgentTokenCache: Sendable {
    /// What files looked like: for each, its `FileVersion` (device, inode, size, modification and change times; nil
    /// when missing).
    package struct Marker: Sendable, Equatable {
        let paths: [String]
        let files: [FileVersion?]

        /// The files at `paths` as they are now.
        package static func of(_ paths: [String]) -> Marker {
            Marker(paths: paths, files: paths.map { FileVersion(path: $0) })
        }

        /// This marker with the files at `more` as they are now (those not in it already).
        package func adding(_ more: [String]) -> Marker {
            let new = more.filter { !paths.contains($0) }
            guard !new.isEmpty else { return self }
            let added = Marker.of(new)
            return Marker(paths: paths + added.paths, files: files + added.files)
        }
    }

    private struct Kept {
        let token: AgentToken
        let marker: Marker
    }

    private let kept = Mutex<[String: Kept]>([:])
    private let paths = Mutex<[String]?>(nil)
    /// The most tokens kept (one per distinct request); past it, all are dropped (and read again when asked for).
    package let capacity: Int

    package init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    /// The key of `request`: what it asks for, whatever its `min_valid`.
    package static func key(for request: AgentTokenRequest) -> String {
        var request = request
        request.minValid = 0
        return AgentRequest.token(request).line
    }

    /// The token kept for `request` when the files of its marker are still as they were and it stays valid for the
    /// request's `min_valid` after `now`; nil otherwise (then the store is read).
    package func token(for request: AgentTokenRequest, now: Date) -> AgentToken? {
        let key = Self.key(for: request)
        guard let found = kept.withLock({ $0[key] }) else { return nil }
        guard found.token.expirationDate.timeIntervalSince(now) >= TimeInterval(request.minValid),
            Marker.of(found.marker.paths) == found.marker
        else {
            kept.withLock { if $0[key]?.marker == found.marker { $0[key] = nil } }
            return nil
        }
        return found.token
    }

    /// Keeps `token`, the answer to `request` read from files that looked like `marker` before they were read.
    package func keep(_ token: AgentToken, for request: AgentTokenRequest, marker: Marker) {
        let key = Self.key(for: request)
        kept.withLock { kept in
            if kept[key] == nil && kept.count >= capacity { kept.removeAll() }
            kept[key] = Kept(token: token, marker: marker)
        }
    }

    /// The files whose marker goes with every token (the store's): found by `find` once, at the first request it
    /// finds them; empty while it finds none (then nothing is kept).
    package func watchedPaths(_ find: () -> [String]?) -> [String] {
        if let found = paths.withLock({ $0 }) { return found }
        guard let found = find() else { return [] }
        paths.withLock { $0 = found }
        return found
    }

    /// How many tokens are kept.
    package var count: Int { kept.withLock { $0.count } }
}
