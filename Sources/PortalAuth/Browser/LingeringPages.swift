import Glibc
import Synchronization

/// The launch pages not yet removed, deleted when the process exits normally (`exit`, the end of `main`), so that
/// none outlives the process that wrote it even when its owner never called `remove()`.
final class LingeringPages: Sendable {
    /// The one registry of the process.
    static let shared = LingeringPages()

    private let paths = Mutex<Set<String>>([])

    private init() {
        atexit { LingeringPages.shared.removeAll() }
    }

    func add(_ path: String) {
        paths.withLock { _ = $0.insert(path) }
    }

    func remove(_ path: String) {
        paths.withLock { _ = $0.remove(path) }
    }

    /// Deletes every page still registered.
    func removeAll() {
        let left = paths.withLock { current in
            defer { current.removeAll() }
            return current
        }
        for path in left { unlink(path) }
    }
}
