import Foundation
import PhotoClient
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Trash, restore and delete for good through the socket of a real daemon, on real files: a
/// RAW+JPEG pair with a sidecar, a Live Photo, a burst member, a single photo.
@Suite("Trash through the API, end to end", .serialized)
struct TrashEndToEndTests {
    /// The pair, the Live Photo, two burst members and a single photo, under `trip/`.
    static func writeLibrary(_ lib: TemporaryDirectory) throws {
        try lib.write("trip/IMG_5.DNG", TIFFFixture(ifd0: [.init(0x100, .long([6000])), .init(0x101, .long([4000])),
                                                         .init(0x10F, .ascii("Canon")), .init(0xC612, .byte([1, 4, 0, 0]))],
                                                  exif: [.init(0x9003, .ascii("2019:05:04 10:00:00"))]).bytes())
        try lib.write("trip/IMG_5.JPG", Library.jpeg(date: "2019:05:04 10:00:00", width: 1500, height: 1000))
        try lib.write("trip/IMG_5.JPG.xmp", Array(XMPFixture.packet(dateTimeOriginal: "2019-05-04T10:00:00", rating: 4,
                                                                     keywords: ["pair"]).utf8))
        try lib.write("trip/IMG_6.JPG", Library.jpeg(date: "2019:05:04 23:30:00", offset: "+09:00"))
        try lib.write("trip/IMG_6.MOV", MP4Fixture(majorBrand: "qt  ", compatibleBrands: ["qt  "],
                                                   appleKeys: ["com.apple.quicktime.creationdate": "2019-05-04T23:30:01+0900"]).bytes())
        let burst = "6A2F1C3E-8D4B-4F1A-9C2E-7B5D3A1F0E9C"
        try lib.write("trip/burst_1.jpg", CollectionsEndToEndTests.burstPhoto(burst, time: "2019:05:05 09:00:00"))
        try lib.write("trip/burst_2.jpg", CollectionsEndToEndTests.burstPhoto(burst, time: "2019:05:05 09:00:01"))
        try lib.write("trip/single.jpg", Library.jpeg(date: "2019:05:06 12:00:00", width: 640))
    }

    /// Names in `dir`, sorted.
    static func names(_ lib: TemporaryDirectory, _ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: lib(dir).string).sorted()
    }

    static func recentlyDeleted(_ c: PhotoConnection) throws -> Set<String> {
        Set((try c.call("collections.assets", ["id": "s_recentlyDeleted", "limit": 1000])["assets"]?.arrayValue ?? [])
            .compactMap { $0["id"]?.stringValue })
    }

    @Test("Trash renames every file of an asset in place and keeps its id and user state; restore puts them back; delete for good unlinks them")
    func trashRestoreDelete() throws {
        let lib = try TemporaryDirectory("trash-e2e-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("trash-e2e")
        defer { state.remove() }
        try Self.writeLibrary(lib)
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--trash-root", lib.path.string])
        try daemon.waitForIdle()
        let id = try WritesEndToEndTests.ids(daemon)
        let (pair, live, burst, single) = (try #require(id["IMG_5.JPG"]), try #require(id["IMG_6.JPG"]),
                                           try #require(id["burst_2.jpg"] ?? id["burst_1.jpg"]), try #require(id["single.jpg"]))
        let conn = try daemon.connect()
        _ = try conn.call("assets.setFavorite", ["ids": [.string(pair)], "favorite": true])
        let album = try conn.call("albums.create", ["title": "Keep"])["id"]!.stringValue!
        _ = try conn.call("albums.addAssets", ["id": .string(album), "ids": [.string(pair), .string(single)]])
        let subscriber = try daemon.connect()
        _ = try subscriber.call("changes.subscribe", [:])
        subscriber.setTimeout(.seconds(10))

        // Trash: one change set; the files take hidden names beside themselves; nothing else moves.
        let before = Date()
        let trashed = try conn.call("assets.trash", ["ids": [.string(pair), .string(live), .string(burst)]])
        let token = try #require(trashed["token"]?.int64Value)
        #expect(trashed["trashed"]?.arrayValue?.count == 3)
        let hidden = try Self.names(lib, "trip").filter { $0.hasPrefix(".photod-trashed-") }
        let burstName = id["burst_2.jpg"] == burst ? "burst_2.jpg" : "burst_1.jpg"
        #expect(Set(hidden.map { String($0.split(separator: "-", maxSplits: 3)[3]) })
                == ["IMG_5.DNG", "IMG_5.JPG", "IMG_5.JPG.xmp", "IMG_6.JPG", "IMG_6.MOV", burstName])
        let expiry = try #require(hidden.first.flatMap { Int64($0.split(separator: "-")[2]) })
        let expected = Int64(before.timeIntervalSince1970) + 30 * 86_400
        #expect(abs(expiry - expected) < 120, "the name carries the retention's end (30 days)")
        #expect(try Self.names(lib, "trip").filter { !$0.hasPrefix(".") }.count == 2)
        var set: JSONValue?
        while set == nil {
            let n = try subscriber.nextNotification()
            if n.method == "changes", n.params?["token"]?.int64Value == token { set = n.params }
        }
        let changed = Set((set?["assets"]?["deleted"]?.arrayValue ?? []) + (set?["assets"]?["updated"]?.arrayValue ?? []))
        #expect(changed.isSuperset(of: [.string(pair), .string(live), .string(burst)]), "\(String(describing: set))")
        #expect(try Self.recentlyDeleted(conn) == [pair, live, burst])

        // In Recently Deleted, a trashed asset is still drawn (from its trashed file), as a
        // gallery's Recently Deleted view shows it.
        let image = try conn.call("images.request", ["id": .string(burst), "targetSize": [32, 32]])
        #expect(image["width"]?.intValue ?? 0 > 0)

        // The watcher saw the renames: they change nothing more.
        try daemon.waitForIdle()
        #expect(try daemon.journalTokens(after: token).isEmpty, "the renames photod made are not changes of their own")

        // Trashing again: not in the library any more.
        let again = WritesEndToEndTests.failure { try conn.call("assets.trash", ["ids": [.string(pair)]]) }
        #expect(again?.errorCode == .notFound)

        // Restore: the files come back under their names; id, favorite and album kept.
        let restored = try conn.call("assets.restore", ["ids": [.string(pair)]])
        #expect(restored["renamed"]?.arrayValue?.isEmpty == true)
        #expect(try Self.names(lib, "trip").contains("IMG_5.DNG"))
        #expect(try Self.names(lib, "trip").contains("IMG_5.JPG.xmp"))
        let back = try #require(try conn.call("assets.get", ["ids": [.string(pair)]])["assets"]?.arrayValue?.first)
        #expect(back["id"]?.stringValue == pair)
        #expect(back["isFavorite"]?.boolValue == true)
        #expect(back["subtypes"] == ["raw"])
        #expect(back["rating"]?.intValue == 4, "the sidecar is paired again")
        #expect(Set((try conn.call("collections.assets", ["id": .string(album)])["assets"]?.arrayValue ?? [])
            .compactMap { $0["id"]?.stringValue }) == [pair, single])
        try daemon.waitForIdle()

        // A name taken meanwhile: the restored files take " (1)", all of them, and say so.
        _ = try conn.call("assets.trash", ["ids": [.string(single)]])
        try lib.write("trip/single.jpg", Library.jpeg(date: "2020:01:01 00:00:00", width: 320))
        try daemon.waitForIdle()
        let renamed = try conn.call("assets.restore", ["ids": [.string(single)]])
        #expect(renamed["renamed"]?[0]?["to"]?.stringValue == lib("trip/single (1).jpg").string)
        let singleBack = try #require(try conn.call("assets.get", ["ids": [.string(single)]])["assets"]?.arrayValue?.first)
        #expect(singleBack["path"]?.stringValue == lib("trip/single (1).jpg").string)
        #expect(singleBack["pixelWidth"]?.intValue == 640)

        // Delete for good: only from Recently Deleted; the trashed files are unlinked, the asset purged.
        let notTrashed = WritesEndToEndTests.failure { try conn.call("assets.deletePermanently", ["ids": [.string(pair)]]) }
        #expect(notTrashed?.errorCode == .notFound)
        let deleted = try conn.call("assets.deletePermanently", ["ids": [.string(live)]])
        #expect(deleted["deleted"] == [.string(live)])
        #expect(try !Self.names(lib, "trip").contains { $0.contains("IMG_6") })
        #expect(try Self.recentlyDeleted(conn) == [burst])
        #expect(try conn.call("assets.get", ["ids": [.string(live)]])["missing"] == [.string(live)])

        // The Swift client: the same three calls.
        let library = PhotoLibrary(socket: daemon.socket)
        #expect(try library.trash([pair]).token != nil)
        let (_, renamedNone) = try library.restore([pair])
        #expect(renamedNone.isEmpty)
        try library.trash([pair])
        #expect(try library.deletePermanently([pair]).deleted == [pair])
        #expect(try !Self.names(lib, "trip").contains { $0.contains("IMG_5") })

        // Unknown ids refuse the whole call: the known asset's file is not renamed.
        let unknown = WritesEndToEndTests.failure { try conn.call("assets.trash", ["ids": [.string(single), "a_3ocnwoznuaa7slhsdfeq"]]) }
        #expect(unknown?.errorCode == .notFound)
        #expect(unknown?.data?["ids"] == ["a_3ocnwoznuaa7slhsdfeq"])
        #expect(try Self.names(lib, "trip").contains("single (1).jpg"))
        daemon.stop()
    }

    @Test("Trash is refused on a root not opened to it; a file someone else deleted is not photod's to restore, and is purged without touching the disk")
    func refusals() throws {
        let open = try TemporaryDirectory("trash-open")
        defer { open.remove() }
        let closed = try TemporaryDirectory("trash-closed")
        defer { closed.remove() }
        let state = try TemporaryDirectory("trash-refusals")
        defer { state.remove() }
        try open.write("a.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        try open.write("c.jpg", Library.jpeg(date: "2021:01:03 10:00:00"))  // a root left empty looks unmounted
        try closed.write("b.jpg", Library.jpeg(date: "2021:01:02 10:00:00"))
        let daemon = try DaemonProcess(libraries: [open.path, closed.path], state: state, arguments: ["--trash-root", open.path.string])
        try daemon.waitForIdle()
        let id = try WritesEndToEndTests.ids(daemon)
        let (a, b) = (try #require(id["a.jpg"]), try #require(id["b.jpg"]))
        let conn = try daemon.connect()
        let refused = WritesEndToEndTests.failure { try conn.call("assets.trash", ["ids": [.string(a), .string(b)]]) }
        #expect(refused?.errorCode == .permissionDenied)
        #expect(refused?.data?["refused"]?.arrayValue?.map { $0["id"]?.stringValue } == [b])
        #expect(refused?.detail?.contains("--trash-root") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: open.path.string).sorted() == ["a.jpg", "c.jpg"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: closed.path.string) == ["b.jpg"])

        // A restore of an asset whose file someone else deleted: not photod's to restore.
        try FileManager.default.removeItem(atPath: open("a.jpg").string)
        try eventually("a.jpg in Recently Deleted") { try Self.recentlyDeleted(conn) == [a] }
        let gone = WritesEndToEndTests.failure { try conn.call("assets.restore", ["ids": [.string(a)]]) }
        #expect(gone?.errorCode == .conflict)
        #expect(gone?.detail?.contains("deleted outside photod") == true)
        // Deleting it for good touches nothing on disk.
        #expect(try conn.call("assets.deletePermanently", ["ids": [.string(a)]])["deleted"] == [.string(a)])
        daemon.stop()
    }

    @Test("Stopped between a rename and its commit: the asset is in Recently Deleted and its trashed file is restorable; a commit whose renames were lost leaves the files in the library")
    func crashBetweenRenameAndCommit() throws {
        let lib = try TemporaryDirectory("trash-crash-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("trash-crash")
        defer { state.remove() }
        try lib.write("x/one.jpg", Library.jpeg(date: "2022:02:02 10:00:00"))
        try lib.write("x/two.jpg", Library.jpeg(date: "2022:02:03 10:00:00"))
        let arguments = ["--trash-root", lib.path.string]
        var daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
        try daemon.waitForIdle()
        let id = try WritesEndToEndTests.ids(daemon)
        let (one, two) = (try #require(id["one.jpg"]), try #require(id["two.jpg"]))
        _ = try daemon.call("assets.setFavorite", ["ids": [.string(one), .string(two)], "favorite": true])
        // Renamed, not committed: what a kill between the two leaves.
        daemon.kill9()
        try FileManager.default.moveItem(atPath: lib("x/one.jpg").string, toPath: lib("x/.photod-trashed-1900000000-one.jpg").string)
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
        try daemon.waitForIdle()
        let conn = try daemon.connect()
        #expect(try Self.recentlyDeleted(conn) == [one])
        _ = try conn.call("assets.restore", ["ids": [.string(one)]])
        #expect(try Self.names(lib, "x") == ["one.jpg", "two.jpg"])
        #expect(try conn.call("assets.get", ["ids": [.string(one)]])["assets"]?[0]?["isFavorite"]?.boolValue == true)

        // Committed, the renames lost (a power cut before the directory reached the disk): at
        // the next start the file is where it was, and its asset comes back with its id.
        _ = try conn.call("assets.trash", ["ids": [.string(two)]])
        let hidden = try #require(try Self.names(lib, "x").first { $0.hasPrefix(".photod-trashed-") })
        daemon.kill9()
        try FileManager.default.moveItem(atPath: lib("x/\(hidden)").string, toPath: lib("x/two.jpg").string)
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
        try daemon.waitForIdle()
        let after = try daemon.connect()
        #expect(try Self.recentlyDeleted(after).isEmpty)
        #expect(try after.call("assets.get", ["ids": [.string(two)]])["assets"]?[0]?["isFavorite"]?.boolValue == true)
        daemon.stop()
    }

    @Test("Killed after renaming one file of a RAW+JPEG pair with its sidecar: the next start renames it back, and the asset is whole, in the library, with its id and favorite")
    func crashHalfwayThroughAnAsset() throws {
        let lib = try TemporaryDirectory("trash-half-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("trash-half")
        defer { state.remove() }
        try Self.writeLibrary(lib)
        let arguments = ["--trash-root", lib.path.string]
        var daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments,
                                       environment: ["PHOTOD_TEST_HOOKS": "1", "PHOTOD_TEST_CRASH_AFTER_RENAMES": "1"])
        try daemon.waitForIdle()
        let pair = try #require(try WritesEndToEndTests.ids(daemon)["IMG_5.JPG"])
        _ = try daemon.call("assets.setFavorite", ["ids": [.string(pair)], "favorite": true])
        // The call's answer never comes: photod ends after the first rename.
        #expect(throws: (any Error).self) { try daemon.call("assets.trash", ["ids": [.string(pair)]]) }
        try daemon.process.waitForExit()
        #expect(try Self.names(lib, "trip").filter { $0.hasPrefix(".photod-trashed-") }.count == 1, "one file of three renamed")
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
        try daemon.waitForIdle()
        try daemon.waitForLog("undid 1 of 3 renames")
        #expect(try Self.names(lib, "trip").filter { $0.hasPrefix(".") }.isEmpty)
        let back = try #require(try daemon.call("assets.get", ["ids": [.string(pair)]])["assets"]?.arrayValue?.first)
        #expect(back["isFavorite"]?.boolValue == true)
        #expect(back["subtypes"] == ["raw"])
        #expect(try Self.recentlyDeleted(try daemon.connect()).isEmpty)
        // And the trash works afterwards; a file deleted by hand before it does not stop a restore.
        try FileManager.default.removeItem(atPath: lib("trip/IMG_5.JPG.xmp").string)
        try eventually("the sidecar's removal indexed") {
            try daemon.call("assets.get", ["ids": [.string(pair)]])["assets"]?[0]?["resources"]?.arrayValue?.count == 2
        }
        _ = try daemon.call("assets.trash", ["ids": [.string(pair)]])
        _ = try daemon.call("assets.restore", ["ids": [.string(pair)]])
        #expect(try Self.names(lib, "trip").filter { $0.hasPrefix("IMG_5") } == ["IMG_5.DNG", "IMG_5.JPG"])
        daemon.stop()
    }

    @Test("Killed after unlinking one trashed file of a RAW+JPEG pair, before the purge's commit: the next start finishes the delete, and nothing of the asset is left on disk or in Recently Deleted")
    func crashHalfwayThroughADelete() throws {
        let lib = try TemporaryDirectory("trash-unlink-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("trash-unlink")
        defer { state.remove() }
        try Self.writeLibrary(lib)
        let arguments = ["--trash-root", lib.path.string]
        var daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments,
                                       environment: ["PHOTOD_TEST_HOOKS": "1", "PHOTOD_TEST_CRASH_AFTER_UNLINKS": "1"])
        try daemon.waitForIdle()
        let ids = try WritesEndToEndTests.ids(daemon)
        let (pair, other) = (try #require(ids["IMG_5.JPG"]), try #require(ids["IMG_6.JPG"]))
        _ = try daemon.call("assets.trash", ["ids": [.string(pair), .string(other)]])
        #expect(try Self.names(lib, "trip").filter { $0.hasPrefix(".photod-trashed-") }.count == 5, "IMG_5's three files and IMG_6's two")
        // The call's answer never comes: photod ends after the first unlink.
        #expect(throws: (any Error).self) { try daemon.call("assets.deletePermanently", ["ids": [.string(pair)]]) }
        try daemon.process.waitForExit()
        #expect(try Self.names(lib, "trip").filter { $0.hasPrefix(".photod-trashed-") }.count == 4, "one file of three unlinked")
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
        try daemon.waitForIdle()
        try daemon.waitForLog("finished a delete for good that stopped before its commit: 1 of 1 assets purged")
        let left = try Self.names(lib, "trip").filter { $0.hasPrefix(".photod-trashed-") }
        #expect(left.count == 2 && left.allSatisfy { $0.contains("IMG_6") }, "\(left)")
        let conn = try daemon.connect()
        #expect(try Self.recentlyDeleted(conn) == [other])
        #expect(try conn.call("assets.get", ["ids": [.string(pair)]])["assets"]?[0] == nil)
        // The other asset in Recently Deleted is untouched: it restores whole.
        _ = try conn.call("assets.restore", ["ids": [.string(other)]])
        #expect(try Self.names(lib, "trip").filter { $0.hasPrefix(".") }.isEmpty)
        daemon.stop()
    }

    @Test("A disk unmounted between the request and the rename: refused, nothing renamed; remounted, the asset is in the library with its file",
          .enabled(if: Mounts.canBind, "bind mounts need root with CAP_SYS_ADMIN"))
    func unmountedBeforeTheRename() throws {
        let place = try TemporaryDirectory("trash-mount")
        defer {
            Mounts.unmountAll(below: place.path)
            place.remove()
        }
        let (source, root) = (place("source"), place("lib"))
        try place.makeDirectory("lib")
        try place.write("source/d/a.jpg", Library.jpeg(date: "2024:04:04 10:00:00"))
        try place.write("source/d/b.jpg", Library.jpeg(date: "2024:04:05 10:00:00"))
        try Mounts.bind(source, at: root)
        let state = try TemporaryDirectory("trash-mount-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [root], state: state, arguments: ["--trash-root", root.string])
        try daemon.waitForIdle()
        let a = try #require(try WritesEndToEndTests.ids(daemon)["a.jpg"])
        try Mounts.unmount(root, lazily: true)
        let refused = WritesEndToEndTests.failure { try daemon.call("assets.trash", ["ids": [.string(a)]]) }
        #expect(refused?.errorCode == .unavailable || refused?.errorCode == .conflict, "\(String(describing: refused))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: source.appending("d").string).sorted() == ["a.jpg", "b.jpg"])
        try Mounts.bind(source, at: root)
        try eventually("a.jpg in the library again") {
            try daemon.call("assets.get", ["ids": [.string(a)]])["assets"]?[0]?["path"]?.stringValue == root.appending("d/a.jpg").string
        }
        #expect(try Self.recentlyDeleted(try daemon.connect()).isEmpty)
        daemon.stop()
    }

    @Test("The trash outlives a lost database: trashed files found by a fresh index are assets in Recently Deleted, under their names, restorable; a rescan does not read them again")
    func lostDatabase() throws {
        let lib = try TemporaryDirectory("trash-lost-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("trash-lost")
        defer { state.remove() }
        try Self.writeLibrary(lib)
        let arguments = ["--trash-root", lib.path.string]
        var daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
        try daemon.waitForIdle()
        let id = try WritesEndToEndTests.ids(daemon)
        _ = try daemon.call("assets.trash", ["ids": [.string(try #require(id["IMG_5.JPG"])), .string(try #require(id["single.jpg"]))]])
        #expect(daemon.stop() == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: state.path.string) where name.hasPrefix("photod.db") {
            try FileManager.default.removeItem(atPath: state(name).string)
        }
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
        try daemon.waitForIdle()
        let conn = try daemon.connect()
        let trashed = try conn.call("collections.assets", ["id": "s_recentlyDeleted", "limit": 100])["assets"]?.arrayValue ?? []
        #expect(Set(trashed.compactMap { $0["path"]?.stringValue }) == [lib("trip/IMG_5.JPG").string, lib("trip/single.jpg").string])
        let pair = try #require(trashed.first { $0["path"]?.stringValue == lib("trip/IMG_5.JPG").string })
        #expect(pair["subtypes"] == ["raw"], "the trashed RAW and JPEG are one asset again")
        let counts = try conn.call("library.status")["counts"]
        #expect(counts?["assets"]?.intValue == 3)
        #expect(counts?["recentlyDeleted"]?.intValue == 2)
        // Recorded now: a rescan reads nothing.
        _ = try conn.call("library.rescan", [:])
        #expect(try conn.call("library.status")["lastScan"]?["readFiles"]?.intValue == 0)
        let pairID = try #require(pair["id"]?.stringValue)
        _ = try conn.call("assets.restore", ["ids": [.string(pairID)]])
        #expect(try Self.names(lib, "trip").filter { $0.hasPrefix("IMG_5") } == ["IMG_5.DNG", "IMG_5.JPG", "IMG_5.JPG.xmp"])
        let back = try #require(try conn.call("assets.get", ["ids": [.string(pairID)]])["assets"]?.arrayValue?.first)
        #expect(back["rating"]?.intValue == 4)
        daemon.stop()
    }

    @Test("The retention purge unlinks trashed files on a root open to the trash, and keeps the asset and its file where photod may not write")
    func retentionPurge() throws {
        let lib = try TemporaryDirectory("trash-purge-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("trash-purge")
        defer { state.remove() }
        try lib.write("p/one.jpg", Library.jpeg(date: "2023:03:03 10:00:00"))
        try lib.write("p/two.jpg", Library.jpeg(date: "2023:03:04 10:00:00"))
        var daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--trash-root", lib.path.string])
        try daemon.waitForIdle()
        let one = try #require(try WritesEndToEndTests.ids(daemon)["one.jpg"])
        _ = try daemon.call("assets.trash", ["ids": [.string(one)]])
        #expect(daemon.stop() == 0)
        // The retention is up (0 days), but the root is no longer open to the trash: kept.
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--retention-days", "0"])
        try daemon.waitForIdle()
        try daemon.waitForLog("kept 1 assets in Recently Deleted past their time")
        #expect(try Self.recentlyDeleted(try daemon.connect()) == [one])
        #expect(try Self.names(lib, "p").contains { $0.hasPrefix(".photod-trashed-") })
        #expect(daemon.stop() == 0)
        // Open again: the purge at the start unlinks the trashed file and purges the asset.
        daemon = try DaemonProcess(libraries: [lib.path], state: state,
                                   arguments: ["--retention-days", "0", "--trash-root", lib.path.string])
        try daemon.waitForIdle()
        try eventually("the trashed file unlinked") { try Self.names(lib, "p") == ["two.jpg"] }
        try eventually("the asset purged") { try Self.recentlyDeleted(try daemon.connect()).isEmpty }
        daemon.stop()
    }

    @Test("Without --trash-root photod writes nothing to the library: every write method leaves its tree and times as they were")
    func optionOffWritesNothing() throws {
        let lib = try TemporaryDirectory("trash-off-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("trash-off")
        defer { state.remove() }
        try Self.writeLibrary(lib)
        func snapshot() throws -> [String: [Int]] {
            var out: [String: [Int]] = [:]
            let walker = FileManager.default.enumerator(atPath: lib.path.string)
            var paths = [""]
            while let p = walker?.nextObject() as? String { paths.append(p) }
            for p in paths {
                var st = stat()
                #expect(lstat(lib(p).string, &st) == 0)
                out[p] = [Int(st.st_ino), Int(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec]
            }
            return out
        }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let before = try snapshot()
        let ids = Array(try WritesEndToEndTests.ids(daemon).values).sorted()
        let some: JSONValue = .array(ids.prefix(3).map { .string($0) })
        let conn = try daemon.connect()
        _ = try conn.call("assets.setFavorite", ["ids": some, "favorite": true])
        _ = try conn.call("assets.setHidden", ["ids": some, "hidden": true])
        _ = try conn.call("assets.setKeywords", ["ids": some, "source": "t", "keywords": ["k"]])
        _ = try conn.call("assets.addKeywords", ["ids": some, "source": "t", "keywords": ["l"]])
        _ = try conn.call("assets.removeKeywords", ["ids": some, "source": "t", "keywords": ["k"]])
        let folder = try conn.call("albums.createFolder", ["title": "F"])["id"]!
        let album = try conn.call("albums.create", ["title": "A"])["id"]!
        _ = try conn.call("albums.rename", ["id": album, "title": "B"])
        _ = try conn.call("albums.move", ["id": album, "folder": folder])
        _ = try conn.call("albums.addAssets", ["id": album, "ids": some])
        _ = try conn.call("albums.removeAssets", ["id": album, "ids": some])
        _ = try conn.call("albums.delete", ["id": album])
        _ = try conn.call("library.rescan", [:])
        try daemon.waitForIdle()
        #expect(WritesEndToEndTests.failure { try conn.call("assets.trash", ["ids": some]) }?.errorCode == .permissionDenied)
        #expect(WritesEndToEndTests.failure { try conn.call("assets.restore", ["ids": some]) }?.errorCode == .notFound)
        #expect(WritesEndToEndTests.failure { try conn.call("assets.deletePermanently", ["ids": some]) }?.errorCode == .notFound)
        #expect(try snapshot() == before)
        daemon.stop()
    }
}
