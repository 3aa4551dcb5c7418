/// Where a searched word is looked for, and what finding it there weighs: an asset's own words
/// (`asset_words`: file name, files' keywords, camera), the folders it is in below its root
/// (`folder_words`), its place (`place_words`), the taggers' keywords (`keyword_words`) and
/// the titles of the user albums it is in (`album_words`), each found by an index its table
/// already has (migration 012). What the asset is of — its keywords, place, albums — weighs
/// twice its name or folders; its camera half.
enum SearchSources {
    static let subject = 2.0
    static let name = 1.0
    static let camera = 0.5

    /// The assets (`pk`) one term matches with their best weight (`w`); the term is the FTS5
    /// query bound at `?parameter`. Assets in Recently Deleted may be among them (the plan's
    /// condition leaves them out).
    static func matches(parameter n: Int) -> String {
        let term = "?\(n)"
        let places = "SELECT rowid FROM place_words WHERE place_words MATCH \(term)"
        return """
            SELECT pk, max(w) AS w FROM (
                SELECT rowid AS pk, \(name) AS w FROM asset_words WHERE asset_words MATCH '{name} : ' || \(term)
                UNION ALL SELECT rowid, \(subject) FROM asset_words WHERE asset_words MATCH '{keywords} : ' || \(term)
                UNION ALL SELECT rowid, \(camera) FROM asset_words WHERE asset_words MATCH '{camera} : ' || \(term)
                UNION ALL SELECT a.pk, \(name) FROM assets a
                    WHERE a.directory_id IN (SELECT rowid FROM folder_words WHERE folder_words MATCH \(term))
                UNION ALL SELECT a.pk, \(subject) FROM assets a WHERE a.place_id IN (\(places))
                    AND a.place_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL
                UNION ALL SELECT a.pk, \(subject) FROM assets a WHERE (a.is_hidden != 0 OR a.deleted_at IS NOT NULL)
                    AND a.place_id IN (\(places))
                UNION ALL SELECT a.pk, \(subject) FROM asset_keywords k JOIN assets a ON a.id = k.asset_id
                    WHERE k.keyword IN (SELECT keyword FROM keyword_words WHERE keyword_words MATCH \(term))
                UNION ALL SELECT a.pk, \(subject) FROM user_album_assets m JOIN assets a ON a.id = m.asset_id
                    WHERE m.album_id IN (SELECT id FROM album_words WHERE album_words MATCH \(term))
            ) GROUP BY pk
            """
    }
}
