import Foundation
import Synchronization
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthTransport

/// The requests a scripted client received, in order, whole (`ScriptedHTTPClient` itself keeps only their forms):
/// what the token-service tests check — URL, method, field order.
final class RequestLog: Sendable {
    private let list = Mutex<[TransportRequest]>([])

    func append(_ request: TransportRequest) { list.withLock { $0.append(request) } }

    /// The requests so far.
    var requests: [TransportRequest] { list.withLock { $0 } }
}

extension ScriptedHTTPClient {
    /// A client whose `answer` gets each request and its 0-based index, logging every request in `log`.
    convenience init(
        log: RequestLog, delay: Duration = .zero,
        _ answer: @escaping @Sendable (TransportRequest, Int) throws -> TransportResponse
    ) {
        self.init(delay: delay) { index, request in
            log.append(request)
            return try answer(request, index)
        }
    }
}

extension TransportResponse {
    /// A JSON response to `request` with HTTP `status` (200 by default: ArcGIS errors come as 200).
    static func json(_ text: String, status: Int = 200, for request: TransportRequest) -> TransportResponse {
        TransportResponse(
            statusCode: status, headers: [("Content-Type", "application/json")], body: Data(text.utf8), url: request.url
        )
    }
}

extension TransportRequest {
    /// The form fields of the body, decoded, in order.
    var formFields: [(String, String)] {
        let text = String(decoding: body ?? Data(), as: UTF8.self)
        return text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    /// The value of form field `name`.
    func formField(_ name: String) -> String? {
        formFields.first { $0.0 == name }?.1
    }
}
