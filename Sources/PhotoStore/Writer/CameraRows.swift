import PhotoModel

/// The writer's part for `cameras`: the row of each make, model and lens assets were taken
/// with (absent parts as ""), made the first time an asset has it and never changed after.
/// A camera's words are a search group as a place's are (migration 021).
final class CameraRows {
    /// A camera as `cameras` keys it.
    struct Key: Hashable {
        var make: String
        var model: String
        var lens: String

        /// Nil when the fields name no part of a camera.
        init?(_ media: MediaFields) {
            guard media.make != nil || media.model != nil || media.lensModel != nil else { return nil }
            make = media.make ?? ""
            model = media.model ?? ""
            lens = media.lensModel ?? ""
        }

        init(make: String, model: String, lens: String) {
            self.make = make
            self.model = model
            self.lens = lens
        }
    }

    let db: Connection
    /// Camera ids by key, loaded on first use: a library has a few dozen cameras.
    private var ids: [Key: Int64]?
    /// The camera asked last: a folder's files are mostly of one.
    private var last: (key: Key, id: Int64)?
    private var insertStatement: Statement?

    init(_ db: Connection) {
        self.db = db
    }

    /// The id of the camera of an asset's fields, its row made if it is new; nil for none.
    func id(of media: MediaFields) throws(StoreError) -> Int64? {
        guard let key = Key(media) else { return nil }
        if let last, last.key == key { return last.id }
        if ids == nil { try load() }
        if let id = ids?[key] {
            last = (key, id)
            return id
        }
        let s = try db.statement(&insertStatement, "INSERT INTO cameras (make, model, lens_model) VALUES (:make, :model, :lens)")
        s.bind(":make", to: key.make)
        s.bind(":model", to: key.model)
        s.bind(":lens", to: key.lens)
        try s.run()
        let id = db.lastInsertRowID
        ids?[key] = id
        last = (key, id)
        return id
    }

    /// Drops what is cached (after a rollback: SQLite reuses rolled-back rowids).
    func forget() {
        ids = nil
        last = nil
    }

    private func load() throws(StoreError) {
        let s = try db.statement("SELECT make, model, lens_model, id FROM cameras")
        defer { s.reset() }
        var map: [Key: Int64] = [:]
        while try s.step() { map[Key(make: s.string(0), model: s.string(1), lens: s.string(2))] = s.int64(3) }
        ids = map
    }
}
