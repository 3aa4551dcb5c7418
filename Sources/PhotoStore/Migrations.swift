/// One schema step. Migrations are append-only: a shipped migration is never edited, so a
/// database's `user_version` (the number of migrations applied) tells exactly what it holds.
public struct Migration: Sendable {
    public var name: String
    public var sql: String
}

/// The schema, in order. Derived data (assets, collections) may be rebuilt from the library;
/// user state (favorites, hidden, user albums: later migrations) must always be migrated.
public enum Schema {
    public static let migrations: [Migration] = [
        Migration(name: "001_index", sql: """
            CREATE TABLE meta (
                key TEXT PRIMARY KEY,
                value ANY
            ) STRICT;

            -- A library root given with --library. Its state survives an unmounted disk.
            CREATE TABLE roots (
                id INTEGER PRIMARY KEY,
                path BLOB NOT NULL UNIQUE,
                fsid INTEGER,
                state TEXT NOT NULL DEFAULT 'available'
            ) STRICT;

            -- Every directory below a root that was scanned; folder albums and the collection
            -- lists of the next issues are built on it. Paths are bytes, absolute.
            CREATE TABLE directories (
                id INTEGER PRIMARY KEY,
                root_id INTEGER NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
                parent_id INTEGER REFERENCES directories(id) ON DELETE CASCADE,
                path BLOB NOT NULL UNIQUE,
                name BLOB NOT NULL,
                fsid INTEGER,
                inode INTEGER,
                mtime_ns INTEGER
            ) STRICT;
            CREATE INDEX directories_parent ON directories(parent_id);
            CREATE INDEX directories_root ON directories(root_id);

            -- One photo or video. `path` is the primary resource's path, kept here for the
            -- default order (capture time, path bytes, id).
            CREATE TABLE assets (
                pk INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                media_type TEXT NOT NULL CHECK (media_type IN ('image', 'video')),
                format TEXT NOT NULL,
                subtypes INTEGER NOT NULL DEFAULT 0,
                local_datetime TEXT NOT NULL,
                utc_offset INTEGER,
                date_source TEXT NOT NULL,
                pixel_width INTEGER,
                pixel_height INTEGER,
                orientation INTEGER NOT NULL DEFAULT 1,
                latitude REAL,
                longitude REAL,
                altitude REAL,
                make TEXT,
                model TEXT,
                lens_model TEXT,
                duration REAL,
                file_size INTEGER NOT NULL,
                path BLOB NOT NULL,
                added_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX assets_order ON assets(local_datetime, path, id);

            -- Every regular file seen below a root: the resources of assets, and the files that
            -- are not assets (ignored, or an error with its reason), so that an unchanged file is
            -- never read twice. (fsid, inode, size, mtime) and the fingerprint recognise a file
            -- after a move.
            CREATE TABLE files (
                pk INTEGER PRIMARY KEY,
                directory_id INTEGER NOT NULL REFERENCES directories(id) ON DELETE CASCADE,
                name BLOB NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('asset', 'ignored', 'error')),
                asset_pk INTEGER REFERENCES assets(pk) ON DELETE SET NULL,
                role TEXT,
                format TEXT,
                error_code TEXT,
                error_message TEXT,
                fsid INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                fingerprint INTEGER,
                indexed_at INTEGER NOT NULL,
                UNIQUE (directory_id, name)
            ) STRICT;
            CREATE INDEX files_asset ON files(asset_pk);
            CREATE INDEX files_identity ON files(fsid, inode);
            CREATE INDEX files_status ON files(status) WHERE status != 'asset';
            -- No index on the fingerprint: it is random, so every insert would touch a random page;
            -- it is only compared among the few files a move or copy may concern.

            -- Counts kept by triggers, so that library.status costs O(1) however large the library.
            CREATE TABLE counters (
                name TEXT PRIMARY KEY,
                value INTEGER NOT NULL
            ) STRICT;
            INSERT INTO counters (name, value) VALUES
                ('assets.image', 0), ('assets.video', 0),
                ('files.asset', 0), ('files.ignored', 0), ('files.error', 0), ('directories', 0);
            CREATE TRIGGER assets_counted_insert AFTER INSERT ON assets BEGIN
                UPDATE counters SET value = value + 1 WHERE name = 'assets.' || NEW.media_type;
            END;
            CREATE TRIGGER assets_counted_delete AFTER DELETE ON assets BEGIN
                UPDATE counters SET value = value - 1 WHERE name = 'assets.' || OLD.media_type;
            END;
            CREATE TRIGGER assets_counted_update AFTER UPDATE OF media_type ON assets
            WHEN OLD.media_type != NEW.media_type BEGIN
                UPDATE counters SET value = value - 1 WHERE name = 'assets.' || OLD.media_type;
                UPDATE counters SET value = value + 1 WHERE name = 'assets.' || NEW.media_type;
            END;
            CREATE TRIGGER files_counted_insert AFTER INSERT ON files BEGIN
                UPDATE counters SET value = value + 1 WHERE name = 'files.' || NEW.status;
            END;
            CREATE TRIGGER files_counted_delete AFTER DELETE ON files BEGIN
                UPDATE counters SET value = value - 1 WHERE name = 'files.' || OLD.status;
            END;
            CREATE TRIGGER files_counted_update AFTER UPDATE OF status ON files
            WHEN OLD.status != NEW.status BEGIN
                UPDATE counters SET value = value - 1 WHERE name = 'files.' || OLD.status;
                UPDATE counters SET value = value + 1 WHERE name = 'files.' || NEW.status;
            END;
            CREATE TRIGGER directories_counted_insert AFTER INSERT ON directories BEGIN
                UPDATE counters SET value = value + 1 WHERE name = 'directories';
            END;
            CREATE TRIGGER directories_counted_delete AFTER DELETE ON directories BEGIN
                UPDATE counters SET value = value - 1 WHERE name = 'directories';
            END;
            """),
    ]

    /// The `user_version` this build writes.
    public static var currentVersion: Int { migrations.count }

    /// The database's schema version; refuses one made by a newer photod (before anything,
    /// even the switch to WAL mode, touches the file).
    @discardableResult
    static func checkVersion(_ db: Connection) throws(StoreError) -> Int {
        let version = Int(try db.scalar("PRAGMA user_version").int64 ?? 0)
        if version > currentVersion {
            throw StoreError(code: .newerSchema,
                             message: "database '\(db.path)' has schema version \(version), made by a newer photod; "
                                 + "this photod knows versions up to \(currentVersion) and will not modify it")
        }
        return version
    }

    /// Brings a database up to `currentVersion`, one transaction per migration; refuses a
    /// database made by a newer photod.
    static func migrate(_ db: Connection) throws(StoreError) {
        let version = try checkVersion(db)
        for (index, migration) in migrations.enumerated() where index >= version {
            do {
                try db.transaction {
                    try db.execute(migration.sql)
                    try db.execute("PRAGMA user_version = \(index + 1)")
                }
            } catch let error as StoreError {
                throw StoreError(code: error.code, message: "migration \(migration.name) failed: \(error.message)",
                                 sql: error.sql, sqliteCode: error.sqliteCode)
            } catch {
                throw StoreError(code: .sqlite, message: "migration \(migration.name) failed: \(error)")
            }
        }
    }
}
