/// A wall-clock date and time on some clock, without a zone: what a camera writes into
/// EXIF DateTimeOriginal. Moments group by its calendar day; it is never converted to UTC
/// unless an offset is known.
public struct LocalDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// Milliseconds, when the source knows sub-seconds; `nil` when it does not.
    public var millisecond: Int?

    /// The earliest and latest years photod accepts from metadata; anything outside is a
    /// broken or placeholder value (`0000:00:00`), not a capture time.
    public static let plausibleYears = 1826...2199

    /// Creates a validated date-time; `nil` when any field is out of range.
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0,
                 millisecond: Int? = nil) {
        guard Self.plausibleYears.contains(year), (1...12).contains(month),
              day >= 1, day <= CivilTime.daysInMonth(year: year, month: month),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        if let ms = millisecond, !(0...999).contains(ms) { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = min(second, 59)  // a leap second is shown as :59
        self.millisecond = millisecond
    }

    /// The wall time `offsetSeconds` east of UTC at an instant given in Unix seconds.
    public init?(unixSeconds: Int64, offsetSeconds: Int, millisecond: Int? = nil) {
        let local = unixSeconds + Int64(offsetSeconds)
        let days = Int(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
        let secs = Int(local - Int64(days) * 86_400)
        let (y, m, d) = CivilTime.civilFromDays(days)
        self.init(year: y, month: m, day: d, hour: secs / 3600, minute: secs / 60 % 60, second: secs % 60,
                  millisecond: millisecond)
    }

    /// Days since 1970-01-01 of the calendar day.
    public var dayNumber: Int { CivilTime.daysFromCivil(year: year, month: month, day: day) }

    /// Seconds since 1970-01-01T00:00:00 on this clock (not UTC unless the clock is).
    public var secondsSinceEpochOnThisClock: Int64 {
        Int64(dayNumber) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// The instant in Unix seconds, given this clock's offset east of UTC.
    public func unixSeconds(offsetSeconds: Int) -> Int64 {
        secondsSinceEpochOnThisClock - Int64(offsetSeconds)
    }

    /// `YYYY-MM-DD`.
    public var dateString: String { format(includeTime: false) }

    /// `YYYY-MM-DDTHH:MM:SS`, with `.fff` when milliseconds are known.
    public var description: String { format(includeTime: true) }

    /// Formats into one small buffer (this runs for every asset written and sent).
    private func format(includeTime: Bool) -> String {
        let count = includeTime ? (millisecond == nil ? 19 : 23) : 10
        return String(unsafeUninitializedCapacity: count) { b in
            @inline(__always) func put(_ v: Int, _ at: Int, _ width: Int) {
                var v = v
                for k in stride(from: at + width - 1, through: at, by: -1) {
                    b[k] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
                    v /= 10
                }
            }
            put(year, 0, 4); b[4] = 0x2D; put(month, 5, 2); b[7] = 0x2D; put(day, 8, 2)
            if includeTime {
                b[10] = 0x54; put(hour, 11, 2); b[13] = 0x3A; put(minute, 14, 2); b[16] = 0x3A; put(second, 17, 2)
                if let ms = millisecond { b[19] = 0x2E; put(ms, 20, 3) }
            }
            return count
        }
    }

    /// Parses the form `description` produces (the store's and the wire's form).
    public init?(iso text: String) {
        // In place over the string's UTF-8 (the store's texts are native strings): no copy.
        var text = text
        guard let value = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = value
    }

    /// The same from the text's UTF-8 bytes (a database column read in place).
    public init?(isoBytes bytes: UnsafeBufferPointer<UInt8>) {
        guard let value = Self.parse(bytes) else { return nil }
        self = value
    }

    /// The order of a stored text (`description`'s form) as a number: `YYYY-MM-DDTHH:MM:SS`
    /// read as YYYYMMDDHHMMSS × 1001, plus 1 + the milliseconds when there are any, so that keys
    /// order as the texts do (a second without milliseconds before the same second's `.000`).
    /// Nil for any other form. For ordering many rows without a string each.
    public static func orderKey(isoBytes b: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard b.count == 19 || b.count == 23, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":") else { return nil }
        var key: Int64 = 0
        for i in [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18] {
            let d = b[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            key = key * 10 + Int64(d)
        }
        key *= 1001
        if b.count == 23 {
            guard b[19] == UInt8(ascii: "."), let ms = Digits.value(b, 20, 3) else { return nil }
            key += 1 + Int64(ms)
        }
        return key
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> LocalDateTime? {
        @inline(__always) func digits(_ start: Int, _ count: Int) -> Int? { Digits.value(b, start, count) }
        guard b.count == 19 || b.count == 23, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let y = digits(0, 4), let mo = digits(5, 2), let d = digits(8, 2),
              let h = digits(11, 2), let mi = digits(14, 2), let s = digits(17, 2)
        else { return nil }
        var ms: Int?
        if b.count == 23 {
            guard b[19] == UInt8(ascii: "."), let v = digits(20, 3) else { return nil }
            ms = v
        }
        return LocalDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms)
    }

    public static func < (a: LocalDateTime, b: LocalDateTime) -> Bool {
        let ka = (a.year, a.month, a.day, a.hour, a.minute, a.second)
        let kb = (b.year, b.month, b.day, b.hour, b.minute, b.second)
        if ka != kb { return ka < kb }
        return (a.millisecond ?? 0) < (b.millisecond ?? 0)
    }
}

/// Zero-padded decimal formatting without Foundation.
@inline(__always)
func pad(_ value: Int, _ width: Int) -> String {
    let s = String(value)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}

/// Decimal digit runs in byte buffers.
public enum Digits {
    /// The value of `count` ASCII digits at `start`, or `nil` when any is not a digit.
    @inline(__always)
    public static func value(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        bytes.withUnsafeBufferPointer { value($0, start, count) }
    }

    /// The same over bytes in place.
    @inline(__always)
    public static func value(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        guard start >= 0, start + count <= bytes.count else { return nil }
        var v = 0
        for i in start..<(start + count) {
            let c = bytes[i]
            guard c >= 0x30, c <= 0x39 else { return nil }
            v = v * 10 + Int(c - 0x30)
        }
        return v
    }

    /// Whether the byte is an ASCII digit.
    @inline(__always)
    public static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
}
