import PhotoModel

/// The writer side of the index: the only code that changes it. Owned by `Database`'s writer
/// lock; every `apply` is one transaction that writes the files, recomposes the assets of the
/// groups they touch (RAW+JPEG, Live Photos, sidecars), merges the changes into moments,
/// folder albums, collection lists and smart albums, and records the change set in the journal.
public final class IndexWriter {
    let db: Connection
    /// Directory path → its row. Bounded: cleared when it grows past `cacheLimit`, and after a
    /// rollback (SQLite reuses the rowids of rolled-back rows).
    var directoryCache: [PathBytes: DirectoryRow] = [:]
    var roots: [(path: PathBytes, id: Int64)] = []
    static let cacheLimit = 20_000
    /// Noise for new asset ids: seeded once from the system, then no system call per asset.
    var random = IDNoise()
    /// Directories created since the job began (counted with the job's other counters).
    var directoriesCreated = 0
    /// Directory id → root id (cleared when directories move).
    var directoryRoots: [Int64: Int64] = [:]
    /// Whether any tombstone exists (checked once per job: most jobs need no lookups).
    var hasTombstones = false

    struct DirectoryRow {
        var id: Int64
        var root: Int64
        var path: PathBytes
    }

    init(_ db: Connection) { self.db = db }

    /// The underlying connection, for maintenance and tests.
    public var connection: Connection { db }

    /// Records the library roots (creates rows for new ones). Returns root ids by path.
    @discardableResult
    public func registerRoots(_ paths: [PathBytes]) throws -> [PathBytes: Int64] {
        try db.transaction {
            for p in paths {
                let s = try db.statement("INSERT INTO roots (path) VALUES (?1) ON CONFLICT (path) DO NOTHING")
                s.bind(p.bytes, at: 1)
                try s.run()
            }
        }
        let s = try db.statement("SELECT id, path FROM roots")
        var result: [PathBytes: Int64] = [:]
        roots = []
        while try s.step() {
            let path = PathBytes(s.bytes(1))
            result[path] = s.int64(0)
            roots.append((path, s.int64(0)))
        }
        return result
    }

    /// Writes one batch in one transaction and returns its change set (with its token).
    public func apply(_ batch: WriteBatch, now: Int64) throws -> BatchSummary {
        do {
            return try db.transaction { try applyInTransaction(batch, now: now) }
        } catch {
            // The rollback undid the rows the caches may name (SQLite reuses their rowids).
            directoryCache.removeAll(keepingCapacity: true)
            directoryRoots.removeAll(keepingCapacity: true)
            throw error
        }
    }

    func applyInTransaction(_ batch: WriteBatch, now: Int64) throws -> BatchSummary {
        var job = JobChanges()
        directoriesCreated = 0
        defer { directoriesCreated = 0 }
        // Removals first, then moves and restores, then writes: `WriteBatch.merged` relies on
        // this order.
        for path in batch.removedDirectories { try removeSubtree(path, now: now, &job) }
        for (dir, name) in batch.removedFiles { try removeFile(directory: dir, name: name, now: now, &job) }
        for move in batch.movedDirectories { try moveDirectory(move, now: now, &job) }
        for move in batch.movedFiles { try moveFile(move, now: now, &job) }
        for restore in batch.restoredFiles { try restoreFile(restore, now: now, &job) }
        for copy in batch.copiesOfRemoved { try adoptRemovedOriginal(of: copy, now: now, &job) }
        for dir in batch.directories { try upsertDirectory(dir) }
        hasTombstones = try db.scalar("SELECT EXISTS (SELECT 1 FROM tombstones)").int64 == 1
        for file in batch.files { try writeFile(file, now: now, &job) }
        // Groups a file moved into go first, so that a moved primary keeps its asset when the
        // partners it left behind become assets of their own.
        let groups = job.groups.sorted {
            let (a, b) = (job.movedInto.contains($0), job.movedInto.contains($1))
            if a != b { return a }
            return $0.directory != $1.directory ? $0.directory < $1.directory : $0.key.lexicographicallyPrecedes($1.key)
        }
        for group in groups { try recompose(group, now: now, &job) }
        // Assets whose files were removed and which no remaining file took over go to
        // Recently Deleted (their files' tombstones were kept).
        for pk in job.orphanCandidates.sorted() { try trashIfOrphan(pk, now: now, &job) }
        try job.loadAfterStates { try self.assetState(pk: $0) }
        job.count("directories", directoriesCreated)
        try applyCounters(job.counters)
        var summary = BatchSummary()
        summary.errors = job.errors
        summary.unresolvedFiles = job.unresolved
        summary.unresolvedDirectories = job.unresolvedDirectories
        job.assetEvents(into: &summary)
        try updateMoments(job, &summary)
        try updateAlbums(job, &summary)
        updateSmartAlbums(job, now: now, &summary)
        if !summary.isEmpty { summary.token = try journal(summary, now: now) }
        return summary
    }

    /// The root a directory row belongs to (from the cache when it is there).
    func rootID(ofDirectory id: Int64) throws -> Int64 {
        if let cached = directoryRoots[id] { return cached }
        let root = try db.scalar("SELECT root_id FROM directories WHERE id = ?1", .integer(id)).int64 ?? 0
        directoryRoots[id] = root
        return root
    }

    func applyCounters(_ deltas: [String: Int]) throws {
        // Per-root counters come and go with roots: create them on first use.
        let s = try db.statement("""
            INSERT INTO counters (name, value) VALUES (?2, ?1) ON CONFLICT (name) DO UPDATE SET value = value + ?1
            """)
        for (name, delta) in deltas where delta != 0 {
            s.bind(delta, at: 1)
            s.bind(name, at: 2)
            try s.run()
        }
    }

    // MARK: - Directories

    func root(for path: PathBytes) -> Int64? {
        roots.filter { path.isWithin($0.path) }.max { $0.path.bytes.count < $1.path.bytes.count }?.id
    }

    /// The row of a directory, creating it (and its parents up to the root) when missing.
    func directory(_ path: PathBytes) throws -> DirectoryRow {
        if let hit = directoryCache[path] { return hit }
        let find = try db.statement("SELECT id, root_id FROM directories WHERE path = ?1")
        defer { find.reset() }
        find.bind(path.bytes, at: 1)
        if try find.step() {
            let found = DirectoryRow(id: find.int64(0), root: find.int64(1), path: path)
            remember(found)
            return found
        }
        find.reset()
        guard let rootID = root(for: path) else {
            throw StoreError(code: .constraint, message: "directory '\(path)' is not inside any library root")
        }
        let isRoot = roots.contains { $0.path == path }
        let parent: Int64? = isRoot ? nil : try directory(path.parent).id
        let insert = try db.statement("""
            INSERT INTO directories (root_id, parent_id, path, name, album_id) VALUES (?1, ?2, ?3, ?4, ?5)
            """)
        insert.bind(rootID, at: 1)
        insert.bind(parent, at: 2)
        insert.bind(path.bytes, at: 3)
        insert.bind(path.lastComponent, at: 4)
        insert.bind(try newAlbumID(for: path), at: 5)
        try insert.run()
        directoriesCreated += 1
        let created = DirectoryRow(id: db.lastInsertRowID, root: rootID, path: path)
        if directoryRoots.count >= Self.cacheLimit { directoryRoots.removeAll(keepingCapacity: true) }
        directoryRoots[created.id] = rootID
        remember(created)
        return created
    }

    /// A folder album's id: `f_` and a hash of its path, so that a rebuilt index gives the same
    /// folder the same id; a random one when a moved folder already carries that id.
    func newAlbumID(for path: PathBytes) throws -> String {
        let derived = "f_" + FolderTree.listID(path: path).dropFirst(2)
        let taken = try db.statement("SELECT 1 FROM directories WHERE album_id = ?1")
        defer { taken.reset() }
        taken.bind(derived, at: 1)
        guard try taken.step() else { return derived }
        var g = SystemRandomNumberGenerator()
        return "f_" + String(UInt64.random(in: 0 ... .max, using: &g), radix: 32)
    }

    func remember(_ row: DirectoryRow) {
        if directoryCache.count >= Self.cacheLimit { directoryCache.removeAll(keepingCapacity: true) }
        directoryCache[row.path] = row
    }

    func upsertDirectory(_ visit: DirectoryVisit) throws {
        let id = try directory(visit.path).id
        let s = try db.statement("UPDATE directories SET fsid = ?1, inode = ?2, mtime_ns = ?3 WHERE id = ?4")
        s.bind(Int64(bitPattern: visit.fsid), at: 1)
        s.bind(Int64(bitPattern: visit.inode), at: 2)
        s.bind(visit.mtimeNanoseconds, at: 3)
        s.bind(id, at: 4)
        try s.run()
    }

    /// Removes a directory and everything below it: its assets go to Recently Deleted (with
    /// tombstones of their files), its folder albums disappear, then the rows go (files with
    /// their directories).
    func removeSubtree(_ path: PathBytes, now: Int64, _ job: inout JobChanges) throws {
        let lower = path.bytes + [UInt8(ascii: "/")]
        let upper = path.bytes + [UInt8(ascii: "0")]  // '/' + 1: every "path/..." sorts below it
        let dirs = try db.statement("""
            SELECT id, path, album_id, asset_count FROM directories WHERE path = ?1 OR (path >= ?2 AND path < ?3)
            """)
        dirs.bind(path.bytes, at: 1)
        dirs.bind(lower, at: 2)
        dirs.bind(upper, at: 3)
        var ids: [Int64] = []
        while try dirs.step() {
            ids.append(dirs.int64(0))
            if dirs.int(3) > 0 {
                job.removedAlbums.append(RemovedAlbum(path: PathBytes(dirs.bytes(1)), albumID: dirs.string(2)))
            }
        }
        guard !ids.isEmpty else { return }
        let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
        let files = try db.statement("""
            SELECT status, count(*) FROM files WHERE directory_id IN (SELECT value FROM json_each(?1)) GROUP BY status
            """)
        files.bind(list, at: 1)
        while try files.step() { job.count("files." + files.string(0), -files.int(1)) }
        job.count("directories", -ids.count)
        try saveTombstones(where: "f.directory_id IN (SELECT value FROM json_each(?1))", .text(list), now: now)
        let assets = try db.statement("""
            SELECT DISTINCT asset_pk FROM files WHERE directory_id IN (SELECT value FROM json_each(?1)) AND asset_pk IS NOT NULL
            """)
        assets.bind(list, at: 1)
        var pks: [Int64] = []
        while try assets.step() { pks.append(assets.int64(0)) }
        for pk in pks { try trash(pk, now: now, &job) }
        // Detached from their parents first: deleted together, no row's `ON DELETE CASCADE` then
        // reaches into the one below it. (A chain of cascades nests one trigger level per
        // directory: past 1,000 levels SQLite refused the whole removal, and a deep tree stayed
        // in the index forever.)
        let detach = try db.statement("UPDATE directories SET parent_id = NULL WHERE id IN (SELECT value FROM json_each(?1))")
        detach.bind(list, at: 1)
        try detach.run()
        let delete = try db.statement("DELETE FROM directories WHERE id IN (SELECT value FROM json_each(?1))")
        delete.bind(list, at: 1)
        try delete.run()
        directoryCache.removeAll(keepingCapacity: true)
        directoryRoots.removeAll(keepingCapacity: true)
    }

    // MARK: - Files

    func removeFile(directory dirPath: PathBytes, name: [UInt8], now: Int64, _ job: inout JobChanges) throws {
        let dir = try directory(dirPath)
        try saveTombstones(where: "f.directory_id = ?1 AND f.name = ?2", .integer(dir.id), .blob(name), now: now)
        let s = try db.statement("DELETE FROM files WHERE directory_id = ?1 AND name = ?2 RETURNING asset_pk, status")
        s.bind(dir.id, at: 1)
        s.bind(name, at: 2)
        if try s.step() {
            if !s.isNull(0) { job.orphanCandidates.insert(s.int64(0)) }
            job.count("files." + s.string(1), -1)
        }
        s.reset()
        job.groups.insert(GroupRef(directory: dir.id, key: ResourcePairing.groupKey(of: name), path: dirPath))
    }

    static let fileColumns = """
        directory_id, name, group_key, status, error_code, error_message, fsid, inode, size,
        mtime_ns, fingerprint, indexed_at, media_type, format, is_raw, local_datetime, utc_offset,
        date_source, pixel_width, pixel_height, orientation, latitude, longitude, altitude, make,
        model, lens_model, duration, rating, keywords, user_comment, content_identifier,
        capture_instant, asset_pk, role
        """
    static let fileValues = """
        ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
        ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35
        """

    /// Writes a file's row with what the reader found; its asset is (re)composed afterwards
    /// with the rest of its group — or, for a new file alone in its group, inserted at once.
    func writeFile(_ file: FileOutcome, now: Int64, _ job: inout JobChanges) throws {
        guard let status = file.status else { return }  // vanished: nothing to write
        let dir = try directory(file.directory)
        let tombstone: Int64? = if case .media = file.kind { try matchTombstone(file) } else { nil }
        if tombstone == nil, file.isSoleNewMember, case .media(let m) = file.kind,
           try writeSoleNewFile(file, m, dir: dir, now: now, &job) {
            return
        }
        let old = try db.statement("SELECT status FROM files WHERE directory_id = ?1 AND name = ?2")
        old.bind(dir.id, at: 1)
        old.bind(file.name, at: 2)
        if try old.step() { job.count("files." + old.string(0), -1) }
        old.reset()
        job.count("files." + status.rawValue, 1)
        let s = try db.statement("""
            INSERT INTO files (\(Self.fileColumns)) VALUES (\(Self.fileValues))
            ON CONFLICT (directory_id, name) DO UPDATE SET
                status = excluded.status, error_code = excluded.error_code, error_message = excluded.error_message,
                fsid = excluded.fsid, inode = excluded.inode, size = excluded.size, mtime_ns = excluded.mtime_ns,
                fingerprint = excluded.fingerprint, indexed_at = excluded.indexed_at, media_type = excluded.media_type,
                format = excluded.format, is_raw = excluded.is_raw, local_datetime = excluded.local_datetime,
                utc_offset = excluded.utc_offset, date_source = excluded.date_source, pixel_width = excluded.pixel_width,
                pixel_height = excluded.pixel_height, orientation = excluded.orientation, latitude = excluded.latitude,
                longitude = excluded.longitude, altitude = excluded.altitude, make = excluded.make,
                model = excluded.model, lens_model = excluded.lens_model, duration = excluded.duration,
                rating = excluded.rating, keywords = excluded.keywords, user_comment = excluded.user_comment,
                content_identifier = excluded.content_identifier, capture_instant = excluded.capture_instant
            """)
        bindFile(file, directory: dir.id, now: now, s, &job)
        try s.run()
        // The same file (or the same content) as one in Recently Deleted: its asset comes back.
        if let tombstone { try adopt(tombstone: tombstone, file: file, directory: dir.id) }
        job.groups.insert(GroupRef(directory: dir.id, key: ResourcePairing.groupKey(of: file.name), path: file.directory))
    }

    /// The fast path of a bulk index: a new media file with no partner (no RAW, no movie, no
    /// sidecar of its base name) is its own asset; the asset row and the file row are inserted
    /// at once, without reading the group back. Returns false, having written nothing, when the
    /// file has a row after all (the hint was stale): the caller takes the general path.
    func writeSoleNewFile(_ file: FileOutcome, _ m: FileMetadata, dir: DirectoryRow, now: Int64,
                                  _ job: inout JobChanges) throws -> Bool {
        let primary = FileRow(file, m)
        let subtypes = (m.isRaw ? Set([AssetSubtype.raw]) : []).union(SubtypeRules.subtypes(SubtypeInputs(
            mediaType: m.mediaType, format: m.format, make: m.make, lensModel: m.lensModel, pixelWidth: m.pixelWidth,
            pixelHeight: m.pixelHeight, userComment: m.userComment, fileName: file.name, isRaw: m.isRaw,
            hasPairedVideo: false)))
        let pk = try writeAsset(nil, primary: primary, sidecar: nil, subtypes: subtypes, path: file.path,
                                directory: dir.id, now: now, &job)
        let s = try db.statement("INSERT INTO files (\(Self.fileColumns)) VALUES (\(Self.fileValues)) ON CONFLICT DO NOTHING")
        bindFile(file, directory: dir.id, now: now, s, &job)
        s.bind(pk, at: 34)
        s.bind(Resource.Role.primary.rawValue, at: 35)
        try s.run()
        if db.changes == 1 {
            job.count("files.media", 1)
            return true
        }
        // The file had a row: undo the asset (nothing else refers to it yet).
        let undo = try db.statement("DELETE FROM assets WHERE pk = ?1")
        undo.bind(pk, at: 1)
        try undo.run()
        job.count("assets." + m.mediaType.rawValue, -1)
        job.count("root.\(dir.root).assets", -1)
        job.touched.remove(pk)
        job.after[pk] = nil
        return false
    }

    func bindFile(_ file: FileOutcome, directory: Int64, now: Int64, _ s: Statement, _ job: inout JobChanges) {
        s.bind(directory, at: 1)
        s.bind(file.name, at: 2)
        s.bind(ResourcePairing.groupKey(of: file.name), at: 3)
        s.bind(Int64(bitPattern: file.identity.fsid), at: 7)
        s.bind(Int64(bitPattern: file.identity.inode), at: 8)
        s.bind(file.identity.size, at: 9)
        s.bind(file.identity.mtimeNanoseconds, at: 10)
        s.bind(file.fingerprint.map { Int64(bitPattern: $0) }, at: 11)
        s.bind(now, at: 12)
        s.bind(0, at: 15)
        switch file.kind {
        case .media(let m):
            s.bind(FileStatus.media.rawValue, at: 4)
            s.bind(m.mediaType.rawValue, at: 13)
            s.bind(m.format, at: 14)
            s.bind(m.isRaw ? 1 : 0, at: 15)
            bindDate(m.captureDate, s, at: 16)
            s.bind(m.pixelWidth, at: 19)
            s.bind(m.pixelHeight, at: 20)
            s.bind(m.orientation, at: 21)
            s.bind(m.latitude, at: 22)
            s.bind(m.longitude, at: 23)
            s.bind(m.altitude, at: 24)
            s.bind(m.make, at: 25)
            s.bind(m.model, at: 26)
            s.bind(m.lensModel, at: 27)
            s.bind(m.duration, at: 28)
            s.bind(m.rating, at: 29)
            s.bind(Keywords.encode(m.keywords), at: 30)
            s.bind(m.userComment, at: 31)
            s.bind(m.contentIdentifier, at: 32)
            s.bind(m.captureInstantMilliseconds, at: 33)
        case .sidecar(let x):
            s.bind(FileStatus.sidecar.rawValue, at: 4)
            if let date = x.date { bindDate(CaptureDate(local: date.local, offset: date.offset, source: .xmp), s, at: 16) }
            s.bind(x.rating, at: 29)
            s.bind(Keywords.encode(x.keywords), at: 30)
        case .ignored(let reason):
            s.bind(FileStatus.ignored.rawValue, at: 4)
            s.bind(reason, at: 6)
        case .error(let code, let message):
            s.bind(FileStatus.error.rawValue, at: 4)
            s.bind(code, at: 5)
            s.bind(message, at: 6)
            job.errors += 1
        case .vanished:
            break  // never bound: `writeFile` writes no row for it
        }
    }

    func bindDate(_ d: CaptureDate, _ s: Statement, at i: Int32) {
        s.bind(d.local.description, at: i)
        s.bind(d.offset?.seconds, at: i + 1)
        s.bind(d.source.rawValue, at: i + 2)
    }

    // MARK: - Assets

    /// Pairs the files of one group and writes the assets they make: an asset keeps its id
    /// when its primary file, or else any of its files, still belongs to it.
    func recompose(_ group: GroupRef, now: Int64, _ job: inout JobChanges) throws {
        let rows = try groupFiles(group)
        var pairing: [PairingFile] = []
        for row in rows {
            switch row.status {
            case .media:
                pairing.append(PairingFile(name: row.name,
                                           kind: ResourcePairing.kind(mediaType: row.mediaType ?? .image, format: row.format ?? "",
                                                                      isRaw: row.isRaw),
                                           contentIdentifier: row.contentIdentifier,
                                           captureInstantMilliseconds: row.captureInstant))
            case .sidecar:
                pairing.append(PairingFile(name: row.name, kind: .sidecar))
            case .ignored, .error:
                continue
            }
        }
        let byName = Dictionary(rows.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var claimed = Set<Int64>()
        var linked = Set<[UInt8]>()
        var formerOwners: [Int64: Int64] = [:]  // an asset whose files went to another one
        for paired in ResourcePairing.pair(pairing) {
            guard let primary = byName[paired.primary] else { continue }
            let members = paired.members.compactMap { m in byName[m.name].map { (row: $0, role: m.role) } }
            // Keep the id of the asset the primary belonged to, else of any member's.
            let candidates = [primary.assetPK] + members.map(\.row.assetPK)
            let existing = candidates.compactMap { $0 }.first { !claimed.contains($0) && !job.claimedAssets.contains($0) }
            let sidecar = members.first { $0.role == .sidecar }?.row
            let pairedVideo = members.contains { $0.role == .pairedVideo }
            let subtypes = paired.subtypes.union(SubtypeRules.subtypes(SubtypeInputs(
                mediaType: primary.mediaType ?? .image, format: primary.format ?? "", make: primary.make,
                lensModel: primary.lensModel, pixelWidth: primary.pixelWidth, pixelHeight: primary.pixelHeight,
                userComment: primary.userComment, fileName: primary.name, isRaw: primary.isRaw,
                hasPairedVideo: pairedVideo)))
            let pk = try writeAsset(existing, primary: primary, sidecar: sidecar, subtypes: subtypes,
                                    path: group.path.appending(primary.name), directory: group.directory, now: now, &job)
            claimed.insert(pk)
            job.claimedAssets.insert(pk)
            for (row, role) in members {
                linked.insert(row.name)
                if let former = row.assetPK, former != pk { formerOwners[former] = pk }
                if row.assetPK != pk || row.role != role { try link(row.pk, asset: pk, role: role) }
            }
        }
        // A file that stopped being media (a truncated copy, garbage) keeps its link, so that its
        // asset, now in Recently Deleted, comes back with its id when the file is whole again.
        for row in rows where !linked.contains(row.name) && row.assetPK != nil && row.status != .error {
            try link(row.pk, asset: nil, role: nil)
        }
        for pk in Set(rows.compactMap(\.assetPK)).subtracting(claimed) {
            if rows.contains(where: { $0.assetPK == pk && $0.status == .error }) {
                try trash(pk, now: now, &job)
            } else if let winner = formerOwners[pk] {
                // Two assets became one (a RAW found its JPEG): the one that lost its files
                // goes, and its user state joins the one that has them now.
                try mergeUserState(from: pk, into: winner)
                try deleteAssetIfOrphan(pk, &job)
            } else {
                try trashIfOrphan(pk, now: now, &job)
            }
        }
    }

    func link(_ file: Int64, asset: Int64?, role: Resource.Role?) throws {
        let s = try db.statement("UPDATE files SET asset_pk = ?1, role = ?2 WHERE pk = ?3")
        s.bind(asset, at: 1)
        s.bind(role?.rawValue, at: 2)
        s.bind(file, at: 3)
        try s.run()
    }

    /// Inserts or updates an asset row from its primary file (and its sidecar); returns its pk.
    func writeAsset(_ existing: Int64?, primary: FileRow, sidecar: FileRow?, subtypes: Set<AssetSubtype>,
                            path: PathBytes, directory: Int64, now: Int64, _ job: inout JobChanges) throws -> Int64 {
        // A sidecar's date is an XMP capture date: it counts unless the file itself has a
        // DateTimeOriginal or DateTimeDigitized, which come first (it beats the file's embedded
        // XMP, IPTC and DateTime dates). Its rating and keywords override the embedded ones.
        var date = primary.date
        if let side = sidecar?.date, !(date?.source.outranksXMP ?? false) { date = side }
        guard let date else {
            throw StoreError(code: .corrupt, message: "file '\(path)' is media but has no capture date")
        }
        let rating = sidecar?.rating ?? primary.rating
        let keywords = sidecar.flatMap { $0.keywords.isEmpty ? nil : $0.keywords } ?? primary.keywords
        let s: Statement
        var newID: AssetID?
        if let existing {
            try job.recordBefore(existing) { try self.assetState(pk: $0) }
            s = try db.statement("""
                UPDATE assets SET directory_id = ?1, media_type = ?2, format = ?3, subtypes = ?4, local_datetime = ?5,
                    utc_offset = ?6, date_source = ?7, day = ?8, pixel_width = ?9, pixel_height = ?10, orientation = ?11,
                    latitude = ?12, longitude = ?13, altitude = ?14, make = ?15, model = ?16, lens_model = ?17,
                    duration = ?18, rating = ?19, keywords = ?20, file_size = ?21, path = ?22, root_id = ?24,
                    deleted_at = NULL
                WHERE pk = ?23
                """)
            s.bind(existing, at: 23)
            s.bind(try rootID(ofDirectory: directory), at: 24)
        } else {
            s = try db.statement("""
                INSERT INTO assets (directory_id, media_type, format, subtypes, local_datetime, utc_offset, date_source,
                    day, pixel_width, pixel_height, orientation, latitude, longitude, altitude, make, model, lens_model,
                    duration, rating, keywords, file_size, path, id, added_at, root_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                        ?22, ?23, ?24, ?25)
                """)
            newID = AssetID.random(milliseconds: now, using: &random)
            s.bind(newID!.rawValue, at: 23)
            s.bind(now, at: 24)
            s.bind(try rootID(ofDirectory: directory), at: 25)
        }
        s.bind(directory, at: 1)
        s.bind((primary.mediaType ?? .image).rawValue, at: 2)
        s.bind(primary.format ?? "", at: 3)
        s.bind(AssetColumns.mask(subtypes), at: 4)
        s.bind(date.local.description, at: 5)
        s.bind(date.offset?.seconds, at: 6)
        s.bind(date.source.rawValue, at: 7)
        s.bind(date.local.dayNumber, at: 8)
        s.bind(primary.pixelWidth, at: 9)
        s.bind(primary.pixelHeight, at: 10)
        s.bind(primary.orientation ?? 1, at: 11)
        s.bind(primary.latitude, at: 12)
        s.bind(primary.longitude, at: 13)
        s.bind(primary.altitude, at: 14)
        s.bind(primary.make, at: 15)
        s.bind(primary.model, at: 16)
        s.bind(primary.lensModel, at: 17)
        s.bind(primary.duration, at: 18)
        s.bind(rating, at: 19)
        s.bind(Keywords.encode(keywords), at: 20)
        s.bind(primary.size, at: 21)
        s.bind(path.bytes, at: 22)
        try s.run()
        let written = existing ?? db.lastInsertRowID
        let type = (primary.mediaType ?? .image).rawValue
        if let before = job.before[written], before.facts.deletedAt != nil {
            // Back from Recently Deleted: its other tombstones describe files it no longer needs.
            let drop = try db.statement("DELETE FROM tombstones WHERE asset_pk = ?1")
            drop.bind(written, at: 1)
            try drop.run()
        }
        if existing == nil {
            job.count("assets." + type, 1)
            job.count("root.\(try rootID(ofDirectory: directory)).assets", 1)
        } else if let before = job.before[written] {
            if before.facts.mediaType.rawValue != type {
                job.count("assets." + before.facts.mediaType.rawValue, -1)
                job.count("assets." + type, 1)
            }
            let to = try rootID(ofDirectory: directory)
            if before.root != to {
                job.count("root.\(before.root).assets", -1)
                job.count("root.\(to).assets", 1)
            }
        }
        job.touched.insert(written)
        // The state after the job, from what was just written (no read back).
        let previous = job.before[written]?.facts
        if let id = existing == nil ? newID : job.before[written]?.member.id {
            job.after[written] = .some(AssetState(
                pk: written, root: try rootID(ofDirectory: directory), directory: directory,
                member: MomentMember(id: id, local: date.local, path: path, mediaType: primary.mediaType ?? .image,
                                     latitude: primary.latitude, longitude: primary.longitude),
                facts: SmartAlbumFacts(mediaType: primary.mediaType ?? .image, subtypes: subtypes,
                                       isFavorite: previous?.isFavorite ?? false, isHidden: previous?.isHidden ?? false,
                                       deletedAt: nil, addedAt: previous?.addedAt ?? now)))
        }
        return written
    }

    func deleteAssetIfOrphan(_ pk: Int64, _ job: inout JobChanges) throws {
        let s = try db.statement("SELECT 1 FROM files WHERE asset_pk = ?1 LIMIT 1")
        defer { s.reset() }
        s.bind(pk, at: 1)
        if try s.step() { return }
        s.reset()
        try deleteAsset(pk, &job)
    }

    func deleteAsset(_ pk: Int64, _ job: inout JobChanges) throws {
        try job.recordBefore(pk) { try self.assetState(pk: $0) }
        // What the row holds now (it may have been rewritten in this job).
        let row = try db.statement("SELECT media_type, root_id FROM assets WHERE pk = ?1")
        row.bind(pk, at: 1)
        if try row.step() {
            job.count("assets." + row.string(0), -1)
            job.count("root.\(row.int64(1)).assets", -1)
        }
        row.reset()
        let unlink = try db.statement("UPDATE files SET asset_pk = NULL, role = NULL WHERE asset_pk = ?1")
        unlink.bind(pk, at: 1)
        try unlink.run()
        let s = try db.statement("DELETE FROM assets WHERE pk = ?1")
        s.bind(pk, at: 1)
        try s.run()
        let tombs = try db.statement("DELETE FROM tombstones WHERE asset_pk = ?1")
        tombs.bind(pk, at: 1)
        try tombs.run()
        job.after[pk] = .some(nil)
    }

    /// The files of one group, with what pairing and composition need.
    func groupFiles(_ group: GroupRef) throws -> [FileRow] {
        let s = try db.statement("""
            SELECT pk, name, status, asset_pk, role, media_type, format, is_raw, local_datetime, utc_offset, date_source,
                   pixel_width, pixel_height, orientation, latitude, longitude, altitude, make, model, lens_model,
                   duration, rating, keywords, user_comment, content_identifier, capture_instant, size
            FROM files WHERE directory_id = ?1 AND group_key = ?2
            """)
        s.bind(group.directory, at: 1)
        s.bind(group.key, at: 2)
        var rows: [FileRow] = []
        while try s.step() {
            var date: CaptureDate?
            if let text = s.optionalString(8), let local = LocalDateTime(iso: text),
               let source = s.optionalString(10).flatMap(DateSource.init(rawValue:)) {
                date = CaptureDate(local: local, offset: s.optionalInt(9).flatMap { UTCOffset(seconds: $0) }, source: source)
            }
            rows.append(FileRow(
                pk: s.int64(0), name: s.bytes(1), status: FileStatus(rawValue: s.string(2)) ?? .error,
                assetPK: s.isNull(3) ? nil : s.int64(3), role: s.optionalString(4).flatMap(Resource.Role.init(rawValue:)),
                mediaType: s.optionalString(5).flatMap(MediaType.init(rawValue:)), format: s.optionalString(6),
                isRaw: s.int(7) != 0, date: date, pixelWidth: s.optionalInt(11), pixelHeight: s.optionalInt(12),
                orientation: s.optionalInt(13), latitude: s.optionalDouble(14), longitude: s.optionalDouble(15),
                altitude: s.optionalDouble(16), make: s.optionalString(17), model: s.optionalString(18),
                lensModel: s.optionalString(19), duration: s.optionalDouble(20), rating: s.optionalInt(21),
                keywords: Keywords.decode(s.optionalString(22)), userComment: s.optionalString(23),
                contentIdentifier: s.optionalString(24), captureInstant: s.isNull(25) ? nil : s.int64(25), size: s.int64(26)))
        }
        return rows
    }

    /// What the collections need to know of an asset.
    func assetState(pk: Int64) throws -> AssetState? {
        let s = try db.statement("""
            SELECT id, directory_id, local_datetime, path, media_type, latitude, longitude, subtypes, is_favorite,
                   is_hidden, deleted_at, added_at, root_id
            FROM assets WHERE pk = ?1
            """)
        defer { s.reset() }
        s.bind(pk, at: 1)
        guard try s.step() else { return nil }
        guard let id = AssetID(rawValue: s.string(0)), let local = LocalDateTime(iso: s.string(2)),
              let mediaType = MediaType(rawValue: s.string(4))
        else { throw StoreError.undecodable(table: "assets", key: String(pk)) }
        return AssetState(
            pk: pk, root: s.int64(12), directory: s.isNull(1) ? nil : s.int64(1),
            member: MomentMember(id: id, local: local, path: PathBytes(s.bytes(3)), mediaType: mediaType,
                                 latitude: s.optionalDouble(5), longitude: s.optionalDouble(6)),
            facts: SmartAlbumFacts(mediaType: mediaType, subtypes: AssetColumns.subtypes(s.int64(7)),
                                   isFavorite: s.int(8) != 0, isHidden: s.int(9) != 0,
                                   deletedAt: s.isNull(10) ? nil : s.int64(10), addedAt: s.int64(11)))
    }

    // MARK: - Collections

    /// Merges the job's asset changes into the moments of the days they touch.
    func updateMoments(_ job: JobChanges, _ summary: inout BatchSummary) throws {
        let change = job.momentChange()
        guard !change.isEmpty else { return }
        let days = MomentMerge.affectedDays(change)
        var existing: [Int: Moment] = [:]
        let load = try db.statement("""
            SELECT day, start_local, end_local, asset_count, photo_count, video_count, latitude, longitude,
                   location_local, location_path, location_asset
            FROM moments WHERE day IN (SELECT value FROM json_each(?1))
            """)
        load.bind("[" + days.map(String.init).joined(separator: ",") + "]", at: 1)
        while try load.step() {
            guard let start = LocalDateTime(iso: load.string(1)), let end = LocalDateTime(iso: load.string(2)) else { continue }
            var location: MomentMemberKey?
            if let l = load.optionalString(8).flatMap(LocalDateTime.init(iso:)),
               let id = load.optionalString(10).flatMap(AssetID.init(rawValue:)) {
                location = MomentMemberKey(local: l, path: PathBytes(load.bytes(9)), id: id)
            }
            let day = load.int(0)
            existing[day] = Moment(day: day, start: start, end: end, assetCount: load.int(3), photoCount: load.int(4),
                                   videoCount: load.int(5), latitude: load.optionalDouble(6),
                                   longitude: load.optionalDouble(7), locationMember: location)
        }
        var failure: (any Error)?
        let (moments, diff) = MomentMerge.apply(change, existing: existing) { day in
            do {
                return try self.dayMembers(day)
            } catch {
                failure = error
                return []
            }
        }
        if let failure { throw failure }
        for (day, moment) in moments {
            if let m = moment {
                let s = try db.statement("""
                    INSERT INTO moments (day, start_local, end_local, asset_count, photo_count, video_count, latitude,
                                         longitude, location_local, location_path, location_asset)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                    ON CONFLICT (day) DO UPDATE SET start_local = excluded.start_local, end_local = excluded.end_local,
                        asset_count = excluded.asset_count, photo_count = excluded.photo_count,
                        video_count = excluded.video_count, latitude = excluded.latitude, longitude = excluded.longitude,
                        location_local = excluded.location_local, location_path = excluded.location_path,
                        location_asset = excluded.location_asset
                    """)
                s.bind(day, at: 1)
                s.bind(m.start.description, at: 2)
                s.bind(m.end.description, at: 3)
                s.bind(m.assetCount, at: 4)
                s.bind(m.photoCount, at: 5)
                s.bind(m.videoCount, at: 6)
                s.bind(m.latitude, at: 7)
                s.bind(m.longitude, at: 8)
                s.bind(m.locationMember?.local.description, at: 9)
                if let path = m.locationMember?.path { s.bind(path.bytes, at: 10) } else { try s.bind(.null, at: 10) }
                s.bind(m.locationMember?.id.rawValue, at: 11)
                try s.run()
            } else {
                let s = try db.statement("DELETE FROM moments WHERE day = ?1")
                s.bind(day, at: 1)
                try s.run()
            }
        }
        summary.collectionsInserted += diff.inserted
        summary.collectionsUpdated += Array(Set(diff.updated + diff.contentChanged)).sorted(by: >)
        summary.collectionsDeleted += diff.deleted
    }

    /// The visible members of one day, for moments that lost a member.
    func dayMembers(_ day: Int) throws -> [MomentMember] {
        let s = try db.statement("""
            SELECT id, local_datetime, path, media_type, latitude, longitude FROM assets
            WHERE day = ?1 AND is_hidden = 0 AND deleted_at IS NULL
            """)
        s.bind(day, at: 1)
        var members: [MomentMember] = []
        while try s.step() {
            guard let id = AssetID(rawValue: s.string(0)), let local = LocalDateTime(iso: s.string(1)),
                  let type = MediaType(rawValue: s.string(3)) else { continue }
            members.append(MomentMember(id: id, local: local, path: PathBytes(s.bytes(2)), mediaType: type,
                                        latitude: s.optionalDouble(4), longitude: s.optionalDouble(5)))
        }
        return members
    }

    /// Recounts the folder albums the job touched; an album appears with its first visible
    /// asset and disappears with its last. The collection lists above a changed album change
    /// too, and a list appears or disappears with the first or last album below it.
    func updateAlbums(_ job: JobChanges, _ summary: inout BatchSummary) throws {
        let rootPaths = roots.map(\.path)
        var albums: [(id: Int64, albumID: String, path: PathBytes, before: Int)] = []
        let load = try db.statement("SELECT album_id, path, asset_count FROM directories WHERE id = ?1")
        for dir in job.albumDirectories.sorted() {
            load.bind(dir, at: 1)
            if try load.step() { albums.append((dir, load.string(0), PathBytes(load.bytes(1)), load.int(2))) }
            load.reset()
        }
        // The lists above the albums (`FolderTree.listPaths`), each chain climbed only until it
        // meets one already collected: O(lists), not O(albums × depth) — a tree 1,000 levels
        // deep has as many albums as lists.
        var lists = Set<PathBytes>()
        func collect(_ path: PathBytes, into set: inout Set<PathBytes>) {
            guard let root = FolderTree.root(of: path, roots: rootPaths) else { return }
            var dir = path.parent
            while dir != root, dir.isWithin(root), dir.bytes.count > root.bytes.count {
                guard set.insert(dir).inserted else { return }
                dir = dir.parent
            }
            set.insert(root)
        }
        for path in albums.map(\.path) { collect(path, into: &lists) }
        // Removed directories are gone already: their albums count as "before" explicitly.
        var aboveGone = Set<PathBytes>()
        for path in job.removedAlbums.map(\.path) + job.movedAlbumOrigins { collect(path, into: &aboveGone) }
        lists.formUnion(aboveGone)
        var existedBefore: [PathBytes: Bool] = [:]
        for list in lists {
            existedBefore[list] = try aboveGone.contains(list) || albumsBelow(list)
        }

        let recount = try db.statement("""
            UPDATE directories SET asset_count =
                (SELECT count(*) FROM assets WHERE directory_id = ?1 AND is_hidden = 0 AND deleted_at IS NULL)
            WHERE id = ?1 RETURNING asset_count
            """)
        for album in albums {
            recount.bind(album.id, at: 1)
            guard try recount.step() else { recount.reset(); continue }
            let after = recount.int(0)
            recount.reset()
            switch (album.before > 0, after > 0) {
            case (false, true): summary.collectionsInserted.append(album.albumID)
            case (true, false): summary.collectionsDeleted.append(album.albumID)
            case (true, true): summary.collectionsUpdated.append(album.albumID)
            case (false, false): break
            }
        }
        summary.collectionsDeleted += job.removedAlbums.map(\.albumID)

        for list in lists.sorted() {
            let id = FolderTree.listID(path: list)
            if rootPaths.contains(list) {  // a root's list always exists
                summary.collectionsUpdated.append(id)
                continue
            }
            switch (existedBefore[list] ?? false, try albumsBelow(list)) {
            case (false, true): summary.collectionsInserted.append(id)
            case (true, false): summary.collectionsDeleted.append(id)
            case (true, true): summary.collectionsUpdated.append(id)
            case (false, false): break
            }
        }
    }

    /// Whether a folder album lies strictly below `path`.
    func albumsBelow(_ path: PathBytes) throws -> Bool {
        let s = try db.statement("SELECT 1 FROM directories WHERE path >= ?1 AND path < ?2 AND asset_count > 0 LIMIT 1")
        defer { s.reset() }
        s.bind(path.bytes + [UInt8(ascii: "/")], at: 1)
        s.bind(path.bytes + [UInt8(ascii: "0")], at: 2)
        return try s.step()
    }

    /// The smart albums whose membership or content the job changed.
    func updateSmartAlbums(_ job: JobChanges, now: Int64, _ summary: inout BatchSummary) {
        var ids = Set<String>()
        for (pk, before) in job.before {
            for album in SmartAlbums.albums(containing: before.facts, now: now) { ids.insert(album.id) }
            if let after = job.after[pk] ?? nil {
                for album in SmartAlbums.albums(containing: after.facts, now: now) { ids.insert(album.id) }
            }
        }
        for pk in job.touched where job.before[pk] == nil {
            if let after = job.after[pk] ?? nil {
                for album in SmartAlbums.albums(containing: after.facts, now: now) { ids.insert(album.id) }
            }
        }
        summary.collectionsUpdated += SmartAlbums.all.map(\.id).filter(ids.contains)
    }

    /// Records the change set; returns its token.
    func journal(_ s: BatchSummary, now: Int64) throws -> Int64 {
        let insert = try db.statement("""
            INSERT INTO changes (time, assets_inserted, assets_updated, assets_deleted, collections_inserted,
                                 collections_updated, collections_deleted)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """)
        insert.bind(now, at: 1)
        insert.bind(s.inserted.map(\.rawValue).joined(separator: ","), at: 2)
        insert.bind(s.updated.map(\.rawValue).joined(separator: ","), at: 3)
        insert.bind(s.deleted.map(\.rawValue).joined(separator: ","), at: 4)
        insert.bind(s.collectionsInserted.joined(separator: ","), at: 5)
        insert.bind(s.collectionsUpdated.joined(separator: ","), at: 6)
        insert.bind(s.collectionsDeleted.joined(separator: ","), at: 7)
        try insert.run()
        return db.lastInsertRowID
    }
}

// MARK: - Job bookkeeping

/// A group of files of one directory that share a base name.
struct GroupRef: Hashable {
    var directory: Int64
    var key: [UInt8]
    /// The directory's path (determined by `directory`, so left out of equality and hashing).
    var path: PathBytes

    static func == (a: GroupRef, b: GroupRef) -> Bool { a.directory == b.directory && a.key == b.key }

    func hash(into h: inout Hasher) {
        h.combine(directory)
        key.withUnsafeBytes { h.combine(bytes: $0) }
    }
}

/// A file row as pairing and composition read it.
struct FileRow {
    /// The row a new file will have (for the fast path, which does not read it back).
    init(_ file: FileOutcome, _ m: FileMetadata) {
        self.init(pk: 0, name: file.name, status: .media, assetPK: nil, role: nil, mediaType: m.mediaType, format: m.format,
                  isRaw: m.isRaw, date: m.captureDate, pixelWidth: m.pixelWidth, pixelHeight: m.pixelHeight,
                  orientation: m.orientation, latitude: m.latitude, longitude: m.longitude, altitude: m.altitude,
                  make: m.make, model: m.model, lensModel: m.lensModel, duration: m.duration, rating: m.rating,
                  keywords: m.keywords, userComment: m.userComment, contentIdentifier: m.contentIdentifier,
                  captureInstant: m.captureInstantMilliseconds, size: file.identity.size)
    }

    init(pk: Int64, name: [UInt8], status: FileStatus, assetPK: Int64?, role: Resource.Role?, mediaType: MediaType?,
         format: String?, isRaw: Bool, date: CaptureDate?, pixelWidth: Int?, pixelHeight: Int?, orientation: Int?,
         latitude: Double?, longitude: Double?, altitude: Double?, make: String?, model: String?, lensModel: String?,
         duration: Double?, rating: Int?, keywords: [String], userComment: String?, contentIdentifier: String?,
         captureInstant: Int64?, size: Int64) {
        self.pk = pk
        self.name = name
        self.status = status
        self.assetPK = assetPK
        self.role = role
        self.mediaType = mediaType
        self.format = format
        self.isRaw = isRaw
        self.date = date
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = orientation
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.make = make
        self.model = model
        self.lensModel = lensModel
        self.duration = duration
        self.rating = rating
        self.keywords = keywords
        self.userComment = userComment
        self.contentIdentifier = contentIdentifier
        self.captureInstant = captureInstant
        self.size = size
    }

    var pk: Int64
    var name: [UInt8]
    var status: FileStatus
    var assetPK: Int64?
    var role: Resource.Role?
    var mediaType: MediaType?
    var format: String?
    var isRaw: Bool
    var date: CaptureDate?
    var pixelWidth: Int?
    var pixelHeight: Int?
    var orientation: Int?
    var latitude: Double?
    var longitude: Double?
    var altitude: Double?
    var make: String?
    var model: String?
    var lensModel: String?
    var duration: Double?
    var rating: Int?
    var keywords: [String]
    var userComment: String?
    var contentIdentifier: String?
    var captureInstant: Int64?
    var size: Int64
}

/// What collections need to know of an asset before and after a job.
struct AssetState {
    var pk: Int64
    var root: Int64
    /// Nil once the asset's directory is gone (an asset in Recently Deleted).
    var directory: Int64?
    var member: MomentMember
    var facts: SmartAlbumFacts

    /// Whether the asset counts in moments and albums (not hidden, not in Recently Deleted).
    var isVisible: Bool { !facts.isHidden && facts.deletedAt == nil }
}

/// A folder album removed with its directory.
struct RemovedAlbum {
    var path: PathBytes
    var albumID: String
}

/// The assets one job touched, with their state before it and after it.
struct JobChanges {
    var groups = Set<GroupRef>()
    /// State before the job, of every pre-existing asset the job changed or deleted.
    var before: [Int64: AssetState] = [:]
    /// Every asset pk the job wrote (inserted or updated) or deleted.
    var touched = Set<Int64>()
    /// State after the job (`nil`: deleted), filled by `loadAfterStates`.
    var after: [Int64: AssetState?] = [:]
    var removedAlbums: [RemovedAlbum] = []
    /// Assets that lost a file; deleted at the end of the job unless another file holds them.
    var orphanCandidates = Set<Int64>()
    /// Assets claimed by a group's recomposition in this job (another group must not take them).
    var claimedAssets = Set<Int64>()
    /// Files moved or restored that the index did not know: the caller reads them.
    var unresolved: [PathBytes] = []
    /// Directories moved that the index did not know: the caller scans them.
    var unresolvedDirectories: [PathBytes] = []
    /// Where the folder albums of moved directories were (their old lists change too).
    var movedAlbumOrigins: [PathBytes] = []
    /// Groups files were moved into (recomposed first).
    var movedInto = Set<GroupRef>()
    var errors = 0
    /// Changes to the `counters` rows, applied once at the end of the job.
    var counters: [String: Int] = [:]

    mutating func count(_ name: String, _ delta: Int) {
        guard delta != 0 else { return }
        counters[name, default: 0] += delta
    }

    mutating func recordBefore(_ pk: Int64, _ load: (Int64) throws -> AssetState?) throws {
        touched.insert(pk)
        guard before[pk] == nil, let state = try load(pk) else { return }
        before[pk] = state
    }

    /// Fills the states after the job that were not recorded when written (deleted assets).
    mutating func loadAfterStates(_ load: (Int64) throws -> AssetState?) throws {
        for pk in touched where after[pk] == nil { after[pk] = .some(try load(pk)) }
    }

    /// The directories whose folder album may have changed.
    var albumDirectories: Set<Int64> {
        var dirs = Set<Int64>()
        for (_, b) in before { if let d = b.directory { dirs.insert(d) } }
        for (_, a) in after { if let d = a?.directory { dirs.insert(d) } }
        return dirs
    }

    /// The asset part of the change set.
    func assetEvents(into summary: inout BatchSummary) {
        for pk in touched.sorted() {
            let b = before[pk]
            let a = after[pk] ?? nil
            switch (b, a) {
            case (nil, let a?): summary.inserted.append(a.member.id)
            case (_?, let a?): summary.updated.append(a.member.id)
            case (let b?, nil): summary.deleted.append(b.member.id)
            case (nil, nil): break
            }
        }
    }

    /// The moments part: old members of visible assets leave, new ones join.
    func momentChange() -> MomentChange {
        var change = MomentChange()
        for pk in touched.sorted() {
            if let b = before[pk], b.isVisible { change.removed.append(b.member) }
            if let a = after[pk] ?? nil, a.isVisible { change.added.append(a.member) }
        }
        return change
    }
}

extension DateSource {
    /// Whether the rules rank this source above an XMP date (a sidecar's does not override it).
    var outranksXMP: Bool { self == .exifOriginal || self == .exifDigitized }
}

/// A SplitMix64 generator seeded from the system's: ids need uniqueness, not secrecy, and a
/// `getrandom` call per asset showed in bulk-index profiles.
struct IDNoise: RandomNumberGenerator {
    var state: UInt64

    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
