/// An offset from UTC in seconds east (`+09:00` is 32,400), as EXIF OffsetTime* and
/// ISO 8601 write it.
public struct UTCOffset: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seconds: Int

    /// The widest offsets in use (UTC−12:00 ... UTC+14:00), with a margin for LMT-style values.
    public static let plausibleRange = -(15 * 3600)...(15 * 3600)

    public init?(seconds: Int) {
        guard Self.plausibleRange.contains(seconds) else { return nil }
        self.seconds = seconds
    }

    /// `+HH:MM` or `-HH:MM`.
    public var description: String {
        let sign = seconds < 0 ? "-" : "+"
        let a = abs(seconds) / 60
        return sign + pad(a / 60, 2) + ":" + pad(a % 60, 2)
    }

    /// Parses `+HH:MM`, `-HH:MM`, `+HHMM`, `+HH` and `Z` (EXIF OffsetTime*, XMP and ISO 8601
    /// forms), ignoring trailing NULs and spaces.
    public init?(parsing bytes: some Collection<UInt8>) {
        var b = Array(bytes)
        while let last = b.last, last == 0 || last == 0x20 { b.removeLast() }
        if b == [UInt8(ascii: "Z")] { self.init(seconds: 0); return }
        guard b.count >= 3, b[0] == UInt8(ascii: "+") || b[0] == UInt8(ascii: "-") else { return nil }
        let negative = b[0] == UInt8(ascii: "-")
        guard let h = Digits.value(b, 1, 2) else { return nil }
        var m = 0
        switch b.count {
        case 3: break
        case 5: guard let v = Digits.value(b, 3, 2) else { return nil }; m = v
        case 6: guard b[3] == UInt8(ascii: ":"), let v = Digits.value(b, 4, 2) else { return nil }; m = v
        default: return nil
        }
        guard h <= 15, m < 60 else { return nil }
        self.init(seconds: (negative ? -1 : 1) * (h * 3600 + m * 60))
    }

    public init?(parsing text: String) { self.init(parsing: Array(text.utf8)) }

    public static func < (a: UTCOffset, b: UTCOffset) -> Bool { a.seconds < b.seconds }
}

/// The daemon's rules for turning an instant into a wall-clock offset (its configured time
/// zone). Injected, so that tests pin a zone and the live daemon uses the system's database.
public protocol ZoneRules: Sendable {
    /// The zone's offset east of UTC, in seconds, at an instant in Unix seconds.
    func offsetSeconds(atUnixSeconds: Int64) -> Int
}

/// A zone with one fixed offset (`UTC`, `+09:00`), for tests and for `--timezone +09:00`.
public struct FixedZone: ZoneRules, Hashable {
    public var seconds: Int
    public init(seconds: Int) { self.seconds = seconds }
    public static let utc = FixedZone(seconds: 0)
    public func offsetSeconds(atUnixSeconds: Int64) -> Int { seconds }
}
