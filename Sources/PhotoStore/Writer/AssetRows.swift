import PhotoModel

/// An asset's row as the writer writes it.
struct AssetRecord {
    var media: MediaFields
    var subtypes: Set<AssetSubtype>
    var directory: Int64
    var root: Int64
    var path: PathBytes
    var fileSize: Int64
    /// Its row in `places` (`PlaceRows`), and the offset its place's zone gives.
    var placeID: Int64?
    var zoneOffset: UTCOffset?
    /// Its row in `cameras` (`CameraRows`).
    var cameraID: Int64?
}

/// The columns of `assets` besides the media fields and the user state, declared once.
enum AssetRecordColumns {
    static let list = ColumnList<AssetRecord>([
        Column("directory_id", "directory", bind: { $0.directory.bind(to: $1, at: $2) }),
        Column("root_id", "root", bind: { $0.root.bind(to: $1, at: $2) }),
        Column("subtypes", "subtypes", bind: { AssetColumns.mask($0.subtypes).bind(to: $1, at: $2) }),
        Column("day", "day", bind: { $0.media.captureDate.local.dayNumber.bind(to: $1, at: $2) }),
        Column("file_size", "fileSize", bind: { $0.fileSize.bind(to: $1, at: $2) }),
        Column("path", "path", bind: { $0.path.bind(to: $1, at: $2) }),
        Column("place_id", "placeID", bind: { $0.placeID.bind(to: $1, at: $2) }),
        Column("zone_offset", "zoneOffset", bind: { $0.zoneOffset?.seconds.bind(to: $1, at: $2) }),
        Column("camera_id", "cameraID", bind: { $0.cameraID.bind(to: $1, at: $2) }),
    ])

    static func bind(_ r: AssetRecord, to s: Statement) {
        list.bind(r, to: s)
        MediaColumns.list.bind(r.media, to: s)
    }
}

/// The writer's part for `assets`: carries out the composer's plan for a group (which assets
/// its files make, which ids they keep), writes and deletes asset rows, puts assets in Recently
/// Deleted, and reads the state collections compare before and after a job.
final class AssetRows {
    let db: Connection
    private let directories: Directories
    private let places: PlaceRows
    let cameras: CameraRows
    /// Noise for new asset ids: seeded once from the system, then no system call per asset;
    /// one value per job (its ids count up from it).
    private var random = IDNoise()
    /// The statements every asset write runs, prepared once.
    private var insertStatement: Statement?
    private var updateStatement: Statement?
    private var indexWordsStatement: Statement?
    private var countPlacesStatement: Statement?
    private var countCamerasStatement: Statement?
    private var countGroupsStatement: Statement?
    private var clearUnindexedStatement: Statement?

    init(_ db: Connection, directories: Directories, places: PlaceRows) {
        self.db = db
        self.directories = directories
        self.places = places
        cameras = CameraRows(db)
    }

    // MARK: Words and counts

    /// Writes the words (`asset_words`) and place, camera and group counts (`place_counts`,
    /// `camera_counts`, `group_counts`) of the assets this transaction inserted, as their rows are now, and
    /// empties `assets_unindexed`: one statement each per transaction instead of a trigger per
    /// row (migration 014 says why). The writer's last step before its change set; five steps
    /// on an empty table when nothing was inserted.
    func indexInserted() throws(StoreError) {
        try db.statement(&indexWordsStatement, """
            INSERT INTO asset_words (rowid, name, keywords)
            SELECT pk, name, keywords FROM asset_words_source WHERE pk IN (SELECT pk FROM assets_unindexed)
            """).run()
        try db.statement(&countPlacesStatement, """
            INSERT INTO place_counts (place_id, assets)
            SELECT place_id, count(*) FROM assets WHERE pk IN (SELECT pk FROM assets_unindexed)
                AND place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY place_id
            ON CONFLICT (place_id) DO UPDATE SET assets = assets + excluded.assets
            """).run()
        try db.statement(&countCamerasStatement, """
            INSERT INTO camera_counts (camera_id, assets)
            SELECT camera_id, count(*) FROM assets WHERE pk IN (SELECT pk FROM assets_unindexed)
                AND camera_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY camera_id
            ON CONFLICT (camera_id) DO UPDATE SET assets = assets + excluded.assets
            """).run()
        try db.statement(&countGroupsStatement, """
            INSERT INTO group_counts (directory_id, place_id, camera_id, assets)
            SELECT directory_id, coalesce(place_id, 0), coalesce(camera_id, 0), count(*) FROM assets
                WHERE pk IN (SELECT pk FROM assets_unindexed) AND is_hidden = 0 AND deleted_at IS NULL GROUP BY 1, 2, 3
            ON CONFLICT DO UPDATE SET assets = assets + excluded.assets
            """).run()
        try db.statement(&clearUnindexedStatement, "DELETE FROM assets_unindexed").run()
    }

    // MARK: Composition

    /// Composes the assets of one group from its files (see `AssetComposer.plan`) and writes
    /// them: an asset keeps its id when its primary file, or else any of its files, still
    /// belongs to it.
    func recompose(_ group: GroupRef, _ job: WriteJob) throws(StoreError) {
        let (files, deferred) = try groupFiles(group)
        let plan = AssetComposer.plan(files, claimed: job.claimedAssets)
        var written: [Int64] = []
        var sole = Set<Int>()  // files whose fields are all of their asset's: deferred to it
        for composition in plan.compositions {
            let primary = files[composition.primary]
            let pk = try write(composition, path: group.path.appending(primary.name), directory: group.directory, job)
            written.append(pk)
            job.claimedAssets.insert(pk)
            for m in composition.members where files[m.file].assetPK != pk || files[m.file].role != m.role {
                try link(files[m.file].pk, asset: pk, role: m.role)
            }
            if composition.members.count == 1, primary.media == composition.media { sole.insert(composition.primary) }
        }
        // A row deferred to an asset whose fields changed, or that another file joined, gets its
        // own fields back (read before the asset was written); one alone in its asset again
        // gives them up.
        for (i, file) in files.enumerated() where deferred[i] != sole.contains(i) {
            guard let media = file.media else { continue }
            try setDeferred(file.pk, sole.contains(i) ? nil : media)
        }
        for i in plan.unlinked { try link(files[i].pk, asset: nil, role: nil) }
        for leftover in plan.leftovers {
            switch leftover {
            case .trash(let pk):
                try trash(pk, job)
            case .merge(let pk, let winner):
                // Two assets became one (a RAW found its JPEG): the one that lost its files
                // goes, and its user state joins the one that has them now.
                try mergeUserState(from: pk, into: written[winner])
                // Its flags changed after its state was recorded: read back at the end.
                job.after[written[winner]] = nil
                try deleteIfOrphan(pk, job)
            case .trashIfOrphan(let pk):
                try trashIfOrphan(pk, job)
            }
        }
    }

    /// The files of one group, as the composer reads them (a deferred row's fields from its
    /// asset), and which rows are deferred.
    private func groupFiles(_ group: GroupRef) throws(StoreError) -> ([AssetComposer.File], deferred: [Bool]) {
        let s = try db.statement("""
            SELECT f.pk, f.name, f.status, f.asset_pk, f.role, f.size, \(MediaColumns.deferred("f")),
                   \(MediaColumns.resolved(file: "f", asset: "a"))
            FROM files f LEFT JOIN assets a ON a.pk = f.asset_pk
            WHERE f.directory_id = :directory AND f.name >= :groupKey AND f.name < :groupEnd
            """)
        s.bind(":directory", to: group.directory)
        s.bind(":groupKey", to: group.key)
        s.bind(":groupEnd", to: ResourcePairing.groupNamesEnd(group.key))
        var files: [AssetComposer.File] = []
        var deferred: [Bool] = []
        while try s.step() {
            let name = s.bytes(1)
            guard ResourcePairing.groupKey(of: name) == group.key else { continue }  // `IMG_1.2.jpg` is not in `IMG_1`'s
            let content: AssetComposer.File.Content
            switch FileStatus(rawValue: s.string(2)) {
            case .media:
                var media = MediaColumns.blank
                guard MediaColumns.list.read(into: &media, from: s, at: 7) else {
                    throw StoreError.undecodable(table: "files", key: String(s.int64(0)))
                }
                content = .media(media)
            case .sidecar:
                content = .sidecar(MediaColumns.sidecar(from: s, at: 7))
            case .ignored:
                content = .other(isError: false)
            case .error, nil:
                content = .other(isError: true)
            }
            files.append(AssetComposer.File(
                pk: s.int64(0), name: name, content: content, assetPK: s.isNull(3) ? nil : s.int64(3),
                role: s.optionalString(4).flatMap(Resource.Role.init(rawValue:)), size: s.int64(5)))
            deferred.append(s.int(6) != 0)
        }
        return (files, deferred)
    }

    /// Defers a media file row's fields to its asset (nil), or writes them into the row.
    private func setDeferred(_ file: Int64, _ media: MediaFields?) throws(StoreError) {
        guard let media else {
            let s = try db.statement("UPDATE files SET \(MediaColumns.cleared) WHERE pk = :file")
            s.bind(":file", to: file)
            return try s.run()
        }
        let s = try db.statement("UPDATE files SET \(MediaColumns.list.assignments) WHERE pk = :file")
        MediaColumns.list.bind(media, to: s)
        s.bind(":file", to: file)
        try s.run()
    }

    /// Copies a file row's deferred fields back from its asset, before the row leaves it.
    func materialize(file: Int64) throws(StoreError) {
        let s = try db.statement("UPDATE files SET \(MediaColumns.fromAsset) WHERE pk = :file AND \(MediaColumns.deferred("files"))")
        s.bind(":file", to: file)
        try s.run()
    }

    private func link(_ file: Int64, asset: Int64?, role: Resource.Role?) throws(StoreError) {
        let s = try db.statement("UPDATE files SET asset_pk = :asset, role = :role WHERE pk = :file")
        s.bind(":asset", to: asset)
        s.bind(":role", to: role?.rawValue)
        s.bind(":file", to: file)
        try s.run()
    }

    // MARK: Rows

    private static let insertSQL = """
        INSERT INTO assets (\(AssetRecordColumns.list.names()), \(MediaColumns.list.names()), id, added_at)
        VALUES (\(AssetRecordColumns.list.parameters), \(MediaColumns.list.parameters), :id, :addedAt)
        """
    private static let updateSQL = """
        UPDATE assets SET \(AssetRecordColumns.list.assignments), \(MediaColumns.list.assignments), deleted_at = NULL
        WHERE pk = :pk
        """

    /// Inserts or updates the asset a composition makes; returns its pk.
    func write(_ c: AssetComposer.Composition, path: PathBytes, directory: Int64,
               _ job: WriteJob) throws(StoreError) -> Int64 {
        let root = try directories.rootID(ofDirectory: directory)
        let placed = places.place(of: c.media)
        let record = AssetRecord(media: c.media, subtypes: c.subtypes, directory: directory, root: root, path: path,
                                 fileSize: c.fileSize, placeID: try places.id(of: placed.place), zoneOffset: placed.zoneOffset,
                                 cameraID: try cameras.id(of: c.media))
        let s: Statement
        var newID: AssetID?
        if let existing = c.existing {
            try job.recordBefore(existing)
            s = try db.statement(&updateStatement, Self.updateSQL)
            s.bind(":pk", to: existing)
        } else {
            s = try db.statement(&insertStatement, Self.insertSQL)
            let noise = job.idNoise.map { $0 &+ 1 } ?? random.next()
            job.idNoise = noise
            newID = AssetID(milliseconds: job.now, noise: noise)
            s.bind(":id", to: newID!.rawValue)
            s.bind(":addedAt", to: job.now)
        }
        AssetRecordColumns.bind(record, to: s)
        try s.run()
        let written = c.existing ?? db.lastInsertRowID
        let before = job.before[written]
        if let before, before.facts.deletedAt != nil {
            // Back from Recently Deleted: its other tombstones describe files it no longer needs.
            try dropTombstones(of: written)
        }
        if c.existing == nil {
            job.countAssets(c.media.mediaType, 1)
            job.countAssets(root: root, 1)
        } else if let before {
            if before.facts.mediaType != c.media.mediaType {
                job.countAssets(before.facts.mediaType, -1)
                job.countAssets(c.media.mediaType, 1)
            }
            if before.root != root {
                job.countAssets(root: before.root, -1)
                job.countAssets(root: root, 1)
            }
        }
        job.touched.insert(written)
        // The state after the job, from what was just written (no read back).
        let previous = before?.facts
        if let id = c.existing == nil ? newID : before?.member.id {
            job.after[written] = .some(AssetState(
                pk: written, root: root, directory: directory,
                member: MomentMember(id: id, local: c.media.captureDate.local, path: path, mediaType: c.media.mediaType,
                                     latitude: c.media.latitude, longitude: c.media.longitude),
                facts: SmartAlbumFacts(mediaType: c.media.mediaType, subtypes: c.subtypes,
                                       isFavorite: previous?.isFavorite ?? false, isHidden: previous?.isHidden ?? false,
                                       deletedAt: nil, addedAt: previous?.addedAt ?? job.now,
                                       representsBurst: previous?.representsBurst ?? false),
                burst: c.media.burstIdentifier, placeID: record.placeID))
        }
        return written
    }

    /// Undoes an asset inserted by `write` moments ago that nothing refers to yet.
    func undoNew(_ pk: Int64, mediaType: MediaType, root: Int64, _ job: WriteJob) throws(StoreError) {
        let undo = try db.statement("DELETE FROM assets WHERE pk = :pk")
        undo.bind(":pk", to: pk)
        try undo.run()
        job.countAssets(mediaType, -1)
        job.countAssets(root: root, -1)
        job.touched.remove(pk)
        job.after[pk] = nil
    }

    private func dropTombstones(of pk: Int64) throws(StoreError) {
        let drop = try db.statement("DELETE FROM tombstones WHERE asset_pk = :pk")
        drop.bind(":pk", to: pk)
        try drop.run()
    }

    /// Whether a file row still refers to the asset.
    private func hasFiles(_ pk: Int64) throws(StoreError) -> Bool {
        let s = try db.statement("SELECT 1 FROM files WHERE asset_pk = :pk LIMIT 1")
        defer { s.reset() }
        s.bind(":pk", to: pk)
        return try s.step()
    }

    func deleteIfOrphan(_ pk: Int64, _ job: WriteJob) throws(StoreError) {
        if try !hasFiles(pk) { try delete(pk, job) }
    }

    /// Deletes an asset for good (its files are unlinked, its tombstones dropped).
    func delete(_ pk: Int64, _ job: WriteJob) throws(StoreError) {
        try job.recordBefore(pk)
        // What the row holds now (it may have been rewritten in this job).
        let row = try db.statement("SELECT media_type, root_id FROM assets WHERE pk = :pk")
        row.bind(":pk", to: pk)
        if try row.step() {
            job.countAssets(MediaType(rawValue: row.string(0)) ?? .image, -1)
            job.countAssets(root: row.int64(1), -1)
        }
        row.reset()
        let keep = try db.statement("UPDATE files SET \(MediaColumns.fromAsset) WHERE asset_pk = :pk AND \(MediaColumns.deferred("files"))")
        keep.bind(":pk", to: pk)
        try keep.run()
        let unlink = try db.statement("UPDATE files SET asset_pk = NULL, role = NULL WHERE asset_pk = :pk")
        unlink.bind(":pk", to: pk)
        try unlink.run()
        let s = try db.statement("DELETE FROM assets WHERE pk = :pk")
        s.bind(":pk", to: pk)
        try s.run()
        try dropTombstones(of: pk)
        job.after[pk] = .some(nil)
    }

    /// Puts an asset in Recently Deleted (its user state stays on it; tombstones keep its files).
    func trash(_ pk: Int64, _ job: WriteJob) throws(StoreError) {
        // Already in Recently Deleted: nothing changes (and nothing is announced).
        let deleted = try db.scalar("SELECT deleted_at IS NOT NULL FROM assets WHERE pk = ?1", .integer(pk)).int64
        guard deleted == 0 else { return }
        try job.recordBefore(pk)
        let s = try db.statement("UPDATE assets SET deleted_at = :now WHERE pk = :pk AND deleted_at IS NULL")
        s.bind(":pk", to: pk)
        s.bind(":now", to: job.now)
        try s.run()
        job.after[pk] = nil  // read back at the end of the job
    }

    /// Trashes an asset that no file refers to any more.
    func trashIfOrphan(_ pk: Int64, _ job: WriteJob) throws(StoreError) {
        if try !hasFiles(pk) { try trash(pk, job) }
    }

    /// When two assets become one, the survivor is a favorite (or hidden) if either was.
    func mergeUserState(from loser: Int64, into winner: Int64) throws(StoreError) {
        let s = try db.statement("""
            UPDATE assets SET
                is_favorite = max(is_favorite, (SELECT is_favorite FROM assets WHERE pk = :loser)),
                is_hidden = max(is_hidden, (SELECT is_hidden FROM assets WHERE pk = :loser))
            WHERE pk = :winner
            """)
        s.bind(":loser", to: loser)
        s.bind(":winner", to: winner)
        try s.run()
        let u = try db.statement("""
            INSERT INTO user_state (asset_id, is_favorite, is_hidden, updated_at)
            SELECT id, is_favorite, is_hidden, 0 FROM assets WHERE pk = :winner AND (is_favorite != 0 OR is_hidden != 0)
            ON CONFLICT (asset_id) DO UPDATE SET is_favorite = excluded.is_favorite, is_hidden = excluded.is_hidden
            """)
        u.bind(":winner", to: winner)
        try u.run()
    }

    // MARK: State

    /// What the collections need to know of an asset (nil: no such row).
    func state(pk: Int64) throws(StoreError) -> AssetState? {
        let s = try db.statement("""
            SELECT id, directory_id, local_datetime, path, media_type, latitude, longitude, subtypes, is_favorite,
                   is_hidden, deleted_at, added_at, root_id, represents_burst, burst_id, place_id
            FROM assets WHERE pk = :pk
            """)
        defer { s.reset() }
        s.bind(":pk", to: pk)
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
                                   deletedAt: s.isNull(10) ? nil : s.int64(10), addedAt: s.int64(11),
                                   representsBurst: s.int(13) != 0),
            burst: s.optionalString(14), placeID: s.isNull(15) ? nil : s.int64(15))
    }
}

extension AssetRows {
    /// Keeps one representative for every burst the job touched (`represents_burst`): the first
    /// member by capture time, then path, of the visible ones (a hidden one only when all are
    /// hidden), never one in Recently Deleted; none when all are there. A member whose flag changes is touched, so its change is in the change set and in
    /// the Bursts smart album's counters. The bursts are those of the touched assets before and
    /// after the job; the states of their members are read back at the end of the job.
    func updateBursts(_ job: WriteJob) throws(StoreError) {
        var bursts = Set<String>()
        var unknown: [Int64] = []
        for pk in job.touched {
            if let b = job.before[pk]?.burst { bursts.insert(b) }
            switch job.after[pk] {
            case .some(let state?): if let b = state.burst { bursts.insert(b) }
            case .some(nil): break
            case nil: unknown.append(pk)  // deleted or moved: read below
            }
        }
        if !unknown.isEmpty {
            let s = try db.statement("SELECT burst_id FROM assets WHERE pk = :pk AND burst_id IS NOT NULL")
            for pk in unknown {
                s.bind(":pk", to: pk)
                if try s.step() { bursts.insert(s.string(0)) }
                s.reset()
            }
        }
        guard !bursts.isEmpty else { return }
        // A photo that left its burst (read again without a BurstUUID) stands for none.
        let left = try db.statement("UPDATE assets SET represents_burst = 0 WHERE pk = :pk AND burst_id IS NULL AND represents_burst != 0")
        for pk in job.touched where job.before[pk]?.burst != nil {
            left.bind(":pk", to: pk)
            try left.run()
            if db.changes > 0 { job.after[pk] = nil }
        }
        let members = try db.statement("""
            SELECT pk, represents_burst, deleted_at IS NOT NULL FROM assets WHERE burst_id = :burst
            ORDER BY deleted_at IS NOT NULL, is_hidden, local_datetime, path, pk
            """)
        let set = try db.statement("UPDATE assets SET represents_burst = :represents WHERE pk = :pk")
        for burst in bursts.sorted() {
            members.bind(":burst", to: burst)
            var rows: [(pk: Int64, represents: Bool, deleted: Bool)] = []
            while try members.step() { rows.append((members.int64(0), members.int(1) != 0, members.int(2) != 0)) }
            members.reset()
            for (i, row) in rows.enumerated() {
                let wanted = i == 0 && !row.deleted
                if wanted != row.represents {
                    // A member this job wrote has its state before the job already (none when it
                    // is new: recorded now, its new row would pass for its state before).
                    if !job.touched.contains(row.pk) { try job.recordBefore(row.pk) }
                    set.bind(":represents", to: wanted ? 1 : 0)
                    set.bind(":pk", to: row.pk)
                    try set.run()
                }
                // The state written by this job's `write` knew the flag before this step.
                if job.touched.contains(row.pk) { job.after[row.pk] = nil }
            }
        }
    }
}
