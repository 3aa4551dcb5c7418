#if canImport(Glibc)
import Glibc
#endif

/// A limit on the CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`), for decoders
/// that work in steps (TIFF bands, GIF rows, LibRaw's stages): each step asks `expired`, and a
/// decode past the limit stops with `.timedOut`. A decode runs on one thread from start to end,
/// so the thread's clock is the decode's.
struct CPUDeadline {
    /// The thread CPU time, in nanoseconds, past which the decode gives up (`Int64.max`: none).
    let limit: Int64
    let milliseconds: Int64

    /// A deadline `milliseconds` of CPU time from now; 0 or less: none.
    init(milliseconds: Int64) {
        self.milliseconds = milliseconds
        limit = milliseconds > 0 ? Self.now() &+ milliseconds * 1_000_000 : Int64.max
    }

    /// Whether the thread has used its time.
    var expired: Bool { Self.now() > limit }

    /// The error of a decode stopped by this deadline.
    func error(_ what: String) -> ImageError {
        .timedOut("\(what): the decode used more than \(milliseconds) ms of CPU time")
    }

    static func now() -> Int64 {
        var ts = timespec()
        // Cannot fail for this clock on Linux; a zero time would only make the limit later.
        _ = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
