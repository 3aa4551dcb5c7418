import Foundation
import PhotoClient
import PhotoModel
import PhotoStore
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("A full disk, end to end", .serialized)
struct DiskFullEndToEndTests {
    @Test("The database cannot grow: photod says so, holds the new files, answers reads, refuses writes with the reason, and catches up when there is space — nothing lost, nothing corrupt")
    func diskFull() throws {
        let lib = try TemporaryDirectory("full-lib")
        defer { lib.remove() }
        try Library.generate(lib, count: 20)
        let state = try TemporaryDirectory("full")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, environment: ["PHOTOD_TEST_HOOKS": "1"])
        try daemon.waitForIdle()
        let c = try daemon.connect()
        let someone = try #require(try daemon.allAssets().first?["id"]?.stringValue)

        // The database may not grow any more: 200 new files cannot be committed.
        _ = try c.call("test.limitPages", ["pages": "current"])
        for i in 0..<200 { try lib.write("new/IMG_\(i).jpg", Library.jpeg(date: "2022:03:01 10:00:00", width: 100 + i)) }
        try eventually("the disk-full state; photod's log:\n\(daemon.log)") { try c.call("library.status") } until: {
            $0["sortQueue"]?["waitingForSpace"]?.boolValue == true
        }
        #expect(daemon.log.contains("the disk is full"))
        #expect(try run("photoctl", ["--socket", daemon.socket.string, "status"]).stdout.contains("DISK FULL"))
        // Reads go on; a client's write is refused with the reason, not lost silently.
        // The first of the new files may have fitted in the database's free pages before it was
        // full; a predicate fetch counts exactly what is committed.
        let committed = try daemon.allAssets().count
        #expect((20..<220).contains(committed))
        #expect(try c.call("assets.fetch", ["predicate": "pixelWidth >= 100"])["total"]?.intValue == committed)
        // (A small write may still fit in free pages; then it is simply done.)
        if let refused = WritesEndToEndTests.failure({ try c.call("assets.setFavorite", ["ids": [.string(someone)], "favorite": true]) }) {
            #expect(refused.name == "unavailable" && (refused.detail ?? "").contains("disk is full"), "\(refused)")
        }

        // Space again: the held files are committed, nothing was dropped.
        _ = try c.call("test.limitPages", ["pages": .null])
        try eventually("all 220 assets committed", timeout: .seconds(60)) { try daemon.allAssets().count } until: { $0 >= 220 }
        #expect(try c.call("library.status")["sortQueue"]?["waitingForSpace"]?.boolValue == false)
        #expect(daemon.log.contains("there is space again"))
        #expect(daemon.stop() == 0)
        let db = try Database(path: daemon.database.string, options: { var o = Database.Options(); o.exclusive = false; return o }())
        #expect(try db.read { try $0.connection.scalar("PRAGMA integrity_check").string } == "ok")
    }
}
