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
/// the index, and records identities. Thread-safe; called from the walk and the live thread.
public final class MountGuard: Sendable {
    let database: Database
    let logger: Logger
    let now: @Sendable () -> Int64
    private let state = Locked(State())

    private struct State: Sendable {
        /// The recorded identities, loaded on first use.
        var records: [PathBytes: MountIdentity]?
        var table: MountTable?
        /// Mount points of `table`, for `isTop` (called for every directory a walk visits).
        var mountPoints: Set<PathBytes> = []
        /// Trees an operator adopted: their next check accepts whatever is there.
        var adopting: Set<PathBytes> = []
        /// The library roots scans were asked for (always recorded, mount points or not).
        var roots: Set<PathBytes> = []
    }

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

    private var table: MountTable? { state.withLock { $0.table } ?? refreshTable() }

    // MARK: - Trees

    /// Notes the library roots (a scan's): their identity is recorded whether or not they are
    /// mount points of their own (a root on a bind mount that goes away is a plain directory).
    func register(roots: [PathBytes]) {
        state.withLock { $0.roots.formUnion(roots) }
    }

    /// The mount points below `root` now and the trees recorded there, without `root`.
    public func trees(below root: PathBytes) -> [PathBytes] {
        let (records, points) = (self.records, state.withLock { $0.mountPoints })
        let all = Set(records.keys).union(points).filter { $0.isWithin(root) && $0 != root }
        return all.sorted()
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

    /// The innermost tree `path` lies in.
    public func tree(of path: PathBytes, roots: [PathBytes]) -> PathBytes? { trees(containing: path, roots: roots).last }

    /// The first tree at or above `path` that must not be scanned, with the reason; nil when
    /// `path` may be compared with the index.
    public func unavailability(of path: PathBytes, roots: [PathBytes]) -> (tree: PathBytes, reason: String)? {
        for tree in trees(containing: path, roots: roots) {
            if let reason = check(tree).reason { return (tree, reason) }
        }
        return nil
    }

    // MARK: - The rule

    /// Applies `TreeAvailability` to the tree at `path` (a root or a mount point below one):
    /// probes the disk and the index, and records the tree's identity when the rule says to.
    @discardableResult
    public func check(_ path: PathBytes) -> TreeAvailability.Verdict {
        var verdict = decide(path)
        if case .unavailable = verdict, refreshTable() != nil {
            // The table may have been older than the disk: judge once more on a fresh one.
            verdict = decide(path)
        }
        // Roots and mount points only: a plain directory recorded would be kept as a mount
        // point that is gone once its folder is deleted.
        if case .available(let record?) = verdict,
           state.withLock({ $0.roots.contains(path) || $0.mountPoints.contains(path) || $0.records?[path] != nil }) {
            self.record(path, record)
        }
        return verdict
    }

    private func decide(_ path: PathBytes) -> TreeAvailability.Verdict {
        let probe = self.probe(path)
        let recorded = records[path]
        if state.withLock({ $0.adopting.contains(path) }) {
            guard case .present(let identity, _, _) = probe else { return .unavailable(probe.reason) }
            return .available(record: identity == recorded ? nil : identity)
        }
        let entries = (try? database.read { try $0.entryCount(of: path) }) ?? 0
        return TreeAvailability.verdict(path: path, recorded: recorded, probe: probe, indexedEntries: entries,
                                        adoptHint: Self.adoptHint(path))
    }

    /// What the disk shows at `path` now.
    func probe(_ path: PathBytes) -> TreeAvailability.Probe {
        let dir: Directory
        let fs: FileSystemInfo
        let hasEntries: Bool
        do {
            dir = try Directory(path: path)
            fs = try dir.fileSystem()
            hasEntries = try dir.hasVisibleEntries()
        } catch {
            return .unopenable(error.message)
        }
        let canonical = DefaultPaths.canonical(path) ?? path
        guard let mount = table?.entry(of: dir.descriptor, path: canonical)
                ?? refreshTable()?.entry(of: dir.descriptor, path: canonical) else {
            return .present(identity: nil, mountPoint: nil, hasVisibleEntries: hasEntries)
        }
        let identity = MountIdentity(fsid: fs.fsid, fsType: UInt32(truncatingIfNeeded: fs.type),
                                     fsPath: mount.fileSystemPath(of: canonical))
        return .present(identity: identity, mountPoint: mount.mountPoint, hasVisibleEntries: hasEntries)
    }

    /// The id of the mount `path` lies on now (a change means it was mounted again).
    public func mountID(of path: PathBytes) -> UInt64? {
        guard let dir = try? Directory(path: path) else { return nil }
        return PhotoSystem.mountID(of: dir.descriptor)
    }

    // MARK: - Records

    private var records: [PathBytes: MountIdentity] {
        if let loaded = state.withLock({ $0.records }) { return loaded }
        let loaded = (try? database.read { try $0.mounts() }) ?? [:]
        state.withLock { if $0.records == nil { $0.records = loaded } }
        return loaded
    }

    private func record(_ path: PathBytes, _ identity: MountIdentity) {
        do {
            try database.write { try $0.recordMount(path, identity, now: now()) }
            _ = records
            state.withLock { $0.records?[path] = identity }
            logger.debug("library tree '\(path)' is \(identity)", [("path", path.string)])
        } catch {
            logger.error("cannot record the file system of '\(path)': \(error)", [("path", path.string)])
        }
    }

    /// Reads the records again (directory moves rewrite the paths of those below them).
    public func reloadRecords() {
        state.withLock { $0.records = nil }
    }

    /// The operator says the tree at `path` is the library's now, whatever file system it is
    /// on: forgets what was recorded at and below it and accepts what the next checks find there
    /// (until `endAdoption`).
    func beginAdoption(of path: PathBytes) throws {
        try database.write { try $0.forgetMounts(within: path) }
        _ = records
        state.withLock { s in
            s.records = s.records?.filter { !$0.key.isWithin(path) }
            s.adopting.insert(path)
        }
    }

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
