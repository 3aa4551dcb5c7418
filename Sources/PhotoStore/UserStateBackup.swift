import PhotoModel

/// A copy of everything users set — favorites, hidden flags, user albums and folders, taggers'
/// keywords — kept as a small JSON file next to the database (`<database>.userstate.json`), so
/// that a damaged database loses no user state: the index is rebuilt from the library and this
/// is re-attached to the rebuilt assets.
///
/// Asset ids are random and a rebuilt index gives new ones, so each asset is also recorded by
/// its primary file: identity (fsid, inode, size, mtime), content fingerprint, and path bytes
/// (hex, since paths need not be UTF-8). Album and folder ids are kept as they were.
public struct UserStateBackup: Sendable, Hashable {
    /// The format's version; a reader refuses a newer one.
    public static let formatVersion = 1
    /// The `format` field, so that a stray JSON file is not taken for a backup.
    public static let formatName = "photod.userstate"

    /// One asset that carries user state, and how to find its file again.
    public struct Asset: Sendable, Hashable {
        public var id: String
        /// The primary file's absolute path.
        public var path: PathBytes
        public var fsid: Int64?
        public var inode: Int64?
        public var size: Int64?
        public var mtimeNanoseconds: Int64?
        public var fingerprint: Int64?
        public var favorite = false
        public var hidden = false
        /// Taggers' keywords by source, each list sorted.
        public var keywords: [String: [String]] = [:]

        public init(id: String, path: PathBytes) {
            self.id = id
            self.path = path
        }
    }

    /// A user folder (`parentID` nil: at the top).
    public struct Folder: Sendable, Hashable {
        public var id: String
        public var title: String
        public var parentID: String?
        public var createdAt: Int64
        public init(id: String, title: String, parentID: String?, createdAt: Int64) {
            self.id = id
            self.title = title
            self.parentID = parentID
            self.createdAt = createdAt
        }
    }

    /// A user album with its members' asset ids in album order.
    public struct Album: Sendable, Hashable {
        public var id: String
        public var title: String
        public var folderID: String?
        public var createdAt: Int64
        public var members: [String]
        public init(id: String, title: String, folderID: String?, createdAt: Int64, members: [String]) {
            self.id = id
            self.title = title
            self.folderID = folderID
            self.createdAt = createdAt
            self.members = members
        }
    }

    /// When the backup was taken (milliseconds since 1970) and the journal's token then.
    public var writtenAt: Int64 = 0
    public var token: Int64 = 0
    public var assets: [Asset] = []
    public var folders: [Folder] = []
    public var albums: [Album] = []

    public init() {}

    /// Whether two backups hold the same user state (their times and tokens aside): an
    /// unchanged state is not written again.
    public func sameState(as other: UserStateBackup) -> Bool {
        assets == other.assets && folders == other.folders && albums == other.albums
    }

    /// Whether there is nothing to keep.
    public var isEmpty: Bool { assets.isEmpty && folders.isEmpty && albums.isEmpty }

    /// The backup file of a database.
    public static func path(forDatabase database: String) -> PathBytes { PathBytes(database + ".userstate.json") }
}

// MARK: - Export

extension IndexReader {
    /// The assets with user state, each with its primary file (for one in Recently Deleted, its
    /// tombstone). The favorites and the hidden in two selects, each through its partial index:
    /// one `OR` scanned every asset, once a second while a first index committed (at a million
    /// assets, most of a core).
    static let userStateAssetsSQL = """
        WITH ids(id) AS (
            SELECT id FROM assets WHERE is_favorite != 0
            UNION SELECT id FROM assets WHERE is_hidden != 0
            UNION SELECT asset_id FROM user_album_assets
            UNION SELECT asset_id FROM asset_keywords)
        SELECT a.id, a.path, a.is_favorite, a.is_hidden,
               coalesce(f.fsid, t.fsid), coalesce(f.inode, t.inode), coalesce(f.size, t.size),
               coalesce(f.mtime_ns, t.mtime_ns), coalesce(f.fingerprint, t.fingerprint)
        FROM ids JOIN assets a ON a.id = ids.id
        LEFT JOIN files f ON f.pk = (SELECT pk FROM files WHERE asset_pk = a.pk AND role = 'primary' LIMIT 1)
        LEFT JOIN tombstones t ON f.pk IS NULL
             AND t.pk = (SELECT pk FROM tombstones WHERE asset_pk = a.pk AND role = 'primary' LIMIT 1)
        ORDER BY a.id
        """

    /// The user state as it is now, in one read transaction. Costs the size of the user state,
    /// not the library's: the assets are reached from the user-state tables by their keys.
    public func exportUserState(now: Int64) throws(StoreError) -> UserStateBackup {
        try consistent { () throws(StoreError) in
            var backup = UserStateBackup()
            backup.writtenAt = now
            backup.token = try db.scalar("SELECT coalesce(max(token), 0) FROM changes").int64 ?? 0
            let s = try db.statement(Self.userStateAssetsSQL)
            var index: [String: Int] = [:]
            while try s.step() {
                var a = UserStateBackup.Asset(id: s.string(0), path: PathBytes(s.bytes(1)))
                a.favorite = s.int(2) != 0
                a.hidden = s.int(3) != 0
                a.fsid = s.isNull(4) ? nil : s.int64(4)
                a.inode = s.isNull(5) ? nil : s.int64(5)
                a.size = s.isNull(6) ? nil : s.int64(6)
                a.mtimeNanoseconds = s.isNull(7) ? nil : s.int64(7)
                a.fingerprint = s.isNull(8) ? nil : s.int64(8)
                index[a.id] = backup.assets.count
                backup.assets.append(a)
            }
            let k = try db.statement("SELECT asset_id, source, keyword FROM asset_keywords ORDER BY asset_id, source, keyword")
            while try k.step() {
                guard let i = index[k.string(0)] else { continue }  // a purged asset's: nothing to attach it to
                backup.assets[i].keywords[k.string(1), default: []].append(k.string(2))
            }
            let f = try db.statement("SELECT id, title, parent_id, created_at FROM user_folders ORDER BY id")
            while try f.step() {
                backup.folders.append(.init(id: f.string(0), title: f.string(1), parentID: f.optionalString(2), createdAt: f.int64(3)))
            }
            let u = try db.statement("SELECT id, title, folder_id, created_at FROM user_albums ORDER BY id")
            var albumIndex: [String: Int] = [:]
            while try u.step() {
                albumIndex[u.string(0)] = backup.albums.count
                backup.albums.append(.init(id: u.string(0), title: u.string(1), folderID: u.optionalString(2),
                                           createdAt: u.int64(3), members: []))
            }
            let m = try db.statement("SELECT album_id, asset_id FROM user_album_assets ORDER BY album_id, position, asset_id")
            while try m.step() {
                guard let i = albumIndex[m.string(0)], index[m.string(1)] != nil else { continue }
                backup.albums[i].members.append(m.string(1))
            }
            return backup
        }
    }
}

// MARK: - The file format

extension UserStateBackup {
    /// The JSON text: one object, assets one per line (a diff of two backups reads well).
    public func encoded() -> [UInt8] {
        var out = "{\"format\":\(Self.quote(Self.formatName)),\"version\":\(Self.formatVersion),"
            + "\"writtenAt\":\(writtenAt),\"token\":\(token),\n\"assets\":["
        for (i, a) in assets.enumerated() {
            out += i == 0 ? "\n" : ",\n"
            out += "{\"id\":\(Self.quote(a.id)),\"path\":\"\(Self.hex(a.path.bytes))\""
            if let v = a.fsid { out += ",\"fsid\":\(v)" }
            if let v = a.inode { out += ",\"inode\":\(v)" }
            if let v = a.size { out += ",\"size\":\(v)" }
            if let v = a.mtimeNanoseconds { out += ",\"mtimeNs\":\(v)" }
            if let v = a.fingerprint { out += ",\"fingerprint\":\(v)" }
            out += ",\"favorite\":\(a.favorite),\"hidden\":\(a.hidden)"
            if !a.keywords.isEmpty {
                out += ",\"keywords\":{"
                out += a.keywords.sorted { $0.key < $1.key }.map { source, words in
                    Self.quote(source) + ":[" + words.map(Self.quote).joined(separator: ",") + "]"
                }.joined(separator: ",")
                out += "}"
            }
            out += "}"
        }
        out += "],\n\"folders\":["
        for (i, f) in folders.enumerated() {
            out += i == 0 ? "\n" : ",\n"
            out += "{\"id\":\(Self.quote(f.id)),\"title\":\(Self.quote(f.title)),\"parent\":\(f.parentID.map(Self.quote) ?? "null"),"
                + "\"createdAt\":\(f.createdAt)}"
        }
        out += "],\n\"albums\":["
        for (i, a) in albums.enumerated() {
            out += i == 0 ? "\n" : ",\n"
            out += "{\"id\":\(Self.quote(a.id)),\"title\":\(Self.quote(a.title)),\"folder\":\(a.folderID.map(Self.quote) ?? "null"),"
                + "\"createdAt\":\(a.createdAt),\"members\":[" + a.members.map(Self.quote).joined(separator: ",") + "]}"
        }
        out += "]}\n"
        return Array(out.utf8)
    }

    /// Reads a backup file's text (with SQLite's JSON functions, on a private in-memory
    /// database). Throws `corrupt` for text that is not a backup, `invalid` for a newer format.
    public static func decode(_ bytes: [UInt8]) throws(StoreError) -> UserStateBackup {
        let text = String(decoding: bytes, as: UTF8.self)
        let db = try Connection(path: ":memory:")
        guard try db.scalar("SELECT json_valid(?1)", .text(text)).int64 == 1 else {
            throw StoreError(code: .corrupt, message: "the user-state backup is not valid JSON")
        }
        guard try db.scalar("SELECT json_extract(?1, '$.format')", .text(text)).string == formatName else {
            throw StoreError(code: .corrupt, message: "the file is not a photod user-state backup")
        }
        let version = try db.scalar("SELECT json_extract(?1, '$.version')", .text(text)).int64 ?? 0
        guard version >= 1, version <= Int64(formatVersion) else {
            throw StoreError(code: .invalid, message: "the user-state backup has format version \(version); this photod reads up to \(formatVersion)")
        }
        var backup = UserStateBackup()
        backup.writtenAt = try db.scalar("SELECT json_extract(?1, '$.writtenAt')", .text(text)).int64 ?? 0
        backup.token = try db.scalar("SELECT json_extract(?1, '$.token')", .text(text)).int64 ?? 0
        let a = try db.statement("""
            SELECT json_extract(value, '$.id'), json_extract(value, '$.path'), json_extract(value, '$.fsid'),
                   json_extract(value, '$.inode'), json_extract(value, '$.size'), json_extract(value, '$.mtimeNs'),
                   json_extract(value, '$.fingerprint'), json_extract(value, '$.favorite'), json_extract(value, '$.hidden'),
                   json_extract(value, '$.keywords')
            FROM json_each(:backup, '$.assets') ORDER BY key
            """)
        a.bind(":backup", to: text)
        let words = try db.statement("""
            SELECT s.key, w.value FROM json_each(:keywords) s, json_each(s.value) w ORDER BY s.key, w.key
            """)
        while try a.step() {
            guard let id = a.optionalString(0), let path = a.optionalString(1).flatMap(Self.unhex) else {
                throw StoreError(code: .corrupt, message: "an asset of the user-state backup has no id or no valid path")
            }
            var asset = Asset(id: id, path: PathBytes(path))
            asset.fsid = a.isNull(2) ? nil : a.int64(2)
            asset.inode = a.isNull(3) ? nil : a.int64(3)
            asset.size = a.isNull(4) ? nil : a.int64(4)
            asset.mtimeNanoseconds = a.isNull(5) ? nil : a.int64(5)
            asset.fingerprint = a.isNull(6) ? nil : a.int64(6)
            asset.favorite = a.int(7) != 0
            asset.hidden = a.int(8) != 0
            if let keywords = a.optionalString(9) {
                words.reset()
                words.bind(":keywords", to: keywords)
                while try words.step() { asset.keywords[words.string(0), default: []].append(words.string(1)) }
            }
            backup.assets.append(asset)
        }
        let f = try db.statement("""
            SELECT json_extract(value, '$.id'), json_extract(value, '$.title'), json_extract(value, '$.parent'),
                   json_extract(value, '$.createdAt')
            FROM json_each(:backup, '$.folders') ORDER BY key
            """)
        f.bind(":backup", to: text)
        while try f.step() {
            guard let id = f.optionalString(0), let title = f.optionalString(1) else {
                throw StoreError(code: .corrupt, message: "a folder of the user-state backup has no id or title")
            }
            backup.folders.append(Folder(id: id, title: title, parentID: f.optionalString(2), createdAt: f.int64(3)))
        }
        let u = try db.statement("""
            SELECT json_extract(value, '$.id'), json_extract(value, '$.title'), json_extract(value, '$.folder'),
                   json_extract(value, '$.createdAt'), json_extract(value, '$.members')
            FROM json_each(:backup, '$.albums') ORDER BY key
            """)
        u.bind(":backup", to: text)
        let members = try db.statement("SELECT value FROM json_each(:members) ORDER BY key")
        while try u.step() {
            guard let id = u.optionalString(0), let title = u.optionalString(1) else {
                throw StoreError(code: .corrupt, message: "an album of the user-state backup has no id or title")
            }
            var list: [String] = []
            if let json = u.optionalString(4) {
                members.reset()
                members.bind(":members", to: json)
                while try members.step() { list.append(members.string(0)) }
            }
            backup.albums.append(Album(id: id, title: title, folderID: u.optionalString(2), createdAt: u.int64(3), members: list))
        }
        return backup
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unhex(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = value(u[i]), let l = value(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}

// MARK: - Restore

/// What a restore re-attached, and what it could not find.
public struct UserStateRestoreReport: Sendable, Hashable {
    /// Backup assets found again in the index (by identity, fingerprint or path).
    public var matched = 0
    public var matchedByIdentity = 0
    public var matchedByFingerprint = 0
    public var matchedByPath = 0
    /// Backup assets whose file is not in the index now (their state is not restored).
    public var notFound = 0
    public var favorites = 0
    public var hidden = 0
    public var folders = 0
    public var albums = 0
    public var albumMembers = 0
    /// Asset–source–keyword triples.
    public var keywords = 0
    public init() {}
}

extension IndexWriter {
    /// Re-attaches a backup's user state to the assets now in the index, in one transaction
    /// with its change set: each backup asset is found by its primary file's identity (fsid,
    /// inode, size, mtime), else its content fingerprint (with the size), else its path.
    /// Albums and folders keep their ids; what is already there is left as it is, so that a
    /// restore interrupted by a crash can simply run again.
    public func restoreUserState(_ backup: UserStateBackup, now: Int64) throws(StoreError) -> (summary: ChangeSet, report: UserStateRestoreReport) {
        var report = UserStateRestoreReport()
        let changes = try commit(now: now, durable: true) { job throws(StoreError) in
            let found = try matchBackupAssets(backup.assets, &report)  // old id -> (pk, new id)
            for pk in Set(found.values.map(\.pk)).sorted() { try job.recordBefore(pk) }
            // Flags, on the asset row and in user_state (as `set` keeps them).
            let flags = try db.statement("""
                UPDATE assets SET is_favorite = max(is_favorite, :favorite), is_hidden = max(is_hidden, :hidden) WHERE pk = :pk
                """)
            let state = try db.statement("""
                INSERT INTO user_state (asset_id, is_favorite, is_hidden, updated_at)
                SELECT id, is_favorite, is_hidden, :now FROM assets WHERE pk = :pk
                ON CONFLICT (asset_id) DO UPDATE SET is_favorite = excluded.is_favorite, is_hidden = excluded.is_hidden,
                                                     updated_at = excluded.updated_at
                """)
            let keyword = try db.statement("INSERT INTO asset_keywords (asset_id, source, keyword) VALUES (:asset, :source, :keyword) ON CONFLICT DO NOTHING")
            for asset in backup.assets {
                guard let (pk, id) = found[asset.id] else { continue }
                if asset.favorite || asset.hidden {
                    flags.bind(":pk", to: pk)
                    flags.bind(":favorite", to: asset.favorite)
                    flags.bind(":hidden", to: asset.hidden)
                    try flags.run()
                    state.bind(":pk", to: pk)
                    state.bind(":now", to: now)
                    try state.run()
                    if asset.favorite { report.favorites += 1 }
                    if asset.hidden { report.hidden += 1 }
                }
                for (source, words) in asset.keywords.sorted(by: { $0.key < $1.key }) {
                    for w in words {
                        keyword.bind(":asset", to: id)
                        keyword.bind(":source", to: source)
                        keyword.bind(":keyword", to: w)
                        try keyword.run()
                        report.keywords += 1
                    }
                }
            }
            // Folders, parents first; one whose parent is missing goes to the top.
            var extra = ChangeSet()
            let folderIDs = Set(backup.folders.map(\.id))
            var placed = Set<String>()
            var remaining = backup.folders
            let folder = try db.statement("""
                INSERT INTO user_folders (id, title, parent_id, created_at, updated_at) VALUES (:id, :title, :parent, :created, :now)
                ON CONFLICT (id) DO NOTHING
                """)
            while !remaining.isEmpty {
                let ready = remaining.filter { f in f.parentID.map { placed.contains($0) || !folderIDs.contains($0) } ?? true }
                // A cycle (a damaged backup): put the rest at the top.
                let batch = ready.isEmpty ? remaining : ready
                for f in batch {
                    let parent = ready.isEmpty ? nil : f.parentID.flatMap { folderIDs.contains($0) ? $0 : nil }
                    folder.bind(":id", to: f.id)
                    folder.bind(":title", to: f.title)
                    folder.bind(":parent", to: parent)
                    folder.bind(":created", to: f.createdAt)
                    folder.bind(":now", to: now)
                    try folder.run()
                    if db.changes == 1 {
                        report.folders += 1
                        extra.collectionsInserted.append(f.id)
                    }
                    placed.insert(f.id)
                }
                let done = Set(batch.map(\.id))
                remaining.removeAll { done.contains($0.id) }
            }
            let album = try db.statement("""
                INSERT INTO user_albums (id, title, folder_id, created_at, updated_at) VALUES (:id, :title, :folder, :created, :now)
                ON CONFLICT (id) DO NOTHING
                """)
            let member = try db.statement("""
                INSERT INTO user_album_assets (album_id, asset_id, position, added_at) VALUES (:album, :asset, :position, :now)
                ON CONFLICT DO NOTHING
                """)
            for a in backup.albums {
                album.bind(":id", to: a.id)
                album.bind(":title", to: a.title)
                album.bind(":folder", to: a.folderID.flatMap { folderIDs.contains($0) ? $0 : nil })
                album.bind(":created", to: a.createdAt)
                album.bind(":now", to: now)
                try album.run()
                if db.changes == 1 {
                    report.albums += 1
                    extra.collectionsInserted.append(a.id)
                }
                var next = try db.scalar("SELECT coalesce(max(position), 0) FROM user_album_assets WHERE album_id = ?1", .text(a.id)).int64 ?? 0
                for old in a.members {
                    guard let (_, id) = found[old] else { continue }
                    next += 1
                    member.bind(":album", to: a.id)
                    member.bind(":asset", to: id)
                    member.bind(":position", to: next)
                    member.bind(":now", to: now)
                    try member.run()
                    report.albumMembers += db.changes
                }
            }
            return extra
        }
        return (changes, report)
    }

    /// Finds each backup asset in the index: by file identity, else by (size, fingerprint),
    /// else by path. Returns old id -> (pk, current id).
    private func matchBackupAssets(_ assets: [UserStateBackup.Asset],
                                   _ report: inout UserStateRestoreReport) throws(StoreError) -> [String: (pk: Int64, id: String)] {
        var found: [String: (pk: Int64, id: String)] = [:]
        let byIdentity = try db.statement("""
            SELECT f.asset_pk, a.id FROM files f JOIN assets a ON a.pk = f.asset_pk
            WHERE f.fsid = :fsid AND f.inode = :inode AND f.size = :size AND f.mtime_ns = :mtime
            ORDER BY f.role = 'primary' DESC LIMIT 1
            """)
        var unmatched: [UserStateBackup.Asset] = []
        for a in assets {
            if let fsid = a.fsid, let inode = a.inode, let size = a.size, let mtime = a.mtimeNanoseconds {
                byIdentity.reset()
                byIdentity.bind(":fsid", to: fsid)
                byIdentity.bind(":inode", to: inode)
                byIdentity.bind(":size", to: size)
                byIdentity.bind(":mtime", to: mtime)
                if try byIdentity.step() {
                    found[a.id] = (byIdentity.int64(0), byIdentity.string(1))
                    report.matchedByIdentity += 1
                    continue
                }
            }
            unmatched.append(a)
        }
        byIdentity.reset()
        // The fingerprint has no index (see the files table): one pass over the files, only
        // when some asset is still to be found by it.
        struct Content: Hashable { var size: Int64; var fingerprint: Int64 }
        let wanted = Set(unmatched.compactMap { a in a.size.flatMap { s in a.fingerprint.map { Content(size: s, fingerprint: $0) } } })
        var byContent: [Content: (pk: Int64, id: String)] = [:]
        if !wanted.isEmpty {
            let s = try db.statement("""
                SELECT f.size, f.fingerprint, f.asset_pk, a.id FROM files f JOIN assets a ON a.pk = f.asset_pk
                WHERE f.fingerprint IS NOT NULL AND f.role = 'primary'
                """)
            while try s.step() {
                let key = Content(size: s.int64(0), fingerprint: s.int64(1))
                if wanted.contains(key), byContent[key] == nil { byContent[key] = (s.int64(2), s.string(3)) }
            }
        }
        let byPath = try db.statement("""
            SELECT f.asset_pk, a.id FROM files f JOIN directories d ON d.id = f.directory_id JOIN assets a ON a.pk = f.asset_pk
            WHERE d.path = :directory AND f.name = :name
            """)
        for a in unmatched {
            if let size = a.size, let fp = a.fingerprint, let hit = byContent[Content(size: size, fingerprint: fp)] {
                found[a.id] = hit
                report.matchedByFingerprint += 1
                continue
            }
            byPath.reset()
            byPath.bind(":directory", to: a.path.parent)
            byPath.bind(":name", to: a.path.lastComponent)
            if try byPath.step() {
                found[a.id] = (byPath.int64(0), byPath.string(1))
                report.matchedByPath += 1
                continue
            }
            report.notFound += 1
        }
        byPath.reset()
        report.matched = found.count
        return found
    }
}
