import PhotoModel
import PhotoStore
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
}
