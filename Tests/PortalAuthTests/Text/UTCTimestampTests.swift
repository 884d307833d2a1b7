import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

@Suite("UTC timestamps written by arithmetic")
struct UTCTimestampTests {
    @Test(
        "iso8601 writes what Date.ISO8601Format() writes",
        arguments: [
            0, 0.999, 1, -0.5, -1, 59.999_999, 951_782_400, 1_795_540_918.75, 4_102_444_799, 253_402_300_799,
            253_402_300_800,
            -2_208_988_800, -2_208_988_801, -62_135_596_800, 1e300,
        ] as [TimeInterval])
    func matchesFoundation(seconds: TimeInterval) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(UTCTimestamp.iso8601(date) == date.ISO8601Format())
    }

    @Test(
        "every day from 1900 to 9999 is written as Foundation writes it",
        arguments: [
            -2_208_988_800, 0, 951_782_400, 4_102_444_800, 32_503_680_000, 253_370_764_800,
        ] as [TimeInterval])
    func everyDay(start: TimeInterval) {
        // 20 years of days (with 1900, 2000 and 2100 as leap-year edges) from each start, at a varying time of day.
        for index in 0..<(366 * 20) {
            let date = Date(timeIntervalSince1970: start + Double(index) * 86_400 + Double(index % 86_400))
            guard date.timeIntervalSince1970 <= 253_402_300_799 else { break }
            if UTCTimestamp.iso8601(date) != date.ISO8601Format() {
                Issue.record("\(date.timeIntervalSince1970): \(UTCTimestamp.iso8601(date)) != \(date.ISO8601Format())")
                return
            }
        }
    }

    @Test("the basic format, for file names")
    func basic() {
        #expect(UTCTimestamp.basic(Date(timeIntervalSince1970: 1_795_540_918)) == "20261124T172158Z")
        #expect(UTCTimestamp.basic(Date(timeIntervalSince1970: -1)) == "19691231T235959Z")
        #expect(
            UTCTimestamp.basic(Date(timeIntervalSince1970: 253_402_300_800))
                == "10000-01-01T00:00:00Z".filter { $0 != "-" && $0 != ":" })
    }
}
