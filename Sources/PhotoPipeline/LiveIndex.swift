import Foundation
import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWatch

/// Keeps the index current once it is built: one serial thread that watches the roots, runs
/// the initial scan, then applies what the watcher reports, polls the trees it cannot watch,
/// rechecks unavailable roots and mounts (at once when the mount table changes) and purges
/// Recently Deleted. Everything it changes goes through the sort queue, so every change lands
/// in the journal.
///
/// Idle it makes no wake-ups but an hourly purge check, plus one every `pollInterval` when
/// trees are polled and every `rootRecheckInterval` while a root or mount is unavailable.
public final class LiveIndex: Sendable {
    public struct Options: Sendable {
        /// How often trees that cannot be watched (network and FUSE file systems, directories
        /// beyond the watch budget) are compared with the index: a stat walk, no re-reads.
        public var pollInterval: Duration = .seconds(300)
        /// Whether changes of the mount table are watched (`MountWatcher`); off, unmounts are
        /// found by the checks of each scan and batch, returns by the recheck interval, and
        /// every tree is rechecked every `mountRecheckInterval`.
        public var watchMountTable = true
        /// How often every root and mount is rechecked when the mount table is not watched.
        public var mountRecheckInterval: Duration = .seconds(30)
        /// How often an unavailable root or mount is checked for its return (besides at every
        /// change of the mount table).
        public var rootRecheckInterval: Duration = .seconds(2)
        /// How long assets stay in Recently Deleted before they are purged (Unix milliseconds).
        public var retentionMilliseconds: Int64 = 30 * 86_400_000
        /// How often the purge runs (and the change journal is pruned).
        public var purgeInterval: Duration = .seconds(3_600)
        /// The change journal keeps at most this many change sets, and none older than
        /// `journalMaxAgeMilliseconds` (the newest is always kept): older tokens get `tokenExpired`.
        public var journalMaxChanges = 100_000
        public var journalMaxAgeMilliseconds: Int64 = 30 * 86_400_000
        /// The watch budget (default: the user's limit minus a reserve for other programs).
        public var watchLimits: WatchLimits = .system()
        public var coalescing = CoalescerLimits()
        /// Changes waiting beyond this are dropped in favour of a full rescan (which finds them
        /// all): memory stays bounded when changes arrive faster than they are applied.
        public var maxQueuedChanges = 200_000

        public init() {}
    }

    /// What the daemon reports in `library.status`.
    public struct Status: Sendable, Hashable {
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
        /// Times more than `Options.maxQueuedChanges` waited and were dropped for a full rescan.
        public var backlogRescans = 0
        /// Polls run.
        public var polls = 0
        /// Whether the initial scan has finished.
        public var started = false
        /// Applying changes, polling or rescanning right now.
        public var busy = false
    }

    let indexer: Indexer
    let sortQueue: SortQueue
    let roots: [PathBytes]
    let options: Options
    let logger: Logger
    let now: @Sendable () -> Int64
    private let state = Locked(SharedState())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let watcher: InotifyWatcher?
    private let mountWatcher: MountWatcher?
    /// The live thread's view of the trees (roots and mount points below them).
    private let trees = Locked(TreeState())
    /// Reads submitted to the sort queue and not yet committed.
    private let submitted = DispatchGroup()

    private struct SharedState: Sendable {
        var pending: [[WatchChange]] = []
        var pendingCount = 0
        var droppedForRescan = false
        /// Callers of `rescan` waiting for the batch that carries their request.
        var waiters: [DispatchSemaphore] = []
        /// A full rescan asked for (`library.rescan` without a path).
        var requestedRescan = false
        var stopping = false
        var status = Status()
        /// Files submitted for writing and not yet committed, with the identity read: a second
        /// report of the same file meanwhile is not read again.
        var inFlight: [PathBytes: FileIdentity] = [:]
        /// New files read lately, by content: a removal of a file with the same content soon
        /// after is the second half of a move across file systems (copy, then delete).
        var recentNew: [ContentKey: (path: PathBytes, at: ContinuousClock.Instant)] = [:]
        /// Files reported added or modified that were gone when looked at.
        var unresolvedReads: [PathBytes: ContinuousClock.Instant] = [:]
        /// The mount table changed since the last recheck.
        var mountsChanged = false
        /// Trees an operator adopts (`adopt`), with who waits for the answer.
        var adoptions: [(tree: PathBytes, done: Callback<AdoptionResult, Void>)] = []
    }

    private struct TreeState: Sendable {
        /// Unavailable trees whose watches were removed (they would report another directory's
        /// events under the tree's paths).
        var unwatched = Set<PathBytes>()
        /// The mount each available tree was on at the last recheck: another one means it was
        /// mounted again, and its watches are on the old one.
        var mountIDs: [PathBytes: UInt64] = [:]
        /// The mount table at the last recheck: only trees a change concerns are looked at.
        var table: MountTable?
    }

    /// How an adoption ended.
    public enum AdoptionResult: Sendable {
        case adopted(ScanReport)
        case failed(String)
    }

    static let unresolvedWindow: Duration = .seconds(60)
    static let unresolvedMemory = 10_000

    /// How long and how many new files are remembered for `recentNew`.
    static let copyWindow: Duration = .seconds(600)
    static let copyMemory = 100_000

    /// Opens the watcher (when inotify is available) and starts the thread; the initial scan
    /// starts at once.
    public init(indexer: Indexer, sortQueue: SortQueue, roots: [PathBytes], options: Options = Options(), logger: Logger,
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }) {
        self.indexer = indexer
        self.sortQueue = sortQueue
        self.roots = roots
        self.options = options
        self.logger = logger
        self.now = now
        let inbox = Locked<Callback<[WatchChange], Void>?>(nil)
        do {
            watcher = try InotifyWatcher(limits: options.watchLimits, coalescing: options.coalescing,
                                         logger: logger.facility("watch"),
                                         onChanges: { changes in inbox.withLock { $0 }?(changes) })
        } catch {
            watcher = nil
            let reason = "cannot open inotify (\(error)): every root is polled every \(options.pollInterval)"
            logger.error(reason)
            state.withLock { $0.status.watchError = reason }
        }
        state.withLock {
            $0.status.watchBudget = options.watchLimits.maxWatches
            $0.status.systemWatchLimit = WatchLimits.systemMaxUserWatches()
        }
        let mountInbox = Locked<Callback<MountTable, Void>?>(nil)
        var mountError: String?
        do {
            mountWatcher = options.watchMountTable
                ? try MountWatcher(logger: logger.facility("watch"), onChange: { table in mountInbox.withLock { $0 }?(table) })
                : nil
        } catch {
            mountWatcher = nil
            mountError = "cannot watch the mount table (\(error)): unmounts are noticed by inotify, scans and a recheck "
                + "every \(options.rootRecheckInterval) of unavailable trees only"
        }
        if !options.watchMountTable { mountError = "the mount table is not watched (switched off)" }
        if let mountError {
            logger.warning(mountError)
            state.withLock { $0.status.mountWatchError = mountError }
        }
        inbox.withLock { $0 = Callback { [weak self] changes in self?.receive(changes) } }
        mountInbox.withLock { $0 = Callback { [weak self] table in self?.mountsChanged(table) } }
        let thread = Thread { [self] in
            setThreadName("photod-live")
            run()
            finished.signal()
        }
        thread.name = "photod-live"
        thread.start()
    }

    /// A copy of the status, with the watcher's current counts.
    public var status: Status {
        var s = state.withLock { $0.status }
        if let failure = mountWatcher?.failure { s.mountWatchError = failure }
        if let watcher {
            s.watches = watcher.watchedCount
            s.unwatchedTrees = watcher.unwatchedTrees
            s.networkTrees = watcher.networkOrFUSETrees
        }
        return s
    }

    /// Whether changes wait or are being applied.
    public var isBusy: Bool { state.withLock { $0.status.busy || $0.pendingCount > 0 || !$0.status.started } }

    /// Stops watching, stops a running scan at the next directory, and waits until what was
    /// read is committed.
    public func stop() {
        state.withLock { $0.stopping = true }
        indexer.requestStop()
        watcher?.stop()
        mountWatcher?.stop()
        wake.signal()
        finished.wait()
        finished.signal()
    }

    /// Compares trees (or, with none, every root) with the disk now, through this thread like
    /// any change; returns once that is applied and committed.
    public func rescan(_ trees: [PathBytes]) {
        let done = DispatchSemaphore(value: 0)
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            if trees.isEmpty {
                s.requestedRescan = true
            } else {
                s.pending.append(trees.map { .rescan($0) })
                s.pendingCount += trees.count
            }
            s.waiters.append(done)
            return true
        }
        guard accepted else { return }
        wake.signal()
        done.wait()
        submitted.wait()
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
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.adoptions.append((tree, Callback { r in
                result.withLock { $0 = r }
                done.signal()
            }))
            return true
        }
        guard accepted else { return .failed("photod is stopping") }
        wake.signal()
        done.wait()
        submitted.wait()
        return result.withLock { $0 }
    }

    /// The mount table changed (on the mount watcher's thread: only note it here).
    private func mountsChanged(_ table: MountTable) {
        indexer.mounts.update(table)
        state.withLock {
            $0.mountsChanged = true
            $0.status.mountChanges += 1
        }
        wake.signal()
    }

    /// A batch from the watcher (on its queue: only queue it here).
    private func receive(_ changes: [WatchChange]) {
        guard !changes.isEmpty else { return }
        let dropped = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            if s.pendingCount + changes.count > options.maxQueuedChanges {
                s.pending = []
                s.pendingCount = 0
                let first = !s.droppedForRescan
                s.droppedForRescan = true
                if first { s.status.backlogRescans += 1 }
                return first
            }
            s.pending.append(changes)
            s.pendingCount += changes.count
            s.status.pendingChanges = s.pendingCount
            return false
        }
        if dropped {
            logger.warning("more than \(options.maxQueuedChanges) changes wait: a full rescan will find them instead")
        }
        wake.signal()
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    // MARK: - The thread

    private func run() {
        mountWatcher?.start()
        // Watch first, then scan: a change made while the scan runs is then seen by the scan
        // (not yet listed) or by a watch (already in place), never by neither.
        for root in roots where indexer.unavailability(of: root) == nil {
            watch(root)
        }
        indexer.scan(roots: roots)
        syncWatches()
        rememberMounts()
        state.withLock { $0.status.started = true }

        let clock = ContinuousClock()
        var nextPurge = clock.now
        var nextPoll = clock.now.advanced(by: options.pollInterval)
        var nextRecheck = clock.now.advanced(by: options.rootRecheckInterval)
        var nextMountRecheck = clock.now.advanced(by: options.mountRecheckInterval)
        while !stopping {
            if nextPurge <= clock.now {
                sortQueue.submitPurge(deletedBefore: now() - options.retentionMilliseconds)
                let (keep, age, logger) = (options.journalMaxChanges, options.journalMaxAgeMilliseconds, logger)
                sortQueue.submit(operation: { writer, now in
                    let dropped = try writer.pruneJournal(keep: keep, before: now - age)
                    if dropped > 0 { logger.info("pruned \(dropped) change sets from the journal") }
                    return ChangeSet()
                })
                nextPurge = clock.now.advanced(by: options.purgeInterval)
            }
            var mountsChanged = state.withLock { s -> Bool in
                defer { s.mountsChanged = false }
                return s.mountsChanged
            }
            if !mountTableWatched, nextMountRecheck <= clock.now {
                // Nothing tells photod of mounts: look at the table now and then.
                mountsChanged = true
                nextMountRecheck = clock.now.advanced(by: options.mountRecheckInterval)
            }
            if mountsChanged || (!offline.isEmpty && nextRecheck <= clock.now) {
                recheck(everyTree: mountsChanged)
                nextRecheck = clock.now.advanced(by: options.rootRecheckInterval)
            }
            if nextPoll <= clock.now {
                poll()
                nextPoll = clock.now.advanced(by: options.pollInterval)
            }

            let (batches, rescan, waiters, requested, adoptions) = state.withLock { s in
                let taken = (s.pending, s.droppedForRescan, s.waiters, s.requestedRescan, s.adoptions)
                s.pending = []
                s.pendingCount = 0
                s.droppedForRescan = false
                s.requestedRescan = false
                s.waiters = []
                s.adoptions = []
                s.status.pendingChanges = 0
                s.status.busy = !taken.0.isEmpty || taken.1 || taken.3 || !taken.4.isEmpty
                return taken
            }
            defer { waiters.forEach { $0.signal() } }
            if rescan || requested {
                fullRescan(lost: rescan)
            } else if !batches.isEmpty {
                // Joined so that scans still come after everything (a later batch may rename
                // what an earlier batch's scan names).
                let changes = WatchChange.joining(batches)
                apply(changes)
                state.withLock { $0.status.appliedChanges += changes.count }
            }
            for adoption in adoptions { adoption.done(stopping ? .failed("photod is stopping") : adopt(tree: adoption.tree)) }
            state.withLock { $0.status.busy = false }
            guard batches.isEmpty && !rescan && !requested && adoptions.isEmpty && !mountsChanged else { continue }

            var deadline = nextPurge
            if !offline.isEmpty { deadline = min(deadline, nextRecheck) }
            if !mountTableWatched { deadline = min(deadline, nextMountRecheck) }
            if hasPolledTrees { deadline = min(deadline, nextPoll) } else { nextPoll = clock.now.advanced(by: options.pollInterval) }
            let wait = clock.now.duration(to: deadline)
            if wait > .zero {
                let (s, a) = wait.components
                let nanoseconds = Int(min(s, 86_400)) * 1_000_000_000 + Int(a / 1_000_000_000)
                _ = wake.wait(timeout: .now() + .nanoseconds(nanoseconds))
            }
        }
    }

    /// Whether mount-table changes reach this thread (a watcher that runs).
    private var mountTableWatched: Bool { mountWatcher != nil && mountWatcher?.failure == nil }

    private var hasPolledTrees: Bool {
        guard let watcher else { return true }
        return !watcher.unwatchedTrees.isEmpty || !watcher.networkOrFUSETrees.isEmpty
    }

    /// The trees (roots and mounts below them) nothing below which may be touched now.
    private var offline: Set<PathBytes> { indexer.status.unavailableTrees }

    /// The roots that are available.
    private var availableRoots: [PathBytes] {
        let gone = indexer.status.unavailableRoots
        return roots.filter { gone[$0] == nil }
    }

    private func watch(_ root: PathBytes) {
        guard let watcher else { return }
        report(watcher.watchTree(root), under: root)
    }

    private func report(_ report: WatchTreeReport, under root: PathBytes) {
        if !report.unwatched.isEmpty {
            let limit = WatchLimits.systemMaxUserWatches().map(String.init) ?? "unknown"
            logger.warning("""
                \(report.unwatched.count) directory tree(s) under '\(root)' are polled every \(options.pollInterval), \
                not watched: the watch budget (\(options.watchLimits.maxWatches) of fs.inotify.max_user_watches = \
                \(limit)) is used up. Raise it: sysctl fs.inotify.max_user_watches=524288 (and in /etc/sysctl.d/ to keep it)
                """, [("root", root.string)])
        }
        if !report.networkOrFUSE.isEmpty {
            logger.notice("\(report.networkOrFUSE.count) tree(s) under '\(root)' are on network or FUSE file systems, "
                          + "where inotify misses changes made elsewhere: polled every \(options.pollInterval)",
                          [("root", root.string)])
        }
    }

    // MARK: - Trees coming and going

    /// Checks the unavailable trees for their return — and, after a change of the mount table,
    /// every tree: one that went away is reported unavailable and unwatched, one that is back or
    /// mounted again (its watches are on the old mount) is watched and reconciled, ids kept.
    private func recheck(everyTree: Bool) {
        let offline = self.offline
        var candidates = offline
        let table = everyTree ? indexer.mounts.refreshTable() : indexer.mounts.table
        if everyTree, let table {
            // The trees a change of the table concerns: a mount at, above or below them came,
            // went or moved (a disk mounted or unmounted), and the mount points that are new.
            let before = trees.withLock { t -> MountTable? in
                defer { t.table = table }
                return t.table
            }
            let changed = Self.changedMountPoints(before, table)
            var all = Set(roots)
            for root in roots where !offline.contains(root) { all.formUnion(indexer.mounts.trees(below: root)) }
            candidates.formUnion(all.filter { tree in changed.contains { tree.isWithin($0) || $0.isWithin(tree) } })
        }
        let polled = watcher.map { $0.networkOrFUSETrees + $0.unwatchedTrees } ?? roots
        // Roots before the mounts below them.
        for tree in candidates.sorted(by: { $0.bytes.count < $1.bytes.count }) {
            guard !stopping else { return }
            let isRoot = roots.contains(tree)
            if !isRoot, !availableRoots.contains(where: { tree.isWithin($0) }) { continue }  // its root is out
            if table?.entry(covering: tree)?.fsType == "autofs" {
                // An automount that expired: looking would mount it again (and keep the disk
                // awake); the next poll or scan of it does that when it is due.
                continue
            }
            if let reason = indexer.mounts.check(tree).reason {
                indexer.markUnavailable(tree, reason: reason, isRoot: isRoot)
                continue
            }
            let id = indexer.mounts.probedMount(of: tree)
            let remounted = everyTree && trees.withLock { $0.mountIDs[tree] } != id
            trees.withLock { $0.mountIDs[tree] = id }
            // A polled tree (a share) needs no new watches when it is mounted again: its polls go on.
            let watched = !polled.contains { tree.isWithin($0) || $0.isWithin(tree) }
            if offline.contains(tree) || (remounted && watched && !offline.contains(where: { tree.isWithin($0) })) {
                reconcile(tree, isRoot: isRoot, why: offline.contains(tree) ? "is back" : "was mounted")
            }
        }
        syncWatches()
    }

    /// The mount points of mounts that are in one table and not the other (by id, place and
    /// what is mounted); every mount point when there is no earlier table.
    static func changedMountPoints(_ before: MountTable?, _ after: MountTable) -> Set<PathBytes> {
        guard let before else { return Set(after.entries.map(\.mountPoint)) }
        struct Key: Hashable { var id: UInt64, point: PathBytes, root: PathBytes, source: String }
        func keys(_ t: MountTable) -> Set<Key> {
            Set(t.entries.map { Key(id: $0.id, point: $0.mountPoint, root: $0.root, source: $0.source) })
        }
        return Set(keys(before).symmetricDifference(keys(after)).map(\.point))
    }

    /// Watches a tree that is back (or mounted anew) and compares it with the index.
    private func reconcile(_ tree: PathBytes, isRoot: Bool, why: String) {
        state.withLock { $0.status.busy = true }
        logger.notice("\(isRoot ? "library root" : "mount point") '\(tree)' \(why): reconciling it", [("path", tree.string)])
        submitted.wait()
        rewatch(tree, isRoot: isRoot)
        if isRoot {
            indexer.scan(roots: [tree])
        } else {
            indexer.scan(subtrees: [tree], roots: availableRoots)
        }
    }

    /// Drops a tree's watches (they may be on another mount) and watches what is there now.
    private func rewatch(_ tree: PathBytes, isRoot: Bool) {
        trees.withLock { t in t.unwatched = t.unwatched.filter { !$0.isWithin(tree) } }
        guard let watcher else { return }
        watcher.unwatch(directoryTree: tree)
        guard (try? FileStat.of(tree))?.isDirectory == true else { return }
        if isRoot {
            watch(tree)
        } else {
            report(watcher.watchSubtree(tree), under: tree)
        }
    }

    /// Brings the watches in line with what is unavailable now: a tree that went away is
    /// unwatched (watches on a bind mount's source would report that directory's events under
    /// the tree's paths); one a scan found back is watched and compared once more (what changed
    /// before its watches were in place).
    private func syncWatches() {
        // A reconciling scan may find more trees gone or back: a few rounds settle it.
        for _ in 0..<3 where !stopping {
            let offline = self.offline
            let (gone, back) = trees.withLock { t -> ([PathBytes], [PathBytes]) in
                let gone = offline.subtracting(t.unwatched)
                let back = t.unwatched.subtracting(offline)
                t.unwatched = offline
                return (gone.sorted(), back.sorted())
            }
            for tree in gone { watcher?.unwatch(directoryTree: tree) }
            let returned = back.filter { tree in !offline.contains { tree.isWithin($0) } }
            guard !returned.isEmpty else { return }
            for tree in returned { reconcile(tree, isRoot: roots.contains(tree), why: "is back") }
        }
    }

    /// The mount each available tree is on, for `recheck` to tell a tree mounted again.
    private func rememberMounts() {
        if let table = indexer.mounts.table { trees.withLock { $0.table = table } }
        let offline = self.offline
        let all = availableRoots.flatMap { [$0] + indexer.mounts.trees(below: $0) }.filter { !offline.contains($0) }
        let ids = all.map { ($0, indexer.mounts.mountID(of: $0)) }
        trees.withLock { t in for (tree, id) in ids { t.mountIDs[tree] = id } }
    }

    /// A root's watches are gone (deleted, moved away, unmounted): judged by the rule like any
    /// tree — unavailable, or (something is there, and it is what the index has) watched again
    /// and reconciled.
    private func rootGone(_ root: PathBytes) {
        if let reason = indexer.mounts.check(root).reason {
            indexer.markUnavailable(root, reason: reason, isRoot: true)
        } else {
            reconcile(root, isRoot: true, why: "lost its watches")
        }
        syncWatches()
    }

    /// Checks, before anything is applied, every tree the batch touches: an unmount that no
    /// event reported (a bind mount, a share) must not turn into removals. A scan asked below a
    /// tree that is unavailable rechecks that tree.
    private func checkTrees(touchedBy changes: [WatchChange]) {
        let offline = self.offline
        let live = availableRoots
        let known = (live + live.flatMap { indexer.mounts.trees(below: $0) }).sorted { $0.bytes.count < $1.bytes.count }
        var touched = Set<PathBytes>()
        var asked = Set<PathBytes>()
        for change in changes {
            if case .rootGone = change { continue }
            for path in change.paths {
                if change.isScan, let tree = offline.filter({ path.isWithin($0) }).min(by: { $0.bytes.count < $1.bytes.count }) {
                    asked.insert(tree)
                }
                for tree in known where path.isWithin(tree) && !offline.contains(tree) { touched.insert(tree) }
            }
        }
        for tree in touched.sorted(by: { $0.bytes.count < $1.bytes.count }) {
            if offline.contains(where: { tree.isWithin($0) }) { continue }
            if let reason = indexer.mounts.check(tree).reason {
                indexer.markUnavailable(tree, reason: reason, isRoot: roots.contains(tree))
            }
        }
        for tree in asked.sorted(by: { $0.bytes.count < $1.bytes.count }) where indexer.mounts.check(tree).isAvailable {
            reconcile(tree, isRoot: roots.contains(tree), why: "is back")
        }
        syncWatches()
    }

    /// What `adopt` does, on the thread.
    private func adopt(tree: PathBytes) -> AdoptionResult {
        let isRoot = roots.contains(tree)
        if !isRoot, let root = roots.first(where: { tree.isWithin($0) }), let reason = indexer.status.unavailableRoots[root] {
            return .failed("its library root '\(root)' is unavailable (\(reason)): adopt the root, or bring it back first")
        }
        submitted.wait()
        do {
            try indexer.mounts.beginAdoption(of: tree)
        } catch {
            return .failed("cannot forget the old file system's record: \(error)")
        }
        defer { indexer.mounts.endAdoption(of: tree) }
        logger.notice("adopting what is at '\(tree)' now as the library's", [("path", tree.string)])
        indexer.clearUnavailable(within: tree)
        let present = (try? FileStat.of(tree))?.isDirectory == true
        if present { rewatch(tree, isRoot: isRoot) }
        let report: ScanReport
        if isRoot {
            report = indexer.scan(roots: [tree])
        } else {
            // A mount point that is gone: its parent's scan removes what it held.
            report = indexer.scan(subtrees: [present ? tree : tree.parent], roots: availableRoots, deferNewFiles: true)
        }
        syncWatches()
        rememberMounts()
        if let reason = indexer.status.unavailableRoots[tree] ?? indexer.status.unavailableMounts[tree] {
            return .failed(reason)
        }
        return .adopted(report)
    }

    private func poll() {
        let trees: [PathBytes]
        if let watcher {
            // The trees polled so far are compared too when the retry takes them over (what
            // changed before their watches) or drops them (gone: a deleted folder, an unmount).
            let polled = watcher.unwatchedTrees
            if !polled.isEmpty { _ = watcher.retryUnwatched() }
            trees = polled + watcher.unwatchedTrees.filter { !polled.contains($0) } + watcher.networkOrFUSETrees
        } else {
            trees = availableRoots
        }
        guard !trees.isEmpty else { return }
        state.withLock {
            $0.status.busy = true
            $0.status.polls += 1
        }
        submitted.wait()
        indexer.scan(subtrees: ChangePlan.outermost(trees), roots: availableRoots)
        syncWatches()
    }

    /// Compares the roots with the disk (each checked first: an unavailable one stays so, one
    /// that is back is reconciled).
    private func fullRescan(lost: Bool = true) {
        submitted.wait()
        if lost {
            logger.warning("rescanning the library to find changes the event queue lost")
        } else {
            logger.notice("rescanning the library, as asked")
        }
        indexer.scan(roots: lost ? availableRoots : roots)
        syncWatches()
    }

    // MARK: - Applying changes

    private func apply(_ changes: [WatchChange]) {
        checkTrees(touchedBy: changes)
        let plan = ChangePlan(changes, roots: availableRoots, offline: Array(indexer.status.unavailableMounts.keys))
        for root in plan.rootsGone where roots.contains(root) && !offline.contains(root) {
            rootGone(root)
        }
        if !plan.unwatched.isEmpty {
            logger.warning("\(plan.unwatched.count) new directory tree(s) are polled, not watched: the watch budget is used up "
                           + "(raise fs.inotify.max_user_watches)")
        }
        if plan.overflow {
            state.withLock { $0.status.overflows += 1 }
            logger.warning("the kernel's event queue overflowed (fs.inotify.max_queued_events)")
            fullRescan()
            return
        }
        var scans = plan.scans
        var files = FileLookup(indexer: indexer)
        for step in plan.steps {
            guard !stopping else { return }
            apply(step, files: &files, scans: &scans)
        }
        let live = availableRoots
        if !scans.isEmpty, !stopping {
            // The scan compares the disk with the index: what this batch read must be in it
            // first, or the scan reads it again.
            submitted.wait()
            // New files a scan finds may be copies too (a folder copied in as a whole).
            indexer.scan(subtrees: ChangePlan.outermost(scans), roots: live) { [weak self] in self?.remember($0) }
            syncWatches()
        }
        if !plan.afterScans.isEmpty, !stopping {
            // What the scans found moved is no longer where these name it: only the rest goes.
            var more: [PathBytes] = []
            apply(plan.afterScans, files: &files, scans: &more)
        }
    }

    private func apply(_ step: ChangePlan.Step, files: inout FileLookup, scans: inout [PathBytes]) {
        var batch = WriteBatch()
        let spared = indexer.mounts.sparingTrees(step.removedDirectories, offline: offline)
        batch.removedDirectories = spared.directories
        batch.removedFiles = step.removedFiles.map { ($0.parent, $0.lastComponent) } + spared.files
        batch.movedDirectories = step.movedDirectories.map { DirectoryMove(from: $0.from, to: $0.to) }
        for (from, to) in step.movedFiles {
            guard let st = try? FileStat.of(to, followLinks: false) else {
                batch.removedFiles.append((from.parent, from.lastComponent))  // gone again
                continue
            }
            if st.isRegularFile {
                batch.movedFiles.append(FileMove(from: from, to: to, identity: files.identity(of: to, st)))
            } else {
                batch.removedFiles.append((from.parent, from.lastComponent))
                if st.isDirectory { scans.append(to) }
            }
        }
        batch.copiesOfRemoved = copies(ofRemoved: step, files: files)
        var candidates: [Candidate] = []
        var newFiles = Set<PathBytes>()
        let reads = step.reads + retryUnresolved(step)
        resolve(reads, into: &batch, candidates: &candidates, newFiles: &newFiles, files: &files, scans: &scans)

        if batch.hasMoves {
            // Wait for it: a move the index cannot resolve (an unknown source) becomes a read.
            let summary = submitAndWait(batch)
            if !batch.movedDirectories.isEmpty {
                indexer.directoriesMoved(batch.movedDirectories)
                trees.withLock { t in
                    for move in batch.movedDirectories {
                        func rebased(_ p: PathBytes) -> PathBytes {
                            p.isWithin(move.from) ? Coalescer.rebase(p, from: move.from, to: move.to) : p
                        }
                        t.unwatched = Set(t.unwatched.map(rebased))
                        t.mountIDs = Dictionary(t.mountIDs.map { (rebased($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
                    }
                }
            }
            if let summary {
                var again = WriteBatch()
                resolve(summary.report.unresolvedFiles, into: &again, candidates: &candidates, newFiles: &newFiles, files: &files,
                        scans: &scans)
                if !again.isEmpty { _ = submitAndWait(again) }
                scans.append(contentsOf: summary.report.unresolvedDirectories)
            }
        } else if !batch.isEmpty {
            sortQueue.submit(batch)
        }
        for start in stride(from: 0, to: candidates.count, by: Indexer.chunkSize) {
            guard !stopping else { return }
            let chunk = Array(candidates[start..<min(start + Indexer.chunkSize, candidates.count)])
            var write = WriteBatch()
            write.files = indexer.read(chunk)
            remember(write.files.filter { newFiles.contains($0.path) })
            // Gone between the stat and the read: like a file gone at the stat (`resolve`).
            for outcome in write.files { if case .vanished = outcome.kind { unresolved(outcome.path) } }
            let paths = chunk.map { ($0.path, $0.identity) }
            state.withLock { s in for (p, id) in paths { s.inFlight[p] = id } }
            submitted.enter()
            sortQueue.submit(write) { [state, submitted] _ in
                state.withLock { s in for (p, id) in paths where s.inFlight[p] == id { s.inFlight[p] = nil } }
                submitted.leave()
            }
        }
    }

    /// Sorts files reported added or modified: unchanged ones are skipped, ones the index knows
    /// under another path (moved in from a place the watcher did not see) are moved, ones whose
    /// asset is in Recently Deleted are restored, the rest are read.
    private func resolve(_ paths: [PathBytes], into batch: inout WriteBatch, candidates: inout [Candidate],
                         newFiles: inout Set<PathBytes>, files: inout FileLookup, scans: inout [PathBytes]) {
        // The disk first (no lock held), then one read transaction for every lookup.
        var probes: [FileLookup.Probe] = []
        for path in paths {
            guard let st = try? FileStat.of(path, followLinks: false) else {
                // Gone already: its removal or rename follows (a rename of a directory above
                // it brings it back under its new path, see `retryUnresolved`).
                unresolved(path)
                continue
            }
            if st.isDirectory {
                scans.append(path)
                continue
            }
            guard st.isRegularFile else { continue }  // links are not followed; devices are not media
            let identity = files.identity(of: path, st)
            if state.withLock({ $0.inFlight[path] == identity }) { continue }
            probes.append(FileLookup.Probe(path: path, identity: identity, key: ResourcePairing.groupKey(of: path.lastComponent)))
        }
        guard !probes.isEmpty else { return }
        let verdicts = files.look(up: probes)
        var groupsSeen = Set<GroupSeen>()
        for (probe, verdict) in zip(probes, verdicts) {
            let path = probe.path
            switch verdict {
            case .unchanged:
                continue
            case .moved(let origin):
                batch.movedFiles.append(FileMove(from: origin, to: path, identity: probe.identity))
            case .restored(let tombstone):
                batch.restoredFiles.append(FileRestore(path: path, identity: probe.identity, tombstone: tombstone))
            case .read(let known, let groupEmpty):
                if !known { newFiles.insert(path) }
                // Alone in its group, in the index and in this step: the writer may insert its
                // asset without pairing (a partner arriving later pairs with it then).
                let first = groupsSeen.insert(GroupSeen(directory: path.parent, key: probe.key)).inserted
                candidates.append(Candidate(directory: path.parent, name: path.lastComponent, identity: probe.identity,
                                            isSoleNewMember: !known && groupEmpty && first, isNew: !known))
            }
        }
    }

    /// A file reported added or modified that was gone when looked at: remembered for a while,
    /// so that a directory rename reported later (the file was read under its old path) brings
    /// it back under its new one.
    private func unresolved(_ path: PathBytes) {
        let now = ContinuousClock.now
        state.withLock { s in
            if s.unresolvedReads.count >= Self.unresolvedMemory {
                s.unresolvedReads = s.unresolvedReads.filter { now - $0.value < Self.unresolvedWindow }
                if s.unresolvedReads.count >= Self.unresolvedMemory { s.unresolvedReads = [:] }
            }
            s.unresolvedReads[path] = now
        }
    }

    /// Forgets unresolved reads that a step removes, and returns those below a directory the
    /// step moves, under their new paths (to be read).
    private func retryUnresolved(_ step: ChangePlan.Step) -> [PathBytes] {
        state.withLock { s in
            guard !s.unresolvedReads.isEmpty else { return [] }
            for p in step.removedFiles { s.unresolvedReads[p] = nil }
            for (from, _) in step.movedFiles { s.unresolvedReads[from] = nil }
            for d in step.removedDirectories { s.unresolvedReads = s.unresolvedReads.filter { !$0.key.isWithin(d) } }
            var retries: [PathBytes] = []
            for (from, to) in step.movedDirectories {
                for (p, _) in s.unresolvedReads where p.isWithin(from) {
                    s.unresolvedReads[p] = nil
                    retries.append(PathBytes(to.bytes + p.bytes.dropFirst(from.bytes.count)))
                }
            }
            return retries
        }
    }

    /// Remembers new media files by content, for `copies(ofRemoved:)`.
    private func remember(_ outcomes: [FileOutcome]) {
        let now = ContinuousClock.now
        state.withLock { s in
            if s.recentNew.count + outcomes.count > Self.copyMemory {
                s.recentNew = s.recentNew.filter { now - $0.value.at < Self.copyWindow }
                if s.recentNew.count + outcomes.count > Self.copyMemory { s.recentNew = [:] }
            }
            for outcome in outcomes {
                guard case .media = outcome.kind, let fingerprint = outcome.fingerprint else { continue }
                s.recentNew[ContentKey(size: outcome.identity.size, fingerprint: fingerprint)] = (outcome.path, now)
            }
        }
    }

    /// Files read lately as new whose content is that of files the step removes: `mv` between
    /// file systems (two roots on two disks) copies, then deletes; the copy keeps the asset.
    private func copies(ofRemoved step: ChangePlan.Step, files: FileLookup) -> [PathBytes] {
        guard !step.removedFiles.isEmpty || !step.removedDirectories.isEmpty,
              state.withLock({ !$0.recentNew.isEmpty }) else { return [] }
        let keys = (try? indexer.database.read {
            try $0.contentKeys(files: step.removedFiles, directories: step.removedDirectories)
        }) ?? []
        let now = ContinuousClock.now
        return state.withLock { s in
            var copies: [PathBytes] = []
            for key in keys {
                guard let recent = s.recentNew[key], now - recent.at < Self.copyWindow else { continue }
                s.recentNew[key] = nil
                copies.append(recent.path)
            }
            return copies
        }
    }

    private func submitAndWait(_ batch: WriteBatch) -> ChangeSet? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<ChangeSet?>(nil)
        sortQueue.submit(batch) { outcome in
            if case .success(let summary) = outcome { result.withLock { $0 = summary } }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}

/// A group (directory, base name) a step has a candidate of.
struct GroupSeen: Hashable {
    var directory: PathBytes
    var key: [UInt8]
}

/// Index lookups for the live thread, with the file-system ids of the devices seen.
struct FileLookup {
    let indexer: Indexer
    private var fileSystems: [UInt64: UInt64] = [:]

    init(indexer: Indexer) { self.indexer = indexer }

    mutating func identity(of path: PathBytes, _ st: FileStat) -> FileIdentity {
        let fsid: UInt64
        if let known = fileSystems[st.device] {
            fsid = known
        } else {
            fsid = (try? Directory(path: path.parent).fileSystem().fsid) ?? st.device
            fileSystems[st.device] = fsid
        }
        return FileIdentity(fsid: fsid, inode: st.inode, size: st.size, mtimeNanoseconds: st.mtimeNanoseconds)
    }

    /// A file found on disk, to be compared with the index.
    struct Probe {
        var path: PathBytes
        var identity: FileIdentity
        var key: [UInt8]
    }

    enum Verdict {
        /// The index holds it as it is.
        case unchanged
        /// Indexed under another path that no longer holds it (moved in from where no watch saw it).
        case moved(from: PathBytes)
        /// The file of an asset in Recently Deleted.
        case restored(tombstone: Int64)
        /// To be read: `known` when the index has a row for it; `groupEmpty` when no file of
        /// its group (base name) is indexed in its directory.
        case read(known: Bool, groupEmpty: Bool)
    }

    /// Compares files with the index in one read transaction.
    func look(up probes: [Probe]) -> [Verdict] {
        let verdicts = try? indexer.database.read { r -> [Verdict] in
            try r.consistent { () throws(StoreError) in
                try probes.map { probe throws(StoreError) -> Verdict in
                    let group = try r.group(directory: probe.path.parent, key: probe.key)
                    if let known = group.first(where: { $0.name == probe.path.lastComponent }) {
                        let again = Walk.mayReadAgain(known, in: FileDescriptor(rawValue: AT_FDCWD), name: probe.path.bytes)
                        return known.identity == probe.identity && !again ? .unchanged : .read(known: true, groupEmpty: false)
                    }
                    let origins = try r.files(identity: probe.identity)
                    if let origin = origins.first(where: { $0 != probe.path && !Walk.exists($0, inode: probe.identity.inode) }) {
                        return .moved(from: origin)
                    }
                    if let tombstone = try r.tombstone(identity: probe.identity) { return .restored(tombstone: tombstone) }
                    return .read(known: false, groupEmpty: group.isEmpty)
                }
            }
        }
        return verdicts ?? probes.map { _ in .read(known: false, groupEmpty: false) }
    }
}
