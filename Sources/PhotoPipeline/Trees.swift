import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWatch
#if canImport(Glibc)
import Glibc
#endif

/// The one owner of the library's *trees* — its roots, and the mount points below them (a
/// second disk at `/srv/photos/usb`) — and of whether each may be compared with the index: the
/// comparison that removes what the disk no longer shows. Every path that can remove assets asks
/// it first (`check`): the start-up scan, a rescan of any directory, a poll, a subtree scan, each
/// mount point a walk meets, every watcher batch. Each tree is judged by `TreeAvailability`
/// against what the index recorded of it when it was scanned (`MountIdentity`: file system and
/// the path inside it), so an unmounted disk, an unmounted bind mount or a share gone away keeps
/// its assets, ids and user state whatever is asked of it.
///
/// It holds the recorded identities (written through the sort queue, the one writer), the mount
/// table as last read, the mount each tree was last seen on, which trees are unavailable and
/// why, and which of those have had their watches removed. What looks at a tree's file system
/// runs through the `Prober`, never on the caller's thread: a tree whose file system does not
/// answer is reported ("not answering") and the rest of the library goes on. Thread-safe.
public final class Trees: Sendable {
    let database: Database
    let sortQueue: SortQueue
    let prober: Prober
    let logger: Logger
    let now: @Sendable () -> Int64
    private let state = Locked(State())

    private struct State: Sendable {
        /// The library roots (always recorded, mount points or not).
        var roots: Set<PathBytes> = []
        /// The recorded identities, loaded on first use (nil: to load).
        var records: [PathBytes: MountIdentity]?
        /// Records written (or, nil, forgotten) and not yet committed: laid over those loaded.
        var unsaved: [PathBytes: MountIdentity?] = [:]
        /// Bumped by every change of the records: a load that began before it is not kept.
        var generation = 0
        var table: MountTable?
        /// Mount points of `table`, for `isTree` (asked for every directory a walk visits).
        var mountPoints: Set<PathBytes> = []
        /// Trees an operator adopts: their checks accept whatever is there until it is done.
        var adopting: Set<PathBytes> = []
        /// The mount id each tree's last probe saw it on.
        var probedMounts: [PathBytes: UInt64] = [:]
        /// The unavailable trees, with the reason.
        var unavailable: [PathBytes: String] = [:]
        /// Unavailable trees whose watches were removed (they would report another directory's
        /// events under the tree's paths).
        var unwatched: Set<PathBytes> = []
        /// The mount each available tree was on at the last recheck: another one means it was
        /// mounted again, and its watches are on the old one.
        var rememberedMounts: [PathBytes: UInt64] = [:]
        /// The mount table at the last recheck: only the trees a change concerns are looked at.
        var recheckedTable: MountTable?
    }

    /// Files sampled to tell two disks apart whose identity cannot (`TreeAvailability.Seen`).
    static let contentSample = 16

    /// What below the roots is not the library (`--exclude` and the defaults).
    let exclusions: PathExclusions

    /// What the operator runs to accept another file system at a tree (in the messages).
    static func adoptHint(_ path: PathBytes) -> String { "photoctl adopt \(path)" }

    /// - Parameters:
    ///   - roots: the library roots.
    ///   - sortQueue: records of the trees' identities are written through it.
    ///   - probeDeadline: how long a look at a tree's file system may take before the tree is
    ///     reported not answering.
    ///   - onAnswer: called when a tree that did not answer answers again (to look at it again).
    ///   - exclusions: what below the roots is not the library: a mount point in it is no tree.
    public init(roots: [PathBytes], database: Database, sortQueue: SortQueue, logger: Logger,
                probeDeadline: Duration = .seconds(2), onAnswer: @escaping @Sendable (PathBytes) -> Void = { _ in },
                exclusions: PathExclusions = .none,
                now: @escaping @Sendable () -> Int64 = { WallClock.milliseconds() }) {
        self.exclusions = exclusions
        self.database = database
        self.sortQueue = sortQueue
        self.logger = logger
        self.now = now
        prober = Prober(deadline: probeDeadline, onAnswer: onAnswer)
        state.withLock { $0.roots = Set(roots) }
    }

    // MARK: - The mount table

    /// Takes a newer mount table (the mount watcher's).
    public func update(_ table: MountTable) {
        state.withLock {
            $0.table = table
            $0.mountPoints = Set(table.entries.map(\.mountPoint))
        }
    }

    /// Reads the mount table again (`/proc/self/mountinfo`: the kernel's, no file system's).
    @discardableResult
    public func refreshTable() -> MountTable? {
        guard let table = try? MountTable.read() else { return nil }
        update(table)
        return table
    }

    /// The table as last read (read now if never).
    public var table: MountTable? { state.withLock { $0.table } ?? refreshTable() }

    // MARK: - Which trees there are

    /// Notes library roots (a scan's): their identity is recorded whether or not they are mount
    /// points of their own (a root on a bind mount that goes away is a plain directory).
    func register(roots: [PathBytes]) {
        state.withLock { $0.roots.formUnion(roots) }
    }

    /// Whether `path` is a library root.
    public func isRoot(_ path: PathBytes) -> Bool { state.withLock { $0.roots.contains(path) } }

    /// The mount points below `root` now and the trees recorded there, without `root`; only
    /// those a scan would look at (none below a dot-directory, an excluded folder or a `.nomedia`
    /// tree: a snapshot directory's automounts are not the library).
    public func trees(below root: PathBytes) -> [PathBytes] {
        let (records, points) = (self.records, state.withLock { $0.mountPoints })
        let all = Set(records.keys).union(points).filter { $0.isWithin(root) && $0 != root }
        return all.filter {
            ChangePlan.isIndexable($0, roots: [root]) && !exclusions.excludes($0, below: root) && !excluded($0, below: root)
        }.sorted()
    }

    /// Whether a `.nomedia` file excludes `path` (in it or a directory between it and `root`);
    /// a tree whose file system does not answer is not excluded (its check reports it).
    private func excluded(_ path: PathBytes, below root: PathBytes) -> Bool {
        prober.run(path) {
            var p = path
            while p != root, p.isWithin(root) {
                if (try? FileStat.of(p.appending(Walk.noMedia))) != nil { return true }
                p = p.parent
            }
            return false
        } ?? false
    }

    /// Whether `path` (below a root) is a tree of its own: a mount point now, or recorded as one.
    public func isTree(_ path: PathBytes) -> Bool {
        if state.withLock({ $0.mountPoints.contains(path) }) { return true }
        return records[path] != nil
    }

    /// Whether the index recorded `path` as a tree.
    public func isRecorded(_ path: PathBytes) -> Bool { records[path] != nil }

    /// The trees at or above `path`: its root first, then each mount point between them.
    public func trees(containing path: PathBytes, roots: [PathBytes]) -> [PathBytes] {
        guard let root = roots.filter({ path.isWithin($0) }).max(by: { $0.bytes.count < $1.bytes.count }) else { return [] }
        return [root] + trees(below: root).filter { path.isWithin($0) }.sorted { $0.bytes.count < $1.bytes.count }
    }

    /// Every tree of the available roots: each root, then the trees below it.
    func allTrees(of roots: [PathBytes]) -> [PathBytes] {
        roots.flatMap { [$0] + trees(below: $0) }
    }

    // MARK: - Which trees are unavailable

    /// The unavailable roots, with the reason.
    public var unavailableRoots: [PathBytes: String] {
        state.withLock { s in s.unavailable.filter { s.roots.contains($0.key) } }
    }

    /// The unavailable mount points below roots, with the reason: nothing below them is removed
    /// or read.
    public var unavailableMounts: [PathBytes: String] {
        state.withLock { s in s.unavailable.filter { !s.roots.contains($0.key) } }
    }

    /// Every tree nothing below which may be touched now.
    public var offline: Set<PathBytes> { state.withLock { Set($0.unavailable.keys) } }

    /// Why `tree` is unavailable, or nil.
    public func unavailability(of tree: PathBytes) -> String? { state.withLock { $0.unavailable[tree] } }

    /// The first unavailable tree at or above `path`, with the reason (from what is known: no probe).
    public func offlineTree(containing path: PathBytes) -> (tree: PathBytes, reason: String)? {
        state.withLock { s in
            s.unavailable.filter { path.isWithin($0.key) }.min { $0.key.bytes.count < $1.key.bytes.count }.map { ($0.key, $0.value) }
        }
    }

    /// Of `roots`, those that are available.
    public func available(_ roots: [PathBytes]) -> [PathBytes] {
        let gone = offline
        return roots.filter { !gone.contains($0) }
    }

    /// Reports a tree unavailable (the watcher saw it go, or a check found it gone): nothing
    /// below it is removed; the next scan of it that finds it available clears this. Logged when
    /// it was not, or for another reason.
    public func markUnavailable(_ tree: PathBytes, reason: String) {
        let (changed, isRoot) = state.withLock { s -> (Bool, Bool) in
            (s.unavailable.updateValue(reason, forKey: tree) != reason, s.roots.contains(tree))
        }
        let what = isRoot ? "library root" : "mount point"
        if changed {
            logger.error("\(what) '\(tree)' is unavailable (\(reason)); its assets are kept", [("path", tree.string)])
        } else {
            logger.debug("\(what) '\(tree)' is still unavailable", [("path", tree.string)])
        }
    }

    /// A tree was found there (checked, or walked).
    func markAvailable(_ tree: PathBytes) {
        state.withLock { s in if !s.unavailable.isEmpty { s.unavailable[tree] = nil } }
    }

    /// Clears the unavailability of every tree at or below `top` (an operator adopted it).
    func clearUnavailable(within top: PathBytes) {
        state.withLock { s in s.unavailable = s.unavailable.filter { !$0.key.isWithin(top) } }
    }

    /// Directories moved (renamed, or found moved): the records, marks and remembered mounts of
    /// the trees below them follow.
    func directoriesMoved(_ moves: [DirectoryMove]) {
        guard !moves.isEmpty else { return }
        reloadRecords()
        state.withLock { s in
            for move in moves {
                func rebased(_ p: PathBytes) -> PathBytes { p.isWithin(move.from) ? Coalescer.rebase(p, from: move.from, to: move.to) : p }
                s.unavailable = Dictionary(s.unavailable.map { (rebased($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
                s.unwatched = Set(s.unwatched.map(rebased))
                s.rememberedMounts = Dictionary(s.rememberedMounts.map { (rebased($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
            }
        }
    }

    /// Directory removals with the trees below them kept: a folder deleted (or moved out of the
    /// library) above a mount point that is unavailable, or recorded, takes the files and folders
    /// around the mount point with it, not the mount point's own assets. Each removal of a
    /// directory that holds such a tree becomes the removal of everything in it but the way to
    /// the tree: the files of each directory on the way, and its other subdirectories.
    public func sparingTrees(_ removed: [PathBytes]) -> (directories: [PathBytes], files: [(PathBytes, [UInt8])]) {
        let kept = Set(records.keys).union(offline)
        guard !kept.isEmpty, removed.contains(where: { r in kept.contains { $0.isWithin(r) } }) else { return (removed, []) }
        var directories: [PathBytes] = []
        var files: [(PathBytes, [UInt8])] = []
        for top in removed {
            let inside = kept.filter { $0.isWithin(top) }
            guard !inside.isEmpty else {
                directories.append(top)
                continue
            }
            // The directories on the way from `top` down to each kept tree, not the trees.
            var way = Set<PathBytes>()
            for tree in inside {
                var p = tree.parent
                while p.isWithin(top) {
                    way.insert(p)
                    if p == top { break }
                    p = p.parent
                }
            }
            for dir in way {
                guard let snapshot = try? database.read({ try $0.snapshot(of: dir) }) else { continue }
                files += snapshot.files.map { (dir, $0.name) }
                for sub in snapshot.subdirectories {
                    let child = dir.appending(sub)
                    if !way.contains(child) && !inside.contains(child) { directories.append(child) }
                }
            }
            logger.notice("'\(top)' is gone, but it holds \(inside.count) mount point(s) that are unavailable or recorded: "
                          + "their assets are kept (\(inside.sorted().map(\.string).joined(separator: ", ")))",
                          [("path", top.string)])
        }
        return (directories, files)
    }

    // MARK: - Watches and mounts, as the live loop last saw them

    /// Brings the record of unwatched trees in line with what is unavailable now: returns the
    /// trees that went away since (their watches are to be removed) and those that are back.
    func watchChanges() -> (gone: [PathBytes], back: [PathBytes]) {
        state.withLock { s in
            let offline = Set(s.unavailable.keys)
            let gone = offline.subtracting(s.unwatched)
            let back = s.unwatched.subtracting(offline)
            s.unwatched = offline
            return (gone.sorted(), back.filter { tree in !offline.contains { tree.isWithin($0) } }.sorted())
        }
    }

    /// Forgets that the trees at or below `top` were unwatched (they are watched anew).
    func rewatched(_ top: PathBytes) {
        state.withLock { s in s.unwatched = s.unwatched.filter { !$0.isWithin(top) } }
    }

    /// Notes the mount `tree` is on now; returns whether it was on another one at the last
    /// note (mounted again: its watches are on the old mount).
    func noteMount(_ tree: PathBytes, _ id: UInt64?) -> Bool {
        state.withLock { s in
            let before = s.rememberedMounts[tree]
            s.rememberedMounts[tree] = id
            return before != id
        }
    }

    /// Takes the table of a recheck, returning the one of the recheck before.
    func swapRecheckedTable(_ table: MountTable) -> MountTable? {
        state.withLock { s in
            defer { s.recheckedTable = table }
            return s.recheckedTable
        }
    }

    /// Notes the table and the mount of every available tree of `roots` as they are now, for the
    /// next recheck to tell a tree mounted again.
    func rememberMounts(of roots: [PathBytes]) {
        if let table { state.withLock { $0.recheckedTable = table } }
        let offline = self.offline
        let ids = allTrees(of: available(roots)).filter { !offline.contains($0) }.map { ($0, mountID(of: $0)) }
        state.withLock { s in for (tree, id) in ids { s.rememberedMounts[tree] = id } }
    }

    /// The mount points of mounts that are in one table and not the other (by id, place and
    /// what is mounted); every mount point when there is no earlier table. A mount that only
    /// changed place — the same mount, its mount point's path changed because a folder above it
    /// was renamed — is not a change of its own: the watcher reports the folder's move, which
    /// carries the tree's rows, record and marks (judged here, its old place would look gone and
    /// its new one mounted anew, and a scan of the new place before the move would make the move
    /// replace what it found).
    static func changedMountPoints(_ before: MountTable?, _ after: MountTable) -> Set<PathBytes> {
        guard let before else { return Set(after.entries.map(\.mountPoint)) }
        struct Key: Hashable { var id: UInt64, point: PathBytes, root: PathBytes, source: String }
        func keys(_ t: MountTable) -> Set<Key> {
            Set(t.entries.map { Key(id: $0.id, point: $0.mountPoint, root: $0.root, source: $0.source) })
        }
        let changed = keys(before).symmetricDifference(keys(after))
        let placesByMount = Dictionary(grouping: changed, by: { Key(id: $0.id, point: PathBytes(""), root: $0.root, source: $0.source) })
        return Set(placesByMount.values.filter { places in
            // Two places of one mount, the new one where the old one's folder was renamed to.
            guard places.count == 2 else { return true }
            let (a, b) = (places[places.startIndex].point, places[places.index(after: places.startIndex)].point)
            return a.lastComponent != b.lastComponent || a.parent == b.parent
        }.flatMap { $0.map(\.point) })
    }

    // MARK: - The rule

    /// Applies `TreeAvailability` to the tree at `path` (a root or a mount point below one):
    /// probes the disk (through the prober) and the index, records the tree's identity when the
    /// rule says to, and marks the tree unavailable when it is. An available tree is not
    /// cleared here: the walk that follows clears it (or the caller, who knows it may).
    @discardableResult
    public func check(_ path: PathBytes) -> TreeAvailability.Verdict {
        var (verdict, probe) = decide(path)
        if case .unavailable = verdict, !isHung(probe), refreshTable() != nil {
            // The table may have been older than the disk: judge once more on a fresh one.
            (verdict, probe) = decide(path)
        }
        guard case .available(let record) = verdict else { return verdict }
        if case .unopenable = probe {
            // A mount point gone with nothing indexed in it: nothing to keep, no record either.
            if isRecorded(path) { forget(path) }
        } else if let record,
                  state.withLock({ $0.roots.contains(path) || $0.mountPoints.contains(path) || $0.records?[path] != nil }) {
            // Roots and mount points only: a plain directory recorded would be kept as a mount
            // point that is gone once its folder is deleted.
            self.record(path, record)
        }
        return verdict
    }

    /// Checks `tree`, marking it unavailable when it is; returns the reason, or nil when it may
    /// be compared with the index.
    @discardableResult
    func checkAndMark(_ tree: PathBytes) -> String? {
        guard let reason = check(tree).reason else { return nil }
        markUnavailable(tree, reason: reason)
        return reason
    }

    /// The first tree at or above `path` that must not be scanned, with the reason; nil when
    /// `path` may be compared with the index.
    public func unavailability(of path: PathBytes, roots: [PathBytes]) -> (tree: PathBytes, reason: String)? {
        for tree in trees(containing: path, roots: roots) {
            if let reason = check(tree).reason { return (tree, reason) }
        }
        return nil
    }

    /// The mount id the last probe of `tree` saw it on (a walk compares each directory's with it).
    public func probedMount(of tree: PathBytes) -> UInt64? { state.withLock { $0.probedMounts[tree] } }

    /// The id of the mount `path` lies on now (nil when it cannot be opened, or does not answer).
    public func mountID(of path: PathBytes) -> UInt64? {
        prober.run(path) {
            guard let dir = try? Directory(path: path) else { return nil }
            return PhotoSystem.mountID(of: dir.descriptor)
        } ?? nil
    }

    private func isHung(_ probe: TreeAvailability.Probe) -> Bool {
        if case .notAnswering = probe { return true }
        return false
    }

    private func decide(_ path: PathBytes) -> (TreeAvailability.Verdict, TreeAvailability.Probe) {
        var probe = self.probe(path)
        let recorded = records[path]
        let (isRoot, adopting) = state.withLock { ($0.roots.contains(path), $0.adopting.contains(path)) }
        if adopting {
            guard case .present(let seen) = probe else { return (.unavailable(probe.reason), probe) }
            return (.available(record: seen.identity == recorded ? nil : seen.identity), probe)
        }
        let indexed = (try? database.read { try $0.indexedTree(path) }) ?? TreeAvailability.Indexed(entries: 0)
        if case .present(var seen) = probe, let recorded, let identity = seen.identity, indexed.entries > 0,
           !(recorded.isConclusive && identity.isConclusive) {
            // Another card in the same reader has the same identity: look for the indexed files.
            guard let holds = holdsIndexedFiles(path) else {
                probe = .notAnswering(prober.reason)
                return (TreeAvailability.verdict(path: path, isRoot: isRoot, recorded: recorded, probe: probe, indexed: indexed,
                                                 adoptHint: Self.adoptHint(path)), probe)
            }
            seen.holdsIndexedFiles = holds
            probe = .present(seen)
        }
        let verdict = TreeAvailability.verdict(path: path, isRoot: isRoot, recorded: recorded, probe: probe, indexed: indexed,
                                               adoptHint: Self.adoptHint(path))
        return (verdict, probe)
    }

    /// Whether any of a sample of the media files the index has in the tree is there, with the
    /// size and mtime indexed; nil when the tree does not answer.
    private func holdsIndexedFiles(_ path: PathBytes) -> Bool? {
        let sample = (try? database.read { try $0.sampleFiles(within: path, limit: Self.contentSample) }) ?? []
        guard !sample.isEmpty else { return true }
        return prober.run(path) {
            sample.contains { file in
                guard let st = try? FileStat.of(file.path, followLinks: false) else { return false }
                return st.isRegularFile && st.size == file.size && st.mtimeNanoseconds == file.mtimeNanoseconds
            }
        }
    }

    /// What the disk shows at `path` now (looked at by the prober).
    func probe(_ path: PathBytes) -> TreeAvailability.Probe {
        let knownTable = state.withLock { $0.table }
        guard let seen = prober.run(path, { Self.look(at: path, table: knownTable) }) else {
            state.withLock { _ = $0.probedMounts.removeValue(forKey: path) }
            return .notAnswering(prober.reason)
        }
        if let table = seen.freshTable { update(table) }
        state.withLock { $0.probedMounts[path] = seen.mountID }
        return seen.probe
    }

    /// What a look at a tree's directory found (on the prober's thread: no state touched).
    private struct Look: Sendable {
        var probe: TreeAvailability.Probe
        var mountID: UInt64?
        /// The mount table read again because the one known did not place the directory.
        var freshTable: MountTable?
    }

    private static func look(at path: PathBytes, table known: MountTable?) -> Look {
        let dir: Directory
        let fs: FileSystemInfo
        let st: FileStat
        let hasEntries: Bool
        do {
            dir = try Directory(path: path)
            fs = try dir.fileSystem()
            st = try dir.stat()
            hasEntries = try dir.hasVisibleEntries()
        } catch {
            return Look(probe: .unopenable(error.message))
        }
        let id = PhotoSystem.mountID(of: dir.descriptor)
        let canonical = DefaultPaths.canonical(path) ?? path
        // The table known may be older than the disk: read it again when it does not place the directory.
        var fresh: MountTable?
        var entry = known?.entry(of: dir.descriptor, path: canonical)
        if entry == nil, let table = try? MountTable.read() {
            fresh = table
            entry = table.entry(of: dir.descriptor, path: canonical)
        }
        guard let mount = entry else {
            return Look(probe: .present(TreeAvailability.Seen(identity: nil, mountPoint: nil, hasVisibleEntries: hasEntries,
                                                              inode: st.inode)),
                        mountID: id, freshTable: fresh)
        }
        var identity = MountIdentity(fsid: fs.fsid, fsType: UInt32(truncatingIfNeeded: fs.type),
                                     fsPath: mount.fileSystemPath(of: canonical))
        if !identity.fsidIsStable { identity.volume = volumeID(of: mount, directory: dir.descriptor) }
        return Look(probe: .present(TreeAvailability.Seen(identity: identity, mountPoint: mount.mountPoint,
                                                          hasVisibleEntries: hasEntries, inode: st.inode)),
                    mountID: id, freshTable: fresh)
    }

    // MARK: - Records

    private var records: [PathBytes: MountIdentity] {
        let (cached, generation) = state.withLock { ($0.records, $0.generation) }
        let loaded = cached ?? (try? database.read { try $0.mounts() }) ?? [:]
        return state.withLock { s in
            if s.records == nil, s.generation == generation { s.records = loaded }
            var all = loaded
            for (path, identity) in s.unsaved { all[path] = identity }
            return all
        }
    }

    /// Records the identity a tree was scanned on: a job on the sort queue, not waited for (the
    /// caller may be a walk whose own jobs wait in the queue); until it commits, the record is
    /// laid over those read from the index.
    private func record(_ path: PathBytes, _ identity: MountIdentity?) {
        state.withLock { $0.unsaved[path] = .some(identity) }
        let time = now()
        sortQueue.submit(operation: { writer, _ in
            if let identity { try writer.recordMount(path, identity, now: time) } else { try writer.forgetMount(path) }
            return ChangeSet()
        }, done: { [state, logger] result in
            state.withLock { s in
                if s.unsaved[path] == .some(identity) { s.unsaved[path] = nil }
                s.records = nil
                s.generation += 1
            }
            switch result {
            case .success where identity != nil:
                logger.debug("library tree '\(path)' is \(identity!)", [("path", path.string)])
            case .success:
                break
            case .failure(let error):
                logger.error("cannot record the file system of '\(path)': \(error)", [("path", path.string)])
            }
        })
    }

    private func forget(_ path: PathBytes) { record(path, nil) }

    /// Reads the records again (directory moves rewrite the paths of those below them).
    func reloadRecords() {
        state.withLock {
            $0.records = nil
            $0.generation += 1
        }
    }

    // MARK: - Adoption

    /// The operator says the tree at `path` is the library's now, whatever file system it is
    /// on: forgets its record (those of mount points below it stay), clears what was unavailable
    /// in it, and accepts what the checks find there until `endAdoption`.
    func beginAdoption(of path: PathBytes) throws {
        try sortQueue.perform { try $0.forgetMount(path) }
        reloadRecords()
        state.withLock { _ = $0.adopting.insert(path) }
        clearUnavailable(within: path)
    }

    /// The trees being adopted now.
    var adoptions: Set<PathBytes> { state.withLock { $0.adopting } }

    func endAdoption(of path: PathBytes) {
        state.withLock { _ = $0.adopting.remove(path) }
    }
}

extension TreeAvailability.Probe {
    var reason: String {
        switch self {
        case .unopenable(let r), .notAnswering(let r): r
        case .present: "cannot be read"
        }
    }
}
