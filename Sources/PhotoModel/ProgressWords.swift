/// How photod says a scan's progress to a person: `photoctl status` and the service's `STATUS=`
/// line use the same words ("12,400 of 50,000+ files read, 1,900 files/s, about 20 s left").
public enum ProgressWords {
    /// `n` with thousands separators: 1,234,567.
    public static func grouped(_ n: Int64) -> String {
        let digits = String(n.magnitude)
        var out = n < 0 ? "-" : ""
        for (k, c) in digits.enumerated() {
            if k > 0, (digits.count - k) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }

    /// A running scan: what has been read of what was found to read (with `+` while the walk
    /// still finds files), the recent rate and the time left at it, when they are known.
    public static func scan(read: Int, toRead: Int, walkFinished: Bool, filesPerSecond: Double?,
                            secondsLeft: Double?) -> String {
        var words = "\(grouped(Int64(read))) of \(grouped(Int64(max(read, toRead))))\(walkFinished ? "" : "+") files read"
        if let rate = filesPerSecond { words += ", \(grouped(Int64(rate.rounded()))) files/s" }
        if let left = secondsLeft, read < toRead || !walkFinished {
            words += walkFinished ? ", about \(duration(left)) left" : ", at least \(duration(left)) left"
        }
        return words
    }

    /// A duration rounded to what a person needs: "8 s", "3 min", "1 h 20 min", "2 d 5 h".
    public static func duration(_ seconds: Double) -> String {
        let s = Int64(max(0, seconds.rounded(.up)))
        switch s {
        case ..<60: return "\(s) s"
        case ..<3_600: return "\((s + 30) / 60) min"
        case ..<86_400:
            let minutes = (s + 30) / 60
            return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
        default:
            let hours = (s + 1_800) / 3_600
            return hours % 24 == 0 ? "\(hours / 24) d" : "\(hours / 24) d \(hours % 24) h"
        }
    }
}
