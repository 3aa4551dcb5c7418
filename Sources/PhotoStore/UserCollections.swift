import PhotoModel

/// A user album (PhotoKit's album of type `.album`): user state, stored only in the database.
public struct UserAlbum: Sendable, Hashable {
    public var id: String
    public var title: String
    /// The user folder it is in (nil at the top).
    public var folderID: String?
    /// Members that are in the library and visible (neither hidden nor in Recently Deleted).
    public var assetCount: Int
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The assets that stand for it (`KeyAssets`: its favorites, then photos spread over its time).
    public var keyAssetIDs: [AssetID] = []
    /// Its newest visible assets, newest first: what its folders' key assets are made of.
    public var newest: [MomentMemberKey] = []
}

/// A user folder (PhotoKit's collection list): holds albums and folders.
public struct UserFolder: Sendable, Hashable {
    public var id: String
    public var title: String
    public var parentID: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The newest visible assets of the albums anywhere in it (`UserFolder.withKeyAssets`).
    public var keyAssetIDs: [AssetID] = []

    /// `folders` with their key assets: the newest of the albums in each and in the folders
    /// below it.
    public static func withKeyAssets(_ folders: [UserFolder], albums: [UserAlbum]) -> [UserFolder] {
        var newest: [String: [MomentMemberKey]] = [:]
        let parents = Dictionary(folders.map { ($0.id, $0.parentID) }, uniquingKeysWith: { a, _ in a })
        for album in albums {
            var folder = album.folderID
            var seen = Set<String>()
            while let f = folder, seen.insert(f).inserted {
                KeyAssets.merge(album.newest, into: &newest[f, default: []])
                folder = parents[f] ?? nil
            }
        }
        return folders.map { f in
            var f = f
            f.keyAssetIDs = (newest[f.id] ?? []).map(\.id)
            return f
        }
    }
}

extension IndexReader {
    /// Every user folder, by title.
    public func userFolders() throws(StoreError) -> [UserFolder] {
        let s = try db.statement("SELECT id, title, parent_id, created_at, updated_at FROM user_folders ORDER BY title, id")
        var result: [UserFolder] = []
        while try s.step() {
            result.append(UserFolder(id: s.string(0), title: s.string(1), parentID: s.optionalString(2),
                                     createdAt: s.int64(3), updatedAt: s.int64(4)))
        }
        return result
    }

    /// Every user album (or one), by title, with its visible member count.
    public func userAlbums(id: String? = nil) throws(StoreError) -> [UserAlbum] {
        let s = try db.statement("""
            SELECT u.id, u.title, u.folder_id, u.created_at, u.updated_at,
                   (SELECT count(*) FROM user_album_assets m JOIN assets a ON a.id = m.asset_id
                    WHERE m.album_id = u.id AND a.is_hidden = 0 AND a.deleted_at IS NULL),
                   k.key_assets, k.newest
            FROM user_albums u LEFT JOIN collection_keys k ON k.id = u.id
            WHERE :id IS NULL OR u.id = :id ORDER BY u.title, u.id
            """)
        s.bind(":id", to: id)
        var result: [UserAlbum] = []
        while try s.step() {
            result.append(UserAlbum(id: s.string(0), title: s.string(1), folderID: s.optionalString(2), assetCount: s.int(5),
                                    createdAt: s.int64(3), updatedAt: s.int64(4), keyAssetIDs: KeyColumns.ids(s, 6),
                                    newest: KeyColumns.entries(s, 7).map(\.key)))
        }
        return result
    }
}
