/// A capture-time candidate: a wall-clock time and, when the source says so, its offset.
public struct Timestamp: Sendable, Hashable, CustomStringConvertible {
    public var local: LocalDateTime
    public var offset: UTCOffset?

    public init(local: LocalDateTime, offset: UTCOffset? = nil) {
        self.local = local
        self.offset = offset
    }

    /// The instant in Unix seconds, when the offset is known.
    public var unixSeconds: Int64? { offset.map { local.unixSeconds(offsetSeconds: $0.seconds) } }

    public var description: String { local.description + (offset?.description ?? "") }

    /// Parses an EXIF date-time (`YYYY:MM:DD HH:MM:SS`) with its companion sub-second digits
    /// (`SubSecTime*`: `"054"` is .054 s) and offset (`OffsetTime*`). Also accepts `-` as the
    /// date separator and `T` between date and time, which some writers use. Returns `nil` for
    /// blank, zero (`0000:00:00 00:00:00`) or out-of-range values.
    public static func exif(_ dateTime: [UInt8], subSeconds: [UInt8]? = nil, offset: [UInt8]? = nil) -> Timestamp? {
        let b = dateTime
        guard b.count >= 19 else { return nil }
        let dsep = b[4]
        guard dsep == UInt8(ascii: ":") || dsep == UInt8(ascii: "-"), b[7] == dsep,
              b[10] == UInt8(ascii: " ") || b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let y = Digits.value(b, 0, 4), let mo = Digits.value(b, 5, 2), let d = Digits.value(b, 8, 2),
              let h = Digits.value(b, 11, 2), let mi = Digits.value(b, 14, 2), let s = Digits.value(b, 17, 2)
        else { return nil }
        var ms: Int?
        var inlineOffset: UTCOffset?
        var rest = b[19...].prefix { $0 != 0 }
        // Some writers append fractional seconds or a zone to the date itself.
        if rest.first == UInt8(ascii: ".") {
            let digits = rest.dropFirst().prefix(while: Digits.isDigit)
            ms = millis(digits)
            rest = rest.dropFirst(1 + digits.count)
        }
        while rest.first == 0x20 { rest = rest.dropFirst() }
        if !rest.isEmpty { inlineOffset = UTCOffset(parsing: rest) }
        if let sub = subSeconds {
            let digits = sub.drop { $0 == 0x20 }.prefix { $0 != 0 && $0 != 0x20 }
            if !digits.isEmpty, digits.allSatisfy(Digits.isDigit) { ms = millis(digits) }
        }
        guard let local = LocalDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms)
        else { return nil }
        let parsedOffset = offset.flatMap { UTCOffset(parsing: $0) } ?? inlineOffset
        return Timestamp(local: local, offset: parsedOffset)
    }

    /// Parses an ISO 8601 / XMP date (`2019-05-04T13:22:10.5+02:00`, `2019-05-04T13:22:10Z`,
    /// `2019-05-04T13:22`, `2019-05-04`), the form XMP and QuickTime metadata keys use.
    public static func iso8601(_ text: [UInt8]) -> Timestamp? {
        var b = text
        while let last = b.last, last == 0 || last == 0x20 { b.removeLast() }
        guard b.count >= 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let y = Digits.value(b, 0, 4), let mo = Digits.value(b, 5, 2), let d = Digits.value(b, 8, 2)
        else { return nil }
        var h = 0, mi = 0, s = 0
        var ms: Int?
        var i = 10
        if i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " ") {
            guard let hh = Digits.value(b, i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"),
                  let mm = Digits.value(b, i + 4, 2) else { return nil }
            h = hh; mi = mm; i += 6
            if i < b.count, b[i] == UInt8(ascii: ":") {
                guard let ss = Digits.value(b, i + 1, 2) else { return nil }
                s = ss; i += 3
                if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
                    let digits = b[(i + 1)...].prefix(while: Digits.isDigit)
                    ms = millis(digits)
                    i += 1 + digits.count
                }
            }
        }
        var offset: UTCOffset?
        if i < b.count {
            guard let o = UTCOffset(parsing: b[i...]) else { return nil }
            offset = o
        }
        guard let local = LocalDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms)
        else { return nil }
        return Timestamp(local: local, offset: offset)
    }

    public static func iso8601(_ text: String) -> Timestamp? { iso8601(Array(text.utf8)) }

    /// Milliseconds from a run of fraction digits (`"5"` → 500, `"023460"` → 23).
    static func millis(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty else { return nil }
        var v = 0
        for (k, c) in digits.prefix(3).enumerated() where Digits.isDigit(c) { v += Int(c - 0x30) * [100, 10, 1][k] }
        return v
    }
}
