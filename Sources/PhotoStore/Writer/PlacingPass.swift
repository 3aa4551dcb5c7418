import PhotoModel

/// How far the pass that places assets indexed before places has come.
public struct PlacingProgress: Sendable, Hashable {
    /// Assets looked at so far, and in all (assets with coordinates then).
    public var done: Int
    public var total: Int
    /// Whether nothing is left to look at.
    public var finished: Bool { done >= total }

    public init(done: Int, total: Int) {
        self.done = done
        self.total = total
    }
}

extension IndexReader {
    /// What the placing pass has left (nil: nothing, or no pass was ever needed).
    /// Kept by the pass as it goes (meta `places.done`, `places.total`), so that
    /// `library.status` reads two rows; counted before its first job only.
    public func placingProgress() throws(StoreError) -> PlacingProgress? {
        guard let end = try metaInteger("places.end") else { return nil }
        if let total = try metaInteger("places.total") {
            return PlacingProgress(done: Int(try metaInteger("places.done") ?? 0), total: Int(total))
        }
        return PlacingProgress(done: 0, total: try placeable(upTo: end))
    }

    /// The assets with coordinates outside Recently Deleted up to pk `end`.
    func placeable(upTo end: Int64) throws(StoreError) -> Int {
        let s = try db.statement("SELECT count(*) FROM assets WHERE pk <= :end AND latitude IS NOT NULL AND deleted_at IS NULL")
        defer { s.reset() }
        s.bind(":end", to: end)
        _ = try s.step()
        return s.int(0)
    }
}

extension IndexWriter {
    /// Places the next `limit` assets of the pass over a library indexed before places (meta
    /// `places.end`, left by migration 011): each asset with coordinates gets the gazetteer's
    /// place and zone offset. Returns the change set and whether assets are left; the pass is
    /// over (its meta gone) when none are. Assets written since have their places already: the
    /// writer places every asset it writes.
    ///
    /// A place-only job: nothing but an asset's place and zone offset changes, so nothing that
    /// follows from its other fields (smart albums, folder albums, bursts, key assets, moment
    /// membership) is looked at again. The change set lists the assets whose place or offset
    /// changed as `updated` (`WriteJob.placed`), the user albums holding them, and the moments
    /// of their days whose titles (by place) changed.
    ///
    /// `total`: how many assets the pass places, as counted before its first job
    /// (`placingProgress()` on a reader), so that the writer does not count them again; else
    /// the first job counts.
    public func placeAssets(limit: Int, now: Int64, total: Int? = nil) throws(StoreError) -> (changes: ChangeSet, more: Bool) {
        var more = false
        let changes = try commit(now: now) { job throws(StoreError) in
            let meta = IndexReader(db)
            guard let end = try meta.metaInteger("places.end") else { return ChangeSet() }
            let cursor = try meta.metaInteger("places.cursor") ?? 0
            if try meta.metaInteger("places.total") == nil {
                let counted: Int
                if let total { counted = total } else { counted = try meta.placeable(upTo: end) }
                try setMetaInteger("places.total", Int64(counted))
            }
            let s = try db.statement("""
                SELECT a.pk, a.id, a.day, a.place_id, a.zone_offset, \(MediaColumns.placing.names(prefix: "a")) FROM assets a
                WHERE a.pk > :cursor AND a.pk <= :end AND a.latitude IS NOT NULL AND a.deleted_at IS NULL
                ORDER BY a.pk LIMIT :limit
                """)
            s.bind(":cursor", to: cursor)
            s.bind(":end", to: end)
            s.bind(":limit", to: limit)
            var rows: [(pk: Int64, id: String, day: Int?, placeID: Int64?, zoneOffset: Int?, media: MediaFields)] = []
            rows.reserveCapacity(limit)
            while try s.step() {
                var media = MediaColumns.blank
                guard MediaColumns.placing.read(into: &media, from: s, at: 5) else {
                    s.reset()
                    throw StoreError.undecodable(table: "assets", key: String(s.int64(0)))
                }
                rows.append((s.int64(0), s.string(1), s.isNull(2) ? nil : s.int(2), s.isNull(3) ? nil : s.int64(3),
                             s.optionalInt(4), media))
            }
            s.reset()
            let update = try db.statement("UPDATE assets SET place_id = :placeID, zone_offset = :zoneOffset WHERE pk = :pk")
            var days = Set<Int>()
            for row in rows {
                let placed = places.place(of: row.media)
                let id = try places.id(of: placed.place)
                guard id != row.placeID || placed.zoneOffset?.seconds != row.zoneOffset else { continue }
                guard let assetID = AssetID(rawValue: row.id) else { throw StoreError.undecodable(table: "assets", key: String(row.pk)) }
                job.placed.append(assetID)
                if let day = row.day, id != row.placeID { days.insert(day) }
                update.bind(":placeID", to: id)
                update.bind(":zoneOffset", to: placed.zoneOffset?.seconds)
                update.bind(":pk", to: row.pk)
                try update.run()
            }
            if let last = rows.last?.pk, rows.count == limit {
                try setMetaInteger("places.cursor", last)
                try setMetaInteger("places.done", (try meta.metaInteger("places.done") ?? 0) + Int64(rows.count))
                more = true
            } else {
                try db.execute("DELETE FROM meta WHERE key IN ('places.end', 'places.cursor', 'places.done', 'places.total')")
            }
            // The moments of the days whose places changed: titled by place.
            var retitled = ChangeSet()
            for day in days.sorted() where try places.retitle(day: day) {
                retitled.collectionsUpdated.append(MomentGrouping.id(day: day))
            }
            return retitled
        }
        return (changes, more)
    }
}
