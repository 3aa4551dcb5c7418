import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// What a process asks of the system that Foundation used to answer (photod's daemon imports
/// no Foundation: its static binary would carry ICU's data): the wall clock, the environment,
/// the processors it may use, a plain sleep.
public enum WallClock {
    /// Unix time in milliseconds.
    public static func milliseconds() -> Int64 { nanoseconds() / 1_000_000 }

    /// Unix time in nanoseconds.
    public static func nanoseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
}

public enum ProcessEnvironment {
    /// The process's environment variables (the first of a name given twice).
    public static var current: [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                let name = String(text[..<eq])
                if out[name] == nil { out[name] = String(text[text.index(after: eq)...]) }
            }
            p += 1
        }
        return out
    }

    /// The processors this process may run on (its affinity mask, at most its cgroup's CPU quota).
    public static var processorCount: Int { Int(photo_processor_count()) }
}

/// The process's heap.
public enum Heap {
    /// Returns the free pages of every malloc arena to the kernel (`malloc_trim`): what a
    /// daemon at rest no longer needs. Returns whether there were any.
    @discardableResult
    public static func returnFreePages() -> Bool { photo_malloc_trim() == 1 }

    /// The process's resident memory in bytes (`/proc/self/statm`), nil when it cannot be read.
    public static func residentBytes() -> Int64? {
        guard let bytes = try? FileDescriptor.readAll("/proc/self/statm", limit: 4096) else { return nil }
        let fields = bytes.split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// Sleeps the calling thread for `seconds` (a fraction allowed; interrupted sleeps go on).
public func sleepThread(seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
}

/// Writes a line to standard error as is (no buffering: before an exit).
public func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 { if errno == EINTR { continue }; return }
        offset += n
    }
}
