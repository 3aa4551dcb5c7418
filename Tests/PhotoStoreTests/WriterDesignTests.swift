import PhotoModel
import PhotoSystem
@testable import PhotoStore
import PhotoTesting
import Testing

@Suite("The writer's parts: column lists, durability of user state")
struct WriterDesignTests {
    /// Every column a list declares is a column of each table it is written to: a field added
    /// to `MediaFields` and its list without a migration fails here, not in production.
    @Test func columnListsMatchTheSchema() throws {
        let dir = try TemporaryDirectory("columns")
        defer { dir.remove() }
        let db = try Database(path: dir("index.db").string)
        let columns: (String) throws -> Set<String> = { table in
            try db.write { w in
                let s = try w.connection.statement("SELECT name FROM pragma_table_info('\(table)')")
                var names = Set<String>()
                while try s.step() { names.insert(s.string(0)) }
                return names
            }
        }
        let media = Set(MediaColumns.list.columns.map(\.name))
        #expect(media.count == MediaColumns.list.columns.count)
        for table in ["files", "tombstones", "assets"] {
            #expect(media.subtracting(try columns(table)).isEmpty, "\(table) lacks media columns")
        }
        let files = try columns("files")
        for list in [FileColumns.place, FileColumns.identity, FileColumns.outcome] {
            #expect(Set(list.columns.map(\.name)).subtracting(files).isEmpty)
        }
        #expect(Set(FileColumns.identity.columns.map(\.name)).subtracting(try columns("tombstones")).isEmpty)
        #expect(Set(AssetRecordColumns.list.columns.map(\.name)).subtracting(try columns("assets")).isEmpty)
        // Parameters are the field names: no two columns share one.
        let parameters = (MediaColumns.list.columns.map(\.parameter) + FileColumns.place.columns.map(\.parameter)
            + FileColumns.identity.columns.map(\.parameter) + FileColumns.outcome.columns.map(\.parameter))
        #expect(Set(parameters).count == parameters.count)
    }

    /// What a file says comes back from its asset field for field (the one list writes and reads).
    @Test func mediaFieldsRoundTrip() throws {
        let dir = try TemporaryDirectory("roundtrip")
        defer { dir.remove() }
        let db = try Database(path: dir("index.db").string)
        try db.write { _ = try $0.registerRoots(["/lib"]) }
        var media = Make.media(lens: "iPhone 12 front camera", contentID: "ABC-123", comment: "hello")
        media.rating = 4
        media.keywords = ["beach", "Sydney"]
        media.altitude = -12.5
        media.duration = nil
        var batch = WriteBatch()
        batch.files = [FileOutcome(directory: "/lib/a", name: Array("x.jpg".utf8),
                                   identity: FileIdentity(fsid: 1, inode: 2, size: 300, mtimeNanoseconds: 4),
                                   fingerprint: 5, kind: .media(media), isSoleNewMember: true)]
        let changes = try db.write { try $0.apply(batch, now: 1_000) }
        let id = try #require(changes.inserted.first)
        var second = WriteBatch()
        second.files = [FileOutcome(directory: "/lib/a", name: Array("y.jpg".utf8),
                                    identity: FileIdentity(fsid: 1, inode: 3, size: 300, mtimeNanoseconds: 4),
                                    fingerprint: 6, kind: .media(Make.media()), isSoleNewMember: true)]
        _ = try db.write { try $0.apply(second, now: 1_500) }
        let asset = try #require(try db.read { try $0.asset(id: id) })
        #expect(asset.media == media)
        #expect(asset.lensModel == "iPhone 12 front camera")
        #expect(asset.subtypes == [.selfie])
    }

    /// A user-state write is answered only once it is durable: its COMMIT runs with
    /// `synchronous=FULL`; an index batch's with NORMAL (it is re-derived from the disk).
    @Test func userStateCommitsAreDurable() throws {
        let dir = try TemporaryDirectory("durable")
        defer { dir.remove() }
        let db = try Database(path: dir("index.db").string)
        try db.write { _ = try $0.registerRoots(["/lib"]) }
        let levels = Locked<[Int]>([])
        try db.write { $0.connection.commitObserver = { level in levels.withLock { $0.append(level) } } }
        var batch = WriteBatch()
        batch.files = [FileOutcome(directory: "/lib/a", name: Array("x.jpg".utf8),
                                   identity: FileIdentity(fsid: 1, inode: 2, size: 300, mtimeNanoseconds: 4),
                                   fingerprint: 5, kind: .media(Make.media()), isSoleNewMember: true)]
        let changes = try db.write { try $0.apply(batch, now: 1_000) }
        let id = try #require(changes.inserted.first)
        var second = WriteBatch()
        second.files = [FileOutcome(directory: "/lib/a", name: Array("y.jpg".utf8),
                                    identity: FileIdentity(fsid: 1, inode: 3, size: 300, mtimeNanoseconds: 4),
                                    fingerprint: 6, kind: .media(Make.media()), isSoleNewMember: true)]
        _ = try db.write { try $0.apply(second, now: 1_500) }
        _ = try db.write { try $0.set(.favorite, true, ids: [id], now: 2_000) }
        let album = try db.write { try $0.createUserAlbum(title: "Trip", folder: nil, now: 3_000) }
        _ = try db.write { try $0.addToUserAlbum(album.id, ids: [id], now: 4_000) }
        _ = try db.write { try $0.editKeywords(.add(["sea"]), source: "tagger", ids: [id], now: 5_000) }
        // NORMAL is 1, FULL 2 (SQLite's numbering). The first change set ever reserves the
        // journal's first tokens (JournalRows), durably; the next index batch is NORMAL.
        #expect(levels.withLock { $0 } == [2, 1, 2, 2, 2, 2])
        // And the connection is back to NORMAL for the next index batch.
        #expect(try db.write { try $0.connection.scalar("PRAGMA synchronous").int64 } == 1)
    }
}
