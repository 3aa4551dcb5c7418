import PhotoModel

extension IndexReader {
    /// Every place with visible assets, with their count (kept in `place_counts`) and span
    /// (the first and last entry of the place in the partial index `assets_place`).
    public func placeTallies() throws(StoreError) -> [PlaceTally] {
        let visible = "a.place_id = c.place_id AND a.place_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL"
        let s = try db.statement("""
            SELECT c.place_id, p.key, c.assets,
                   (SELECT min(a.local_datetime) FROM assets a WHERE \(visible)),
                   (SELECT max(a.local_datetime) FROM assets a WHERE \(visible))
            FROM place_counts c JOIN places p ON p.id = c.place_id WHERE c.assets > 0
            """)
        defer { s.reset() }
        var tallies: [PlaceTally] = []
        while try s.step() {
            guard let place = Place(encoded: s.string(1)), let first = LocalDateTime(iso: s.string(3)),
                  let last = LocalDateTime(iso: s.string(4)) else { throw StoreError.undecodable(table: "places", key: String(s.int64(0))) }
            tallies.append(PlaceTally(row: s.int64(0), place: place, count: s.int(2), start: first, end: last))
        }
        return tallies
    }

    /// Places as collections (`PlaceTree`), each with its three newest visible assets.
    public func placeTree() throws(StoreError) -> [PlaceNode] {
        let tree = PlaceTree.build(try placeTallies())
        let newest = try db.statement("""
            SELECT a.id, a.local_datetime FROM assets a
            WHERE a.place_id = :row AND a.place_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL
            ORDER BY a.local_datetime DESC LIMIT 3
            """)
        var byRow: [Int64: [(id: AssetID, local: String)]] = [:]
        func keys(_ node: PlaceNode) throws(StoreError) -> PlaceNode {
            var node = node
            var candidates: [(id: AssetID, local: String)] = []
            for row in node.rows {
                if byRow[row] == nil {
                    newest.bind(":row", to: row)
                    var found: [(AssetID, String)] = []
                    while try newest.step() {
                        if let id = AssetID(rawValue: newest.string(0)) { found.append((id, newest.string(1))) }
                    }
                    newest.reset()
                    byRow[row] = found
                }
                candidates += byRow[row]!
            }
            node.keyAssetIDs = candidates.sorted { $0.local > $1.local }.prefix(3).map(\.id)
            var children: [PlaceNode] = []
            for child in node.children { children.append(try keys(child)) }
            node.children = children
            return node
        }
        var result: [PlaceNode] = []
        for country in tree { result.append(try keys(country)) }
        return result
    }

    /// The place rows a place id covers (none for an unknown id): the tree of every place row,
    /// so that an id means here what it means in `places.fetch`.
    func placeRows(of id: String) throws(StoreError) -> [Int64] {
        guard id.hasPrefix("pl_") else { return [] }
        let s = try db.statement("SELECT id, key FROM places")
        defer { s.reset() }
        var all: [PlaceTally] = []
        let epoch = LocalDateTime(year: 1970, month: 1, day: 1)!
        while try s.step() {
            if let p = Place(encoded: s.string(1)) { all.append(PlaceTally(row: s.int64(0), place: p, count: 0, start: epoch, end: epoch)) }
        }
        return PlaceTree.flatten(PlaceTree.build(all)).first { $0.id == id }?.rows ?? []
    }
}

/// What `collections.search` finds (`IndexReader.collectionMatches`): every word or phrase of
/// the query in one collection's own text.
public struct CollectionMatches: Sendable, Hashable {
    /// Folder albums (ids) whose path below their root has the words, most assets first.
    public var folderAlbums: [String] = []
    /// User albums (ids) whose title has them.
    public var userAlbums: [String] = []
    /// Moments (days) whose title or cities have them, newest first.
    public var momentDays: [Int] = []
    /// The place rows whose names have them, in any of their names.
    public var placeRows: Set<Int64> = []
    /// The place rows whose name of that kind has them all (a city's: its city, sub-location or
    /// the place it is near).
    public var placeRowsByName: [PlaceNode.Kind: Set<Int64>] = [:]
}

extension IndexReader {
    /// The collections whose own words hold every term of `text` (the search word lists of
    /// migration 012), at most `limit` of each kind but places.
    public func collectionMatches(_ text: SearchQuery, limit: Int) throws(StoreError) -> CollectionMatches {
        let match = text.ftsMatch
        func values<T>(_ sql: String, _ read: (Statement) -> T) throws(StoreError) -> [T] {
            let s = try db.statement(sql)
            defer { s.reset() }
            s.bind(":match", to: match)
            if sql.contains(":limit") { s.bind(":limit", to: limit) }
            var out: [T] = []
            while try s.step() { out.append(read(s)) }
            return out
        }
        var found = CollectionMatches()
        found.folderAlbums = try values("""
            SELECT album_id FROM directories WHERE asset_count > 0
              AND id IN (SELECT rowid FROM folder_words WHERE folder_words MATCH :match)
            ORDER BY asset_count DESC, path LIMIT :limit
            """) { $0.string(0) }
        found.userAlbums = try values("SELECT id FROM album_words WHERE album_words MATCH :match LIMIT :limit") { $0.string(0) }
        found.momentDays = try values("""
            SELECT rowid FROM moment_words WHERE moment_words MATCH :match ORDER BY rowid DESC LIMIT :limit
            """) { $0.int(0) }
        found.placeRows = Set(try values("SELECT rowid FROM place_words WHERE place_words MATCH :match") { $0.int64(0) })
        guard !found.placeRows.isEmpty else { return found }
        for (kind, columns) in [(PlaceNode.Kind.city, "city sub_location near"), (.region, "region"), (.country, "country")] {
            let s = try db.statement("SELECT rowid FROM place_words WHERE place_words MATCH :match")
            s.bind(":match", to: "{\(columns)} : (\(match))")
            var rows = Set<Int64>()
            while try s.step() { rows.insert(s.int64(0)) }
            s.reset()
            found.placeRowsByName[kind] = rows
        }
        return found
    }
}

extension PlaceNode {
    /// The places a search names (`CollectionMatches`): those whose own name has every word
    /// ("zurich": the city, and the region of that name), most assets first by kind, countries
    /// first; when no name has them all but a place's names together do ("lisbon portugal"),
    /// the topmost places all of whose rows match.
    public static func named(by found: CollectionMatches, in tree: [PlaceNode]) -> [PlaceNode] {
        var byName: [PlaceNode] = []
        func walk(_ nodes: [PlaceNode]) {
            for node in nodes {
                if let rows = found.placeRowsByName[node.kind], node.rows.contains(where: rows.contains) { byName.append(node) }
                walk(node.children)
            }
        }
        walk(tree)
        let order: [Kind] = [.country, .region, .city]
        if !byName.isEmpty {
            return order.flatMap { kind in byName.filter { $0.kind == kind }.sorted { $0.assetCount > $1.assetCount } }
        }
        return covered(by: found.placeRows, in: tree)
    }

    /// The topmost places all of whose place rows are in `rows`.
    static func covered(by rows: Set<Int64>, in tree: [PlaceNode]) -> [PlaceNode] {
        tree.flatMap { node -> [PlaceNode] in
            if !node.rows.isEmpty, node.rows.allSatisfy(rows.contains) { return [node] }
            return covered(by: rows, in: node.children)
        }
    }
}
