import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

@Suite("The change journal: tokens, bounds, pruning")
struct JournalTests {
    @Test("Tokens are consecutive; pruning keeps a contiguous suffix (also when the clock went back) and the newest")
    func pruning() throws {
        let dir = try TemporaryDirectory("journal")
        defer { dir.remove() }
        let db = try Database(path: dir("j.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        #expect(try db.read { try $0.journalBounds() } == JournalBounds(current: 0, floor: 0))
        // Ten change sets; the clock goes back at the sixth.
        let times: [Int64] = [100, 200, 300, 400, 500, 50, 600, 700, 800, 900]
        for (i, time) in times.enumerated() {
            let s = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a/\(i).jpg", inode: UInt64(i + 1), .media(Make.media()))]), now: time) }
            #expect(s.token == Int64(i + 1))
        }
        #expect(try db.read { try $0.journalBounds() } == JournalBounds(current: 10, floor: 0))
        #expect(try db.read { try $0.changes(after: 3, limit: 2) }.map(\.token) == [4, 5])
        // Older than 550: tokens 1...5 by time, and 6 (time 50) only because it lies before 7.
        #expect(try db.write { try $0.pruneJournal(keep: 100, before: 550) } == 6)
        #expect(try db.read { try $0.journalBounds() } == JournalBounds(current: 10, floor: 6))
        #expect(try db.read { try $0.changes(after: 6, limit: 100) }.map(\.token) == [7, 8, 9, 10])
        // Keep 2.
        #expect(try db.write { try $0.pruneJournal(keep: 2, before: 0) } == 2)
        #expect(try db.read { try $0.journalBounds() } == JournalBounds(current: 10, floor: 8))
        // Everything old: the newest stays; the token counter never goes back.
        #expect(try db.write { try $0.pruneJournal(keep: 1, before: 10_000) } == 1)
        #expect(try db.read { try $0.journalBounds() } == JournalBounds(current: 10, floor: 9))
        let next = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a/x.jpg", inode: 99, .media(Make.media()))]), now: 1_000) }
        #expect(next.token == 11)
    }

    @Test("A change set's ids are stored sharing the digits of the one before; they read back as given, and lists of whole ids (before migration 008) read too")
    func compactIDs() throws {
        let dir = try TemporaryDirectory("journal-ids")
        defer { dir.remove() }
        let db = try Database(path: dir("j.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        let s = try db.write { w in
            try w.apply(Make.batch((0..<200).map { Make.outcome("/lib/a/\($0).jpg", inode: UInt64($0 + 1), .media(Make.media())) }), now: 1_000)
        }
        let ids = Set(try db.read { try $0.assets(limit: 1000, offset: 0) }.map(\.id))
        #expect(ids.count == 200 && Set(s.inserted) == ids)
        let read = try #require(try db.read { try $0.changes(after: 0, limit: 10) }.first)
        #expect(read.inserted == s.inserted)
        let stored = try #require(try db.read { try $0.connection.scalar("SELECT assets_inserted FROM changes").string })
        let whole = s.inserted.map(\.rawValue).joined(separator: ",")
        #expect(stored.count < whole.count * 2 / 3, "\(stored.count) of \(whole.count) bytes")
        // A row as an older photod wrote it.
        _ = try db.write { w in
            try w.connection.execute("INSERT INTO changes (time, assets_inserted, assets_updated, assets_deleted, collections_inserted, collections_updated, collections_deleted) VALUES (2000, '', '\(whole)', '', '', '', '')")
        }
        #expect(try db.read { try $0.changes(after: 1, limit: 10) }.first?.updated == s.inserted)
        // A damaged list is an error, not a wrong id.
        _ = try db.write { w in
            try w.connection.execute("INSERT INTO changes (time, assets_inserted, assets_updated, assets_deleted, collections_inserted, collections_updated, collections_deleted) VALUES (3000, 'Zabc', '', '', '', '', '')")
        }
        #expect(throws: StoreError.self) { try db.read { try $0.changes(after: 2, limit: 10) } }
    }
}
