import Foundation
import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

@Suite("Smart albums' kept counts")
struct SmartCountersTests {
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    @Test("Recently Added from hour and minute buckets equals a count of the assets, at every cut of the window")
    func recentlyAddedAtEveryCut() throws {
        let dir = try TemporaryDirectory("smart-counters")
        defer { dir.remove() }
        let db = try Database(path: dir("s.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        // Jobs at chosen times: a bulk of 40 in one minute, single files across hours and days,
        // two on a minute's and an hour's edge.
        let base: Int64 = 1_000 * Self.day + 17 * Self.minute + 30_000
        let times: [Int64] = Array(repeating: base, count: 4) + [
            base + Self.minute - 30_001, base + 59 * Self.minute, base + 3 * Self.hour, base + 2 * Self.day + 1,
            base + 2 * Self.day + Self.hour - 1, base + 10 * Self.day,
        ]
        var inode: UInt64 = 0
        for (k, t) in times.enumerated() {
            let count = k == 0 ? 40 : 1
            let files = (0..<count).map { i -> FileOutcome in
                inode += 1
                return Make.outcome("/lib/d\(k)/f\(i).jpg", inode: inode, .media(Make.media()))
            }
            _ = try db.write { try $0.apply(Make.batch(files), now: t) }
        }
        // One hidden (leaves every count but Hidden), one unhidden again.
        let ids = try db.read { try $0.assets(limit: 100, offset: 0) }.map(\.id)
        _ = try db.write { try $0.set(.hidden, true, ids: [ids[0], ids[1]], now: base + 11 * Self.day) }
        _ = try db.write { try $0.set(.hidden, false, ids: [ids[1]], now: base + 11 * Self.day) }
        // Every cut of the 30-day window across the times above, to the millisecond around each.
        var cuts: [Int64] = []
        for t in times + [base + 11 * Self.day] {
            for delta in [-Self.hour, -Self.minute, -1, 0, 1, Self.minute, Self.hour] {
                cuts.append(t + SmartAlbums.recentlyAddedWindowMilliseconds + delta)
            }
        }
        for now in cuts.sorted() where now >= base + 11 * Self.day {
            let kept = try db.read { try $0.smartAlbumCounts(now: now) }
            let scanned = try db.read { try $0.smartAlbumCountsByScan(now: now) }
            #expect(kept == scanned, "at \(now - base) ms after the first job")
        }
        let counts = try db.read { try $0.smartAlbumCounts(now: base + 11 * Self.day) }
        #expect(counts["s_recentlyAdded"] == 48 && counts["s_allPhotos"] == 48 && counts["s_hidden"] == 1)
        // The start-up check (at the real clock: these jobs' buckets are decades old to it, and
        // dropped) repairs a drift of the timeless albums.
        _ = try db.verifyCounters()
        #expect(try db.verifyCounters() == false)
        _ = try db.write { w in try w.connection.execute("UPDATE counters SET value = value + 3 WHERE name = 'smart.favorites'") }
        #expect(try db.verifyCounters() == true)
        let repaired = try db.read { try $0.smartAlbumCounts(now: base + 11 * Self.day) }
        #expect(repaired.filter { $0.key != "s_recentlyAdded" } == counts.filter { $0.key != "s_recentlyAdded" })
    }

    @Test("Buckets older than the window are dropped by the next job; a database without the counters gets them at open")
    func pruningAndSetUp() throws {
        let dir = try TemporaryDirectory("smart-prune")
        defer { dir.remove() }
        let path = dir("s.db").string
        do {
            let db = try Database(path: path)
            _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
            _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a/1.jpg", inode: 1, .media(Make.media()))]), now: 10 * Self.day) }
            let buckets = { try db.read { r in try r.connection.scalar("SELECT count(*) FROM counters WHERE name LIKE 'added.%'").int64 } }
            #expect(try buckets() == 2)
            _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a/2.jpg", inode: 2, .media(Make.media()))]), now: 45 * Self.day) }
            #expect(try buckets() == 2, "the first file's hour and minute are gone, the second's are there")
            #expect(try db.read { try $0.smartAlbumCounts(now: 45 * Self.day) }["s_allPhotos"] == 2)
            // As a database from before the counters.
            _ = try db.write { w in try w.connection.execute("DELETE FROM counters WHERE name LIKE 'smart.%' OR name LIKE 'added.%'") }
        }
        let db = try Database(path: path)
        let now = SmartCounters.now
        #expect(try db.read { try $0.smartAlbumCounts(now: now) } == (try db.read { try $0.smartAlbumCountsByScan(now: now) }))
        #expect(try db.read { try $0.smartAlbumCounts(now: now) }["s_allPhotos"] == 2)
    }
}
