/// The accepted sign-in (or logout) response: the query parameters of the redirect whose `state` matched.
///
/// The values are secrets (the authorization code among them): `description` names the parameters only.
public struct LoopbackCallback: Sendable, Equatable, CustomStringConvertible {
    /// One query parameter, decoded (`+` as space, percent escapes), in the order received.
    public struct Parameter: Sendable, Equatable {
        /// The parameter's name.
        public let name: String
        /// The parameter's value (empty when the query had the name alone).
        public let value: String

        /// Creates a parameter.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Every query parameter of the response, in order.
    public let parameters: [Parameter]

    /// Creates a callback from its parameters.
    public init(parameters: [Parameter]) {
        self.parameters = parameters
    }

    /// The first value of the parameter `name`, or nil.
    public subscript(name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// The authorization code (absent from a logout confirmation).
    public var code: String? { self["code"] }

    /// The `state` that matched the pending sign-in.
    public var state: String? { self["state"] }

    /// The `iss` parameter (RFC 9207), when the identity provider sent one.
    public var issuer: String? { self["iss"] }

    public var description: String {
        "LoopbackCallback(parameters: \(parameters.map(\.name).joined(separator: ", ")))"
    }
}
