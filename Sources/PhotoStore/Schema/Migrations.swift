/// One schema step. Migrations are append-only: a shipped migration is never edited, so a
/// database's `user_version` (the number of migrations applied) tells exactly what it holds.
public struct Migration: Sendable {
    /// A name for logs and errors (`001_index`).
    public var name: String
    /// The SQL, run in one transaction.
    public var sql: String
}

/// The schema, in order. Derived data (assets, moments, albums) may be rebuilt from the
/// library; user state (`user_state`; user albums later) must always be migrated.
public enum Schema {
    /// Every migration, oldest first.
    public static let migrations: [Migration] = [
        Migration(name: "001_index", sql: """
            CREATE TABLE meta (
                key TEXT PRIMARY KEY,
                value ANY
            ) STRICT;

            -- A library root given with --library.
            CREATE TABLE roots (
                id INTEGER PRIMARY KEY,
                path BLOB NOT NULL UNIQUE
            ) STRICT;

            -- Every directory below a root that was scanned. A directory that directly holds
            -- visible assets is a folder album: `album_id` is given when the row is made and kept
            -- for the row's life, `asset_count` is kept by the sort jobs. Paths are bytes, absolute.
            CREATE TABLE directories (
                id INTEGER PRIMARY KEY,
                root_id INTEGER NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
                parent_id INTEGER REFERENCES directories(id) ON DELETE CASCADE,
                path BLOB NOT NULL UNIQUE,
                name BLOB NOT NULL,
                album_id TEXT NOT NULL UNIQUE,
                asset_count INTEGER NOT NULL DEFAULT 0,
                fsid INTEGER,
                inode INTEGER,
                mtime_ns INTEGER
            ) STRICT;
            CREATE INDEX directories_parent ON directories(parent_id);
            CREATE INDEX directories_identity ON directories(fsid, inode);
            CREATE INDEX directories_albums ON directories(asset_count) WHERE asset_count > 0;

            -- Every regular file seen below a root. Media files carry what the reader found in
            -- them (so that an asset can be recomposed from its files, when pairing changes,
            -- without reading them again); `group_key` groups the files of one directory that
            -- share a base name (RAW+JPEG, Live Photo, sidecar). (fsid, inode, size, mtime) and
            -- the fingerprint recognise a file after a move. No index on the fingerprint: it is
            -- random, so every insert would touch a random page; it is only compared among the
            -- few files a move or copy may concern.
            CREATE TABLE files (
                pk INTEGER PRIMARY KEY,
                directory_id INTEGER NOT NULL REFERENCES directories(id) ON DELETE CASCADE,
                name BLOB NOT NULL,
                group_key BLOB NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('media', 'sidecar', 'ignored', 'error')),
                asset_pk INTEGER,
                role TEXT,
                error_code TEXT,
                error_message TEXT,
                fsid INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                fingerprint INTEGER,
                indexed_at INTEGER NOT NULL,
                media_type TEXT,
                format TEXT,
                is_raw INTEGER NOT NULL DEFAULT 0,
                local_datetime TEXT,
                utc_offset INTEGER,
                date_source TEXT,
                pixel_width INTEGER,
                pixel_height INTEGER,
                orientation INTEGER,
                latitude REAL,
                longitude REAL,
                altitude REAL,
                make TEXT,
                model TEXT,
                lens_model TEXT,
                duration REAL,
                rating INTEGER,
                keywords TEXT,
                user_comment TEXT,
                content_identifier TEXT,
                capture_instant INTEGER,
                UNIQUE (directory_id, name)
            ) STRICT;
            CREATE INDEX files_group ON files(directory_id, group_key);
            CREATE INDEX files_asset ON files(asset_pk) WHERE asset_pk IS NOT NULL;
            CREATE INDEX files_identity ON files(fsid, inode);
            CREATE INDEX files_errors ON files(status) WHERE status = 'error';

            -- One photo or video, composed from its files (the primary's metadata, a sidecar's
            -- date, rating and keywords). `path` and `day` are kept for the default order and
            -- for moments; `is_favorite` and `is_hidden` are copies of `user_state`, kept in
            -- step by the writer; `deleted_at` is set while the asset is in Recently Deleted.
            CREATE TABLE assets (
                pk INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                root_id INTEGER NOT NULL,
                directory_id INTEGER REFERENCES directories(id) ON DELETE SET NULL,
                media_type TEXT NOT NULL CHECK (media_type IN ('image', 'video')),
                format TEXT NOT NULL,
                subtypes INTEGER NOT NULL DEFAULT 0,
                local_datetime TEXT NOT NULL,
                utc_offset INTEGER,
                date_source TEXT NOT NULL,
                day INTEGER NOT NULL,
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
                rating INTEGER,
                keywords TEXT,
                file_size INTEGER NOT NULL,
                path BLOB NOT NULL,
                added_at INTEGER NOT NULL,
                is_favorite INTEGER NOT NULL DEFAULT 0,
                is_hidden INTEGER NOT NULL DEFAULT 0,
                deleted_at INTEGER
            ) STRICT;
            CREATE INDEX assets_order ON assets(local_datetime, path, id);
            CREATE INDEX assets_day ON assets(day, local_datetime, path, id);
            CREATE INDEX assets_directory ON assets(directory_id);
            CREATE INDEX assets_added ON assets(added_at);
            -- Partial indexes over the few members of the sparse smart albums: counting or listing
            -- one costs its size, not the library's. Queries repeat these exact conditions.
            CREATE INDEX assets_invisible ON assets(pk) WHERE is_hidden != 0 OR deleted_at IS NOT NULL;
            CREATE INDEX assets_favorites ON assets(pk) WHERE is_favorite != 0;
            CREATE INDEX assets_screenshots ON assets(pk) WHERE (subtypes & 1) != 0;
            CREATE INDEX assets_panoramas ON assets(pk) WHERE (subtypes & 2) != 0;
            CREATE INDEX assets_live ON assets(pk) WHERE (subtypes & 4) != 0;
            CREATE INDEX assets_raw ON assets(pk) WHERE (subtypes & 8) != 0;
            CREATE INDEX assets_selfies ON assets(pk) WHERE (subtypes & 16) != 0;

            -- The files of assets in Recently Deleted, as they were: when a file with the same
            -- identity (fsid, inode, size, mtime) or content (size, fingerprint) shows up again
            -- (a move while photod was down, a restore from a backup), its row is recreated from
            -- here and its asset comes back with its id and user state. Purged with the asset.
            CREATE TABLE tombstones (
                pk INTEGER PRIMARY KEY,
                asset_pk INTEGER NOT NULL,
                role TEXT,
                directory_path BLOB NOT NULL,
                name BLOB NOT NULL,
                deleted_at INTEGER NOT NULL,
                status TEXT NOT NULL,
                fsid INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                fingerprint INTEGER,
                media_type TEXT,
                format TEXT,
                is_raw INTEGER NOT NULL DEFAULT 0,
                local_datetime TEXT,
                utc_offset INTEGER,
                date_source TEXT,
                pixel_width INTEGER,
                pixel_height INTEGER,
                orientation INTEGER,
                latitude REAL,
                longitude REAL,
                altitude REAL,
                make TEXT,
                model TEXT,
                lens_model TEXT,
                duration REAL,
                rating INTEGER,
                keywords TEXT,
                user_comment TEXT,
                content_identifier TEXT,
                capture_instant INTEGER
            ) STRICT;
            CREATE INDEX tombstones_identity ON tombstones(fsid, inode);
            CREATE INDEX tombstones_content ON tombstones(size, fingerprint);
            CREATE INDEX tombstones_asset ON tombstones(asset_pk);

            -- What users said about assets, keyed by asset id so that it outlives the asset row
            -- (a rebuild, a file that is gone and comes back). Never derived from files.
            CREATE TABLE user_state (
                asset_id TEXT PRIMARY KEY,
                is_favorite INTEGER NOT NULL DEFAULT 0,
                is_hidden INTEGER NOT NULL DEFAULT 0,
                updated_at INTEGER NOT NULL
            ) STRICT;

            -- One row per calendar day on the capture clock that has visible assets. The id,
            -- local date and title are derived from `day`; the location member (the oldest
            -- geotagged asset) lets a day that only gains assets be updated without reading it.
            CREATE TABLE moments (
                day INTEGER PRIMARY KEY,
                start_local TEXT NOT NULL,
                end_local TEXT NOT NULL,
                asset_count INTEGER NOT NULL,
                photo_count INTEGER NOT NULL,
                video_count INTEGER NOT NULL,
                latitude REAL,
                longitude REAL,
                location_local TEXT,
                location_path BLOB,
                location_asset TEXT
            ) STRICT;

            -- The change journal: one row per committed sort job, in the same transaction.
            -- `token` is the change token clients resume from; ids are comma-separated (asset
            -- and collection ids never contain commas).
            CREATE TABLE changes (
                token INTEGER PRIMARY KEY AUTOINCREMENT,
                time INTEGER NOT NULL,
                assets_inserted TEXT NOT NULL,
                assets_updated TEXT NOT NULL,
                assets_deleted TEXT NOT NULL,
                collections_inserted TEXT NOT NULL,
                collections_updated TEXT NOT NULL,
                collections_deleted TEXT NOT NULL
            ) STRICT;

            -- Counts kept by the writer (one update per job, not a trigger per row), so that
            -- library.status costs O(1) however large the library; checked against a recount
            -- when the daemon starts.
            CREATE TABLE counters (
                name TEXT PRIMARY KEY,
                value INTEGER NOT NULL
            ) STRICT;
            INSERT INTO counters (name, value) VALUES
                ('assets.image', 0), ('assets.video', 0),
                ('files.media', 0), ('files.sidecar', 0), ('files.ignored', 0), ('files.error', 0),
                ('directories', 0);
            """),
        Migration(name: "002_user_collections", sql: """
            -- User albums and the folders that hold them (PhotoKit's PHAssetCollection of type
            -- album and PHCollectionList): user state, stored only here, never derived from
            -- files. Members are kept by asset id, so that they outlive an asset row (Recently
            -- Deleted and back, a rebuild of the derived tables).
            CREATE TABLE user_folders (
                id TEXT PRIMARY KEY,
                title TEXT NOT NULL,
                parent_id TEXT REFERENCES user_folders(id) ON DELETE CASCADE,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX user_folders_parent ON user_folders(parent_id);
            CREATE TABLE user_albums (
                id TEXT PRIMARY KEY,
                title TEXT NOT NULL,
                folder_id TEXT REFERENCES user_folders(id) ON DELETE CASCADE,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX user_albums_folder ON user_albums(folder_id);
            CREATE TABLE user_album_assets (
                album_id TEXT NOT NULL REFERENCES user_albums(id) ON DELETE CASCADE,
                asset_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                added_at INTEGER NOT NULL,
                PRIMARY KEY (album_id, asset_id)
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX user_album_assets_asset ON user_album_assets(asset_id);
            CREATE INDEX user_album_assets_order ON user_album_assets(album_id, position);

            -- Keywords set by taggers (face, object, scene recognisers), each under its source's
            -- name; an asset's keywords are these plus the ones its files carry (XMP).
            CREATE TABLE asset_keywords (
                asset_id TEXT NOT NULL,
                source TEXT NOT NULL,
                keyword TEXT NOT NULL COLLATE NOCASE,
                PRIMARY KEY (asset_id, source, keyword)
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX asset_keywords_keyword ON asset_keywords(keyword);
            """),
        Migration(name: "003_mounts", sql: """
            -- The file system each library root, and each mount point below one, was on when it
            -- was scanned: statfs's f_fsid and f_type, and the directory's path inside that file
            -- system. A directory that shows another one now (an unmounted disk's mount point, the
            -- directory under an unmounted bind mount) is not compared with the index until it is
            -- back, or until the operator adopts what is there (library.adopt).
            CREATE TABLE mounts (
                path BLOB PRIMARY KEY,
                fsid INTEGER NOT NULL,
                fs_type INTEGER NOT NULL,
                fs_path BLOB NOT NULL,
                -- A volume id where f_fsid cannot tell disks apart (FAT serial, udev's
                -- ID_FS_UUID, a FUSE or network file system's source), or NULL.
                volume TEXT,
                recorded_at INTEGER NOT NULL
            ) STRICT, WITHOUT ROWID;
            """),
        Migration(name: "004_asset_media_fields", sql: """
            -- An asset carries all of its primary file's media fields (`MediaFields`), so that
            -- `files`, `tombstones` and `assets` share one column list. Filled from the primary
            -- files of the assets there are.
            ALTER TABLE assets ADD COLUMN is_raw INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE assets ADD COLUMN user_comment TEXT;
            ALTER TABLE assets ADD COLUMN content_identifier TEXT;
            UPDATE assets SET is_raw = f.is_raw, user_comment = f.user_comment, content_identifier = f.content_identifier
            FROM files f WHERE f.asset_pk = assets.pk AND f.role = 'primary';
            """),
        Migration(name: "005_album_dates", sql: """
            -- A folder album's first and last capture times (of its visible assets), kept with
            -- `asset_count` by the sort jobs, so that a page of albums reads its rows alone
            -- instead of every asset of every album on it.
            ALTER TABLE directories ADD COLUMN start_local TEXT;
            ALTER TABLE directories ADD COLUMN end_local TEXT;
            UPDATE directories SET (start_local, end_local) =
                (SELECT min(a.local_datetime), max(a.local_datetime) FROM assets a
                 WHERE a.directory_id = directories.id AND a.is_hidden = 0 AND a.deleted_at IS NULL)
            WHERE asset_count > 0;
            """),
        Migration(name: "006_narrow_order", sql: """
            -- The capture-order index without the id (a tie-breaker only where two assets share
            -- a path, which the order's sort settles), and no index per day: a day's assets are a
            -- range of `local_datetime` (`MomentGrouping.localDateTimeRange`). Each was 150 bytes
            -- per asset and one more b-tree written for every asset inserted or changed.
            DROP INDEX IF EXISTS assets_day;
            DROP INDEX IF EXISTS assets_order;
            CREATE INDEX assets_order ON assets(local_datetime, path);
            """),
        Migration(name: "007_group_by_name", sql: """
            -- A group's files are a range of names in the (directory_id, name) index: each name is
            -- its group key or the key, a dot and more (`ResourcePairing.groupNamesEnd`). The
            -- index on (directory_id, group_key) was 26 bytes per file and one more b-tree
            -- written for every file.
            DROP INDEX IF EXISTS files_group;
            """),
        Migration(name: "008_compact_files", sql: """
            -- A media file alone in its asset, whose fields are all the asset's, keeps them only
            -- in the asset's row: its own media columns are NULL (`media_type` IS NULL on a row of
            -- status 'media', `is_raw` 0) and mean the asset's (`MediaColumns.deferred`). The writer
            -- copies them back before the asset's fields change or another file joins it. Rows
            -- written before stay whole, which is as valid. 100-110 bytes per asset.
            -- Columns nothing reads go: `group_key` (a group is a range of names, its key checked
            -- as the rows are read), `capture_instant` (pairing computes it from the date),
            -- `indexed_at`.
            ALTER TABLE files DROP COLUMN group_key;
            ALTER TABLE files DROP COLUMN capture_instant;
            ALTER TABLE files DROP COLUMN indexed_at;
            ALTER TABLE tombstones DROP COLUMN capture_instant;
            -- A moved file is looked up by its inode; the file system id is compared on the row
            -- (8 bytes per file less).
            DROP INDEX IF EXISTS files_identity;
            CREATE INDEX files_identity ON files(inode);
            -- The capture order's index holds the time alone: assets of the same time are put in
            -- path order by a sort of those few (the path was 51 of its 79 bytes per asset).
            DROP INDEX IF EXISTS assets_order;
            CREATE INDEX assets_order ON assets(local_datetime);
            -- A date's source is one letter (`MediaColumns.code`), not its name (12 bytes an asset).
            UPDATE assets SET date_source = CASE date_source
                WHEN 'exifOriginal' THEN 'O' WHEN 'exifDigitized' THEN 'D' WHEN 'xmp' THEN 'X' WHEN 'iptc' THEN 'I'
                WHEN 'exifModified' THEN 'M' WHEN 'quicktime' THEN 'Q' WHEN 'fileName' THEN 'N' WHEN 'fileModified' THEN 'F'
                ELSE date_source END;
            UPDATE files SET date_source = CASE date_source
                WHEN 'exifOriginal' THEN 'O' WHEN 'exifDigitized' THEN 'D' WHEN 'xmp' THEN 'X' WHEN 'iptc' THEN 'I'
                WHEN 'exifModified' THEN 'M' WHEN 'quicktime' THEN 'Q' WHEN 'fileName' THEN 'N' WHEN 'fileModified' THEN 'F'
                ELSE date_source END WHERE date_source IS NOT NULL;
            UPDATE tombstones SET date_source = CASE date_source
                WHEN 'exifOriginal' THEN 'O' WHEN 'exifDigitized' THEN 'D' WHEN 'xmp' THEN 'X' WHEN 'iptc' THEN 'I'
                WHEN 'exifModified' THEN 'M' WHEN 'quicktime' THEN 'Q' WHEN 'fileName' THEN 'N' WHEN 'fileModified' THEN 'F'
                ELSE date_source END WHERE date_source IS NOT NULL;
            """),
        Migration(name: "009_video_fields", sql: """
            -- A video's frame rate, codecs, bit rate and capture rate (`MediaFields`), read by
            -- libavformat, and what a file says of how it was made (`traits`: HDR, a depth map,
            -- animation). The files indexed before are read again once (`MediaFileReader.rulesVersion`
            -- 3). The subtypes they give (highFrameRate 32, timelapse 64, animated 128, hdr 256,
            -- depthEffect 512, burst 1024) get partial indexes like the others, for their smart
            -- albums. A burst (Apple's BurstUUID, `burst_id`) has one representative
            -- (`represents_burst`), kept by the writer in the transaction that changes its members.
            ALTER TABLE files ADD COLUMN frame_rate REAL;
            ALTER TABLE files ADD COLUMN video_codec TEXT;
            ALTER TABLE files ADD COLUMN audio_codec TEXT;
            ALTER TABLE files ADD COLUMN bit_rate INTEGER;
            ALTER TABLE tombstones ADD COLUMN frame_rate REAL;
            ALTER TABLE tombstones ADD COLUMN video_codec TEXT;
            ALTER TABLE tombstones ADD COLUMN audio_codec TEXT;
            ALTER TABLE tombstones ADD COLUMN bit_rate INTEGER;
            ALTER TABLE assets ADD COLUMN frame_rate REAL;
            ALTER TABLE assets ADD COLUMN video_codec TEXT;
            ALTER TABLE assets ADD COLUMN audio_codec TEXT;
            ALTER TABLE assets ADD COLUMN bit_rate INTEGER;
            ALTER TABLE files ADD COLUMN capture_frame_rate REAL;
            ALTER TABLE files ADD COLUMN traits INTEGER;
            ALTER TABLE tombstones ADD COLUMN capture_frame_rate REAL;
            ALTER TABLE tombstones ADD COLUMN traits INTEGER;
            ALTER TABLE assets ADD COLUMN capture_frame_rate REAL;
            ALTER TABLE assets ADD COLUMN traits INTEGER;
            CREATE INDEX assets_slomo ON assets(pk) WHERE (subtypes & 32) != 0;
            CREATE INDEX assets_timelapses ON assets(pk) WHERE (subtypes & 64) != 0;
            CREATE INDEX assets_animated ON assets(pk) WHERE (subtypes & 128) != 0;
            CREATE INDEX assets_depth ON assets(pk) WHERE (subtypes & 512) != 0;
            ALTER TABLE files ADD COLUMN burst_id TEXT;
            ALTER TABLE tombstones ADD COLUMN burst_id TEXT;
            ALTER TABLE assets ADD COLUMN burst_id TEXT;
            ALTER TABLE assets ADD COLUMN represents_burst INTEGER NOT NULL DEFAULT 0;
            CREATE INDEX assets_burst ON assets(burst_id) WHERE burst_id IS NOT NULL;
            CREATE INDEX assets_bursts ON assets(pk) WHERE (subtypes & 1024) != 0 AND represents_burst != 0;
            """),
        Migration(name: "010_key_assets", sql: """
            -- Every collection's key assets (`KeyAssets`), kept by the writer in the job that
            -- changes them, by collection id (a moment's `m_…`, a folder album's `f_…`, `s_…`,
            -- `u_…`): the ids separated by commas, and the newest three with their capture time
            -- and path (`KeyColumns`), which the lists above a collection merge. A table of their
            -- own, so that the passes over every moment or directory read no more than before.
            -- Computed for an older database when photod opens it (meta `keyAssets`,
            -- `KeyAssetRows.rebuild`).
            CREATE TABLE collection_keys (
                id TEXT PRIMARY KEY,
                key_assets TEXT NOT NULL,
                newest BLOB NOT NULL
            ) STRICT, WITHOUT ROWID;
            -- The lookups: a folder album's assets in capture order (also what its page walks),
            -- and the favorites of a day or of an album.
            DROP INDEX IF EXISTS assets_directory;
            CREATE INDEX assets_directory ON assets(directory_id, local_datetime);
            DROP INDEX IF EXISTS assets_favorites;
            CREATE INDEX assets_favorites ON assets(local_datetime) WHERE is_favorite != 0;
            CREATE INDEX assets_favorites_directory ON assets(directory_id, local_datetime) WHERE is_favorite != 0;
            DELETE FROM meta WHERE key = 'keyAssets';
            """),
        Migration(name: "011_places", sql: """
            -- Where each asset was taken (`Place`). A file's own location fields (IPTC-IIM,
            -- XMP), encoded as one string (`Place.encoded`), are a media column like the others
            -- (NULL for most files: one byte). The asset's place — that, else the gazetteer's
            -- for its coordinates — is a row of `places`, shared by every asset there (`key` is
            -- the encoded place), so an asset spends a few bytes on it and the places list reads
            -- one small table. Rows are never updated or deleted while assets may name them,
            -- so readers may cache them by id. `zone_offset`: the offset of the place's time
            -- zone at the capture time, for an asset whose metadata gives none (seconds east of
            -- UTC; the media columns keep what the file says). Existing assets with coordinates
            -- are placed by a background pass (meta `places.end`, `places.cursor`).
            ALTER TABLE files ADD COLUMN file_place TEXT;
            ALTER TABLE tombstones ADD COLUMN file_place TEXT;
            ALTER TABLE assets ADD COLUMN file_place TEXT;
            CREATE TABLE places (
                id INTEGER PRIMARY KEY,
                key TEXT NOT NULL UNIQUE,
                source TEXT NOT NULL CHECK (source IN ('file', 'geonames')),
                city TEXT,
                sub_location TEXT,
                region TEXT,
                country TEXT,
                country_code TEXT,
                near TEXT,
                time_zone TEXT
            ) STRICT;
            ALTER TABLE assets ADD COLUMN place_id INTEGER;
            ALTER TABLE assets ADD COLUMN zone_offset INTEGER;
            -- The visible assets at each place in capture order: the places list's counts and
            -- spans, and a place's assets.
            CREATE INDEX assets_place ON assets(place_id, local_datetime)
                WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;
            -- A moment's title by place and its cities (`PlaceTitles`), kept by the writer for
            -- the days a job touches; location names separated by U+001F.
            ALTER TABLE moments ADD COLUMN title TEXT;
            ALTER TABLE moments ADD COLUMN location_names TEXT;
            -- Every asset's coordinates in an R*Tree (SQLite's, built into Debian's): what
            -- `location WITHIN` and `location NEAR` look up instead of passing over every asset.
            -- Kept by triggers in the transaction that writes the asset.
            CREATE VIRTUAL TABLE asset_locations USING rtree(id, min_lat, max_lat, min_lon, max_lon);
            INSERT INTO asset_locations SELECT pk, latitude, latitude, longitude, longitude FROM assets
                WHERE latitude IS NOT NULL AND longitude IS NOT NULL;
            CREATE TRIGGER assets_location_insert AFTER INSERT ON assets
                WHEN new.latitude IS NOT NULL AND new.longitude IS NOT NULL BEGIN
                INSERT INTO asset_locations VALUES (new.pk, new.latitude, new.latitude, new.longitude, new.longitude);
            END;
            CREATE TRIGGER assets_location_update AFTER UPDATE OF latitude, longitude ON assets
                WHEN old.latitude IS NOT new.latitude OR old.longitude IS NOT new.longitude BEGIN
                DELETE FROM asset_locations WHERE id = old.pk;
                INSERT INTO asset_locations SELECT new.pk, new.latitude, new.latitude, new.longitude, new.longitude
                    WHERE new.latitude IS NOT NULL AND new.longitude IS NOT NULL;
            END;
            CREATE TRIGGER assets_location_delete AFTER DELETE ON assets BEGIN
                DELETE FROM asset_locations WHERE id = old.pk;
            END;
            -- Text search (`assets.search`): each asset's words by column (`SearchText`), folded
            -- by the unicode61 tokenizer (case, and diacritics: "sao paulo" finds "São Paulo"),
            -- with prefix indexes of 2 and 3 characters for what one types. Rows are assets not
            -- in Recently Deleted, rowid = pk, written by the writer (`SearchRows`) in the
            -- transaction that changes the asset. Filled for existing assets at once.
            CREATE VIRTUAL TABLE asset_search USING fts5(name, folders, keywords, place, camera,
                tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
            INSERT INTO meta (key, value) VALUES ('search.rebuild', 1);
            -- The assets indexed before places that have something to place them by: the pass
            -- walks their pks up to this one (`IndexWriter.placeAssets`).
            INSERT INTO meta (key, value) SELECT 'places.end', max(pk) FROM assets
                WHERE latitude IS NOT NULL AND deleted_at IS NULL HAVING count(*) > 0;
            """),
        Migration(name: "012_search_sources", sql: """
            -- Text search by source (`assets.search`, `collections.search`), each word list kept
            -- where its text lives, by triggers in the transaction that writes it: an asset's
            -- own words (its file name, its files' keywords, its camera) in `asset_words`, whose
            -- text is not stored twice (external content: the view `asset_words_source` reads
            -- it from `assets`); the words of each folder below its root, each place, each
            -- tagger keyword, each user album's title and each moment's title and cities in
            -- small tables of their own, found assets by the indexes those already have. So a
            -- folder's or a place's name is indexed once, not once per asset. All fold case and
            -- diacritics (unicode61: "sao paulo" finds "São Paulo").
            DROP TABLE asset_search;
            DELETE FROM meta WHERE key = 'search.rebuild';
            -- The visible assets at each place: with the columns its condition names, so that a
            -- search reads a place's assets from the index alone (two bytes an entry).
            DROP INDEX assets_place;
            CREATE INDEX assets_place ON assets(place_id, local_datetime, is_hidden, deleted_at)
                WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;
            -- How many visible assets each place row has, kept by triggers as assets are written,
            -- so the places list reads its counts instead of counting (spans and newest assets
            -- are a look into `assets_place` per place).
            CREATE TABLE place_counts (
                place_id INTEGER PRIMARY KEY,
                assets INTEGER NOT NULL
            ) STRICT;
            INSERT INTO place_counts (place_id, assets) SELECT place_id, count(*) FROM assets
                WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY place_id;
            CREATE TRIGGER assets_place_count_insert AFTER INSERT ON assets
                WHEN new.place_id IS NOT NULL AND new.is_hidden = 0 AND new.deleted_at IS NULL BEGIN
                INSERT INTO place_counts (place_id, assets) VALUES (new.place_id, 1)
                    ON CONFLICT (place_id) DO UPDATE SET assets = assets + 1;
            END;
            CREATE TRIGGER assets_place_count_update AFTER UPDATE OF place_id, is_hidden, deleted_at ON assets
                WHEN old.place_id IS NOT new.place_id OR (old.is_hidden = 0 AND old.deleted_at IS NULL)
                    IS NOT (new.is_hidden = 0 AND new.deleted_at IS NULL) BEGIN
                UPDATE place_counts SET assets = assets - 1
                    WHERE place_id = old.place_id AND old.is_hidden = 0 AND old.deleted_at IS NULL;
                INSERT INTO place_counts (place_id, assets) SELECT new.place_id, 1
                    WHERE new.place_id IS NOT NULL AND new.is_hidden = 0 AND new.deleted_at IS NULL
                    ON CONFLICT (place_id) DO UPDATE SET assets = assets + 1;
            END;
            CREATE TRIGGER assets_place_count_delete AFTER DELETE ON assets
                WHEN old.place_id IS NOT NULL AND old.is_hidden = 0 AND old.deleted_at IS NULL BEGIN
                UPDATE place_counts SET assets = assets - 1 WHERE place_id = old.place_id;
            END;
            CREATE VIEW asset_words_source AS
                SELECT pk, \(SearchSQL.name("path")) AS name, keywords, \(SearchSQL.camera("")) AS camera FROM assets;
            CREATE VIRTUAL TABLE asset_words USING fts5(name, keywords, camera, content = 'asset_words_source',
                content_rowid = 'pk', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO asset_words (asset_words) VALUES ('rebuild');
            CREATE TRIGGER assets_words_insert AFTER INSERT ON assets BEGIN
                INSERT INTO asset_words (rowid, name, keywords, camera)
                VALUES (new.pk, \(SearchSQL.name("new.path")), new.keywords, \(SearchSQL.camera("new.")));
            END;
            CREATE TRIGGER assets_words_update AFTER UPDATE OF path, keywords, make, model, lens_model ON assets
                WHEN old.path IS NOT new.path OR old.keywords IS NOT new.keywords OR old.make IS NOT new.make
                  OR old.model IS NOT new.model OR old.lens_model IS NOT new.lens_model BEGIN
                INSERT INTO asset_words (asset_words, rowid, name, keywords, camera)
                VALUES ('delete', old.pk, \(SearchSQL.name("old.path")), old.keywords, \(SearchSQL.camera("old.")));
                INSERT INTO asset_words (rowid, name, keywords, camera)
                VALUES (new.pk, \(SearchSQL.name("new.path")), new.keywords, \(SearchSQL.camera("new.")));
            END;
            CREATE TRIGGER assets_words_delete AFTER DELETE ON assets BEGIN
                INSERT INTO asset_words (asset_words, rowid, name, keywords, camera)
                VALUES ('delete', old.pk, \(SearchSQL.name("old.path")), old.keywords, \(SearchSQL.camera("old.")));
            END;
            -- A folder's words: its path below its root (so a folder finds the assets of the
            -- folders in it too); rowid = directories.id.
            CREATE VIRTUAL TABLE folder_words USING fts5(words, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO folder_words (rowid, words) SELECT d.id, \(SearchSQL.folder("d")) FROM directories d;
            CREATE TRIGGER directories_words_insert AFTER INSERT ON directories BEGIN
                INSERT INTO folder_words (rowid, words) VALUES (new.id, \(SearchSQL.folder("new")));
            END;
            CREATE TRIGGER directories_words_update AFTER UPDATE OF path, root_id ON directories BEGIN
                DELETE FROM folder_words WHERE rowid = old.id;
                INSERT INTO folder_words (rowid, words) VALUES (new.id, \(SearchSQL.folder("new")));
            END;
            CREATE TRIGGER directories_words_delete AFTER DELETE ON directories BEGIN
                DELETE FROM folder_words WHERE rowid = old.id;
            END;
            -- A place's names; rowid = places.id (places are only ever added).
            CREATE VIRTUAL TABLE place_words USING fts5(city, sub_location, near, region, country,
                tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO place_words (rowid, city, sub_location, near, region, country)
                SELECT id, city, sub_location, near, region, country FROM places;
            CREATE TRIGGER places_words_insert AFTER INSERT ON places BEGIN
                INSERT INTO place_words (rowid, city, sub_location, near, region, country)
                VALUES (new.id, new.city, new.sub_location, new.near, new.region, new.country);
            END;
            -- The taggers' keywords, each once, while an asset has it.
            CREATE VIRTUAL TABLE keyword_words USING fts5(keyword, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO keyword_words (keyword) SELECT min(keyword) FROM asset_keywords GROUP BY keyword;
            CREATE TRIGGER asset_keywords_words_insert AFTER INSERT ON asset_keywords
                WHEN (SELECT count(*) FROM asset_keywords WHERE keyword = new.keyword) = 1 BEGIN
                INSERT INTO keyword_words (keyword) VALUES (new.keyword);
            END;
            CREATE TRIGGER asset_keywords_words_delete AFTER DELETE ON asset_keywords
                WHEN NOT EXISTS (SELECT 1 FROM asset_keywords WHERE keyword = old.keyword) BEGIN
                DELETE FROM keyword_words WHERE keyword = old.keyword COLLATE NOCASE;
            END;
            -- User albums' titles, by album id.
            CREATE VIRTUAL TABLE album_words USING fts5(id UNINDEXED, title, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO album_words (id, title) SELECT id, title FROM user_albums;
            CREATE TRIGGER user_albums_words_insert AFTER INSERT ON user_albums BEGIN
                INSERT INTO album_words (id, title) VALUES (new.id, new.title);
            END;
            CREATE TRIGGER user_albums_words_update AFTER UPDATE OF title ON user_albums BEGIN
                DELETE FROM album_words WHERE id = old.id;
                INSERT INTO album_words (id, title) VALUES (new.id, new.title);
            END;
            CREATE TRIGGER user_albums_words_delete AFTER DELETE ON user_albums BEGIN
                DELETE FROM album_words WHERE id = old.id;
            END;
            -- Moments' titles and cities (`collections.search`); rowid = moments.day.
            CREATE VIRTUAL TABLE moment_words USING fts5(title, location_names, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO moment_words (rowid, title, location_names) SELECT day, title, location_names FROM moments;
            CREATE TRIGGER moments_words_insert AFTER INSERT ON moments BEGIN
                INSERT INTO moment_words (rowid, title, location_names) VALUES (new.day, new.title, new.location_names);
            END;
            CREATE TRIGGER moments_words_update AFTER UPDATE OF title, location_names ON moments
                WHEN old.title IS NOT new.title OR old.location_names IS NOT new.location_names BEGIN
                DELETE FROM moment_words WHERE rowid = old.day;
                INSERT INTO moment_words (rowid, title, location_names) VALUES (new.day, new.title, new.location_names);
            END;
            CREATE TRIGGER moments_words_delete AFTER DELETE ON moments BEGIN
                DELETE FROM moment_words WHERE rowid = old.day;
            END;
            """),
        Migration(name: "013_trash", sql: """
            -- The hidden name (`TrashName`) a file of an asset in Recently Deleted was given by
            -- `assets.trash` in its own directory: `assets.restore` renames it back,
            -- `assets.deletePermanently` and the retention purge unlink it. Null for files
            -- deleted by someone else.
            ALTER TABLE tombstones ADD COLUMN trashed_name BLOB;
            -- A tombstone by its place (the trash marks the ones it makes) and the trashed names
            -- of a folder (a walk's look for trashed files it does not know).
            CREATE INDEX tombstones_place ON tombstones(directory_path, name);
            CREATE INDEX tombstones_trashed ON tombstones(directory_path, trashed_name) WHERE trashed_name IS NOT NULL;
            -- The renames of a trash or restore call under way, written (durably) before the
            -- first and deleted in the transaction that commits them: after a crash between the
            -- two, the next start renames back what was renamed, so that the library and the
            -- index agree (`TrashRecovery`).
            CREATE TABLE trash_pending (
                root BLOB NOT NULL,
                directory BLOB NOT NULL,
                name BLOB NOT NULL,
                hidden BLOB NOT NULL,
                inode INTEGER NOT NULL,
                restoring INTEGER NOT NULL
            ) STRICT;
            """),
        Migration(name: "014_asset_indexes_per_transaction", sql: """
            -- An inserted asset's words (`asset_words`), coordinates (`asset_locations`) and
            -- place count (`place_counts`) are written once per transaction, for every asset it
            -- inserted, by one statement each (`AssetRows.indexInserted`, the writer's last step
            -- before its change set), not by a trigger per row: SQLite's FTS5 writes its pending
            -- words out at every statement's savepoint, and the R*Tree drops its node handle, so
            -- per row they cost the writer more than the asset's own row. Until then its pk is in
            -- `assets_unindexed`; the triggers that change or remove an asset's words,
            -- coordinates or place count leave such a row to that step (it reads the row as it
            -- is then). One trigger does all of a delete's, in order.
            CREATE TABLE assets_unindexed (pk INTEGER PRIMARY KEY) STRICT;
            DROP TRIGGER assets_words_insert;
            DROP TRIGGER assets_location_insert;
            DROP TRIGGER assets_place_count_insert;
            CREATE TRIGGER assets_unindexed_insert AFTER INSERT ON assets BEGIN
                INSERT INTO assets_unindexed (pk) VALUES (new.pk);
            END;
            DROP TRIGGER assets_words_update;
            CREATE TRIGGER assets_words_update AFTER UPDATE OF path, keywords, make, model, lens_model ON assets
                WHEN (old.path IS NOT new.path OR old.keywords IS NOT new.keywords OR old.make IS NOT new.make
                      OR old.model IS NOT new.model OR old.lens_model IS NOT new.lens_model)
                  AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
                INSERT INTO asset_words (asset_words, rowid, name, keywords, camera)
                VALUES ('delete', old.pk, \(SearchSQL.name("old.path")), old.keywords, \(SearchSQL.camera("old.")));
                INSERT INTO asset_words (rowid, name, keywords, camera)
                VALUES (new.pk, \(SearchSQL.name("new.path")), new.keywords, \(SearchSQL.camera("new.")));
            END;
            DROP TRIGGER assets_words_delete;
            DROP TRIGGER assets_place_count_delete;
            CREATE TRIGGER assets_indexes_delete AFTER DELETE ON assets BEGIN
                INSERT INTO asset_words (asset_words, rowid, name, keywords, camera)
                SELECT 'delete', old.pk, \(SearchSQL.name("old.path")), old.keywords, \(SearchSQL.camera("old."))
                    WHERE NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                UPDATE place_counts SET assets = assets - 1
                    WHERE place_id = old.place_id AND old.is_hidden = 0 AND old.deleted_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                DELETE FROM assets_unindexed WHERE pk = old.pk;
            END;
            DROP TRIGGER assets_place_count_update;
            CREATE TRIGGER assets_place_count_update AFTER UPDATE OF place_id, is_hidden, deleted_at ON assets
                WHEN (old.place_id IS NOT new.place_id OR (old.is_hidden = 0 AND old.deleted_at IS NULL)
                      IS NOT (new.is_hidden = 0 AND new.deleted_at IS NULL))
                  AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
                UPDATE place_counts SET assets = assets - 1
                    WHERE place_id = old.place_id AND old.is_hidden = 0 AND old.deleted_at IS NULL;
                INSERT INTO place_counts (place_id, assets) SELECT new.place_id, 1
                    WHERE new.place_id IS NOT NULL AND new.is_hidden = 0 AND new.deleted_at IS NULL
                    ON CONFLICT (place_id) DO UPDATE SET assets = assets + 1;
            END;
            DROP TRIGGER assets_location_update;
            CREATE TRIGGER assets_location_update AFTER UPDATE OF latitude, longitude ON assets
                WHEN (old.latitude IS NOT new.latitude OR old.longitude IS NOT new.longitude)
                  AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
                DELETE FROM asset_locations WHERE id = old.pk;
                INSERT INTO asset_locations SELECT new.pk, new.latitude, new.latitude, new.longitude, new.longitude
                    WHERE new.latitude IS NOT NULL AND new.longitude IS NOT NULL;
            END;
            """),
        Migration(name: "015_locations_by_btree", sql: """
            -- Coordinates are found by a B-tree index on the asset row (a latitude band, then the
            -- longitudes in the index entries), not an R*Tree: an R*Tree insert cost the writer
            -- ~4 µs a file of a first index (10 % of its time), an index entry is part of the
            -- row's insert, and a box or circle the gallery asks for is a few latitude ranges.
            DROP TRIGGER assets_location_update;
            DROP TRIGGER assets_location_delete;
            DROP TABLE asset_locations;
            CREATE INDEX assets_location ON assets(latitude, longitude)
                WHERE latitude IS NOT NULL AND longitude IS NOT NULL;
            """),
        Migration(name: "016_moment_place_tally", sql: """
            -- A moment's visible assets by place as its title was last made from them: place ids
            -- and counts ("12:40,15:2", ids ascending; "" for none, as a new moment starts), NULL
            -- when not counted (the moments of a database from before this migration). A job
            -- that only adds assets to a day adds their places to it rather than counting the
            -- day's assets again (`PlaceRows.retitle`): a first index added every batch's day.
            ALTER TABLE moments ADD COLUMN place_tally TEXT;
            """),
        Migration(name: "017_delete_pending", sql: """
            -- The assets in Recently Deleted whose trashed files a delete for good (or the
            -- retention purge) is about to unlink, written (durably) before the first unlink and
            -- deleted in the transaction that purges them: after a stop between the two, the next
            -- start finishes the delete (`TrashRecovery`), so that no asset stays in Recently
            -- Deleted with its files unlinked.
            CREATE TABLE delete_pending (asset_pk INTEGER PRIMARY KEY) STRICT;
            """),
        Migration(name: "018_content_adoptions", sql: """
            -- A file that took an asset by its content (a tombstone matched by size and
            -- fingerprint: a copy back from a backup, the copy of a move across file systems),
            -- with the identity of the file it stood in for. When that file itself turns up again
            -- (a folder renamed while a walk went by looked removed for a moment), it takes its
            -- asset back and the copy becomes an asset of its own (`FileRows.reclaim`). Kept 30 days.
            CREATE TABLE content_adoptions (
                file_pk INTEGER PRIMARY KEY,
                asset_pk INTEGER NOT NULL,
                fsid INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                adopted_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX content_adoptions_identity ON content_adoptions(inode, fsid);
            """),
        Migration(name: "019_search_join", sql: """
            -- Each folder's assets with their place, and each place's with their folder, in the
            -- capture-order indexes' entries: a search of several common words reads one word's
            -- folders and places and tells from the entries alone which assets the others match
            -- (`SearchJoin`; "Berlin 2020" read every match of both words, ~400,000 at 1,000,000
            -- assets). A trailing column: the entries keep their order, two bytes or so more.
            DROP INDEX assets_directory;
            CREATE INDEX assets_directory ON assets(directory_id, local_datetime, place_id);
            DROP INDEX assets_place;
            CREATE INDEX assets_place ON assets(place_id, local_datetime, is_hidden, deleted_at, directory_id)
                WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;
            """),
        Migration(name: "020_moment_words_per_transaction", sql: """
            -- A moment's words (`moment_words`) are written once per transaction for every
            -- moment it inserted, retitled or deleted, by `CollectionRows.indexMoments` (the
            -- writer's last step with `AssetRows.indexInserted`), as migration 014 did for the
            -- assets' words: a retitle per day and batch deleted and inserted its FTS5 row by a
            -- trigger, and FTS5 wrote a segment at each statement's end (~120,000 instructions
            -- a retitle). Until then its day is in `moments_unindexed`. The cities are indexed
            -- without their counts (before, "12" found the moments with 12 photos of a city), so
            -- a retitle that changes only counts changes no words: `PlaceRows.retitle`, the one
            -- writer of titles and cities, puts the day there itself when its words change.
            CREATE TABLE moments_unindexed (day INTEGER PRIMARY KEY) STRICT;
            DROP TRIGGER moments_words_insert;
            DROP TRIGGER moments_words_update;
            DROP TRIGGER moments_words_delete;
            CREATE TRIGGER moments_unindexed_insert AFTER INSERT ON moments BEGIN
                INSERT OR IGNORE INTO moments_unindexed (day) VALUES (new.day);
            END;
            CREATE TRIGGER moments_unindexed_delete AFTER DELETE ON moments BEGIN
                INSERT OR IGNORE INTO moments_unindexed (day) VALUES (old.day);
            END;
            DELETE FROM moment_words;
            \(SearchSQL.momentWords(days: "SELECT day FROM moments"));
            """),
        Migration(name: "021_cameras", sql: """
            -- Cameras are search groups, as places and folders are: a row per make, model and
            -- lens (absent parts as ""), made by the writer the first time an asset has it
            -- (`CameraRows`), its words in `camera_words`, its visible assets counted in
            -- `camera_counts` and found in capture order by `assets_camera`. A camera's words
            -- were in every asset's own words (`asset_words`' camera column, 72 % of its
            -- postings): "apple" read 270,913 of them at 1,000,000 assets (30 ms), "Berlin apple"
            -- every match of both words; now a camera word is a few groups (`SearchGroups`) and
            -- a join's condition on the index entries (`SearchJoin`), which carry each asset's
            -- camera (a trailing column: the entries keep their order).
            CREATE TABLE cameras (
                id INTEGER PRIMARY KEY,
                make TEXT NOT NULL,
                model TEXT NOT NULL,
                lens_model TEXT NOT NULL,
                UNIQUE (make, model, lens_model)
            ) STRICT;
            INSERT INTO cameras (make, model, lens_model)
                SELECT DISTINCT coalesce(make, ''), coalesce(model, ''), coalesce(lens_model, '') FROM assets
                WHERE coalesce(make, model, lens_model) IS NOT NULL;
            CREATE VIRTUAL TABLE camera_words USING fts5(words, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO camera_words (rowid, words) SELECT id, \(SearchSQL.cameraWords("")) FROM cameras;
            CREATE TRIGGER cameras_words_insert AFTER INSERT ON cameras BEGIN
                INSERT INTO camera_words (rowid, words) VALUES (new.id, \(SearchSQL.cameraWords("new.")));
            END;
            ALTER TABLE assets ADD COLUMN camera_id INTEGER;
            UPDATE assets SET camera_id = (SELECT c.id FROM cameras c WHERE c.make = coalesce(assets.make, '')
                    AND c.model = coalesce(assets.model, '') AND c.lens_model = coalesce(assets.lens_model, ''))
                WHERE coalesce(make, model, lens_model) IS NOT NULL;
            CREATE TABLE camera_counts (
                camera_id INTEGER PRIMARY KEY,
                assets INTEGER NOT NULL
            ) STRICT;
            INSERT INTO camera_counts (camera_id, assets) SELECT camera_id, count(*) FROM assets
                WHERE camera_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY camera_id;
            CREATE TRIGGER assets_camera_count_update AFTER UPDATE OF camera_id, is_hidden, deleted_at ON assets
                WHEN (old.camera_id IS NOT new.camera_id OR (old.is_hidden = 0 AND old.deleted_at IS NULL)
                      IS NOT (new.is_hidden = 0 AND new.deleted_at IS NULL))
                  AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
                UPDATE camera_counts SET assets = assets - 1
                    WHERE camera_id = old.camera_id AND old.is_hidden = 0 AND old.deleted_at IS NULL;
                INSERT INTO camera_counts (camera_id, assets) SELECT new.camera_id, 1
                    WHERE new.camera_id IS NOT NULL AND new.is_hidden = 0 AND new.deleted_at IS NULL
                    ON CONFLICT (camera_id) DO UPDATE SET assets = assets + 1;
            END;
            -- The asset's own words without its camera.
            DROP TRIGGER assets_words_update;
            DROP TRIGGER assets_indexes_delete;
            DROP TABLE asset_words;
            DROP VIEW asset_words_source;
            CREATE VIEW asset_words_source AS SELECT pk, \(SearchSQL.name("path")) AS name, keywords FROM assets;
            CREATE VIRTUAL TABLE asset_words USING fts5(name, keywords, content = 'asset_words_source',
                content_rowid = 'pk', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO asset_words (asset_words) VALUES ('rebuild');
            CREATE TRIGGER assets_words_update AFTER UPDATE OF path, keywords ON assets
                WHEN (old.path IS NOT new.path OR old.keywords IS NOT new.keywords)
                  AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
                INSERT INTO asset_words (asset_words, rowid, name, keywords)
                VALUES ('delete', old.pk, \(SearchSQL.name("old.path")), old.keywords);
                INSERT INTO asset_words (rowid, name, keywords) VALUES (new.pk, \(SearchSQL.name("new.path")), new.keywords);
            END;
            CREATE TRIGGER assets_indexes_delete AFTER DELETE ON assets BEGIN
                INSERT INTO asset_words (asset_words, rowid, name, keywords)
                SELECT 'delete', old.pk, \(SearchSQL.name("old.path")), old.keywords
                    WHERE NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                UPDATE place_counts SET assets = assets - 1
                    WHERE place_id = old.place_id AND old.is_hidden = 0 AND old.deleted_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                UPDATE camera_counts SET assets = assets - 1
                    WHERE camera_id = old.camera_id AND old.is_hidden = 0 AND old.deleted_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                DELETE FROM assets_unindexed WHERE pk = old.pk;
            END;
            DROP INDEX assets_directory;
            CREATE INDEX assets_directory ON assets(directory_id, local_datetime, place_id, camera_id);
            DROP INDEX assets_place;
            CREATE INDEX assets_place ON assets(place_id, local_datetime, is_hidden, deleted_at, directory_id, camera_id)
                WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;
            CREATE INDEX assets_camera ON assets(camera_id, local_datetime, is_hidden, deleted_at, directory_id, place_id)
                WHERE camera_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;
            """),
        Migration(name: "022_group_counts", sql: """
            -- The visible assets of each folder, place and camera together (0 for no place or
            -- camera), kept as `place_counts` and `camera_counts` are: where a word's folders,
            -- places and cameras meet is a sum over these rows (41,466 at 1,000,000 assets, ~5 ms)
            -- instead of a count over the smaller side's index entries, which sent "b"* (13
            -- places, 446 folders, 3 cameras) to the pass over every match (73 ms).
            CREATE TABLE group_counts (
                directory_id INTEGER NOT NULL,
                place_id INTEGER NOT NULL,
                camera_id INTEGER NOT NULL,
                assets INTEGER NOT NULL,
                PRIMARY KEY (directory_id, place_id, camera_id)
            ) STRICT, WITHOUT ROWID;
            INSERT INTO group_counts (directory_id, place_id, camera_id, assets)
                SELECT directory_id, coalesce(place_id, 0), coalesce(camera_id, 0), count(*) FROM assets
                WHERE is_hidden = 0 AND deleted_at IS NULL AND pk NOT IN (SELECT pk FROM assets_unindexed)
                GROUP BY 1, 2, 3;
            CREATE TRIGGER assets_group_count_update AFTER UPDATE OF directory_id, place_id, camera_id, is_hidden, deleted_at ON assets
                WHEN (old.directory_id IS NOT new.directory_id OR old.place_id IS NOT new.place_id
                      OR old.camera_id IS NOT new.camera_id OR (old.is_hidden = 0 AND old.deleted_at IS NULL)
                      IS NOT (new.is_hidden = 0 AND new.deleted_at IS NULL))
                  AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
                \(SearchSQL.groupCountDown)
                INSERT INTO group_counts (directory_id, place_id, camera_id, assets)
                    SELECT new.directory_id, coalesce(new.place_id, 0), coalesce(new.camera_id, 0), 1
                    WHERE new.is_hidden = 0 AND new.deleted_at IS NULL
                    ON CONFLICT DO UPDATE SET assets = assets + 1;
            END;
            DROP TRIGGER assets_indexes_delete;
            CREATE TRIGGER assets_indexes_delete AFTER DELETE ON assets BEGIN
                INSERT INTO asset_words (asset_words, rowid, name, keywords)
                SELECT 'delete', old.pk, \(SearchSQL.name("old.path")), old.keywords
                    WHERE NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                UPDATE place_counts SET assets = assets - 1
                    WHERE place_id = old.place_id AND old.is_hidden = 0 AND old.deleted_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                UPDATE camera_counts SET assets = assets - 1
                    WHERE camera_id = old.camera_id AND old.is_hidden = 0 AND old.deleted_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
                \(SearchSQL.groupCountDown)
                DELETE FROM assets_unindexed WHERE pk = old.pk;
            END;
            """),
        Migration(name: "023_word_prefixes", sql: """
            -- The asset's own words keep an index of their first one and two letters (FTS5's
            -- `prefix = '1 2'`): a prefix of one or two letters, as one starts typing, is one
            -- list to read instead of every word that begins so merged ("20"* is every date in
            -- a file name: 279,263 matches at 1,000,000 assets, 62 -> 24 ms; "2"* 81 -> 29; "d"*
            -- 90 -> 48). 18 bytes an asset, ~1 µs of the writer's time a file.
            DROP TABLE asset_words;
            CREATE VIRTUAL TABLE asset_words USING fts5(name, keywords, content = 'asset_words_source',
                content_rowid = 'pk', columnsize = 0, prefix = '1 2', tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO asset_words (asset_words) VALUES ('rebuild');
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
    /// database made by a newer photod. Returns the version it found.
    @discardableResult
    static func migrate(_ db: Connection) throws(StoreError) -> Int {
        let version = try checkVersion(db)
        for (index, migration) in migrations.enumerated() where index >= version {
            do throws(StoreError) {
                try db.transaction { () throws(StoreError) in
                    try db.execute(migration.sql)
                    try db.execute("PRAGMA user_version = \(index + 1)")
                }
            } catch {
                throw StoreError(code: error.code, message: "migration \(migration.name) failed: \(error.message)",
                                 sql: error.sql, sqliteCode: error.sqliteCode)
            }
        }
        return version
    }
}

/// The SQL expressions the search's word lists are made of, written once for the view and the
/// triggers (an external-content FTS5 row is deleted with exactly the text it was given).
enum SearchSQL {
    /// The last component of a path (bytes, read as text): what follows its last '/'.
    static func name(_ path: String) -> String {
        let text = "CAST(\(path) AS TEXT)"
        return "substr(\(text), length(rtrim(\(text), replace(\(text), '/', ''))) + 1)"
    }

    /// One fewer visible asset in `old`'s folder, place and camera (`group_counts`, migration
    /// 022), the row gone at none; for a trigger on `assets` (an asset not yet indexed has none).
    static let groupCountDown = """
        UPDATE group_counts SET assets = assets - 1
            WHERE directory_id = old.directory_id AND place_id = coalesce(old.place_id, 0)
              AND camera_id = coalesce(old.camera_id, 0) AND old.is_hidden = 0 AND old.deleted_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
        DELETE FROM group_counts
            WHERE directory_id = old.directory_id AND place_id = coalesce(old.place_id, 0)
              AND camera_id = coalesce(old.camera_id, 0) AND assets = 0;
        """

    /// The words of the `cameras` row `prefix` names (`new.`, or none): make, model and lens.
    static func cameraWords(_ prefix: String) -> String {
        "\(prefix)make || ' ' || \(prefix)model || ' ' || \(prefix)lens_model"
    }

    /// Make, model and lens of the row `prefix` names (`new.`, `old.`, or none): a camera's
    /// words as the asset's own (`asset_words` before migration 021).
    static func camera(_ prefix: String) -> String {
        "coalesce(\(prefix)make, '') || ' ' || coalesce(\(prefix)model, '') || ' ' || coalesce(\(prefix)lens_model, '')"
    }

    /// Writes the `moment_words` rows of the moments whose days `days` (a query) selects, for
    /// those with a title or cities: the title, and the cities of `moments.location_names`
    /// (`MomentPlaces`) without their counts, each followed by U+001F.
    static func momentWords(days: String) -> String {
        """
        WITH RECURSIVE cities(day, title, rest, names) AS (
            SELECT day, title, location_names || char(31), '' FROM moments
                WHERE day IN (\(days)) AND location_names IS NOT NULL
            UNION ALL
            SELECT day, title, substr(rest, instr(rest, char(31)) + 1),
                   names || substr(rest, 1, instr(rest, char(30)) - 1) || char(31)
                FROM cities WHERE rest != ''
        )
        INSERT INTO moment_words (rowid, title, location_names)
            SELECT day, title, names FROM cities WHERE rest = ''
            UNION ALL
            SELECT day, title, NULL FROM moments WHERE day IN (\(days)) AND location_names IS NULL AND title IS NOT NULL
        """
    }

    /// A directory's path below its root, as text ('' for the root itself).
    static func folder(_ row: String) -> String {
        "CAST(substr(\(row).path, (SELECT length(r.path) FROM roots r WHERE r.id = \(row).root_id) + 2) AS TEXT)"
    }
}
