public import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

/// What the device authorization endpoint handed out (RFC 8628 §3.2), as the person signing in sees it: a code to
/// enter on a verification page, from any device.
///
/// The device code itself (the secret the client polls with) is kept inside and never appears in `description`.
public struct DeviceAuthorization: Sendable, CustomStringConvertible {
    /// The code the person enters on the verification page, e.g. `WDJB-MJHT`.
    public let userCode: String
    /// The verification page (`verification_uri`).
    public let verificationURL: URL
    /// The verification page with the code filled in (`verification_uri_complete`), when the server gives one.
    public let verificationURLComplete: URL?
    /// How long the codes stay valid (`expires_in`).
    public let expiresIn: Duration
    /// How long to wait between polls (`interval`; 5 s when absent).
    public let interval: Duration
    /// The device code the client polls with: a secret.
    let deviceCode: String

    public var description: String {
        "DeviceAuthorization(userCode: \(userCode), verificationURL: \(verificationURL.absoluteString), expiresIn: \(expiresIn))"
    }

    /// Reads a successful device authorization response.
    static func parse(_ response: TransportResponse, endpoint: URL) throws(DeviceCodeError) -> DeviceAuthorization {
        func invalid(_ problem: String) -> DeviceCodeError { .invalidResponse(endpoint: endpoint, problem: problem) }
        guard let json = try? JSONValue.parse(response.body), let object = json.objectValue else {
            throw invalid("the answer is not a JSON object")
        }
        guard let deviceCode = object["device_code"]?.stringValue, !deviceCode.isEmpty else {
            throw invalid("device_code is missing")
        }
        guard let userCode = object["user_code"]?.stringValue, !userCode.isEmpty else {
            throw invalid("user_code is missing")
        }
        guard userCode.count <= 64,
            userCode.unicodeScalars.allSatisfy({
                ![.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
            })
        else {
            throw invalid("user_code holds control characters or is longer than 64 characters")
        }
        // Microsoft's v1 endpoint and some older servers spell it verification_url.
        guard let verificationText = (object["verification_uri"] ?? object["verification_url"])?.stringValue else {
            throw invalid("verification_uri is missing")
        }
        let verificationURL = try page(verificationText, name: "verification_uri", invalid: invalid)
        var complete: URL?
        if let text = object["verification_uri_complete"]?.stringValue {
            complete = try page(text, name: "verification_uri_complete", invalid: invalid)
        }
        guard
            let expiresIn = object["expires_in"]?.integerValue
                ?? object["expires_in"]?.stringValue.flatMap({ Int64($0) }),
            expiresIn > 0
        else {
            throw invalid("expires_in is missing or not a positive number")
        }
        let interval = object["interval"]?.integerValue ?? object["interval"]?.stringValue.flatMap { Int64($0) } ?? 5
        return DeviceAuthorization(
            userCode: userCode, verificationURL: verificationURL, verificationURLComplete: complete,
            expiresIn: .seconds(min(expiresIn, 86_400)), interval: .seconds(min(max(interval, 1), 300)),
            deviceCode: deviceCode)
    }

    /// A page the person is sent to: http(s) with a host, nothing a terminal could misread.
    private static func page(_ text: String, name: String, invalid: (String) -> DeviceCodeError) throws(DeviceCodeError)
        -> URL
    {
        guard text.count <= 2048, let url = URLRules.url(from: text), URLRules.endpointProblem(url) == nil,
            text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x21 && $0.value < 0x7F })
        else {
            throw invalid("\(name) is not an https address")
        }
        return url
    }
}
