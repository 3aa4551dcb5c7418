import PhotoModel
import PhotoStore
import PhotoTesting
import Testing

@Suite("Sort jobs: moves, Recently Deleted, restores, purge")
struct LifecycleStoreTests {
    let dir: TemporaryDirectory
    let db: Database
    init() throws {
        dir = try TemporaryDirectory("lifecycle-store")
        db = try Database(path: dir("l.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
    }

    func apply(_ b: WriteBatch, now: Int64 = 1_000) throws -> ChangeSet { try db.write { try $0.apply(b, now: now) } }
    func assets() throws -> [Asset] { try db.read { try $0.assets(limit: 1000, offset: 0) } }
    func favorite(_ path: String) throws {
        _ = try db.write { w in
            try w.connection.execute("UPDATE assets SET is_favorite = 1 WHERE path = CAST('\(path)' AS BLOB)")
        }
    }

    @Test("A moved file keeps its asset id, favorite, pairing; the change set says updated")
    func fileMove() throws {
        defer { dir.remove() }
        _ = try apply(Make.batch([Make.outcome("/lib/a/IMG_1.JPG", inode: 1, .media(Make.media())),
                                  Make.outcome("/lib/a/IMG_1.CR2", inode: 2, .media(Make.media(format: "cr2", raw: true)))]))
        let before = try #require(try assets().first)
        try favorite("/lib/a/IMG_1.JPG")
        var move = WriteBatch()
        move.movedFiles = [FileMove(from: "/lib/a/IMG_1.JPG", to: "/lib/b/renamed.jpg")]
        let s = try apply(move)
        #expect(s.updated.contains(before.id))
        #expect(s.deleted.isEmpty)
        let all = try assets()
        let moved = try #require(all.first { $0.path == "/lib/b/renamed.jpg" })
        #expect(moved.id == before.id)
        #expect(moved.isFavorite)
        // The RAW left behind is its own asset now.
        #expect(all.count == 2)
        #expect(all.contains { $0.path == "/lib/a/IMG_1.CR2" && $0.subtypes.contains(.raw) })
        // A move the index cannot resolve is reported for reading.
        var unknown = WriteBatch()
        unknown.movedFiles = [FileMove(from: "/lib/nowhere/x.jpg", to: "/lib/b/x.jpg")]
        #expect(try apply(unknown).report.unresolvedFiles == ["/lib/b/x.jpg"])
    }

    @Test("A moved folder keeps every id, the favorites and its album id; the album takes the new path and title")
    func directoryMove() throws {
        defer { dir.remove() }
        var files: [FileOutcome] = []
        for i in 0..<20 { files.append(Make.outcome("/lib/2019/trip/p\(i).jpg", inode: UInt64(i + 1), .media(Make.media()))) }
        files.append(Make.outcome("/lib/2019/trip/day2/q.jpg", inode: 100, .media(Make.media())))
        _ = try apply(Make.batch(files))
        try favorite("/lib/2019/trip/p3.jpg")
        let ids = Dictionary(uniqueKeysWithValues: try assets().map { ($0.path.lastComponent, $0.id) })
        let album = try #require(try db.read { try $0.folderAlbums() }.first { $0.title == "trip" })
        var move = WriteBatch()
        move.movedDirectories = [DirectoryMove(from: "/lib/2019/trip", to: "/lib/best/Iceland 2019")]
        let s = try apply(move)
        #expect(s.updated.count == 21)
        #expect(s.collectionsUpdated.contains(album.id))
        let after = try assets()
        #expect(after.allSatisfy { $0.path.isWithin("/lib/best/Iceland 2019") })
        #expect(Dictionary(uniqueKeysWithValues: after.map { ($0.path.lastComponent, $0.id) }) == ids)
        #expect(after.first { $0.path.lastComponent == Array("p3.jpg".utf8) }?.isFavorite == true)
        let moved = try #require(try db.read { try $0.folderAlbums() }.first { $0.id == album.id })
        #expect(moved.path == "/lib/best/Iceland 2019")
        #expect(moved.title == "Iceland 2019")
        #expect(moved.assetCount == 20)
        #expect(try db.read { try $0.snapshot(of: "/lib/best/Iceland 2019/day2") }?.files.count == 1)
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
    }

    @Test("A deleted file goes to Recently Deleted with its user state; the same file back restores the same id")
    func recentlyDeleted() throws {
        defer { dir.remove() }
        _ = try apply(Make.batch([Make.outcome("/lib/a/x.jpg", inode: 7, .media(Make.media(date: "2020-05-05T10:00:00")))]))
        try favorite("/lib/a/x.jpg")
        let original = try #require(try assets().first)
        var removal = WriteBatch()
        removal.removedFiles = [("/lib/a", Array("x.jpg".utf8))]
        let s1 = try apply(removal, now: 2_000)
        #expect(s1.updated == [original.id])  // going to Recently Deleted is an update
        #expect(s1.collectionsDeleted.contains("m_20200505"))
        #expect(try assets().isEmpty)
        let trash = try #require(try db.read { try $0.assets(in: .smartAlbum(SmartAlbums.album(.recentlyDeleted)), limit: 10, offset: 0, now: 2_000) })
        #expect(trash.assets.map(\.id) == [original.id])
        #expect(trash.assets.first?.isFavorite == true)
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)

        // The same content comes back elsewhere (a copy back from a backup: new inode, same fingerprint).
        var back = Make.outcome("/lib/restored/x-copy.jpg", inode: 99, .media(Make.media(date: "2020-05-05T10:00:00")))
        back.fingerprint = 7 &* 0x9E37_79B9_7F4A_7C15
        back.isSoleNewMember = true
        let s2 = try apply(Make.batch([back]), now: 3_000)
        #expect(s2.updated == [original.id])
        #expect(s2.inserted.isEmpty)
        let restored = try #require(try assets().first)
        #expect(restored.id == original.id)
        #expect(restored.isFavorite)
        #expect(restored.path == "/lib/restored/x-copy.jpg")
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 0)
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
    }

    @Test("A removal and a copy of the removed file in one job (merged jobs, a move across file systems): one asset, same id")
    func removalAndCopyInOneJob() throws {
        defer { dir.remove() }
        _ = try apply(Make.batch([Make.outcome("/lib/a/x.jpg", inode: 7, .media(Make.media(date: "2020-05-05T10:00:00"))),
                                  Make.outcome("/lib/a/y.jpg", inode: 8, .media(Make.media(date: "2020-05-06T10:00:00")))]))
        try favorite("/lib/a/x.jpg")
        let original = try #require(try assets().first { $0.path == "/lib/a/x.jpg" })

        // One transaction removes the file and writes its copy (new inode, same content).
        var job = WriteBatch()
        job.removedFiles = [("/lib/a", Array("x.jpg".utf8))]
        var copy = Make.outcome("/lib/w/x.jpg", inode: 300, .media(Make.media(date: "2020-05-05T10:00:00")))
        copy.fingerprint = 7 &* 0x9E37_79B9_7F4A_7C15
        job.files = [copy]
        let s = try apply(job, now: 3_000)
        #expect(s.inserted.isEmpty)
        #expect(s.deleted.isEmpty)
        #expect(s.updated.contains(original.id))
        let after = try assets()
        #expect(after.count == 2)
        let again = try #require(after.first { $0.path == "/lib/w/x.jpg" })
        #expect(again.id == original.id)
        #expect(again.isFavorite)
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 0)
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
    }

    @Test("Found again by identity without reading: the tombstone becomes the row")
    func restoreWithoutReading() throws {
        defer { dir.remove() }
        _ = try apply(Make.batch([Make.outcome("/lib/a/y.jpg", inode: 5, .media(Make.media(width: 1234)))]))
        let original = try #require(try assets().first)
        var removal = WriteBatch()
        removal.removedDirectories = ["/lib/a"]
        _ = try apply(removal, now: 2_000)
        let tombstone = try #require(try db.read { r in try r.connection.scalar("SELECT pk FROM tombstones").int64 })
        var restore = WriteBatch()
        restore.restoredFiles = [FileRestore(path: "/lib/b/y.jpg",
                                             identity: FileIdentity(fsid: 7, inode: 5, size: 1234, mtimeNanoseconds: 99),
                                             tombstone: tombstone)]
        let s = try apply(restore, now: 3_000)
        #expect(s.updated == [original.id])
        let back = try #require(try assets().first)
        #expect(back.id == original.id)
        #expect(back.pixelWidth == 1234)  // from the tombstone: nothing was read
        #expect(back.path == "/lib/b/y.jpg")
    }

    @Test("Purge after the retention period deletes for good")
    func purge() throws {
        defer { dir.remove() }
        _ = try apply(Make.batch([Make.outcome("/lib/a/z.jpg", inode: 3, .media(Make.media()))]))
        let id = try #require(try assets().first).id
        var removal = WriteBatch()
        removal.removedFiles = [("/lib/a", Array("z.jpg".utf8))]
        _ = try apply(removal, now: 10_000)
        #expect(try db.write { try $0.purge(deletedBefore: 9_000, now: 20_000) }.deleted.isEmpty)
        let s = try db.write { try $0.purge(deletedBefore: 11_000, now: 20_000) }
        #expect(s.deleted == [id])
        #expect(s.collectionsUpdated.contains("s_recentlyDeleted"))
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 0)
        #expect(try db.read { r in try r.connection.scalar("SELECT count(*) FROM tombstones").int64 } == 0)
    }
}
