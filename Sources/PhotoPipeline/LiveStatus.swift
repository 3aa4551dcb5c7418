import PhotoModel
import PhotoWatch

/// How the live loop keeps the index current.
public struct LiveOptions: Sendable {
    /// How often trees that cannot be watched (network and FUSE file systems, directories
    /// beyond the watch budget) are compared with the index: a stat walk, no re-reads.
    public var pollInterval: Duration = .seconds(300)
    /// How often every root and mount is rechecked when the mount table is not watched.
    public var mountRecheckInterval: Duration = .seconds(30)
    /// How often an unavailable root or mount is checked for its return (besides at every
    /// change of the mount table).
    public var rootRecheckInterval: Duration = .seconds(2)
    /// How long assets stay in Recently Deleted before they are purged (Unix milliseconds).
    public var retentionMilliseconds: Int64 = 30 * 86_400_000
    /// The roots whose trashed files the purge unlinks (`--trash-root`); the assets whose
    /// trashed files lie elsewhere stay in Recently Deleted (photod writes nothing there).
    public var trashRoots: Set<PathBytes> = []
    /// Tests only (`PHOTOD_TEST_HOOKS=1` with `PHOTOD_TEST_CRASH_AFTER_RENAMES=N`): a trash call
    /// ends the process after N renames of an asset's files (`LibraryTrash.crashAfterRenames`).
    public var trashCrashAfterRenames: Int?
    /// Tests only (`PHOTOD_TEST_CRASH_AFTER_UNLINKS=N`): a delete for good ends the process after
    /// N unlinks of an asset's trashed files (`LibraryTrash.crashAfterUnlinks`).
    public var trashCrashAfterUnlinks: Int?
    /// How often the purge runs (and the change journal is pruned).
    public var purgeInterval: Duration = .seconds(3_600)
    /// The change journal keeps at most this many change sets, and none older than
    /// `journalMaxAgeMilliseconds` (the newest is always kept): older tokens get `tokenExpired`.
    public var journalMaxChanges = 100_000
    public var journalMaxAgeMilliseconds: Int64 = 30 * 86_400_000
    /// The watch budget (default: the user's limit minus a reserve for other programs).
    public var watchLimits: WatchLimits = .system()
    /// Changes waiting beyond this are dropped in favour of a full rescan (which finds them
    /// all): memory stays bounded when changes arrive faster than they are applied.
    public var maxQueuedChanges = 200_000

    public init() {}
}

/// What the live loop reports in `library.status`.
public struct LiveStatus: Sendable, Hashable {
    /// The inotify descriptor could not be opened: every root is polled (the reason).
    public var watchError: String?
    /// Directories watched.
    public var watches = 0
    /// The watch budget.
    public var watchBudget = 0
    /// The user's kernel limit (`fs.inotify.max_user_watches`), when readable.
    public var systemWatchLimit: Int?
    /// Trees left unwatched because the budget ran out or the kernel refused: polled.
    public var unwatchedTrees: [PathBytes] = []
    /// Trees on network or FUSE file systems: polled.
    public var networkTrees: [PathBytes] = []
    /// Changes received and not yet applied.
    public var pendingChanges = 0
    /// Changes applied since the start.
    public var appliedChanges = 0
    /// The mount table cannot be watched (the reason): mounts are rechecked at intervals only.
    public var mountWatchError: String?
    /// Changes of the mount table seen.
    public var mountChanges = 0
    /// Event-queue overflows (each followed by a full rescan).
    public var overflows = 0
    /// Times more than `LiveOptions.maxQueuedChanges` waited and were dropped for a full rescan.
    public var backlogRescans = 0
    /// Polls run.
    public var polls = 0
    /// Whether the initial scan has finished.
    public var started = false
    /// Applying changes, polling or rescanning right now.
    public var busy = false

    public init() {}
}
