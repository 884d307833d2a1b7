public import Foundation
import PortalAuthCore

extension IAPConfiguration {
    // MARK: - Loading a file

    /// Loads a configuration from a JSON file.
    ///
    /// The file is a JSON object with the keys `authorize_url`, `token_url`, `logout_url`, `client_id`,
    /// `redirect_url`, `scope` (an array) and `hosts_behind_proxy` (an array), and optionally
    /// `authorization_prompt_type`. Duplicate keys, a file over 1 MiB and text that is not UTF-8 are rejected;
    /// a UTF-8 byte-order mark is ignored.
    ///
    /// - Parameter url: A `file:` URL.
    /// - Returns: The configuration, with ``sourceFile`` set to `url`.
    /// - Throws: ``ConfigurationError`` saying why the file cannot be read or listing every problem in it.
    ///   Unknown keys do not fail loading; `portal-auth iap check` lists them.
    public static func configuration(from url: URL) async throws(ConfigurationError) -> IAPConfiguration {
        let report = await report(from: url)
        if let error = report.error { throw error }
        guard let configuration = report.configuration else { throw .invalid(url, issues: report.errors) }
        return configuration
    }

    /// Checks a configuration file without throwing: the configuration when valid, every error and every
    /// warning (unknown keys, a redirect URL unusable on this platform), with lines and columns.
    ///
    /// - Parameter url: A `file:` URL.
    package static func report(from url: URL) async -> IAPConfigurationReport {
        guard url.isFileURL else { return IAPConfigurationReport(file: url, error: .notAFileURL(url)) }
        do {
            let data = try await ConfigurationFileReader.read(url)
            return report(parsing: data, file: url)
        } catch {
            return IAPConfigurationReport(file: url, error: error)
        }
    }

    // MARK: - Checking bytes

    /// Checks the bytes of a configuration file; `file` names it in messages and becomes ``sourceFile``.
    package static func report(parsing data: Data, file: URL) -> IAPConfigurationReport {
        guard data.count <= ConfigurationError.maximumFileSize else {
            return IAPConfigurationReport(file: file, error: .tooLarge(file, size: data.count))
        }
        let text = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data
        guard text.contains(where: { !Self.isJSONWhitespace($0) }) else {
            return IAPConfigurationReport(file: file, error: .empty(file))
        }
        if let invalid = Self.firstInvalidUTF8(in: text) {
            return IAPConfigurationReport(
                file: file,
                error: .notUTF8(
                    file, offset: invalid.offset + (data.count - text.count), byte: invalid.byte, line: invalid.line,
                    column: invalid.column))
        }
        let root: JSONValue
        do {
            root = try JSONValue.parse(Data(text))
        } catch {
            return IAPConfigurationReport(file: file, error: .syntax(file, error))
        }

        let decoder = IAPConfigurationDecoder(root, sourceFile: file)
        let locator = JSONKeyLocator(scanning: Data(text))
        let place = { (issue: ConfigurationIssue) -> ConfigurationIssue in
            let location = locator.location(of: issue.key ?? "")
            return issue.located(line: location?.line, column: location?.column)
        }
        let errors = Self.inDocumentOrder(decoder.errors.map(place))
        let warnings = Self.inDocumentOrder(decoder.warnings.map(place))
        let error = errors.isEmpty ? nil : ConfigurationError.invalid(file, issues: errors)
        return IAPConfigurationReport(
            file: file, configuration: decoder.configuration, error: error, warnings: warnings)
    }

    // MARK: - Helpers

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The first byte that is not valid UTF-8: its offset, value, and the line and column it stands at.
    private static func firstInvalidUTF8(in data: Data) -> (offset: Int, byte: UInt8, line: Int, column: Int)? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = data.makeIterator()
        var offset = 0
        var line = 1
        var column = 1
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1, encoded.first == 0x0A {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                offset += encoded.count
            case .error:
                let byte = data[data.index(data.startIndex, offsetBy: offset)]
                return (offset, byte, line, column)
            case .emptyInput:
                return nil
            }
        }
    }

    /// Issues sorted by line and column, those without a position last, otherwise in their found order.
    private static func inDocumentOrder(_ issues: [ConfigurationIssue]) -> [ConfigurationIssue] {
        issues.enumerated().sorted { lhs, rhs in
            let left = (lhs.element.line ?? .max, lhs.element.column ?? .max, lhs.offset)
            let right = (rhs.element.line ?? .max, rhs.element.column ?? .max, rhs.offset)
            return left < right
        }.map(\.element)
    }
}
