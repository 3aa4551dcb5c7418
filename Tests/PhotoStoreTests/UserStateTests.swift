import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

@Suite("User state: favorites, hidden, user albums and folders, taggers' keywords")
struct UserStateTests {
    let dir: TemporaryDirectory
    let db: Database
    let ids: [AssetID]

    init() throws {
        dir = try TemporaryDirectory("user-state")
        db = try Database(path: dir("u.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        let files = (0..<4).map { Make.outcome("/lib/a/p\($0).jpg", inode: UInt64($0 + 1), .media(Make.media(date: "2020-05-0\($0 + 1)T10:00:00"))) }
        _ = try db.write { try $0.apply(Make.batch(files), now: 1_000) }
        ids = try db.read { try $0.assets(limit: 10, offset: 0) }.map(\.id)
    }

    func write<R: Sendable>(_ body: (IndexWriter) throws -> R) throws -> R { try db.write(body) }
    func asset(_ id: AssetID) throws -> Asset? { try db.read { try $0.asset(id: id) } }

    @Test("Favorite and hidden: applied, journaled as updates with the smart albums; a repeat changes nothing; unknown ids fail whole")
    func flags() throws {
        defer { dir.remove() }
        let s = try write { try $0.set(.favorite, true, ids: [ids[0], ids[1]], now: 2_000) }
        #expect(Set(s.updated) == [ids[0], ids[1]])
        #expect(s.collectionsUpdated.contains("s_favorites"))
        #expect(s.token != nil)
        #expect(try asset(ids[0])?.isFavorite == true)
        let again = try write { try $0.set(.favorite, true, ids: [ids[0]], now: 2_100) }
        #expect(again.token == nil && again.updated.isEmpty)
        // One unknown id: nothing is written.
        let ghost = AssetID(rawValue: "a_2222222222222222zzzz")!
        #expect(throws: StoreError.self) { try write { try $0.set(.favorite, true, ids: [ids[2], ghost], now: 2_200) } }
        #expect(try asset(ids[2])?.isFavorite == false)
        do {
            _ = try write { try $0.set(.hidden, true, ids: [ghost], now: 2_300) }
            Issue.record("an unknown id was accepted")
        } catch let e as StoreError {
            #expect(e.code == .notFound)
            #expect(e.missing == [ghost.rawValue])
        }
        // Hidden leaves the moments, albums and ordinary fetches; the Hidden smart album has it.
        let h = try write { try $0.set(.hidden, true, ids: [ids[3]], now: 2_400) }
        #expect(h.collectionsUpdated.contains("s_hidden"))
        #expect(try db.read { try $0.assets(limit: 10, offset: 0) }.count == 3)
        #expect(try db.read { try $0.moments() }.count == 3)
        // The user_state mirror (what survives the asset row) agrees.
        let stored = try db.read { try $0.connection.scalar("SELECT count(*) FROM user_state WHERE is_favorite = 1").int64 }
        #expect(stored == 2)
    }

    @Test("User albums in folders: create, add in order, remove, rename, move, delete; members are kept by asset id")
    func albums() throws {
        defer { dir.remove() }
        let (folder, f) = try write { try $0.createUserFolder(title: " Trips ", parent: nil, now: 2_000) }
        #expect(folder.hasPrefix("uf_"))
        #expect(f.collectionsInserted == [folder])
        let (album, a) = try write { try $0.createUserAlbum(title: "Iceland", folder: folder, now: 2_001) }
        #expect(album.hasPrefix("u_"))
        #expect(a.collectionsInserted == [album] && a.collectionsUpdated == [folder])
        let add = try write { try $0.addToUserAlbum(album, ids: [ids[2], ids[0], ids[2]], now: 2_002) }
        #expect(add.collectionsUpdated.contains(album))
        #expect(Set(add.updated) == [ids[0], ids[2]])
        _ = try write { try $0.addToUserAlbum(album, ids: [ids[1]], now: 2_003) }
        var listed = try db.read { try $0.userAlbums() }
        #expect(listed.map(\.title) == ["Iceland"])
        #expect(listed.first?.assetCount == 3)
        #expect(listed.first?.folderID == folder)
        #expect(try db.read { try $0.userFolders() }.map(\.title) == ["Trips"])
        let members = try db.read { r -> [String] in
            let order = try r.connection.statement("SELECT asset_id FROM user_album_assets WHERE album_id = '\(album)' ORDER BY position")
            var ids: [String] = []
            while try order.step() { ids.append(order.string(0)) }
            return ids
        }
        #expect(members == [ids[2], ids[0], ids[1]].map(\.rawValue))
        // Re-adding changes nothing.
        let again = try write { try $0.addToUserAlbum(album, ids: [ids[0]], now: 2_004) }
        #expect(again.token == nil)

        _ = try write { try $0.removeFromUserAlbum(album, ids: [ids[0]], now: 2_005) }
        _ = try write { try $0.renameUserCollection(album, title: "Iceland 2019", now: 2_006) }
        listed = try db.read { try $0.userAlbums() }
        #expect(listed.first?.title == "Iceland 2019" && listed.first?.assetCount == 2)
        #expect(throws: StoreError.self) { try write { try $0.renameUserCollection(album, title: "  ", now: 2_007) } }
        // Folders nest, but never into themselves.
        let (inner, _) = try write { try $0.createUserFolder(title: "2019", parent: folder, now: 2_008) }
        #expect(throws: StoreError.self) { try write { try $0.moveUserCollection(folder, to: inner, now: 2_009) } }
        _ = try write { try $0.moveUserCollection(album, to: inner, now: 2_010) }
        #expect(try db.read { try $0.userAlbums() }.first?.folderID == inner)
        // Hidden members do not count; the album keeps them.
        _ = try write { try $0.set(.hidden, true, ids: [ids[1]], now: 2_011) }
        #expect(try db.read { try $0.userAlbums() }.first?.assetCount == 1)
        // Deleting the outer folder deletes what is in it; the assets stay.
        let d = try write { try $0.deleteUserCollection(folder, now: 2_012) }
        #expect(Set(d.collectionsDeleted) == [folder, inner, album])
        #expect(try db.read { try $0.userAlbums() }.isEmpty)
        #expect(try db.read { try $0.userFolders() }.isEmpty)
        #expect(try db.read { try $0.counts() }.assets == 4)
        #expect(throws: StoreError.self) { try write { try $0.addToUserAlbum(album, ids: [ids[0]], now: 2_013) } }
    }

    @Test("Taggers' keywords: per source, replace/add/remove, case-insensitive once, shown with the files' keywords")
    func keywords() throws {
        defer { dir.remove() }
        _ = try write { try $0.editKeywords(.add(["Dog", "dog", "Beach"]), source: "objects", ids: [ids[0]], now: 2_000) }
        _ = try write { try $0.editKeywords(.replace(["Alice"]), source: "faces", ids: [ids[0], ids[1]], now: 2_001) }
        #expect(Set(try asset(ids[0])?.keywords ?? []) == ["Dog", "Beach", "Alice"])
        let same = try write { try $0.editKeywords(.replace(["alice"]), source: "faces", ids: [ids[0]], now: 2_002) }
        #expect(same.token == nil)
        let removed = try write { try $0.editKeywords(.remove(["beach"]), source: "objects", ids: [ids[0]], now: 2_003) }
        #expect(removed.updated == [ids[0]])
        #expect(Set(try asset(ids[0])?.keywords ?? []) == ["Dog", "Alice"])
        #expect(throws: StoreError.self) { try write { try $0.editKeywords(.add(["a\nb"]), source: "x", ids: [ids[0]], now: 2_004) } }
        #expect(throws: StoreError.self) { try write { try $0.editKeywords(.add(["a"]), source: "", ids: [ids[0]], now: 2_005) } }
    }

    @Test("A purged asset takes its user state with it; Recently Deleted and back keeps it")
    func purge() throws {
        defer { dir.remove() }
        let (album, _) = try write { try $0.createUserAlbum(title: "A", folder: nil, now: 2_000) }
        _ = try write { try $0.addToUserAlbum(album, ids: [ids[0], ids[1]], now: 2_001) }
        _ = try write { try $0.set(.favorite, true, ids: [ids[0]], now: 2_002) }
        _ = try write { try $0.editKeywords(.add(["x"]), source: "t", ids: [ids[0]], now: 2_003) }
        var removal = WriteBatch()
        removal.removedFiles = [("/lib/a", Array("p0.jpg".utf8))]
        _ = try write { try $0.apply(removal, now: 3_000) }
        // In Recently Deleted: still a member, still a favorite (not counted in the album).
        #expect(try db.read { try $0.userAlbums() }.first?.assetCount == 1)
        let purge = try write { try $0.purge(deletedBefore: 4_000, now: 5_000) }
        #expect(purge.deleted == [ids[0]])
        #expect(purge.collectionsUpdated.contains(album))
        for table in ["user_state", "asset_keywords", "user_album_assets"] {
            let n = try db.read { try $0.connection.scalar("SELECT count(*) FROM \(table) WHERE asset_id = '\(ids[0].rawValue)'").int64 }
            #expect(n == 0, "\(table)")
        }
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
    }
}
