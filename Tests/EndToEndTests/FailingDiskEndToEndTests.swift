import Foundation
import PhotoClient
import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A FUSE disk that fails the calls it is told to (`Tests/Support/faulty-fs.py`): a passthrough
/// of a fresh directory at `target`, driven through its control socket.
struct FaultyMount {
    let work: TemporaryDirectory
    let target: PathBytes
    var control: PathBytes { work("control") }

    static var script: String { TestPaths.packageRoot.appendingPathComponent("Tests/Support/faulty-fs.py").path }

    init(at target: PathBytes) throws {
        self.target = target
        work = try TemporaryDirectory("faulty")
        try work.makeDirectory("source")
        try Directory.makePath(target)
        try Mounts.runDetached("/usr/bin/python3", [Self.script, "--background", work("source").string, target.string, control.string])
        try eventually("faulty-fs mounted at \(target)") { (try? MountTable.read())?.entries.contains { $0.mountPoint == target } == true
            && access(control.string, F_OK) == 0 }
    }

    /// One command (`fail fsync /photod.db-wal EIO`, `heal`); it must answer `ok`.
    func command(_ line: String) throws {
        try Mounts.run("python3", ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
            f.write(sys.argv[2] + "\\n"); f.flush(); sys.exit(0 if f.readline().strip() == "ok" else 1)
            """, control.string, line])
    }

    func remove() {
        try? command("heal")
        Mounts.unmountAll(below: target)
        work.remove()
    }
}

/// The database on a disk that fails under photod (issue 34; `scripts/failing-disk-test` runs
/// every fault of the issue, this one is the fsync's).
@Suite("A disk failing under the database, end to end", .serialized)
struct FailingDiskEndToEndTests {
    @Test("The WAL's fsync fails: writes are refused with unavailable, reads go on; healed, the database is opened again and checked, and writes are accepted without a restart",
          .enabled(if: HangingMount.available))
    func fsyncFails() throws {
        let lib = try TemporaryDirectory("faulty-lib")
        defer { lib.remove() }
        try Library.generate(lib, count: 5)
        let state = try TemporaryDirectory("faulty-state")
        defer { state.remove() }
        let disk = try FaultyMount(at: state("disk"))
        defer { disk.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, database: disk.target.appending("photod.db"))
        defer { _ = daemon.stop() }
        try daemon.waitForIdle()
        let c = try daemon.connect()
        let ids = try daemon.allAssets().compactMap { $0["id"]?.stringValue }
        #expect(ids.count == 5)

        try disk.command("fail fsync /photod.db-wal EIO")
        for id in ids.prefix(2) {
            let refused = WritesEndToEndTests.failure { try c.call("assets.setFavorite", ["ids": [.string(id)], "favorite": true]) }
            #expect(refused?.name == "unavailable", "a write whose fsync failed: \(String(describing: refused))")
        }
        #expect(try daemon.allAssets().count == 5)
        #expect(try c.call("library.status")["databaseWrites"]?["state"]?.stringValue == "failing")

        try disk.command("heal")
        try eventually("a write accepted again; photod's log:\n\(daemon.log)") {
            WritesEndToEndTests.failure { try c.call("assets.setFavorite", ["ids": [.string(ids[1])], "favorite": true]) } == nil
        }
        let writes = try c.call("library.status")["databaseWrites"]
        #expect(writes?["state"]?.stringValue == "ok")
        #expect((writes?["reopened"]?.intValue ?? 0) >= 1)
        #expect(daemon.log.contains("the database was opened again and checked"))
        #expect(try c.call("assets.get", ["ids": [.string(ids[1])]])["assets"]?[0]?["isFavorite"]?.boolValue == true)
        #expect(daemon.stop() == 0)
        let db = try Database(path: daemon.database.string, options: { var o = Database.Options(); o.exclusive = false; return o }())
        #expect(try db.read { try $0.connection.scalar("PRAGMA integrity_check").string } == "ok")
    }
}
