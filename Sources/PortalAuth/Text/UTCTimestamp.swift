package import Foundation
internal import Glibc

/// Times in UTC written with the C library (`gmtime_r`, `strftime`) rather than Foundation's format styles, whose
/// first use in a process looks up the current time zone (copying the whole environment) and builds a formatter:
/// a fifteenth of a `portal-auth refresh` (issue 17).
package enum UTCTimestamp {
    /// `date` as `Date.ISO8601Format()` writes it (`2026-11-22T02:13:00Z`: whole seconds, rounded down).
    package static func iso8601(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // Outside 1900-9999 Foundation's own format: its calendar is Julian before 1582 and `%Y` is not padded
        // below year 1000 (never reached by real tokens).
        guard seconds.isFinite, seconds >= -2_208_988_800, seconds <= 253_402_300_799 else { return date.ISO8601Format() }
        return string(time_t(seconds), format: "%Y-%m-%dT%H:%M:%SZ") ?? date.ISO8601Format()
    }

    /// The time `seconds` (since 1970) in UTC with the `strftime` `format`, or nil when the C library cannot
    /// write it.
    package static func string(_ seconds: time_t, format: String) -> String? {
        var seconds = seconds
        // The `tm` is filled by gmtime_r rather than built with `tm()`, whose imported initializer the
        // release build attributes to whichever C module saw <time.h> first.
        return withUnsafeTemporaryAllocation(of: tm.self, capacity: 1) { parts in
            guard let part = parts.baseAddress, gmtime_r(&seconds, part) != nil else { return nil }
            var buffer = [CChar](repeating: 0, count: 64)
            let count = strftime(&buffer, buffer.count, format, part)
            guard count > 0 else { return nil }
            return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
