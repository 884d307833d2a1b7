import ArgumentParser
import PortalAuth

/// The exit statuses of `portal-auth`, from `sysexits.h`, one per error category.
enum ExitStatus {
    /// The status for a failure of `category`.
    static func code(for category: ErrorCategory) -> Int32 {
        switch category {
        case .usage: return 64  // EX_USAGE
        case .invalidContent: return 65  // EX_DATAERR
        case .unreadableInput: return 66  // EX_NOINPUT
        case .unavailable: return 69  // EX_UNAVAILABLE
        case .local: return 70  // EX_SOFTWARE
        case .timedOut: return 75  // EX_TEMPFAIL
        case .refused: return 77  // EX_NOPERM
        case .cancelled: return 130  // 128 + SIGINT
        }
    }

    /// A question answered no (`iap check --url` that the configuration does not cover, `sign-out` declined), as
    /// `grep` and `test` answer it: no error happened.
    static let no: Int32 = 1

    /// `request --fail`: an HTTP status of 400 or more (curl's `--fail` status, so that scripts moving from curl
    /// keep their test), or an ArcGIS error envelope in a success status.
    static let httpError: Int32 = 22

    /// The `ExitCode` to throw from a command for a failure of `category`.
    static func exitCode(for category: ErrorCategory) -> ExitCode {
        ExitCode(code(for: category))
    }
}
