import Foundation
package import PortalAuthCore
/// A failure of the persistent credential store: where it happened and what to do next.
///
/// Messages name the file or directory concerned and the fix; they never contain entry contents
/// (the entries hold tokens), and parser messages are cut before any quoted text of the file.
///
/// Categories:
/// - a corrupted store or one of an unsupported version is ``ErrorCategory/invalidContent`` (exit 65: its
///   content cannot be used);
/// - unsafe permissions, a store that is not a regular file, no home directory, and file-system failures are
///   ``ErrorCategory/local`` (the user's machine needs fixing, not the data);
/// - waiting too long for the lock is ``ErrorCategory/timedOut``; cancellation while waiting is
///   ``ErrorCategory/cancelled``.
package struct CredentialStoreError: CategorizedError, CustomStringConvertible, Sendable, Equatable {
    // MARK: - Kind

    /// What went wrong, for callers that react to it; compare with `==`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case noLocation, unsafePermissions, notRegularFile, corrupted, unsupportedVersion, lockTimeout, cancelled,
                fileSystem
        }

        fileprivate let base: Base

        /// No store path could be derived: neither `HOME` nor another location is set.
        public static let noLocation = Kind(base: .noLocation)
        /// The store, its directory or its lock file is owned by another user or open to other users.
        public static let unsafePermissions = Kind(base: .unsafePermissions)
        /// The store path names something other than a regular file (a directory, a symbolic link, …).
        public static let notRegularFile = Kind(base: .notRegularFile)
        /// The store file is not well-formed JSON or not a credential store.
        public static let corrupted = Kind(base: .corrupted)
        /// The store was written by a newer version of the tool.
        public static let unsupportedVersion = Kind(base: .unsupportedVersion)
        /// Another process held the lock for longer than the lock timeout.
        public static let lockTimeout = Kind(base: .lockTimeout)
        /// The task was cancelled while waiting for the lock.
        public static let cancelled = Kind(base: .cancelled)
        /// A system call on the store failed (disk full, read-only file system, …).
        public static let fileSystem = Kind(base: .fileSystem)

        public var description: String { base.rawValue }
    }

    // MARK: - Code

    private enum Code: Equatable, Sendable {
        case noLocation
        case unsafeFile(mode: UInt32, ownedByOther: Bool)
        case unsafeDirectory(mode: UInt32, ownedByOther: Bool)
        case unsafePath(PathProblem)
        case notRegularFile
        case corrupted(reason: String)
        case unsupportedVersion(found: Int64)
        case lockTimeout(seconds: Double, holder: String?)
        case cancelled
        case fileSystem(action: String, failure: SystemError)
    }

    private let code: Code

    /// The file or directory concerned (the lock file for lock errors, the directory for directory problems).
    public let path: String

    /// Where jansson found the problem, when the store is not well-formed JSON.
    public let syntaxError: JSONSyntaxError?

    private init(_ code: Code, path: String, syntaxError: JSONSyntaxError? = nil) {
        self.code = code
        self.path = path
        self.syntaxError = syntaxError
    }

    // MARK: - Public view

    /// What went wrong.
    public var kind: Kind {
        switch code {
        case .noLocation: return .noLocation
        case .unsafeFile, .unsafeDirectory, .unsafePath: return .unsafePermissions
        case .notRegularFile: return .notRegularFile
        case .corrupted: return .corrupted
        case .unsupportedVersion: return .unsupportedVersion
        case .lockTimeout: return .lockTimeout
        case .cancelled: return .cancelled
        case .fileSystem: return .fileSystem
        }
    }

    public var category: ErrorCategory {
        switch code {
        case .corrupted, .unsupportedVersion: return .invalidContent
        case .lockTimeout: return .timedOut
        case .cancelled: return .cancelled
        case .noLocation, .unsafeFile, .unsafeDirectory, .unsafePath, .notRegularFile, .fileSystem: return .local
        }
    }

    public var description: String {
        // A hostile file name must neither drive the terminal nor forge a line. An empty path (no error is made
        // with one but `noLocation`'s) leaves its words out, and its commands take a placeholder.
        let path = self.path.isEmpty ? "FILE" : DisplayText.path(self.path)
        let named = MessagePart.given(" ", DisplayText.path(self.path))
        switch code {
        case .noLocation:
            return "Cannot tell where to keep credentials: HOME is not set. "
                + "Set HOME, XDG_STATE_HOME or PORTAL_AUTH_STORE, or give the store a path (PORTAL_AUTH_STORE=PATH)."
        case .unsafeFile(let mode, let ownedByOther):
            if ownedByOther {
                return "Refusing to use the credential store\(named): it is owned by another user. "
                    + "Remove it or choose another store (PORTAL_AUTH_STORE)."
            }
            return "Refusing to use the credential store\(named): other users can access it (mode \(octal(mode))). "
                + "Run `chmod 600 \(path)`; if others may have read it, sign in again to replace its tokens."
        case .unsafeDirectory(let mode, let ownedByOther):
            if ownedByOther {
                return
                    "Refusing to keep credentials in\(MessagePart.or(named, " its directory")): the directory is owned by "
                    + "another user. "
                    + "Choose another store (PORTAL_AUTH_STORE)."
            }
            return
                "Refusing to keep credentials in\(MessagePart.or(named, " its directory")): other users can write to the "
                + "directory "
                + "(mode \(octal(mode))). Run `chmod 700 \(path)` or choose another store (PORTAL_AUTH_STORE)."
        case .unsafePath(let problem):
            return "Refusing to keep credentials in\(MessagePart.or(named, " its directory")): "
                + "\(problem.message(showingPaths: DisplayText.path)). "
                + "Or choose another store (PORTAL_AUTH_STORE)."
        case .notRegularFile:
            return
                "Refusing to use the credential store\(named): it is not a regular file (a directory or a symbolic link?). "
                + "Point the store (PORTAL_AUTH_STORE) at a file."
        case .corrupted(let reason):
            return "The credential store\(named) is corrupted" + MessagePart.given(" (", reason, ")")
                + " and was left unchanged. "
                + "To start over, move it aside (`mv \(path) \(path).bak`) and sign in again."
        case .unsupportedVersion(let found):
            return "The credential store\(named) has format version \(found), newer than this portal-auth reads "
                + "(\(StoreDocument.currentVersion)); it was left unchanged. Use a newer PortalAuth, or another store (PORTAL_AUTH_STORE)."
        case .lockTimeout(let seconds, let holder):
            let who = "held by " + MessagePart.or(holder, "another process")
            return
                "Timed out after \(formatSeconds(seconds)) waiting for the lock\(MessagePart.or(named, " of the store")), \(who). "
                + "Wait for it to finish and try again; if it is stuck, end it. Do not delete the lock file."
        case .cancelled:
            return "Cancelled while waiting for the lock\(MessagePart.or(named, " of the store"))."
        case .fileSystem(let action, let failure):
            return
                "Cannot \(MessagePart.or(action, "use")) \(MessagePart.or(DisplayText.path(self.path), "the credential store")): \(failure)."
        }
    }

    /// Why the store is corrupted (position and parser message, or the shape problem), for a `corrupted` error.
    var corruptionReason: String? {
        if case .corrupted(let reason) = code { return reason }
        return nil
    }

    public static func == (lhs: CredentialStoreError, rhs: CredentialStoreError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.syntaxError == rhs.syntaxError
    }

    // MARK: - Factories (internal)

    static func noLocation() -> Self { Self(.noLocation, path: "") }

    static func unsafeFile(_ path: String, mode: UInt32, ownedByOther: Bool) -> Self {
        Self(.unsafeFile(mode: mode & 0o7777, ownedByOther: ownedByOther), path: path)
    }

    static func unsafeDirectory(_ path: String, mode: UInt32, ownedByOther: Bool) -> Self {
        Self(.unsafeDirectory(mode: mode & 0o7777, ownedByOther: ownedByOther), path: path)
    }

    /// A folder on the way to the store's directory `path` that another user owns or can write (`SafePath`).
    static func unsafePath(_ path: String, _ problem: PathProblem) -> Self { Self(.unsafePath(problem), path: path) }

    static func notRegularFile(_ path: String) -> Self { Self(.notRegularFile, path: path) }

    /// A store that is not JSON: the position and jansson's message, cut before any quoted file text.
    package static func corrupted(_ path: String, syntax: JSONSyntaxError) -> Self {
        let safe = JSONSyntaxError(
            line: syntax.line, column: syntax.column, position: syntax.position,
            message: redactedParserMessage(syntax.message))
        return Self(.corrupted(reason: safe.description), path: path, syntaxError: safe)
    }

    /// A store that is JSON but has the wrong shape; `reason` must not contain entry contents.
    package static func corrupted(_ path: String, reason: String) -> Self {
        Self(.corrupted(reason: reason), path: path)
    }

    package static func unsupportedVersion(_ path: String, found: Int64) -> Self {
        Self(.unsupportedVersion(found: found), path: path)
    }

    static func lockTimeout(_ lockPath: String, after timeout: Duration, holder: String?) -> Self {
        let parts = timeout.components
        return Self(
            .lockTimeout(seconds: Double(parts.seconds) + Double(parts.attoseconds) / 1e18, holder: holder),
            path: lockPath)
    }

    package static func cancelled(_ lockPath: String) -> Self { Self(.cancelled, path: lockPath) }

    package static func fileSystem(_ action: String, _ path: String, _ failure: SystemError) -> Self {
        Self(.fileSystem(action: action, failure: failure), path: path)
    }
}

// MARK: - Formatting helpers

/// jansson appends ` near '<text>'` quoting the file; that text may be part of a token, so it is dropped.
private func redactedParserMessage(_ message: String) -> String {
    guard let range = message.range(of: " near '") else { return message }
    return String(message[..<range.lowerBound])
}

private func octal(_ mode: UInt32) -> String {
    let digits = String(mode & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

private func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\((seconds * 10).rounded() / 10) s"
}
