import Foundation
import PhotoModel
import PhotoStore
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// Decides, for every path that can remove assets, whether the library tree it lies in may be
/// compared with the index: the start-up scan, a rescan of any directory, a poll, a subtree
/// scan, a watcher event. A *tree* is a library root or a mount point below one (a second disk
/// at `/srv/photos/usb`); each is judged by `TreeAvailability` against what the index recorded
/// of it when it was scanned (`MountIdentity`: file system and the path inside it), so an
/// unmounted disk, an unmounted bind mount or a share gone away keeps its assets, ids and user
/// state whatever is asked of it.
///
/// The shell around the rule: probes the disk (open, `statx` mount id, `statfs`, the first
/// visible entry), the mount table (fed by `MountWatcher`, or read when it cannot tell) and
/// the index, and records identities. Thread-safe; the live thread (which runs every scan)
/// calls it, socket threads ask `isTree`. Never called inside `Database.write` (it writes).
public final class MountGuard: Sendable {
    let database: Database
    let logger: Logger
    let now: @Sendable () -> Int64
    private let state = Locked(State())

    private struct State: Sendable {
        /// The recorded identities, loaded on first use (nil: to load).
        var records: [PathBytes: MountIdentity]?
        /// Bumped by every change of the records: a load that began before it is not kept.
        var generation = 0
        var table: MountTable?
        /// Mount points of `table`, for `isTree` (called for every directory a walk visits).
        var mountPoints: Set<PathBytes> = []
        /// Trees an operator adopts: their checks accept whatever is there until it is done.
        var adopting: Set<PathBytes> = []
        /// The library roots scans were asked for (always recorded, mount points or not).
        var roots: Set<PathBytes> = []
        /// The mount id each tree's last probe saw it on.
        var probedMounts: [PathBytes: UInt64] = [:]
    }

    /// Files sampled to tell two disks apart whose identity cannot (`TreeAvailability.Seen`).
    static let contentSample = 16

    /// What the operator runs to accept another file system at a tree (in the messages).
    static func adoptHint(_ path: PathBytes) -> String { "photoctl adopt \(path)" }

    init(database: Database, logger: Logger, now: @escaping @Sendable () -> Int64) {
        self.database = database
        self.logger = logger
        self.now = now
    }

    // MARK: - The mount table

    /// Takes a newer mount table (the mount watcher's).
    public func update(_ table: MountTable) {
        state.withLock {
            $0.table = table
            $0.mountPoints = Set(table.entries.map(\.mountPoint))
        }
    }

    /// Reads the mount table again.
    @discardableResult
    public func refreshTable() -> MountTable? {
        guard let table = try? MountTable.read() else { return nil }
        update(table)
        return table
    }

    /// The table as last read (read now if never).
    public var table: MountTable? { state.withLock { $0.table } ?? refreshTable() }

    // MARK: - Trees

    /// Notes the library roots (a scan's): their identity is recorded whether or not they are
    /// mount points of their own (a root on a bind mount that goes away is a plain directory).
    func register(roots: [PathBytes]) {
        state.withLock { $0.roots.formUnion(roots) }
    }

    /// The mount points below `root` now and the trees recorded there, without `root`; only
    /// those a scan would look at (none below a dot-directory or a `.nomedia` tree: a snapshot
    /// directory's automounts are not the library).
    public func trees(below root: PathBytes) -> [PathBytes] {
        let (records, points) = (self.records, state.withLock { $0.mountPoints })
        let all = Set(records.keys).union(points).filter { $0.isWithin(root) && $0 != root }
        return all.filter { ChangePlan.isIndexable($0, roots: [root]) && !Self.excluded($0, below: root) }.sorted()
    }

    /// Whether a `.nomedia` file excludes `path` (in it or a directory between it and `root`).
    static func excluded(_ path: PathBytes, below root: PathBytes) -> Bool {
        var p = path
        while p != root, p.isWithin(root) {
            if (try? FileStat.of(p.appending(Walk.noMedia))) != nil { return true }
            p = p.parent
        }
        return false
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

    /// Directory removals with the trees below them kept: a folder deleted (or moved out of the
    /// library) above a mount point that is unmounted, or recorded, takes the files and folders
    /// around the mount point with it, not the mount point's own assets. Each removal of a
    /// directory that holds such a tree becomes the removal of everything in it but the way to
    /// the tree: the files of each directory on the way, and its other subdirectories.
    /// - Parameter offline: the unavailable trees (the recorded ones are kept as well).
    public func sparingTrees(_ removed: [PathBytes], offline: Set<PathBytes>) -> (directories: [PathBytes], files: [(PathBytes, [UInt8])]) {
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

    // MARK: - The rule

    /// Applies `TreeAvailability` to the tree at `path` (a root or a mount point below one):
    /// probes the disk and the index, and records the tree's identity when the rule says to.
    @discardableResult
    public func check(_ path: PathBytes) -> TreeAvailability.Verdict {
        var (verdict, probe) = decide(path)
        if case .unavailable = verdict, refreshTable() != nil {
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

    private func decide(_ path: PathBytes) -> (TreeAvailability.Verdict, TreeAvailability.Probe) {
        var probe = self.probe(path)
        let recorded = records[path]
        let isRoot = state.withLock { $0.roots.contains(path) }
        if state.withLock({ $0.adopting.contains(path) }) {
            guard case .present(let seen) = probe else { return (.unavailable(probe.reason), probe) }
            return (.available(record: seen.identity == recorded ? nil : seen.identity), probe)
        }
        let indexed = (try? database.read { try $0.indexedTree(path) }) ?? TreeAvailability.Indexed(entries: 0)
        if case .present(var seen) = probe, let recorded, let identity = seen.identity, indexed.entries > 0,
           !(recorded.isConclusive && identity.isConclusive) {
            // Another card in the same reader has the same identity: look for the indexed files.
            seen.holdsIndexedFiles = holdsIndexedFiles(path)
            probe = .present(seen)
        }
        let verdict = TreeAvailability.verdict(path: path, isRoot: isRoot, recorded: recorded, probe: probe, indexed: indexed,
                                               adoptHint: Self.adoptHint(path))
        return (verdict, probe)
    }

    /// Whether any of a sample of the media files the index has in the tree is there, with the
    /// size and mtime indexed.
    private func holdsIndexedFiles(_ path: PathBytes) -> Bool {
        let sample = (try? database.read { try $0.sampleFiles(within: path, limit: Self.contentSample) }) ?? []
        guard !sample.isEmpty else { return true }
        return sample.contains { file in
            guard let st = try? FileStat.of(file.path, followLinks: false) else { return false }
            return st.isRegularFile && st.size == file.size && st.mtimeNanoseconds == file.mtimeNanoseconds
        }
    }

    /// What the disk shows at `path` now.
    func probe(_ path: PathBytes) -> TreeAvailability.Probe {
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
            state.withLock { _ = $0.probedMounts.removeValue(forKey: path) }
            return .unopenable(error.message)
        }
        let id = PhotoSystem.mountID(of: dir.descriptor)
        state.withLock { $0.probedMounts[path] = id }
        let canonical = DefaultPaths.canonical(path) ?? path
        guard let mount = table?.entry(of: dir.descriptor, path: canonical)
                ?? refreshTable()?.entry(of: dir.descriptor, path: canonical) else {
            return .present(TreeAvailability.Seen(identity: nil, mountPoint: nil, hasVisibleEntries: hasEntries, inode: st.inode))
        }
        var identity = MountIdentity(fsid: fs.fsid, fsType: UInt32(truncatingIfNeeded: fs.type),
                                     fsPath: mount.fileSystemPath(of: canonical))
        if !identity.fsidIsStable { identity.volume = volumeID(of: mount, directory: dir.descriptor) }
        return .present(TreeAvailability.Seen(identity: identity, mountPoint: mount.mountPoint, hasVisibleEntries: hasEntries,
                                              inode: st.inode))
    }

    /// The id of the mount `path` lies on now (a change means it was mounted again).
    public func mountID(of path: PathBytes) -> UInt64? {
        guard let dir = try? Directory(path: path) else { return nil }
        return PhotoSystem.mountID(of: dir.descriptor)
    }

    // MARK: - Records

    private var records: [PathBytes: MountIdentity] {
        let (cached, generation) = state.withLock { ($0.records, $0.generation) }
        if let cached { return cached }
        let loaded = (try? database.read { try $0.mounts() }) ?? [:]
        state.withLock { if $0.records == nil, $0.generation == generation { $0.records = loaded } }
        return loaded
    }

    private func record(_ path: PathBytes, _ identity: MountIdentity) {
        do {
            try database.write { try $0.recordMount(path, identity, now: now()) }
            state.withLock {
                $0.records = nil
                $0.generation += 1
            }
            logger.debug("library tree '\(path)' is \(identity)", [("path", path.string)])
        } catch {
            logger.error("cannot record the file system of '\(path)': \(error)", [("path", path.string)])
        }
    }

    private func forget(_ path: PathBytes) {
        do {
            try database.write { try $0.forgetMount(path) }
        } catch {
            logger.error("cannot forget the file system of '\(path)': \(error)", [("path", path.string)])
        }
        reloadRecords()
    }

    /// Reads the records again (directory moves rewrite the paths of those below them).
    public func reloadRecords() {
        state.withLock {
            $0.records = nil
            $0.generation += 1
        }
    }

    /// The operator says the tree at `path` is the library's now, whatever file system it is
    /// on: forgets its record (those of mount points below it stay) and accepts what the checks
    /// find there until `endAdoption`.
    func beginAdoption(of path: PathBytes) throws {
        try database.write { try $0.forgetMount(path) }
        reloadRecords()
        state.withLock { _ = $0.adopting.insert(path) }
    }

    /// The trees being adopted now.
    var adoptions: Set<PathBytes> { state.withLock { $0.adopting } }

    func endAdoption(of path: PathBytes) {
        state.withLock { _ = $0.adopting.remove(path) }
    }
}

extension TreeAvailability.Probe {
    var reason: String {
        if case .unopenable(let r) = self { return r }
        return "cannot be read"
    }
}
