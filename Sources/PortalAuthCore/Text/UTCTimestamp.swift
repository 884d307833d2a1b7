package import Foundation

/// Times in UTC written by arithmetic rather than with Foundation's format styles, whose first use in a process
/// looks up the current time zone (copying the whole environment) and builds a formatter, or with `gmtime_r`,
/// which reads the time-zone file first: both were a visible part of a `portal-auth refresh` (issue 17).
package enum UTCTimestamp {
    /// `date` as `Date.ISO8601Format()` writes it (`2026-11-22T02:13:00Z`: whole seconds, rounded down).
    package static func iso8601(_ date: Date) -> String {
        guard let time = Civil(date) else { return date.ISO8601Format() }
        return
            "\(time.year)-\(two(time.month))-\(two(time.day))T\(two(time.hour)):\(two(time.minute)):\(two(time.second))Z"
    }

    /// `date` (by default now) in the ISO 8601 basic format (`20261124T172158Z`), as used in file names.
    package static func basic(_ date: Date = Date()) -> String {
        guard let time = Civil(date) else {
            return date.ISO8601Format().filter { $0 != "-" && $0 != ":" }
        }
        return "\(time.year)\(two(time.month))\(two(time.day))T\(two(time.hour))\(two(time.minute))\(two(time.second))Z"
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// A time's calendar fields in UTC (proleptic Gregorian), for the years 1900-9999. Outside them Foundation
    /// writes the date (its calendar is Julian before 1582 and it does not pad years below 1000; no real token
    /// gets there).
    private struct Civil {
        let year, month, day, hour, minute, second: Int

        init?(_ date: Date) {
            let seconds = date.timeIntervalSince1970.rounded(.down)
            guard seconds.isFinite, seconds >= -2_208_988_800, seconds <= 253_402_300_799 else { return nil }
            let whole = Int(seconds)
            let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
            let ofDay = whole - days * 86_400
            (hour, minute, second) = (ofDay / 3600, ofDay % 3600 / 60, ofDay % 60)
            // Days since 1970-01-01 to year, month and day (H. Hinnant's civil_from_days, eras of 400 years).
            let shifted = days + 719_468
            let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
            let dayOfEra = shifted - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        }
    }
}
