import PhotoModel
import PhotoSystem

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
    /// Directories below the roots that the last walk of them could not open or list
    /// (permissions, a path longer than `PATH_MAX`), with the reason; at most
    /// `maxUnreadableDirectories` (`unreadableDirectoriesOmitted` counts the rest). Nothing
    /// below them is indexed or removed until they can be read.
    public var unreadableDirectories: [PathBytes: String] = [:]
    public var unreadableDirectoriesOmitted = 0
    public static let maxUnreadableDirectories = 1000
    /// Files whose last read failed on an I/O error (the disk, not the content), with the
    /// reason: an indexed one keeps its row and asset as they were, a new one is an error row;
    /// both are read again at the next change or scan. At most `maxUnreadableDirectories`.
    public var unreadableFiles: [PathBytes: String] = [:]

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
    /// Whether the walk has seen every directory (`files` and `toRead` are final); until then
    /// they grow, since the walk runs ahead of the readers.
    public var walkFinished = false
    /// A first index's census (`Census`): the files it will read, counted ahead of the walk;
    /// nil when none runs (the index had files: only what changed is read).
    public var counted: Int?
    /// Whether the census has listed every directory.
    public var countFinished = false

    /// What the scan expects to read in all: the census's count on a first index, what the
    /// walk found so far otherwise.
    public var expectedToRead: Int { max(toRead, counted ?? 0) }
    /// Whether `expectedToRead` is final (the walk or the census is done); else it is a lower
    /// bound.
    public var expectationFinal: Bool { walkFinished || countFinished }
    /// When the scan began, and what had been committed when: for the rate and the time left.
    public var startedNanoseconds: UInt64
    private var samples: [Sample] = []

    /// The committed count at one moment (monotonic nanoseconds).
    struct Sample: Sendable, Hashable {
        var nanoseconds: UInt64
        var committed: Int
    }

    /// The rate is measured over about this much of the recent past: it follows a change of
    /// pace (a slow disk, a folder of large files) within seconds.
    public static let rateWindowNanoseconds: UInt64 = 10_000_000_000

    public init(startedNanoseconds: UInt64 = Monotonic.nanoseconds) {
        self.startedNanoseconds = startedNanoseconds
    }

    /// Records `files` more committed at `nanoseconds`.
    public mutating func noteCommitted(_ files: Int, at nanoseconds: UInt64 = Monotonic.nanoseconds) {
        committed += files
        // One sample per 100 ms at most, none older than the window and its predecessor.
        if let last = samples.last, nanoseconds &- last.nanoseconds < 100_000_000 {
            samples[samples.count - 1].committed = committed
        } else {
            samples.append(Sample(nanoseconds: nanoseconds, committed: committed))
        }
        while samples.count > 2, nanoseconds &- samples[1].nanoseconds > Self.rateWindowNanoseconds { samples.removeFirst() }
    }

    /// Files read and committed per second over the recent window; nil until a second of
    /// commits shows the pace.
    public func filesPerSecond(at nanoseconds: UInt64 = Monotonic.nanoseconds) -> Double? {
        // Before the first sample the scan's start is the origin (committed 0 then).
        let origin = samples.count > 1 && nanoseconds &- samples[0].nanoseconds > Self.rateWindowNanoseconds
            ? samples[0] : Sample(nanoseconds: startedNanoseconds, committed: 0)
        let span = Double(nanoseconds &- origin.nanoseconds) / 1e9
        guard span >= 1, committed > origin.committed || span >= 5 else { return nil }
        return Double(committed - origin.committed) / span
    }

    /// Seconds until what is expected to be read is committed, at the recent rate; nil when the
    /// rate is not known yet. A lower bound until `expectationFinal`.
    public func secondsLeft(at nanoseconds: UInt64 = Monotonic.nanoseconds) -> Double? {
        guard let rate = filesPerSecond(at: nanoseconds), rate > 0 else { return nil }
        return Double(max(0, expectedToRead - committed)) / rate
    }

    /// Seconds since the scan began.
    public func elapsedSeconds(at nanoseconds: UInt64 = Monotonic.nanoseconds) -> Double {
        Double(nanoseconds &- startedNanoseconds) / 1e9
    }
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
    /// New or changed files another process held open for writing: not read now, but when the
    /// writer closes them (the watcher sees the close) or at the next poll or scan.
    public var busyFiles: Int
    /// Wall time from the scan's start to its last commit.
    public var seconds: Double
    /// When it finished, in Unix milliseconds.
    public var finishedAt: Int64

    public init(files: Int, readFiles: Int, removedFiles: Int, removedDirectories: Int, movedFiles: Int = 0,
                movedDirectories: Int = 0, restoredFiles: Int = 0, errors: Int, busyFiles: Int = 0, seconds: Double,
                finishedAt: Int64) {
        self.files = files
        self.readFiles = readFiles
        self.removedFiles = removedFiles
        self.removedDirectories = removedDirectories
        self.movedFiles = movedFiles
        self.movedDirectories = movedDirectories
        self.restoredFiles = restoredFiles
        self.errors = errors
        self.busyFiles = busyFiles
        self.seconds = seconds
        self.finishedAt = finishedAt
    }
}
