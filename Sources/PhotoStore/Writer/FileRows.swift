import PhotoModel

/// A file's row as the writer writes it: what the reader found, where.
struct FileRecord {
    var directory: Int64
    var file: FileOutcome
}

/// The columns of `files` besides the media fields, declared once.
enum FileColumns {
    /// Where the row is: the key of `files`. (A file's group is a range of names in this key:
    /// `ResourcePairing.groupNamesEnd`.)
    static let place = ColumnList<FileRecord>([
        Column("directory_id", "directory", bind: { $0.directory.bind(to: $1, at: $2) }),
        Column("name", "name", bind: { $0.file.name.bind(to: $1, at: $2) }),
    ])

    /// What the file is: the columns `files` and `tombstones` share besides the media fields.
    static let identity = ColumnList<FileRecord>([
        Column("status", "status", bind: { $0.file.status?.rawValue.bind(to: $1, at: $2) }),
        Column("fsid", "fsid", bind: { Int64(bitPattern: $0.file.identity.fsid).bind(to: $1, at: $2) },),
        Column("inode", "inode", bind: { Int64(bitPattern: $0.file.identity.inode).bind(to: $1, at: $2) },),
        Column("size", "size", bind: { $0.file.identity.size.bind(to: $1, at: $2) }),
        Column("mtime_ns", "mtime", bind: { $0.file.identity.mtimeNanoseconds.bind(to: $1, at: $2) },),
        Column("fingerprint", "fingerprint", bind: { $0.file.fingerprint.map { Int64(bitPattern: $0) }.bind(to: $1, at: $2) },),
    ])

    /// How the reading went.
    static let outcome = ColumnList<FileRecord>([
        Column("error_code", "errorCode", bind: { r, s, i in
            if case .error(let code, _) = r.file.kind { code.bind(to: s, at: i) }
        }),
        Column("error_message", "errorMessage", bind: { r, s, i in
            switch r.file.kind {
            case .error(_, let message): message.bind(to: s, at: i)
            case .ignored(let reason): reason.bind(to: s, at: i)
            default: break
            }
        }),
    ])

    /// The columns a tombstone keeps of a file row (and gives back when the file returns).
    static let kept = identity.names() + ", " + MediaColumns.list.names()

    /// Binds a record to a statement made of `place`, `identity`, `outcome` and (unless the
    /// row's media fields are deferred to its asset) the media columns: a sidecar's date,
    /// rating, keywords and place go in the media columns of the same names.
    static func bind(_ r: FileRecord, to s: Statement, media: Bool = true) {
        place.bind(r, to: s)
        identity.bind(r, to: s)
        outcome.bind(r, to: s)
        guard media else { return }
        switch r.file.kind {
        case .media(let m):
            MediaColumns.list.bind(m, to: s)
        case .sidecar(let x):
            s.bind(":isRaw", to: false)
            if let date = x.date {
                s.bind(":localDateTime", to: date.local.description)
                s.bind(":utcOffset", to: date.offset?.seconds)
                s.bind(":dateSource", to: MediaColumns.code(.xmp))
            }
            s.bind(":rating", to: x.rating)
            s.bind(":keywords", to: Keywords.encode(x.keywords))
            s.bind(":filePlace", to: x.place?.encoded)
        case .ignored, .error, .vanished, .unreadable:
            s.bind(":isRaw", to: false)
        }
    }
}

/// The writer's part for `files` and `tombstones`: a file's row, its identity, its removal
/// (keeping a tombstone of an asset's file), and the moves and restores that carry rows to a
/// new place without reading anything. Marks the groups it touches for recomposition.
final class FileRows {
    let db: Connection
    private let directories: Directories
    private unowned let assets: AssetRows
    /// Whether any tombstone exists (checked once per job: most jobs need no lookups).
    private var hasTombstones = false
    /// Whether any file holds an asset by content (`content_adoptions`), checked once per job.
    private var hasAdoptions = false
    /// The statements every file write runs, prepared once.
    private var upsertStatement: Statement?
    private var insertNewStatement: Statement?
    private var indexedRowStatement: Statement?

    init(_ db: Connection, directories: Directories, assets: AssetRows) {
        self.db = db
        self.directories = directories
        self.assets = assets
    }

    /// Checks once per job whether tombstones must be looked up at all.
    func beginWrites() throws(StoreError) {
        hasTombstones = try db.scalar("SELECT EXISTS (SELECT 1 FROM tombstones)").int64 == 1
        hasAdoptions = try db.scalar("SELECT EXISTS (SELECT 1 FROM content_adoptions)").int64 == 1
    }

    // MARK: Writes

    private static let insertSQL = """
        INSERT INTO files (\(FileColumns.place.names()), \(FileColumns.identity.names()), \(FileColumns.outcome.names()),
                           \(MediaColumns.list.names()), asset_pk, role)
        VALUES (\(FileColumns.place.parameters), \(FileColumns.identity.parameters), \(FileColumns.outcome.parameters),
                \(MediaColumns.list.parameters), :asset, :role)
        """

    /// The row of a new file alone in its asset: its media fields are the asset's
    /// (`MediaColumns.deferred`).
    private static let insertDeferredSQL = """
        INSERT INTO files (\(FileColumns.place.names()), \(FileColumns.identity.names()), \(FileColumns.outcome.names()),
                           asset_pk, role)
        VALUES (\(FileColumns.place.parameters), \(FileColumns.identity.parameters), \(FileColumns.outcome.parameters),
                :asset, :role)
        ON CONFLICT DO NOTHING
        """

    /// Writes a file's row with what the reader found; its asset is (re)composed afterwards
    /// with the rest of its group — or, for a new file alone in its group, inserted at once.
    func write(_ file: FileOutcome, _ job: WriteJob) throws(StoreError) {
        guard let status = file.status else { return }  // vanished: nothing to write
        let dir = try directories.row(file.directory, job)
        // Its own tombstone first, then the asset a copy took in its place, then a tombstone of
        // its content — unless the index already holds this very file with its asset (read
        // again under newer rules): it is the same file, and keeps its own asset.
        var tombstone: TombstoneMatch? = nil
        var taken: ContentAdoption? = nil
        var indexed: IndexedRow?? = nil  // the file's row, once read
        if case .media = file.kind, hasTombstones || hasAdoptions {
            let row = try indexedRow(file, directory: dir.id)
            indexed = .some(row)
            if row?.isThisFileWithAsset != true {
                tombstone = try self.tombstone(sameFileAs: file)
                if tombstone == nil { taken = try takenByContent(file) }
                if tombstone == nil, taken == nil { tombstone = try self.tombstone(sameContentAs: file) }
            }
        }
        let record = FileRecord(directory: dir.id, file: file)
        if tombstone == nil, taken == nil, file.isSoleNewMember, case .media(let m) = file.kind,
           try writeSoleNew(record, m, dir: dir, job) {
            return
        }
        let row: IndexedRow?
        if let indexed { row = indexed } else { row = try indexedRow(file, directory: dir.id) }
        let oldStatus = row?.status
        // An I/O error reading a file the index has as media or a sidecar says nothing about the
        // file: nothing is written (the pipeline makes such a read `unreadable` when it knows the
        // row; this holds when it could not look: a failing database, a new-file hint gone stale).
        if case .error(let code, _) = file.kind, code == FileOutcome.unreadableCode,
           oldStatus == FileStatus.media.rawValue || oldStatus == FileStatus.sidecar.rawValue {
            return
        }
        if let oldStatus { job.count("files." + oldStatus, -1) }
        job.count("files." + status.rawValue, 1)
        if case .error = file.kind { job.report.errors += 1 }
        let s = try db.statement(&upsertStatement, Self.insertSQL + """

            ON CONFLICT (directory_id, name) DO UPDATE SET \(FileColumns.identity.fromExcluded),
                \(FileColumns.outcome.fromExcluded), \(MediaColumns.list.fromExcluded)
            """)
        FileColumns.bind(record, to: s)
        try s.run()
        // The same file (or the same content) as one in Recently Deleted: its asset comes back.
        if let tombstone { try adopt(tombstone, file: file, directory: dir.id, job) }
        // The file a copy stood in for: its asset comes back to it from the copy.
        if let taken { try reclaim(taken, file: file, directory: dir.id, job) }
        // The asset the file held until now (its content was another's) is trashed at the
        // job's end if no file is left to it: never visible without a file.
        if tombstone != nil || taken != nil, let held = row?.asset { job.orphanCandidates.insert(held) }
        job.groups.insert(GroupRef(directory: dir.id, name: file.name, path: file.directory))
    }

    /// A file's row as the index has it.
    private struct IndexedRow {
        var status: String
        var asset: Int64?
        /// The row is this very file (the same fsid, inode, size and mtime) and belongs to an asset.
        var isThisFileWithAsset: Bool
    }

    /// The row of `file`'s name, when the index has one.
    private func indexedRow(_ file: FileOutcome, directory: Int64) throws(StoreError) -> IndexedRow? {
        let s = try db.statement(&indexedRowStatement, """
            SELECT status, asset_pk, asset_pk IS NOT NULL AND fsid = :fsid AND inode = :inode AND size = :size AND mtime_ns = :mtime
            FROM files WHERE directory_id = :directory AND name = :name
            """)
        defer { s.reset() }
        s.bind(":directory", to: directory)
        s.bind(":name", to: file.name)
        s.bind(":fsid", to: Int64(bitPattern: file.identity.fsid))
        s.bind(":inode", to: Int64(bitPattern: file.identity.inode))
        s.bind(":size", to: file.identity.size)
        s.bind(":mtime", to: file.identity.mtimeNanoseconds)
        return try s.step() ? IndexedRow(status: s.string(0), asset: s.isNull(1) ? nil : s.int64(1), isThisFileWithAsset: s.int64(2) == 1) : nil
    }

    /// The fast path of a bulk index: a new media file with no partner (no RAW, no movie, no
    /// sidecar of its base name) is its own asset; the asset row and the file row are inserted
    /// at once, without reading the group back, the file's media fields only in the asset's row. Returns false, having written nothing, when the
    /// file has a row after all (the hint was stale): the caller takes the general path.
    private func writeSoleNew(_ record: FileRecord, _ m: MediaFields, dir: Directories.Row,
                              _ job: WriteJob) throws(StoreError) -> Bool {
        let file = record.file
        let composed = AssetComposer.Composition(
            existing: nil, primary: 0, media: AssetComposer.assetFields(primary: m, sidecar: nil),
            subtypes: AssetComposer.subtypes(of: m, name: file.name, hasPairedVideo: false),
            members: [], fileSize: file.identity.size)
        let pk = try assets.write(composed, path: file.path, directory: dir.id, job)
        let s = try db.statement(&insertNewStatement, Self.insertDeferredSQL)
        FileColumns.bind(record, to: s, media: false)
        s.bind(":asset", to: pk)
        s.bind(":role", to: Resource.Role.primary.rawValue)
        try s.run()
        if db.changes == 1 {
            job.count("files.media", 1)
            return true
        }
        try assets.undoNew(pk, mediaType: m.mediaType, root: dir.root, job)  // nothing else refers to it yet
        return false
    }

    // MARK: Removals

    /// Removes a file's row (keeping a tombstone when it belonged to an asset); its group is
    /// recomposed, its asset trashed at the end of the job if nothing else holds it.
    func remove(directory dirPath: PathBytes, name: [UInt8], _ job: WriteJob) throws(StoreError) {
        let dir = try directories.row(dirPath, job)
        let condition = "f.directory_id = :directory AND f.name = :name"
        try saveTombstones(where: condition, job) { s in
            s.bind(":directory", to: dir.id)
            s.bind(":name", to: name)
        }
        let s = try db.statement("DELETE FROM files WHERE directory_id = :directory AND name = :name RETURNING asset_pk, status")
        s.bind(":directory", to: dir.id)
        s.bind(":name", to: name)
        if try s.step() {
            if !s.isNull(0) { job.orphanCandidates.insert(s.int64(0)) }
            job.count("files." + s.string(1), -1)
        }
        s.reset()
        job.groups.insert(GroupRef(directory: dir.id, name: name, path: dirPath))
    }

    /// Removes a directory and everything below it: its assets go to Recently Deleted (with
    /// tombstones of their files), its folder albums disappear, then the rows go (files with
    /// their directories).
    func removeSubtree(_ path: PathBytes, _ job: WriteJob) throws(StoreError) {
        let dirs = try db.statement("SELECT id, path, album_id, asset_count FROM directories WHERE \(Directories.subtree)")
        Directories.bindSubtree(path, dirs)
        var ids: [Int64] = []
        while try dirs.step() {
            ids.append(dirs.int64(0))
            if dirs.int(3) > 0 {
                job.removedAlbums.append(RemovedAlbum(path: PathBytes(dirs.bytes(1)), albumID: dirs.string(2)))
            }
        }
        guard !ids.isEmpty else { return }
        let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
        let inList = "IN (SELECT value FROM json_each(:ids))"
        let files = try db.statement("SELECT status, count(*) FROM files WHERE directory_id \(inList) GROUP BY status")
        files.bind(":ids", to: list)
        while try files.step() { job.count("files." + files.string(0), -files.int(1)) }
        job.count("directories", -ids.count)
        try saveTombstones(where: "f.directory_id \(inList)", job) { $0.bind(":ids", to: list) }
        let assetRows = try db.statement("SELECT DISTINCT asset_pk FROM files WHERE directory_id \(inList) AND asset_pk IS NOT NULL")
        assetRows.bind(":ids", to: list)
        var pks: [Int64] = []
        while try assetRows.step() { pks.append(assetRows.int64(0)) }
        for pk in pks { try assets.trash(pk, job) }
        // Detached from their parents first: deleted together, no row's `ON DELETE CASCADE` then
        // reaches into the one below it. (A chain of cascades nests one trigger level per
        // directory: past 1,000 levels SQLite refused the whole removal, and a deep tree stayed
        // in the index forever.)
        let detach = try db.statement("UPDATE directories SET parent_id = NULL WHERE id \(inList)")
        detach.bind(":ids", to: list)
        try detach.run()
        let delete = try db.statement("DELETE FROM directories WHERE id \(inList)")
        delete.bind(":ids", to: list)
        try delete.run()
        directories.forget()
    }

    // MARK: Tombstones

    /// Keeps the asset-linked file rows matching `condition` (on `files f`) as tombstones,
    /// before they are deleted, with their media fields whole; `bind` binds the condition's
    /// parameters.
    private func saveTombstones(where condition: String, _ job: WriteJob, bind: (Statement) -> Void) throws(StoreError) {
        let prefixed = FileColumns.identity.names(prefix: "f") + ", " + MediaColumns.resolved(file: "f", asset: "a")
        let s = try db.statement("""
            INSERT INTO tombstones (asset_pk, role, directory_path, name, deleted_at, \(FileColumns.kept))
            SELECT f.asset_pk, f.role, d.path, f.name, :now, \(prefixed)
            FROM files f JOIN directories d ON d.id = f.directory_id LEFT JOIN assets a ON a.pk = f.asset_pk
            WHERE f.asset_pk IS NOT NULL AND \(condition)
            """)
        bind(s)
        s.bind(":now", to: job.now)
        try s.run()
    }

    /// An asset (`a`) in Recently Deleted or without a file left.
    static let trashedOrOrphaned =
        "(a.deleted_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM files o WHERE o.asset_pk = a.pk))"

    // A tombstone this file matches: only those of assets in Recently Deleted (a restored
    // asset's are gone), or about to go there: left without files by a removal earlier in this
    // job (a merged job removes a file and writes its copy in one transaction; the trash comes
    // at its end).

    /// The tombstone of this very file: the same fsid, inode, size and mtime.
    private func tombstone(sameFileAs file: FileOutcome) throws(StoreError) -> TombstoneMatch? {
        guard hasTombstones else { return nil }
        let byIdentity = try db.statement("""
            SELECT t.pk FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND \(Self.trashedOrOrphaned)
            WHERE t.fsid = :fsid AND t.inode = :inode AND t.size = :size AND t.mtime_ns = :mtime LIMIT 1
            """)
        defer { byIdentity.reset() }
        byIdentity.bind(":fsid", to: Int64(bitPattern: file.identity.fsid))
        byIdentity.bind(":inode", to: Int64(bitPattern: file.identity.inode))
        byIdentity.bind(":size", to: file.identity.size)
        byIdentity.bind(":mtime", to: file.identity.mtimeNanoseconds)
        return try byIdentity.step() ? TombstoneMatch(pk: byIdentity.int64(0), byContent: false) : nil
    }

    /// A tombstone of this file's content (size and fingerprint; a copy back from a backup has a
    /// new inode), the latest removed first — but not a trashed file's: its file is still in the
    /// trash, and a copy is another file.
    private func tombstone(sameContentAs file: FileOutcome) throws(StoreError) -> TombstoneMatch? {
        guard hasTombstones, let fingerprint = file.fingerprint else { return nil }
        let byContent = try db.statement("""
            SELECT t.pk FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND \(Self.trashedOrOrphaned)
            WHERE t.size = :size AND t.fingerprint = :fingerprint AND t.trashed_name IS NULL
            ORDER BY t.deleted_at DESC, t.pk DESC LIMIT 1
            """)
        defer { byContent.reset() }
        byContent.bind(":size", to: file.identity.size)
        byContent.bind(":fingerprint", to: Int64(bitPattern: fingerprint))
        return try byContent.step() ? TombstoneMatch(pk: byContent.int64(0), byContent: true) : nil
    }

    /// A tombstone a new file matched, and whether by content alone (another inode).
    private struct TombstoneMatch {
        var pk: Int64
        var byContent: Bool
    }

    /// Links a just-written file row to the asset of a tombstone and drops the tombstone: the
    /// group's recomposition brings the asset back (same id, same user state). A match by
    /// content is remembered (`noteAdoption`).
    private func adopt(_ match: TombstoneMatch, file: FileOutcome, directory: Int64, _ job: WriteJob) throws(StoreError) {
        let s = try db.statement("""
            UPDATE files SET asset_pk = (SELECT asset_pk FROM tombstones WHERE pk = :tombstone),
                             role = (SELECT role FROM tombstones WHERE pk = :tombstone)
            WHERE directory_id = :directory AND name = :name RETURNING pk
            """)
        s.bind(":tombstone", to: match.pk)
        s.bind(":directory", to: directory)
        s.bind(":name", to: file.name)
        let filePK: Int64? = try s.step() ? s.int64(0) : nil
        s.reset()
        if match.byContent, let filePK { try noteAdoption(file: filePK, tombstone: match.pk, job) }
        try dropTombstone(match.pk)
    }

    private func dropTombstone(_ pk: Int64) throws(StoreError) {
        let d = try db.statement("DELETE FROM tombstones WHERE pk = :pk")
        d.bind(":pk", to: pk)
        try d.run()
    }

    // MARK: Moves and restores

    /// A file indexed as a new asset moments ago turns out to be a copy of a file this job
    /// removed (the same size and fingerprint): the copy's row joins the removed file's asset
    /// (which keeps its id, user state and albums, and leaves Recently Deleted if it got there)
    /// and the copy's own asset, which only that row made, is deleted. Anything else is left
    /// as it is.
    func adoptRemovedOriginal(of copy: PathBytes, _ job: WriteJob) throws(StoreError) {
        guard let dir = try directories.existing(copy.parent) else { return }
        let row = try db.statement("""
            SELECT pk, asset_pk, size, fingerprint, fsid, inode FROM files
            WHERE directory_id = :directory AND name = :name AND asset_pk IS NOT NULL AND fingerprint IS NOT NULL
            """)
        row.bind(":directory", to: dir)
        row.bind(":name", to: copy.lastComponent)
        guard try row.step() else {
            row.reset()
            return
        }
        let (filePK, copyAsset, size, fingerprint) = (row.int64(0), row.int64(1), row.int64(2), row.int64(3))
        let (fsid, inode) = (row.int64(4), row.int64(5))
        row.reset()
        let others = try db.scalar("SELECT count(*) FROM files WHERE asset_pk = ?1", .integer(copyAsset)).int64 ?? 0
        guard others == 1 else { return }  // the copy is paired with other files: leave it
        // The removed file that is this one (its inode: a rename seen as a new file) before
        // another with its content (a copy removed earlier), the latest removed first — of an
        // asset older than the copy's: a newer asset never takes an older one's place (two
        // rows of one file, one of them stale, after a folder went back and forth).
        let find = try db.statement("""
            SELECT t.pk, t.asset_pk, t.fsid, t.inode FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND \(Self.trashedOrOrphaned)
            WHERE t.size = :size AND t.fingerprint = :fingerprint AND t.asset_pk < :copy AND t.trashed_name IS NULL
            ORDER BY t.fsid = :fsid AND t.inode = :inode DESC, t.deleted_at DESC, t.pk DESC LIMIT 1
            """)
        find.bind(":size", to: size)
        find.bind(":fingerprint", to: fingerprint)
        find.bind(":copy", to: copyAsset)
        find.bind(":fsid", to: fsid)
        find.bind(":inode", to: inode)
        guard try find.step() else {
            find.reset()
            return
        }
        let (tombstone, original) = (find.int64(0), find.int64(1))
        let sameFile = find.int64(2) == fsid && find.int64(3) == inode
        find.reset()
        try assets.mergeUserState(from: copyAsset, into: original)
        try assets.materialize(file: filePK)  // its fields were the copy's asset's
        let relink = try db.statement("""
            UPDATE files SET asset_pk = :asset, role = (SELECT role FROM tombstones WHERE pk = :tombstone) WHERE pk = :file
            """)
        relink.bind(":asset", to: original)
        relink.bind(":tombstone", to: tombstone)
        relink.bind(":file", to: filePK)
        try relink.run()
        if !sameFile { try noteAdoption(file: filePK, tombstone: tombstone, job) }
        try dropTombstone(tombstone)
        try assets.delete(copyAsset, job)
        let group = GroupRef(directory: dir, name: copy.lastComponent, path: copy.parent)
        job.groups.insert(group)
        job.movedInto.insert(group)
    }

    /// The newest tombstone's pk (0 when none): those a job makes come after it.
    func lastTombstone() throws(StoreError) -> Int64 {
        try db.scalar("SELECT coalesce(max(pk), 0) FROM tombstones").int64 ?? 0
    }

    /// How recently a file must have become an asset to be taken for a removed file's rename
    /// read as new.
    static let movedAsNewWindowMilliseconds: Int64 = 600_000

    /// Files this job removed (tombstones after `tombstonesAfter`) whose very file — the same
    /// fsid, inode, size and mtime — the index already holds elsewhere as an asset added
    /// moments ago: a rename read as a new file before the old name's removal came (a folder
    /// renamed back and forth while a walk or the watcher went by). The removed file's asset
    /// takes that row back, with its id and user state (`adoptRemovedOriginal`), whichever
    /// path the removal came by. An older asset with that identity (a hard link) is left alone.
    func adoptMovedAsNew(tombstonesAfter: Int64, _ job: WriteJob) throws(StoreError) {
        let s = try db.statement("""
            SELECT d.path, f.name FROM tombstones t
            JOIN files f ON f.fsid = t.fsid AND f.inode = t.inode AND f.size = t.size AND f.mtime_ns = t.mtime_ns
                AND f.asset_pk IS NOT NULL AND f.asset_pk != t.asset_pk
            JOIN assets a ON a.pk = f.asset_pk AND a.added_at >= :recent
            JOIN directories d ON d.id = f.directory_id
            WHERE t.pk > :after AND t.trashed_name IS NULL
            """)
        s.bind(":after", to: tombstonesAfter)
        s.bind(":recent", to: job.now - Self.movedAsNewWindowMilliseconds)
        var found: [PathBytes] = []
        while try s.step() { found.append(PathBytes(s.bytes(0)).appending(s.bytes(1))) }
        s.reset()
        for path in found { try adoptRemovedOriginal(of: path, job) }
    }

    /// A file found again without being read (the walk matched its identity): its tombstone
    /// becomes its row at the new place.
    func restore(_ r: FileRestore, _ job: WriteJob) throws(StoreError) {
        let dir = try directories.row(r.path.parent, job)
        let name = r.path.lastComponent
        let s = try db.statement("""
            INSERT INTO files (directory_id, name, asset_pk, role, \(FileColumns.kept))
            SELECT :directory, :name, asset_pk, role, \(FileColumns.kept) FROM tombstones WHERE pk = :tombstone
            ON CONFLICT (directory_id, name) DO NOTHING
            RETURNING status
            """)
        s.bind(":tombstone", to: r.tombstone)
        s.bind(":directory", to: dir.id)
        s.bind(":name", to: name)
        guard try s.step() else {
            s.reset()
            job.report.unresolvedFiles.append(r.path)  // no tombstone any more, or a row is there: read it
            return
        }
        job.count("files." + s.string(0), 1)
        s.reset()
        let fix = try db.statement("""
            UPDATE files SET fsid = :fsid, inode = :inode, size = :size, mtime_ns = :mtime
            WHERE directory_id = :directory AND name = :name
            """)
        fix.bind(":fsid", to: Int64(bitPattern: r.identity.fsid))
        fix.bind(":inode", to: Int64(bitPattern: r.identity.inode))
        fix.bind(":size", to: r.identity.size)
        fix.bind(":mtime", to: r.identity.mtimeNanoseconds)
        fix.bind(":directory", to: dir.id)
        fix.bind(":name", to: name)
        try fix.run()
        try dropTombstone(r.tombstone)
        job.groups.insert(GroupRef(directory: dir.id, name: name, path: r.path.parent))
    }

    /// A file renamed or moved: its row moves, its asset (and its pairing) follows; an asset
    /// keeps its id. A move whose source the index does not know is reported unresolved (the
    /// caller reads the file at its new place).
    func move(_ move: FileMove, _ job: WriteJob) throws(StoreError) {
        guard let fromDir = try directories.existing(move.from.parent) else {
            job.report.unresolvedFiles.append(move.to)
            return
        }
        let name = move.from.lastComponent
        let find = try db.statement("SELECT pk FROM files WHERE directory_id = :directory AND name = :name")
        find.bind(":directory", to: fromDir)
        find.bind(":name", to: name)
        guard try find.step() else {
            find.reset()
            job.report.unresolvedFiles.append(move.to)
            return
        }
        let pk = find.int64(0)
        find.reset()
        let toDir = try directories.row(move.to.parent, job)
        let toName = move.to.lastComponent
        // `mv a b` over an existing b: b's old content is gone (its asset to Recently Deleted).
        if toDir.id != fromDir || toName != name {
            try remove(directory: move.to.parent, name: toName, job)
        }
        let s = try db.statement("UPDATE files SET directory_id = :directory, name = :name WHERE pk = :pk")
        s.bind(":directory", to: toDir.id)
        s.bind(":name", to: toName)
        s.bind(":pk", to: pk)
        try s.run()
        job.groups.insert(GroupRef(directory: fromDir, name: name, path: move.from.parent))
        let destination = GroupRef(directory: toDir.id, name: toName, path: move.to.parent)
        job.groups.insert(destination)
        job.movedInto.insert(destination)
    }

    /// A directory renamed or moved: the rows of its subtree take the new paths, so that files,
    /// assets, folder album ids and user state all follow without reading anything.
    func move(_ move: DirectoryMove, _ job: WriteJob) throws(StoreError) {
        guard let top = try directories.existing(move.from), move.from != move.to else {
            job.report.unresolvedDirectories.append(move.to)
            return
        }
        guard let rootID = directories.root(for: move.to) else {
            throw StoreError(code: .constraint, message: "directory '\(move.to)' is not inside any library root")
        }
        // Something already indexed at the destination was replaced.
        if try directories.existing(move.to) != nil { try removeSubtree(move.to, job) }
        let parent = try directories.row(move.to.parent, job).id
        let subtree = "SELECT id FROM directories WHERE \(Directories.subtree)"
        let members = try db.statement("SELECT a.pk FROM assets a WHERE a.directory_id IN (\(subtree))")
        Directories.bindSubtree(move.from, members)
        var pks: [Int64] = []
        while try members.step() { pks.append(members.int64(0)) }
        for pk in pks { try job.recordBefore(pk) }
        let albums = try db.statement("SELECT path FROM directories WHERE \(Directories.subtree) AND asset_count > 0")
        Directories.bindSubtree(move.from, albums)
        while try albums.step() { job.movedAlbumOrigins.append(PathBytes(albums.bytes(0))) }

        let rename = "CAST(:to || substr(path, :keep) AS BLOB)"
        let dirs = try db.statement("UPDATE directories SET path = \(rename), root_id = :root WHERE id IN (\(subtree))")
        Directories.bindSubtree(move.from, dirs)
        dirs.bind(":to", to: move.to)
        dirs.bind(":keep", to: move.from.bytes.count + 1)
        dirs.bind(":root", to: rootID)
        try dirs.run()
        let topRow = try db.statement("UPDATE directories SET parent_id = :parent, name = :name WHERE id = :id")
        topRow.bind(":parent", to: parent)
        topRow.bind(":name", to: move.to.lastComponent)
        topRow.bind(":id", to: top)
        try topRow.run()
        // A mount point below a folder that moves (its parent renamed) keeps its record.
        let mounts = try db.statement("UPDATE OR REPLACE mounts SET path = \(rename) WHERE \(Directories.subtree)")
        Directories.bindSubtree(move.from, mounts)
        mounts.bind(":to", to: move.to)
        mounts.bind(":keep", to: move.from.bytes.count + 1)
        try mounts.run()
        let assetPaths = try db.statement("""
            UPDATE assets SET path = \(rename), root_id = :root WHERE directory_id IN (\(subtree))
            """)
        Directories.bindSubtree(move.to, assetPaths)
        assetPaths.bind(":to", to: move.to)
        assetPaths.bind(":keep", to: move.from.bytes.count + 1)
        assetPaths.bind(":root", to: rootID)
        try assetPaths.run()
        for pk in pks {
            if let before = job.before[pk], before.root != rootID {
                job.countAssets(root: before.root, -1)
                job.countAssets(root: rootID, 1)
            }
            job.after[pk] = nil  // read back at the end of the job
        }
        directories.forget()
    }
}

// MARK: - Files that stood in for others

extension FileRows {
    /// A file that holds an asset by content, for the file with this identity.
    struct ContentAdoption {
        var copy: Int64
        var asset: Int64
    }

    /// How long a copy's hold on the asset of the file it stood in for is remembered.
    static let adoptionMemoryMilliseconds: Int64 = 30 * 86_400_000

    /// Remembers that the file row `file` took the asset of `tombstone` by content (another
    /// inode): the tombstone's file, should it turn up again, takes the asset back.
    func noteAdoption(file: Int64, tombstone: Int64, _ job: WriteJob) throws(StoreError) {
        let s = try db.statement("""
            INSERT OR REPLACE INTO content_adoptions (file_pk, asset_pk, fsid, inode, size, mtime_ns, adopted_at)
            SELECT :file, asset_pk, fsid, inode, size, mtime_ns, :now FROM tombstones WHERE pk = :tombstone
            """)
        s.bind(":file", to: file)
        s.bind(":tombstone", to: tombstone)
        s.bind(":now", to: job.now)
        try s.run()
        let old = try db.statement("DELETE FROM content_adoptions WHERE adopted_at < :cutoff")
        old.bind(":cutoff", to: job.now - Self.adoptionMemoryMilliseconds)
        try old.run()
        hasAdoptions = true
    }

    /// The asset a copy took by content from the file with `file`'s identity: `file` is that
    /// file, back. The copy may hold it still, or be gone (the asset in Recently Deleted).
    func takenByContent(_ file: FileOutcome) throws(StoreError) -> ContentAdoption? {
        guard hasAdoptions else { return nil }
        let s = try db.statement("""
            SELECT c.file_pk, c.asset_pk FROM content_adoptions c JOIN assets a ON a.pk = c.asset_pk
            WHERE c.inode = :inode AND c.fsid = :fsid AND c.size = :size AND c.mtime_ns = :mtime
            ORDER BY c.adopted_at DESC LIMIT 1
            """)
        defer { s.reset() }
        s.bind(":fsid", to: Int64(bitPattern: file.identity.fsid))
        s.bind(":inode", to: Int64(bitPattern: file.identity.inode))
        s.bind(":size", to: file.identity.size)
        s.bind(":mtime", to: file.identity.mtimeNanoseconds)
        return try s.step() ? ContentAdoption(copy: s.int64(0), asset: s.int64(1)) : nil
    }

    /// Gives the asset a copy took back to the file it stood in for (just written): the copy's
    /// row, when it still holds the asset, leaves it (keeping its own fields) and its group is
    /// composed again, as a new asset; the file's group goes first and takes the asset, its id
    /// and user state. An asset in Recently Deleted (the copy removed since) drops the
    /// tombstones of this content and comes back.
    func reclaim(_ taken: ContentAdoption, file: FileOutcome, directory: Int64, _ job: WriteJob) throws(StoreError) {
        let copy = try db.statement("""
            SELECT f.directory_id, d.path, f.name, f.role FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE f.pk = :pk AND f.asset_pk = :asset
            """)
        copy.bind(":pk", to: taken.copy)
        copy.bind(":asset", to: taken.asset)
        var role: String? = nil
        if try copy.step() {
            let copyGroup = GroupRef(directory: copy.int64(0), name: copy.bytes(2), path: PathBytes(copy.bytes(1)))
            role = copy.isNull(3) ? nil : copy.string(3)
            copy.reset()
            try assets.materialize(file: taken.copy)
            let leave = try db.statement("UPDATE files SET asset_pk = NULL, role = NULL WHERE pk = :pk")
            leave.bind(":pk", to: taken.copy)
            try leave.run()
            job.groups.insert(copyGroup)
        } else {
            copy.reset()
            let gone = try db.statement("""
                DELETE FROM tombstones WHERE asset_pk = :asset AND size = :size AND fingerprint IS :fingerprint RETURNING role
                """)
            gone.bind(":asset", to: taken.asset)
            gone.bind(":size", to: file.identity.size)
            gone.bind(":fingerprint", to: file.fingerprint.map { Int64(bitPattern: $0) })
            while try gone.step() { role = gone.isNull(0) ? role : gone.string(0) }
            gone.reset()
        }
        let link = try db.statement("UPDATE files SET asset_pk = :asset, role = :role WHERE directory_id = :directory AND name = :name")
        link.bind(":asset", to: taken.asset)
        link.bind(":role", to: role ?? Resource.Role.primary.rawValue)
        link.bind(":directory", to: directory)
        link.bind(":name", to: file.name)
        try link.run()
        let forget = try db.statement("DELETE FROM content_adoptions WHERE file_pk = :pk")
        forget.bind(":pk", to: taken.copy)
        try forget.run()
        let group = GroupRef(directory: directory, name: file.name, path: file.directory)
        job.groups.insert(group)
        job.movedInto.insert(group)
    }
}
