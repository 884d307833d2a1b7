/// A username and password a person gave. `description` never shows the password.
public struct LoginAnswer: Sendable, CustomStringConvertible {
    /// The username.
    public let username: String
    /// The password.
    public let password: String

    /// Creates an answer.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    public var description: String { "LoginAnswer(\(username), password: <redacted>)" }
}
