import PhotoModel

/// The writer's part for `places`: the row of each place assets are at, made the first time an
/// asset is there and never changed after (readers cache rows by id), and what the lookup says
/// of an asset's media fields.
final class PlaceRows {
    let db: Connection
    /// The gazetteer and zone database (nil: only files' own places, no zone offsets).
    let lookup: (any PlaceLookup)?
    /// Place ids by key, loaded on first use: a library has a few thousand places at most.
    private var ids: [String: Int64]?
    /// The place asked last and its id: the files of a folder are mostly at one place, and
    /// comparing two places that share their names' storage costs less than keying one.
    private var last: (place: Place, id: Int64)?
    private var insertStatement: Statement?
    private var retitleStatement: Statement?

    init(_ db: Connection, lookup: (any PlaceLookup)?) {
        self.db = db
        self.lookup = lookup
    }

    /// An asset's place and zone offset from its fields (`PlaceLookup.place(of:)`).
    func place(of media: MediaFields) -> (place: Place?, zoneOffset: UTCOffset?) {
        guard let lookup else {
            return (media.filePlace, nil)
        }
        let place = lookup.place(of: media)
        return (place, lookup.zoneOffset(of: media, at: place))
    }

    /// The id of a place's row, made if it is new.
    func id(of place: Place?) throws(StoreError) -> Int64? {
        guard let place else { return nil }
        if let last, last.place == place { return last.id }
        let key = place.encoded
        if ids == nil { try load() }
        if let id = ids?[key] {
            last = (place, id)
            return id
        }
        let s = try db.statement(&insertStatement, """
            INSERT INTO places (key, source, city, sub_location, region, country, country_code, near, time_zone)
            VALUES (:key, :source, :city, :subLocation, :region, :country, :countryCode, :near, :timeZone)
            """)
        s.bind(":key", to: key)
        s.bind(":source", to: place.source.rawValue)
        s.bind(":city", to: place.city)
        s.bind(":subLocation", to: place.subLocation)
        s.bind(":region", to: place.region)
        s.bind(":country", to: place.country)
        s.bind(":countryCode", to: place.countryCode)
        s.bind(":near", to: place.near)
        s.bind(":timeZone", to: place.timeZone)
        try s.run()
        let id = db.lastInsertRowID
        ids?[key] = id
        last = (place, id)
        return id
    }

    /// Recomputes the title and cities of the moment of `day` from its visible assets' places;
    /// returns whether they changed.
    func retitle(day: Int) throws(StoreError) -> Bool {
        // Counted by place first, then each place's key looked up once (not once an asset: a
        // third less per day).
        let tally = try db.statement("""
            SELECT p.key, t.n FROM (
                SELECT a.place_id, count(*) AS n FROM assets a
                WHERE a.local_datetime >= :from AND a.local_datetime < :to AND a.day = :day
                  AND a.is_hidden = 0 AND a.deleted_at IS NULL AND a.place_id IS NOT NULL
                GROUP BY a.place_id) t
            JOIN places p ON p.id = t.place_id
            """)
        let range = MomentGrouping.localDateTimeRange(day: day)
        tally.bind(":day", to: day)
        tally.bind(":from", to: range.from)
        tally.bind(":to", to: range.to)
        var counts: PlaceTitles.Tally = []
        while try tally.step() {
            if let place = Place(encoded: tally.string(0)) { counts.append((place, tally.int(1))) }
        }
        tally.reset()
        let title = PlaceTitles.title(counts)
        let names = MomentPlaces.encode(PlaceTitles.locationCounts(counts))
        let s = try db.statement(&retitleStatement, """
            UPDATE moments SET title = :title, location_names = :names
            WHERE day = :day AND (title IS NOT :title OR location_names IS NOT :names)
            """)
        s.bind(":title", to: title)
        s.bind(":names", to: names)
        s.bind(":day", to: day)
        try s.run()
        return db.changes > 0
    }

    /// Forgets the cached ids (after a rollback: SQLite may reuse a rolled-back rowid).
    func forget() {
        ids = nil
        last = nil
    }

    private func load() throws(StoreError) {
        let s = try db.statement("SELECT key, id FROM places")
        defer { s.reset() }
        var map: [String: Int64] = [:]
        while try s.step() { map[s.string(0)] = s.int64(1) }
        ids = map
    }
}

/// How `moments.location_names` holds a moment's cities: each name and its count joined by
/// U+001E, the pairs by U+001F (NULL for none).
enum MomentPlaces {
    static func encode(_ counts: [PlaceCount]) -> String? {
        counts.isEmpty ? nil : counts.map { "\($0.name)\u{1E}\($0.count)" }.joined(separator: "\u{1F}")
    }

    static func decode(_ stored: String?) -> [PlaceCount] {
        guard let stored else { return [] }
        return stored.split(separator: "\u{1F}").compactMap { pair in
            let parts = pair.split(separator: "\u{1E}", omittingEmptySubsequences: false)
            guard parts.count == 2, let n = Int(parts[1]) else { return nil }
            return PlaceCount(name: String(parts[0]), count: n)
        }
    }
}
