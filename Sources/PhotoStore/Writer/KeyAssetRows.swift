import PhotoModel

/// One key asset as the store keeps it where a later merge compares it: its place in the
/// capture order and when it was indexed (Recently Added's order).
struct KeyEntry: Sendable, Hashable {
    var key: MomentMemberKey
    var addedAt: Int64
}

/// The text and bytes key assets are stored as.
enum KeyColumns {
    /// Ids separated by commas (ids never hold one), or NULL for none.
    static func text(_ ids: [AssetID]) -> String? {
        ids.isEmpty ? nil : ids.map(\.rawValue).joined(separator: ",")
    }

    /// Column `col`'s ids, read in place.
    static func ids(_ s: Statement, _ col: Int32) -> [AssetID] {
        s.isNull(col) ? [] : s.withText(col) { ids(utf8: $0) }
    }

    private static func ids(utf8 b: UnsafeBufferPointer<UInt8>) -> [AssetID] {
        var result: [AssetID] = []
        result.reserveCapacity(KeyAssets.limit)
        var start = 0
        for k in 0...b.count where k == b.count || b[k] == UInt8(ascii: ",") {
            if let id = AssetID(utf8: UnsafeBufferPointer(rebasing: b[start..<k])) { result.append(id) }
            start = k + 1
        }
        return result
    }

    /// Entries as `id NUL local NUL addedAt NUL path NUL`, one after another (no field holds a
    /// NUL: a path cannot), or NULL for none.
    static func bytes(_ entries: [KeyEntry]) -> [UInt8]? {
        guard !entries.isEmpty else { return nil }
        var out: [UInt8] = []
        for e in entries {
            out += Array(e.key.id.rawValue.utf8) + [0]
            out += Array(e.key.local.description.utf8) + [0]
            out += Array(String(e.addedAt).utf8) + [0]
            out += e.key.path.bytes + [0]
        }
        return out
    }

    /// Column `col`'s entries, read in place (a collection list's fetch reads thousands).
    static func entries(_ s: Statement, _ col: Int32) -> [KeyEntry] {
        s.isNull(col) ? [] : s.withBlob(col) { entries(blob: $0) }
    }

    /// Column `col`'s entries' ids alone (a moment list needs no more).
    static func entryIDs(_ s: Statement, _ col: Int32) -> [AssetID] {
        s.isNull(col) ? [] : s.withBlob(col) { b in
            var ids: [AssetID] = []
            var start = 0, field = 0
            for k in 0..<b.count where b[k] == 0 {
                if field % 4 == 0, let id = AssetID(utf8: UnsafeBufferPointer(rebasing: b[start..<k])) { ids.append(id) }
                field += 1
                start = k + 1
            }
            return ids
        }
    }

    private static func entries(blob b: UnsafeBufferPointer<UInt8>) -> [KeyEntry] {
        var result: [KeyEntry] = []
        result.reserveCapacity(KeyAssets.limit)
        var fields: [Range<Int>] = []
        var start = 0
        for k in 0..<b.count where b[k] == 0 {
            fields.append(start..<k)
            start = k + 1
            guard fields.count == 4 else { continue }
            defer { fields.removeAll(keepingCapacity: true) }
            guard let id = AssetID(utf8: UnsafeBufferPointer(rebasing: b[fields[0]])),
                  let local = LocalDateTime(isoBytes: UnsafeBufferPointer(rebasing: b[fields[1]])) else { continue }
            var added: Int64 = 0
            for d in b[fields[2]] where d >= 0x30 && d <= 0x39 { added = added &* 10 &+ Int64(d - 0x30) }
            result.append(KeyEntry(key: MomentMemberKey(local: local, path: PathBytes(Array(b[fields[3]])), id: id), addedAt: added))
        }
        return result
    }
}

/// The writer's part for key assets (`KeyAssets`' rules): each collection's are recomputed in
/// the job that changes its members, from a few index lookups — the favorites by the partial
/// indexes, each spread slot by the first photo at or after its target time on the capture
/// order's index (`assets_order`, or `assets_directory` for an album), the newest by the same
/// index walked backwards — so that the cost per collection is logarithmic in its size. Smart
/// albums merge the job's members into their kept three and look again only when one of
/// those three changed.
final class KeyAssetRows {
    let db: Connection
    /// The smart albums' key entries, as stored: read once, kept in step by this writer (and
    /// dropped on a rollback, `forget`).
    private var smartKeys: [String: [KeyEntry]]?

    init(_ db: Connection) {
        self.db = db
    }

    /// What may be a key asset: visible, and not a burst's other member.
    static let candidate = "\(IndexReader.visible) AND \(IndexReader.notBurstExtra)"
    static let columns = "a.id, a.local_datetime, a.path, a.added_at"

    /// Drops what is kept in memory (after a rolled-back job).
    func forget() { smartKeys = nil }

    // MARK: Moments and folder albums

    /// A moment's day or a folder album's directory: the condition on `assets a` and its
    /// parameters, for each lookup the rules make.
    enum Scope {
        case day(Int)
        case directory(Int64)
    }

    private struct Queries {
        var favorites: String
        var forward: String
        var backward: String
        var newest: String
    }

    /// A day is a range of `local_datetime` (`MomentGrouping.localDateTimeRange`), walked on
    /// `assets_order`; SQLite sorts only the assets of one time by path and stops at the `LIMIT`.
    private static let dayQueries = Queries(
        favorites: """
            SELECT \(columns) FROM assets a INDEXED BY assets_favorites
            WHERE a.local_datetime >= :from AND a.local_datetime < :to AND a.is_favorite != 0 AND \(candidate)
            ORDER BY a.local_datetime, a.path LIMIT \(KeyAssets.limit)
            """,
        forward: """
            SELECT \(columns) FROM assets a
            WHERE a.local_datetime >= :t AND a.local_datetime < :to AND a.media_type = :type
              AND a.is_favorite = 0 AND \(candidate)
            ORDER BY a.local_datetime, a.path LIMIT \(KeyAssets.limit)
            """,
        backward: """
            SELECT \(columns) FROM assets a
            WHERE a.local_datetime >= :from AND a.local_datetime < :t AND a.media_type = :type
              AND a.is_favorite = 0 AND \(candidate)
            ORDER BY a.local_datetime DESC, a.path DESC LIMIT \(KeyAssets.limit)
            """,
        newest: """
            SELECT \(columns) FROM assets a
            WHERE a.local_datetime >= :from AND a.local_datetime < :to AND \(candidate)
            ORDER BY a.local_datetime DESC, a.path DESC LIMIT \(KeyAssets.limit)
            """)

    private static let directoryQueries = Queries(
        favorites: """
            SELECT \(columns) FROM assets a INDEXED BY assets_favorites_directory
            WHERE a.directory_id = :dir AND a.is_favorite != 0 AND \(candidate)
            ORDER BY a.local_datetime, a.path LIMIT \(KeyAssets.limit)
            """,
        forward: """
            SELECT \(columns) FROM assets a
            WHERE a.directory_id = :dir AND a.local_datetime >= :t AND a.media_type = :type AND a.is_favorite = 0 AND \(candidate)
            ORDER BY a.local_datetime, a.path LIMIT \(KeyAssets.limit)
            """,
        backward: """
            SELECT \(columns) FROM assets a
            WHERE a.directory_id = :dir AND a.local_datetime < :t AND a.media_type = :type AND a.is_favorite = 0 AND \(candidate)
            ORDER BY a.local_datetime DESC, a.path DESC LIMIT \(KeyAssets.limit)
            """,
        newest: """
            SELECT \(columns) FROM assets a
            WHERE a.directory_id = :dir AND \(candidate)
            ORDER BY a.local_datetime DESC, a.path DESC LIMIT \(KeyAssets.limit)
            """)

    /// A scope's key assets and its newest, from the rows as they are now in the transaction.
    func compute(_ scope: Scope, start: LocalDateTime, end: LocalDateTime) throws(StoreError)
        -> (keys: [AssetID], newest: [KeyEntry]) {
        let queries: Queries
        switch scope {
        case .day: queries = Self.dayQueries
        case .directory: queries = Self.directoryQueries
        }
        func prepared(_ sql: String) throws(StoreError) -> Statement {
            let s = try db.statement(sql)
            switch scope {
            case .day(let day):
                let range = MomentGrouping.localDateTimeRange(day: day)
                if sql != queries.forward { s.bind(":from", to: range.from) }
                if sql != queries.backward { s.bind(":to", to: range.to) }
            case .directory(let dir):
                s.bind(":dir", to: dir)
            }
            return s
        }
        let favorites = try Self.entries(try prepared(queries.favorites)).map(\.key)
        let keys = try KeyAssets.spread(favorites: favorites, start: start, end: end) { (lookup: KeyAssets.Lookup) throws(StoreError) -> MomentMemberKey? in
            let s = try prepared(lookup.atOrAfter ? queries.forward : queries.backward)
            s.bind(":t", to: lookup.time.description)
            s.bind(":type", to: lookup.mediaType.rawValue)
            return try Self.entries(s).first { !lookup.excluding.contains($0.key.id) }?.key
        }
        return (keys, try Self.entries(try prepared(queries.newest)))
    }

    /// Recomputes a moment's key assets and newest; true when they changed.
    func updateMoment(day: Int, start: LocalDateTime, end: LocalDateTime) throws(StoreError) -> Bool {
        let (keys, newest) = try compute(.day(day), start: start, end: end)
        return try store(MomentGrouping.id(day: day), keys: keys, newest: newest)
    }

    /// Recomputes a folder album's key assets and newest (none, and no row, for an empty one);
    /// true when they changed.
    func updateAlbum(directory: Int64, albumID: String, start: LocalDateTime?, end: LocalDateTime?) throws(StoreError) -> Bool {
        guard let start, let end else { return try drop(albumID) }
        let (keys, newest) = try compute(.directory(directory), start: start, end: end)
        return try store(albumID, keys: keys, newest: newest)
    }

    /// Writes a collection's row of `collection_keys`; true when it changed.
    @discardableResult
    func store(_ id: String, keys: [AssetID], newest: [KeyEntry]) throws(StoreError) -> Bool {
        let s = try db.statement("""
            INSERT INTO collection_keys (id, key_assets, newest) VALUES (:id, :keys, :newest)
            ON CONFLICT (id) DO UPDATE SET key_assets = excluded.key_assets, newest = excluded.newest
            WHERE key_assets IS NOT excluded.key_assets OR newest IS NOT excluded.newest
            """)
        s.bind(":id", to: id)
        s.bind(":keys", to: KeyColumns.text(keys) ?? "")
        s.bind(":newest", to: KeyColumns.bytes(newest) ?? [])
        try s.run()
        return db.changes > 0
    }

    /// Removes a collection's row (a moment or album that is gone); true when there was one.
    @discardableResult
    func drop(_ id: String) throws(StoreError) -> Bool {
        let s = try db.statement("DELETE FROM collection_keys WHERE id = :id")
        s.bind(":id", to: id)
        try s.run()
        return db.changes > 0
    }

    static func entries(_ s: Statement) throws(StoreError) -> [KeyEntry] {
        var result: [KeyEntry] = []
        while try s.step() {
            guard let id = AssetID(rawValue: s.string(0)), let local = s.withText(1, LocalDateTime.init(isoBytes:)) else {
                let key = s.string(0)
                s.reset()
                throw StoreError.undecodable(table: "assets", key: key)
            }
            result.append(KeyEntry(key: MomentMemberKey(local: local, path: PathBytes(s.bytes(2)), id: id), addedAt: s.int64(3)))
        }
        return result
    }

    // MARK: Smart albums

    /// The smart albums that have key assets (Hidden and Recently Deleted hold only assets
    /// that are never one).
    static let keyedSmartAlbums = SmartAlbums.all.filter { $0.kind != .hidden && $0.kind != .recentlyDeleted }

    /// Whether `a` comes before `b` in a smart album's key order (newest first).
    static func newer(_ a: KeyEntry, _ b: KeyEntry, order: SmartAlbum.Order) -> Bool {
        if order == .addedNewestFirst {
            if a.addedAt != b.addedAt { return a.addedAt > b.addedAt }
            if a.key.local != b.key.local { return MomentGrouping.precedes(b.key.local, a.key.local) }
            return a.key.path < b.key.path
        }
        return a.key > b.key
    }

    private func loadSmartKeys() throws(StoreError) -> [String: [KeyEntry]] {
        if let smartKeys { return smartKeys }
        var loaded: [String: [KeyEntry]] = [:]
        let s = try db.statement("SELECT id, newest FROM collection_keys WHERE id >= 's_' AND id < 's`'")
        while try s.step() { loaded[s.string(0)] = KeyColumns.entries(s, 1) }
        smartKeys = loaded
        return loaded
    }

    /// Merges the job's members into each smart album's kept key assets. An album looks again
    /// (`smartAlbum`) only when one of its kept three left it or moved in its order: a kept one
    /// touched but unchanged (a keyword, a re-read that found the same) keeps its place.
    func updateSmartAlbums(_ job: WriteJob) throws(StoreError) {
        var kept = try loadSmartKeys()
        // Each state after the job once: the albums it may stand for, with its entry.
        var joining: [String: [KeyEntry]] = [:]
        var after: [AssetID: (entry: KeyEntry, albums: Set<String>)] = [:]
        for pk in job.touched {
            guard let a = job.after[pk] ?? nil, a.isVisible, a.burst == nil || a.facts.representsBurst else { continue }
            let entry = KeyEntry(key: MomentMemberKey(local: a.member.local, path: a.member.path, id: a.member.id),
                                 addedAt: a.facts.addedAt)
            var albums = Set<String>()
            for album in Self.keyedSmartAlbums where SmartAlbums.contains(album.kind, a.facts, now: job.now) {
                joining[album.id, default: []].append(entry)
                albums.insert(album.id)
            }
            after[a.member.id] = (entry, albums)
        }
        var touchedIDs = Set<AssetID>()
        for (_, b) in job.before { touchedIDs.insert(b.member.id) }
        for album in Self.keyedSmartAlbums {
            let old = kept[album.id] ?? []
            var new: [KeyEntry]
            let moved = old.contains { e in
                guard touchedIDs.contains(e.key.id) else { return false }
                guard let now = after[e.key.id], now.albums.contains(album.id) else { return true }  // left the album
                return now.entry != e
            }
            if moved {
                new = try smartAlbum(album, now: job.now)
            } else {
                guard let entries = joining[album.id] else { continue }
                new = old
                for entry in entries where !new.contains(entry) {  // a kept one touched and unchanged
                    guard new.count < KeyAssets.limit || Self.newer(entry, new[new.count - 1], order: album.order) else { continue }
                    let at = new.firstIndex { Self.newer(entry, $0, order: album.order) } ?? new.count
                    new.insert(entry, at: at)
                    if new.count > KeyAssets.limit { new.removeLast() }
                }
            }
            guard new != old else { continue }
            kept[album.id] = new
            try store(album.id, keys: new.map(\.key.id), newest: new)
        }
        smartKeys = kept
    }

    /// A smart album's key assets looked up from scratch.
    func smartAlbum(_ album: SmartAlbum, now: Int64) throws(StoreError) -> [KeyEntry] {
        let condition = IndexReader.smartAlbumSQL(album, now: now).condition
        let order = album.order == .addedNewestFirst
            ? "a.added_at DESC, a.local_datetime DESC, a.path" : "a.local_datetime DESC, a.path DESC"
        // The albums without a partial index of their own walk their order's index backwards
        // (left to itself SQLite read and sorted the whole table for All Photos and Videos);
        // the others read their partial index, the size of the album.
        let index: String
        switch album.kind {
        case .allPhotos, .videos: index = "INDEXED BY assets_order"
        case .recentlyAdded: index = "INDEXED BY assets_added"
        case .favorites: index = "INDEXED BY assets_favorites"
        default: index = ""
        }
        let s = try db.statement("""
            SELECT \(Self.columns) FROM assets a \(index) WHERE \(condition) AND \(IndexReader.notBurstExtra)
            ORDER BY \(order) LIMIT \(KeyAssets.limit)
            """)
        return try Self.entries(s)
    }

    // MARK: User albums

    /// Recomputes the key assets of user albums from their members (a scan of each album: user
    /// albums are made by hand); returns the albums whose key assets changed.
    func updateUserAlbums(_ ids: [String]) throws(StoreError) -> [String] {
        var changed: [String] = []
        let members = try db.statement("""
            SELECT \(Self.columns), a.media_type, a.is_favorite, \(IndexReader.notBurstExtra)
            FROM user_album_assets m JOIN assets a ON a.id = m.asset_id
            WHERE m.album_id = :album AND \(IndexReader.visible)
            """)
        let exists = try db.statement("SELECT 1 FROM user_albums WHERE id = :album")
        for album in Set(ids).sorted() {
            exists.bind(":album", to: album)
            let found = try exists.step()
            exists.reset()
            guard found else {
                try drop(album)
                continue
            }
            members.bind(":album", to: album)
            var candidates: [KeyAssets.Candidate] = []
            var entries: [KeyEntry] = []
            var start: LocalDateTime?, end: LocalDateTime?
            while try members.step() {
                guard let id = AssetID(rawValue: members.string(0)), let local = members.withText(1, LocalDateTime.init(isoBytes:)),
                      let type = MediaType(rawValue: members.string(4)) else { continue }
                if start.map({ MomentGrouping.precedes(local, $0) }) ?? true { start = local }
                if end.map({ MomentGrouping.precedes($0, local) }) ?? true { end = local }
                guard members.int(6) != 0 else { continue }  // a burst's other member
                let key = MomentMemberKey(local: local, path: PathBytes(members.bytes(2)), id: id)
                candidates.append(KeyAssets.Candidate(key: key, mediaType: type, isFavorite: members.int(5) != 0))
                entries.append(KeyEntry(key: key, addedAt: members.int64(3)))
            }
            members.reset()
            var keys: [AssetID] = []
            if let start, let end { keys = KeyAssets.spread(candidates, start: start, end: end) }
            let newest = Array(entries.sorted { $0.key > $1.key }.prefix(KeyAssets.limit))
            if try store(album, keys: keys, newest: newest) { changed.append(album) }
        }
        return changed
    }

    /// The user folders above a user album or folder, nearest first.
    func folders(above id: String) throws(StoreError) -> [String] {
        let s = try db.statement("""
            WITH RECURSIVE up(id, depth) AS (
                SELECT folder_id, 1 FROM user_albums WHERE id = :id AND folder_id IS NOT NULL
                UNION ALL SELECT parent_id, 1 FROM user_folders WHERE id = :id AND parent_id IS NOT NULL
                UNION ALL SELECT f.parent_id, up.depth + 1 FROM user_folders f JOIN up ON f.id = up.id
                    WHERE f.parent_id IS NOT NULL AND up.depth < 1000)
            SELECT id FROM up ORDER BY depth
            """)
        s.bind(":id", to: id)
        var result: [String] = []
        while try s.step() { result.append(s.string(0)) }
        return result
    }

    /// Whether there is any user album (most jobs of a library without any need not look).
    func hasUserAlbums() throws(StoreError) -> Bool {
        try db.scalar("SELECT 1 FROM user_albums LIMIT 1").int64 != nil
    }

    /// The user albums holding any of `ids`.
    func userAlbums(holding ids: [AssetID]) throws(StoreError) -> [String] {
        guard !ids.isEmpty else { return [] }
        let s = try db.statement("""
            SELECT DISTINCT album_id FROM user_album_assets WHERE asset_id IN (SELECT value FROM json_each(:ids))
            """)
        s.bind(":ids", to: "[" + ids.map { "\"\($0.rawValue)\"" }.joined(separator: ",") + "]")
        var albums: [String] = []
        while try s.step() { albums.append(s.string(0)) }
        return albums
    }

    // MARK: All of them

    /// Whether the key assets were computed for this database (they are from migration 010 on,
    /// once, by `rebuild`).
    static func exist(_ db: Connection) throws(StoreError) -> Bool {
        try db.scalar("SELECT 1 FROM meta WHERE key = 'keyAssets'").int64 != nil
    }

    /// Computes every collection's key assets (after the migration that added them).
    func rebuild(now: Int64) throws(StoreError) {
        forget()
        try db.execute("DELETE FROM collection_keys")
        let moments = try db.statement("SELECT day, start_local, end_local FROM moments")
        var days: [(Int, LocalDateTime, LocalDateTime)] = []
        while try moments.step() {
            if let s = LocalDateTime(iso: moments.string(1)), let e = LocalDateTime(iso: moments.string(2)) {
                days.append((moments.int(0), s, e))
            }
        }
        for (day, start, end) in days { _ = try updateMoment(day: day, start: start, end: end) }
        let dirs = try db.statement("SELECT id, album_id, start_local, end_local FROM directories WHERE asset_count > 0")
        var albums: [(Int64, String, LocalDateTime?, LocalDateTime?)] = []
        while try dirs.step() {
            albums.append((dirs.int64(0), dirs.string(1), dirs.optionalString(2).flatMap(LocalDateTime.init(iso:)),
                           dirs.optionalString(3).flatMap(LocalDateTime.init(iso:))))
        }
        for (dir, id, start, end) in albums { _ = try updateAlbum(directory: dir, albumID: id, start: start, end: end) }
        for album in Self.keyedSmartAlbums {
            let entries = try smartAlbum(album, now: now)
            try store(album.id, keys: entries.map(\.key.id), newest: entries)
        }
        let users = try db.statement("SELECT id FROM user_albums")
        var ids: [String] = []
        while try users.step() { ids.append(users.string(0)) }
        _ = try updateUserAlbums(ids)
        try db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('keyAssets', 1)")
    }
}
