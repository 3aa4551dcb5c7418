/// Capture dates that cameras, phones and tools write into file names:
/// `IMG_20190504_132210.jpg`, `VID_20190504_132210.mp4`, `PXL_20230101_101010123.jpg`,
/// `20190504_132210.jpg`, `IMG-20190504-WA0001.jpg` (a date only),
/// `Screenshot_20230504-132210.png`, `Screenshot 2023-05-04 at 13.22.10.png`,
/// `Screenshot from 2023-05-04 13-22-10.png`, `2019-05-04 13.22.10.jpg`,
/// `WhatsApp Image 2021-03-04 at 10.11.12.jpeg`.
///
/// The time is a wall time with no zone. A date without a time is taken at midnight.
/// Years outside 1990–2099 are ignored, so that counters and hashes are not read as dates.
public enum FileNameDate {
    static let years = 1990...2099

    /// The first plausible date (and time) in a file name; `nil` when there is none.
    public static func parse(_ name: [UInt8]) -> LocalDateTime? {
        // Only the base name: a dated folder is not the file's date.
        let base = name.lastIndex(of: UInt8(ascii: "/")).map { Array(name[($0 + 1)...]) } ?? name
        var i = 0
        while i < base.count {
            guard Digits.isDigit(base[i]), i == 0 || !Digits.isDigit(base[i - 1]) else { i += 1; continue }
            let run = digitRun(base, i)
            if let found = date(base, at: i, run: run) { return found }
            i += max(run, 1)
        }
        return nil
    }

    static func digitRun(_ b: [UInt8], _ i: Int) -> Int {
        var j = i
        while j < b.count, Digits.isDigit(b[j]) { j += 1 }
        return j - i
    }

    static func isDateSeparator(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ".")
    }

    static func date(_ b: [UInt8], at i: Int, run: Int) -> LocalDateTime? {
        var y = 0, m = 0, d = 0, next = 0
        if run == 8 || run == 14 || run == 17 {
            y = Digits.value(b, i, 4)!; m = Digits.value(b, i + 4, 2)!; d = Digits.value(b, i + 6, 2)!
            next = i + 8
        } else if run == 4, i + 10 <= b.count, isDateSeparator(b[i + 4]), b[i + 7] == b[i + 4],
                  let mm = Digits.value(b, i + 5, 2), let dd = Digits.value(b, i + 8, 2),
                  i + 10 == b.count || !Digits.isDigit(b[i + 10]) {
            y = Digits.value(b, i, 4)!; m = mm; d = dd
            next = i + 10
        } else {
            return nil
        }
        guard years.contains(y), let day = LocalDateTime(year: y, month: m, day: d) else { return nil }
        return time(b, from: next, compact: run >= 14) .flatMap {
            LocalDateTime(year: y, month: m, day: d, hour: $0.h, minute: $0.m, second: $0.s, millisecond: $0.ms)
        } ?? day
    }

    /// A time right after the date: `HHMMSS[mmm]`, or `HH.MM.SS` / `HH-MM-SS` / `HH:MM:SS`,
    /// after up to one separator or the word `at`.
    static func time(_ b: [UInt8], from start: Int, compact: Bool) -> (h: Int, m: Int, s: Int, ms: Int?)? {
        var j = start
        if !compact {
            let at: [UInt8] = Array(" at ".utf8)
            if j + 4 <= b.count, Array(b[j..<(j + 4)]) == at {
                j += 4
            } else if j < b.count, [UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "T")].contains(b[j]) {
                j += 1
            } else {
                return nil
            }
        }
        let run = digitRun(b, j)
        if run == 6 || run == 9 {
            guard let h = Digits.value(b, j, 2), let mi = Digits.value(b, j + 2, 2), let s = Digits.value(b, j + 4, 2)
            else { return nil }
            return (h, mi, s, run == 9 ? Digits.value(b, j + 6, 3) : nil)
        }
        guard run == 2, j + 8 <= b.count else { return nil }
        let sep = b[j + 2]
        guard sep == UInt8(ascii: ".") || sep == UInt8(ascii: ":") || sep == UInt8(ascii: "-") || sep == UInt8(ascii: "_"),
              b[j + 5] == sep, let h = Digits.value(b, j, 2), let mi = Digits.value(b, j + 3, 2),
              let s = Digits.value(b, j + 6, 2), j + 8 == b.count || !Digits.isDigit(b[j + 8])
        else { return nil }
        return (h, mi, s, nil)
    }
}
