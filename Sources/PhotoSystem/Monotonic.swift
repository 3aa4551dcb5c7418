#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock (`CLOCK_MONOTONIC`), as plain nanoseconds: for rates and intervals kept
/// in value types (a `ContinuousClock.Instant` cannot be stored in a `Hashable` status or
/// faked in a test).
public enum Monotonic {
    /// Nanoseconds since an arbitrary point (the boot).
    public static var nanoseconds: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
