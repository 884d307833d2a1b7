/// Where the credential store lives, and why there.
///
/// Resolution, first match wins:
/// 1. an explicit path (the tool's `--store PATH`);
/// 2. `PORTAL_AUTH_STORE` (a file path);
/// 3. `$XDG_STATE_HOME/portal-auth/credentials.json` when `XDG_STATE_HOME` is an absolute path
///    (the XDG base-directory spec says relative values are to be ignored);
/// 4. `$HOME/.local/state/portal-auth/credentials.json`.
///
/// Empty variables count as unset. Relative paths from 1 and 2 are taken against the current directory.
package struct StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// Which rule chose the path (for `status` and messages).
    public enum Source: String, Sendable, Equatable {
        /// Given explicitly by the caller.
        case explicit
        /// `PORTAL_AUTH_STORE`.
        case environment
        /// `XDG_STATE_HOME`.
        case xdgStateHome
        /// `HOME`'s default state directory.
        case home
    }

    /// The environment variable that overrides the store path.
    public static let environmentVariable = "PORTAL_AUTH_STORE"
    /// The file name inside the state directory.
    public static let fileName = "credentials.json"
    /// The directory name inside the XDG state directory.
    public static let directoryName = "portal-auth"

    /// The absolute path of the store file.
    public let path: String
    /// Which rule chose it.
    public let source: Source

    /// A location at `path`, made absolute against `currentDirectory` (default: the process's) when relative.
    public init(path: String, source: Source = .explicit, currentDirectory: String? = nil) {
        self.path = normalizedAbsolutePath(path, relativeTo: currentDirectory ?? StoreFileSystem.currentDirectory())
        self.source = source
    }

    /// The environment variables `resolve` reads, for callers that pass only those (copying the whole
    /// environment into a dictionary is a measurable part of `portal-auth token`).
    package static let environmentNames = [environmentVariable, "XDG_STATE_HOME", "HOME"]

    /// Resolves the store location from an explicit path and the environment (see the type's documentation).
    ///
    /// - Throws: a store error (a `CategorizedError`) of kind `noLocation` when nothing names a location.
    public static func resolve(
        explicitPath: String? = nil,
        environment: [String: String],
        currentDirectory: String? = nil
    ) throws(CredentialStoreError) -> StoreLocation {
        try resolve(explicitPath: explicitPath, lookup: { environment[$0] }, currentDirectory: currentDirectory)
    }

    /// ``resolve(explicitPath:environment:currentDirectory:)`` reading each variable through `lookup` (for example
    /// ``ProcessEnvironment/value(of:)``) instead of from a dictionary.
    package static func resolve(
        explicitPath: String? = nil,
        lookup: (String) -> String?,
        currentDirectory: String? = nil
    ) throws(CredentialStoreError) -> StoreLocation {
        func value(_ name: String) -> String? {
            guard let value = lookup(name), !value.isEmpty else { return nil }
            return value
        }
        if let explicitPath, !explicitPath.isEmpty {
            return StoreLocation(path: explicitPath, source: .explicit, currentDirectory: currentDirectory)
        }
        if let path = value(environmentVariable) {
            return StoreLocation(path: path, source: .environment, currentDirectory: currentDirectory)
        }
        if let state = value("XDG_STATE_HOME"), state.hasPrefix("/") {
            return StoreLocation(path: "\(state)/\(directoryName)/\(fileName)", source: .xdgStateHome)
        }
        if let home = value("HOME"), home.hasPrefix("/") {
            return StoreLocation(path: "\(home)/.local/state/\(directoryName)/\(fileName)", source: .home)
        }
        throw .noLocation()
    }

    /// The folder of apps' own stores inside the default store's folder: `…/portal-auth/apps/<app>/credentials.json`.
    package static let appsDirectoryName = "apps"

    /// The location of the own store of the app `identifier` (already checked to be a plain file name):
    /// `$XDG_STATE_HOME/portal-auth/apps/<identifier>/credentials.json`, else under `$HOME/.local/state`.
    /// `PORTAL_AUTH_STORE` (the shared store's) is not read.
    ///
    /// - Throws: `CredentialStoreError` of kind `noLocation` when neither variable names a location.
    package static func appStore(identifier: String, lookup: (String) -> String?) throws(CredentialStoreError)
        -> StoreLocation
    {
        let shared = try resolve(lookup: { $0 == environmentVariable ? nil : lookup($0) })
        return StoreLocation(
            path: "\(shared.directory)/\(appsDirectoryName)/\(identifier)/\(fileName)", source: shared.source)
    }

    // MARK: - Derived paths

    /// The directory holding the store, its lock file and its temporary files.
    public var directory: String { StoreFileSystem.parentDirectory(of: path) }

    /// The lock file beside the store (`<store>.lock`); it is never deleted.
    public var lockPath: String { path + ".lock" }

    public var description: String { path }
}

// MARK: - Path helpers

/// `path` made absolute against `base`, with `.` components and repeated slashes removed.
///
/// `..` is kept: removing it lexically would be wrong when the part before it is a symbolic link.
func normalizedAbsolutePath(_ path: String, relativeTo base: String) -> String {
    let joined = path.hasPrefix("/") ? path : base + "/" + path
    // Appended one by one, each part made a String first: `joined(separator:)` and `append(contentsOf:)` with
    // substrings run unspecialized and look up conformances at run time, a twentieth of `portal-auth token`
    // (issue 17).
    var normalized = ""
    for part in joined.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
        normalized.append("/")
        normalized.append(String(part))
    }
    return normalized.isEmpty ? "/" : normalized
}
