/// A folder album as the tree needs it: a directory that directly holds assets.
public struct FolderAlbumInput: Sendable, Hashable {
    /// The directory's absolute path.
    public var path: PathBytes
    /// Visible assets directly in it.
    public var assetCount: Int
    /// The album's id (the store's).
    public var albumID: String
    /// Its newest capture time (nil when not known): no asset of it is newer, so an album
    /// older than what a list shows already cannot change the list's key assets.
    public var end: LocalDateTime?

    /// An album from its fields.
    public init(path: PathBytes, assetCount: Int, albumID: String, end: LocalDateTime? = nil) {
        self.path = path
        self.assetCount = assetCount
        self.albumID = albumID
        self.end = end
    }
}

/// A folder of collections (PhotoKit's `PHCollectionList` of folders): one library root, or a
/// directory between a root and its folder albums.
public struct CollectionList: Sendable, Hashable {
    /// `l_` and 13 base32 characters of the path's hash (`FolderTree.listID(path:)`): the same
    /// directory always has the same id, across restarts and rebuilds.
    public var id: String
    /// The directory's last path component (a root's, or the root path itself for `/`), read
    /// as UTF-8 with invalid bytes replaced; `path` keeps the exact bytes.
    public var title: String
    /// The directory, without trailing slash.
    public var path: PathBytes
    /// The library root the list belongs to.
    public var root: PathBytes
    /// The enclosing list; `nil` for a root's list.
    public var parentID: String?
    /// Nested lists, by path bytes.
    public var listIDs: [String]
    /// Folder albums directly in this list, by path bytes.
    public var albumIDs: [String]
    /// Folder albums anywhere below (in this list and its nested lists).
    public var albumCount: Int
    /// Assets in those albums.
    public var assetCount: Int
    /// The newest visible assets in those albums, newest first (`KeyAssets`).
    public var keyAssetIDs: [AssetID] = []

    /// A list from its fields.
    public init(id: String, title: String, path: PathBytes, root: PathBytes, parentID: String?, listIDs: [String],
                albumIDs: [String], albumCount: Int, assetCount: Int) {
        self.id = id
        self.title = title
        self.path = path
        self.root = root
        self.parentID = parentID
        self.listIDs = listIDs
        self.albumIDs = albumIDs
        self.albumCount = albumCount
        self.assetCount = assetCount
    }
}

/// The collection lists that mirror the directory tree above folder albums.
///
/// - Every library root has a top-level list (even while it holds no album, so that clients see
///   every configured root).
/// - A directory below a root has a list when some folder album lies strictly below it;
///   directories with no album below are not listed.
/// - A folder album sits in the list of its parent directory; the album of a root itself sits in
///   the root's list. So a directory that holds assets and has album subdirectories is both an
///   album and a list, side by side in its parent's list, and an album's place never moves when
///   subdirectories come and go.
/// - An album under nested roots belongs to the deepest root; an album under no root is left out.
public enum FolderTree {
    /// The lists of `roots` for `albums`, by path bytes. A list's key assets are the newest of
    /// the albums below it: `newest(k)` gives album `k`'s (newest first), and is asked only for
    /// the albums that can still change a list's — the albums are taken newest first (by
    /// `end`), and a list is done once its third is newer than the next album's `end`.
    public static func build(roots: [PathBytes], albums: [FolderAlbumInput],
                             newest: (Int) -> [MomentMemberKey] = { _ in [] }) -> [CollectionList] {
        let roots = Array(Set(roots.map(normalized)))
        var lists: [PathBytes: CollectionList] = [:]
        var chains = [[PathBytes]](repeating: [], count: albums.count)
        for root in roots { lists[root] = makeList(path: root, root: root, parent: nil) }
        // By index: an album carries its newest assets, and moving those around in a sort of
        // thousands showed in the fetch's profile.
        for k in albums.indices.sorted(by: { albums[$0].path < albums[$1].path }) {
            let album = albums[k]
            let path = normalized(album.path)
            guard let root = Self.root(of: path, roots: roots) else { continue }
            let chain = listPaths(ofAlbumAt: path, root: root)
            // From the root down, so that a new list's parent exists when it is linked.
            for (k, dir) in chain.enumerated().reversed() {
                if lists[dir] == nil {
                    lists[dir] = makeList(path: dir, root: root, parent: chain[k + 1])
                    lists[chain[k + 1]]!.listIDs.append(listID(path: dir))
                }
                lists[dir]!.albumCount += 1
                lists[dir]!.assetCount += album.assetCount
            }
            lists[chain[0]]!.albumIDs.append(album.albumID)
            chains[k] = chain
        }
        var keys: [PathBytes: [MomentMemberKey]] = [:]
        let byEnd = albums.indices.filter { !chains[$0].isEmpty }.sorted { a, b in
            switch (albums[a].end, albums[b].end) {
            case let (x?, y?): return MomentGrouping.precedes(y, x)
            case (nil, _?): return true  // unknown: looked at first
            default: return false
            }
        }
        for k in byEnd {
            let open = chains[k].filter { list in
                guard let shown = keys[list], shown.count == KeyAssets.limit, let end = albums[k].end else { return true }
                return !MomentGrouping.precedes(end, shown[shown.count - 1].local)
            }
            guard !open.isEmpty else { continue }
            let entries = newest(k)
            for list in open { KeyAssets.merge(entries, into: &keys[list, default: []]) }
        }
        for (path, shown) in keys { lists[path]!.keyAssetIDs = shown.map(\.id) }
        // Nested lists are created in the order of the albums that need them, which is not
        // their own path order (`/r/a b/x` sorts before `/r/a/x`, but list `/r/a` before `/r/a b`).
        let byID = Dictionary(uniqueKeysWithValues: lists.values.map { ($0.id, $0.path) })
        for key in lists.keys {
            lists[key]!.listIDs.sort { byID[$0]! < byID[$1]! }
        }
        return lists.values.sorted { $0.path < $1.path }
    }

    /// The paths of the lists an album counts in: its own list first (its parent directory, or
    /// the root for a root's album), up to the root. After an album's asset count changes,
    /// exactly these lists' counts change.
    public static func listPaths(ofAlbumAt path: PathBytes, root: PathBytes) -> [PathBytes] {
        let path = normalized(path), root = normalized(root)
        guard path != root else { return [root] }
        var chain: [PathBytes] = []
        var dir = path.parent
        while dir != root, dir.isWithin(root), dir.bytes.count > root.bytes.count {
            chain.append(dir)
            dir = dir.parent
        }
        chain.append(root)
        return chain
    }

    /// The deepest root `path` is within; `nil` when none.
    public static func root(of path: PathBytes, roots: [PathBytes]) -> PathBytes? {
        let path = normalized(path)
        return roots.map(normalized).filter { path.isWithin($0) }.max { $0.bytes.count < $1.bytes.count }
    }

    /// `l_` and the 64-bit FNV-1a hash of the normalized path's bytes in 13 lower-case base32
    /// characters (`a`–`z`, `2`–`7`, most significant first). A pure function of the path: no
    /// table to keep, the same on every machine; two directories collide with odds of about
    /// n²/2⁶⁵, negligible for the directory counts of a photo library.
    public static func listID(path: PathBytes) -> String {
        let h = fnv1a64(normalized(path).bytes)
        var chars: [UInt8] = Array("l_".utf8)
        for k in stride(from: 12, through: 0, by: -1) {
            chars.append(AssetID.alphabet[Int((h >> UInt64(k * 5)) & 31)])
        }
        return String(decoding: chars, as: UTF8.self)
    }

    /// 64-bit FNV-1a (Fowler, Noll, Vo): offset basis 0xcbf29ce484222325, prime 0x100000001b3.
    public static func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h &*= 0x0000_0100_0000_01B3
        }
        return h
    }

    /// A list's title: the last path component, or the whole path when that is empty (`/`).
    public static func title(of path: PathBytes) -> String {
        let p = normalized(path)
        let last = p.lastComponent
        return last.isEmpty ? p.string : String(decoding: last, as: UTF8.self)
    }

    /// The path without trailing slashes (`/` stays `/`), so `/srv/photos/` and `/srv/photos`
    /// are one directory with one id.
    public static func normalized(_ path: PathBytes) -> PathBytes {
        var b = path.bytes
        while b.count > 1, b.last == UInt8(ascii: "/") { b.removeLast() }
        return PathBytes(b)
    }

    /// What changed between two builds, by list id: for the change set.
    public static func diff(old: [CollectionList], new: [CollectionList])
        -> (inserted: [String], updated: [String], deleted: [String]) {
        let before = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0) })
        let after = Dictionary(uniqueKeysWithValues: new.map { ($0.id, $0) })
        let inserted = new.filter { before[$0.id] == nil }.map(\.id)
        let updated = new.filter { n in before[n.id].map { $0 != n } ?? false }.map(\.id)
        let deleted = old.filter { after[$0.id] == nil }.map(\.id)
        return (inserted, updated, deleted)
    }

    static func makeList(path: PathBytes, root: PathBytes, parent: PathBytes?) -> CollectionList {
        CollectionList(id: listID(path: path), title: title(of: path), path: path, root: root,
                       parentID: parent.map { listID(path: $0) }, listIDs: [], albumIDs: [], albumCount: 0, assetCount: 0)
    }
}
