#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem

/// The watcher's named limits.
public struct WatchLimits: Sendable, Hashable {
    /// Watches this watcher adds at most (one per directory). Directories beyond it are
    /// reported `unwatched` (to be polled). The system default leaves a reserve of the user's
    /// `fs.inotify.max_user_watches` to other programs.
    public var maxWatches: Int
    /// Bytes read from the inotify descriptor per `read` (64 KiB: about 2,000 records).
    public var readBufferBytes: Int

    /// Explicit limits (tests use a tiny `maxWatches`).
    public init(maxWatches: Int, readBufferBytes: Int = 64 << 10) {
        precondition(readBufferBytes >= 16 + 256, "the buffer must hold at least one record with the longest name")
        self.maxWatches = maxWatches
        self.readBufferBytes = readBufferBytes
    }

    /// `/proc/sys/fs/inotify/max_user_watches` minus `reserve(forUserLimit:)`; 8,192 (the
    /// kernel's historical default) when the file cannot be read.
    public static func system() -> WatchLimits {
        let limit = systemMaxUserWatches() ?? 8_192
        return WatchLimits(maxWatches: max(1, limit - reserve(forUserLimit: limit)))
    }

    /// Watches left to other programs of the same user (desktop indexers, editors, `tail -f`):
    /// a tenth of the limit, at least 1,000, at most half of it.
    public static func reserve(forUserLimit limit: Int) -> Int {
        min(max(1_000, limit / 10), limit / 2)
    }

    /// The kernel's per-user watch limit (`fs.inotify.max_user_watches`), when readable.
    public static func systemMaxUserWatches() -> Int? {
        readProcInteger("/proc/sys/fs/inotify/max_user_watches")
    }

    /// The kernel's per-instance event queue length (`fs.inotify.max_queued_events`), when readable.
    public static func systemMaxQueuedEvents() -> Int? {
        readProcInteger("/proc/sys/fs/inotify/max_queued_events")
    }

    static func readProcInteger(_ path: PathBytes) -> Int? {
        guard let fd = try? FileDescriptor.open(path) else { return nil }
        return fd.closeAfter { fd -> Int? in
            var bytes = [UInt8](repeating: 0, count: 32)
            let n = bytes.withUnsafeMutableBytes { (try? fd.read(into: $0, at: 0)) ?? 0 }
            let text = String(decoding: bytes[..<n], as: UTF8.self).trimmingWhitespace()
            return Int(text)
        }
    }
}

/// What `watchTree` (or a retry) did.
public struct WatchTreeReport: Sendable, Hashable {
    /// Directories that got a new watch.
    public var watched: Int = 0
    /// Directories that were watched already.
    public var alreadyWatched: Int = 0
    /// Directories holding `.nomedia`: watched themselves (to see `.nomedia` go), nothing below.
    public var noMedia: Int = 0
    /// Trees that could not be watched because the budget ran out or the kernel refused
    /// (`ENOSPC`): poll them. Each path stands for the directory and everything below it.
    public var unwatched: [PathBytes] = []
    /// Trees on network or FUSE file systems (NFS, CIFS/SMB, 9p, FUSE), where inotify misses
    /// changes made elsewhere: not watched; poll them.
    public var networkOrFUSE: [PathBytes] = []
    /// Directories that could not be opened, listed or watched for another reason
    /// (permissions): neither watched nor polled; the log says why.
    public var unreadable: [PathBytes] = []

    /// An empty report.
    public init() {}

    /// Adds another report's counts and lists.
    public mutating func merge(_ other: WatchTreeReport) {
        watched += other.watched
        alreadyWatched += other.alreadyWatched
        noMedia += other.noMedia
        unwatched += other.unwatched
        networkOrFUSE += other.networkOrFUSE
        unreadable += other.unreadable
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
