import Foundation
import PhotoModel
import PhotoStore
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A small library, built from fixtures.
enum Library {
    static func jpeg(date: String?, offset: String? = nil, make: String = "Canon", gps: GPSFixture? = nil,
                     width: Int = 640, height: Int = 480) -> [UInt8] {
        let exif = date.map {
            ExifFixture(make: make, model: "EOS 5D", orientation: 1, dateTimeOriginal: $0, offsetTimeOriginal: offset, gps: gps)
        }
        return JPEGFixture.make(width: width, height: height, exif: exif)
    }

    /// `count` JPEGs spread over `count / perDirectory` folders, each with a distinct date.
    static func generate(_ dir: TemporaryDirectory, count: Int, perDirectory: Int = 50) throws {
        for i in 0..<count {
            let day = i / perDirectory
            let date = String(format: "2020:%02d:%02d %02d:%02d:%02d", day / 28 % 12 + 1, day % 28 + 1, i % 24, i % 60, (i * 7) % 60)
            try dir.write("\(2020 + day / 336)/event-\(day)/IMG_\(i).jpg", jpeg(date: date, width: 100 + i % 50))
        }
    }
}

/// Asset records without what differs between two indexes of the same library (id, addedDate).
func comparable(_ assets: [JSONValue]) -> [String: JSONValue] {
    var out: [String: JSONValue] = [:]
    for a in assets {
        guard case .object(var o) = a, let path = a["path"]?.stringValue else { continue }
        o["id"] = nil
        o["addedDate"] = nil
        out[path] = .object(o)
    }
    return out
}

@Suite("Library lifecycle, end to end", .serialized)
struct LifecycleTests {
    @Test("Index, restart without re-reads, reconcile changes made while stopped, survive a missing root")
    func lifecycle() throws {
        let state = try TemporaryDirectory("life")
        defer { state.remove() }
        let lib = try TemporaryDirectory("life-lib")
        defer { lib.remove() }
        try lib.write("2019/a.jpg", Library.jpeg(date: "2019:05:04 23:30:00", offset: "+09:00",
                                                  gps: GPSFixture(latitude: 35.5, longitude: 139.25, latitudeRef: "N", longitudeRef: "E")))
        try lib.write("2019/IMG_20190504_132210.jpg", Library.jpeg(date: nil))
        try lib.write("2020/sub/c.png", PNGFixture(width: 32, height: 16).bytes())
        try lib.write("2020/sub/notes.txt", Array("not a photo".utf8))
        try lib.write("2020/zero.jpg", [])
        try lib.write(".hidden/x.jpg", Library.jpeg(date: "2001:01:01 00:00:00"))
        try lib.write("skip/.nomedia", [])
        try lib.write("skip/y.jpg", Library.jpeg(date: "2001:01:01 00:00:00"))
        let oddName = lib.path.appending([0x6F, 0x64, 0x64, 0xFF, 0x2E, 0x6A, 0x70, 0x67])  // "odd\xFF.jpg"
        try lib.write("placeholder", Library.jpeg(date: "2018:01:01 00:00:00"))
        let renamed = lib("placeholder").withCString { from in oddName.withCString { to in rename(from, to) } }
        #expect(renamed == 0)

        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        var status = try daemon.waitForIdle()
        #expect(status["counts"]?["assets"]?.intValue == 4)
        #expect(status["counts"]?["errors"]?.intValue == 1)
        #expect(status["counts"]?["ignored"]?.intValue == 1)
        #expect(status["lastScan"]?["files"]?.intValue == 6)
        #expect(status["lastScan"]?["readFiles"]?.intValue == 6)

        // photoctl sees what the protocol says.
        let listed = try run("photoctl", ["--socket", daemon.socket.string, "assets", "--json"])
        #expect(listed.status == 0)
        let listedAssets = try records(listed.stdout)
        #expect(listedAssets.count == 4)
        let a = try #require(listedAssets.first { $0["path"]?.stringValue?.hasSuffix("2019/a.jpg") == true })
        #expect(a["localDateTime"]?.stringValue == "2019-05-04T23:30:00")
        #expect(a["utcOffset"]?.stringValue == "+09:00")
        #expect(a["latitude"]?.doubleValue == 35.5)
        let byName = try #require(listedAssets.first { $0["path"]?.stringValue?.hasSuffix("IMG_20190504_132210.jpg") == true })
        #expect(byName["dateSource"]?.stringValue == "fileName")
        let odd = try #require(listedAssets.first { $0["pathBytes"] != nil })
        #expect(odd["pathBytes"]?.stringValue == Base64Check.encode(oddName.bytes))
        // Default order: capture time, then path.
        let dates = listedAssets.compactMap { $0["localDateTime"]?.stringValue }
        #expect(dates == dates.sorted())
        let errors = try jsonLines(try run("photoctl", ["--socket", daemon.socket.string, "errors", "--json"]).stdout)
        #expect(errors.map { $0["code"]?.stringValue } == ["emptyFile"])
        let table = try run("photoctl", ["--socket", daemon.socket.string, "status"])
        #expect(table.stdout.contains("idle"))
        #expect(daemon.stop() == 0)
        #expect(daemon.log.contains("sealed the database"), "a clean stop seals the database")

        // Restart: nothing is read again (not one metadata read), ids are kept.
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["lastScan"]?["readFiles"]?.intValue == 0)
        #expect(status["metadataReads"]?.intValue == 0)
        #expect(daemon.log.contains("as the last clean stop left it"), "after a clean stop the start skips the integrity check")
        let before = try daemon.allAssets()
        #expect(daemon.stop() == 0)

        // Changes while stopped: one file rewritten, one deleted, one added, a folder removed.
        try lib.write("2019/a.jpg", Library.jpeg(date: "2019:05:05 08:00:00", offset: "+09:00", width: 800, height: 600))
        #expect(unlink(lib("2019/IMG_20190504_132210.jpg").string) == 0)
        try lib.write("2019/d.jpg", Library.jpeg(date: "2019:06:01 12:00:00"))
        try FileManager.default.removeItem(atPath: lib("2020").string)
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["lastScan"]?["readFiles"]?.intValue == 2)
        #expect(status["lastScan"]?["removedFiles"]?.intValue == 1)
        #expect(status["lastScan"]?["removedDirectories"]?.intValue == 1)
        let after = try daemon.allAssets()
        #expect(after.count == 3)
        let oldA = try #require(before.first { $0["path"]?.stringValue?.hasSuffix("2019/a.jpg") == true })
        let newA = try #require(after.first { $0["path"]?.stringValue?.hasSuffix("2019/a.jpg") == true })
        #expect(newA["id"] == oldA["id"])
        #expect(newA["pixelWidth"]?.intValue == 800)
        #expect(newA["localDateTime"]?.stringValue == "2019-05-05T08:00:00")
        #expect(try daemon.call("library.status")["counts"]?["errors"]?.intValue == 0)
        #expect(daemon.stop() == 0)

        // The disk's content vanishes but the mount point stays (an unmounted disk): nothing is
        // deleted, the root is unavailable; when the content is back, nothing is read again.
        let aside = PathBytes(lib.path.string + "-aside")
        #expect(rename(lib.path.string, aside.string) == 0)
        try lib.makeDirectory("")  // the empty mount point
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "unavailable")
        #expect(try daemon.allAssets().count == 3)
        #expect(daemon.stop() == 0)
        #expect(rmdir(lib.path.string) == 0)
        #expect(rename(aside.string, lib.path.string) == 0)
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "available")
        #expect(status["metadataReads"]?.intValue == 0)
        #expect(daemon.stop() == 0)

        // A root indexed before but not given now: kept, and the status says so.
        let other = try TemporaryDirectory("life-other")
        defer { other.remove() }
        daemon = try DaemonProcess(libraries: [other.path], state: state)
        status = try daemon.waitForIdle()
        let old = status["roots"]?.arrayValue?.first { $0["path"]?.stringValue == lib.path.string }
        #expect(old?["state"]?.stringValue == "notConfigured")
        #expect(old?["assets"]?.intValue == 3)
        #expect(daemon.stop() == 0)

        // The root vanishes (an unmounted disk): nothing is deleted, the root is unavailable.
        let away = PathBytes(lib.path.string + "-away")
        #expect(rename(lib.path.string, away.string) == 0)
        defer { _ = rename(away.string, lib.path.string) }
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "unavailable")
        #expect(try daemon.allAssets().count == 3)
        #expect(daemon.stop() == 0)
        #expect(rename(away.string, lib.path.string) == 0)
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "available")
        #expect(status["lastScan"]?["readFiles"]?.intValue == 0)
        #expect(Set(try daemon.allAssets().map { $0["id"] }) == Set(after.map { $0["id"] }))
        #expect(daemon.stop() == 0)
    }

    @Test("A file held open for writing during the first scan: idle with lastScan.busyFiles 1, then read once it is closed")
    func fileBeingWrittenAtScan() throws {
        var fd: Int32 = -1
        defer { if fd >= 0 { close(fd) } }
        try withDaemon("busy", library: { lib in
            try Library.generate(lib, count: 20)
            // A copy in progress: the writer has it open (this process, as cp would).
            let path = try lib.write("2020/event-0/copying.jpg", Library.jpeg(date: "2020:01:01 12:00:00"))
            fd = open(path.string, O_WRONLY | O_APPEND | O_CLOEXEC)
        }) { _, _, daemon in
            #expect(fd >= 0)
            let status = try daemon.call("library.status")
            #expect(status["lastScan"]?["busyFiles"]?.intValue == 1, "\(status["lastScan"] ?? .null)")
            #expect(status["counts"]?["assets"]?.intValue == 20)
            #expect(daemon.log.contains("1 held open for writing"))
            close(fd)
            fd = -1
            // The close reaches the watcher: the file is read then.
            try daemon.waitFor("the closed file read", timeout: .seconds(30)) { $0["counts"]?["assets"]?.intValue == 21 }
        }
    }

    @Test("A fresh library with broken files in many chunks: lastScan.errors, counts.errors and library.errors agree")
    func brokenFilesCountedOnce() throws {
        // 600 photos in 12 folders: a dozen 50-file jobs, which pile up behind the writer; one
        // broken file in each folder.
        var broken = 0
        try withDaemon("errors", library: { lib in
            try Library.generate(lib, count: 600)
            let folders = try FileManager.default.subpathsOfDirectory(atPath: lib.path.string)
                .filter { URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("event-") }.sorted()
            for (i, folder) in folders.enumerated() {
                try lib.write("\(folder)/broken-\(i).jpg", i.isMultiple(of: 2) ? [] : Array("not a photo".utf8))
                broken += 1
            }
        }) { _, _, daemon in
            #expect(broken == 12)
            let status = try daemon.call("library.status")
            let listed = try daemon.call("library.errors", ["limit": 1000])
            #expect(listed["total"]?.intValue == broken)
            #expect(listed["errors"]?.arrayValue?.count == broken)
            #expect(status["counts"]?["errors"]?.intValue == broken)
            #expect(status["lastScan"]?["errors"]?.intValue == broken, "\(status["lastScan"] ?? .null), \(status["sortQueue"] ?? .null)")
        }
    }

    @Test("kill -9 during the initial index, then restarts: the result equals an uninterrupted index")
    func killDuringInitialIndex() throws {
        let lib = try TemporaryDirectory("kill-lib")
        defer { lib.remove() }
        try Library.generate(lib, count: 6000)

        let reference = try TemporaryDirectory("kill-ref")
        defer { reference.remove() }
        let clean = try DaemonProcess(libraries: [lib.path], state: reference)
        try clean.waitForIdle()
        let expected = comparable(try clean.allAssets())
        #expect(expected.count == 6000)
        #expect(clean.stop() == 0)

        let state = try TemporaryDirectory("kill")
        defer { state.remove() }
        var killedMidScan = 0
        for round in 0..<3 {
            let d = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--workers", "1"])
            let c = try d.connect()
            // Kill at a different point each round, while the scan is committing.
            let target = 300 + round * 900
            let seen = try eventually("\(target) assets committed, or idle", timeout: .seconds(120)) { try c.call("library.status") } until: {
                $0["state"]?.stringValue == "idle" || ($0["counts"]?["assets"]?.intValue ?? 0) >= target
            }
            d.kill9()
            if seen["state"]?.stringValue != "idle" { killedMidScan += 1 }
        }
        #expect(killedMidScan >= 2, "the kills must land while indexing")

        let final = try DaemonProcess(libraries: [lib.path], state: state)
        let status = try final.waitForIdle()
        #expect(!final.log.contains("as the last clean stop left it"), "after kill -9 the start checks the database")
        #expect((status["lastScan"]?["readFiles"]?.intValue ?? 0) < 6000)
        #expect(comparable(try final.allAssets()) == expected)
        #expect(final.stop() == 0)

        let db = try Database(path: state("photod.db").string, options: { var o = Database.Options(); o.exclusive = false; return o }())
        let check = try db.read { try $0.connection.scalar("PRAGMA integrity_check").string }
        #expect(check == "ok")
    }
}

enum Base64Check {
    /// Foundation's base64, to check the daemon's own encoder against.
    static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}
