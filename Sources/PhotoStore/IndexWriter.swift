import PhotoModel

/// The writer side of the index: the only code that changes it. Owned by `Database`'s writer
/// lock; every `apply` is one transaction.
public final class IndexWriter {
    let db: Connection
    /// Directory path → (id, root id). Bounded: cleared when it grows past `cacheLimit`.
    private var directoryCache: [PathBytes: (id: Int64, root: Int64)] = [:]
    private var roots: [(path: PathBytes, id: Int64)] = []
    private static let cacheLimit = 20_000

    init(_ db: Connection) { self.db = db }

    /// The underlying connection, for migrations' tests and maintenance.
    public var connection: Connection { db }

    /// Records the library roots (creates rows for new ones). Returns root ids by path.
    @discardableResult
    public func registerRoots(_ paths: [PathBytes]) throws -> [PathBytes: Int64] {
        try db.transaction {
            for p in paths {
                let s = try db.statement("INSERT INTO roots (path) VALUES (?1) ON CONFLICT (path) DO NOTHING")
                s.bind(p.bytes, at: 1)
                try s.run()
            }
        }
        let s = try db.statement("SELECT id, path FROM roots")
        var result: [PathBytes: Int64] = [:]
        roots = []
        while try s.step() {
            let path = PathBytes(s.bytes(1))
            result[path] = s.int64(0)
            roots.append((path, s.int64(0)))
        }
        return result
    }

    /// Writes one batch in one transaction and says what changed.
    public func apply(_ batch: WriteBatch, now: Int64) throws -> BatchSummary {
        do {
            return try applyInTransaction(batch, now: now)
        } catch {
            // The rollback undid the rows the cache may name (SQLite reuses their rowids).
            directoryCache.removeAll(keepingCapacity: true)
            throw error
        }
    }

    private func applyInTransaction(_ batch: WriteBatch, now: Int64) throws -> BatchSummary {
        try db.transaction {
            var summary = BatchSummary()
            var orphanCandidates: [Int64] = []
            for dir in batch.directories { try upsertDirectory(dir) }
            for path in batch.removedDirectories { orphanCandidates += try removeSubtree(path) }
            for (dir, name) in batch.removedFiles {
                if let removed = try removeFile(directory: dir, name: name) { orphanCandidates.append(removed) }
            }
            for file in batch.files { try write(file, now: now, summary: &summary, orphans: &orphanCandidates) }
            summary.deleted = try deleteOrphans(orphanCandidates)
            return summary
        }
    }

    // MARK: - Directories

    private func root(for path: PathBytes) -> Int64? {
        roots.filter { path.isWithin($0.path) }.max { $0.path.bytes.count < $1.path.bytes.count }?.id
    }

    /// The id of a directory row, creating it (and its parents up to the root) when missing.
    func directoryID(_ path: PathBytes) throws -> (id: Int64, root: Int64) {
        if let hit = directoryCache[path] { return hit }
        let find = try db.statement("SELECT id, root_id FROM directories WHERE path = ?1")
        find.bind(path.bytes, at: 1)
        if try find.step() {
            let found = (find.int64(0), find.int64(1))
            find.reset()
            remember(path, found)
            return found
        }
        guard let rootID = root(for: path) else {
            throw StoreError(code: .constraint, message: "directory '\(path)' is not inside any library root")
        }
        let isRoot = roots.contains { $0.path == path }
        let parent: Int64? = isRoot ? nil : try directoryID(path.parent).id
        let insert = try db.statement("INSERT INTO directories (root_id, parent_id, path, name) VALUES (?1, ?2, ?3, ?4)")
        insert.bind(rootID, at: 1)
        insert.bind(parent, at: 2)
        insert.bind(path.bytes, at: 3)
        insert.bind(path.lastComponent, at: 4)
        try insert.run()
        let created = (db.lastInsertRowID, rootID)
        remember(path, created)
        return created
    }

    private func remember(_ path: PathBytes, _ value: (id: Int64, root: Int64)) {
        if directoryCache.count >= Self.cacheLimit { directoryCache.removeAll(keepingCapacity: true) }
        directoryCache[path] = value
    }

    private func upsertDirectory(_ visit: DirectoryVisit) throws {
        let id = try directoryID(visit.path).id
        let s = try db.statement("UPDATE directories SET fsid = ?1, inode = ?2, mtime_ns = ?3 WHERE id = ?4")
        s.bind(Int64(bitPattern: visit.fsid), at: 1)
        s.bind(Int64(bitPattern: visit.inode), at: 2)
        s.bind(visit.mtimeNanoseconds, at: 3)
        s.bind(id, at: 4)
        try s.run()
    }

    /// Deletes a directory and everything below it; returns the assets that lost files.
    private func removeSubtree(_ path: PathBytes) throws -> [Int64] {
        let lower = path.bytes + [UInt8(ascii: "/")]
        let upper = path.bytes + [UInt8(ascii: "0")]  // '/' + 1: every "path/..." sorts below it
        let assets = try db.statement("""
            SELECT f.asset_pk FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE (d.path = ?1 OR (d.path >= ?2 AND d.path < ?3)) AND f.asset_pk IS NOT NULL
            """)
        assets.bind(path.bytes, at: 1)
        assets.bind(lower, at: 2)
        assets.bind(upper, at: 3)
        var pks: [Int64] = []
        while try assets.step() { pks.append(assets.int64(0)) }
        let delete = try db.statement("DELETE FROM directories WHERE path = ?1 OR (path >= ?2 AND path < ?3)")
        delete.bind(path.bytes, at: 1)
        delete.bind(lower, at: 2)
        delete.bind(upper, at: 3)
        try delete.run()
        directoryCache.removeAll(keepingCapacity: true)
        return pks
    }

    // MARK: - Files and assets

    private func removeFile(directory: PathBytes, name: [UInt8]) throws -> Int64? {
        let dir = try directoryID(directory).id
        let s = try db.statement("DELETE FROM files WHERE directory_id = ?1 AND name = ?2 RETURNING asset_pk")
        s.bind(dir, at: 1)
        s.bind(name, at: 2)
        defer { s.reset() }
        guard try s.step() else { return nil }
        return s.optionalInt(0).map(Int64.init)
    }

    private func write(_ file: FileOutcome, now: Int64, summary: inout BatchSummary, orphans: inout [Int64]) throws {
        let dir = try directoryID(file.directory).id
        let existing = try db.statement("SELECT asset_pk FROM files WHERE directory_id = ?1 AND name = ?2")
        existing.bind(dir, at: 1)
        existing.bind(file.name, at: 2)
        var previousAsset: Int64?
        if try existing.step() {
            previousAsset = existing.optionalInt(0).map(Int64.init)
        }
        existing.reset()

        var assetPK: Int64?
        var status = FileStatus.asset
        var errorCode: String?
        var errorMessage: String?
        switch file.kind {
        case .asset(let asset):
            if let pk = previousAsset {
                let update = try db.statement(AssetColumns.update)
                AssetColumns.bindFields(asset, update)
                update.bind(pk, at: 19)
                try update.run()
                assetPK = pk
                let id = try db.statement("SELECT id FROM assets WHERE pk = ?1")
                id.bind(pk, at: 1)
                if try id.step(), let assetID = AssetID(rawValue: id.string(0)) { summary.updated.append(assetID) }
                id.reset()
            } else {
                let insert = try db.statement(AssetColumns.insert)
                AssetColumns.bindFields(asset, insert)
                insert.bind(asset.id.rawValue, at: 19)
                insert.bind(now, at: 20)
                try insert.run()
                assetPK = db.lastInsertRowID
                summary.inserted.append(asset.id)
            }
        case .ignored(let reason):
            status = .ignored
            errorMessage = reason
        case .error(let code, let message):
            status = .error
            errorCode = code
            errorMessage = message
            summary.errors += 1
        }
        if let previousAsset, previousAsset != assetPK { orphans.append(previousAsset) }

        let upsert = try db.statement("""
            INSERT INTO files (directory_id, name, status, asset_pk, role, format, error_code, error_message,
                               fsid, inode, size, mtime_ns, fingerprint, indexed_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            ON CONFLICT (directory_id, name) DO UPDATE SET
                status = excluded.status, asset_pk = excluded.asset_pk, role = excluded.role,
                format = excluded.format, error_code = excluded.error_code, error_message = excluded.error_message,
                fsid = excluded.fsid, inode = excluded.inode, size = excluded.size, mtime_ns = excluded.mtime_ns,
                fingerprint = excluded.fingerprint, indexed_at = excluded.indexed_at
            """)
        upsert.bind(dir, at: 1)
        upsert.bind(file.name, at: 2)
        upsert.bind(status.rawValue, at: 3)
        upsert.bind(assetPK, at: 4)
        upsert.bind(assetPK == nil ? nil : Resource.Role.primary.rawValue, at: 5)
        upsert.bind(file.format, at: 6)
        upsert.bind(errorCode, at: 7)
        upsert.bind(errorMessage, at: 8)
        upsert.bind(Int64(bitPattern: file.identity.fsid), at: 9)
        upsert.bind(Int64(bitPattern: file.identity.inode), at: 10)
        upsert.bind(file.identity.size, at: 11)
        upsert.bind(file.identity.mtimeNanoseconds, at: 12)
        upsert.bind(file.fingerprint.map { Int64(bitPattern: $0) }, at: 13)
        upsert.bind(now, at: 14)
        try upsert.run()
    }

    /// Deletes the assets among `candidates` that no file refers to any more.
    private func deleteOrphans(_ candidates: [Int64]) throws -> [AssetID] {
        var deleted: [AssetID] = []
        let s = try db.statement("""
            DELETE FROM assets WHERE pk = ?1 AND NOT EXISTS (SELECT 1 FROM files WHERE asset_pk = ?1) RETURNING id
            """)
        for pk in Set(candidates) {
            s.bind(pk, at: 1)
            if try s.step(), let id = AssetID(rawValue: s.string(0)) { deleted.append(id) }
            s.reset()
        }
        return deleted
    }
}
