import Glibc
import Synchronization

/// The launch pages not yet removed, deleted when the process exits normally (`exit`, the end of `main`), so that
/// none outlives the process that wrote it even when its owner never called `remove()`.
final class LingeringPages: Sendable {
    /// The one registry of the process.
    static let shared = LingeringPages()

    private let paths = Mutex<Set<String>>([])
    /// Pages nobody holds (opened with `open`, which returns none): kept until the process exits.
    private let kept = Mutex<[BrowserLaunchPage]>([])

    private init() {
        atexit { LingeringPages.shared.removeAll() }
    }

    func add(_ path: String) {
        paths.withLock { _ = $0.insert(path) }
    }

    /// Keeps `page` (and so its file) until the process exits.
    func keep(_ page: BrowserLaunchPage) {
        kept.withLock { $0.append(page) }
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
