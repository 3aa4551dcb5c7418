import Dispatch
import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWatch

/// What the live loop's parts share: their collaborators, the status they report, and the reads
/// on their way to the writer.
final class LiveContext: Sendable {
    let roots: [PathBytes]
    let indexer: Indexer
    let sortQueue: SortQueue
    let trees: Trees
    /// The inotify watcher; nil when inotify cannot be used (every root is then polled).
    let watcher: InotifyWatcher?
    let options: LiveOptions
    let logger: Logger
    let status = Locked(LiveStatus())
    private let stopFlag = Locked(false)
    /// Reads submitted to the sort queue and not yet committed.
    let submitted = DispatchGroup()

    init(roots: [PathBytes], indexer: Indexer, sortQueue: SortQueue, trees: Trees, watcher: InotifyWatcher?,
         options: LiveOptions, logger: Logger) {
        self.roots = roots
        self.indexer = indexer
        self.sortQueue = sortQueue
        self.trees = trees
        self.watcher = watcher
        self.options = options
        self.logger = logger
    }

    var stopping: Bool { stopFlag.withLock { $0 } }
    func stop() { stopFlag.withLock { $0 = true } }

    /// Waits until what was read is committed: a scan compares the disk with the index, and
    /// would read it again otherwise.
    func settle() { submitted.wait() }

    /// The roots that are available.
    var availableRoots: [PathBytes] { trees.available(roots) }

    func noteBusy() { status.withLock { $0.busy = true } }
}

/// What the live loop does with whole trees (roots, and mount points below them): watches them,
/// notices them go and come back (a change of the mount table, a recheck, a root that lost its
/// watches, a batch that touches them), reconciles them by a scan, polls those inotify cannot
/// watch, adopts one an operator says is the library's now. Whether a tree is there is `Trees`'s
/// to say; this is what follows from it. Runs on the live loop's thread.
struct LiveTrees: Sendable {
    let context: LiveContext

    private var roots: [PathBytes] { context.roots }
    private var trees: Trees { context.trees }
    private var indexer: Indexer { context.indexer }
    private var watcher: InotifyWatcher? { context.watcher }
    private var logger: Logger { context.logger }

    /// Watches every available root and scans the library: what the loop does first. Watch
    /// first, then scan: a change made while the scan runs is then seen by the scan (not yet
    /// listed) or by a watch (already in place), never by neither.
    func start() {
        for root in roots where trees.check(root).isAvailable { watch(root) }
        indexer.scan(roots: roots)
        syncWatches()
        trees.rememberMounts(of: roots)
    }

    private func watch(_ root: PathBytes) {
        guard let watcher else { return }
        report(watcher.watchTree(root), under: root)
    }

    private func report(_ report: WatchTreeReport, under root: PathBytes) {
        let interval = context.options.pollInterval
        if !report.unwatched.isEmpty {
            let limit = WatchLimits.systemMaxUserWatches().map(String.init) ?? "unknown"
            logger.warning("""
                \(report.unwatched.count) directory tree(s) under '\(root)' are polled every \(interval), \
                not watched: the watch budget (\(context.options.watchLimits.maxWatches) of fs.inotify.max_user_watches = \
                \(limit)) is used up. Raise it: sysctl fs.inotify.max_user_watches=524288 (and in /etc/sysctl.d/ to keep it)
                """, [("root", root.string)])
        }
        if !report.networkOrFUSE.isEmpty {
            logger.notice("\(report.networkOrFUSE.count) tree(s) under '\(root)' are on network or FUSE file systems, "
                          + "where inotify misses changes made elsewhere: polled every \(interval)", [("root", root.string)])
        }
    }

    /// Checks the unavailable trees for their return — and, after a change of the mount table
    /// (`everyTree`), every tree the change concerns: one that went away is reported unavailable
    /// and unwatched, one that is back or mounted again (its watches are on the old mount) is
    /// watched and reconciled, ids kept.
    func recheck(everyTree: Bool) {
        let offline = trees.offline
        var candidates = offline
        let table = everyTree ? trees.refreshTable() : trees.table
        if everyTree, let table {
            // The trees a change of the table concerns: a mount at, above or below them came,
            // went or moved (a disk mounted or unmounted), and the mount points that are new.
            let changed = Trees.changedMountPoints(trees.swapRecheckedTable(table), table)
            let all = Set(trees.allTrees(of: roots.filter { !offline.contains($0) }) + roots)
            candidates.formUnion(all.filter { tree in changed.contains { tree.isWithin($0) || $0.isWithin(tree) } })
        }
        let polled = watcher.map { $0.networkOrFUSETrees + $0.unwatchedTrees } ?? roots
        // Roots before the mounts below them.
        for tree in candidates.sorted(by: { $0.bytes.count < $1.bytes.count }) {
            guard !context.stopping else { return }
            let isRoot = roots.contains(tree)
            if !isRoot, !context.availableRoots.contains(where: { tree.isWithin($0) }) { continue }  // its root is out
            if table?.entry(covering: tree)?.fsType == "autofs" {
                // An automount that expired: looking would mount it again (and keep the disk
                // awake); the next poll or scan of it does that when it is due.
                continue
            }
            if trees.checkAndMark(tree) != nil { continue }
            let remounted = trees.noteMount(tree, trees.probedMount(of: tree)) && everyTree
            // A polled tree (a share) needs no new watches when it is mounted again: its polls go on.
            let watched = !polled.contains { tree.isWithin($0) || $0.isWithin(tree) }
            if offline.contains(tree) || (remounted && watched && !offline.contains(where: { tree.isWithin($0) })) {
                reconcile(tree, why: offline.contains(tree) ? "is back" : "was mounted")
            }
        }
        syncWatches()
    }

    /// Watches a tree that is back (or mounted anew) and compares it with the index.
    func reconcile(_ tree: PathBytes, why: String) {
        context.noteBusy()
        let isRoot = roots.contains(tree)
        logger.notice("\(isRoot ? "library root" : "mount point") '\(tree)' \(why): reconciling it", [("path", tree.string)])
        context.settle()
        rewatch(tree)
        if isRoot {
            indexer.scan(roots: [tree])
        } else {
            indexer.scan(subtrees: [tree], roots: context.availableRoots)
        }
    }

    /// Drops a tree's watches (they may be on another mount) and watches what is there now.
    private func rewatch(_ tree: PathBytes) {
        trees.rewatched(tree)
        guard let watcher else { return }
        watcher.unwatch(directoryTree: tree)
        guard (try? FileStat.of(tree))?.isDirectory == true else { return }
        if roots.contains(tree) {
            watch(tree)
        } else {
            report(watcher.watchSubtree(tree), under: tree)
        }
    }

    /// Brings the watches in line with what is unavailable now: a tree that went away is
    /// unwatched (watches on a bind mount's source would report that directory's events under
    /// the tree's paths); one a scan found back is watched and compared once more (what changed
    /// before its watches were in place).
    func syncWatches() {
        // A reconciling scan may find more trees gone or back: a few rounds settle it.
        for _ in 0..<3 where !context.stopping {
            let (gone, back) = trees.watchChanges()
            for tree in gone { watcher?.unwatch(directoryTree: tree) }
            guard !back.isEmpty else { return }
            for tree in back { reconcile(tree, why: "is back") }
        }
    }

    /// A root's watches are gone (deleted, moved away, unmounted): judged by the rule like any
    /// tree — unavailable, or (something is there, and it is what the index has) watched again
    /// and reconciled.
    func rootGone(_ root: PathBytes) {
        if trees.checkAndMark(root) == nil { reconcile(root, why: "lost its watches") }
        syncWatches()
    }

    /// Checks, before anything of a batch is applied, every tree it touches: an unmount that no
    /// event reported (a bind mount, a share) must not turn into removals. A scan asked below a
    /// tree that is unavailable rechecks that tree.
    func check(touchedBy changes: [WatchChange]) {
        let offline = trees.offline
        let known = trees.allTrees(of: context.availableRoots).sorted { $0.bytes.count < $1.bytes.count }
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
        for tree in touched.sorted(by: { $0.bytes.count < $1.bytes.count }) where !offline.contains(where: { tree.isWithin($0) }) {
            trees.checkAndMark(tree)
        }
        for tree in asked.sorted(by: { $0.bytes.count < $1.bytes.count }) where trees.check(tree).isAvailable {
            reconcile(tree, why: "is back")
        }
        syncWatches()
    }

    /// Accepts what is at `tree` now as the library's (`LiveLoop.adopt`).
    func adopt(_ tree: PathBytes) -> LiveLoop.AdoptionResult {
        let isRoot = roots.contains(tree)
        if !isRoot, let root = roots.first(where: { tree.isWithin($0) }), let reason = trees.unavailability(of: root) {
            return .failed("its library root '\(root)' is unavailable (\(reason)): adopt the root, or bring it back first")
        }
        context.settle()
        do {
            try trees.beginAdoption(of: tree)
        } catch {
            return .failed("cannot forget the old file system's record: \(error)")
        }
        defer { trees.endAdoption(of: tree) }
        logger.notice("adopting what is at '\(tree)' now as the library's", [("path", tree.string)])
        let present = (try? FileStat.of(tree))?.isDirectory == true
        if present { rewatch(tree) }
        let report: ScanReport
        if isRoot {
            report = indexer.scan(roots: [tree])
        } else {
            // A mount point that is gone: its parent's scan removes what it held.
            report = indexer.scan(subtrees: [present ? tree : tree.parent], roots: context.availableRoots, deferNewFiles: true)
        }
        syncWatches()
        trees.rememberMounts(of: roots)
        if let reason = trees.unavailability(of: tree) { return .failed(reason) }
        return .adopted(report)
    }

    /// Compares the trees inotify cannot watch with the disk (and tries again to watch those
    /// the watch budget left out).
    func poll() {
        let polled: [PathBytes]
        if let watcher {
            // The trees polled so far are compared too when the retry takes them over (what
            // changed before their watches) or drops them (gone: a deleted folder, an unmount).
            let unwatched = watcher.unwatchedTrees
            if !unwatched.isEmpty { _ = watcher.retryUnwatched() }
            polled = unwatched + watcher.unwatchedTrees.filter { !unwatched.contains($0) } + watcher.networkOrFUSETrees
        } else {
            polled = context.availableRoots
        }
        guard !polled.isEmpty else { return }
        context.status.withLock {
            $0.busy = true
            $0.polls += 1
        }
        context.settle()
        indexer.scan(subtrees: ChangePlan.outermost(polled), roots: context.availableRoots)
        syncWatches()
    }

    /// Whether some tree is polled (nothing tells photod of its changes).
    var hasPolledTrees: Bool {
        guard let watcher else { return true }
        return !watcher.unwatchedTrees.isEmpty || !watcher.networkOrFUSETrees.isEmpty
    }

    /// Compares the roots with the disk (each checked first: an unavailable one stays so, one
    /// that is back is reconciled). `lost`: the kernel lost events (else a client asked).
    func fullRescan(lost: Bool) {
        context.settle()
        if lost {
            logger.warning("rescanning the library to find changes the event queue lost")
        } else {
            logger.notice("rescanning the library, as asked")
        }
        indexer.scan(roots: lost ? context.availableRoots : roots)
        syncWatches()
    }
}
