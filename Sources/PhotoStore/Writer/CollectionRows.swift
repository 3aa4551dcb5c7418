import PhotoModel

/// The writer's part for collections: merges a job's asset changes (states before and after)
/// into the moments of the days they touch, recounts the folder albums and collection lists
/// above them, names the smart albums whose members changed — all into the change set — and
/// keeps the key assets of each (`KeyAssetRows`).
final class CollectionRows {
    let db: Connection
    private let directories: Directories
    private let places: PlaceRows
    let keys: KeyAssetRows
    /// `indexMoments`' statements, prepared once.
    private var unindexMomentsStatement: Statement?
    private var indexMomentsStatement: Statement?
    private var clearMomentsStatement: Statement?

    init(_ db: Connection, directories: Directories, places: PlaceRows) {
        self.db = db
        self.directories = directories
        self.places = places
        keys = KeyAssetRows(db)
    }

    /// Writes the words (`moment_words`) of the moments this transaction inserted, retitled or
    /// deleted, as their rows are now, and empties `moments_unindexed`: one statement each per
    /// transaction instead of a trigger per row (migration 020). With `AssetRows.indexInserted`,
    /// the writer's last step before its change set.
    func indexMoments() throws(StoreError) {
        try db.statement(&unindexMomentsStatement, """
            DELETE FROM moment_words WHERE rowid IN (SELECT day FROM moments_unindexed)
            """).run()
        try db.statement(&indexMomentsStatement, SearchSQL.momentWords(days: "SELECT day FROM moments_unindexed")).run()
        try db.statement(&clearMomentsStatement, "DELETE FROM moments_unindexed").run()
    }

    /// Every collection part of a job's change set.
    func update(_ job: WriteJob, into changes: inout ChangeSet) throws(StoreError) {
        try updateMoments(job, &changes)
        try updateAlbums(job, &changes)
        try updateSmartAlbums(job, &changes)
    }

    /// The user albums that hold assets the job touched, or that `extra` (the job's own
    /// collections) names: their key assets are looked at again, and those holding a touched
    /// asset are updated (a member changed). The folders above an album whose key assets
    /// changed, and above a folder the job named (an album moved out of it, deleted from it),
    /// are updated too: a folder's key assets are the newest of everything in it.
    func updateUserAlbums(_ job: WriteJob, extra: ChangeSet, _ changes: inout ChangeSet) throws(StoreError) {
        let all = extra.collectionsInserted + extra.collectionsUpdated + extra.collectionsDeleted
        let named = all.filter { $0.hasPrefix("u_") }
        let namedFolders = all.filter { $0.hasPrefix("uf_") }
        if named.isEmpty && namedFolders.isEmpty {
            guard !job.touched.isEmpty || !job.placed.isEmpty, try keys.hasUserAlbums() else { return }
        }
        var ids = Set(job.placed)
        for pk in job.touched {
            if let b = job.before[pk] { ids.insert(b.member.id) }
            if let a = job.after[pk] ?? nil { ids.insert(a.member.id) }
        }
        let holding = try keys.userAlbums(holding: ids.sorted())
        guard !holding.isEmpty || !named.isEmpty || !namedFolders.isEmpty else { return }
        let changed = try keys.updateUserAlbums(holding + named)
        var folders: [String] = []
        for id in changed + namedFolders.filter({ !extra.collectionsDeleted.contains($0) }) {
            folders += try keys.folders(above: id)
        }
        var more = ChangeSet()
        more.collectionsUpdated = Set(holding + changed + folders).subtracting(extra.collectionsDeleted).sorted()
        changes.add(collections: more)
    }

    // MARK: Moments

    /// Merges the job's asset changes into the moments of the days they touch.
    private func updateMoments(_ job: WriteJob, _ changes: inout ChangeSet) throws(StoreError) {
        let change = job.momentChange()
        guard !change.isEmpty else { return }
        let days = MomentMerge.affectedDays(change)
        var existing: [Int: Moment] = [:]
        let load = try db.statement("""
            SELECT day, start_local, end_local, asset_count, photo_count, video_count, latitude, longitude,
                   location_local, location_path, location_asset
            FROM moments WHERE day IN (SELECT value FROM json_each(:days))
            """)
        load.bind(":days", to: "[" + days.map(String.init).joined(separator: ",") + "]")
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
        var failure: StoreError?
        let (moments, diff) = MomentMerge.apply(change, existing: existing) { day in
            do throws(StoreError) {
                return try self.dayMembers(day)
            } catch {
                failure = error
                return []
            }
        }
        if let failure { throw failure }
        let upsert = try db.statement("""
            INSERT INTO moments (day, start_local, end_local, asset_count, photo_count, video_count, latitude,
                                 longitude, location_local, location_path, location_asset, place_tally)
            VALUES (:day, :start, :end, :assets, :photos, :videos, :latitude, :longitude, :locationLocal,
                    :locationPath, :locationAsset, '')
            ON CONFLICT (day) DO UPDATE SET start_local = excluded.start_local, end_local = excluded.end_local,
                asset_count = excluded.asset_count, photo_count = excluded.photo_count,
                video_count = excluded.video_count, latitude = excluded.latitude, longitude = excluded.longitude,
                location_local = excluded.location_local, location_path = excluded.location_path,
                location_asset = excluded.location_asset
            """)
        let delete = try db.statement("DELETE FROM moments WHERE day = :day")
        for (day, moment) in moments {
            if let m = moment {
                upsert.bind(":day", to: day)
                upsert.bind(":start", to: m.start.description)
                upsert.bind(":end", to: m.end.description)
                upsert.bind(":assets", to: m.assetCount)
                upsert.bind(":photos", to: m.photoCount)
                upsert.bind(":videos", to: m.videoCount)
                upsert.bind(":latitude", to: m.latitude)
                upsert.bind(":longitude", to: m.longitude)
                upsert.bind(":locationLocal", to: m.locationMember?.local.description)
                upsert.bind(":locationPath", to: m.locationMember?.path)
                upsert.bind(":locationAsset", to: m.locationMember?.id.rawValue)
                try upsert.run()
            } else {
                delete.bind(":day", to: day)
                try delete.run()
            }
        }
        // Titles by place follow from the assets of each day the job touched (a member's place
        // may change with nothing else: a sidecar naming a city). A day the job only added
        // assets to adds their places to what its title was made from.
        let adding = job.placesAdded()
        var retitled = Set<String>()
        for day in days {
            let stillThere: Bool
            if let merged = moments[day] { stillThere = merged != nil } else { stillThere = existing[day] != nil }
            guard stillThere else { continue }
            if try places.retitle(day: day, adding: adding[day] ?? nil) {
                retitled.insert(MomentGrouping.id(day: day))
            }
        }
        // Key assets follow from the rows just written, for every day the job touched: a moment
        // whose key assets changed with nothing else (a member marked favorite, a burst's new
        // representative) is updated.
        let inserted = Set(diff.inserted)
        var updated = Set(diff.updated + diff.contentChanged).union(retitled.subtracting(inserted))
        for day in days {
            let moment: Moment?
            if let merged = moments[day] { moment = merged } else { moment = existing[day] }
            guard let m = moment, try keys.updateMoment(day: day, start: m.start, end: m.end) else { continue }
            if !inserted.contains(m.id) { updated.insert(m.id) }
        }
        for id in diff.deleted { try keys.drop(id) }
        changes.collectionsInserted += diff.inserted
        changes.collectionsUpdated += updated.sorted(by: >)
        changes.collectionsDeleted += diff.deleted
    }

    /// The visible members of one day, for moments that lost a member.
    private func dayMembers(_ day: Int) throws(StoreError) -> [MomentMember] {
        let s = try db.statement("""
            SELECT id, local_datetime, path, media_type, latitude, longitude FROM assets
            WHERE local_datetime >= :from AND local_datetime < :to AND day = :day AND is_hidden = 0 AND deleted_at IS NULL
            """)
        let range = MomentGrouping.localDateTimeRange(day: day)
        s.bind(":day", to: day)
        s.bind(":from", to: range.from)
        s.bind(":to", to: range.to)
        var members: [MomentMember] = []
        while try s.step() {
            guard let id = AssetID(rawValue: s.string(0)), let local = LocalDateTime(iso: s.string(1)),
                  let type = MediaType(rawValue: s.string(3)) else { continue }
            members.append(MomentMember(id: id, local: local, path: PathBytes(s.bytes(2)), mediaType: type,
                                        latitude: s.optionalDouble(4), longitude: s.optionalDouble(5)))
        }
        return members
    }

    // MARK: Folder albums and collection lists

    /// Recounts the folder albums the job touched; an album appears with its first visible
    /// asset and disappears with its last. The collection lists above a changed album change
    /// too, and a list appears or disappears with the first or last album below it.
    private func updateAlbums(_ job: WriteJob, _ changes: inout ChangeSet) throws(StoreError) {
        let rootPaths = directories.roots.map(\.path)
        var albums: [(id: Int64, albumID: String, path: PathBytes, before: Int)] = []
        let load = try db.statement("SELECT album_id, path, asset_count FROM directories WHERE id = :id")
        for dir in job.albumDirectories.sorted() {
            load.bind(":id", to: dir)
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
            existedBefore[list] = aboveGone.contains(list) ? true : try directories.albumsBelow(list)
        }

        // The count and the first and last capture times in one pass over the album's assets;
        // then its key assets.
        let recount = try db.statement("""
            UPDATE directories SET (asset_count, start_local, end_local) =
                (SELECT count(*), min(local_datetime), max(local_datetime) FROM assets
                 WHERE directory_id = :id AND is_hidden = 0 AND deleted_at IS NULL)
            WHERE id = :id RETURNING asset_count, start_local, end_local
            """)
        for album in albums {
            recount.bind(":id", to: album.id)
            guard try recount.step() else { recount.reset(); continue }
            let after = recount.int(0)
            let start = recount.optionalString(1).flatMap(LocalDateTime.init(iso:))
            let end = recount.optionalString(2).flatMap(LocalDateTime.init(iso:))
            recount.reset()
            _ = try keys.updateAlbum(directory: album.id, albumID: album.albumID, start: after > 0 ? start : nil,
                                     end: after > 0 ? end : nil)
            switch (album.before > 0, after > 0) {
            case (false, true): changes.collectionsInserted.append(album.albumID)
            case (true, false): changes.collectionsDeleted.append(album.albumID)
            case (true, true): changes.collectionsUpdated.append(album.albumID)
            case (false, false): break
            }
        }
        changes.collectionsDeleted += job.removedAlbums.map(\.albumID)
        for album in job.removedAlbums { try keys.drop(album.albumID) }

        for list in lists.sorted() {
            let id = FolderTree.listID(path: list)
            if rootPaths.contains(list) {  // a root's list always exists
                changes.collectionsUpdated.append(id)
                continue
            }
            switch (existedBefore[list] ?? false, try directories.albumsBelow(list)) {
            case (false, true): changes.collectionsInserted.append(id)
            case (true, false): changes.collectionsDeleted.append(id)
            case (true, true): changes.collectionsUpdated.append(id)
            case (false, false): break
            }
        }
    }

    // MARK: Smart albums

    /// Moves the smart albums' kept counts (`SmartCounters`) by the job's before and after
    /// states of the assets it touched, and drops the Recently Added buckets the window left.
    func countSmartAlbums(_ job: WriteJob) throws(StoreError) {
        var deltas: [String: Int] = [:]
        for pk in job.touched {
            if let b = job.before[pk] { SmartCounters.add(b.facts, -1, now: job.now, into: &deltas) }
            if let a = job.after[pk] ?? nil { SmartCounters.add(a.facts, +1, now: job.now, into: &deltas) }
        }
        for (name, delta) in deltas where delta != 0 { job.count(name, delta) }
        try SmartCounters.prune(db, now: job.now)
    }

    /// The smart albums whose membership or content the job changed, and their key assets.
    func updateSmartAlbums(_ job: WriteJob, _ changes: inout ChangeSet) throws(StoreError) {
        try keys.updateSmartAlbums(job)
        var ids = Set<String>()
        for (pk, before) in job.before {
            for album in SmartAlbums.albums(containing: before.facts, now: job.now) { ids.insert(album.id) }
            if let after = job.after[pk] ?? nil {
                for album in SmartAlbums.albums(containing: after.facts, now: job.now) { ids.insert(album.id) }
            }
        }
        for pk in job.touched where job.before[pk] == nil {
            if let after = job.after[pk] ?? nil {
                for album in SmartAlbums.albums(containing: after.facts, now: job.now) { ids.insert(album.id) }
            }
        }
        changes.collectionsUpdated += SmartAlbums.all.map(\.id).filter(ids.contains)
    }
}
