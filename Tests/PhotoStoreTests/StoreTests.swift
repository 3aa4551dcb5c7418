import Foundation
import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

@Suite("Index store")
struct StoreTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory("store") }

    func open(_ name: String = "index.db") throws -> Database {
        try Database(path: dir(name).string)
    }

    static let root = PathBytes("/lib")

    func assets(_ db: Database) throws -> [Asset] { try db.read { try $0.assets(limit: 1000, offset: 0) } }

    @Test("A new database is migrated to the current schema")
    func migrates() throws {
        defer { dir.remove() }
        let db = try open()
        let version = try db.read { try $0.connection.scalar("PRAGMA user_version").int64 }
        #expect(version == Int64(Schema.currentVersion))
        let mode = try db.read { try $0.connection.scalar("PRAGMA journal_mode").string }
        #expect(mode == "wal")
    }

    @Test("A group's files are found by a range of names: its key, the key and a dot; not IMG_1-2 or IMG_10")
    func groupByName() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([Self.root]) }
        let names = ["IMG_1", "IMG_1.JPG", "IMG_1.CR2", "IMG_1.JPG.xmp", "IMG_1-2.jpg", "IMG_10.jpg", "IMG_1 copy.jpg", "IMG_.jpg",
                     "IMG_1.2.jpg"]
        _ = try db.write {
            try $0.apply(Make.batch(names.enumerated().map { i, name in
                Make.outcome("/lib/a/" + name, inode: UInt64(i + 1), .media(Make.media(date: "2020-05-01T10:00:0\(i)")))
            }), now: 1)
        }
        func group(_ key: String) throws -> [String] {
            try db.read { try $0.group(directory: PathBytes("/lib/a"), key: Array(key.utf8)) }
                .map { String(decoding: $0.name, as: UTF8.self) }.sorted()
        }
        #expect(try group("IMG_1") == ["IMG_1", "IMG_1.CR2", "IMG_1.JPG", "IMG_1.JPG.xmp"])
        #expect(try group("IMG_1.2") == ["IMG_1.2.jpg"])
        #expect(try group("IMG_1-2") == ["IMG_1-2.jpg"])
        #expect(try group("IMG_10") == ["IMG_10.jpg"])
        #expect(try group("IMG_1 copy") == ["IMG_1 copy.jpg"])
        #expect(try group("IMG_") == ["IMG_.jpg"])
        // Every name lies in its own group's range.
        for name in names {
            let key = ResourcePairing.groupKey(of: Array(name.utf8))
            #expect(!Array(name.utf8).lexicographicallyPrecedes(key), "\(name)")
            #expect(Array(name.utf8).lexicographicallyPrecedes(ResourcePairing.groupNamesEnd(key)), "\(name)")
        }
        let plan = try db.read { r in
            let s = try r.connection.statement("""
                EXPLAIN QUERY PLAN SELECT name FROM files WHERE directory_id = 1 AND name >= x'41' AND name < x'42'
                """)
            defer { s.reset() }
            var details: [String] = []
            while try s.step() { details.append(s.string(3)) }
            return details
        }
        #expect(plan.contains { $0.contains("sqlite_autoindex_files_1 (directory_id=? AND name>? AND name<?)") }, "\(plan)")
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'files_group'").int64 } == 0)
    }

    /// The database as version 22 left it: migration 023 undone (no index of the asset's own
    /// words' first one and two letters).
    static let withoutWordPrefixes = """
        DROP TABLE asset_words;
        CREATE VIRTUAL TABLE asset_words USING fts5(name, keywords, content = 'asset_words_source',
            content_rowid = 'pk', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2');
        INSERT INTO asset_words (asset_words) VALUES ('rebuild');

        """

    /// The database as version 21 left it: migration 022 undone (no counts of folder, place and
    /// camera together).
    static let withoutGroupCounts = withoutWordPrefixes + """
        DROP TRIGGER assets_group_count_update; DROP TABLE group_counts;
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
            DELETE FROM assets_unindexed WHERE pk = old.pk;
        END;

        """

    /// The database as version 20 left it: migration 021 undone (no cameras; a camera's words
    /// among the asset's own, `asset_words`' third column).
    static let withoutCameras = withoutGroupCounts + """
        DROP INDEX assets_camera;
        DROP INDEX assets_directory;
        CREATE INDEX assets_directory ON assets(directory_id, local_datetime, place_id);
        DROP INDEX assets_place;
        CREATE INDEX assets_place ON assets(place_id, local_datetime, is_hidden, deleted_at, directory_id)
            WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;
        DROP TRIGGER assets_camera_count_update; DROP TRIGGER assets_words_update; DROP TRIGGER assets_indexes_delete;
        DROP TABLE camera_counts;
        ALTER TABLE assets DROP COLUMN camera_id;
        DROP TRIGGER cameras_words_insert; DROP TABLE camera_words; DROP TABLE cameras;
        DROP TABLE asset_words; DROP VIEW asset_words_source;
        CREATE VIEW asset_words_source AS
            SELECT pk, \(SearchSQL.name("path")) AS name, keywords, \(SearchSQL.camera("")) AS camera FROM assets;
        CREATE VIRTUAL TABLE asset_words USING fts5(name, keywords, camera, content = 'asset_words_source',
            content_rowid = 'pk', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2');
        INSERT INTO asset_words (asset_words) VALUES ('rebuild');
        CREATE TRIGGER assets_words_update AFTER UPDATE OF path, keywords, make, model, lens_model ON assets
            WHEN (old.path IS NOT new.path OR old.keywords IS NOT new.keywords OR old.make IS NOT new.make
                  OR old.model IS NOT new.model OR old.lens_model IS NOT new.lens_model)
              AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
            INSERT INTO asset_words (asset_words, rowid, name, keywords, camera)
            VALUES ('delete', old.pk, \(SearchSQL.name("old.path")), old.keywords, \(SearchSQL.camera("old.")));
            INSERT INTO asset_words (rowid, name, keywords, camera)
            VALUES (new.pk, \(SearchSQL.name("new.path")), new.keywords, \(SearchSQL.camera("new.")));
        END;
        CREATE TRIGGER assets_indexes_delete AFTER DELETE ON assets BEGIN
            INSERT INTO asset_words (asset_words, rowid, name, keywords, camera)
            SELECT 'delete', old.pk, \(SearchSQL.name("old.path")), old.keywords, \(SearchSQL.camera("old."))
                WHERE NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
            UPDATE place_counts SET assets = assets - 1
                WHERE place_id = old.place_id AND old.is_hidden = 0 AND old.deleted_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk);
            DELETE FROM assets_unindexed WHERE pk = old.pk;
        END;

        """

    /// The database as version 19 left it: migration 020 undone (a moment's words written by a
    /// trigger per row, its cities with their counts).
    static let withoutMomentWordsPerTransaction = withoutCameras + """
        DROP TRIGGER moments_unindexed_insert; DROP TRIGGER moments_unindexed_delete;
        DROP TABLE moments_unindexed;
        DELETE FROM moment_words;
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

        """

    /// The database as version 18 left it: migration 019's index columns undone.
    static let withoutSearchJoin = withoutMomentWordsPerTransaction + """
        DROP INDEX assets_directory;
        CREATE INDEX assets_directory ON assets(directory_id, local_datetime);
        DROP INDEX assets_place;
        CREATE INDEX assets_place ON assets(place_id, local_datetime, is_hidden, deleted_at)
            WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;

        """

    /// The database as version 17 left it: migration 018's table undone.
    static let withoutContentAdoptions = withoutSearchJoin + "DROP TABLE content_adoptions;\n"

    /// The database as version 16 left it: migration 017's table undone.
    static let withoutDeletePending = withoutContentAdoptions + "DROP TABLE delete_pending;\n"

    /// The database as version 15 left it: migration 016's kept tallies of places undone.
    static let withoutMomentPlaceTally = withoutDeletePending + "ALTER TABLE moments DROP COLUMN place_tally;\n"

    /// The database as version 14 left it: migration 015's coordinates index undone (the R*Tree
    /// back, filled, with its triggers).
    static let withoutLocationsByBTree = withoutMomentPlaceTally + """
        DROP INDEX assets_location;
        CREATE VIRTUAL TABLE asset_locations USING rtree(id, min_lat, max_lat, min_lon, max_lon);
        INSERT INTO asset_locations SELECT pk, latitude, latitude, longitude, longitude FROM assets
            WHERE latitude IS NOT NULL AND longitude IS NOT NULL;
        CREATE TRIGGER assets_location_update AFTER UPDATE OF latitude, longitude ON assets
            WHEN (old.latitude IS NOT new.latitude OR old.longitude IS NOT new.longitude)
              AND NOT EXISTS (SELECT 1 FROM assets_unindexed WHERE pk = old.pk) BEGIN
            DELETE FROM asset_locations WHERE id = old.pk;
            INSERT INTO asset_locations SELECT new.pk, new.latitude, new.latitude, new.longitude, new.longitude
                WHERE new.latitude IS NOT NULL AND new.longitude IS NOT NULL;
        END;
        CREATE TRIGGER assets_location_delete AFTER DELETE ON assets BEGIN
            DELETE FROM asset_locations WHERE id = old.pk;
        END;

        """

    /// The database as version 13 left it: migration 014's deferred word and coordinate
    /// indexing undone (the triggers per row back).
    static let withoutIndexesPerTransaction = withoutLocationsByBTree + """
        DROP TRIGGER assets_unindexed_insert; DROP TABLE assets_unindexed;
        DROP TRIGGER assets_words_update; DROP TRIGGER assets_indexes_delete; DROP TRIGGER assets_location_update;
        DROP TRIGGER assets_place_count_update;
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

        """

    /// The database as version 12 left it: migration 013's column undone.
    static let withoutTrash = withoutIndexesPerTransaction + "DROP TABLE trash_pending; DROP INDEX tombstones_place; DROP INDEX tombstones_trashed; ALTER TABLE tombstones DROP COLUMN trashed_name;\n"

    /// What migration 012 added, taken away again (a database of version 11, with its search
    /// table back).
    static let withoutSearchSources = withoutTrash + """
        DROP TRIGGER assets_words_insert; DROP TRIGGER assets_words_update; DROP TRIGGER assets_words_delete;
        DROP TRIGGER directories_words_insert; DROP TRIGGER directories_words_update; DROP TRIGGER directories_words_delete;
        DROP TRIGGER places_words_insert; DROP TRIGGER asset_keywords_words_insert; DROP TRIGGER asset_keywords_words_delete;
        DROP TRIGGER user_albums_words_insert; DROP TRIGGER user_albums_words_update; DROP TRIGGER user_albums_words_delete;
        DROP TRIGGER moments_words_insert; DROP TRIGGER moments_words_update; DROP TRIGGER moments_words_delete;
        DROP TABLE asset_words; DROP VIEW asset_words_source;
        DROP TABLE folder_words; DROP TABLE place_words; DROP TABLE keyword_words; DROP TABLE album_words; DROP TABLE moment_words;
        CREATE VIRTUAL TABLE asset_search USING fts5(name, folders, keywords, place, camera,
            tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
        DROP INDEX assets_place;
        CREATE INDEX assets_place ON assets(place_id, local_datetime) WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL;
        DROP TABLE place_counts;
        DROP TRIGGER assets_place_count_insert; DROP TRIGGER assets_place_count_update; DROP TRIGGER assets_place_count_delete;

        """

    /// What migration 011 added, taken away again (a database of version 10).
    static let withoutPlaces = withoutSearchSources + """
        DROP INDEX assets_place; ALTER TABLE assets DROP COLUMN place_id; ALTER TABLE assets DROP COLUMN zone_offset;
        DROP TABLE places; ALTER TABLE files DROP COLUMN file_place; ALTER TABLE tombstones DROP COLUMN file_place;
        ALTER TABLE assets DROP COLUMN file_place; DELETE FROM meta WHERE key LIKE 'places.%';
        ALTER TABLE moments DROP COLUMN title; ALTER TABLE moments DROP COLUMN location_names;
        DROP TRIGGER assets_location_insert; DROP TRIGGER assets_location_update; DROP TRIGGER assets_location_delete;
        DROP TABLE asset_locations; DROP TABLE asset_search;

        """

    static let withoutKeyAssets = withoutPlaces + """
        DROP TABLE collection_keys;
        DROP INDEX assets_favorites_directory; DROP INDEX assets_favorites;
        CREATE INDEX assets_favorites ON assets(pk) WHERE is_favorite != 0;
        DROP INDEX assets_directory; CREATE INDEX assets_directory ON assets(directory_id);
        DELETE FROM meta WHERE key = 'keyAssets';

        """

    /// What migration 009 added, taken away again (a database of an earlier version).
    static let withoutVideoFields = withoutKeyAssets + "DROP INDEX assets_slomo; DROP INDEX assets_timelapses; DROP INDEX assets_animated; DROP INDEX assets_depth;\n"
        + "DROP INDEX assets_burst; DROP INDEX assets_bursts; ALTER TABLE assets DROP COLUMN represents_burst;\n"
        + ["files", "tombstones", "assets"].flatMap { table in
            ["frame_rate", "video_codec", "audio_codec", "bit_rate", "capture_frame_rate", "traits", "burst_id"]
                .map { "ALTER TABLE \(table) DROP COLUMN \($0);" }
        }.joined(separator: "\n") + "\n"

    @Test("Migration 009 adds a video's frame rate, codecs and bit rate to files, tombstones and assets; rows before it read with none")
    func videoFields() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            _ = try db.write { try $0.registerRoots([Self.root]) }
            _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/v/1.mp4", inode: 1, .media(Make.media(date: "2020-05-01T10:00:00")))]), now: 1) }
            _ = try db.write { w in try w.connection.execute(Self.withoutVideoFields + "PRAGMA user_version = 8;") }
        }
        let db = try open()
        #expect(try db.read { try $0.connection.scalar("PRAGMA user_version").int64 } == Int64(Schema.currentVersion))
        let old = try #require(try assets(db).first)
        #expect(old.frameRate == nil && old.videoCodec == nil && old.audioCodec == nil && old.bitRate == nil)
        var video = Make.media(date: "2021-01-01T00:00:00")
        video.mediaType = .video
        video.format = "mp4"
        video.frameRate = 29.97
        video.videoCodec = "hevc"
        video.audioCodec = "aac"
        video.bitRate = 12_345_678
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/v/2.mp4", inode: 2, .media(video))]), now: 2) }
        let new = try #require(try assets(db).first { $0.path == PathBytes("/lib/v/2.mp4") })
        #expect(new.frameRate == 29.97 && new.videoCodec == "hevc" && new.audioCodec == "aac" && new.bitRate == 12_345_678)
        for table in ["files", "tombstones", "assets"] {
            let columns = try db.read { r in
                try r.connection.scalar("SELECT group_concat(name) FROM pragma_table_info('\(table)') WHERE name IN ('frame_rate', 'video_codec', 'audio_codec', 'bit_rate')").string
            }
            #expect(columns?.split(separator: ",").count == 4, "\(table): \(columns ?? "")")
            #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM pragma_table_info('\(table)') WHERE name IN ('capture_frame_rate', 'traits')").int64 } == 2)
        }
    }

    @Test("Migration 005 gives each folder album its first and last capture times, from its visible assets; 006 narrows the capture-order index")
    func albumDates() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            _ = try db.write { try $0.registerRoots([Self.root]) }
            _ = try db.write {
                try $0.apply(Make.batch([Make.outcome("/lib/a/1.jpg", inode: 1, .media(Make.media(date: "2020-05-01T10:00:00"))),
                                         Make.outcome("/lib/a/2.jpg", inode: 2, .media(Make.media(date: "2019-03-01T08:00:00"))),
                                         Make.outcome("/lib/a/3.jpg", inode: 3, .media(Make.media(date: "2021-01-01T00:00:00"))),
                                         Make.outcome("/lib/b/4.jpg", inode: 4, .media(Make.media(date: "2018-07-07T07:07:07")))]), now: 1)
            }
            let hidden = try #require(try assets(db).first { $0.path == PathBytes("/lib/a/3.jpg") }?.id)
            _ = try db.write { try $0.set(.hidden, true, ids: [hidden], now: 2) }
            let albums = try db.read { try $0.folderAlbums() }
            #expect(albums.map { "\($0.start!)…\($0.end!)" } == ["2019-03-01T08:00:00…2020-05-01T10:00:00", "2018-07-07T07:07:07…2018-07-07T07:07:07"])
            // The database as version 4 left it: no date columns, the wide capture-order and day indexes.
            _ = try db.write { w in
                try w.connection.execute("""
                    ALTER TABLE directories DROP COLUMN start_local; ALTER TABLE directories DROP COLUMN end_local;
                    DROP INDEX assets_order;
                    CREATE INDEX assets_order ON assets(local_datetime, path, id);
                    ALTER TABLE files ADD COLUMN group_key BLOB NOT NULL DEFAULT x'';
                    ALTER TABLE files ADD COLUMN capture_instant INTEGER;
                    ALTER TABLE files ADD COLUMN indexed_at INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE tombstones ADD COLUMN capture_instant INTEGER;
                    CREATE INDEX assets_day ON assets(day, local_datetime, path, id);
                    PRAGMA user_version = 4;
                    """ + Self.withoutVideoFields)
            }
        }
        let db = try open()
        #expect(try db.read { try $0.connection.scalar("PRAGMA user_version").int64 } == Int64(Schema.currentVersion))
        let indexSQL = try db.read { r in
            try r.connection.scalar("SELECT group_concat(name || ':' || sql, ';') FROM sqlite_schema WHERE name IN ('assets_order', 'assets_day')").string
        }
        #expect(indexSQL == "assets_order:CREATE INDEX assets_order ON assets(local_datetime)")
        let day = try #require(MomentGrouping.day(ofLocalDate: "2020-05-01"))
        let moment = try #require(try db.read { try $0.assets(in: .moment(day: day), limit: 10, offset: 0, now: 3) })
        #expect(moment.assets.map(\.path) == [PathBytes("/lib/a/1.jpg")] && moment.total == 1)
        let albums = try db.read { try $0.folderAlbums() }
        #expect(albums.map { "\($0.start!)…\($0.end!)" } == ["2019-03-01T08:00:00…2020-05-01T10:00:00", "2018-07-07T07:07:07…2018-07-07T07:07:07"])
        let one = try #require(try db.read { try $0.folderAlbum(id: albums[0].id) })
        #expect(one.start == albums[0].start && one.end == albums[0].end && one.assetCount == 2)
    }

    @Test("Migration 008: rows of version 7 (whole media columns, date sources by name, the wide indexes) read the same, and writes go on")
    func compactFiles() throws {
        defer { dir.remove() }
        let xmp = SidecarFields(date: Timestamp.iso8601("2015-06-07T08:09:10+02:00"), rating: 4, keywords: ["sea"])
        let before: [Asset]
        do {
            let db = try open()
            _ = try db.write { try $0.registerRoots([Self.root]) }
            _ = try db.write {
                try $0.apply(Make.batch([
                    Make.outcome("/lib/a/1.jpg", inode: 1, .media(Make.media(date: "2020-05-01T10:00:00", source: .fileName))),
                    Make.outcome("/lib/a/2.jpg", inode: 2, .media(Make.media(date: "2019-03-01T08:00:00", source: .fileModified))),
                    Make.outcome("/lib/a/2.xmp", inode: 3, .sidecar(xmp)),
                    Make.outcome("/lib/b/3.mov", inode: 4, .media(Make.media(type: .video, format: "mov", source: .quicktime))),
                ]), now: 1)
            }
            before = try assets(db)
            // The database as version 7 left it.
            _ = try db.write { w in
                let names = "WHEN 'O' THEN 'exifOriginal' WHEN 'D' THEN 'exifDigitized' WHEN 'X' THEN 'xmp' WHEN 'I' THEN 'iptc' "
                    + "WHEN 'M' THEN 'exifModified' WHEN 'Q' THEN 'quicktime' WHEN 'N' THEN 'fileName' WHEN 'F' THEN 'fileModified'"
                let columns = "media_type, format, is_raw, local_datetime, utc_offset, date_source, pixel_width, pixel_height, orientation, latitude, longitude, altitude, make, model, lens_model, duration, rating, keywords, user_comment, content_identifier"
                try w.connection.execute("""
                    UPDATE files SET (\(columns)) = (SELECT \(columns) FROM assets a WHERE a.pk = files.asset_pk)
                        WHERE status = 'media' AND media_type IS NULL;
                    UPDATE assets SET date_source = CASE date_source \(names) END;
                    UPDATE files SET date_source = CASE date_source \(names) END WHERE date_source IS NOT NULL;
                    ALTER TABLE files ADD COLUMN group_key BLOB NOT NULL DEFAULT x'';
                    ALTER TABLE files ADD COLUMN capture_instant INTEGER;
                    ALTER TABLE files ADD COLUMN indexed_at INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE tombstones ADD COLUMN capture_instant INTEGER;
                    DROP INDEX assets_order; CREATE INDEX assets_order ON assets(local_datetime, path);
                    DROP INDEX files_identity; CREATE INDEX files_identity ON files(fsid, inode);
                    PRAGMA user_version = 7;
                    """ + Self.withoutVideoFields)
                #expect(try w.connection.scalar("SELECT count(*) FROM files WHERE date_source = 'fileName'").int64 == 1)
            }
        }
        let db = try open()
        #expect(try db.read { try $0.connection.scalar("PRAGMA user_version").int64 } == Int64(Schema.currentVersion))
        #expect(try assets(db) == before)
        let sources = try db.read { try $0.connection.scalar("SELECT group_concat(DISTINCT date_source) FROM (SELECT date_source FROM assets ORDER BY 1)").string }
        #expect(sources == "N,Q,X")
        let schema = try db.read { try $0.connection.scalar("SELECT group_concat(sql, ';') FROM sqlite_schema WHERE name IN ('files', 'assets_order', 'files_identity')").string } ?? ""
        #expect(!schema.contains("group_key") && !schema.contains("capture_instant") && !schema.contains("indexed_at"), "\(schema)")
        #expect(schema.contains("assets_order ON assets(local_datetime)") && schema.contains("files_identity ON files(inode)"), "\(schema)")
        // Whole rows stay valid: a sidecar joins the first photo, the second loses its own.
        var b = Make.batch([Make.outcome("/lib/a/1.xmp", inode: 5, .sidecar(xmp))])
        b.removedFiles = [("/lib/a", Array("2.xmp".utf8))]
        _ = try db.write { try $0.apply(b, now: 2) }
        let after = try assets(db)
        #expect(after.first { $0.path == "/lib/a/1.jpg" }?.captureDate.local.description == "2015-06-07T08:09:10")
        let second = try #require(after.first { $0.path == "/lib/a/2.jpg" })
        #expect(second.captureDate.local.description == "2019-03-01T08:00:00" && second.captureDate.source == .fileModified && second.rating == nil)
    }

    @Test("A second photod on the same database is refused")
    func exclusive() throws {
        defer { dir.remove() }
        let first = try open()
        do throws(StoreError) {
            _ = try Database(path: dir("index.db").string)
            Issue.record("a second writer opened the database")
        } catch {
            #expect(error.code == .locked)
            #expect(error.message.contains("in use by another photod"))
        }
        withExtendedLifetime(first) {}
    }

    @Test("A database from a newer photod is refused, untouched")
    func newerSchema() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            _ = try db.write { w in try w.connection.execute("PRAGMA user_version = 999") }
        }
        // The first database's lock went with its last reference, at the end of the block.
        do throws(StoreError) {
            _ = try Database(path: dir("index.db").string)
            Issue.record("opened a newer database")
        } catch {
            #expect(error.code == .newerSchema)
        }
    }

    @Test("Batches insert, update and remove assets; ids survive updates; counters equal a recount")
    func batches() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([Self.root]) }
        let s1 = try db.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/2020/a.jpg", inode: 1, .media(Make.media())),
                Make.outcome("/lib/2020/b.jpg", inode: 2, .media(Make.media(date: "2019-01-01T00:00:00"))),
                Make.outcome("/lib/2020/readme.txt", inode: 3, .ignored(reason: "text")),
                Make.outcome("/lib/2020/bad.jpg", inode: 4, .error(code: "truncated", message: "ends early")),
            ]), now: 1000)
        }
        #expect(s1.inserted.count == 2)
        #expect(s1.report.errors == 1)
        #expect(s1.token == 1)
        #expect(s1.collectionsInserted.contains("m_20200102"))
        #expect(s1.collectionsInserted.contains("m_20190101"))

        let counts = try db.read { try $0.counts() }
        #expect(counts == (try db.read { try $0.recount() }))
        #expect(counts.assets == 2)
        #expect(counts.files == 4)
        #expect(counts.errors == 1)
        #expect(counts.ignored == 1)
        #expect(counts.directories == 2)

        let page = try assets(db)
        #expect(page.map(\.path.string) == ["/lib/2020/b.jpg", "/lib/2020/a.jpg"])  // by capture time
        let stored = try #require(page.last)
        #expect(stored.captureDate.local.description == "2020-01-02T03:04:05")
        #expect(stored.captureDate.offset?.seconds == 3600)
        #expect(stored.orientation == 6)
        #expect(stored.latitude == -33.5)
        #expect(stored.addedAt == 1000)
        #expect(stored.resources == [Resource(path: PathBytes("/lib/2020/a.jpg"), role: .primary)])

        // Re-reading a changed file keeps its asset id.
        let s2 = try db.write {
            try $0.apply(Make.batch([Make.outcome("/lib/2020/a.jpg", inode: 1, .media(Make.media(date: "2021-01-01T00:00:00")))]),
                         now: 2000)
        }
        #expect(s2.updated == [stored.id])
        #expect(s2.inserted.isEmpty)
        #expect(s2.token == 2)
        #expect(s2.collectionsDeleted == ["m_20200102"])
        #expect(s2.collectionsInserted == ["m_20210101"])
        let updated = try #require(try db.read { try $0.asset(id: stored.id) })
        #expect(updated.captureDate.local.description == "2021-01-01T00:00:00")
        #expect(updated.addedAt == 1000)

        // A file that turns into garbage loses its asset.
        let s3 = try db.write {
            try $0.apply(Make.batch([Make.outcome("/lib/2020/a.jpg", inode: 1, .error(code: "corrupt", message: "x"))]), now: 3000)
        }
        // A file that turns into garbage: its asset goes to Recently Deleted (an update), kept.
        #expect(s3.updated == [stored.id])
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)

        // Removing a subtree removes its assets, its album and its moments.
        var removal = WriteBatch()
        removal.removedDirectories = [PathBytes("/lib/2020")]
        let s4 = try db.write { try $0.apply(removal, now: 4000) }
        #expect(s4.updated.count == 1)  // b.jpg goes to Recently Deleted
        #expect(s4.collectionsDeleted.contains("m_20190101"))
        let after = try db.read { try $0.counts() }
        let recounted = try db.read { try $0.recount() }
        #expect(after == recounted, "kept counters equal a recount, cascades included: \(after) vs \(recounted)")
        #expect(after.assets == 0)
        #expect(after.recentlyDeleted == 2)
        #expect(after.files == 0)
        #expect(after.directories == 1)
        #expect(try db.read { try $0.moments() }.isEmpty)
        // After the retention period they are purged: then they are deleted.
        let s5 = try db.write { try $0.purge(deletedBefore: 5000, now: 5000) }
        #expect(Set(s5.deleted) == [stored.id, page[0].id])
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 0)
        // Every change set is in the journal, in order.
        #expect(try db.read { try $0.changes(after: 0, limit: 100) }.map(\.token) == [1, 2, 3, 4, 5])
    }

    @Test("Subtree removal does not touch siblings that share a name prefix")
    func prefixSiblings() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([Self.root]) }
        let files = ["/lib/a/x.jpg", "/lib/a/b/y.jpg", "/lib/a b/z.jpg", "/lib/a-b/w.jpg", "/lib/ab/v.jpg"].enumerated().map {
            Make.outcome($0.element, inode: UInt64($0.offset + 1), .media(Make.media()))
        }
        _ = try db.write { try $0.apply(Make.batch(files), now: 1) }
        var removal = WriteBatch()
        removal.removedDirectories = [PathBytes("/lib/a")]
        _ = try db.write { try $0.apply(removal, now: 2) }
        #expect(try assets(db).map(\.path.string).sorted() == ["/lib/a b/z.jpg", "/lib/a-b/w.jpg", "/lib/ab/v.jpg"])
    }

    @Test("Paths are stored as bytes: NFC and NFD names are two files, invalid UTF-8 works")
    func bytePaths() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([Self.root]) }
        let nfc = "/lib/Cr\u{E9}mieux.jpg", nfd = "/lib/Cre\u{301}mieux.jpg"
        let invalid = PathBytes(Array("/lib/".utf8) + [0xFF, 0xFE] + Array(".jpg".utf8))
        var raw = Make.outcome("/lib/x.jpg", inode: 3, .media(Make.media()))
        raw.name = invalid.lastComponent
        _ = try db.write {
            try $0.apply(Make.batch([Make.outcome(nfc, inode: 1, .media(Make.media())),
                                     Make.outcome(nfd, inode: 2, .media(Make.media())), raw]), now: 1)
        }
        #expect(Set(try assets(db).map(\.path)) == [PathBytes(nfc), PathBytes(nfd), invalid])
        let snap = try #require(try db.read { try $0.snapshot(of: Self.root) })
        #expect(snap.files.contains { $0.name == invalid.lastComponent })
    }
}

@Suite("Index store, failures")
struct StoreFailureTests {
    @Test("A rolled-back batch leaves no stale directory ids behind")
    func rollbackClearsCache() throws {
        let dir = try TemporaryDirectory("rollback")
        defer { dir.remove() }
        let db = try Database(path: dir("r.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        func file(_ path: String, _ inode: UInt64) -> FileOutcome { Make.outcome(path, inode: inode, .media(Make.media())) }
        #expect(throws: StoreError.self) {
            _ = try db.write { try $0.apply(Make.batch([file("/lib/A/x.jpg", 1), file("/outside/y.jpg", 2)]), now: 1) }
        }
        _ = try db.write { try $0.apply(Make.batch([file("/lib/B/z.jpg", 3)]), now: 2) }
        _ = try db.write { try $0.apply(Make.batch([file("/lib/A/w.jpg", 4)]), now: 3) }
        let assets = try db.read { try $0.assets(limit: 10, offset: 0) }
        for asset in assets { #expect(asset.resources.map(\.path) == [asset.path]) }
        let snapA = try #require(try db.read { try $0.snapshot(of: PathBytes("/lib/A")) })
        #expect(snapA.files.map(\.name) == [Array("w.jpg".utf8)])
        // The failed transaction left no journal row: tokens have no gap.
        #expect(try db.read { try $0.changes(after: 0, limit: 10) }.map(\.token) == [1, 2])
    }
}

@Suite("Index store, counters")
struct CounterTests {
    @Test("Kept counters (global and per root) equal a recount; a drift is repaired at start-up")
    func verify() throws {
        let dir = try TemporaryDirectory("counters")
        defer { dir.remove() }
        let db = try Database(path: dir("c.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/a"), PathBytes("/b")]) }
        _ = try db.write {
            try $0.apply(Make.batch([Make.outcome("/a/1.jpg", inode: 1, .media(Make.media())),
                                     Make.outcome("/a/x/2.jpg", inode: 2, .media(Make.media(type: .video, format: "mp4"))),
                                     Make.outcome("/b/3.jpg", inode: 3, .media(Make.media())),
                                     Make.outcome("/b/n.txt", inode: 4, .ignored(reason: "text"))]), now: 1)
        }
        #expect(try db.read { try $0.assetCountsByRoot() } == [PathBytes("/a"): 2, PathBytes("/b"): 1])
        #expect(try db.verifyCounters() == false)
        _ = try db.write { w in try w.connection.execute("UPDATE counters SET value = value + 5") }
        #expect(try db.verifyCounters() == true)
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
        #expect(try db.read { try $0.assetCountsByRoot() } == [PathBytes("/a"): 2, PathBytes("/b"): 1])
        var removal = WriteBatch()
        removal.removedDirectories = [PathBytes("/a/x")]
        _ = try db.write { try $0.apply(removal, now: 2) }
        #expect(try db.read { try $0.assetCountsByRoot() } == [PathBytes("/a"): 1, PathBytes("/b"): 1])
        #expect(try db.verifyCounters() == false)
        _ = try db.write { try $0.purge(deletedBefore: 10, now: 10) }
        #expect(try db.read { try $0.assetCountsByRoot() } == [PathBytes("/a"): 1, PathBytes("/b"): 1])
        let kept = try db.read { try $0.counts() }, actual = try db.read { try $0.recount() }
        #expect(kept == actual, "\(kept) vs \(actual)")
        #expect(try db.verifyCounters() == false)
    }
}
