import PhotoModel

// Small records beside the index, not journaled (they describe the disk and the reader, not the
// library): `meta` values, and the file system each library tree (a root, a mount point below
// one) was on when scanned, `TreeAvailability`'s record.

extension IndexReader {
    /// An integer in `meta`, if set.
    public func metaInteger(_ key: String) throws -> Int64? {
        let s = try db.statement("SELECT value FROM meta WHERE key = ?1")
        defer { s.reset() }
        s.bind(key, at: 1)
        return try s.step() ? s.int64(0) : nil
    }

    /// Every recorded tree with its identity.
    public func mounts() throws -> [PathBytes: MountIdentity] {
        let s = try db.statement("SELECT path, fsid, fs_type, fs_path FROM mounts")
        var result: [PathBytes: MountIdentity] = [:]
        while try s.step() {
            result[PathBytes(s.bytes(0))] = MountIdentity(fsid: UInt64(bitPattern: s.int64(1)),
                                                          fsType: UInt32(truncatingIfNeeded: s.int64(2)),
                                                          fsPath: PathBytes(s.bytes(3)))
        }
        return result
    }

    /// How many files and directories the index holds directly in `path` (0 when it has never
    /// been scanned).
    public func entryCount(of path: PathBytes) throws -> Int {
        let s = try db.statement("""
            SELECT (SELECT count(*) FROM files WHERE directory_id = d.id)
                 + (SELECT count(*) FROM directories WHERE parent_id = d.id)
            FROM directories d WHERE d.path = ?1
            """)
        defer { s.reset() }
        s.bind(path.bytes, at: 1)
        return try s.step() ? s.int(0) : 0
    }
}

extension IndexWriter {
    /// Sets an integer in `meta`.
    public func setMetaInteger(_ key: String, _ value: Int64) throws {
        let s = try db.statement("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")
        defer { s.reset() }
        s.bind(key, at: 1)
        s.bind(value, at: 2)
        try s.run()
    }

    /// Records (or replaces) the identity of the tree at `path`.
    public func recordMount(_ path: PathBytes, _ identity: MountIdentity, now: Int64) throws {
        let s = try db.statement("""
            INSERT INTO mounts (path, fsid, fs_type, fs_path, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (path) DO UPDATE SET fsid = excluded.fsid, fs_type = excluded.fs_type,
                fs_path = excluded.fs_path, recorded_at = excluded.recorded_at
            """)
        defer { s.reset() }
        s.bind(path.bytes, at: 1)
        s.bind(Int64(bitPattern: identity.fsid), at: 2)
        s.bind(Int64(identity.fsType), at: 3)
        s.bind(identity.fsPath.bytes, at: 4)
        s.bind(now, at: 5)
        try s.run()
    }

    /// Forgets the records at and below `path`.
    public func forgetMounts(within path: PathBytes) throws {
        let s = try db.statement("SELECT path FROM mounts")
        var gone: [PathBytes] = []
        while try s.step() {
            let p = PathBytes(s.bytes(0))
            if p.isWithin(path) { gone.append(p) }
        }
        s.reset()
        let d = try db.statement("DELETE FROM mounts WHERE path = ?1")
        for p in gone {
            d.bind(p.bytes, at: 1)
            try d.run()
        }
    }
}
