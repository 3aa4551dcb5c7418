import PhotoModel
import PhotoSystem

/// Read-only queries on the index, on a pooled reader connection (never blocked by the writer).
public struct IndexReader {
    let db: Connection
    /// The database's recent fetch results, shared by its readers (nil for readers outside a
    /// `Database`'s pool: every fetch is read whole).
    let results: Locked<FetchResults>?

    init(_ db: Connection, results: Locked<FetchResults>? = nil) {
        self.db = db
        self.results = results
    }

    /// The underlying connection, for ad-hoc queries in tests and maintenance tools.
    public var connection: Connection { db }

    /// What the index holds for one directory, or `nil` when it has never been scanned.
    public func snapshot(of path: PathBytes) throws(StoreError) -> DirectorySnapshot? {
        let dir = try db.statement("SELECT id, mtime_ns, inode, fsid FROM directories WHERE path = :path")
        dir.bind(":path", to: path)
        guard try dir.step() else { return nil }
        let id = dir.int64(0)
        let mtime = dir.isNull(1) ? nil : dir.int64(1)
        let inode = dir.isNull(2) ? nil : UInt64(bitPattern: dir.int64(2))
        let fsid = dir.isNull(3) ? nil : UInt64(bitPattern: dir.int64(3))
        dir.reset()
        var files: [IndexedFile] = []
        let f = try db.statement("SELECT name, fsid, inode, size, mtime_ns, status, error_code FROM files WHERE directory_id = :directory ORDER BY name")
        f.bind(":directory", to: id)
        while try f.step() {
            let identity = FileIdentity(fsid: UInt64(bitPattern: f.int64(1)), inode: UInt64(bitPattern: f.int64(2)),
                                        size: f.int64(3), mtimeNanoseconds: f.int64(4))
            files.append(IndexedFile(name: f.bytes(0), identity: identity,
                                     status: FileStatus(rawValue: f.string(5)) ?? .error, errorCode: f.isNull(6) ? nil : f.string(6)))
        }
        var subdirectories: [[UInt8]] = []
        let d = try db.statement("SELECT name FROM directories WHERE parent_id = :parent ORDER BY name")
        d.bind(":parent", to: id)
        while try d.step() { subdirectories.append(d.bytes(0)) }
        return DirectorySnapshot(id: id, fsid: fsid, inode: inode, mtimeNanoseconds: mtime, files: files, subdirectories: subdirectories)
    }

    /// Runs several queries on one snapshot of the index (a page and its total agree).
    /// Nested calls join the outer snapshot.
    public func consistent<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        if db.isInTransaction { return try body() }
        return try db.transaction(immediate: false, body)
    }

    /// Counts for `library.status`, from the trigger-maintained counters: O(1).
    public func counts() throws(StoreError) -> LibraryCounts {
        var values: [String: Int] = [:]
        let s = try db.statement("SELECT name, value FROM counters")
        while try s.step() { values[s.string(0)] = s.int(1) }
        var c = LibraryCounts()
        // Assets in Recently Deleted are counted apart (few: through the partial index).
        var deleted: [String: Int] = [:]
        let d = try db.statement("""
            SELECT media_type, count(*) FROM assets
            WHERE (is_hidden != 0 OR deleted_at IS NOT NULL) AND deleted_at IS NOT NULL GROUP BY media_type
            """)
        while try d.step() { deleted[d.string(0)] = d.int(1) }
        c.images = (values["assets.image"] ?? 0) - (deleted["image"] ?? 0)
        c.videos = (values["assets.video"] ?? 0) - (deleted["video"] ?? 0)
        c.assets = c.images + c.videos
        c.recentlyDeleted = deleted.values.reduce(0, +)
        c.errors = values["files.error"] ?? 0
        c.ignored = values["files.ignored"] ?? 0
        c.sidecars = values["files.sidecar"] ?? 0
        c.files = (values["files.media"] ?? 0) + c.sidecars + c.errors + c.ignored
        c.directories = values["directories"] ?? 0
        return c
    }

    /// The same counts by scanning the tables: what the counters must always equal (the tests
    /// compare them after every kind of change).
    public func recount() throws(StoreError) -> LibraryCounts {
        // Single passes with sums: no GROUP BY, so no temporary b-tree in memory.
        var c = LibraryCounts()
        let a = try db.statement("""
            SELECT sum(media_type = 'image' AND deleted_at IS NULL), sum(media_type = 'video' AND deleted_at IS NULL),
                   sum(deleted_at IS NOT NULL) FROM assets
            """)
        if try a.step() {
            c.images = a.optionalInt(0) ?? 0
            c.videos = a.optionalInt(1) ?? 0
            c.recentlyDeleted = a.optionalInt(2) ?? 0
        }
        a.reset()
        c.assets = c.images + c.videos
        let f = try db.statement("""
            SELECT count(*), sum(status = 'sidecar'), sum(status = 'ignored'), sum(status = 'error') FROM files
            """)
        if try f.step() {
            c.files = f.int(0)
            c.sidecars = f.optionalInt(1) ?? 0
            c.ignored = f.optionalInt(2) ?? 0
            c.errors = f.optionalInt(3) ?? 0
        }
        f.reset()
        c.directories = Int(try db.scalar("SELECT count(*) FROM directories").int64 ?? 0)
        return c
    }

    /// Assets in Recently Deleted by media type.
    public func deletedByType() throws(StoreError) -> [String: Int] {
        var deleted: [String: Int] = [:]
        let d = try db.statement("""
            SELECT media_type, count(*) FROM assets
            WHERE (is_hidden != 0 OR deleted_at IS NOT NULL) AND deleted_at IS NOT NULL GROUP BY media_type
            """)
        while try d.step() { deleted[d.string(0)] = d.int(1) }
        return deleted
    }

    /// The number of assets (O(1)).
    public func assetCount() throws(StoreError) -> Int { try counts().assets }

    /// The number of visible assets (neither hidden nor in Recently Deleted): the counted ones
    /// (Recently Deleted left out) minus the few hidden ones, through the partial index.
    public func visibleAssetCount() throws(StoreError) -> Int {
        let hidden = Int(try db.scalar("""
            SELECT count(*) FROM assets WHERE (is_hidden != 0 OR deleted_at IS NOT NULL) AND deleted_at IS NULL
            """).int64 ?? 0)
        return try assetCount() - hidden
    }

    /// The number of files with a per-file error (O(1)).
    public func fileIssueCount() throws(StoreError) -> Int { try counts().errors }

    /// A page of visible assets (neither hidden nor in Recently Deleted) in the default order:
    /// capture time on the capture clock, then path bytes. Each carries its resources.
    public func assets(limit: Int, offset: Int) throws(StoreError) -> [Asset] {
        let s = try db.statement("""
            SELECT \(AssetColumns.select) FROM assets a WHERE a.is_hidden = 0 AND a.deleted_at IS NULL
            ORDER BY \(AssetColumns.captureOrder) LIMIT :limit OFFSET :offset
            """)
        s.bind(":limit", to: limit)
        s.bind(":offset", to: offset)
        let rows = try AssetColumns.decodeAll(s)
        return try attachResources(rows)
    }

    /// One asset by id.
    public func asset(id: AssetID) throws(StoreError) -> Asset? {
        let s = try db.statement("SELECT \(AssetColumns.select) FROM assets a WHERE a.id = :id")
        defer { s.reset() }
        s.bind(":id", to: id.rawValue)
        guard try s.step() else { return nil }
        guard let row = AssetColumns.decode(s) else { throw StoreError.undecodable(table: "assets", key: id.rawValue) }
        return try attachResources([row]).first
    }

    /// The assets of `ids` that are in the library: not in Recently Deleted, and hidden ones only
    /// with `includeHidden` (PhotoKit's `fetchAssets(withLocalIdentifiers:)`). In no order.
    public func assets(ids: [AssetID], includeHidden: Bool) throws(StoreError) -> [Asset] {
        guard !ids.isEmpty else { return [] }
        let s = try db.statement("""
            SELECT \(AssetColumns.select) FROM assets a WHERE a.id IN (SELECT value FROM json_each(:ids))
            AND a.deleted_at IS NULL AND (a.is_hidden = 0 OR :hidden = 1)
            """)
        // Asset ids are [a-z0-9_]: nothing to escape in the JSON array.
        s.bind(":ids", to: "[" + ids.map { "\"\($0.rawValue)\"" }.joined(separator: ",") + "]")
        s.bind(":hidden", to: includeHidden ? 1 : 0)
        return try attachResources(try AssetColumns.decodeAll(s))
    }

    func attachResources(_ rows: [(pk: Int64, asset: Asset)]) throws(StoreError) -> [Asset] {
        guard !rows.isEmpty else { return [] }
        var byPK: [Int64: [Resource]] = [:]
        let s = try db.statement("""
            SELECT f.asset_pk, d.path, f.name, f.role FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE f.asset_pk IN (SELECT value FROM json_each(:pks))
            """)
        s.bind(":pks", to: "[" + rows.map { String($0.pk) }.joined(separator: ",") + "]")
        while try s.step() {
            let role = Resource.Role(rawValue: s.string(3)) ?? .primary
            byPK[s.int64(0), default: []].append(Resource(path: PathBytes(s.bytes(1)).appending(s.bytes(2)), role: role))
        }
        // Taggers' keywords join the files' own (once each, whatever the case).
        var tagged: [String: [String]] = [:]
        let k = try db.statement("""
            SELECT asset_id, keyword FROM asset_keywords WHERE asset_id IN (SELECT value FROM json_each(:ids))
            ORDER BY asset_id, source, keyword
            """)
        k.bind(":ids", to: IndexWriter.jsonArray(rows.map(\.asset.id.rawValue)))
        while try k.step() { tagged[k.string(0), default: []].append(k.string(1)) }
        return rows.map { row in
            var asset = row.asset
            for word in tagged[asset.id.rawValue] ?? [] where !asset.keywords.contains(where: { Keywords.same($0, word) }) {
                asset.keywords.append(word)
            }
            let order = Resource.Role.allCases
            asset.resources = (byPK[row.pk] ?? []).sorted {
                (order.firstIndex(of: $0.role)!, $0.path) < (order.firstIndex(of: $1.role)!, $1.path)
            }
            return asset
        }
    }

    /// Files that could not be indexed, with their reasons, in path order.
    public func fileIssues(limit: Int, offset: Int = 0) throws(StoreError) -> [FileIssue] {
        let s = try db.statement("""
            SELECT d.path, f.name, f.error_code, f.error_message FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE f.status = 'error' ORDER BY d.path, f.name LIMIT :limit OFFSET :offset
            """)
        s.bind(":limit", to: limit)
        s.bind(":offset", to: offset)
        var issues: [FileIssue] = []
        while try s.step() {
            issues.append(FileIssue(path: PathBytes(s.bytes(0)).appending(s.bytes(1)), code: s.optionalString(2) ?? "error",
                                    message: s.optionalString(3) ?? ""))
        }
        return issues
    }

    /// Assets per root, by root path (for roots the daemon is no longer configured with).
    public func assetCountsByRoot() throws(StoreError) -> [PathBytes: Int] {
        // Kept counters include Recently Deleted; those few come off through the partial index.
        let s = try db.statement("""
            SELECT r.path, coalesce(c.value, 0) - (SELECT count(*) FROM assets a
                WHERE (a.is_hidden != 0 OR a.deleted_at IS NOT NULL) AND a.deleted_at IS NOT NULL AND a.root_id = r.id)
            FROM roots r LEFT JOIN counters c ON c.name = 'root.' || r.id || '.assets'
            """)
        var result: [PathBytes: Int] = [:]
        while try s.step() {
            if s.int(1) != 0 { result[PathBytes(s.bytes(0))] = s.int(1) }
        }
        return result
    }

    /// The kept per-root counters by root id (Recently Deleted included).
    public func rootCounters() throws(StoreError) -> [Int64: Int] {
        let s = try db.statement("SELECT name, value FROM counters WHERE name LIKE 'root.%'")
        var result: [Int64: Int] = [:]
        while try s.step() {
            let parts = s.string(0).split(separator: ".")
            if parts.count == 3, let id = Int64(parts[1]) { result[id] = s.int(1) }
        }
        return result
    }

    /// Assets per root by scanning (what the per-root counters must equal).
    public func recountByRoot() throws(StoreError) -> [Int64: Int] {
        // One pass over the assets (every asset carries its root): what the kept counters hold.
        let s = try db.statement("SELECT root_id, count(*) FROM assets GROUP BY root_id")
        var result: [Int64: Int] = [:]
        while try s.step() { result[s.int64(0)] = s.int(1) }
        return result
    }

    /// What the index holds for one file, or `nil` when it does not know it.
    public func file(at path: PathBytes) throws(StoreError) -> IndexedFile? {
        let s = try db.statement("""
            SELECT f.name, f.fsid, f.inode, f.size, f.mtime_ns, f.status, f.error_code FROM files f
            JOIN directories d ON d.id = f.directory_id WHERE d.path = :directory AND f.name = :name
            """)
        defer { s.reset() }
        s.bind(":directory", to: path.parent)
        s.bind(":name", to: path.lastComponent)
        guard try s.step() else { return nil }
        let identity = FileIdentity(fsid: UInt64(bitPattern: s.int64(1)), inode: UInt64(bitPattern: s.int64(2)),
                                    size: s.int64(3), mtimeNanoseconds: s.int64(4))
        return IndexedFile(name: s.bytes(0), identity: identity, status: FileStatus(rawValue: s.string(5)) ?? .error,
                           errorCode: s.isNull(6) ? nil : s.string(6))
    }

    /// The content (size, fingerprint) and identity of the asset files at `files` and below
    /// `directories`: what a removal is about to send to Recently Deleted.
    public func contents(files: [PathBytes], directories: [PathBytes]) throws(StoreError) -> [IndexedContent] {
        var keys: [IndexedContent] = []
        func content(_ s: Statement) -> IndexedContent {
            IndexedContent(key: ContentKey(size: s.int64(0), fingerprint: UInt64(bitPattern: s.int64(1))),
                           identity: FileIdentity(fsid: UInt64(bitPattern: s.int64(2)), inode: UInt64(bitPattern: s.int64(3)),
                                                  size: s.int64(0), mtimeNanoseconds: s.int64(4)))
        }
        let one = try db.statement("""
            SELECT f.size, f.fingerprint, f.fsid, f.inode, f.mtime_ns FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE d.path = :directory AND f.name = :name AND f.asset_pk IS NOT NULL AND f.fingerprint IS NOT NULL
            """)
        for path in files {
            one.bind(":directory", to: path.parent)
            one.bind(":name", to: path.lastComponent)
            if try one.step() { keys.append(content(one)) }
            one.reset()
        }
        let tree = try db.statement("""
            SELECT f.size, f.fingerprint, f.fsid, f.inode, f.mtime_ns FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE (d.path = :directory OR (d.path >= :lower AND d.path < :upper)) AND f.asset_pk IS NOT NULL AND f.fingerprint IS NOT NULL
            """)
        for dir in directories {
            tree.bind(":directory", to: dir)
            tree.bind(":lower", to: dir.bytes + [UInt8(ascii: "/")])
            tree.bind(":upper", to: dir.bytes + [UInt8(ascii: "0")])
            while try tree.step() { keys.append(content(tree)) }
            tree.reset()
        }
        return keys
    }

    /// The indexed files of one group (a directory's files sharing a base name,
    /// `ResourcePairing.groupKey`).
    public func group(directory: PathBytes, key: [UInt8]) throws(StoreError) -> [IndexedFile] {
        let s = try db.statement("""
            SELECT f.name, f.fsid, f.inode, f.size, f.mtime_ns, f.status, f.error_code FROM files f
            JOIN directories d ON d.id = f.directory_id
            WHERE d.path = :directory AND f.name >= :groupKey AND f.name < :groupEnd
            """)
        defer { s.reset() }
        s.bind(":directory", to: directory)
        s.bind(":groupKey", to: key)
        s.bind(":groupEnd", to: ResourcePairing.groupNamesEnd(key))
        var files: [IndexedFile] = []
        while try s.step() {
            let name = s.bytes(0)
            guard ResourcePairing.groupKey(of: name) == key else { continue }
            let identity = FileIdentity(fsid: UInt64(bitPattern: s.int64(1)), inode: UInt64(bitPattern: s.int64(2)),
                                        size: s.int64(3), mtimeNanoseconds: s.int64(4))
            files.append(IndexedFile(name: name, identity: identity, status: FileStatus(rawValue: s.string(5)) ?? .error,
                                     errorCode: s.isNull(6) ? nil : s.string(6)))
        }
        return files
    }

    /// Whether the index knows a directory.
    public func hasDirectory(_ path: PathBytes) throws(StoreError) -> Bool {
        try db.scalar("SELECT 1 FROM directories WHERE path = ?1", .blob(path.bytes)).int64 != nil
    }

    /// The inodes of the indexed directories directly below the directory with row id `parent`.
    public func subdirectoryInodes(parent: Int64) throws(StoreError) -> Set<UInt64> {
        let s = try db.statement("SELECT inode FROM directories WHERE parent_id = :parent AND inode IS NOT NULL")
        s.bind(":parent", to: parent)
        var result = Set<UInt64>()
        while try s.step() { result.insert(UInt64(bitPattern: s.int64(0))) }
        return result
    }

    /// Indexed directories with this identity (a moved directory keeps its inode).
    public func directories(fsid: UInt64, inode: UInt64) throws(StoreError) -> [PathBytes] {
        let s = try db.statement("SELECT path FROM directories WHERE fsid = :fsid AND inode = :inode")
        s.bind(":fsid", to: Int64(bitPattern: fsid))
        s.bind(":inode", to: Int64(bitPattern: inode))
        var result: [PathBytes] = []
        while try s.step() { result.append(PathBytes(s.bytes(0))) }
        return result
    }

    /// Indexed files with this identity (fsid, inode, size, mtime).
    public func files(identity: FileIdentity) throws(StoreError) -> [PathBytes] {
        let s = try db.statement("""
            SELECT d.path, f.name FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE f.fsid = :fsid AND f.inode = :inode AND f.size = :size AND f.mtime_ns = :mtime
            """)
        s.bind(":fsid", to: Int64(bitPattern: identity.fsid))
        s.bind(":inode", to: Int64(bitPattern: identity.inode))
        s.bind(":size", to: identity.size)
        s.bind(":mtime", to: identity.mtimeNanoseconds)
        var result: [PathBytes] = []
        while try s.step() { result.append(PathBytes(s.bytes(0)).appending(s.bytes(1))) }
        return result
    }

    /// Where the file `path` of asset `id`, in Recently Deleted by `assets.trash`, is now: its
    /// hidden name beside it; nil for any other asset or file.
    public func trashedPath(of id: AssetID, at path: PathBytes) throws(StoreError) -> PathBytes? {
        let s = try db.statement("""
            SELECT t.trashed_name FROM tombstones t JOIN assets a ON a.pk = t.asset_pk
            WHERE a.id = :id AND a.deleted_at IS NOT NULL AND t.directory_path = :directory AND t.name = :name
              AND t.trashed_name IS NOT NULL LIMIT 1
            """)
        s.bind(":id", to: id.rawValue)
        s.bind(":directory", to: path.parent)
        s.bind(":name", to: path.lastComponent)
        defer { s.reset() }
        return try s.step() ? path.parent.appending(s.bytes(0)) : nil
    }

    /// The trashed names (`assets.trash`) the tombstones record in `directory`.
    public func trashedNames(in directory: PathBytes) throws(StoreError) -> Set<[UInt8]> {
        let s = try db.statement("SELECT trashed_name FROM tombstones WHERE directory_path = :directory AND trashed_name IS NOT NULL")
        s.bind(":directory", to: directory)
        defer { s.reset() }
        var out = Set<[UInt8]>()
        while try s.step() { out.insert(s.bytes(0)) }
        return out
    }

    /// A tombstone of an asset still in Recently Deleted for this identity.
    public func tombstone(identity: FileIdentity) throws(StoreError) -> Int64? {
        let s = try db.statement("""
            SELECT t.pk FROM tombstones t JOIN assets a ON a.pk = t.asset_pk AND a.deleted_at IS NOT NULL
            WHERE t.fsid = :fsid AND t.inode = :inode AND t.size = :size AND t.mtime_ns = :mtime LIMIT 1
            """)
        defer { s.reset() }
        s.bind(":fsid", to: Int64(bitPattern: identity.fsid))
        s.bind(":inode", to: Int64(bitPattern: identity.inode))
        s.bind(":size", to: identity.size)
        s.bind(":mtime", to: identity.mtimeNanoseconds)
        return try s.step() ? s.int64(0) : nil
    }

    /// The roots the database knows, with their ids.
    public func roots() throws(StoreError) -> [(id: Int64, path: PathBytes)] {
        let s = try db.statement("SELECT id, path FROM roots ORDER BY path")
        var result: [(Int64, PathBytes)] = []
        while try s.step() { result.append((s.int64(0), PathBytes(s.bytes(1)))) }
        return result
    }
}
