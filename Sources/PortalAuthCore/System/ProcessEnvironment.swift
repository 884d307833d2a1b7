import Glibc

/// Some of this process's environment variables, read with `getenv`.
///
/// `ProcessInfo.processInfo.environment` copies every variable into a dictionary, which is a measurable part of
/// a `portal-auth token` run; code that reads a few known variables takes only those. Package API (the tool reads
/// the store's variables with it), usable from inline code for `SignInEnvironment.current()`'s default argument.
@usableFromInline
package enum ProcessEnvironment {
    /// The variables among `names` that are set, by name.
    @usableFromInline
    package static func values(of names: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in names {
            if let value = value(of: name) { values[name] = value }
        }
        return values
    }

    /// The variable `name`, or nil when it is not set. Lookups through this function need no dictionary: the
    /// first `[String: String]` a process makes costs it a scan of every protocol conformance in the binary,
    /// which `portal-auth token` avoids (issue 17).
    package static func value(of name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
