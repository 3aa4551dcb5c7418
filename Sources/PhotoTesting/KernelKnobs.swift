import Foundation

/// `fs.inotify.max_queued_events`, lowered for a moment by the tests that need the kernel's
/// event queue to overflow. The setting is the whole machine's and the tests of every target run
/// in one process: one test at a time may change it (two at once would restore each other's
/// value, or leave 16 behind).
public enum InotifyQueueKnob {
    public static let path = "/proc/sys/fs/inotify/max_queued_events"
    private static let lock = NSLock()

    /// Whether this process may change it (root, a writable /proc/sys).
    public static var canLower: Bool { geteuid() == 0 && FileManager.default.isWritableFile(atPath: path) }

    /// Sets it to `value` while `body` runs, then back to what it was: an inotify instance made
    /// in `body` keeps the small queue (its length is fixed when it is created).
    public static func lowered<R>(to value: Int, _ body: () throws -> R) throws -> R {
        lock.lock()
        defer { lock.unlock() }
        let original = try String(contentsOfFile: path, encoding: .utf8)
        try "\(value)\n".write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? original.write(toFile: path, atomically: false, encoding: .utf8) }
        return try body()
    }
}
