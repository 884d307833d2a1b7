public import Foundation
public import PortalAuthCore

/// A configuration that cannot be used: a file that cannot be read or parsed, or content that breaks
/// the rules. It lists every problem found, not only the first.
///
/// Match on ``kind`` to react to a particular failure. The ``description`` names the file and says what to do, with
/// each problem on a line of its own: its key and, for files, its line and column.
public struct ConfigurationError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    // MARK: - Kinds

    /// Which failure this is, comparable without the details.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The URL given is not a `file:` URL; only local files can be loaded.
        public static let notAFileURL = Kind("notAFileURL")
        /// The file does not exist.
        public static let fileNotFound = Kind("fileNotFound")
        /// The path names a directory.
        public static let isDirectory = Kind("isDirectory")
        /// The file exists but cannot be read (permissions, I/O error).
        public static let unreadable = Kind("unreadable")
        /// The file is empty or holds only white space.
        public static let empty = Kind("empty")
        /// The file is larger than ``ConfigurationError/maximumFileSize``.
        public static let tooLarge = Kind("tooLarge")
        /// The file is not UTF-8 text.
        public static let notUTF8 = Kind("notUTF8")
        /// The file is not well-formed JSON (duplicate keys included).
        public static let syntax = Kind("syntax")
        /// The content is JSON but breaks one or more rules; the description lists each.
        public static let invalidConfiguration = Kind("invalidConfiguration")
        /// Another user than this one (or root) owns or can write the file, or a folder it is reached through: it
        /// could say where the tokens go, so it is not used. The description names what was found and the `chmod`
        /// or `chown` that fixes it.
        public static let untrustedFile = Kind("untrustedFile")

        /// The kind's name, e.g. `fileNotFound`.
        public var description: String { name }
    }

    /// The largest configuration file that is read: 1 MiB.
    public static let maximumFileSize = 1 << 20

    // MARK: - Storage

    private enum Code: Hashable {
        case notAFileURL
        case fileNotFound
        case isDirectory
        case unreadable(reason: String)
        case empty
        case tooLarge(size: Int)
        case notUTF8(offset: Int, byte: UInt8)
        case syntax
        case invalidConfiguration
        case untrustedFile
    }

    private let code: Code

    /// The file the configuration was read from; `nil` for a configuration built in code.
    public let file: URL?

    /// Every problem found; never empty. File-level failures carry one issue without a key.
    package let issues: [ConfigurationIssue]

    private init(_ code: Code, file: URL?, issues: [ConfigurationIssue]) {
        self.code = code
        self.file = file
        self.issues = issues
    }

    // MARK: - Classification

    /// Which failure this is.
    public var kind: Kind {
        switch code {
        case .notAFileURL: return .notAFileURL
        case .fileNotFound: return .fileNotFound
        case .isDirectory: return .isDirectory
        case .unreadable: return .unreadable
        case .empty: return .empty
        case .tooLarge: return .tooLarge
        case .notUTF8: return .notUTF8
        case .syntax: return .syntax
        case .invalidConfiguration: return .invalidConfiguration
        case .untrustedFile: return .untrustedFile
        }
    }

    /// `.unreadableInput` when the file cannot be read or is not trusted (``Kind/untrustedFile``), `.usage` for a URL
    /// that is not a file, `.invalidContent` for everything about its content.
    public var category: ErrorCategory {
        switch code {
        case .notAFileURL: return .usage
        case .fileNotFound, .isDirectory, .unreadable, .untrustedFile: return .unreadableInput
        case .empty, .tooLarge, .notUTF8, .syntax, .invalidConfiguration: return .invalidContent
        }
    }

    /// What happened, to which file, and what to do; one line per problem.
    public var description: String {
        let subject = file.map { "configuration file \(DisplayText.path($0.path))" } ?? "configuration"
        switch code {
        case .invalidConfiguration:
            guard !issues.isEmpty else { return "\(subject) is invalid" }
            let count = issues.count == 1 ? "1 problem" : "\(issues.count) problems"
            return (["\(subject) is invalid (\(count)):"] + issues.map { "  \($0)" }).joined(separator: "\n")
        case .notAFileURL:
            return issues.map(\.description).joined(separator: "\n")
        default:
            return issues.map { "\(subject): \($0)" }.joined(separator: "\n")
        }
    }

    // MARK: - Factories

    static func notAFileURL(_ url: URL) -> ConfigurationError {
        ConfigurationError(
            .notAFileURL, file: nil,
            issues: [
                ConfigurationIssue(
                    message:
                        "\(url.absoluteString) is not a file URL; configurations are loaded from local files only (use URL(fileURLWithPath:))"
                )
            ])
    }

    static func fileNotFound(_ file: URL) -> ConfigurationError {
        ConfigurationError(
            .fileNotFound, file: file,
            issues: [
                ConfigurationIssue(
                    message:
                        "the file does not exist; check the path (a relative path is resolved from the current directory)"
                )
            ])
    }

    static func isDirectory(_ file: URL) -> ConfigurationError {
        ConfigurationError(
            .isDirectory, file: file,
            issues: [
                ConfigurationIssue(
                    message: "this is a directory; give the path of the JSON configuration file itself")
            ])
    }

    static func unreadable(_ file: URL, reason: String) -> ConfigurationError {
        ConfigurationError(
            .unreadable(reason: reason), file: file,
            issues: [
                ConfigurationIssue(
                    message:
                        "the file cannot be read\(MessagePart.given(" (", reason, ")")); check that it is readable "
                        + "by this user")
            ])
    }

    static func untrusted(_ file: URL, _ problem: PathProblem) -> ConfigurationError {
        ConfigurationError(
            .untrustedFile, file: file,
            issues: [
                ConfigurationIssue(
                    message:
                        "not used, since it decides where tokens go and another user could change it: "
                        + problem.message(showingPaths: DisplayText.path)
                )
            ])
    }

    static func empty(_ file: URL) -> ConfigurationError {
        ConfigurationError(
            .empty, file: file,
            issues: [
                ConfigurationIssue(
                    message:
                        "the file is empty; it must hold a JSON object with the keys \(IAPConfigurationKey.requiredKeyList)"
                )
            ])
    }

    static func tooLarge(_ file: URL, size: Int) -> ConfigurationError {
        ConfigurationError(
            .tooLarge(size: size), file: file,
            issues: [
                ConfigurationIssue(
                    message:
                        "the file is larger than \(maximumFileSize) bytes (1 MiB), the limit for a configuration file; check that this is the right file"
                )
            ])
    }

    static func notUTF8(_ file: URL, offset: Int, byte: UInt8, line: Int, column: Int) -> ConfigurationError {
        let hex = "0x" + String(byte, radix: 16, uppercase: true)
        return ConfigurationError(
            .notUTF8(offset: offset, byte: byte), file: file,
            issues: [
                ConfigurationIssue(
                    message:
                        "the file is not UTF-8 text: byte \(hex) at byte offset \(offset) is invalid; save the file as UTF-8",
                    line: line, column: column)
            ])
    }

    static func syntax(_ file: URL?, _ error: JSONSyntaxError) -> ConfigurationError {
        var message = "JSON syntax error" + MessagePart.given(": ", error.message)
        if error.message.localizedCaseInsensitiveContains("duplicate") {
            message += "; each key may appear only once"
        }
        return ConfigurationError(
            .syntax, file: file,
            issues: [
                ConfigurationIssue(
                    message: message, line: error.line > 0 ? error.line : nil,
                    column: error.line > 0 ? error.column : nil)
            ])
    }

    static func invalid(_ file: URL?, issues: [ConfigurationIssue]) -> ConfigurationError {
        ConfigurationError(.invalidConfiguration, file: file, issues: issues)
    }
}
