package import Foundation
package import PortalAuthCore

/// Version 1 of the agent's protocol: one JSON object per line each way, a request, then its answer, in turn on
/// one connection (see the "Agent protocol" article of the documentation for every request and answer).
package enum AgentProtocol {
    /// The protocol version every request states as `"v"` and every answer carries.
    package static let version: Int64 = 1
    /// The longest request line the agent reads (newline excluded); a longer one is answered `too_long` and the
    /// connection closed.
    package static let maximumRequestBytes = 16 * 1024
    /// The longest answer line a client reads.
    package static let maximumAnswerBytes = 256 * 1024
    /// The most seconds `min_valid` may ask for (a year).
    package static let maximumMinValid: Int64 = 366 * 86_400
}

/// A token request: which sign-in, how long the token must stay valid, which of an IAP sign-in's tokens.
package struct AgentTokenRequest: Sendable, Equatable {
    /// Which stored sign-in (the selection of `portal-auth token`).
    package var selection: SignInQuery
    /// Seconds the token must stay valid (the tool's `--min-valid`).
    package var minValid: Int
    /// IAP: the ID token instead of the access token (`--id-token`).
    package var idToken: Bool
    /// IAP: the token the proxy wants (`--proxy-token`): nil for the sign-in's stored choice; given or not, a
    /// `url` selection of a host behind the proxy gets the token sent there.
    package var proxyToken: IAPTokenInfo.Token?
    /// The token the sign-in sends to what it covers (`"hosts": true`, what `exec` and `request` send): for an IAP
    /// sign-in, the token sent to the hosts behind the proxy, whatever the selection.
    package var forHosts: Bool

    package init(
        selection: SignInQuery, minValid: Int = 300, idToken: Bool = false, proxyToken: IAPTokenInfo.Token? = nil,
        forHosts: Bool = false
    ) {
        self.selection = selection
        self.minValid = minValid
        self.idToken = idToken
        self.proxyToken = proxyToken
        self.forHosts = forHosts
    }
}

/// One request line.
package enum AgentRequest: Sendable, Equatable {
    /// `"op": "token"`.
    case token(AgentTokenRequest)
    /// `"op": "status"`: the agent's version, process, sockets and counts.
    case status
    /// `"op": "stop"`: the agent answers, then stops.
    case stop

    /// The request as one JSON line (without the newline).
    package var line: String {
        var members: [(key: String, value: JSONValue)] = [("v", .integer(AgentProtocol.version))]
        switch self {
        case .status: members.append(("op", .string("status")))
        case .stop: members.append(("op", .string("stop")))
        case .token(let request):
            members.append(("op", .string("token")))
            switch request.selection {
            case .portal(let url, let clientID):
                members.append(("portal", .string(url.absoluteString)))
                if let clientID { members.append(("client_id", .string(clientID))) }
            case .iap(let file): members.append(("iap", .string(file.path)))
            case .url(let url): members.append(("url", .string(url.absoluteString)))
            case .name(let name): members.append(("name", .string(name)))
            case .automatic: break
            }
            members.append(("min_valid", .integer(Int64(request.minValid))))
            if request.idToken { members.append(("id_token", .bool(true))) }
            if let proxy = request.proxyToken {
                members.append(("proxy_token", .string(proxy == .idToken ? "id" : "access")))
            }
            if request.forHosts { members.append(("hosts", .bool(true))) }
        }
        return JSONValue.object(JSONObject(members)).serialized()
    }

    /// The keys a token request may hold.
    private static let tokenKeys = [
        "v", "op", "portal", "client_id", "iap", "url", "name", "min_valid", "id_token", "proxy_token", "hosts",
    ]

    /// Reads one request line.
    ///
    /// - Throws: `AgentFailure` (`bad_request`, `unsupported_version`, `forbidden` for a refresh token) saying what
    ///   is wrong with the line.
    package static func parse(_ line: String) throws(AgentFailure) -> AgentRequest {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            throw .badRequest("the request is not JSON (\(error.description)); send one JSON object per line")
        }
        guard case .object(let object) = value else {
            throw .badRequest("the request is a JSON \(value.typeName), not an object")
        }
        guard let version = object["v"] else {
            throw .badRequest("the request has no \"v\"; send \"v\": \(AgentProtocol.version)")
        }
        guard version.integerValue == AgentProtocol.version else {
            throw AgentFailure(
                .unsupportedVersion,
                "this agent speaks version \(AgentProtocol.version) of the protocol, not \(version.serialized())")
        }
        guard let operation = object["op"]?.stringValue else {
            throw .badRequest("the request has no \"op\" string; use \"token\", \"status\" or \"stop\"")
        }
        if operation.lowercased().contains("refresh") || object["refresh_token"] != nil {
            throw AgentFailure(
                .forbidden,
                "refresh tokens are never handed out: the agent refreshes itself; ask for \"op\": \"token\" with \"min_valid\""
            )
        }
        switch operation {
        case "status", "stop":
            if let extra = object.keys.first(where: { $0 != "v" && $0 != "op" }) {
                let key = MessagePart.quoted(DisplayText.neutralised(extra, limit: 40), or: "an empty key")
                throw .badRequest("\(key) is not a key of \"op\": \"\(operation)\"")
            }
            return operation == "status" ? .status : .stop
        case "token":
            return .token(try tokenRequest(object))
        default:
            throw .badRequest(
                "\"op\" must be \"token\", \"status\" or \"stop\"\(MessagePart.given(", not \"", DisplayText.neutralised(operation, limit: 40), "\""))"
            )
        }
    }

    private static func tokenRequest(_ object: JSONObject) throws(AgentFailure) -> AgentTokenRequest {
        if let extra = object.keys.first(where: { !tokenKeys.contains($0) }) {
            let key = MessagePart.quoted(DisplayText.neutralised(extra, limit: 40), or: "an empty key")
            throw .badRequest("\(key) is not a key of a token request")
        }
        func string(_ key: String) throws(AgentFailure) -> String? {
            guard let value = object[key], value != .null else { return nil }
            guard let text = value.stringValue, !text.isEmpty else {
                throw .badRequest("\"\(key)\" must be a non-empty string")
            }
            return text
        }
        func httpURL(_ key: String) throws(AgentFailure) -> URL? {
            guard let text = try string(key) else { return nil }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host?.isEmpty == false
            else {
                throw .badRequest(
                    "\"\(key)\" must be an absolute http or https URL\(MessagePart.given(", not \"", DisplayText.neutralised(text, limit: 200), "\""))"
                )
            }
            return url
        }
        let named = ["portal", "iap", "url", "name"].filter { object[$0] != nil && object[$0] != .null }
        guard named.count <= 1 else {
            throw .badRequest(
                "give only one of \(named.map { "\"\($0)\"" }.joined(separator: ", ")); they each pick a sign-in")
        }
        let clientID = try string("client_id")
        if clientID != nil && named != ["portal"] { throw .badRequest("\"client_id\" goes with \"portal\"") }
        let selection: SignInQuery
        if let portal = try httpURL("portal") {
            selection = .portal(portal, clientID: clientID)
        } else if let file = try string("iap") {
            guard file.hasPrefix("/") else {
                throw .badRequest("\"iap\" must be an absolute path (the agent does not know the caller's folder)")
            }
            selection = .iap(file: URL(fileURLWithPath: file))
        } else if let url = try httpURL("url") {
            selection = .url(url)
        } else if let name = try string("name") {
            guard SignInPreferences.isValidName(name) else {
                throw .badRequest(
                    "\"name\" must be a sign-in name (letters, digits and any of -_.@)\(MessagePart.given(", not \"", DisplayText.neutralised(name, limit: 80), "\""))"
                )
            }
            selection = .name(name)
        } else {
            selection = .automatic
        }
        var request = AgentTokenRequest(selection: selection)
        if let minValid = object["min_valid"], minValid != .null {
            guard let seconds = minValid.integerValue, (0...AgentProtocol.maximumMinValid).contains(seconds) else {
                throw .badRequest(
                    "\"min_valid\" must be a whole number of seconds from 0 to \(AgentProtocol.maximumMinValid)")
            }
            request.minValid = Int(seconds)
        }
        if let idToken = object["id_token"], idToken != .null {
            guard let flag = idToken.boolValue else { throw .badRequest("\"id_token\" must be true or false") }
            request.idToken = flag
        }
        switch try string("proxy_token") {
        case nil: break
        case "id": request.proxyToken = .idToken
        case "access": request.proxyToken = .accessToken
        case let other?:
            throw .badRequest(
                "\"proxy_token\" must be \"id\" or \"access\"\(MessagePart.given(", not \"", DisplayText.neutralised(other, limit: 40), "\""))"
            )
        }
        if let hosts = object["hosts"], hosts != .null {
            guard let flag = hosts.boolValue else { throw .badRequest("\"hosts\" must be true or false") }
            request.forHosts = flag
        }
        if request.idToken && (request.proxyToken != nil || request.forHosts) {
            throw .badRequest("give \"id_token\" or \"proxy_token\" and \"hosts\", not both")
        }
        return request
    }
}

/// A token the agent handed out: the value and what the tool's `token --format json` shows about it.
package struct AgentToken: Sendable, Equatable {
    /// `.oauthUser` or `.iap`.
    package var kind: CredentialKind
    /// "the portal https://…" or "the IAP configuration …".
    package var target: String
    /// The portal URL, or the IAP's identity provider (authorize URL).
    package var url: URL
    package var username: String?
    package var clientID: String?
    /// IAP: the configuration file the sign-in was made with, when known.
    package var configurationFile: String?
    /// The token.
    package var value: String
    /// `Bearer`, or `ID` for an ID token asked for with `id_token`.
    package var type: String
    package var expirationDate: Date
    /// IAP: the ID token and its expiry.
    package var idToken: String?
    package var idTokenExpirationDate: Date?
    /// Whether `value` is the ID token.
    package var isIDToken: Bool
    /// When the sign-in's tokens were issued (the sign-in or its last refresh): `"issued_at_unix"`, which an agent
    /// before it did not send (nil).
    package var issuedAt: Date?

    package init(
        kind: CredentialKind, target: String, url: URL, username: String?, clientID: String?,
        configurationFile: String?, value: String, type: String, expirationDate: Date, idToken: String?,
        idTokenExpirationDate: Date?, isIDToken: Bool, issuedAt: Date? = nil
    ) {
        self.kind = kind
        self.target = target
        self.url = url
        self.username = username
        self.clientID = clientID
        self.configurationFile = configurationFile
        self.value = value
        self.type = type
        self.expirationDate = expirationDate
        self.idToken = idToken
        self.idTokenExpirationDate = idTokenExpirationDate
        self.isIDToken = isIDToken
        self.issuedAt = issuedAt
    }

    /// The `"token"` object of an answer.
    package func json(at now: Date = Date()) -> JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        func seconds(_ date: Date) -> JSONValue { .integer(Int64(date.timeIntervalSince1970.rounded(.down))) }
        var members: [(key: String, value: JSONValue)] = [
            ("kind", .string(kind.rawValue)), ("target", .string(target)), ("url", .string(url.absoluteString)),
            ("username", optional(username)), ("client_id", optional(clientID)), ("token", .string(value)),
            ("token_type", .string(type)), ("expires_at", .string(UTCTimestamp.iso8601(expirationDate))),
            ("expires_at_unix", seconds(expirationDate)),
            ("expires_in", .integer(Int64(max(0, Int(expirationDate.timeIntervalSince(now).rounded(.down)))))),
            ("is_id_token", .bool(isIDToken)),
        ]
        if let issuedAt { members.append(("issued_at_unix", seconds(issuedAt))) }
        if kind == .iap {
            members += [
                ("configuration_file", optional(configurationFile)), ("id_token", optional(idToken)),
                ("id_token_expires_at_unix", idTokenExpirationDate.map(seconds) ?? .null),
            ]
        }
        return .object(JSONObject(members))
    }

    /// Reads the `"token"` object of an answer; nil when a required member is missing or of the wrong type.
    package init?(json value: JSONValue) {
        func date(_ key: String) -> Date? {
            value[key]?.integerValue.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        }
        guard case .object = value, let kind = value["kind"]?.stringValue.flatMap(CredentialKind.init(rawValue:)),
            let target = value["target"]?.stringValue, let url = value["url"]?.stringValue.flatMap(URL.init(string:)),
            let token = value["token"]?.stringValue, let type = value["token_type"]?.stringValue,
            let expiry = date("expires_at_unix"), let isIDToken = value["is_id_token"]?.boolValue
        else { return nil }
        self.init(
            kind: kind, target: target, url: url, username: value["username"]?.stringValue,
            clientID: value["client_id"]?.stringValue, configurationFile: value["configuration_file"]?.stringValue,
            value: token, type: type, expirationDate: expiry, idToken: value["id_token"]?.stringValue,
            idTokenExpirationDate: date("id_token_expires_at_unix"), isIDToken: isIDToken,
            issuedAt: date("issued_at_unix"))
    }
}

/// One answer line.
package enum AgentAnswer: Sendable, Equatable {
    /// `"ok": true` with `"token"`.
    case token(AgentToken)
    /// `"ok": true` with `"agent"`: what `status` reports.
    case status(JSONObject)
    /// `"ok": true` with `"stopping": true`.
    case stopping
    /// `"ok": false` with `"status"`, `"reason"` and `"message"`.
    case failure(AgentFailure)

    /// The answer as one JSON line (without the newline).
    package var line: String {
        var members: [(key: String, value: JSONValue)] = [("v", .integer(AgentProtocol.version))]
        switch self {
        case .token(let token):
            members += [("ok", .bool(true)), ("token", token.json())]
        case .status(let agent):
            members += [("ok", .bool(true)), ("agent", .object(agent))]
        case .stopping:
            members += [("ok", .bool(true)), ("stopping", .bool(true))]
        case .failure(let failure):
            members += [
                ("ok", .bool(false)), ("status", .integer(Int64(failure.reason.status))),
                ("reason", .string(failure.reason.rawValue)), ("message", .string(failure.message)),
            ]
        }
        return JSONValue.object(JSONObject(members)).serialized()
    }

    /// Reads an answer line; nil when it is not an answer of this protocol.
    package static func parse(_ line: String) -> AgentAnswer? {
        guard let value = try? JSONValue.parse(line), case .object(let object) = value,
            let ok = object["ok"]?.boolValue
        else { return nil }
        guard ok else {
            guard let reason = object["reason"]?.stringValue.flatMap(AgentFailure.Reason.init(rawValue:)),
                let message = object["message"]?.stringValue
            else { return nil }
            return .failure(AgentFailure(reason, message))
        }
        if let token = object["token"] { return AgentToken(json: token).map(AgentAnswer.token) }
        if case .object(let agent)? = object["agent"] { return .status(agent) }
        if object["stopping"]?.boolValue == true { return .stopping }
        return nil
    }
}

/// A request the agent did not fulfil: why (a reason of the protocol, with the tool's exit status) and a message
/// for a person.
package struct AgentFailure: Error, Sendable, Equatable, CategorizedError, CustomStringConvertible {
    /// Why, as the protocol names it; each has the exit status `portal-auth token` gives for it.
    package enum Reason: String, Sendable, CaseIterable {
        /// A sign-in is needed (nothing stored, the refresh token refused or expired): 77.
        case signInNeeded = "sign_in_needed"
        /// The identity provider or portal is unreachable or failing; the sign-in is kept: 69.
        case unavailable
        /// The request is wrong (a selection that cannot be used, a bad value): 64.
        case usage
        /// The store or a response holds what cannot be used: 65.
        case invalidContent = "invalid_content"
        /// An input file (an IAP configuration) is missing or unreadable: 66.
        case unreadableInput = "unreadable_input"
        /// A local failure in the agent (the store's file system, the keyring): 70.
        case local
        /// The identity provider did not answer in time: 75.
        case timedOut = "timed_out"
        /// The request was cancelled (the agent stopping): 130.
        case cancelled
        /// The line is not a request of the protocol: 64.
        case badRequest = "bad_request"
        /// The line is longer than `AgentProtocol.maximumRequestBytes`: 64.
        case tooLong = "too_long"
        /// The request states a version this agent does not speak: 64.
        case unsupportedVersion = "unsupported_version"
        /// Never handed out (a refresh token), or not to this caller (another user): 77.
        case forbidden
        /// The agent serves as many connections as it may; try again: 75.
        case busy

        /// The exit status of `portal-auth token` for this reason.
        package var status: Int {
            switch self {
            case .signInNeeded, .forbidden: return 77
            case .unavailable: return 69
            case .usage, .badRequest, .tooLong, .unsupportedVersion: return 64
            case .invalidContent: return 65
            case .unreadableInput: return 66
            case .local: return 70
            case .timedOut, .busy: return 75
            case .cancelled: return 130
            }
        }

        /// The reason for a failure of `category`.
        package init(_ category: ErrorCategory) {
            switch category {
            case .usage: self = .usage
            case .invalidContent: self = .invalidContent
            case .unreadableInput: self = .unreadableInput
            case .unavailable: self = .unavailable
            case .local: self = .local
            case .timedOut: self = .timedOut
            case .refused: self = .signInNeeded
            case .cancelled: self = .cancelled
            }
        }
    }

    package let reason: Reason
    /// For a person: what happened and what to do (never a token).
    package let message: String

    package init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// A `bad_request` failure.
    package static func badRequest(_ message: String) -> AgentFailure { AgentFailure(.badRequest, message) }

    package var category: ErrorCategory {
        switch reason {
        case .signInNeeded, .forbidden: return .refused
        case .unavailable: return .unavailable
        case .usage, .badRequest, .tooLong, .unsupportedVersion: return .usage
        case .invalidContent: return .invalidContent
        case .unreadableInput: return .unreadableInput
        case .local: return .local
        case .timedOut, .busy: return .timedOut
        case .cancelled: return .cancelled
        }
    }

    package var description: String { message }
}
