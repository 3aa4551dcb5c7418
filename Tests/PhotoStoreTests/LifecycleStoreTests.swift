import PhotoModel
@testable import PhotoStore
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

    @Test("A copy that took a removed file's asset by its content gives it back when the file itself turns up again (a folder renamed while a walk went by): the file has its id and favorite, the copy an asset of its own; a copy removed meanwhile leaves the asset in Recently Deleted, and the file takes it back from there")
    func theFileItselfBeatsACopy() throws {
        defer { dir.remove() }
        let media = Make.media(date: "2020-05-05T10:00:00")
        for copyRemovedFirst in [false, true] {
            let root = copyRemovedFirst ? "/lib/two" : "/lib/one"
            var original = Make.outcome("\(root)/a/x.jpg", inode: 7, .media(media))
            original.fingerprint = copyRemovedFirst ? 11 : 12
            _ = try apply(Make.batch([original]))
            try favorite("\(root)/a/x.jpg")
            let x = try #require(try assets().first { $0.path == PathBytes("\(root)/a/x.jpg") })
            // The folder looked removed (renamed while the walk went by)...
            var removal = WriteBatch()
            removal.removedDirectories = [PathBytes("\(root)/a")]
            _ = try apply(removal, now: 2_000)
            // ...and a copy of the photo, read meanwhile, took its asset by its content.
            var copy = Make.outcome("\(root)/incoming/copy-x.jpg", inode: 300, .media(media))
            copy.fingerprint = original.fingerprint
            copy.identity.mtimeNanoseconds = 5_000
            copy.isSoleNewMember = true
            _ = try apply(Make.batch([copy]), now: 3_000)
            #expect(try assets().first { $0.path == PathBytes("\(root)/incoming/copy-x.jpg") }?.id == x.id)
            if copyRemovedFirst {
                var gone = WriteBatch()
                gone.removedFiles = [(PathBytes("\(root)/incoming"), Array("copy-x.jpg".utf8))]
                _ = try apply(gone, now: 3_500)
            }
            // The folder is found under its new name: the file itself, read as new.
            var back = original
            back.directory = PathBytes("\(root)/a.moved")
            back.isSoleNewMember = true
            let s = try apply(Make.batch([back]), now: 4_000)
            let after = try assets()
            let file = try #require(after.first { $0.path == PathBytes("\(root)/a.moved/x.jpg") })
            #expect(file.id == x.id, "copy removed first: \(copyRemovedFirst)")
            #expect(file.isFavorite)
            #expect(s.updated.contains(x.id))
            if !copyRemovedFirst {
                let copyAsset = try #require(after.first { $0.path == PathBytes("\(root)/incoming/copy-x.jpg") })
                #expect(copyAsset.id != x.id && !copyAsset.isFavorite)
                #expect(s.inserted == [copyAsset.id])
                #expect(copyAsset.media.captureDate == media.captureDate, "the copy keeps its own fields")
            }
            #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
            #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM content_adoptions").int64 } == 0)
        }
    }

    @Test("A rename read as a new file before the old name's removal came (a folder renamed back and forth while a walk went by): the removal gives the file back its asset, id and favorite; a hard link indexed long before is left alone, and an older asset never gives way to a newer one")
    func renameReadAsNewBeforeTheRemoval() throws {
        defer { dir.remove() }
        let media = Make.media(date: "2020-05-05T10:00:00")
        _ = try apply(Make.batch([Make.outcome("/lib/a/x.jpg", inode: 7, .media(media)),
                                  Make.outcome("/lib/h/y.jpg", inode: 8, .media(media)),
                                  Make.outcome("/lib/h2/y.jpg", inode: 8, .media(media))]), now: 1_000)
        try favorite("/lib/a/x.jpg")
        let x = try #require(try assets().first { $0.path == "/lib/a/x.jpg" })
        var renamed = Make.outcome("/lib/a.moved/x.jpg", inode: 7, .media(media))
        renamed.isSoleNewMember = true
        let s1 = try apply(Make.batch([renamed]), now: 2_000)
        let y = try #require(s1.inserted.first)
        var removal = WriteBatch()
        removal.removedDirectories = [PathBytes("/lib/a")]
        let s2 = try apply(removal, now: 3_000)
        let moved = try #require(try assets().first { $0.path == "/lib/a.moved/x.jpg" })
        #expect(moved.id == x.id)
        #expect(moved.isFavorite)
        #expect(s2.updated.contains(x.id))
        #expect(try assets().allSatisfy { $0.id != y })
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 0)
        // A hard link: the same identity at two paths, both indexed long ago; one name removed.
        let link = try #require(try assets().first { $0.path == "/lib/h2/y.jpg" })
        var unlink = WriteBatch()
        unlink.removedFiles = [(PathBytes("/lib/h"), Array("y.jpg".utf8))]
        _ = try apply(unlink, now: 1_000 + FileRows.movedAsNewWindowMilliseconds + 1)
        let left = try #require(try assets().first { $0.path == "/lib/h2/y.jpg" })
        #expect(left.id == link.id)
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)
        // The other way round — the older asset's row is the one left, the newer one's name is
        // removed (the folder went back and forth): the older asset keeps its place and id.
        let now = 2_000 + FileRows.movedAsNewWindowMilliseconds
        _ = try apply(Make.batch([Make.outcome("/lib/c.moved/z.jpg", inode: 9, .media(media))]), now: now)
        let older = try #require(try assets().first { $0.path == "/lib/c.moved/z.jpg" })
        var newer = Make.outcome("/lib/c/z.jpg", inode: 9, .media(media))
        newer.isSoleNewMember = true
        _ = try apply(Make.batch([newer]), now: now + 1_000)
        var gone = WriteBatch()
        gone.removedDirectories = [PathBytes("/lib/c")]
        _ = try apply(gone, now: now + 2_000)
        #expect(try assets().first { $0.path == "/lib/c.moved/z.jpg" }?.id == older.id)
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 2)
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

    @Test("Visible assets no file refers to (left by earlier builds) go to Recently Deleted, once in a database's life")
    func filelessRepair() throws {
        defer { dir.remove() }
        _ = try apply(Make.batch([Make.outcome("/lib/a/x.jpg", inode: 1, .media(Make.media())),
                                  Make.outcome("/lib/a/y.jpg", inode: 2, .media(Make.media()))]))
        let ids = Dictionary(uniqueKeysWithValues: try assets().map { ($0.path.string, $0.id) })
        let (x, y) = (try #require(ids["/lib/a/x.jpg"]), try #require(ids["/lib/a/y.jpg"]))
        // What an earlier build could leave: y's row gone to another asset, y's own asset visible without a file.
        try db.write { w in try w.connection.execute("DELETE FROM files WHERE name = CAST('y.jpg' AS BLOB)") }
        let (changes, trashed) = try db.write { try $0.trashFilelessAssets(now: 5_000) }
        #expect(trashed == 1)
        #expect(changes.updated == [y] && changes.collectionsUpdated.contains("s_recentlyDeleted"))
        #expect(try assets().map(\.id) == [x])
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)
        // Once: a later start does not look again.
        try db.write { w in try w.connection.execute("DELETE FROM files WHERE name = CAST('x.jpg' AS BLOB)") }
        #expect(try db.write { try $0.trashFilelessAssets(now: 6_000) }.trashed == 0)
    }

    /// Media file rows that leave their fields to their asset's row (`MediaColumns.deferred`)
    /// and are not its only file, or are not linked to one: none may exist.
    static func misdeferred(_ db: Database) throws -> Int64 {
        try db.read { r in
            try r.connection.scalar("""
                SELECT count(*) FROM files f WHERE f.status = 'media' AND f.media_type IS NULL
                AND (f.asset_pk IS NULL OR (SELECT count(*) FROM files o WHERE o.asset_pk = f.asset_pk) != 1)
                """).int64 ?? -1
        }
    }

    @Test("A file alone in its asset keeps its fields only in the asset's row; a sidecar or a RAW joining, a removal and a restore give them back whole")
    func deferredFields() throws {
        defer { dir.remove() }
        func row(_ name: String) throws -> String? {
            try db.read { r in
                try r.connection.scalar("SELECT coalesce(local_datetime, 'deferred') FROM files WHERE name = ?1",
                                        .blob(Array(name.utf8))).string
            }
        }
        func asset(_ path: String) throws -> Asset? { try assets().first { $0.path == PathBytes(path) } }
        var x = Make.outcome("/lib/a/x.jpg", inode: 1, .media(Make.media(date: "2020-05-05T10:00:00", source: .fileModified)))
        x.isSoleNewMember = true  // the bulk path
        let y = Make.outcome("/lib/a/y.jpg", inode: 2, .media(Make.media(date: "2020-06-06T10:00:00", width: 1234)))
        _ = try apply(Make.batch([x, y]))
        #expect(try row("x.jpg") == "deferred" && row("y.jpg") == "deferred")
        #expect(try asset("/lib/a/x.jpg")?.captureDate.local.description == "2020-05-05T10:00:00")

        // A sidecar's date and rating become the asset's; the photo's own are back in its row.
        let xmp = SidecarFields(date: Timestamp.iso8601("2015-06-07T08:09:10+02:00"), rating: 4, keywords: ["sea"])
        _ = try apply(Make.batch([Make.outcome("/lib/a/x.xmp", inode: 3, .sidecar(xmp))]), now: 2_000)
        #expect(try asset("/lib/a/x.jpg")?.captureDate.local.description == "2015-06-07T08:09:10")
        #expect(try row("x.jpg") == "2020-05-05T10:00:00")
        var removal = WriteBatch()
        removal.removedFiles = [("/lib/a", Array("x.xmp".utf8))]
        _ = try apply(removal, now: 3_000)
        let alone = try #require(try asset("/lib/a/x.jpg"))
        #expect(alone.captureDate.local.description == "2020-05-05T10:00:00" && alone.rating == nil && alone.keywords.isEmpty)
        #expect(try row("x.jpg") == "deferred")

        // A RAW of the same name joins, then goes.
        _ = try apply(Make.batch([Make.outcome("/lib/a/y.cr2", inode: 4, .media(Make.media(date: "2020-06-06T10:00:00",
                                                                                             format: "cr2", raw: true, width: 6000)))]),
                      now: 4_000)
        #expect(try row("y.jpg") == "2020-06-06T10:00:00")
        removal.removedFiles = [("/lib/a", Array("y.cr2".utf8))]
        _ = try apply(removal, now: 5_000)
        #expect(try row("y.jpg") == "deferred")
        #expect(try asset("/lib/a/y.jpg")?.pixelWidth == 1234)

        // Removed: the tombstone is whole; found again without reading, the asset has its fields.
        let original = try #require(try asset("/lib/a/y.jpg"))
        removal.removedFiles = [("/lib/a", Array("y.jpg".utf8))]
        _ = try apply(removal, now: 6_000)
        #expect(try db.read { try $0.connection.scalar("SELECT pixel_width FROM tombstones WHERE name = CAST('y.jpg' AS BLOB)").int64 } == 1234)
        let tombstone = try #require(try db.read { try $0.connection.scalar("SELECT pk FROM tombstones WHERE name = CAST('y.jpg' AS BLOB)").int64 })
        var restore = WriteBatch()
        restore.restoredFiles = [FileRestore(path: "/lib/b/y.jpg", identity: FileIdentity(fsid: 7, inode: 2, size: 1234, mtimeNanoseconds: 99),
                                             tombstone: tombstone)]
        _ = try apply(restore, now: 7_000)
        let back = try #require(try asset("/lib/b/y.jpg"))
        #expect(back.id == original.id && back.media == original.media)

        // Removed and copied in one job (the copy on the bulk path): the original asset takes the
        // copy's row, with the copy's fields.
        var job = WriteBatch()
        job.removedFiles = [("/lib/a", Array("x.jpg".utf8))]
        var copy = Make.outcome("/lib/w/x.jpg", inode: 300, .media(Make.media(date: "2020-05-05T10:00:00", source: .fileModified)))
        copy.fingerprint = x.fingerprint
        copy.isSoleNewMember = true
        job.files = [copy]
        _ = try apply(job, now: 8_000)
        let moved = try #require(try asset("/lib/w/x.jpg"))
        #expect(moved.id == alone.id && moved.media == alone.media)
        #expect(try Self.misdeferred(db) == 0)
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
    }

    @Test("Random histories of groups (JPEG, RAW, sidecar) written, rewritten, removed, moved and purged: every asset has the fields of its files, composed", arguments: UInt64(1)...8)
    func composedFields(seed: UInt64) throws {
        defer { dir.remove() }
        var g = SplitMix64(seed: seed)
        var media: [String: MediaFields] = [:]
        var sidecars: [String: SidecarFields] = [:]
        var inodes: [String: UInt64] = [:]
        var inode: UInt64 = 1
        var now: Int64 = 1_000
        let dirs = ["/lib/a", "/lib/b"]
        let bases = ["IMG_1", "IMG_2", "IMG_3"]
        func write(_ path: String) -> FileOutcome {
            inode += 1
            inodes[path] = inode
            if path.hasSuffix(".xmp") {
                let fields = SidecarFields(date: g.next() % 2 == 0 ? Timestamp.iso8601("2015-0\(1 + g.next() % 9)-07T08:09:10+02:00") : nil,
                                           rating: g.next() % 2 == 0 ? Int(g.next() % 6) : nil,
                                           keywords: g.next() % 2 == 0 ? ["k\(g.next() % 3)"] : [])
                sidecars[path] = fields
                media[path] = nil
                return Make.outcome(path, inode: inode, .sidecar(fields))
            }
            let raw = path.hasSuffix(".CR2")
            let fields = Make.media(date: "2020-0\(1 + g.next() % 9)-0\(1 + g.next() % 9)T10:00:00",
                                    format: raw ? "cr2" : "jpeg", raw: raw,
                                    source: [DateSource.exifOriginal, .fileModified, .exifModified][Int(g.next() % 3)],
                                    width: Int(100 + g.next() % 5000), make: g.next() % 4 == 0 ? nil : "Canon")
            media[path] = fields
            sidecars[path] = nil
            var o = Make.outcome(path, inode: inode, .media(fields), size: Int64(1000 + inode))
            o.isSoleNewMember = g.next() % 2 == 0 && !(media.keys.contains { $0 != path && $0.hasPrefix(String(path.prefix(while: { $0 != "." }))) })
                && !sidecars.keys.contains { $0.hasPrefix(String(path.prefix(while: { $0 != "." }))) }
            return o
        }
        for step in 0..<60 {
            now += 1_000
            let dir = dirs[Int(g.next() % 2)]
            let path = "\(dir)/\(bases[Int(g.next() % 3)]).\(["JPG", "CR2", "xmp"][Int(g.next() % 3)])"
            let known = Array(inodes.keys).sorted()
            var b = WriteBatch()
            switch g.next() % 6 {
            case 0, 1, 2:
                b.files = [write(path)]
            case 3:
                if let victim = known.randomElement(using: &g) {
                    let p = PathBytes(victim)
                    b.removedFiles = [(p.parent, p.lastComponent)]
                    media[victim] = nil
                    sidecars[victim] = nil
                    inodes[victim] = nil
                }
            case 4:
                if let from = known.randomElement(using: &g), inodes[path] == nil,
                   from.hasSuffix(".xmp") == path.hasSuffix(".xmp") {
                    b.movedFiles = [FileMove(from: PathBytes(from), to: PathBytes(path))]
                    media[path] = media.removeValue(forKey: from)
                    sidecars[path] = sidecars.removeValue(forKey: from)
                    inodes[path] = inodes.removeValue(forKey: from)
                }
            default:
                _ = try db.write { try $0.purge(deletedBefore: now - 3_000, now: now) }
            }
            if !b.files.isEmpty || !b.removedFiles.isEmpty || !b.movedFiles.isEmpty { _ = try apply(b, now: now) }
            #expect(try Self.misdeferred(db) == 0, "seed \(seed), step \(step)")
            for asset in try assets() {
                let primary = try #require(asset.resources.first { $0.role == .primary }).path.string
                let sidecar = asset.resources.first { $0.role == .sidecar }.flatMap { sidecars[$0.path.string] }
                let own = try #require(media[primary], "seed \(seed), step \(step): \(primary)")
                #expect(asset.media == AssetComposer.assetFields(primary: own, sidecar: sidecar), "seed \(seed), step \(step): \(primary)")
            }
        }
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }))
    }
}
