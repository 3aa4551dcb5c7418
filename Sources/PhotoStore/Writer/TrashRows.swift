import PhotoModel

/// A file of an asset as the index has it: where it is, what identifies it, and for an asset in
/// Recently Deleted its tombstone and the hidden name `assets.trash` gave it (nil for a file
/// someone else deleted).
public struct AssetFile: Sendable, Hashable {
    public var directory: PathBytes
    public var name: [UInt8]
    public var identity: FileIdentity
    public var fingerprint: UInt64?
    public var tombstone: Int64?
    public var trashedName: [UInt8]?

    public init(directory: PathBytes, name: [UInt8], identity: FileIdentity, fingerprint: UInt64?,
                tombstone: Int64? = nil, trashedName: [UInt8]? = nil) {
        self.directory = directory
        self.name = name
        self.identity = identity
        self.fingerprint = fingerprint
        self.tombstone = tombstone
        self.trashedName = trashedName
    }

    public var path: PathBytes { directory.appending(name) }
}

/// An asset and its files: those on disk when it is in the library, those it had (its
/// tombstones) when it is in Recently Deleted.
public struct AssetFiles: Sendable, Hashable {
    public var id: AssetID
    public var pk: Int64
    /// The library root it lies in.
    public var root: PathBytes
    /// When it went to Recently Deleted (Unix milliseconds); nil when it is in the library.
    public var deletedAt: Int64?
    public var files: [AssetFile]

    public init(id: AssetID, pk: Int64, root: PathBytes, deletedAt: Int64?, files: [AssetFile]) {
        self.id = id
        self.pk = pk
        self.root = root
        self.deletedAt = deletedAt
        self.files = files
    }
}

/// A file `assets.trash` renamed: the name it had and the hidden one it has now.
public struct TrashedFile: Sendable, Hashable {
    public var file: AssetFile
    public var trashedName: [UInt8]

    public init(file: AssetFile, trashedName: [UInt8]) {
        self.file = file
        self.trashedName = trashedName
    }
}

/// A rename a trash or restore call is about to make: the file `name` in `directory` (below
/// `root`) and its hidden name; `restoring`, from the hidden name back to `name`.
public struct PlannedRename: Sendable, Hashable {
    public var root: PathBytes
    public var directory: PathBytes
    public var name: [UInt8]
    public var hidden: [UInt8]
    public var inode: UInt64
    public var restoring: Bool

    public init(root: PathBytes, directory: PathBytes, name: [UInt8], hidden: [UInt8], inode: UInt64, restoring: Bool) {
        self.root = root
        self.directory = directory
        self.name = name
        self.hidden = hidden
        self.inode = inode
        self.restoring = restoring
    }
}

/// The trash's rows: what `assets.trash`, `assets.restore` and `assets.deletePermanently`
/// read before they touch the disk, and what they write after.
extension IndexWriter {
    /// The files of each of `ids` that the index knows (an unknown id is absent).
    public func assetFiles(_ ids: [AssetID]) throws(StoreError) -> [AssetID: AssetFiles] {
        let asset = try db.statement("""
            SELECT a.pk, a.deleted_at, r.path FROM assets a JOIN roots r ON r.id = a.root_id WHERE a.id = :id
            """)
        var found: [AssetID: AssetFiles] = [:]
        for id in ids where found[id] == nil {
            asset.bind(":id", to: id.rawValue)
            defer { asset.reset() }
            guard try asset.step() else { continue }
            let pk = asset.int64(0)
            let deletedAt = asset.isNull(1) ? nil : asset.int64(1)
            let root = PathBytes(asset.bytes(2))
            asset.reset()
            let files = if let deletedAt { try tombstones(ofAsset: pk, since: deletedAt) } else { try files(ofAsset: pk) }
            found[id] = AssetFiles(id: id, pk: pk, root: root, deletedAt: deletedAt, files: files)
        }
        return found
    }

    /// The assets in Recently Deleted since before `cutoff` that have trashed files (the
    /// retention purge unlinks those first).
    public func trashedAssets(deletedBefore cutoff: Int64) throws(StoreError) -> [AssetFiles] {
        let s = try db.statement("""
            SELECT DISTINCT a.id FROM tombstones t JOIN assets a ON a.pk = t.asset_pk
            WHERE t.trashed_name IS NOT NULL AND a.deleted_at IS NOT NULL AND a.deleted_at < :cutoff
            """)
        s.bind(":cutoff", to: cutoff)
        var ids: [AssetID] = []
        while try s.step() { if let id = AssetID(rawValue: s.string(0)) { ids.append(id) } }
        return try assetFiles(ids).values.sorted { $0.pk < $1.pk }
    }

    /// Records, durably, the renames a call is about to make (`trash_pending`), before the first.
    public func plan(_ renames: [PlannedRename]) throws(StoreError) {
        try db.transaction(durable: true) { () throws(StoreError) in
            try db.execute("DELETE FROM trash_pending")
            let s = try db.statement("""
                INSERT INTO trash_pending (root, directory, name, hidden, inode, restoring)
                VALUES (:root, :directory, :name, :hidden, :inode, :restoring)
                """)
            for r in renames {
                s.bind(":root", to: r.root)
                s.bind(":directory", to: r.directory)
                s.bind(":name", to: r.name)
                s.bind(":hidden", to: r.hidden)
                s.bind(":inode", to: Int64(bitPattern: r.inode))
                s.bind(":restoring", to: r.restoring ? 1 : 0)
                try s.run()
            }
        }
    }

    /// The renames of a call that did not commit (a crash between its renames and its commit).
    public func pendingRenames() throws(StoreError) -> [PlannedRename] {
        let s = try db.statement("SELECT root, directory, name, hidden, inode, restoring FROM trash_pending")
        defer { s.reset() }
        var out: [PlannedRename] = []
        while try s.step() {
            out.append(PlannedRename(root: PathBytes(s.bytes(0)), directory: PathBytes(s.bytes(1)), name: s.bytes(2),
                                     hidden: s.bytes(3), inode: UInt64(bitPattern: s.int64(4)), restoring: s.int64(5) != 0))
        }
        return out
    }

    /// Forgets the planned renames (undone, or rolled back after a crash).
    public func clearPlan() throws(StoreError) {
        try db.transaction(durable: true) { () throws(StoreError) in try db.execute("DELETE FROM trash_pending") }
    }

    /// Records, durably, the assets (pks, in Recently Deleted) whose trashed files are about to
    /// be unlinked for good, before the first unlink; the purge's transaction forgets them.
    public func planDeletion(_ pks: [Int64]) throws(StoreError) {
        try db.transaction(durable: true) { () throws(StoreError) in
            try db.execute("DELETE FROM delete_pending")
            let s = try db.statement("INSERT OR IGNORE INTO delete_pending (asset_pk) VALUES (:pk)")
            for pk in pks {
                s.bind(":pk", to: pk)
                try s.run()
            }
        }
    }

    /// The assets of a delete for good that did not commit (a stop between its unlinks and its
    /// purge), as `assetFiles` has them; those purged or restored since are left out.
    public func pendingDeletions() throws(StoreError) -> [AssetFiles] {
        let s = try db.statement("""
            SELECT a.id FROM delete_pending d JOIN assets a ON a.pk = d.asset_pk WHERE a.deleted_at IS NOT NULL
            """)
        var ids: [AssetID] = []
        while try s.step() { if let id = AssetID(rawValue: s.string(0)) { ids.append(id) } }
        s.reset()
        return try assetFiles(ids).values.sorted { $0.pk < $1.pk }
    }

    /// Forgets the planned deletions (settled without a purge), when there are any.
    public func clearDeletionPlan() throws(StoreError) {
        guard try db.scalar("SELECT EXISTS (SELECT 1 FROM delete_pending)").int64 == 1 else { return }
        try db.transaction(durable: true) { () throws(StoreError) in try db.execute("DELETE FROM delete_pending") }
    }

    /// Takes the renamed files out of the library, in one durable transaction: their assets go
    /// to Recently Deleted (ids and user state kept, as for any deleted file), each tombstone
    /// remembering its file's hidden name; the plan is done.
    public func trash(_ renamed: [TrashedFile], now: Int64) throws(StoreError) -> ChangeSet {
        var batch = WriteBatch()
        batch.removedFiles = renamed.map { ($0.file.directory, $0.file.name) }
        return try commit(now: now, durable: true) { job throws(StoreError) in
            try db.execute("DELETE FROM trash_pending")
            try write(batch, job)
            let mark = try db.statement("""
                UPDATE tombstones SET trashed_name = :trashed
                WHERE directory_path = :directory AND name = :name AND deleted_at = :now AND trashed_name IS NULL
                """)
            for r in renamed {
                mark.bind(":trashed", to: r.trashedName)
                mark.bind(":directory", to: r.file.directory)
                mark.bind(":name", to: r.file.name)
                mark.bind(":now", to: now)
                try mark.run()
            }
            return ChangeSet()
        }
    }

    /// Brings the renamed-back files' assets out of Recently Deleted (their tombstones become
    /// file rows again, as for a file found again), in one durable transaction; the plan is done.
    public func restore(_ restores: [FileRestore], now: Int64) throws(StoreError) -> ChangeSet {
        var batch = WriteBatch()
        batch.restoredFiles = restores
        return try commit(now: now, durable: true) { job throws(StoreError) in
            try db.execute("DELETE FROM trash_pending")
            try write(batch, job)
            return ChangeSet()
        }
    }

    // MARK: Trashed files found

    /// Files a walk found under a trashed name that no tombstone records, read as media: the
    /// trash outlives its records. A file with the identity of an asset in Recently Deleted is
    /// that asset's (photod stopped between the rename and its commit): its tombstone learns the
    /// hidden name. Any other — the database was lost or rebuilt — becomes an asset in Recently
    /// Deleted under its original name (a trashed RAW+JPEG pair shares a hidden base name, and
    /// stays one asset), kept until the expiry its name carries, its tombstone recording the
    /// hidden name so that it can be restored or deleted for good.
    func adoptTrashed(_ found: [FileOutcome], _ job: WriteJob) throws(StoreError) {
        let known = try db.statement("""
            SELECT 1 FROM tombstones WHERE directory_path = :directory AND trashed_name = :name LIMIT 1
            """)
        // Any tombstone of an asset in Recently Deleted with the file's identity, recorded or not:
        // a folder renamed since the trash leaves the recorded place behind.
        let deletedOnes = try db.statement("""
            SELECT t.pk FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND a.deleted_at IS NOT NULL
            WHERE t.fsid = :fsid AND t.inode = :inode AND t.size = :size AND t.mtime_ns = :mtime
            LIMIT 1
            """)
        let learn = try db.statement("""
            UPDATE tombstones SET trashed_name = :trashed, directory_path = :directory, name = :name WHERE pk = :pk
            """)
        // (a tombstone of a file renamed in a moved folder keeps its original name)
        var unknown: [FileOutcome] = []
        for file in found {
            guard let (original, _) = TrashName.parse(file.name) else { continue }
            known.bind(":directory", to: file.directory)
            known.bind(":name", to: file.name)
            let recorded = try known.step()
            known.reset()
            if recorded { continue }
            deletedOnes.bind(":fsid", to: Int64(bitPattern: file.identity.fsid))
            deletedOnes.bind(":inode", to: Int64(bitPattern: file.identity.inode))
            deletedOnes.bind(":size", to: file.identity.size)
            deletedOnes.bind(":mtime", to: file.identity.mtimeNanoseconds)
            let tombstone: Int64? = try deletedOnes.step() ? deletedOnes.int64(0) : nil
            deletedOnes.reset()
            if let tombstone {
                learn.bind(":trashed", to: file.name)
                learn.bind(":directory", to: file.directory)
                learn.bind(":name", to: original)
                learn.bind(":pk", to: tombstone)
                try learn.run()
                continue
            }
            switch file.kind {
            case .media, .sidecar: unknown.append(file)
            default: continue  // not media, or unreadable: nothing to keep
            }
        }
        guard !unknown.isEmpty else { return }
        // Indexed under their hidden names, composed into assets, then removed: their assets go
        // to Recently Deleted with tombstones, which then take the original names.
        var rows = WriteBatch()
        rows.files = unknown
        try writeRows(rows, job)
        var removal = WriteBatch()
        removal.removedFiles = unknown.map { ($0.directory, $0.name) }
        try writeRows(removal, job)
        let rename = try db.statement("""
            UPDATE tombstones SET trashed_name = name, name = :original
            WHERE directory_path = :directory AND name = :trashed AND deleted_at = :now RETURNING asset_pk
            """)
        let asset = try db.statement("""
            UPDATE assets SET deleted_at = min(deleted_at, :when),
                              path = CASE WHEN path = :old THEN :new ELSE path END
            WHERE pk = :pk AND deleted_at IS NOT NULL
            """)
        for file in unknown {
            guard let (original, expiresAt) = TrashName.parse(file.name) else { continue }
            rename.bind(":original", to: original)
            rename.bind(":directory", to: file.directory)
            rename.bind(":trashed", to: file.name)
            rename.bind(":now", to: job.now)
            var pks: [Int64] = []
            while try rename.step() { pks.append(rename.int64(0)) }
            rename.reset()
            for pk in pks {
                asset.bind(":when", to: expiresAt * 1000 - retentionMilliseconds)
                asset.bind(":old", to: file.path)
                asset.bind(":new", to: file.directory.appending(original))
                asset.bind(":pk", to: pk)
                try asset.run()
            }
        }
    }

    // MARK: Reads

    private func files(ofAsset pk: Int64) throws(StoreError) -> [AssetFile] {
        let s = try db.statement("""
            SELECT d.path, f.name, f.fsid, f.inode, f.size, f.mtime_ns, f.fingerprint
            FROM files f JOIN directories d ON d.id = f.directory_id WHERE f.asset_pk = :pk ORDER BY d.path, f.name
            """)
        s.bind(":pk", to: pk)
        var out: [AssetFile] = []
        while try s.step() {
            out.append(AssetFile(directory: PathBytes(s.bytes(0)), name: s.bytes(1), identity: Self.identity(s, from: 2),
                                 fingerprint: s.isNull(6) ? nil : UInt64(bitPattern: s.int64(6))))
        }
        return out
    }

    /// The files the asset had when it went to Recently Deleted (at `deletedAt`): tombstones
    /// older than that are of files it had lost while still in the library (a RAW deleted by
    /// hand beside its JPEG), which a restore does not bring back.
    private func tombstones(ofAsset pk: Int64, since deletedAt: Int64) throws(StoreError) -> [AssetFile] {
        let s = try db.statement("""
            SELECT directory_path, name, fsid, inode, size, mtime_ns, fingerprint, pk, trashed_name
            FROM tombstones WHERE asset_pk = :pk AND deleted_at >= :since ORDER BY directory_path, name
            """)
        s.bind(":pk", to: pk)
        s.bind(":since", to: deletedAt)
        var out: [AssetFile] = []
        while try s.step() {
            out.append(AssetFile(directory: PathBytes(s.bytes(0)), name: s.bytes(1), identity: Self.identity(s, from: 2),
                                 fingerprint: s.isNull(6) ? nil : UInt64(bitPattern: s.int64(6)),
                                 tombstone: s.int64(7), trashedName: s.isNull(8) ? nil : s.bytes(8)))
        }
        return out
    }

    private static func identity(_ s: Statement, from i: Int32) -> FileIdentity {
        FileIdentity(fsid: UInt64(bitPattern: s.int64(i)), inode: UInt64(bitPattern: s.int64(i + 1)),
                     size: s.int64(i + 2), mtimeNanoseconds: s.int64(i + 3))
    }
}
