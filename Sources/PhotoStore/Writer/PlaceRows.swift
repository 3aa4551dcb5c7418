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
    /// The places by row id, loaded with `ids`: a moment's title is made from its tally's.
    private var byID: [Int64: Place]?
    private var insertStatement: Statement?
    private var retitleStatement: Statement?
    private var currentStatement: Statement?
    private var tallyStatement: Statement?
    private var unindexedStatement: Statement?

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
        byID?[id] = place
        last = (place, id)
        return id
    }

    /// Makes the title and cities of the moment of `day` from its visible assets' places, and
    /// keeps what they were made from (`moments.place_tally`); returns whether they changed.
    /// `adding`: the places (row ids) of the assets a job only added to the day, nil when it
    /// also removed or changed some; they are added to the kept tally (empty in a moment the
    /// job made; NULL, so counted, in one made before migration 016) instead of the day's assets
    /// counted again, which a first index paid at every batch for every asset of the day so far.
    func retitle(day: Int, adding: [Int64]? = nil) throws(StoreError) -> Bool {
        let current = try db.statement(&currentStatement, "SELECT title, location_names, place_tally FROM moments WHERE day = :day")
        current.bind(":day", to: day)
        guard try current.step() else {
            current.reset()
            return false
        }
        let (oldTitle, oldNames) = (current.optionalString(0), current.optionalString(1))
        let kept = current.optionalString(2)
        current.reset()
        var tally: [Int64: Int]
        if let adding, let kept, let base = Self.decodeTally(kept) {
            tally = base
            for id in adding { tally[id, default: 0] += 1 }
        } else {
            tally = try count(day: day)
        }
        var counts: PlaceTitles.Tally = []
        for id in tally.keys.sorted() {
            guard let place = try place(id: id) else { continue }
            counts.append((place, tally[id] ?? 0))
        }
        let title = PlaceTitles.title(counts)
        let names = MomentPlaces.encode(PlaceTitles.locationCounts(counts))
        let s = try db.statement(&retitleStatement, """
            UPDATE moments SET title = :title, location_names = :names, place_tally = :tally WHERE day = :day
            """)
        s.bind(":title", to: title)
        s.bind(":names", to: names)
        s.bind(":tally", to: Self.encodeTally(tally))
        s.bind(":day", to: day)
        try s.run()
        if title != oldTitle || MomentPlaces.names(names) != MomentPlaces.names(oldNames) {
            // Its words changed: `CollectionRows.indexMoments` writes them (migration 020).
            let mark = try db.statement(&unindexedStatement, "INSERT OR IGNORE INTO moments_unindexed (day) VALUES (:day)")
            mark.bind(":day", to: day)
            try mark.run()
        }
        return title != oldTitle || names != oldNames
    }

    /// The visible assets of `day` by place row id, counted.
    private func count(day: Int) throws(StoreError) -> [Int64: Int] {
        let tally = try db.statement(&tallyStatement, """
            SELECT place_id, count(*) FROM assets
            WHERE local_datetime >= :from AND local_datetime < :to AND day = :day
              AND is_hidden = 0 AND deleted_at IS NULL AND place_id IS NOT NULL
            GROUP BY place_id
            """)
        let range = MomentGrouping.localDateTimeRange(day: day)
        tally.bind(":day", to: day)
        tally.bind(":from", to: range.from)
        tally.bind(":to", to: range.to)
        var counts: [Int64: Int] = [:]
        while try tally.step() { counts[tally.int64(0)] = tally.int(1) }
        tally.reset()
        return counts
    }

    /// `moments.place_tally`: "id:count" pairs, ids ascending, joined by ",".
    static func encodeTally(_ tally: [Int64: Int]) -> String {
        tally.keys.sorted().map { "\($0):\(tally[$0] ?? 0)" }.joined(separator: ",")
    }

    /// A kept tally; nil for anything `encodeTally` does not make.
    static func decodeTally(_ text: String) -> [Int64: Int]? {
        var tally: [Int64: Int] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: ":")
            guard parts.count == 2, let id = Int64(parts[0]), let n = Int(parts[1]), n > 0 else { return nil }
            tally[id] = n
        }
        return tally
    }

    /// The place of a row id (nil for an id with no row).
    private func place(id: Int64) throws(StoreError) -> Place? {
        if byID == nil { try load() }
        return byID?[id]
    }

    /// Forgets the cached ids (after a rollback: SQLite may reuse a rolled-back rowid).
    func forget() {
        ids = nil
        byID = nil
        last = nil
    }

    private func load() throws(StoreError) {
        let s = try db.statement("SELECT key, id FROM places")
        defer { s.reset() }
        var map: [String: Int64] = [:]
        var places: [Int64: Place] = [:]
        while try s.step() {
            let key = s.string(0), id = s.int64(1)
            map[key] = id
            places[id] = Place(encoded: key)
        }
        ids = map
        byID = places
    }
}

/// How `moments.location_names` holds a moment's cities: each name and its count joined by
/// U+001E, the pairs by U+001F (NULL for none).
enum MomentPlaces {
    static func encode(_ counts: [PlaceCount]) -> String? {
        counts.isEmpty ? nil : counts.map { "\($0.name)\u{1E}\($0.count)" }.joined(separator: "\u{1F}")
    }

    /// The cities alone, in order: a moment's words (`moment_words`).
    static func names(_ stored: String?) -> [Substring] {
        guard let stored else { return [] }
        return stored.split(separator: "\u{1F}").map { $0.prefix { $0 != "\u{1E}" } }
    }

    static func decode(_ stored: String?) -> [PlaceCount] {
        guard var stored else { return [] }
        return stored.withUTF8(decode)
    }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> [PlaceCount] {
        var result: [PlaceCount] = []
        forEach(bytes) { result.append(PlaceCount(name: $0, count: $1)) }
        return result
    }

    /// Each pair of the column's bytes in place, read byte by byte: splitting a `String` by
    /// `Character` into an array a moment was three quarters of `momentLists.fetch` at 1M
    /// (every moment's cities, each request). A pair without exactly one U+001E and a decimal
    /// count is skipped.
    static func forEach(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (String, Int) -> Void) {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x1F) ?? bytes.count
            if let mark = bytes[start..<end].firstIndex(of: 0x1E), (1...18).contains(end - mark - 1),
               let count = Digits.value(bytes, mark + 1, end - mark - 1) {
                body(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<mark]), as: UTF8.self), count)
            }
            start = end + 1
        }
    }
}
