import Dispatch
import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWatch

/// Keeps the index current once it is built: one thread that watches the roots and runs the
/// initial scan, then applies what the watcher reports (`LiveApply`), polls the trees it cannot
/// watch, rechecks the trees that went away (at once when the mount table changes), adopts, and
/// purges Recently Deleted (`LiveTrees` for whatever concerns whole trees). Everything it changes
/// goes through the sort queue, so every change lands in the journal.
///
/// Idle it makes no wake-ups but an hourly purge check, plus one every `pollInterval` when trees
/// are polled and every `rootRecheckInterval` while a root or mount is unavailable.
public final class LiveLoop: Service {
    /// How an adoption ended.
    public enum AdoptionResult: Sendable {
        case adopted(ScanReport)
        case failed(String)
    }

    let context: LiveContext
    let inbox: LiveInbox
    let mountWatcher: MountWatcher?
    let clock: any LoopClock
    /// Wall-clock Unix milliseconds (the purge's cutoff).
    let wallClock: @Sendable () -> Int64
    private let treeWork: LiveTrees
    private let applier: LiveApply
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - inbox: where the watchers' reports arrive (the watcher's `onChanges` hands them to it).
    ///   - watcher: the inotify watcher (started before the loop); nil when inotify cannot be
    ///     used (`watchError` says why): every root is then polled.
    ///   - mountWatcher: reports changes of the mount table to `inbox`; nil when it cannot be
    ///     watched (`mountWatchError` says why): every tree is rechecked at intervals.
    ///   - clock: what the loop's timing reads and waits on.
    public init(indexer: Indexer, sortQueue: SortQueue, trees: Trees, inbox: LiveInbox, roots: [PathBytes],
                watcher: InotifyWatcher?, watchError: String? = nil, mountWatcher: MountWatcher?, mountWatchError: String? = nil,
                options: LiveOptions = LiveOptions(), logger: Logger, clock: any LoopClock = SystemLoopClock(),
                wallClock: @escaping @Sendable () -> Int64 = { WallClock.milliseconds() }) {
        context = LiveContext(roots: roots, indexer: indexer, sortQueue: sortQueue, trees: trees, watcher: watcher,
                              options: options, logger: logger)
        self.inbox = inbox
        self.mountWatcher = mountWatcher
        self.clock = clock
        self.wallClock = wallClock
        treeWork = LiveTrees(context: context)
        applier = LiveApply(context: context, treeWork: treeWork, now: { clock.now })
        context.status.withLock {
            $0.watchError = watchError
            $0.mountWatchError = mountWatchError
            $0.watchBudget = options.watchLimits.maxWatches
            $0.systemWatchLimit = WatchLimits.systemMaxUserWatches()
        }
        if let watchError { logger.error(watchError) }
        if let mountWatchError { logger.warning(mountWatchError) }
    }

    /// Starts the thread: the initial watches and scan, then the changes.
    public func start() {
        spawnThread("photod-live") { [self] in
            run()
            finished.signal()
        }
    }

    /// Stops a running scan at the next directory, stops taking changes, and waits until what
    /// was read is committed.
    public func stop() {
        context.stop()
        inbox.close()
        context.indexer.requestStop()
        finished.wait()
        finished.signal()
        context.settle()
    }

    /// A copy of the status, with the watchers' current counts.
    public var status: LiveStatus {
        var s = context.status.withLock { $0 }
        let counts = inbox.counts
        s.pendingChanges = counts.pending
        s.backlogRescans = counts.backlogRescans
        s.mountChanges = counts.mountChanges
        if let failure = mountWatcher?.failure { s.mountWatchError = failure }
        if let watcher = context.watcher {
            s.watches = watcher.watchedCount
            s.unwatchedTrees = watcher.unwatchedTrees
            s.networkTrees = watcher.networkOrFUSETrees
        }
        return s
    }

    /// Whether changes wait or are being applied, or the initial scan has not finished.
    public var isBusy: Bool {
        let s = status
        return s.busy || s.pendingChanges > 0 || !s.started
    }

    /// Compares trees (or, with none, every root) with the disk now, through this thread like
    /// any change; returns once that is applied and committed.
    public func rescan(_ trees: [PathBytes]) {
        let done = DispatchSemaphore(value: 0)
        guard inbox.rescan(trees, done: done) else { return }
        done.wait()
        context.settle()
    }

    /// Accepts what is at `tree` now — a root, or a mount point below one, on another file
    /// system than the one indexed (the library moved to a new disk) — as the library's: the
    /// record of the old file system is dropped, and the tree is scanned, its files matched to
    /// their assets by content, so ids, favorites and albums carry over (a different photo under
    /// an old name is a new asset). Files of the old disk found nowhere go to Recently Deleted.
    /// Returns when that is committed.
    public func adopt(_ tree: PathBytes) -> AdoptionResult {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<AdoptionResult>(.failed("photod is stopping"))
        let adoption = LiveInbox.Adoption(tree: tree, done: Callback { r in
            result.withLock { $0 = r }
            done.signal()
        })
        guard inbox.adopt(adoption) else { return .failed("photod is stopping") }
        done.wait()
        context.settle()
        return result.withLock { $0 }
    }

    // MARK: - The thread

    private var mountTableWatched: Bool { mountWatcher != nil && mountWatcher?.failure == nil }

    private func run() {
        repairFilelessAssets()
        treeWork.start()
        context.status.withLock { $0.started = true }
        var schedule = LiveSchedule(options: context.options, start: clock.now)
        while !context.stopping {
            let taken = inbox.take()
            let due = schedule.due(at: clock.now, mountsChanged: taken.mountsChanged, mountTableWatched: mountTableWatched,
                                   hasOffline: !context.trees.offline.isEmpty)
            if due.purge { purge() }
            if due.recheck { treeWork.recheck(everyTree: due.everyTree) }
            if due.poll { treeWork.poll() }
            context.status.withLock { $0.busy = !taken.batches.isEmpty || taken.lostChanges || taken.rescanRequested || !taken.adoptions.isEmpty }
            handle(taken)
            context.status.withLock { $0.busy = false }
            guard taken.isEmpty else { continue }
            let deadline = schedule.nextWake(at: clock.now, mountTableWatched: mountTableWatched,
                                             hasOffline: !context.trees.offline.isEmpty, hasPolledTrees: treeWork.hasPolledTrees)
            clock.wait(on: inbox.wake, until: deadline)
        }
        // What a stop left behind: callers of `rescan` and `adopt` are not kept waiting.
        let left = inbox.take()
        left.waiters.forEach { $0.signal() }
        left.adoptions.forEach { $0.done(.failed("photod is stopping")) }
    }

    private func handle(_ taken: LiveInbox.Taken) {
        defer { taken.waiters.forEach { $0.signal() } }
        if taken.lostChanges || taken.rescanRequested {
            treeWork.fullRescan(lost: taken.lostChanges)
        } else if !taken.batches.isEmpty {
            // Joined so that scans still come after everything (a later batch may rename what an
            // earlier batch's scan names).
            let changes = WatchChange.joining(taken.batches)
            applier.apply(changes)
            context.status.withLock { $0.appliedChanges += changes.count }
        }
        for adoption in taken.adoptions {
            adoption.done(context.stopping ? .failed("photod is stopping") : treeWork.adopt(adoption.tree))
        }
    }

    /// The trash's renames, before it makes them: the watcher's reports of them change nothing.
    public func expectOwnRenames(removed: [PathBytes]) {
        inbox.expectOwnRenames(removed: removed)
    }

    /// Renames expected and not made.
    public func forgetOwnRenames(removed: [PathBytes]) {
        inbox.forgetOwnRenames(removed: removed)
    }

    /// Visible assets no file refers to, which earlier builds could leave, go to Recently
    /// Deleted: once in a database's life (`IndexWriter.trashFilelessAssets`), queued at start.
    private func repairFilelessAssets() {
        let logger = context.logger
        context.sortQueue.submit(operation: { [logger] writer, now in
            let (changes, trashed) = try writer.trashFilelessAssets(now: now)
            if trashed > 0 {
                logger.notice("Recently Deleted takes the assets no file refers to, left by an earlier photod: \(trashed)")
            }
            return changes
        })
    }

    /// Purges Recently Deleted past the retention, and prunes the journal.
    private func purge() {
        let options = context.options
        let logger = context.logger
        context.sortQueue.submitPurge(deletedBefore: wallClock() - options.retentionMilliseconds,
                                      trash: LibraryTrash(roots: options.trashRoots, trees: context.trees))
        context.sortQueue.submit(operation: { [logger] writer, now in
            let dropped = try writer.pruneJournal(keep: options.journalMaxChanges, before: now - options.journalMaxAgeMilliseconds)
            if dropped > 0 { logger.info("pruned \(dropped) change sets from the journal") }
            return ChangeSet()
        })
    }
}
