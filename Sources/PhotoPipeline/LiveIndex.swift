import Foundation
import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWatch
import Synchronization

/// Keeps the index current once it is built: one serial thread that watches the roots, runs
/// the initial scan, then applies what the watcher reports, polls the trees it cannot watch,
/// rechecks unavailable roots and purges Recently Deleted. Everything it changes goes through
/// the sort queue, so every change lands in the journal.
///
/// Idle it makes no wake-ups but an hourly purge check, plus one every `pollInterval` when
/// trees are polled and every `rootRecheckInterval` while a root is unavailable.
public final class LiveIndex: Sendable {
    public struct Options: Sendable {
        /// How often trees that cannot be watched (network and FUSE file systems, directories
        /// beyond the watch budget) are compared with the index: a stat walk, no re-reads.
        public var pollInterval: Duration = .seconds(300)
        /// How often an unavailable root is checked for its return.
        public var rootRecheckInterval: Duration = .seconds(2)
        /// How long assets stay in Recently Deleted before they are purged (Unix milliseconds).
        public var retentionMilliseconds: Int64 = 30 * 86_400_000
        /// How often the purge runs.
        public var purgeInterval: Duration = .seconds(3_600)
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
        /// Event-queue overflows (each followed by a full rescan).
        public var overflows = 0
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

    private struct SharedState: Sendable {
        var pending: [[WatchChange]] = []
        var pendingCount = 0
        var droppedForRescan = false
        var stopping = false
        var status = Status()
        /// Files submitted for writing and not yet committed, with the identity read: a second
        /// report of the same file meanwhile is not read again.
        var inFlight: [PathBytes: FileIdentity] = [:]
    }

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
        let inbox = Locked<(@Sendable ([WatchChange]) -> Void)?>(nil)
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
        inbox.withLock { $0 = { [weak self] changes in self?.receive(changes) } }
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
        wake.signal()
        finished.wait()
        finished.signal()
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
        var unavailable = Set<PathBytes>()
        // Watch first, then scan: a change made while the scan runs is then seen by the scan
        // (not yet listed) or by a watch (already in place), never by neither.
        for root in roots where indexer.unavailability(of: root) == nil {
            watch(root)
        }
        indexer.scan(roots: roots)
        for root in roots where indexer.status.unavailableRoots[root] != nil {
            unavailable.insert(root)
            watcher?.unwatch(directoryTree: root)
        }
        state.withLock { $0.status.started = true }

        let clock = ContinuousClock()
        var nextPurge = clock.now
        var nextPoll = clock.now.advanced(by: options.pollInterval)
        var nextRecheck = clock.now.advanced(by: options.rootRecheckInterval)
        while !stopping {
            if nextPurge <= clock.now {
                sortQueue.submitPurge(deletedBefore: now() - options.retentionMilliseconds)
                nextPurge = clock.now.advanced(by: options.purgeInterval)
            }
            if !unavailable.isEmpty, nextRecheck <= clock.now {
                recheck(&unavailable)
                nextRecheck = clock.now.advanced(by: options.rootRecheckInterval)
            }
            if nextPoll <= clock.now {
                poll(unavailable: unavailable)
                nextPoll = clock.now.advanced(by: options.pollInterval)
            }

            let (batches, rescan) = state.withLock { s -> ([[WatchChange]], Bool) in
                let taken = (s.pending, s.droppedForRescan)
                s.pending = []
                s.pendingCount = 0
                s.droppedForRescan = false
                s.status.pendingChanges = 0
                s.status.busy = !taken.0.isEmpty || taken.1
                return taken
            }
            if rescan {
                fullRescan(unavailable: unavailable)
            } else if !batches.isEmpty {
                let changes = batches.flatMap { $0 }
                apply(changes, unavailable: &unavailable)
                state.withLock { $0.status.appliedChanges += changes.count }
            }
            state.withLock { $0.status.busy = false }
            guard batches.isEmpty && !rescan else { continue }

            var deadline = nextPurge
            if !unavailable.isEmpty { deadline = min(deadline, nextRecheck) }
            if hasPolledTrees { deadline = min(deadline, nextPoll) } else { nextPoll = clock.now.advanced(by: options.pollInterval) }
            let wait = clock.now.duration(to: deadline)
            if wait > .zero {
                let (s, a) = wait.components
                let nanoseconds = Int(min(s, 86_400)) * 1_000_000_000 + Int(a / 1_000_000_000)
                _ = wake.wait(timeout: .now() + .nanoseconds(nanoseconds))
            }
        }
    }

    private var hasPolledTrees: Bool {
        guard let watcher else { return true }
        return !watcher.unwatchedTrees.isEmpty || !watcher.networkOrFUSETrees.isEmpty
    }

    private func watch(_ root: PathBytes) {
        guard let watcher else { return }
        let report = watcher.watchTree(root)
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

    /// Checks unavailable roots; one that is back is watched and reconciled (ids kept).
    private func recheck(_ unavailable: inout Set<PathBytes>) {
        for root in unavailable.sorted() where indexer.unavailability(of: root) == nil {
            state.withLock { $0.status.busy = true }
            logger.notice("library root '\(root)' is back: reconciling it", [("root", root.string)])
            watch(root)
            indexer.scan(roots: [root])
            if indexer.status.unavailableRoots[root] == nil {
                unavailable.remove(root)
            } else {
                watcher?.unwatch(directoryTree: root)
            }
        }
    }

    private func available(_ unavailable: Set<PathBytes>) -> [PathBytes] { roots.filter { !unavailable.contains($0) } }

    /// Compares the trees that are not watched with the disk (a stat walk; changed files only
    /// are read). Trees left out for the budget are offered to the watcher again first.
    private func poll(unavailable: Set<PathBytes>) {
        let trees: [PathBytes]
        if let watcher {
            if !watcher.unwatchedTrees.isEmpty { _ = watcher.retryUnwatched() }
            trees = watcher.unwatchedTrees + watcher.networkOrFUSETrees
        } else {
            trees = available(unavailable)
        }
        guard !trees.isEmpty else { return }
        state.withLock {
            $0.status.busy = true
            $0.status.polls += 1
        }
        indexer.scan(subtrees: ChangePlan.outermost(trees), roots: available(unavailable))
    }

    private func fullRescan(unavailable: Set<PathBytes>) {
        logger.warning("rescanning the library to find changes the event queue lost")
        indexer.scan(roots: available(unavailable))
    }

    // MARK: - Applying changes

    private func apply(_ changes: [WatchChange], unavailable: inout Set<PathBytes>) {
        let plan = ChangePlan(changes, roots: available(unavailable))
        for root in plan.rootsGone where roots.contains(root) && !unavailable.contains(root) {
            unavailable.insert(root)
            indexer.markUnavailable(root, reason: "it was moved, deleted or unmounted while photod was running")
        }
        if !plan.unwatched.isEmpty {
            logger.warning("\(plan.unwatched.count) new directory tree(s) are polled, not watched: the watch budget is used up "
                           + "(raise fs.inotify.max_user_watches)")
        }
        if plan.overflow {
            state.withLock { $0.status.overflows += 1 }
            logger.warning("the kernel's event queue overflowed (fs.inotify.max_queued_events)")
            fullRescan(unavailable: unavailable)
            return
        }
        var scans = plan.scans
        var files = FileLookup(indexer: indexer)
        for step in plan.steps {
            guard !stopping else { return }
            apply(step, files: &files, scans: &scans)
        }
        let live = available(unavailable)
        if !scans.isEmpty, !stopping {
            indexer.scan(subtrees: ChangePlan.outermost(scans), roots: live)
        }
    }

    private func apply(_ step: ChangePlan.Step, files: inout FileLookup, scans: inout [PathBytes]) {
        var batch = WriteBatch()
        batch.removedDirectories = step.removedDirectories
        batch.removedFiles = step.removedFiles.map { ($0.parent, $0.lastComponent) }
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
        var candidates: [Candidate] = []
        resolve(step.reads, into: &batch, candidates: &candidates, files: &files, scans: &scans)

        if batch.hasMoves {
            // Wait for it: a move the index cannot resolve (an unknown source) becomes a read.
            let summary = submitAndWait(batch)
            if let summary {
                var again = WriteBatch()
                resolve(summary.unresolvedFiles, into: &again, candidates: &candidates, files: &files, scans: &scans)
                if !again.isEmpty { _ = submitAndWait(again) }
                scans.append(contentsOf: summary.unresolvedDirectories)
            }
        } else if !batch.isEmpty {
            sortQueue.submit(batch)
        }
        for start in stride(from: 0, to: candidates.count, by: Indexer.chunkSize) {
            guard !stopping else { return }
            let chunk = Array(candidates[start..<min(start + Indexer.chunkSize, candidates.count)])
            var write = WriteBatch()
            write.files = indexer.read(chunk)
            let paths = chunk.map { ($0.path, $0.identity) }
            state.withLock { s in for (p, id) in paths { s.inFlight[p] = id } }
            sortQueue.submit(write) { [state] _ in
                state.withLock { s in for (p, id) in paths where s.inFlight[p] == id { s.inFlight[p] = nil } }
            }
        }
    }

    /// Sorts files reported added or modified: unchanged ones are skipped, ones the index knows
    /// under another path (moved in from a place the watcher did not see) are moved, ones whose
    /// asset is in Recently Deleted are restored, the rest are read.
    private func resolve(_ paths: [PathBytes], into batch: inout WriteBatch, candidates: inout [Candidate],
                         files: inout FileLookup, scans: inout [PathBytes]) {
        for path in paths {
            guard let st = try? FileStat.of(path, followLinks: false) else { continue }  // gone: its removal follows
            if st.isDirectory {
                scans.append(path)
                continue
            }
            guard st.isRegularFile else { continue }  // links are not followed; devices are not media
            let identity = files.identity(of: path, st)
            if state.withLock({ $0.inFlight[path] == identity }) { continue }
            let known = files.indexed(path)
            if let known, known.identity == identity { continue }
            if known == nil {
                if let origin = files.movedOrigin(identity, notAt: path) {
                    batch.movedFiles.append(FileMove(from: origin, to: path, identity: identity))
                    continue
                }
                if let tombstone = files.tombstone(identity) {
                    batch.restoredFiles.append(FileRestore(path: path, identity: identity, tombstone: tombstone))
                    continue
                }
            }
            candidates.append(Candidate(directory: path.parent, name: path.lastComponent, identity: identity))
        }
    }

    private func submitAndWait(_ batch: WriteBatch) -> BatchSummary? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<BatchSummary?>(nil)
        sortQueue.submit(batch) { outcome in
            if case .success(let summary) = outcome { result.withLock { $0 = summary } }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
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

    func indexed(_ path: PathBytes) -> IndexedFile? {
        (try? indexer.database.read { try $0.file(at: path) }) ?? nil
    }

    /// Where a file with this identity was indexed, when that place no longer holds it.
    func movedOrigin(_ identity: FileIdentity, notAt here: PathBytes) -> PathBytes? {
        let candidates = (try? indexer.database.read { try $0.files(identity: identity) }) ?? []
        return candidates.first { $0 != here && !Walk.exists($0, inode: identity.inode) }
    }

    func tombstone(_ identity: FileIdentity) -> Int64? {
        (try? indexer.database.read { try $0.tombstone(identity: identity) }) ?? nil
    }
}
