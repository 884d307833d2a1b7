public import Foundation

/// A client certificate file and its password a person gave. `description` never shows the password.
public struct ClientCertificateAnswer: Sendable, CustomStringConvertible {
    /// The PKCS#12 file (.p12/.pfx).
    public let file: URL
    /// Its password.
    public let password: String

    /// Creates an answer.
    public init(file: URL, password: String) {
        self.file = file
        self.password = password
    }

    public var description: String { "ClientCertificateAnswer(\(file.path), password: <redacted>)" }
}
