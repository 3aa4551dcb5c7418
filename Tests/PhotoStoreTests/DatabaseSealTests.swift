import Foundation
import PhotoModel
@testable import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("The seal of a clean stop")
struct DatabaseSealTests {
    /// A database with a root and two assets, checkpointed (as a clean stop leaves it) and closed.
    static func indexed(_ path: String, seal: Bool) throws {
        let db = try Database(path: path)
        _ = try db.write { try $0.registerRoots([PathBytes("/a")]) }
        _ = try db.write {
            try $0.apply(Make.batch([Make.outcome("/a/1.jpg", inode: 1, .media(Make.media())),
                                     Make.outcome("/a/2.jpg", inode: 2, .media(Make.media()))]), now: 1)
        }
        try db.checkpoint()
        if seal { #expect(try db.seal()) }
    }

    @Test("A clean stop's seal is taken by the next open, which then skips the checks; the open after that does not")
    func takenOnce() throws {
        let dir = try TemporaryDirectory("seal")
        defer { dir.remove() }
        let path = dir("s.db").string
        try Self.indexed(path, seal: true)
        #expect(access(DatabaseSeal.path(forDatabase: path).string, F_OK) == 0)
        do {
            let db = try Database(path: path)
            #expect(db.openedSealed)
            #expect(access(DatabaseSeal.path(forDatabase: path).string, F_OK) != 0, "the seal is taken, not left")
            #expect(try db.read { try $0.assetCount() } == 2)
        }
        #expect(try !Database(path: path).openedSealed)
        // Without one, every open checks.
        #expect(try !Database(path: path).openedSealed)
    }

    @Test("A file touched, truncated, written, grown or replaced after the seal is checked at the next open",
          arguments: ["touched", "truncated", "page written", "grown", "replaced"])
    func changedAfterTheSeal(_ change: String) throws {
        let dir = try TemporaryDirectory("seal-changed")
        defer { dir.remove() }
        let path = dir("s.db").string
        try Self.indexed(path, seal: true)
        let size = try FileStat.of(PathBytes(path)).size
        switch change {
        case "touched": #expect(utimensat(AT_FDCWD, path, nil, 0) == 0)
        case "truncated": #expect(truncate(path, off_t(size - 4096)) == 0)
        case "page written":
            // The same bytes written back: only the times tell.
            let fd = open(path, O_RDWR)
            var page = [UInt8](repeating: 0, count: 4096)
            #expect(pread(fd, &page, 4096, off_t(size - 4096)) == 4096)
            #expect(pwrite(fd, page, 4096, off_t(size - 4096)) == 4096)
            close(fd)
        case "grown": #expect(truncate(path, off_t(size + 4096)) == 0)
        default:
            // A copy put in its place (as a restore from a backup would): another inode.
            let copy = dir("copy.db").string
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            #expect(rename(copy, path) == 0)
        }
        // Not trusted: checked (a sound file opens as it is, a damaged one is moved aside).
        let (db, recovery) = try Database.openRecovering(path: path, now: 42)
        #expect(!db.openedSealed)
        if change == "truncated" { #expect(recovery != nil, "quick_check ran and found the missing page") }
        if change == "touched" || change == "page written" || change == "replaced" { #expect(recovery == nil) }
    }

    @Test("No seal while the WAL holds frames; a garbled seal, or another database's, is not trusted")
    func refused() throws {
        let dir = try TemporaryDirectory("seal-refused")
        defer { dir.remove() }
        let path = dir("s.db").string
        try Self.indexed(path, seal: false)
        do {
            let db = try Database(path: path)
            _ = try db.write { try $0.apply(Make.batch([Make.outcome("/a/3.jpg", inode: 3, .media(Make.media()))]), now: 2) }
            #expect(try !db.seal(), "the last batch is only in the WAL")
            #expect(access(DatabaseSeal.path(forDatabase: path).string, F_OK) != 0)
            try db.checkpoint()
            #expect(try db.seal())
        }
        #expect(try Database(path: path).openedSealed)
        for garbage in ["", "photod-seal 1 1 2 3\n", "photod-seal 2 1 2 3 4 5\n", "not a seal at all"] {
            try AtomicFile.write(Array(garbage.utf8), to: DatabaseSeal.path(forDatabase: path))
            #expect(try !Database(path: path).openedSealed, "\(garbage)")
        }
        // The seal of another database (its own inode and times) does not fit this one.
        let other = dir("o.db").string
        try Self.indexed(other, seal: true)
        #expect(rename(DatabaseSeal.path(forDatabase: other).string, DatabaseSeal.path(forDatabase: path).string) == 0)
        #expect(try !Database(path: path).openedSealed)
    }

    @Test("A second photod refused by the lock leaves the seal for the one that holds it")
    func lockedOut() throws {
        let dir = try TemporaryDirectory("seal-locked")
        defer { dir.remove() }
        let path = dir("s.db").string
        try Self.indexed(path, seal: false)
        let holder = try Database(path: path)
        try holder.checkpoint()
        #expect(try holder.seal())
        #expect(throws: StoreError.self) { _ = try Database(path: path) }
        #expect(access(DatabaseSeal.path(forDatabase: path).string, F_OK) == 0)
    }

    @Test("After a stop that was not clean the journal goes on past every token it may have handed out: a token the stop took back is not resumable, the last one on disk is; a clean stop skips nothing")
    func uncleanStopSkipsTokens() throws {
        let dir = try TemporaryDirectory("tokens")
        defer { dir.remove() }
        let path = dir("t.db").string
        func batch(_ i: UInt64) -> WriteBatch { Make.batch([Make.outcome("/a/\(i).jpg", inode: i, .media(Make.media()))]) }
        do {
            let db = try Database(path: path)
            _ = try db.write { try $0.registerRoots([PathBytes("/a")]) }
            for i in UInt64(1)...5 { _ = try db.write { try $0.apply(batch(i), now: Int64(i)) } }
            #expect(try db.read { try $0.journalBounds().current } == 5)
            #expect(try db.read { try $0.metaInteger("journal.reserved") } == JournalRows.reservation)
            // The power takes back the change sets committed since the last fsync: 4 and 5
            // (their subscribers had been sent them). No seal: the stop was not clean.
            _ = try db.write { w in
                try w.connection.execute("DELETE FROM changes WHERE token > 3; UPDATE sqlite_sequence SET seq = 3 WHERE name = 'changes'")
            }
        }
        let reserved = JournalRows.reservation
        do {
            let db = try Database(path: path)
            #expect(!db.openedSealed)
            let bounds = try db.read { try $0.journalBounds() }
            #expect(bounds.current == reserved)
            for (token, resumable) in [(Int64(3), true), (4, false), (5, false), (reserved - 1, false), (reserved, true), (reserved + 1, false)] {
                #expect(try db.read { try $0.resumable(token, in: bounds) } == resumable, "\(token)")
            }
            let next = try db.write { try $0.apply(batch(6), now: 6) }
            #expect(next.token == reserved + 1)
            #expect(try db.read { try $0.metaInteger("journal.reserved") } == reserved + JournalRows.reservation)
            // From the last token on disk: the skip's empty change set, then the new one.
            let after = try db.read { try $0.changes(after: 3, limit: 10) }
            #expect(after.map(\.token) == [reserved, reserved + 1] && after[0].isEmpty && !after[1].isEmpty)
            try db.checkpoint()
            #expect(try db.seal())
        }
        // A clean stop: nothing to skip.
        let db = try Database(path: path)
        #expect(db.openedSealed)
        #expect(try db.read { try $0.journalBounds().current } == reserved + 1)
    }
}
