import PhotoModel

/// Recently Deleted, moves and restores: what keeps an asset's id, user state and resources
/// when its files move or disappear for a while.
extension IndexWriter {
    static let tombstoneColumns = """
        status, fsid, inode, size, mtime_ns, fingerprint, media_type, format, is_raw, local_datetime, utc_offset,
        date_source, pixel_width, pixel_height, orientation, latitude, longitude, altitude, make, model, lens_model,
        duration, rating, keywords, user_comment, content_identifier, capture_instant
        """

    /// Keeps the asset-linked file rows matching `condition` (on `files f`, with `?1`/`?2`) as
    /// tombstones, before they are deleted.
    func saveTombstones(where condition: String, _ bindings: SQLValue..., now: Int64) throws {
        guard !bindings.isEmpty else { return }
        let columns = Self.tombstoneColumns
        let prefixed = columns.split(separator: ",").map { "f." + $0.trimmingWhitespace() }.joined(separator: ", ")
        let s = try db.statement("""
            INSERT INTO tombstones (asset_pk, role, directory_path, name, deleted_at, \(columns))
            SELECT f.asset_pk, f.role, d.path, f.name, ?9, \(prefixed)
            FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE f.asset_pk IS NOT NULL AND \(condition)
            """)
        try s.bind(bindings)
        s.bind(now, at: 9)
        try s.run()
    }

    /// Puts an asset in Recently Deleted (its user state stays on it; tombstones keep its files).
    func trash(_ pk: Int64, now: Int64, _ job: inout JobChanges) throws {
        // Already in Recently Deleted: nothing changes (and nothing is announced).
        let deleted = try db.scalar("SELECT deleted_at IS NOT NULL FROM assets WHERE pk = ?1", .integer(pk)).int64
        guard deleted == 0 else { return }
        try job.recordBefore(pk) { try self.assetState(pk: $0) }
        let s = try db.statement("UPDATE assets SET deleted_at = ?2 WHERE pk = ?1 AND deleted_at IS NULL")
        s.bind(pk, at: 1)
        s.bind(now, at: 2)
        try s.run()
        job.after[pk] = nil  // read back at the end of the job
    }

    /// Trashes an asset that no file refers to any more.
    func trashIfOrphan(_ pk: Int64, now: Int64, _ job: inout JobChanges) throws {
        let s = try db.statement("SELECT 1 FROM files WHERE asset_pk = ?1 LIMIT 1")
        defer { s.reset() }
        s.bind(pk, at: 1)
        if try s.step() { return }
        s.reset()
        try trash(pk, now: now, &job)
    }

    /// When two assets become one, the survivor is a favorite (or hidden) if either was.
    func mergeUserState(from loser: Int64, into winner: Int64) throws {
        let s = try db.statement("""
            UPDATE assets SET
                is_favorite = max(is_favorite, (SELECT is_favorite FROM assets WHERE pk = ?1)),
                is_hidden = max(is_hidden, (SELECT is_hidden FROM assets WHERE pk = ?1))
            WHERE pk = ?2
            """)
        s.bind(loser, at: 1)
        s.bind(winner, at: 2)
        try s.run()
        let u = try db.statement("""
            INSERT INTO user_state (asset_id, is_favorite, is_hidden, updated_at)
            SELECT id, is_favorite, is_hidden, 0 FROM assets WHERE pk = ?1 AND (is_favorite != 0 OR is_hidden != 0)
            ON CONFLICT (asset_id) DO UPDATE SET is_favorite = excluded.is_favorite, is_hidden = excluded.is_hidden
            """)
        u.bind(winner, at: 1)
        try u.run()
    }

    /// An asset (`a`) in Recently Deleted or without a file left.
    static let trashedOrOrphaned =
        "(a.deleted_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM files o WHERE o.asset_pk = a.pk))"

    /// A tombstone whose file this one is: the same file (fsid, inode, size, mtime), else the same
    /// content (size and fingerprint; a copy back from a backup has a new inode).
    func matchTombstone(_ file: FileOutcome) throws -> Int64? {
        guard hasTombstones else { return nil }
        // Only tombstones of assets in Recently Deleted (a restored asset's are gone), or about
        // to go there: left without files by a removal earlier in this job (a merged job
        // removes a file and writes its copy in one transaction; the trash comes at its end).
        let byIdentity = try db.statement("""
            SELECT t.pk FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND \(Self.trashedOrOrphaned)
            WHERE t.fsid = ?1 AND t.inode = ?2 AND t.size = ?3 AND t.mtime_ns = ?4 LIMIT 1
            """)
        defer { byIdentity.reset() }
        byIdentity.bind(Int64(bitPattern: file.identity.fsid), at: 1)
        byIdentity.bind(Int64(bitPattern: file.identity.inode), at: 2)
        byIdentity.bind(file.identity.size, at: 3)
        byIdentity.bind(file.identity.mtimeNanoseconds, at: 4)
        if try byIdentity.step() { return byIdentity.int64(0) }
        guard let fingerprint = file.fingerprint else { return nil }
        let byContent = try db.statement("""
            SELECT t.pk FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND \(Self.trashedOrOrphaned)
            WHERE t.size = ?1 AND t.fingerprint = ?2 LIMIT 1
            """)
        defer { byContent.reset() }
        byContent.bind(file.identity.size, at: 1)
        byContent.bind(Int64(bitPattern: fingerprint), at: 2)
        return try byContent.step() ? byContent.int64(0) : nil
    }

    /// Links a just-written file row to the asset of a tombstone and drops the tombstone: the
    /// group's recomposition brings the asset back (same id, same user state).
    func adopt(tombstone: Int64, file: FileOutcome, directory: Int64) throws {
        let s = try db.statement("""
            UPDATE files SET asset_pk = (SELECT asset_pk FROM tombstones WHERE pk = ?1),
                             role = (SELECT role FROM tombstones WHERE pk = ?1)
            WHERE directory_id = ?2 AND name = ?3
            """)
        s.bind(tombstone, at: 1)
        s.bind(directory, at: 2)
        s.bind(file.name, at: 3)
        try s.run()
        let d = try db.statement("DELETE FROM tombstones WHERE pk = ?1")
        d.bind(tombstone, at: 1)
        try d.run()
    }

    /// A file indexed as a new asset moments ago turns out to be a copy of a file this job
    /// removed (the same size and fingerprint): the copy's row joins the removed file's asset
    /// (which keeps its id, user state and albums, and leaves Recently Deleted if it got there)
    /// and the copy's own asset, which only that row made, is deleted. Anything else is left
    /// as it is.
    func adoptRemovedOriginal(of copy: PathBytes, now: Int64, _ job: inout JobChanges) throws {
        guard let dir = try existingDirectory(copy.parent) else { return }
        let row = try db.statement("""
            SELECT pk, asset_pk, size, fingerprint FROM files
            WHERE directory_id = ?1 AND name = ?2 AND asset_pk IS NOT NULL AND fingerprint IS NOT NULL
            """)
        row.bind(dir, at: 1)
        row.bind(copy.lastComponent, at: 2)
        guard try row.step() else {
            row.reset()
            return
        }
        let (filePK, copyAsset, size, fingerprint) = (row.int64(0), row.int64(1), row.int64(2), row.int64(3))
        row.reset()
        let others = try db.scalar("SELECT count(*) FROM files WHERE asset_pk = ?1", .integer(copyAsset)).int64 ?? 0
        guard others == 1 else { return }  // the copy is paired with other files: leave it
        let find = try db.statement("""
            SELECT t.pk, t.asset_pk FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND \(Self.trashedOrOrphaned)
            WHERE t.size = ?1 AND t.fingerprint = ?2 AND t.asset_pk != ?3 LIMIT 1
            """)
        find.bind(size, at: 1)
        find.bind(fingerprint, at: 2)
        find.bind(copyAsset, at: 3)
        guard try find.step() else {
            find.reset()
            return
        }
        let (tombstone, original) = (find.int64(0), find.int64(1))
        find.reset()
        try mergeUserState(from: copyAsset, into: original)
        let relink = try db.statement("""
            UPDATE files SET asset_pk = ?1, role = (SELECT role FROM tombstones WHERE pk = ?2) WHERE pk = ?3
            """)
        relink.bind(original, at: 1)
        relink.bind(tombstone, at: 2)
        relink.bind(filePK, at: 3)
        try relink.run()
        let drop = try db.statement("DELETE FROM tombstones WHERE pk = ?1")
        drop.bind(tombstone, at: 1)
        try drop.run()
        try deleteAsset(copyAsset, &job)
        let group = GroupRef(directory: dir, key: ResourcePairing.groupKey(of: copy.lastComponent), path: copy.parent)
        job.groups.insert(group)
        job.movedInto.insert(group)
    }

    /// A file found again without being read (the walk matched its identity): its tombstone
    /// becomes its row at the new place.
    func restoreFile(_ r: FileRestore, now: Int64, _ job: inout JobChanges) throws {
        let dir = try directory(r.path.parent)
        let name = r.path.lastComponent
        let columns = Self.tombstoneColumns
        let s = try db.statement("""
            INSERT INTO files (directory_id, name, group_key, indexed_at, asset_pk, role, \(columns))
            SELECT ?2, ?3, ?4, ?5, asset_pk, role, \(columns) FROM tombstones WHERE pk = ?1
            ON CONFLICT (directory_id, name) DO NOTHING
            RETURNING status
            """)
        s.bind(r.tombstone, at: 1)
        s.bind(dir.id, at: 2)
        s.bind(name, at: 3)
        s.bind(ResourcePairing.groupKey(of: name), at: 4)
        s.bind(now, at: 5)
        guard try s.step() else {
            s.reset()
            job.unresolved.append(r.path)  // no tombstone any more, or a row is there: read it
            return
        }
        job.count("files." + s.string(0), 1)
        s.reset()
        let fix = try db.statement("UPDATE files SET fsid = ?1, inode = ?2, size = ?3, mtime_ns = ?4 WHERE directory_id = ?5 AND name = ?6")
        fix.bind(Int64(bitPattern: r.identity.fsid), at: 1)
        fix.bind(Int64(bitPattern: r.identity.inode), at: 2)
        fix.bind(r.identity.size, at: 3)
        fix.bind(r.identity.mtimeNanoseconds, at: 4)
        fix.bind(dir.id, at: 5)
        fix.bind(name, at: 6)
        try fix.run()
        let d = try db.statement("DELETE FROM tombstones WHERE pk = ?1")
        d.bind(r.tombstone, at: 1)
        try d.run()
        job.groups.insert(GroupRef(directory: dir.id, key: ResourcePairing.groupKey(of: name), path: r.path.parent))
    }

    /// A file renamed or moved: its row moves, its asset (and its pairing) follows; an asset
    /// keeps its id. A move whose source the index does not know is reported unresolved (the
    /// caller reads the file at its new place).
    func moveFile(_ move: FileMove, now: Int64, _ job: inout JobChanges) throws {
        guard let fromDir = try existingDirectory(move.from.parent) else {
            job.unresolved.append(move.to)
            return
        }
        let name = move.from.lastComponent
        let find = try db.statement("SELECT pk FROM files WHERE directory_id = ?1 AND name = ?2")
        find.bind(fromDir, at: 1)
        find.bind(name, at: 2)
        guard try find.step() else {
            find.reset()
            job.unresolved.append(move.to)
            return
        }
        let pk = find.int64(0)
        find.reset()
        let toDir = try directory(move.to.parent)
        let toName = move.to.lastComponent
        // `mv a b` over an existing b: b's old content is gone (its asset to Recently Deleted).
        if toDir.id != fromDir || toName != name {
            try removeFile(directory: move.to.parent, name: toName, now: now, &job)
        }
        let s = try db.statement("UPDATE files SET directory_id = ?1, name = ?2, group_key = ?3 WHERE pk = ?4")
        s.bind(toDir.id, at: 1)
        s.bind(toName, at: 2)
        s.bind(ResourcePairing.groupKey(of: toName), at: 3)
        s.bind(pk, at: 4)
        try s.run()
        job.groups.insert(GroupRef(directory: fromDir, key: ResourcePairing.groupKey(of: name), path: move.from.parent))
        let destination = GroupRef(directory: toDir.id, key: ResourcePairing.groupKey(of: toName), path: move.to.parent)
        job.groups.insert(destination)
        job.movedInto.insert(destination)
    }

    /// A directory renamed or moved: the rows of its subtree take the new paths, so that files,
    /// assets, folder album ids and user state all follow without reading anything.
    func moveDirectory(_ move: DirectoryMove, now: Int64, _ job: inout JobChanges) throws {
        guard let top = try existingDirectory(move.from), move.from != move.to else {
            job.unresolvedDirectories.append(move.to)
            return
        }
        guard let rootID = roots.filter({ move.to.isWithin($0.path) }).max(by: { $0.path.bytes.count < $1.path.bytes.count })?.id
        else {
            throw StoreError(code: .constraint, message: "directory '\(move.to)' is not inside any library root")
        }
        // Something already indexed at the destination was replaced.
        if try existingDirectory(move.to) != nil { try removeSubtree(move.to, now: now, &job) }
        let parent = try directory(move.to.parent).id
        let lower = move.from.bytes + [UInt8(ascii: "/")]
        let upper = move.from.bytes + [UInt8(ascii: "0")]
        let subtree = "SELECT id FROM directories WHERE path = ?1 OR (path >= ?2 AND path < ?3)"
        let members = try db.statement("""
            SELECT a.pk, d.path, d.asset_count FROM assets a JOIN directories d ON d.id = a.directory_id
            WHERE a.directory_id IN (\(subtree))
            """)
        members.bind(move.from.bytes, at: 1)
        members.bind(lower, at: 2)
        members.bind(upper, at: 3)
        var pks: [Int64] = []
        while try members.step() { pks.append(members.int64(0)) }
        for pk in pks { try job.recordBefore(pk) { try self.assetState(pk: $0) } }
        let albums = try db.statement("""
            SELECT path FROM directories WHERE (path = ?1 OR (path >= ?2 AND path < ?3)) AND asset_count > 0
            """)
        albums.bind(move.from.bytes, at: 1)
        albums.bind(lower, at: 2)
        albums.bind(upper, at: 3)
        while try albums.step() { job.movedAlbumOrigins.append(PathBytes(albums.bytes(0))) }

        let rename = "CAST(?4 || substr(path, ?5) AS BLOB)"
        let dirs = try db.statement("""
            UPDATE directories SET path = \(rename), root_id = ?6 WHERE id IN (\(subtree))
            """)
        dirs.bind(move.from.bytes, at: 1)
        dirs.bind(lower, at: 2)
        dirs.bind(upper, at: 3)
        dirs.bind(move.to.bytes, at: 4)
        dirs.bind(move.from.bytes.count + 1, at: 5)
        dirs.bind(rootID, at: 6)
        try dirs.run()
        let topRow = try db.statement("UPDATE directories SET parent_id = ?1, name = ?2 WHERE id = ?3")
        topRow.bind(parent, at: 1)
        topRow.bind(move.to.lastComponent, at: 2)
        topRow.bind(top, at: 3)
        try topRow.run()
        // A mount point below a folder that moves (its parent renamed) keeps its record.
        let mounts = try db.statement("""
            UPDATE OR REPLACE mounts SET path = \(rename) WHERE path = ?1 OR (path >= ?2 AND path < ?3)
            """)
        mounts.bind(move.from.bytes, at: 1)
        mounts.bind(lower, at: 2)
        mounts.bind(upper, at: 3)
        mounts.bind(move.to.bytes, at: 4)
        mounts.bind(move.from.bytes.count + 1, at: 5)
        try mounts.run()
        let newLower = move.to.bytes + [UInt8(ascii: "/")]
        let newUpper = move.to.bytes + [UInt8(ascii: "0")]
        let assets = try db.statement("""
            UPDATE assets SET path = CAST(?4 || substr(path, ?5) AS BLOB), root_id = ?6
            WHERE directory_id IN (SELECT id FROM directories WHERE path = ?1 OR (path >= ?2 AND path < ?3))
            """)
        assets.bind(move.to.bytes, at: 1)
        assets.bind(newLower, at: 2)
        assets.bind(newUpper, at: 3)
        assets.bind(move.to.bytes, at: 4)
        assets.bind(move.from.bytes.count + 1, at: 5)
        assets.bind(rootID, at: 6)
        try assets.run()
        for pk in pks {
            if let before = job.before[pk], before.root != rootID {
                job.count("root.\(before.root).assets", -1)
                job.count("root.\(rootID).assets", 1)
            }
            job.after[pk] = nil  // read back at the end of the job
        }
        directoryCache.removeAll(keepingCapacity: true)
        directoryRoots.removeAll(keepingCapacity: true)
    }

    /// The id of an indexed directory, or nil.
    func existingDirectory(_ path: PathBytes) throws -> Int64? {
        try db.scalar("SELECT id FROM directories WHERE path = ?1", .blob(path.bytes)).int64
    }

    /// Deletes for good the assets that have been in Recently Deleted since before `cutoff`
    /// (and their tombstones): one transaction, one change set (they are `deleted`).
    public func purge(deletedBefore cutoff: Int64, now: Int64) throws -> BatchSummary {
        try db.transaction {
            var job = JobChanges()
            let s = try db.statement("SELECT pk FROM assets WHERE deleted_at IS NOT NULL AND deleted_at < ?1")
            s.bind(cutoff, at: 1)
            var pks: [Int64] = []
            while try s.step() { pks.append(s.int64(0)) }
            var ids: [String] = []
            for pk in pks {
                if let id = try db.scalar("SELECT id FROM assets WHERE pk = ?1", .integer(pk)).string { ids.append(id) }
                try deleteAsset(pk, &job)
            }
            // Gone for good: what users said about them goes too (albums lose them).
            let albums = try forgetUserState(of: ids, now: now)
            try applyCounters(job.counters)
            var summary = BatchSummary()
            summary.collectionsUpdated = albums
            job.assetEvents(into: &summary)
            updateSmartAlbums(job, now: now, &summary)
            if !summary.isEmpty { summary.token = try journal(summary, now: now) }
            return summary
        }
    }
}

extension IndexWriter {
    /// Deletes the user state of purged assets; returns the user albums that lost members.
    func forgetUserState(of ids: [String], now: Int64) throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let list = Self.jsonArray(ids)
        let albums = try db.statement("""
            SELECT DISTINCT album_id FROM user_album_assets WHERE asset_id IN (SELECT value FROM json_each(?1)) ORDER BY album_id
            """)
        albums.bind(list, at: 1)
        var touched: [String] = []
        while try albums.step() { touched.append(albums.string(0)) }
        for table in ["user_album_assets", "asset_keywords", "user_state"] {
            let d = try db.statement("DELETE FROM \(table) WHERE asset_id IN (SELECT value FROM json_each(?1))")
            d.bind(list, at: 1)
            try d.run()
        }
        let stamp = try db.statement("UPDATE user_albums SET updated_at = ?2 WHERE id = ?1")
        for album in touched {
            stamp.bind(album, at: 1)
            stamp.bind(now, at: 2)
            try stamp.run()
        }
        return touched
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and newlines.
    func trimmingWhitespace() -> String {
        var s = self[...]
        while let c = s.first, c == " " || c == "\n" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\n" { s = s.dropLast() }
        return String(s)
    }
}
