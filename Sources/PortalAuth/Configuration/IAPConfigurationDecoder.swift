import Foundation
import PortalAuthCore

/// Reads an IAP configuration out of parsed JSON, collecting every problem instead of stopping at the first.
///
/// Issues carry their key path; the caller places them in the file.
struct IAPConfigurationDecoder {
    /// The configuration, when there are no errors.
    private(set) var configuration: IAPConfiguration?
    /// Every problem that prevents loading.
    private(set) var errors: [ConfigurationIssue] = []
    /// Things worth knowing that do not prevent loading (unknown keys, a redirect unusable here).
    private(set) var warnings: [ConfigurationIssue] = []

    /// Decodes `root`.
    init(_ root: JSONValue, sourceFile: URL?) {
        guard let object = root.objectValue else {
            errors.append(
                ConfigurationIssue(
                    message:
                        "the configuration must be a JSON object with the keys \(IAPConfigurationKey.requiredKeyList), found \(Self.article(root.typeName))",
                    key: nil))
            return
        }
        let misspellings = checkUnknownKeys(object)

        var fields = IAPConfigurationFields()
        for key in IAPConfigurationKey.allCases {
            guard let value = object[key.rawValue] else {
                if key.isRequired { reportMissing(key, misspelling: misspellings[key.rawValue]) }
                continue
            }
            switch key {
            case .authorizeURL: fields.authorizeURL = url(value, key)
            case .tokenURL: fields.tokenURL = url(value, key)
            case .logoutURL: fields.logoutURL = url(value, key)
            case .redirectURL: fields.redirectURL = url(value, key)
            case .clientID: fields.clientID = string(value, key.rawValue)
            case .scope: fields.scopes = strings(value, key)
            case .hostsBehindProxy: fields.hostsBehindProxy = strings(value, key)
            case .authorizationPromptType: fields.authorizationPromptType = promptType(value)
            }
        }
        errors += fields.issues(naming: \.rawValue)
        if let redirect = fields.redirectURL, URLRules.redirectURLProblem(redirect) == nil,
            !URLRules.isLoopbackRedirect(redirect),
            CustomSchemeRedirect(redirect) == nil
        {
            warnings.append(
                ConfigurationIssue(
                    message:
                        "`redirect_url` \"\(redirect.absoluteString)\" is neither a loopback URL (http://127.0.0.1, http://[::1], http://localhost or a name under localhost, any port and path) nor a custom-scheme URL (my-app://auth); the file is valid, but portal-auth cannot receive the sign-in redirect with it on this platform",
                    key: IAPConfigurationKey.redirectURL.rawValue))
        }
        for case let (index, pattern?) in (fields.hostsBehindProxy ?? []).enumerated() {
            let key = "\(IAPConfigurationKey.hostsBehindProxy.rawValue)[\(index)]"
            if let warning = IAPConfigurationRules.hostPatternBreadthWarning(pattern) {
                warnings.append(ConfigurationIssue(message: "`\(key)` \(warning)", key: key))
            }
        }
        if errors.isEmpty { configuration = fields.configuration(sourceFile: sourceFile) }
    }

    // MARK: - Keys

    /// Warns about each unknown key; returns the known key each near miss probably meant.
    private mutating func checkUnknownKeys(_ object: JSONObject) -> [String: String] {
        let known = IAPConfigurationKey.allCases.map(\.rawValue)
        var meant: [String: String] = [:]
        var unknownCount = 0
        for key in object.keys where !known.contains(key) {
            unknownCount += 1
            guard unknownCount <= Self.maximumUnknownKeyWarnings else { continue }
            if let suggestion = KeySuggester.nearest(to: key, among: known) {
                if object[suggestion] == nil, meant[suggestion] == nil { meant[suggestion] = key }
                warnings.append(
                    ConfigurationIssue(
                        message: "unknown key `\(key)` is ignored; did you mean `\(suggestion)`?", key: key))
            } else {
                warnings.append(
                    ConfigurationIssue(
                        message: "unknown key `\(key)` is ignored; the known keys are \(known.joined(separator: ", "))",
                        key: key))
            }
        }
        if unknownCount > Self.maximumUnknownKeyWarnings {
            warnings.append(
                ConfigurationIssue(
                    message:
                        "\(unknownCount - Self.maximumUnknownKeyWarnings) more unknown keys are ignored (only the first \(Self.maximumUnknownKeyWarnings) are named)",
                    key: nil))
        }
        return meant
    }

    /// How many unknown keys are named one by one; the rest are counted in one warning.
    static let maximumUnknownKeyWarnings = 20

    private mutating func reportMissing(_ key: IAPConfigurationKey, misspelling: String?) {
        var message = "missing required key `\(key.rawValue)` (\(key.summary))"
        if let misspelling { message += "; is `\(misspelling)` a misspelling of it?" }
        errors.append(ConfigurationIssue(message: message, key: key.rawValue))
    }

    // MARK: - Values

    private mutating func string(_ value: JSONValue, _ key: String) -> String? {
        guard let text = value.stringValue else {
            errors.append(wrongType(key, expected: "a string", found: value))
            return nil
        }
        return text
    }

    private mutating func url(_ value: JSONValue, _ key: IAPConfigurationKey) -> URL? {
        guard let text = string(value, key.rawValue) else { return nil }
        guard let url = URLRules.url(from: text) else {
            errors.append(
                ConfigurationIssue(message: "`\(key.rawValue)` is not a valid URL: \"\(text)\"", key: key.rawValue))
            return nil
        }
        return url
    }

    private mutating func strings(_ value: JSONValue, _ key: IAPConfigurationKey) -> [String?]? {
        guard let elements = value.arrayValue else {
            errors.append(wrongType(key.rawValue, expected: "an array of strings", found: value))
            return nil
        }
        return elements.enumerated().map { index, element in
            string(element, "\(key.rawValue)[\(index)]")
        }
    }

    private mutating func promptType(_ value: JSONValue) -> IAPAuthorizationPromptType? {
        let key = IAPConfigurationKey.authorizationPromptType.rawValue
        guard let text = string(value, key) else { return nil }
        guard let type = IAPAuthorizationPromptType(rawValue: text) else {
            errors.append(
                ConfigurationIssue(
                    message:
                        "`\(key)` has the unknown value \"\(text)\"; allowed values: \(IAPAuthorizationPromptType.allowedValueList)",
                    key: key))
            return nil
        }
        return type
    }

    private func wrongType(_ key: String, expected: String, found: JSONValue) -> ConfigurationIssue {
        ConfigurationIssue(message: "`\(key)` must be \(expected), found \(Self.article(found.typeName))", key: key)
    }

    /// "an array", "a string", "null".
    private static func article(_ typeName: String) -> String {
        switch typeName {
        case "null": return "null"
        case "array", "object": return "an \(typeName)"
        default: return "a \(typeName)"
        }
    }
}
