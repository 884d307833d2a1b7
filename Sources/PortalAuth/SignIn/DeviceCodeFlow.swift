import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

/// One sign-in with the device authorization grant (RFC 8628): ask the device authorization endpoint for codes, show
/// the person the verification page and the user code, then poll the token endpoint until they approve or deny it,
/// or the codes expire.
///
/// Polls wait the server's `interval` (5 s more after each `slow_down`), on the settings' clock, so tests decide when
/// time passes; cancelling the task ends the wait at once.
struct DeviceCodeFlow: Sendable {
    /// The device authorization endpoint.
    var deviceAuthorizationURL: URL
    /// The token endpoint.
    var tokenURL: URL
    /// The public client.
    var clientID: String
    /// The scopes asked for.
    var scopes: [String]

    /// What the sign-in produced.
    struct Result: Sendable {
        let tokens: TokenResponse
        let receivedAt: Date
    }

    /// Runs the sign-in.
    func run(settings: SignInSettings) async throws -> Result {
        let giveUp = settings.clock.now.addingTimeInterval(settings.timeout.timeInterval)
        var fields = [("client_id", clientID)]
        if !scopes.isEmpty { fields.append(("scope", scopes.joined(separator: " "))) }
        let answer = try await settings.httpClient.send(.form(deviceAuthorizationURL, fields: fields))
        guard (200..<300).contains(answer.statusCode) else {
            // A refusal (unauthorized_client, invalid_scope …) or failure, read like a token endpoint's and named as
            // the device authorization endpoint's.
            do {
                _ = try TokenResponse.parse(answer, endpoint: deviceAuthorizationURL)
            } catch var refusal {
                refusal.isDeviceAuthorization = true
                throw refusal
            }
            throw DeviceCodeError.invalidResponse(
                endpoint: deviceAuthorizationURL, problem: "HTTP \(answer.statusCode)")
        }
        let authorization = try DeviceAuthorization.parse(answer, endpoint: deviceAuthorizationURL)
        settings.observer.deviceCodeIssued(authorization)
        return try await poll(authorization, giveUp: giveUp, settings: settings)
    }

    /// Polls the token endpoint until the sign-in is approved, denied or expired, or `giveUp` (the sign-in's start
    /// plus `settings.timeout`) came.
    func poll(_ authorization: DeviceAuthorization, giveUp: Date, settings: SignInSettings) async throws -> Result {
        let clock = settings.clock
        let expiry = clock.now.addingTimeInterval(authorization.expiresIn.timeInterval)
        var interval = authorization.interval
        let request = TokenRequest(tokenURL: tokenURL, grant: .deviceCode(authorization.deviceCode), clientID: clientID)
        while true {
            // The time limit ends the wait before the codes do. No poll in its last second: a request then would run
            // into the limit (the command's requests share it) instead of ending with this clear error.
            if giveUp < expiry, clock.now.addingTimeInterval(interval.timeInterval + 1) > giveUp {
                let left = giveUp.timeIntervalSince(clock.now)
                if left > 0 { try await clock.sleep(for: .seconds(left)) }
                throw DeviceCodeError.timedOut(after: settings.timeout)
            }
            try await clock.sleep(for: interval)
            guard clock.now < expiry else { throw DeviceCodeError.expired }
            let response = try await request.send(with: settings.httpClient)
            switch Self.pollError(in: response) {
            case "authorization_pending":
                continue
            case "slow_down":
                interval += .seconds(5)
                settings.observer.deviceCodePollingSlowedDown(interval: interval)
            case "access_denied":
                throw DeviceCodeError.denied
            case "expired_token":
                throw DeviceCodeError.expired
            default:
                let tokens = try TokenResponse.parse(response, endpoint: tokenURL)
                return Result(tokens: tokens, receivedAt: clock.now)
            }
        }
    }

    /// The `error` of a poll's answer (RFC 8628 §3.5), top level or in an ArcGIS-style envelope; nil for tokens.
    static func pollError(in response: TransportResponse) -> String? {
        guard let json = try? JSONValue.parse(response.body) else { return nil }
        return json["error"]?.stringValue ?? json["error"]?["error"]?.stringValue
    }
}
