/// A time zone's rules as the system's time-zone database holds them: a TZif file (RFC 8536,
/// `/usr/share/zoneinfo/NAME`), its transitions and, for instants after the last one, the POSIX
/// `TZ` rule in its footer. Pure: it is handed the file's bytes (`SystemZones` reads them).
public struct TZifZone: ZoneRules, Hashable {
    /// The zone's name (`Europe/Berlin`), for `library.status`.
    public let identifier: String
    /// Transition instants (Unix seconds), ascending, and the offset in force from each.
    let transitions: [Int64]
    let offsets: [Int32]
    /// The offset before the first transition (the file's first local time type).
    let initial: Int32
    /// The rule after the last transition, when the file has one.
    let rule: POSIXZoneRule?

    /// Parses a TZif file of any version (the 64-bit block of version 2 and later when there is
    /// one); nil for anything else or a damaged file.
    public init?(identifier: String, tzif bytes: [UInt8]) {
        guard let first = TZifBlock(bytes, at: 0, wide: false) else { return nil }
        var block = first
        var footer: POSIXZoneRule?
        if bytes[4] >= 0x32, let wide = TZifBlock(bytes, at: first.end, wide: true) {
            block = wide
            // The footer: a newline, the TZ string, a newline.
            if wide.end < bytes.count, bytes[wide.end] == 0x0A,
               let close = bytes[(wide.end + 1)...].firstIndex(of: 0x0A) {
                footer = POSIXZoneRule(String(decoding: bytes[(wide.end + 1)..<close], as: UTF8.self))
            }
        }
        self.identifier = identifier
        transitions = block.times
        offsets = block.typeIndices.map { block.typeOffsets[Int($0)] }
        initial = block.typeOffsets.first ?? 0
        rule = footer
    }

    /// A zone of one POSIX rule alone (`TZ=CET-1CEST,M3.5.0,M10.5.0/3`).
    public init?(identifier: String, posix: String) {
        guard let rule = POSIXZoneRule(posix) else { return nil }
        self.identifier = identifier
        transitions = []
        offsets = []
        initial = Int32(rule.standard)
        self.rule = rule
    }

    public func offsetSeconds(atUnixSeconds t: Int64) -> Int {
        if let last = transitions.last, t >= last {
            if let rule { return rule.offset(atUnixSeconds: t) }
            return Int(offsets[offsets.count - 1])
        }
        if transitions.isEmpty {
            if let rule { return rule.offset(atUnixSeconds: t) }
            return Int(initial)
        }
        // The last transition at or before t.
        var low = 0, high = transitions.count
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid] <= t { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? Int(initial) : Int(offsets[low - 1])
    }
}

/// One data block of a TZif file: its header's counts, then transitions, their type indices and
/// the types' offsets (leap seconds and designations are skipped).
private struct TZifBlock {
    var times: [Int64] = []
    var typeIndices: [UInt8] = []
    var typeOffsets: [Int32] = []
    /// Where the block ends in the file.
    var end = 0

    init?(_ b: [UInt8], at start: Int, wide: Bool) {
        func be32(_ i: Int) -> Int64 {
            Int64(Int32(bitPattern: UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])))
        }
        guard start + 44 <= b.count, b[start] == 0x54, b[start + 1] == 0x5A, b[start + 2] == 0x69, b[start + 3] == 0x66 else { return nil }
        let counts = (0..<6).map { Int(be32(start + 20 + 4 * $0)) }
        let (isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt) = (counts[0], counts[1], counts[2], counts[3], counts[4], counts[5])
        guard counts.allSatisfy({ $0 >= 0 && $0 < 1 << 20 }), typecnt >= 1 else { return nil }
        let timeSize = wide ? 8 : 4
        var at = start + 44
        let length = timecnt * timeSize + timecnt + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
        guard at + length <= b.count else { return nil }
        for i in 0..<timecnt {
            let p = at + i * timeSize
            times.append(wide ? be32(p) << 32 | (be32(p + 4) & 0xFFFF_FFFF) : be32(p))
        }
        at += timecnt * timeSize
        typeIndices = Array(b[at..<(at + timecnt)])
        guard typeIndices.allSatisfy({ Int($0) < typecnt }) else { return nil }
        at += timecnt
        for i in 0..<typecnt { typeOffsets.append(Int32(truncatingIfNeeded: be32(at + 6 * i))) }
        guard zip(times, times.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        end = start + 44 + length
    }
}

/// A POSIX `TZ` rule (`EST5EDT,M3.2.0,M11.1.0`, `<+0330>-3:30`, `IST-1GMT0,M10.5.0,M3.5.0/1`):
/// a standard offset and, optionally, a daylight one with the rules of its start and end, as
/// TZif footers and the `TZ` variable write them (offsets west of UTC positive; times of day may
/// be negative or past 24 hours, RFC 8536's extension).
public struct POSIXZoneRule: Hashable, Sendable {
    /// Offsets east of UTC, in seconds.
    let standard: Int
    let daylight: Int?
    let start: Day, end: Day
    /// Seconds after local midnight of the rule's day, on the clock then in force.
    let startTime: Int, endTime: Int

    enum Day: Hashable {
        /// `Jn`: day 1...365, February 29 never counted.
        case julian(Int)
        /// `n`: day 0...365, February 29 counted.
        case zeroBased(Int)
        /// `Mm.w.d`: the d-th day of the week (0 Sunday) of week w (5: the last) of month m.
        case month(Int, week: Int, weekday: Int)
    }

    public init?(_ text: String) {
        var s = Substring(text)
        guard Self.name(&s) != nil, let std = Self.time(&s) else { return nil }
        standard = -std
        guard !s.isEmpty else {
            daylight = nil
            (start, end, startTime, endTime) = (.julian(1), .julian(1), 0, 0)
            return
        }
        guard Self.name(&s) != nil else { return nil }
        if let first = s.first, first != ",", let dst = Self.time(&s) {
            daylight = -dst
        } else {
            daylight = standard + 3600
        }
        if s.isEmpty {
            // No rule: the United States' since 2007, as glibc assumes.
            (start, end, startTime, endTime) = (.month(3, week: 2, weekday: 0), .month(11, week: 1, weekday: 0), 7200, 7200)
            return
        }
        guard s.first == "," else { return nil }
        s.removeFirst()
        guard let (a, aTime) = Self.rule(&s), s.first == "," else { return nil }
        s.removeFirst()
        guard let (b, bTime) = Self.rule(&s), s.isEmpty else { return nil }
        (start, end, startTime, endTime) = (a, b, aTime, bTime)
    }

    /// The offset at an instant.
    public func offset(atUnixSeconds t: Int64) -> Int {
        guard let daylight else { return standard }
        // The year on the standard clock; the rules of that year and its neighbours decide near
        // the year's ends.
        let days = Self.floorDiv(t + Int64(standard), 86_400)
        let year = CivilTime.civilFromDays(Int(days)).year
        var inDaylight = false
        var latest = Int64.min
        for y in (year - 1)...(year + 1) {
            let on = Int64(Self.dayNumber(start, year: y)) * 86_400 + Int64(startTime) - Int64(standard)
            let off = Int64(Self.dayNumber(end, year: y)) * 86_400 + Int64(endTime) - Int64(daylight)
            // An equal instant counts as the start: a rule of daylight all year (`J365/25` ending
            // where the next year's start begins) stays in daylight.
            if on <= t, on >= latest { latest = on; inDaylight = true }
            if off <= t, off > latest { latest = off; inDaylight = false }
        }
        return inDaylight ? daylight : standard
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

    /// Days since 1970-01-01 of the rule's day in `year`.
    static func dayNumber(_ day: Day, year: Int) -> Int {
        let january1 = CivilTime.daysFromCivil(year: year, month: 1, day: 1)
        switch day {
        case .julian(let n):
            let leap = CivilTime.daysInMonth(year: year, month: 2) == 29
            return january1 + n - 1 + (leap && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            return january1 + n
        case .month(let m, let week, let weekday):
            let first = CivilTime.daysFromCivil(year: year, month: m, day: 1)
            // 1970-01-01 was a Thursday (4).
            let firstWeekday = ((first % 7) + 7 + 4) % 7
            var day = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let last = first + CivilTime.daysInMonth(year: year, month: m) - 1
            while day > last { day -= 7 }
            return day
        }
    }

    /// A zone abbreviation: letters, or anything but `>` between angle brackets.
    static func name(_ s: inout Substring) -> Substring? {
        if s.first == "<" {
            guard let close = s.firstIndex(of: ">") else { return nil }
            let name = s[s.index(after: s.startIndex)..<close]
            s = s[s.index(after: close)...]
            return name.count >= 1 ? name : nil
        }
        let letters = s.prefix { $0.isASCII && $0.isLetter }
        guard letters.count >= 3 else { return nil }
        s = s[letters.endIndex...]
        return letters
    }

    /// `[+-]hh[:mm[:ss]]` in seconds; hours up to 167 (RFC 8536).
    static func time(_ s: inout Substring) -> Int? {
        var sign = 1
        if let c = s.first, c == "+" || c == "-" {
            sign = c == "-" ? -1 : 1
            s.removeFirst()
        }
        var parts: [Int] = []
        while parts.count < 3 {
            let digits = s.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 3, let n = Int(digits) else { return nil }
            parts.append(n)
            s = s[digits.endIndex...]
            guard s.first == ":" else { break }
            s.removeFirst()
        }
        guard let h = parts.first, h <= 167, parts.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
        return sign * (h * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0))
    }

    /// A rule's day and `/time` (02:00 when absent).
    static func rule(_ s: inout Substring) -> (Day, Int)? {
        func number() -> Int? {
            let digits = s.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 3 else { return nil }
            s = s[digits.endIndex...]
            return Int(digits)
        }
        let day: Day
        switch s.first {
        case "J":
            s.removeFirst()
            guard let n = number(), (1...365).contains(n) else { return nil }
            day = .julian(n)
        case "M":
            s.removeFirst()
            guard let m = number(), (1...12).contains(m), s.first == "." else { return nil }
            s.removeFirst()
            guard let w = number(), (1...5).contains(w), s.first == "." else { return nil }
            s.removeFirst()
            guard let d = number(), (0...6).contains(d) else { return nil }
            day = .month(m, week: w, weekday: d)
        default:
            guard let n = number(), (0...365).contains(n) else { return nil }
            day = .zeroBased(n)
        }
        var time = 7200
        if s.first == "/" {
            s.removeFirst()
            guard let t = Self.time(&s) else { return nil }
            time = t
        }
        return (day, time)
    }
}
