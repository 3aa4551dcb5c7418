import PhotoModel

/// A flag users set on assets.
public enum UserFlag: String, Sendable {
    case favorite, hidden
}

/// How a tagger's keywords are written.
public enum KeywordEdit: Sendable {
    /// The source's keywords on each asset become exactly these.
    case replace([String])
    case add([String])
    case remove([String])
}

/// User state: favorites, hidden, user albums and folders, taggers' keywords. Stored only in the
/// database, keyed by asset id (never derived from files). Every write is one transaction with
/// its change set in the journal, like a sort job; all or nothing: an unknown id fails the
/// whole write (`StoreError.notFound` lists them).
extension IndexWriter {
    // MARK: Flags

    /// Sets `favorite` or `hidden` on assets (those in Recently Deleted included). The assets
    /// are updated in the change set, with the smart albums, moments and albums they change.
    public func set(_ flag: UserFlag, _ value: Bool, ids: [AssetID], now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now, durable: true) { job throws(StoreError) in
            let pks = try assetPKs(ids.map(\.rawValue))
            let column = flag == .favorite ? "is_favorite" : "is_hidden"
            let current = try db.statement("SELECT \(column) FROM assets WHERE pk = :pk")
            let update = try db.statement("UPDATE assets SET \(column) = :value WHERE pk = :pk")
            for (pk, _) in pks {
                current.bind(":pk", to: pk)
                let already = try current.step() && (current.int(0) != 0) == value
                current.reset()
                if already { continue }  // nothing changes: not in the change set
                try job.recordBefore(pk)
                update.bind(":pk", to: pk)
                update.bind(":value", to: value)
                try update.run()
            }
            let state = try db.statement("""
                INSERT INTO user_state (asset_id, is_favorite, is_hidden, updated_at)
                SELECT id, is_favorite, is_hidden, :now FROM assets WHERE pk = :pk
                ON CONFLICT (asset_id) DO UPDATE SET is_favorite = excluded.is_favorite, is_hidden = excluded.is_hidden,
                                                     updated_at = excluded.updated_at
                """)
            for pk in job.touched {
                state.bind(":pk", to: pk)
                state.bind(":now", to: now)
                try state.run()
            }
            return ChangeSet()
        }
    }

    // MARK: Albums and folders

    /// Creates a user album (in a folder, or at the top); returns its id with the change set.
    public func createUserAlbum(title: String, folder: String?, now: Int64) throws(StoreError) -> (id: String, summary: ChangeSet) {
        try createUserCollection(table: "user_albums", parentColumn: "folder_id", prefix: "u_", title: title, in: folder, now: now)
    }

    /// Creates a user folder (PhotoKit's collection list), nested in `parent` or at the top.
    public func createUserFolder(title: String, parent: String?, now: Int64) throws(StoreError) -> (id: String, summary: ChangeSet) {
        try createUserCollection(table: "user_folders", parentColumn: "parent_id", prefix: "uf_", title: title, in: parent, now: now)
    }

    /// An album or a folder: a new row in `table` (a constant of this file) below the folder
    /// `parent`; the change set inserts it and updates the folder.
    private func createUserCollection(table: String, parentColumn: String, prefix: String, title: String, in parent: String?,
                                      now: Int64) throws(StoreError) -> (id: String, summary: ChangeSet) {
        var id = ""
        let changes = try commit(now: now, durable: true) { _ throws(StoreError) in
            let title = try Self.checkedTitle(title)
            if let parent { try requireFolder(parent) }
            id = Self.newCollectionID(prefix: prefix, now: now)
            let s = try db.statement(
                "INSERT INTO \(table) (id, title, \(parentColumn), created_at, updated_at) VALUES (:id, :title, :parent, :now, :now)")
            s.bind(":id", to: id)
            s.bind(":title", to: title)
            s.bind(":parent", to: parent)
            s.bind(":now", to: now)
            try s.run()
            var summary = ChangeSet()
            summary.collectionsInserted = [id]
            if let parent { summary.collectionsUpdated = [parent] }
            return summary
        }
        return (id, changes)
    }

    /// Renames a user album or folder (by its id's prefix).
    public func renameUserCollection(_ id: String, title: String, now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now, durable: true) { _ throws(StoreError) in
            let title = try Self.checkedTitle(title)
            let table = try Self.userTable(id)
            let s = try db.statement("UPDATE \(table) SET title = :title, updated_at = :now WHERE id = :id")
            s.bind(":id", to: id)
            s.bind(":title", to: title)
            s.bind(":now", to: now)
            try s.run()
            guard db.changes == 1 else { throw StoreError.notFound(table == "user_albums" ? "album" : "folder", [id]) }
            var summary = ChangeSet()
            summary.collectionsUpdated = [id]
            return summary
        }
    }

    /// Moves a user album or folder into `folder` (nil: the top). A folder cannot move into
    /// itself or below itself.
    public func moveUserCollection(_ id: String, to folder: String?, now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now, durable: true) { _ throws(StoreError) in
            let table = try Self.userTable(id)
            let parentColumn = table == "user_albums" ? "folder_id" : "parent_id"
            let old = try parent(of: id, table: table, column: parentColumn)
            if let folder {
                try requireFolder(folder)
                if table == "user_folders", try folderAncestors(of: folder).contains(id) || folder == id {
                    throw StoreError(code: .invalid, message: "folder \(id) cannot move into itself or a folder below it")
                }
            }
            let s = try db.statement("UPDATE \(table) SET \(parentColumn) = :folder, updated_at = :now WHERE id = :id")
            s.bind(":id", to: id)
            s.bind(":folder", to: folder)
            s.bind(":now", to: now)
            try s.run()
            var summary = ChangeSet()
            summary.collectionsUpdated = Array(Set([id] + [old, folder].compactMap { $0 })).sorted()
            return summary
        }
    }

    /// Deletes a user album, or a folder with everything in it. The assets stay in the library
    /// (they are updated: their album membership changed).
    public func deleteUserCollection(_ id: String, now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now, durable: true) { job throws(StoreError) in
            let table = try Self.userTable(id)
            var albums: [String] = []
            var folders: [String] = []
            if table == "user_albums" {
                albums = [id]
            } else {
                folders = try folderSubtree(id)
                let s = try db.statement("SELECT id FROM user_albums WHERE folder_id IN (SELECT value FROM json_each(:folders))")
                s.bind(":folders", to: Self.jsonArray(folders))
                while try s.step() { albums.append(s.string(0)) }
            }
            let parentColumn = table == "user_albums" ? "folder_id" : "parent_id"
            let parent = try parent(of: id, table: table, column: parentColumn)
            let members = try albumMembers(albums)
            for pk in try assetPKs(members, requireAll: false).map(\.pk) { try job.recordBefore(pk) }
            let delete = try db.statement("DELETE FROM \(table) WHERE id = :id")  // cascades to albums and members
            delete.bind(":id", to: id)
            try delete.run()
            var extra = ChangeSet()
            extra.collectionsDeleted = (albums + folders).sorted()
            if let parent { extra.collectionsUpdated = [parent] }
            return extra
        }
    }

    /// Adds assets to a user album, after its last member, in the order given (ids already in
    /// it keep their place).
    public func addToUserAlbum(_ album: String, ids: [AssetID], now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now, durable: true) { job throws(StoreError) in
            try requireAlbum(album)
            let pks = try assetPKs(ids.map(\.rawValue))
            var next = try db.scalar("SELECT coalesce(max(position), 0) FROM user_album_assets WHERE album_id = ?1", .text(album)).int64 ?? 0
            let insert = try db.statement("""
                INSERT INTO user_album_assets (album_id, asset_id, position, added_at) VALUES (:album, :asset, :position, :now)
                ON CONFLICT DO NOTHING
                """)
            for (pk, id) in pks {
                next += 1
                insert.bind(":album", to: album)
                insert.bind(":asset", to: id)
                insert.bind(":position", to: next)
                insert.bind(":now", to: now)
                try insert.run()
                if db.changes == 1 { try job.recordBefore(pk) }
            }
            return try touchAlbum(album, now: now, changed: !job.touched.isEmpty)
        }
    }

    /// Removes assets from a user album (ids not in it are ignored; unknown ids fail).
    public func removeFromUserAlbum(_ album: String, ids: [AssetID], now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now, durable: true) { job throws(StoreError) in
            try requireAlbum(album)
            let known = try assetPKs(ids.map(\.rawValue), requireAll: false)
            let missing = Set(ids.map(\.rawValue)).subtracting(known.map(\.id))
            // An asset purged since may still be a member: removing it is allowed.
            let members = Set(try albumMembers([album]))
            let unknown = missing.subtracting(members)
            if !unknown.isEmpty { throw StoreError.notFound("asset", unknown.sorted()) }
            let delete = try db.statement("DELETE FROM user_album_assets WHERE album_id = :album AND asset_id = :asset")
            var removed = 0
            for id in ids.map(\.rawValue) {
                delete.bind(":album", to: album)
                delete.bind(":asset", to: id)
                try delete.run()
                guard db.changes == 1 else { continue }
                removed += 1
                if let pk = known.first(where: { $0.id == id })?.pk { try job.recordBefore(pk) }
            }
            return try touchAlbum(album, now: now, changed: removed > 0)
        }
    }

    // MARK: Keywords

    /// Edits the keywords a tagger (`source`) set on assets. Keywords are trimmed; empty ones
    /// and line breaks are refused.
    public func editKeywords(_ edit: KeywordEdit, source: String, ids: [AssetID], now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now, durable: true) { job throws(StoreError) in
            guard !source.isEmpty, source.count <= 100 else {
                throw StoreError(code: .invalid, message: "a keyword source is a name of 1 to 100 characters")
            }
            let words: [String]
            switch edit {
            case .replace(let w), .add(let w), .remove(let w): words = try Self.checkedKeywords(w)
            }
            let pks = try assetPKs(ids.map(\.rawValue))
            let insert = try db.statement("INSERT INTO asset_keywords (asset_id, source, keyword) VALUES (:asset, :source, :keyword) ON CONFLICT DO NOTHING")
            let remove = try db.statement("DELETE FROM asset_keywords WHERE asset_id = :asset AND source = :source AND keyword = :keyword")
            let clear = try db.statement("DELETE FROM asset_keywords WHERE asset_id = :asset AND source = :source")
            for (pk, id) in pks {
                var changed = 0
                switch edit {
                case .replace:
                    let before = Set(try keywords(of: id, source: source).map(Keywords.folded))
                    guard before != Set(words.map(Keywords.folded)) else { continue }
                    clear.bind(":asset", to: id)
                    clear.bind(":source", to: source)
                    try clear.run()
                    changed = 1
                    fallthrough
                case .add:
                    for w in words {
                        insert.bind(":asset", to: id)
                        insert.bind(":source", to: source)
                        insert.bind(":keyword", to: w)
                        try insert.run()
                        changed += db.changes
                    }
                case .remove:
                    for w in words {
                        remove.bind(":asset", to: id)
                        remove.bind(":source", to: source)
                        remove.bind(":keyword", to: w)
                        try remove.run()
                        changed += db.changes
                    }
                }
                if changed > 0 { try job.recordBefore(pk) }
            }
            return ChangeSet()
        }
    }

    func keywords(of asset: String, source: String) throws(StoreError) -> [String] {
        let s = try db.statement("SELECT keyword FROM asset_keywords WHERE asset_id = :asset AND source = :source")
        defer { s.reset() }
        s.bind(":asset", to: asset)
        s.bind(":source", to: source)
        var result: [String] = []
        while try s.step() { result.append(s.string(0)) }
        return result
    }

    // MARK: Helpers

    /// The pks of assets by id, in the order given (repeats dropped); unknown ids throw
    /// `notFound` unless `requireAll` is false.
    func assetPKs(_ ids: [String], requireAll: Bool = true) throws(StoreError) -> [(pk: Int64, id: String)] {
        guard ids.count <= Self.maxIDsPerWrite else {
            throw StoreError(code: .invalid, message: "at most \(Self.maxIDsPerWrite) ids per write (got \(ids.count))")
        }
        let s = try db.statement("SELECT pk FROM assets WHERE id = :id")
        defer { s.reset() }
        var seen = Set<String>()
        var found: [(Int64, String)] = []
        var missing: [String] = []
        for id in ids where seen.insert(id).inserted {
            s.bind(":id", to: id)
            if try s.step() { found.append((s.int64(0), id)) } else { missing.append(id) }
            s.reset()
        }
        if requireAll && !missing.isEmpty { throw StoreError.notFound("asset", missing) }
        return found
    }

    /// Ids a write may name at most.
    public static let maxIDsPerWrite = 10_000

    func albumMembers(_ albums: [String]) throws(StoreError) -> [String] {
        guard !albums.isEmpty else { return [] }
        let s = try db.statement("SELECT DISTINCT asset_id FROM user_album_assets WHERE album_id IN (SELECT value FROM json_each(:albums))")
        s.bind(":albums", to: Self.jsonArray(albums))
        var ids: [String] = []
        while try s.step() { ids.append(s.string(0)) }
        return ids
    }

    /// The album's `updated_at` and its place in the change set (and its folder's).
    func touchAlbum(_ album: String, now: Int64, changed: Bool) throws(StoreError) -> ChangeSet {
        var summary = ChangeSet()
        guard changed else { return summary }
        let s = try db.statement("UPDATE user_albums SET updated_at = :now WHERE id = :album")
        s.bind(":album", to: album)
        s.bind(":now", to: now)
        try s.run()
        summary.collectionsUpdated = [album]
        return summary
    }

    func requireAlbum(_ id: String) throws(StoreError) {
        guard try db.scalar("SELECT 1 FROM user_albums WHERE id = ?1", .text(id)).int64 != nil else {
            throw StoreError.notFound("album", [id])
        }
    }

    func requireFolder(_ id: String) throws(StoreError) {
        guard try db.scalar("SELECT 1 FROM user_folders WHERE id = ?1", .text(id)).int64 != nil else {
            throw StoreError.notFound("folder", [id])
        }
    }

    /// The folder and every folder below it.
    func folderSubtree(_ id: String) throws(StoreError) -> [String] {
        let s = try db.statement("""
            WITH RECURSIVE below(id) AS (SELECT :id UNION SELECT f.id FROM user_folders f JOIN below b ON f.parent_id = b.id)
            SELECT id FROM below
            """)
        s.bind(":id", to: id)
        var ids: [String] = []
        while try s.step() { ids.append(s.string(0)) }
        return ids
    }

    /// The folders above `id` (its parent first).
    func folderAncestors(of id: String) throws(StoreError) -> [String] {
        let s = try db.statement("""
            WITH RECURSIVE above(id, depth) AS (
                SELECT parent_id, 1 FROM user_folders WHERE id = :id
                UNION ALL SELECT f.parent_id, a.depth + 1 FROM user_folders f JOIN above a ON f.id = a.id
                WHERE a.depth < 1000)
            SELECT id FROM above WHERE id IS NOT NULL ORDER BY depth
            """)
        s.bind(":id", to: id)
        var ids: [String] = []
        while try s.step() { ids.append(s.string(0)) }
        return ids
    }

    static func userTable(_ id: String) throws(StoreError) -> String {
        if id.hasPrefix("u_") { return "user_albums" }
        if id.hasPrefix("uf_") { return "user_folders" }
        throw StoreError.notFound("album", [id])
    }

    static func checkedTitle(_ title: String) throws(StoreError) -> String {
        let trimmed = title.trimmingWhitespace()
        guard !trimmed.isEmpty, trimmed.count <= 500, !trimmed.contains("\n") else {
            throw StoreError(code: .invalid, message: "a title is 1 to 500 characters on one line")
        }
        return trimmed
    }

    static func checkedKeywords(_ words: [String]) throws(StoreError) -> [String] {
        guard words.count <= 1_000 else { throw StoreError(code: .invalid, message: "at most 1000 keywords per write") }
        var result: [String] = []
        for w in words {
            let t = w.trimmingWhitespace()
            guard !t.isEmpty, t.count <= 200, !t.contains("\n") else {
                throw StoreError(code: .invalid, message: "a keyword is 1 to 200 characters on one line (got \"\(w.prefix(40))\")")
            }
            if !result.contains(where: { Keywords.same($0, t) }) { result.append(t) }
        }
        return result
    }

    /// A collection id: a prefix, then the time-ordered random id assets use.
    static func newCollectionID(prefix: String, now: Int64) -> String {
        var g = SystemRandomNumberGenerator()
        return prefix + AssetID.random(milliseconds: now, using: &g).rawValue.dropFirst(2)
    }

    /// A JSON array of strings, for `json_each` (ids hold no quotes or backslashes, but escape anyway).
    static func jsonArray(_ values: [String]) -> String {
        var out = "["
        for (i, v) in values.enumerated() {
            if i > 0 { out += "," }
            var escaped = ""
            for c in v {
                if c == "\\" || c == "\"" { escaped.append("\\") }
                escaped.append(c)
            }
            out += "\"" + escaped + "\""
        }
        return out + "]"
    }

    /// The parent folder of a user album or folder (nil at the top); `notFound` if it does not exist.
    func parent(of id: String, table: String, column: String) throws(StoreError) -> String? {
        let s = try db.statement("SELECT \(column) FROM \(table) WHERE id = :id")
        defer { s.reset() }
        s.bind(":id", to: id)
        guard try s.step() else { throw StoreError.notFound(table == "user_albums" ? "album" : "folder", [id]) }
        return s.isNull(0) ? nil : s.string(0)
    }
}

extension IndexWriter {
    /// Deletes the user state of purged assets; returns the user albums that lost members.
    func forgetUserState(of ids: [String], now: Int64) throws(StoreError) -> [String] {
        guard !ids.isEmpty else { return [] }
        let list = Self.jsonArray(ids)
        let albums = try db.statement("""
            SELECT DISTINCT album_id FROM user_album_assets WHERE asset_id IN (SELECT value FROM json_each(:ids)) ORDER BY album_id
            """)
        albums.bind(":ids", to: list)
        var touched: [String] = []
        while try albums.step() { touched.append(albums.string(0)) }
        for table in ["user_album_assets", "asset_keywords", "user_state"] {
            let d = try db.statement("DELETE FROM \(table) WHERE asset_id IN (SELECT value FROM json_each(:ids))")
            d.bind(":ids", to: list)
            try d.run()
        }
        let stamp = try db.statement("UPDATE user_albums SET updated_at = :now WHERE id = :album")
        for album in touched {
            stamp.bind(":album", to: album)
            stamp.bind(":now", to: now)
            try stamp.run()
        }
        return touched
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and newlines.
    func trimmingWhitespace() -> String {
        var s = self[...]
        while let c = s.first, c == " " || c == "\n" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\n" { s = s.dropLast() }
        return String(s)
    }
}
