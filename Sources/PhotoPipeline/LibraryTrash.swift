#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoStore
import PhotoSystem

/// Why photod will not trash, restore or delete an asset: the request's per-asset answer.
public struct TrashRefusal: Error, Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// No asset has the id (or, for a restore or a delete, none is in Recently Deleted).
        case notFound
        /// The asset's root is not one the operator opened to the trash (`--trash-root`).
        case permissionDenied
        /// The asset's tree is unmounted or not answering.
        case unavailable
        /// The file on disk is not the one photod indexed (or trashed): changed, replaced, gone.
        case conflict
    }

    public var id: AssetID
    public var kind: Kind
    public var reason: String

    public init(_ id: AssetID, _ kind: Kind, _ reason: String) {
        self.id = id
        self.kind = kind
        self.reason = reason
    }
}

/// The trash on disk: renames an asset's files to hidden names in their own directories
/// (`TrashName`) and back, and unlinks them for good — the only code that changes a library,
/// and only below the roots the operator named (`--trash-root`). Each name is changed through
/// a directory opened from its root without following links (`ConfinedDirectory`), with
/// `renameat2(RENAME_NOREPLACE)`; nothing is copied, and nothing is unlinked but a trashed file
/// of an asset in Recently Deleted. Every check is made before the first rename, so a refused
/// asset leaves its files as they were.
public struct LibraryTrash: Sendable {
    /// The roots whose files may be renamed and unlinked.
    public let roots: Set<PathBytes>
    /// The unavailable tree a path lies in, with the reason (`Trees.offlineTree(containing:)`).
    let offline: @Sendable (PathBytes) -> (tree: PathBytes, reason: String)?

    /// Tests only (`PHOTOD_TEST_CRASH_AFTER_RENAMES`): the process ends, as a crash would, after
    /// this many renames of an asset's files — a stop between the renames and their commit.
    let crashAfterRenames: Int?
    /// Tests only (`PHOTOD_TEST_CRASH_AFTER_UNLINKS`): the process ends after this many unlinks
    /// of an asset's trashed files — a stop between a delete's unlinks and its purge.
    let crashAfterUnlinks: Int?

    public init(roots: Set<PathBytes>, crashAfterRenames: Int? = nil, crashAfterUnlinks: Int? = nil,
                offline: @escaping @Sendable (PathBytes) -> (tree: PathBytes, reason: String)?) {
        self.roots = roots
        self.crashAfterRenames = crashAfterRenames
        self.crashAfterUnlinks = crashAfterUnlinks
        self.offline = offline
    }

    public init(roots: Set<PathBytes>, trees: Trees, crashAfterRenames: Int? = nil, crashAfterUnlinks: Int? = nil) {
        self.init(roots: roots, crashAfterRenames: crashAfterRenames, crashAfterUnlinks: crashAfterUnlinks) {
            trees.offlineTree(containing: $0)
        }
    }

    /// How far to look for a free name for a restored file (` (1)` … ` (999)`).
    static let suffixLimit = 999

    // MARK: Trash

    /// Why `asset` (in the library) may not be trashed now; nil when it may: its root is open to
    /// the trash, its tree is available, and every file is, byte for byte as far as the
    /// fingerprint tells, the one indexed (same inode, size, modification time and content).
    public func refusal(trashing asset: AssetFiles, expiresAt seconds: Int64) -> TrashRefusal? {
        if asset.deletedAt != nil { return TrashRefusal(asset.id, .notFound, "the asset is already in Recently Deleted") }
        if let refusal = writable(asset) { return refusal }
        if asset.files.isEmpty { return TrashRefusal(asset.id, .conflict, "the index has no file for the asset") }
        for file in asset.files {
            do {
                let dir = try ConfinedDirectory(file.directory, below: asset.root)
                let st = try dir.stat(file.name)
                let fsid = try dir.fileSystemID()
                guard Self.isIndexed(st, file), fsid == file.identity.fsid else {
                    return TrashRefusal(asset.id, .conflict, "'\(file.path)' changed since photod read it; it is read again first")
                }
                if let fingerprint = file.fingerprint,
                   MediaFileReader.fingerprint(of: file.name, in: dir.descriptor, size: st.size) != fingerprint {
                    return TrashRefusal(asset.id, .conflict, "'\(file.path)' has other content than photod read; it is read again first")
                }
                if TrashName.make(file.name, expiresAt: seconds) == nil {
                    return TrashRefusal(asset.id, .conflict, "'\(file.path)': the name is too long to take the trash's prefix")
                }
            } catch {
                return TrashRefusal(asset.id, .conflict, "'\(file.path)' cannot be checked: \(error.message)")
            }
        }
        return nil
    }

    /// Renames every file of `asset` to its trashed name (checked by `refusal(trashing:expiresAt:)`
    /// first). All or nothing: when a rename fails, those made are undone.
    public func trash(_ asset: AssetFiles, expiresAt seconds: Int64) throws(TrashRefusal) -> [TrashedFile] {
        var done: [TrashedFile] = []
        for file in asset.files {
            guard let hidden = TrashName.make(file.name, expiresAt: seconds) else {
                undo(done, root: asset.root)
                throw TrashRefusal(asset.id, .conflict, "'\(file.path)': the name is too long to take the trash's prefix")
            }
            do {
                let dir = try ConfinedDirectory(file.directory, below: asset.root)
                try dir.rename(file.name, to: hidden)
                done.append(TrashedFile(file: file, trashedName: hidden))
                if done.count == crashAfterRenames { _exit(137) }
                // Replaced between the check and the rename (a sync tool renaming a new version
                // over it): not the file photod read, so not trashed.
                guard let st = try? dir.stat(hidden), Self.isIndexed(st, file) else {
                    undo(done, root: asset.root)
                    throw TrashRefusal(asset.id, .conflict, "'\(file.path)' changed while it was being trashed; it is read again first")
                }
                try? dir.sync()
            } catch let refusal as TrashRefusal {
                throw refusal
            } catch let error as SystemError {
                undo(done, root: asset.root)
                throw TrashRefusal(asset.id, .conflict, "'\(file.path)' could not be renamed: \(Self.explain(error))")
            } catch {
                undo(done, root: asset.root)
                throw TrashRefusal(asset.id, .conflict, "'\(file.path)' could not be renamed: \(error)")
            }
        }
        return done
    }

    /// Puts trashed files back under their names (a trash whose commit failed).
    public func undo(_ renamed: [TrashedFile], root: PathBytes) {
        for r in renamed.reversed() {
            guard let dir = try? ConfinedDirectory(r.file.directory, below: root) else { continue }
            try? dir.rename(r.trashedName, to: r.file.name)
            try? dir.sync()
        }
    }

    // MARK: Restore

    /// A file of an asset in Recently Deleted, found in its trash.
    public struct Found: Sendable, Hashable {
        public var file: AssetFile
        /// Its hidden name now.
        public var trashedName: [UInt8]
    }

    /// The trashed files of `asset` (in Recently Deleted), each checked to be the file it
    /// trashed; a refusal when the root is closed, the tree unavailable, or a file is gone or
    /// another. `requireAll`: every file of the asset must be in the trash (a restore); else
    /// files deleted by someone else are skipped (a delete for good).
    public func trashedFiles(of asset: AssetFiles, requireAll: Bool) -> Result<[Found], TrashRefusal> {
        guard asset.deletedAt != nil else { return .failure(TrashRefusal(asset.id, .notFound, "the asset is not in Recently Deleted")) }
        if let refusal = writable(asset) { return .failure(refusal) }
        var found: [Found] = []
        for file in asset.files {
            guard let dir = try? ConfinedDirectory(file.directory, below: asset.root) else {
                if !requireAll { continue }
                return .failure(TrashRefusal(asset.id, .conflict, "the folder '\(file.directory)' is gone"))
            }
            if let name = Self.trashedName(of: file, in: dir) {
                found.append(Found(file: file, trashedName: name))
            } else if requireAll {
                let why = file.trashedName == nil
                    ? "'\(file.path)' was deleted outside photod; put the file back and photod restores the asset"
                    : "the trashed file of '\(file.path)' is gone"
                return .failure(TrashRefusal(asset.id, .conflict, why))
            }
        }
        if requireAll, found.isEmpty { return .failure(TrashRefusal(asset.id, .conflict, "the asset has no file in the trash")) }
        return .success(found)
    }

    /// The names `files` (one asset's, from `trashedFiles`) go back to: their own, or all with
    /// the first suffix ` (n)` that leaves each free and its base name unused by the folder's
    /// other files (a restored file must not pair with another asset's).
    public func restoredNames(_ files: [Found], of asset: AssetFiles) throws(TrashRefusal) -> [[UInt8]] {
        var usedBases: [PathBytes: Set<[UInt8]>] = [:]
        var listed: [PathBytes: Set<[UInt8]>] = [:]
        for folder in Set(files.map(\.file.directory)) {
            guard let dir = try? ConfinedDirectory(folder, below: asset.root), let entries = try? Directory(path: dir.path).entries() else {
                throw TrashRefusal(asset.id, .conflict, "the folder '\(folder)' cannot be read")
            }
            listed[folder] = Set(entries.map(\.name))
            usedBases[folder] = Set(entries.map(\.name).filter { $0.first != UInt8(ascii: ".") }.map(ResourcePairing.groupKey))
        }
        for n in 0...Self.suffixLimit {
            let names = files.map { f in
                n == 0 ? f.file.name : TrashName.suffixed(f.file.name, baseLength: ResourcePairing.groupKey(of: f.file.name).count, n)
            }
            let free = zip(files, names).allSatisfy { f, name in
                listed[f.file.directory]?.contains(name) == false
                    && usedBases[f.file.directory]?.contains(ResourcePairing.groupKey(of: name)) == false
            }
            if free { return names }
        }
        throw TrashRefusal(asset.id, .conflict, "no free name to restore its files under")
    }

    /// Renames `files` back to `names` (`restoredNames`). All or nothing: when a rename fails
    /// (a name taken meanwhile), those made are undone. Returns the restores for the writer (the
    /// tombstones become file rows again) and the names that differ from the original ones.
    public func restore(_ files: [Found], to names: [[UInt8]], of asset: AssetFiles) throws(TrashRefusal)
        -> (restores: [FileRestore], renamed: [(from: PathBytes, to: PathBytes)]) {
        var restores: [FileRestore] = []
        var renamed: [(PathBytes, PathBytes)] = []
        for (f, name) in zip(files, names) {
            do {
                let dir = try ConfinedDirectory(f.file.directory, below: asset.root)
                try dir.rename(f.trashedName, to: name)
                try? dir.sync()
            } catch {
                undo(restores, of: files, root: asset.root)
                throw TrashRefusal(asset.id, .conflict, "'\(f.file.directory.appending(name))' could not be restored: \(Self.explain(error))")
            }
            // The same inode, size and mtime as trashed (a rename changes none of them).
            restores.append(FileRestore(path: f.file.directory.appending(name), identity: f.file.identity, tombstone: f.file.tombstone ?? 0))
            if name != f.file.name { renamed.append((f.file.path, f.file.directory.appending(name))) }
        }
        return (restores, renamed)
    }

    /// Puts restored files back in the trash (a restore whose commit failed).
    public func undo(_ restores: [FileRestore], of files: [Found], root: PathBytes) {
        for (r, f) in zip(restores, files) {
            guard let dir = try? ConfinedDirectory(f.file.directory, below: root) else { continue }
            try? dir.rename(r.path.lastComponent, to: f.trashedName)
        }
    }

    // MARK: Delete for good

    /// Deletes for good: unlinks the trashed files found of each asset (in Recently Deleted)
    /// after recording the assets, durably, as about to go (`IndexWriter.planDeletion`); the
    /// caller's purge forgets the record in its transaction, and after a stop before it the next
    /// start finishes the delete (`TrashRecovery`): no asset stays in Recently Deleted with its
    /// files unlinked. Returns the assets to purge, and those kept (a file that could not be
    /// unlinked), each with the reason.
    public func unlink(_ plans: [(asset: AssetFiles, found: [Found])], recordingIn writer: IndexWriter)
        throws(StoreError) -> (purge: [Int64], kept: [TrashRefusal]) {
        guard !plans.isEmpty else { return ([], []) }
        try writer.planDeletion(plans.map(\.asset.pk))
        var purge: [Int64] = []
        var kept: [TrashRefusal] = []
        for plan in plans {
            if let failure = unlink(plan.found, of: plan.asset) { kept.append(failure) } else { purge.append(plan.asset.pk) }
        }
        return (purge, kept)
    }

    /// Deletes `assets` (in Recently Deleted) for good as `unlink(_:recordingIn:)` does, their
    /// trashed files looked for first: an asset whose files cannot be (its root closed to the
    /// trash, its tree unavailable) is kept, with the reason.
    public func deleteForGood(_ assets: [AssetFiles], recordingIn writer: IndexWriter)
        throws(StoreError) -> (purge: [Int64], kept: [TrashRefusal]) {
        var plans: [(asset: AssetFiles, found: [Found])] = []
        var kept: [TrashRefusal] = []
        for asset in assets {
            switch trashedFiles(of: asset, requireAll: false) {
            case .success(let found): plans.append((asset, found))
            case .failure(let why): kept.append(why)
            }
        }
        let (purge, failures) = try unlink(plans, recordingIn: writer)
        return (purge, kept + failures)
    }

    /// Unlinks the trashed files of `asset`; the reason when one could not be unlinked.
    func unlink(_ files: [Found], of asset: AssetFiles) -> TrashRefusal? {
        for (n, f) in files.enumerated() {
            do {
                let dir = try ConfinedDirectory(f.file.directory, below: asset.root)
                try dir.unlink(f.trashedName)
                try? dir.sync()
                if n + 1 == crashAfterUnlinks { _exit(137) }
            } catch {
                return TrashRefusal(asset.id, .conflict, "the trashed file of '\(f.file.path)' could not be deleted: \(error.message)")
            }
        }
        return nil
    }

    // MARK: Rules

    /// The root is open to the trash and the asset's tree is available.
    private func writable(_ asset: AssetFiles) -> TrashRefusal? {
        guard roots.contains(asset.root) else {
            return TrashRefusal(asset.id, .permissionDenied,
                                "the root '\(asset.root)' is read-only for photod (start photod with --trash-root \(asset.root) to allow it)")
        }
        let paths = Set(asset.files.map(\.directory))
        for path in paths {
            if let (tree, reason) = offline(path) {
                return TrashRefusal(asset.id, .unavailable, "'\(tree)' is unavailable: \(reason)")
            }
        }
        for path in paths.sorted() {
            guard let dir = try? ConfinedDirectory(path, below: asset.root), let denial = dir.writeDenial() else { continue }
            let hint = denial.errno == EROFS
                ? " (a read-only mount; under systemd: systemctl edit photod.service, [Service] ReadWritePaths=\(asset.root))"
                : " (photod's user needs write permission on the folder)"
            return TrashRefusal(asset.id, .permissionDenied, "photod may not rename files in '\(path)': \(denial.message)" + hint)
        }
        return nil
    }

    /// Whether `st` is the file the index has as `file` (a rename keeps all of these).
    static func isIndexed(_ st: FileStat, _ file: AssetFile) -> Bool {
        st.isRegularFile && st.inode == file.identity.inode && st.size == file.identity.size
            && st.mtimeNanoseconds == file.identity.mtimeNanoseconds
    }

    /// A rename's failure in words; `EINVAL` from `renameat2` is a file system that cannot
    /// rename without replacing (NFS, some FUSE file systems): photod will not risk a replace.
    static func explain(_ error: SystemError) -> String {
        error.errno == EINVAL && error.call == "renameat2"
            ? "this file system cannot rename without replacing (no RENAME_NOREPLACE, as on NFS): photod does not trash here"
            : error.message
    }

    /// The hidden name `file` has in `dir` now: the one recorded, else one the index did not
    /// record (photod stopped between the rename and its commit) found by its original name and
    /// identity; nil when there is none, or a file of another identity holds it.
    static func trashedName(of file: AssetFile, in dir: ConfinedDirectory) -> [UInt8]? {
        func isTheFile(_ name: [UInt8]) -> Bool {
            guard let st = try? dir.stat(name) else { return false }
            return isIndexed(st, file)
        }
        if let name = file.trashedName { return isTheFile(name) ? name : nil }
        guard let listing = try? Directory(path: dir.path).entries() else { return nil }
        return listing.map(\.name).first { TrashName.parse($0)?.original == file.name && isTheFile($0) }
    }
}

extension LibraryTrash {
    /// The renames trashing `assets` makes (`IndexWriter.plan` records them first).
    public static func plan(trashing assets: [AssetFiles], expiresAt seconds: Int64) -> [PlannedRename] {
        assets.flatMap { asset in
            asset.files.compactMap { file in
                TrashName.make(file.name, expiresAt: seconds).map {
                    PlannedRename(root: asset.root, directory: file.directory, name: file.name, hidden: $0,
                                  inode: file.identity.inode, restoring: false)
                }
            }
        }
    }

    /// The renames restoring `files` of `asset` to `names` makes.
    public static func plan(restoring files: [Found], to names: [[UInt8]], of asset: AssetFiles) -> [PlannedRename] {
        zip(files, names).map { f, name in
            PlannedRename(root: asset.root, directory: f.file.directory, name: name, hidden: f.trashedName,
                          inode: f.file.identity.inode, restoring: true)
        }
    }
}

/// At a start, before anything walks the library: the renames of a trash or restore call that
/// stopped before its commit (`IndexWriter.plan`) are undone, so that the files are where the
/// index has them — all of an asset's, not some (a RAW renamed, its JPEG not). A file is renamed
/// back only when it is the one planned (its inode) and its other name is free; a root no longer
/// open to the trash keeps the plan, and is undone at the first start that opens it.
///
/// Then a delete for good that stopped between its first unlink and its purge's commit
/// (`IndexWriter.planDeletion`) is finished: the trashed files left of its assets are unlinked
/// and the assets purged, as the call would have (one whose files cannot be unlinked, its root
/// closed to the trash or its tree unavailable, stays in Recently Deleted).
public final class TrashRecovery: Service {
    private let sortQueue: SortQueue
    private let trash: LibraryTrash
    private let logger: Logger
    private var roots: Set<PathBytes> { trash.roots }

    public init(sortQueue: SortQueue, trash: LibraryTrash, logger: Logger) {
        self.sortQueue = sortQueue
        self.trash = trash
        self.logger = logger
    }

    public func start() throws {
        try undoRenames()
        try finishDeletions()
    }

    public func stop() {}

    private func finishDeletions() throws {
        // (A plan whose assets were all purged or restored since is simply forgotten.)
        let pending = try sortQueue.perform { writer in
            let pending = try writer.pendingDeletions()
            if pending.isEmpty { try writer.clearDeletionPlan() }
            return pending
        }
        guard !pending.isEmpty else { return }
        let (trash, logger) = (self.trash, self.logger)
        _ = try sortQueue.commit { writer, now in
            let (purge, kept) = try trash.deleteForGood(pending, recordingIn: writer)
            if let first = kept.first {
                logger.warning("a delete for good that stopped before its commit: \(kept.count) assets kept in Recently "
                               + "Deleted, their trashed files not deleted (e.g. \(first.id): \(first.reason))")
            }
            logger.notice("finished a delete for good that stopped before its commit: \(purge.count) of \(pending.count) assets purged")
            return try writer.purge(purge, now: now)
        }
    }

    private func undoRenames() throws {
        let pending = try sortQueue.perform { try $0.pendingRenames() }
        guard !pending.isEmpty else { return }
        guard pending.allSatisfy({ roots.contains($0.root) }) else {
            logger.warning("a trash or restore stopped before its commit left \(pending.count) renames to undo in roots "
                           + "no longer open to the trash (--trash-root): left until they are")
            return
        }
        var undone = 0
        for rename in pending where Self.undo(rename) { undone += 1 }
        try sortQueue.perform { try $0.clearPlan() }
        logger.notice("undid \(undone) of \(pending.count) renames of a trash or restore that stopped before its commit")
    }

    /// Renames one file back; whether it did.
    static func undo(_ r: PlannedRename) -> Bool {
        guard let dir = try? ConfinedDirectory(r.directory, below: r.root) else { return false }
        let (from, to) = r.restoring ? (r.name, r.hidden) : (r.hidden, r.name)
        guard let st = try? dir.stat(from), st.inode == r.inode, (try? dir.stat(to)) == nil else { return false }
        do {
            try dir.rename(from, to: to)
            try? dir.sync()
            return true
        } catch {
            return false
        }
    }
}
