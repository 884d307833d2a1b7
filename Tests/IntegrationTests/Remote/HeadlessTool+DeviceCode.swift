import Foundation
import Testing

extension HeadlessTool {
    /// Waits for the device code and returns the verification page with the code filled in, read from the line the
    /// tool prints it on (the whole line is the address: nothing before or after it that a copy would pick up).
    func deviceCodePage(server: TestServer) throws -> String {
        #expect(waitFor("Waiting for the sign-in to be approved"), "\(stderr)")
        let lines = stderr.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        return try #require(
            lines.first { $0.hasPrefix("\(server.base)/o/device/?user_code=") },
            "no line with the verification_uri_complete alone in: \(stderr)")
    }
}
