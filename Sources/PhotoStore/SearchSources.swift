/// Where a searched word is looked for, and what finding it there weighs: an asset's own words
/// (`asset_words`: file name, files' keywords), the folders it is in below its root
/// (`folder_words`), its place (`place_words`), its camera (`camera_words`, migration 021), the
/// taggers' keywords (`keyword_words`) and the titles of the user albums it is in
/// (`album_words`), each found by an index its table already has (migration 012). What the
/// asset is of — its keywords, place, albums — weighs twice its name or folders; its camera half.
enum SearchSources {
    /// Where a word was found, as a code (`photod_weights` keeps the largest per asset).
    static let subject = 3, name = 2, camera = 1

    /// The points a code is worth (an asset's score adds them up over the words): 4, 2 and 1.
    static let points: [UInt16] = [0, 1, 2, 4]

    /// The assets (`pk`) one term matches, a row per source it is found in, with its code
    /// (`c`); the term is the FTS5 query bound at `?parameter`. Assets in Recently Deleted may
    /// be among them.
    /// With `among`, only the assets whose pks are in the JSON array bound there (SQLite does
    /// not push such a condition into a UNION ALL by itself). With `passing`, the asset's own
    /// words are found by one pass over the term's matches, filtered by the list, rather than
    /// a lookup per pk: FTS5 expands a prefix term (every word that begins so) again at each
    /// lookup, ~0.35 ms at 100,000 assets and ~1.8 ms at 1,000,000 for "2022"* and its
    /// hundreds of dates, while a whole word's lookups cost next to nothing and its pass all its
    /// matches ("apple": 270,913 at 1,000,000, ~20 ms).
    static func branches(parameter n: Int, among: Int? = nil, passing: Bool = false, weighed: Bool = true) -> String {
        let term = "?\(n)"
        let places = "SELECT rowid FROM place_words WHERE place_words MATCH \(term)"
        let cameras = "SELECT rowid FROM camera_words WHERE camera_words MATCH \(term)"
        let only = among.map { "(SELECT value FROM json_each(?\($0)))" }
        let rows = only.map { " AND a.pk IN \($0)" } ?? ""
        return """
            \(own(parameter: n, among: among, passing: passing, weighed: weighed))
            UNION ALL SELECT a.pk, \(name) FROM assets a
                WHERE a.directory_id IN (SELECT rowid FROM folder_words WHERE folder_words MATCH \(term))\(rows)
            UNION ALL SELECT a.pk, \(subject) FROM assets a WHERE a.place_id IN (\(places))
                AND a.place_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL\(rows)
            UNION ALL SELECT a.pk, \(subject) FROM assets a WHERE (a.is_hidden != 0 OR a.deleted_at IS NOT NULL)
                AND a.place_id IN (\(places))\(rows)
            UNION ALL SELECT a.pk, \(camera) FROM assets a WHERE a.camera_id IN (\(cameras))
                AND a.camera_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL\(rows)
            UNION ALL SELECT a.pk, \(camera) FROM assets a WHERE (a.is_hidden != 0 OR a.deleted_at IS NOT NULL)
                AND a.camera_id IN (\(cameras))\(rows)
            """
    }

    /// The branches of the sources that are the asset's own rather than its folder's, its
    /// place's or its camera's: its words, the taggers' keywords and its user albums
    /// (`SearchGroups` counts folders, places and cameras by their groups). Not `weighed`, the words' code is 0: a count's
    /// rows, without the position lists FTS5 loads to tell the column (~1 µs a row).
    static func own(parameter n: Int, among: Int? = nil, passing: Bool = false, weighed: Bool = true) -> String {
        let term = "?\(n)"
        let only = among.map { "(SELECT value FROM json_each(?\($0)))" }
        let ownRows = only.map { passing ? " AND +rowid IN \($0)" : " AND rowid IN \($0)" } ?? ""
        let rows = only.map { " AND a.pk IN \($0)" } ?? ""
        return """
            SELECT rowid AS pk, \(weighed ? "photod_column_weight(asset_words, \(name), \(subject))" : "0") AS c
                FROM asset_words WHERE asset_words MATCH \(term)\(ownRows)
            UNION ALL SELECT a.pk, \(subject) FROM asset_keywords k JOIN assets a ON a.id = k.asset_id
                WHERE k.keyword IN (SELECT keyword FROM keyword_words WHERE keyword_words MATCH \(term))\(rows)
            UNION ALL SELECT a.pk, \(subject) FROM user_album_assets m JOIN assets a ON a.id = m.asset_id
                WHERE m.album_id IN (SELECT id FROM album_words WHERE album_words MATCH \(term))\(rows)
            """
    }

    /// One term's matches with their best weight (`w`, half the points), for SQL to join.
    static func matches(parameter n: Int) -> String {
        "SELECT pk, max(CASE c WHEN \(subject) THEN 2.0 WHEN \(name) THEN 1.0 ELSE 0.5 END) AS w FROM (\(branches(parameter: n))) WHERE c > 0 GROUP BY pk"
    }

    /// One term's matches among the asset's own words as a blob, a byte per pk, the best code:
    /// gone through inside FTS5 (`photod_phrase_weights`, ~3× faster than a row at a time through
    /// `photod_column_weight` and `photod_weights`: a name word of 421,633 assets); no row when
    /// there is none. The term's other sources are `taggedWeights` and `groupWeights`
    /// (`IndexReader.weights`).
    static let wordWeights = """
        SELECT photod_phrase_weights(asset_words, \(name), \(subject))
        FROM asset_words WHERE asset_words MATCH ?1 LIMIT 1
        """

    /// The taggers' keywords and the user albums' titles, likewise.
    static let taggedWeights = """
        SELECT photod_weights(pk, c) FROM (
            SELECT a.pk AS pk, \(subject) AS c FROM asset_keywords k JOIN assets a ON a.id = k.asset_id
                WHERE k.keyword IN (SELECT keyword FROM keyword_words WHERE keyword_words MATCH ?1)
            UNION ALL SELECT a.pk, \(subject) FROM user_album_assets m JOIN assets a ON a.id = m.asset_id
                WHERE m.album_id IN (SELECT id FROM album_words WHERE album_words MATCH ?1))
        """

    /// The folders, places and cameras, likewise (hidden assets and those in Recently Deleted
    /// at a place or of a camera too, as `branches` has them).
    static let groupWeights = """
        SELECT photod_weights(pk, c) FROM (
            SELECT a.pk AS pk, \(name) AS c FROM assets a
                WHERE a.directory_id IN (SELECT rowid FROM folder_words WHERE folder_words MATCH ?1)
            UNION ALL SELECT a.pk, \(subject) FROM assets a
                WHERE a.place_id IN (SELECT rowid FROM place_words WHERE place_words MATCH ?1)
                AND a.place_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL
            UNION ALL SELECT a.pk, \(subject) FROM assets a WHERE (a.is_hidden != 0 OR a.deleted_at IS NOT NULL)
                AND a.place_id IN (SELECT rowid FROM place_words WHERE place_words MATCH ?1)
            UNION ALL SELECT a.pk, \(camera) FROM assets a
                WHERE a.camera_id IN (SELECT rowid FROM camera_words WHERE camera_words MATCH ?1)
                AND a.camera_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL
            UNION ALL SELECT a.pk, \(camera) FROM assets a WHERE (a.is_hidden != 0 OR a.deleted_at IS NOT NULL)
                AND a.camera_id IN (SELECT rowid FROM camera_words WHERE camera_words MATCH ?1))
        """

    /// The same for the assets (pks) in the JSON array bound at `?2` only: for a whole word,
    /// its words looked up per pk; for a prefix (`weightsAmongByPass`), one pass over its matches.
    static let weightsAmong = "SELECT photod_weights(pk, c) FROM (\(branches(parameter: 1, among: 2)))"
    static let weightsAmongByPass = "SELECT photod_weights(pk, c) FROM (\(branches(parameter: 1, among: 2, passing: true)))"

    /// How many rows one term's branches give, counted up to `?2` only (the branches stop
    /// there): enough to tell a rare term from a common one.
    static let probe = "SELECT count(*) FROM (SELECT pk FROM (\(branches(parameter: 1, weighed: false))) LIMIT ?2)"


    /// The newest assets first whose byte is set in the blob bound at `?1`, at most `?2`:
    /// the capture-order index walked inside SQLite.
    static let newestMembers = """
        SELECT pk FROM assets INDEXED BY assets_order WHERE photod_member(?1, pk)
        ORDER BY local_datetime DESC, pk DESC LIMIT ?2
        """
}
