import Foundation
import Testing
@testable import PortalAuth

@Suite("UTC timestamps written with the C library")
struct UTCTimestampTests {
    @Test("iso8601 writes what Date.ISO8601Format() writes", arguments: [
        0, 0.999, 1, -0.5, -1, 59.999_999, 951_782_400, 1_795_540_918.75, 4_102_444_799, 253_402_300_799, 253_402_300_800,
        -2_208_988_800, -2_208_988_801, -62_135_596_800, 1e300,
    ] as [TimeInterval])
    func matchesFoundation(seconds: TimeInterval) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(UTCTimestamp.iso8601(date) == date.ISO8601Format())
    }

    @Test("a strftime format in UTC")
    func format() {
        #expect(UTCTimestamp.string(1_795_540_918, format: "%Y%m%dT%H%M%SZ") == "20261124T172158Z")
        #expect(UTCTimestamp.string(0, format: "") == nil)
    }
}
