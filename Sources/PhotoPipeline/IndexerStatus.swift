import PhotoModel
import PhotoWatch

/// The pipeline's progress, as `library.status` and `STATUS=` report it.
public struct IndexerStatus: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        /// A scan is running or batches are waiting to be committed.
        case indexing
        /// Nothing to do: the index matches the disk as last seen.
        case idle
    }

    public var state: State = .idle
    /// Scans announced but not started yet.
    public var queuedScans = 0
    /// The running scan, when there is one.
    public var current: ScanProgress?
    /// The last finished scan.
    public var lastScan: ScanReport?
    /// Roots that could not be scanned (missing, unreadable, unmounted: `MountGuard`), with the
    /// reason.
    public var unavailableRoots: [PathBytes: String] = [:]
    /// Mount points below available roots whose file system is not there (an unmounted second
    /// disk, a share gone away), with the reason: nothing below them is removed or read.
    public var unavailableMounts: [PathBytes: String] = [:]

    /// Every tree nothing below which may be touched: the unavailable roots and mounts.
    public var unavailableTrees: Set<PathBytes> { Set(unavailableRoots.keys).union(unavailableMounts.keys) }

    /// The unavailable mounts below a directory that moved, under their new paths.
    public mutating func rebaseMounts(from: PathBytes, to: PathBytes) {
        for (path, reason) in unavailableMounts where path.isWithin(from) {
            unavailableMounts[path] = nil
            unavailableMounts[Coalescer.rebase(path, from: from, to: to)] = reason
        }
    }
    /// Directories below the roots that the last walk of them could not open or list
    /// (permissions, a path longer than `PATH_MAX`), with the reason; at most
    /// `maxUnreadableDirectories` (`unreadableDirectoriesOmitted` counts the rest). Nothing
    /// below them is indexed or removed until they can be read.
    public var unreadableDirectories: [PathBytes: String] = [:]
    public var unreadableDirectoriesOmitted = 0
    public static let maxUnreadableDirectories = 1000

    public init() {}
}

/// Counters of a scan in progress.
public struct ScanProgress: Sendable, Hashable {
    /// Regular files seen so far.
    public var files = 0
    /// Files found new or changed (to be read).
    public var toRead = 0
    /// Files whose outcome has been committed.
    public var committed = 0
    /// Directories visited.
    public var directories = 0
    public init() {}
}

/// The figures of a finished scan.
public struct ScanReport: Sendable, Hashable {
    /// Regular files seen below the roots (dot-files and `.nomedia` trees excluded).
    public var files: Int
    /// Files read (new or changed); 0 when nothing changed.
    public var readFiles: Int
    /// Files and directories removed from the index because they vanished (their assets went to
    /// Recently Deleted).
    public var removedFiles: Int
    public var removedDirectories: Int
    /// Files and directories found moved since the index saw them (ids kept, nothing read).
    public var movedFiles: Int
    public var movedDirectories: Int
    /// Files found again whose assets were in Recently Deleted (restored, nothing read).
    public var restoredFiles: Int
    /// Per-file errors recorded in this scan.
    public var errors: Int
    /// Wall time from the scan's start to its last commit.
    public var seconds: Double
    /// When it finished, in Unix milliseconds.
    public var finishedAt: Int64

    public init(files: Int, readFiles: Int, removedFiles: Int, removedDirectories: Int, movedFiles: Int = 0,
                movedDirectories: Int = 0, restoredFiles: Int = 0, errors: Int, seconds: Double, finishedAt: Int64) {
        self.files = files
        self.readFiles = readFiles
        self.removedFiles = removedFiles
        self.removedDirectories = removedDirectories
        self.movedFiles = movedFiles
        self.movedDirectories = movedDirectories
        self.restoredFiles = restoredFiles
        self.errors = errors
        self.seconds = seconds
        self.finishedAt = finishedAt
    }
}
