import PhotoModel

// Small records beside the index, not journaled (they describe the disk and the reader, not the
// library): `meta` values, and the file system each library tree (a root, a mount point below
// one) was on when scanned, `TreeAvailability`'s record.

extension IndexReader {
    /// An integer in `meta`, if set.
    public func metaInteger(_ key: String) throws(StoreError) -> Int64? {
        let s = try db.statement("SELECT value FROM meta WHERE key = :key")
        defer { s.reset() }
        s.bind(":key", to: key)
        return try s.step() ? s.int64(0) : nil
    }

    /// Every recorded tree with its identity.
    public func mounts() throws(StoreError) -> [PathBytes: MountIdentity] {
        let s = try db.statement("SELECT path, fsid, fs_type, fs_path, volume FROM mounts")
        var result: [PathBytes: MountIdentity] = [:]
        while try s.step() {
            result[PathBytes(s.bytes(0))] = MountIdentity(fsid: UInt64(bitPattern: s.int64(1)),
                                                          fsType: UInt32(truncatingIfNeeded: s.int64(2)),
                                                          fsPath: PathBytes(s.bytes(3)), volume: s.isNull(4) ? nil : s.string(4))
        }
        return result
    }

    /// What the index has of the directory at `path` for `TreeAvailability`: its entries and the
    /// file system and inode it was scanned with.
    public func indexedTree(_ path: PathBytes) throws(StoreError) -> TreeAvailability.Indexed {
        let s = try db.statement("""
            SELECT (SELECT count(*) FROM files WHERE directory_id = d.id)
                 + (SELECT count(*) FROM directories WHERE parent_id = d.id), d.fsid, d.inode
            FROM directories d WHERE d.path = :path
            """)
        defer { s.reset() }
        s.bind(":path", to: path)
        guard try s.step() else { return TreeAvailability.Indexed(entries: 0) }
        return TreeAvailability.Indexed(entries: s.int(0), fsid: s.isNull(1) ? nil : UInt64(bitPattern: s.int64(1)),
                                        inode: s.isNull(2) ? nil : UInt64(bitPattern: s.int64(2)))
    }

    /// Up to `limit` media files the index has at or below `path` (path, size, mtime): what a
    /// disk must hold to be the one indexed when its identity cannot tell.
    public func sampleFiles(within path: PathBytes, limit: Int) throws(StoreError) -> [(path: PathBytes, size: Int64, mtimeNanoseconds: Int64)] {
        let s = try db.statement("""
            SELECT d.path, f.name, f.size, f.mtime_ns FROM files f JOIN directories d ON d.id = f.directory_id
            WHERE (d.path = :path OR (d.path >= :lower AND d.path < :upper)) AND f.status = 'media' LIMIT :limit
            """)
        defer { s.reset() }
        s.bind(":path", to: path)
        s.bind(":lower", to: path.bytes + [UInt8(ascii: "/")])
        s.bind(":upper", to: path.bytes + [UInt8(ascii: "0")])
        s.bind(":limit", to: limit)
        var result: [(PathBytes, Int64, Int64)] = []
        while try s.step() { result.append((PathBytes(s.bytes(0)).appending(s.bytes(1)), s.int64(2), s.int64(3))) }
        return result
    }

    /// How many files and directories the index holds directly in `path` (0 when it has never
    /// been scanned).
    public func entryCount(of path: PathBytes) throws(StoreError) -> Int { try indexedTree(path).entries }
}

extension IndexWriter {
    /// Sets an integer in `meta`.
    public func setMetaInteger(_ key: String, _ value: Int64) throws(StoreError) {
        let s = try db.statement("INSERT OR REPLACE INTO meta (key, value) VALUES (:key, :value)")
        defer { s.reset() }
        s.bind(":key", to: key)
        s.bind(":value", to: value)
        try s.run()
    }

    /// Records (or replaces) the identity of the tree at `path`.
    public func recordMount(_ path: PathBytes, _ identity: MountIdentity, now: Int64) throws(StoreError) {
        let s = try db.statement("""
            INSERT INTO mounts (path, fsid, fs_type, fs_path, volume, recorded_at) VALUES (:path, :fsid, :fsType, :fsPath, :volume, :now)
            ON CONFLICT (path) DO UPDATE SET fsid = excluded.fsid, fs_type = excluded.fs_type,
                fs_path = excluded.fs_path, volume = excluded.volume, recorded_at = excluded.recorded_at
            """)
        defer { s.reset() }
        s.bind(":path", to: path)
        s.bind(":fsid", to: Int64(bitPattern: identity.fsid))
        s.bind(":fsType", to: Int64(identity.fsType))
        s.bind(":fsPath", to: identity.fsPath)
        s.bind(":volume", to: identity.volume)
        s.bind(":now", to: now)
        try s.run()
    }

    /// Forgets the record of the tree at `path` (not those of mount points below it).
    public func forgetMount(_ path: PathBytes) throws(StoreError) {
        let d = try db.statement("DELETE FROM mounts WHERE path = :path")
        defer { d.reset() }
        d.bind(":path", to: path)
        try d.run()
    }
}
