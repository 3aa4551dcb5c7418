import PhotoModel

/// The writer's part for `directories` rows: the library roots, a directory's row (created
/// with its parents on first use), its identity, the removal of a subtree's rows, and the
/// caches that spare a lookup per file.
final class Directories {
    let db: Connection
    /// The library roots, by path.
    private(set) var roots: [(path: PathBytes, id: Int64)] = []
    /// Directory path → its row. Bounded: cleared when it grows past `cacheLimit`, when
    /// directories move, and after a rollback (SQLite reuses the rowids of rolled-back rows).
    private var rows: [PathBytes: Row] = [:]
    /// Directory id → root id.
    private var rootIDs: [Int64: Int64] = [:]
    /// The row asked for last: a batch's files come directory by directory, so most lookups
    /// are this one (compared, not hashed).
    private var last: Row?
    static let cacheLimit = 20_000

    struct Row {
        var id: Int64
        var root: Int64
        var path: PathBytes
    }

    /// Knows the roots the index has from the start (a scan registers new ones).
    init(_ db: Connection) {
        self.db = db
        _ = try? loadRoots()
    }

    /// Forgets every cached row (after a rollback, a move or a removal of directories).
    func forget() {
        last = nil
        rows.removeAll(keepingCapacity: true)
        rootIDs.removeAll(keepingCapacity: true)
    }

    /// Records the library roots (creates rows for new ones). Returns root ids by path.
    func register(_ paths: [PathBytes]) throws(StoreError) -> [PathBytes: Int64] {
        try db.transaction { () throws(StoreError) in
            let insert = try db.statement("INSERT INTO roots (path) VALUES (:path) ON CONFLICT (path) DO NOTHING")
            for p in paths {
                insert.bind(":path", to: p)
                try insert.run()
            }
        }
        return try loadRoots()
    }

    /// Reads the roots into `roots`; returns their ids by path.
    private func loadRoots() throws(StoreError) -> [PathBytes: Int64] {
        let s = try db.statement("SELECT id, path FROM roots")
        defer { s.reset() }
        var result: [PathBytes: Int64] = [:]
        roots = []
        while try s.step() {
            let path = PathBytes(s.bytes(1))
            result[path] = s.int64(0)
            roots.append((path, s.int64(0)))
        }
        return result
    }

    /// The innermost root `path` lies in.
    func root(for path: PathBytes) -> Int64? {
        roots.filter { path.isWithin($0.path) }.max { $0.path.bytes.count < $1.path.bytes.count }?.id
    }

    /// The root a directory row belongs to (from the cache when it is there).
    func rootID(ofDirectory id: Int64) throws(StoreError) -> Int64 {
        if let cached = rootIDs[id] { return cached }
        let root = try db.scalar("SELECT root_id FROM directories WHERE id = ?1", .integer(id)).int64 ?? 0
        rootIDs[id] = root
        return root
    }

    /// The row of a directory, creating it (and its parents up to the root) when missing.
    /// A loop, not a recursion: a library may nest folders thousands deep.
    func row(_ path: PathBytes, _ job: WriteJob) throws(StoreError) -> Row {
        if let last, last.path == path { return last }
        // Up from `path` to the nearest directory that has a row (or past the root), then the
        // missing ones created top down, each under the one before.
        var missing: [PathBytes] = []
        var parent: Row?
        var cursor = path
        while true {
            if let known = try lookup(cursor) {
                parent = known
                break
            }
            guard root(for: cursor) != nil else {
                throw StoreError(code: .constraint, message: "directory '\(path)' is not inside any library root")
            }
            missing.append(cursor)
            if roots.contains(where: { $0.path == cursor }) { break }
            cursor = cursor.parent
        }
        for p in missing.reversed() { parent = try insert(p, parent: parent?.id, job) }
        return parent!
    }

    /// The row of `path` when it has one (the cache first).
    private func lookup(_ path: PathBytes) throws(StoreError) -> Row? {
        if let last, last.path == path { return last }
        if let hit = rows[path] {
            last = hit
            return hit
        }
        let find = try db.statement("SELECT id, root_id FROM directories WHERE path = :path")
        defer { find.reset() }
        find.bind(":path", to: path)
        guard try find.step() else { return nil }
        let found = Row(id: find.int64(0), root: find.int64(1), path: path)
        remember(found)
        return found
    }

    /// Creates the row of `path` under `parent` (nil for a root).
    private func insert(_ path: PathBytes, parent: Int64?, _ job: WriteJob) throws(StoreError) -> Row {
        guard let rootID = root(for: path) else {
            throw StoreError(code: .constraint, message: "directory '\(path)' is not inside any library root")
        }
        let insert = try db.statement("""
            INSERT INTO directories (root_id, parent_id, path, name, album_id) VALUES (:root, :parent, :path, :name, :album)
            """)
        insert.bind(":root", to: rootID)
        insert.bind(":parent", to: parent)
        insert.bind(":path", to: path)
        insert.bind(":name", to: path.lastComponent)
        insert.bind(":album", to: try newAlbumID(for: path))
        try insert.run()
        job.count("directories", 1)
        let created = Row(id: db.lastInsertRowID, root: rootID, path: path)
        if rootIDs.count >= Self.cacheLimit { rootIDs.removeAll(keepingCapacity: true) }
        rootIDs[created.id] = rootID
        remember(created)
        return created
    }

    /// The id of an indexed directory, or nil (never creates one).
    func existing(_ path: PathBytes) throws(StoreError) -> Int64? {
        try db.scalar("SELECT id FROM directories WHERE path = ?1", .blob(path.bytes)).int64
    }

    /// A folder album's id: `f_` and a hash of its path, so that a rebuilt index gives the same
    /// folder the same id; a random one when a moved folder already carries that id.
    private func newAlbumID(for path: PathBytes) throws(StoreError) -> String {
        let derived = "f_" + FolderTree.listID(path: path).dropFirst(2)
        let taken = try db.statement("SELECT 1 FROM directories WHERE album_id = :album")
        defer { taken.reset() }
        taken.bind(":album", to: derived)
        guard try taken.step() else { return derived }
        var g = SystemRandomNumberGenerator()
        return "f_" + String(UInt64.random(in: 0 ... .max, using: &g), radix: 32)
    }

    private func remember(_ row: Row) {
        if rows.count >= Self.cacheLimit { rows.removeAll(keepingCapacity: true) }
        rows[row.path] = row
        last = row
    }

    /// Records what identifies a visited directory (its mtime lets later scans skip it).
    func update(_ visit: DirectoryVisit, _ job: WriteJob) throws(StoreError) {
        let id = try row(visit.path, job).id
        let s = try db.statement("UPDATE directories SET fsid = :fsid, inode = :inode, mtime_ns = :mtime WHERE id = :id")
        s.bind(":fsid", to: Int64(bitPattern: visit.fsid))
        s.bind(":inode", to: Int64(bitPattern: visit.inode))
        s.bind(":mtime", to: visit.mtimeNanoseconds)
        s.bind(":id", to: id)
        try s.run()
    }

    /// The SQL condition (on `directories`, parameters `:top`, `:lower`, `:upper`) of a
    /// directory and everything below it, with `bindSubtree` to bind it.
    static let subtree = "(path = :top OR (path >= :lower AND path < :upper))"

    static func bindSubtree(_ path: PathBytes, _ s: Statement) {
        s.bind(":top", to: path)
        s.bind(":lower", to: path.bytes + [UInt8(ascii: "/")])
        s.bind(":upper", to: path.bytes + [UInt8(ascii: "0")])  // '/' + 1: every "path/..." sorts below it
    }

    /// Whether a folder album lies strictly below `path`.
    func albumsBelow(_ path: PathBytes) throws(StoreError) -> Bool {
        let s = try db.statement("SELECT 1 FROM directories WHERE path >= :lower AND path < :upper AND asset_count > 0 LIMIT 1")
        defer { s.reset() }
        s.bind(":lower", to: path.bytes + [UInt8(ascii: "/")])
        s.bind(":upper", to: path.bytes + [UInt8(ascii: "0")])
        return try s.step()
    }
}
