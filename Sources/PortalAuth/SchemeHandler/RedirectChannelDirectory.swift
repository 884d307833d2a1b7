import Foundation
import Glibc
import PortalAuthCore

/// The folder of the sign-in channels: `$XDG_RUNTIME_DIR/portal-auth`, owned by this user, mode 0700.
///
/// Each waiting sign-in listens on a socket of its own there; the scheme handler offers the address to each.
/// `XDG_RUNTIME_DIR` is the per-user folder the session manager creates (0700, on tmpfs, removed at logout).
enum RedirectChannelDirectory {
    /// The folder's name inside `XDG_RUNTIME_DIR`.
    static let name = "portal-auth"

    /// The folder for `environment`, without creating it; nil when `XDG_RUNTIME_DIR` is unset or relative.
    static func path(environment: [String: String]) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return (runtime as NSString).appendingPathComponent(name)
    }

    /// The folder, created 0700 when missing; an existing one must belong to this user and is made 0700.
    static func prepare(environment: [String: String]) throws(SchemeRedirectError) -> String {
        guard let path = path(environment: environment) else {
            throw SchemeRedirectError(
                .runtimeDirectory,
                "XDG_RUNTIME_DIR is not set (or not an absolute path), so there is no private folder for the sign-in channel; "
                    + "sign in from a desktop session, or use a loopback redirect URL such as http://127.0.0.1/callback."
            )
        }
        // Every component is created and opened without following a link another user could have planted, its
        // owner and mode checked (`SafePath`).
        do {
            try SafePath.makeFolder(path, mode: 0o700, private: true)
        } catch {
            throw SchemeRedirectError(.runtimeDirectory, Self.refusal(path, error))
        }
        try check(path, fixingMode: true)
        return path
    }

    /// The message for a folder `SafePath` refuses.
    private static func refusal(_ path: String, _ problem: PathProblem) -> String {
        "cannot use \(DisplayText.path(path)): \(problem.message(showingPaths: DisplayText.path)); check XDG_RUNTIME_DIR."
    }

    /// Checks that `path` is a real folder (not a link) owned by this user with mode 0700.
    static func check(_ path: String, fixingMode: Bool) throws(SchemeRedirectError) {
        do {
            _ = try SafePath.checkFolder(path, private: false)
        } catch {
            throw SchemeRedirectError(.runtimeDirectory, Self.refusal(path, error))
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw SchemeRedirectError(.runtimeDirectory, "cannot read \(path): \(String(cString: strerror(errno))).")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw SchemeRedirectError(.runtimeDirectory, "\(path) is not a folder; remove it and sign in again.")
        }
        guard info.st_uid == getuid() else {
            throw SchemeRedirectError(
                .runtimeDirectory,
                "\(path) belongs to user \(info.st_uid), not to you (\(getuid())); it cannot be trusted with a sign-in. Check XDG_RUNTIME_DIR."
            )
        }
        if info.st_mode & 0o777 != 0o700 {
            guard fixingMode, chmod(path, 0o700) == 0 else {
                throw SchemeRedirectError(
                    .runtimeDirectory,
                    "\(path) has mode \(String(info.st_mode & 0o777, radix: 8)), not 700; run chmod 700 \(path).")
            }
        }
    }
}
