import PhotoModel

extension IndexReader {
    /// Every place with visible assets, with their count and span: one pass over the partial
    /// index `assets_place` (place, capture time).
    public func placeTallies() throws(StoreError) -> [PlaceTally] {
        let s = try db.statement("""
            SELECT t.place_id, p.key, t.n, t.first, t.last FROM (
                SELECT a.place_id AS place_id, count(*) AS n, min(a.local_datetime) AS first, max(a.local_datetime) AS last
                FROM assets a WHERE a.place_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL
                GROUP BY a.place_id) t
            JOIN places p ON p.id = t.place_id
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
