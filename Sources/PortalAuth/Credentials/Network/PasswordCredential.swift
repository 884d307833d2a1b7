/// A username and password for HTTP authentication (`NetworkCredential.password`), as in the ArcGIS Maps SDK.
///
/// The password is kept in memory for the transport only; `description` never shows it.
import PortalAuthTransport

public struct PasswordCredential: Sendable, CustomStringConvertible {
    /// The username.
    public let username: String
    /// What libcurl is given.
    let transport: TransportCredentials.Password

    /// A username and password for Basic or Digest authentication.
    public init(username: String, password: String) {
        self.username = username
        self.transport = TransportCredentials.Password(username: username, password: password)
    }

    public var description: String { "password for \(username)" }
}
