import PhotoModel

/// The writer's part for `asset_search`: each asset a job touched gets its words again (or
/// none, gone or in Recently Deleted), in the job's transaction, so a change set and the search
/// never disagree.
final class SearchRows {
    let db: Connection
    private var deleteStatement: Statement?
    private var readStatement: Statement?
    private var keywordsStatement: Statement?
    private var insertStatement: Statement?
    /// Root paths by id (a library has a few).
    private var roots: [Int64: PathBytes]?

    init(_ db: Connection) { self.db = db }

    /// Writes the words of the assets `pks` as they are now.
    func update(_ pks: some Sequence<Int64>) throws(StoreError) {
        let delete = try db.statement(&deleteStatement, "DELETE FROM asset_search WHERE rowid = :pk")
        let read = try db.statement(&readStatement, """
            SELECT a.path, a.root_id, a.keywords, (SELECT p.key FROM places p WHERE p.id = a.place_id), a.make, a.model,
                   a.lens_model, a.id
            FROM assets a WHERE a.pk = :pk AND a.deleted_at IS NULL
            """)
        let taggers = try db.statement(&keywordsStatement, "SELECT keyword FROM asset_keywords WHERE asset_id = :id")
        let insert = try db.statement(&insertStatement, """
            INSERT INTO asset_search (rowid, name, folders, keywords, place, camera)
            VALUES (:pk, :name, :folders, :keywords, :place, :camera)
            """)
        for pk in pks {
            delete.bind(":pk", to: pk)
            try delete.run()
            read.bind(":pk", to: pk)
            guard try read.step() else { read.reset(); continue }
            var keywords = Keywords.decode(read.optionalString(2))
            taggers.bind(":id", to: read.string(7))
            while try taggers.step() { keywords.append(taggers.string(0)) }
            taggers.reset()
            let text = SearchText(path: PathBytes(read.bytes(0)), root: try root(read.int64(1)), keywords: keywords,
                                  place: read.optionalString(3).flatMap(Place.init(encoded:)), make: read.optionalString(4),
                                  model: read.optionalString(5), lens: read.optionalString(6))
            read.reset()
            insert.bind(":pk", to: pk)
            insert.bind(":name", to: text.name)
            insert.bind(":folders", to: text.folders)
            insert.bind(":keywords", to: text.keywords)
            insert.bind(":place", to: text.place)
            insert.bind(":camera", to: text.camera)
            try insert.run()
        }
    }

    /// Every asset's words from scratch (a database from before search: once, when opened).
    func rebuild() throws(StoreError) {
        try db.execute("DELETE FROM asset_search")
        let s = try db.statement("SELECT pk FROM assets WHERE deleted_at IS NULL")
        var pks: [Int64] = []
        while try s.step() { pks.append(s.int64(0)) }
        s.reset()
        try update(pks)
    }

    /// Forgets the cached roots (after a rollback).
    func forget() { roots = nil }

    private func root(_ id: Int64) throws(StoreError) -> PathBytes? {
        if roots == nil {
            let s = try db.statement("SELECT id, path FROM roots")
            var map: [Int64: PathBytes] = [:]
            while try s.step() { map[s.int64(0)] = PathBytes(s.bytes(1)) }
            s.reset()
            roots = map
        }
        if let known = roots?[id] { return known }
        roots = nil  // a root registered since
        return nil
    }
}
