import CSQLite
import Foundation
import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

/// The store's side of a disk that fails under the database (issue 34; the failing disk itself
/// is `scripts/failing-disk-test`'s FUSE file system).
@Suite("A disk failing under the database")
struct DiskFailureStoreTests {
    // SQLITE_IOERR_READ, _WRITE and _FSYNC are SQLITE_IOERR with 1, 3 and 4 in the second byte
    // (macros Swift does not import).
    @Test("SQLite's I/O errors (a failed read, write or fsync) are ioError; a full disk stays full", arguments: [
        (SQLITE_IOERR, StoreError.Code.ioError), (SQLITE_IOERR | 3 << 8, .ioError), (SQLITE_IOERR | 4 << 8, .ioError),
        (SQLITE_IOERR | 1 << 8, .ioError), (SQLITE_FULL, .full), (SQLITE_BUSY, .busy), (SQLITE_CORRUPT, .corrupt),
    ])
    func errorCodes(rc: Int32, code: StoreError.Code) {
        #expect(Connection.error(rc, "disk I/O error", sql: "COMMIT").code == code)
    }

    @Test("After a disk error the database is opened again and checked: the writer is a new connection, what was committed is there, reads and writes go on")
    func reopen() throws {
        let dir = try TemporaryDirectory("diskfail-store")
        defer { dir.remove() }
        let db = try Database(path: dir("index.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a.jpg", inode: 1, .media(Make.media(date: "2020-05-01T10:00:00")))]), now: 1) }
        let before = try db.read { try $0.assets(limit: 10, offset: 0) }
        let writer = try db.write { ObjectIdentifier($0.connection) }
        try db.reopenAfterFailure()
        #expect(try db.write { ObjectIdentifier($0.connection) } != writer)
        #expect(try db.read { try $0.assets(limit: 10, offset: 0) } == before)
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/b.jpg", inode: 2, .media(Make.media(date: "2020-05-01T11:00:00")))]), now: 2) }
        #expect(try db.read { try $0.assets(limit: 10, offset: 0) }.count == 2)
        #expect(try db.write { try $0.connection.scalar("PRAGMA synchronous").int64 } == 1, "the writer's settings again (NORMAL)")
    }

    @Test("After a disk error that dropped the last change sets, the journal goes on past every token handed out: none is reused for other changes")
    func reopenSkipsTokens() throws {
        let dir = try TemporaryDirectory("diskfail-tokens")
        defer { dir.remove() }
        let db = try Database(path: dir("index.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        var sent: [Int64] = []
        for i in 1...3 {
            let change = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/\(i).jpg", inode: UInt64(i),
                .media(Make.media(date: "2020-05-01T1\(i):00:00")))]), now: Int64(i)) }
            sent.append(try #require(change.token))
        }
        // The disk kept the first change set only (the others were sent to subscribers).
        var raw: OpaquePointer?
        #expect(sqlite3_open(dir("index.db").string, &raw) == SQLITE_OK)
        #expect(sqlite3_exec(raw, "DELETE FROM changes WHERE token > \(sent[0]); UPDATE sqlite_sequence SET seq = \(sent[0]) WHERE name = 'changes'",
                             nil, nil, nil) == SQLITE_OK)
        sqlite3_close(raw)

        try db.reopenAfterFailure()
        let next = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/4.jpg", inode: 4,
            .media(Make.media(date: "2020-05-01T14:00:00")))]), now: 4) }
        #expect(try #require(next.token) > sent.max()!, "a token a subscriber holds was handed out again")
        let bounds = try db.read { try $0.journalBounds() }
        for token in sent.dropFirst() { #expect(try db.read { try $0.resumable(token, in: bounds) } == false) }
    }

    @Test("An I/O error reading a file the index has as media writes nothing, even when the pipeline could not look the row up; a new file's is an error row")
    func unreadableIndexedFileKeepsItsAsset() throws {
        let dir = try TemporaryDirectory("diskfail-rows")
        defer { dir.remove() }
        let db = try Database(path: dir("index.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a.jpg", inode: 1, .media(Make.media(date: "2020-05-01T10:00:00")))]), now: 1) }
        let before = try db.read { try $0.assets(limit: 10, offset: 0) }
        // The same file changed (another size) and read as an I/O error, as a read whose row the
        // pipeline could not look up hands it over.
        let failed = Make.outcome("/lib/a.jpg", inode: 1, .error(code: FileOutcome.unreadableCode, message: "pread: Input/output error"),
                                  size: 99)
        let changes = try db.write { try $0.apply(Make.batch([failed, Make.outcome("/lib/b.jpg", inode: 2,
            .error(code: FileOutcome.unreadableCode, message: "pread: Input/output error"))]), now: 2) }
        #expect(changes.deleted.isEmpty && changes.updated.isEmpty)
        #expect(try db.read { try $0.assets(limit: 10, offset: 0) } == before)
        #expect(try db.read { try $0.counts().recentlyDeleted } == 0)
        #expect(try db.read { try $0.fileIssues(limit: 10, offset: 0) }.map(\.path.string) == ["/lib/b.jpg"])
    }
}
