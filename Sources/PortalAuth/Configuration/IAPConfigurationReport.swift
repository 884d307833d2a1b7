package import Foundation

/// Everything found while loading an IAP configuration file: the configuration when it is valid, every
/// error, and every warning, so that a tool can show them all at once.
package struct IAPConfigurationReport: Sendable {
    /// The file that was checked.
    package let file: URL
    /// The configuration, when the file is valid.
    package let configuration: IAPConfiguration?
    /// The error `IAPConfiguration.configuration(from:)` throws for this file, or `nil` when it is valid.
    package let error: ConfigurationError?
    /// Things worth knowing that do not prevent loading: unknown keys (with the nearest known key) and a
    /// redirect URL that cannot receive a loopback redirect on this platform.
    package let warnings: [ConfigurationIssue]

    /// Whether the file holds a valid configuration.
    package var isValid: Bool { configuration != nil }

    /// Every problem that prevents loading, in document order; empty when the file is valid.
    package var errors: [ConfigurationIssue] { error?.issues ?? [] }

    /// Creates a report.
    init(file: URL, configuration: IAPConfiguration?, error: ConfigurationError?, warnings: [ConfigurationIssue]) {
        self.file = file
        self.configuration = configuration
        self.error = error
        self.warnings = warnings
    }

    /// A report of a file that could not be read or parsed.
    init(file: URL, error: ConfigurationError) {
        self.init(file: file, configuration: nil, error: error, warnings: [])
    }
}
