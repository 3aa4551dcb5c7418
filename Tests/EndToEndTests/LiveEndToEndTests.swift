import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension DaemonProcess {
    /// Waits until `condition` holds for `library.status`; returns that status. The watcher
    /// reports within its coalescing window, so these waits are short; the timeout is for a
    /// loaded CI.
    @discardableResult
    func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: (JSONValue) throws -> Bool) throws -> JSONValue {
        let c = try connect()
        return try eventually("\(what); photod's log:\n\(log)", timeout: timeout) { try c.call("library.status") } until: { try condition($0) }
    }

    /// Waits until the library holds `count` visible assets and photod is idle.
    @discardableResult
    func waitForAssets(_ count: Int, timeout: Duration = .seconds(60)) throws -> JSONValue {
        try waitFor("\(count) assets, idle", timeout: timeout) {
            $0["counts"]?["assets"]?.intValue == count && $0["state"]?.stringValue == "idle"
        }
    }

    /// Asset ids by path.
    func idsByPath() throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try allAssets().map { ($0["path"]!.stringValue!, $0["id"]!.stringValue!) })
    }
}

/// Runs a system tool (cp, mv) the way a user would; fails the test when it fails.
func shell(_ tool: String, _ arguments: [String]) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = [tool] + arguments
    try p.run()
    p.waitUntilExit()
    if p.terminationStatus != 0 { throw HarnessError("\(tool) \(arguments.prefix(3)) failed: \(p.terminationStatus)") }
}

@Suite("Live watching, end to end", .serialized)
struct LiveEndToEndTests {
    @Test("1,000 files copied in while running: all indexed, each read exactly once, in chunks")
    func copyThousand() throws {
        let lib = try TemporaryDirectory("live-copy-lib")
        defer { lib.remove() }
        try lib.makeDirectory("existing")
        let staging = try TemporaryDirectory("live-copy-staging")
        defer { staging.remove() }
        for i in 0..<1_000 {
            try staging.write("\(i < 500 ? "a" : "b")/IMG_\(i).jpg", Library.jpeg(date: "2021:03:\(String(format: "%02d", 1 + i % 28)) 10:00:00", width: 100 + i % 300))
        }
        let state = try TemporaryDirectory("live-copy")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let start = try daemon.waitForIdle()
        #expect(start["roots"]?[0]?["mode"]?.stringValue == "watched")

        // 500 files into a watched folder, and a folder of 500 copied in as a whole (`cp -r`:
        // the new folder is watched, then scanned, while cp is still writing into it).
        let files = (0..<500).map { staging("a/IMG_\($0).jpg").string }
        try shell("cp", files + [lib("existing").string])
        try shell("cp", ["-r", staging("b").string, lib("new").string])
        let status = try daemon.waitForAssets(1_000)
        #expect(status["metadataReads"]?.intValue == 1_000)
        #expect(status["counts"]?["files"]?.intValue == 1_000)
        // Chunks, not one transaction per file.
        let jobs = status["sortQueue"]?["jobsRun"]?.intValue ?? .max
        #expect(jobs < 200, "\(jobs) sort jobs for 1,000 files")
        let assets = try daemon.allAssets()
        #expect(Set(assets.compactMap { $0["path"]?.stringValue }).count == 1_000)
        #expect(daemon.stop() == 0)
    }

    @Test("A folder of 200 favorited photos moved while running: same ids, still favorites, the album follows, nothing read")
    func folderMovedLive() throws {
        let lib = try TemporaryDirectory("live-move-lib")
        defer { lib.remove() }
        try lib.makeDirectory("best")
        let state = try TemporaryDirectory("live-move")
        defer { state.remove() }
        let (daemon, before, album) = try startWithFavoritedTrip(lib, state: state)

        try shell("mv", [lib("2019/trip").string, lib("best/Iceland").string])
        try daemon.waitFor("the move") { _ in
            (try daemon.idsByPath()).keys.contains(lib("best/Iceland/IMG_0.jpg").string)
        }
        let status = try daemon.waitForIdle()
        #expect(status["metadataReads"]?.intValue == 0)
        try expectFolderMoved(daemon, before: before, album: album, from: lib("2019/trip"), to: lib("best/Iceland"), total: 201)
        // Single files renamed live keep their ids too.
        try shell("mv", [lib("2019/other/a.jpg").string, lib("best/renamed.jpg").string])
        try daemon.waitFor("the rename") { _ in (try daemon.idsByPath())[lib("best/renamed.jpg").string] != nil }
        #expect(try daemon.idsByPath()[lib("best/renamed.jpg").string] == before[lib("2019/other/a.jpg").string])
        #expect(try daemon.waitForIdle()["metadataReads"]?.intValue == 0)
        #expect(daemon.stop() == 0)
    }

    @Test("A folder and a file moved into a directory created an instant before (not yet watched): moves, the album keeps its id")
    func movedIntoNewDirectoryLive() throws {
        let lib = try TemporaryDirectory("live-move-new-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("live-move-new")
        defer { state.remove() }
        let (daemon, before, album) = try startWithFavoritedTrip(lib, state: state)
        let token = try #require(try daemon.call("changes.currentToken")["token"]?.intValue)

        // Two system calls back to back: the rename lands before photod can watch the new
        // directory, so the kernel reports a MOVED_FROM without its MOVED_TO.
        #expect(mkdir(lib("best").string, 0o755) == 0)
        #expect(rename(lib("2019/trip").string, lib("best/Iceland").string) == 0)
        #expect(mkdir(lib("single").string, 0o755) == 0)
        #expect(rename(lib("2019/other/a.jpg").string, lib("single/a.jpg").string) == 0)
        // One more record at once, so that the last MOVED_FROM is not left waiting for its half
        // (it would then come in a later batch, after the scan, and take the other way).
        #expect(mkdir(lib(".tick").string, 0o755) == 0)
        try daemon.waitFor("the moves") { _ in
            let ids = try daemon.idsByPath()
            return ids[lib("best/Iceland/IMG_0.jpg").string] != nil && ids[lib("single/a.jpg").string] != nil
        }
        let status = try daemon.waitForIdle()
        #expect(status["metadataReads"]?.intValue == 0)
        #expect(try daemon.idsByPath()[lib("single/a.jpg").string] == before[lib("2019/other/a.jpg").string])
        // Moves, not deletions and restores: nothing went through Recently Deleted on the way,
        // and the folder album was never deleted.
        let since = try daemon.call("changes.since", ["since": .int(Int64(token))])
        let sets = try #require(since["changes"]?.arrayValue)
        #expect(!sets.isEmpty)
        let albumID = try #require(album["id"]?.stringValue)
        for set in sets {
            let touched = ["inserted", "updated", "deleted"].flatMap { set["collections"]?[$0]?.arrayValue ?? [] }.compactMap(\.stringValue)
            #expect(!touched.contains("s_recentlyDeleted"), "an asset went through Recently Deleted: \(set)")
            let deleted = (set["collections"]?["deleted"]?.arrayValue ?? []).compactMap(\.stringValue)
            #expect(!deleted.contains(albumID), "the album was deleted: \(set)")
        }
        try expectFolderMoved(daemon, before: before, album: album, from: lib("2019/trip"), to: lib("best/Iceland"), total: 201)
        #expect(daemon.stop() == 0)
    }

    /// `rm -rf old && mkdir new && cp photo new/IMG_0.jpg`: ext4 (and XFS) hand the freed
    /// directory inode to the next mkdir, so the scan of `new` takes `old` (still indexed,
    /// its removal deferred) for a directory moved there.
    @Test("A folder deleted and a new one created at once (inode reused): the new photo is new, the deleted ones go to Recently Deleted")
    func deletedFolderInodeReused() throws {
        let lib = try TemporaryDirectory("live-inode-lib")
        defer { lib.remove() }
        for i in 0..<3 { try lib.write("old/IMG_\(i).jpg", Library.jpeg(date: "2019:07:0\(1 + i) 10:00:00", width: 100 + i)) }
        try lib.write("keep/k.jpg", Library.jpeg(date: "2019:01:01 10:00:00"))
        let state = try TemporaryDirectory("live-inode")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        #expect(daemon.stop() == 0)
        try markFavorites(database: daemon.database, under: lib("old"))
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let before = try daemon.idsByPath()
        let oldAlbum = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "old" })
        let oldInode = try FileStat.of(lib("old")).inode

        let photo = Library.jpeg(date: "2024:01:01 10:00:00", width: 321)
        for i in 0..<3 { #expect(unlink(lib("old/IMG_\(i).jpg").string) == 0) }
        #expect(rmdir(lib("old").string) == 0)
        #expect(mkdir(lib("new").string, 0o755) == 0)
        let reused = try FileStat.of(lib("new")).inode == oldInode
        try lib.write("new/IMG_0.jpg", photo)
        try daemon.waitFor("the new photo") { _ in try daemon.idsByPath()[lib("new/IMG_0.jpg").string] != nil }
        let status = try daemon.waitForIdle()
        print("inode reused: \(reused)")
        let new = try daemon.allAssets().first { $0["path"]?.stringValue == lib("new/IMG_0.jpg").string }
        #expect(new?["id"]?.stringValue != before[lib("old/IMG_0.jpg").string], "the new photo took over the deleted photo's asset: \(String(describing: new))")
        #expect(new?["isFavorite"]?.boolValue == false, "the new photo inherited the deleted one's favorite")
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 3, "\(status)")
        let newAlbum = try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "new" }
        #expect(newAlbum?["id"] != oldAlbum["id"], "the new folder took over the deleted folder's album")
        #expect(daemon.stop() == 0)
    }

    /// `mv` of a folder with a RAW+JPEG pair between two roots on two file systems (copy, then
    /// delete), fast enough to land in one batch.
    @Test("A RAW+JPEG pair moved across file systems keeps its id and favorite",
          .enabled(if: twoFileSystemsReason == nil, Comment(rawValue: twoFileSystemsReason ?? "")))
    func pairMovedAcrossFileSystems() throws {
        let (one, two) = try twoFileSystems("live-pair-fs")
        defer { one.remove(); two.remove() }
        try one.write("trip/IMG_5.DNG", TIFFFixture(ifd0: [.init(0x100, .long([6000])), .init(0x101, .long([4000])),
                                                         .init(0x10F, .ascii("Canon")), .init(0xC612, .byte([1, 4, 0, 0]))],
                                                  exif: [.init(0x9003, .ascii("2019:05:04 10:00:00"))]).bytes())
        try one.write("trip/IMG_5.JPG", Library.jpeg(date: "2019:05:04 10:00:00", width: 1500, height: 1000))
        try one.write("trip/single.jpg", Library.jpeg(date: "2019:05:05 10:00:00", width: 200))
        try one.write("trip/side.jpg", Library.jpeg(date: "2019:05:06 10:00:00", width: 210))
        try one.write("trip/side.jpg.xmp", Array(XMPFixture.packet(dateTimeOriginal: "2019-05-06T10:00:00", rating: 3, keywords: ["k"]).utf8))
        try one.write("stays/s.jpg", Library.jpeg(date: "2014:10:01 10:00:00"))
        try two.makeDirectory("in")
        let state = try TemporaryDirectory("live-pair-fs")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [one.path, two.path], state: state)
        try daemon.waitForIdle()
        #expect(daemon.stop() == 0)
        try markFavorites(database: daemon.database, under: one("trip"))
        daemon = try DaemonProcess(libraries: [one.path, two.path], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()

        try shell("mv", [one("trip").string, two("in/trip").string])
        try daemon.waitFor("the move") { _ in (try daemon.idsByPath())[two("in/trip/IMG_5.JPG").string] != nil }
        let status = try daemon.waitForIdle()
        let now = try daemon.allAssets()
        for name in ["IMG_5.JPG", "single.jpg", "side.jpg"] {
            let moved = now.first { $0["path"]?.stringValue == two("in/trip/\(name)").string }
            #expect(moved?["id"]?.stringValue == ids[one("trip/\(name)").string], "\(name): \(String(describing: moved))")
            #expect(moved?["isFavorite"]?.boolValue == true, "\(name)")
        }
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 0, "\(status)")
        #expect(daemon.stop() == 0)
    }

    @Test("A folder moved between two roots on two file systems (mv copies, then deletes), live and while stopped: ids and favorites kept",
          .enabled(if: twoFileSystemsReason == nil, Comment(rawValue: twoFileSystemsReason ?? "")))
    func moveAcrossFileSystems() throws {
        let (one, two) = try twoFileSystems("live-fs")
        defer { one.remove(); two.remove() }
        for i in 0..<20 { try one.write("trip/p\(i).jpg", Library.jpeg(date: "2014:08:0\(1 + i % 9) 10:00:00", width: 100 + i)) }
        for i in 0..<5 { try one.write("later/q\(i).jpg", Library.jpeg(date: "2014:09:0\(1 + i) 10:00:00", width: 300 + i)) }
        // (A root found empty at start-up while the index holds files is taken for an unmounted
        // disk: something stays in it.)
        try one.write("stays/s.jpg", Library.jpeg(date: "2014:10:01 10:00:00"))
        try two.makeDirectory("in")
        let state = try TemporaryDirectory("live-fs")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [one.path, two.path], state: state)
        try daemon.waitForIdle()
        #expect(daemon.stop() == 0)
        try markFavorites(database: daemon.database, under: one("trip"))
        try markFavorites(database: daemon.database, under: one("later"))
        daemon = try DaemonProcess(libraries: [one.path, two.path], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()

        try shell("mv", [one("trip").string, two("in/trip").string])
        try daemon.waitFor("the move") { _ in (try daemon.idsByPath())[two("in/trip/p19.jpg").string] != nil }
        var status = try daemon.waitFor("the removals") {
            $0["counts"]?["assets"]?.intValue == 26 && $0["state"]?.stringValue == "idle"
                && $0["counts"]?["recentlyDeleted"]?.intValue == 0
        }
        var now = try daemon.allAssets()
        for i in 0..<20 {
            let moved = now.first { $0["path"]?.stringValue == two("in/trip/p\(i).jpg").string }
            #expect(moved?["id"]?.stringValue == ids[one("trip/p\(i).jpg").string])
            #expect(moved?["isFavorite"]?.boolValue == true)
        }
        #expect(daemon.stop() == 0)

        // The same while stopped.
        try shell("mv", [one("later").string, two("in/later").string])
        daemon = try DaemonProcess(libraries: [one.path, two.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 0)
        now = try daemon.allAssets()
        #expect(now.count == 26)
        for i in 0..<5 {
            let moved = now.first { $0["path"]?.stringValue == two("in/later/q\(i).jpg").string }
            #expect(moved?["id"]?.stringValue == ids[one("later/q\(i).jpg").string])
            #expect(moved?["isFavorite"]?.boolValue == true)
        }
        #expect(daemon.stop() == 0)
    }

    @Test("Files deleted while running go to Recently Deleted; brought back (moved or copied), they keep their ids")
    func deleteAndRestoreLive() throws {
        let lib = try TemporaryDirectory("live-del-lib")
        defer { lib.remove() }
        for i in 0..<6 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2020:02:0\(1 + i) 12:00:00", width: 100 + i)) }
        let aside = try TemporaryDirectory("live-del-aside")
        defer { aside.remove() }
        let state = try TemporaryDirectory("live-del")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()

        // p0, p1 moved out of the library (as a file manager's trash does); p2 copied aside and deleted.
        for i in 0..<2 { try shell("mv", [lib("a/p\(i).jpg").string, aside("p\(i).jpg").string]) }
        try shell("cp", ["-p", lib("a/p2.jpg").string, aside("p2.jpg").string])
        #expect(unlink(lib("a/p2.jpg").string) == 0)
        var status = try daemon.waitFor("Recently Deleted") { $0["counts"]?["recentlyDeleted"]?.intValue == 3 }
        #expect(status["counts"]?["assets"]?.intValue == 3)
        let trash = try daemon.call("collections.assets", ["id": "s_recentlyDeleted"])["assets"]?.arrayValue ?? []
        #expect(Set(trash.compactMap { $0["id"]?.stringValue }) == Set((0..<3).compactMap { ids[lib("a/p\($0).jpg").string] }))
        #expect(!(try daemon.idsByPath()).keys.contains(lib("a/p0.jpg").string))

        // Back: p0 to its place, p1 to another folder, p2 as a copy (new inode; same content).
        let readsBefore = status["metadataReads"]?.intValue ?? 0
        try shell("mv", [aside("p0.jpg").string, lib("a/p0.jpg").string])
        try lib.makeDirectory("b")
        try shell("mv", [aside("p1.jpg").string, lib("b/p1.jpg").string])
        try shell("cp", [aside("p2.jpg").string, lib("a/p2.jpg").string])
        status = try daemon.waitFor("the restores") {
            $0["counts"]?["recentlyDeleted"]?.intValue == 0 && $0["counts"]?["assets"]?.intValue == 6 && $0["state"]?.stringValue == "idle"
        }
        let back = try daemon.idsByPath()
        #expect(back[lib("a/p0.jpg").string] == ids[lib("a/p0.jpg").string])
        #expect(back[lib("b/p1.jpg").string] == ids[lib("a/p1.jpg").string])
        #expect(back[lib("a/p2.jpg").string] == ids[lib("a/p2.jpg").string])
        // Moved back: not read; the copy has a new identity and is read once.
        #expect(status["metadataReads"]?.intValue == readsBefore + 1)
        #expect(daemon.stop() == 0)
    }

    @Test("The library root renamed away while running, and while stopped: nothing deleted, unavailable, back as before")
    func rootRenamedAway() throws {
        let parent = try TemporaryDirectory("live-root")
        defer { parent.remove() }
        for i in 0..<20 { try parent.write("lib/d\(i % 3)/p\(i).jpg", Library.jpeg(date: "2018:05:0\(1 + i % 9) 09:00:00", width: 100 + i)) }
        let root = parent("lib"), away = parent("lib-away")
        let state = try TemporaryDirectory("live-root-state")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [root], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()

        #expect(rename(root.string, away.string) == 0)
        var status = try daemon.waitFor("the root unavailable", timeout: .seconds(10)) {
            $0["roots"]?[0]?["state"]?.stringValue == "unavailable"
        }
        #expect(status["roots"]?[0]?["mode"]?.stringValue == "unavailable")
        #expect(status["counts"]?["assets"]?.intValue == 20)
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 0)
        let offline = try daemon.allAssets()
        #expect(offline.count == 20)
        #expect(offline.allSatisfy { $0["isAvailable"]?.boolValue == false })

        #expect(rename(away.string, root.string) == 0)
        // Noticed within a couple of seconds (the recheck runs every 2 s).
        status = try daemon.waitFor("the root back", timeout: .seconds(10)) {
            $0["roots"]?[0]?["state"]?.stringValue == "available" && $0["state"]?.stringValue == "idle"
        }
        #expect(status["metadataReads"]?.intValue == 20)  // the initial index only
        #expect(try daemon.idsByPath() == ids)
        #expect(try daemon.allAssets().allSatisfy { $0["isAvailable"]?.boolValue == true })
        // Still watched after its return.
        try parent.write("lib/d0/new.jpg", Library.jpeg(date: "2018:06:01 09:00:00"))
        try daemon.waitForAssets(21)
        #expect(daemon.stop() == 0)

        // Stopped, renamed away, started: unavailable, nothing deleted; back while running.
        #expect(rename(root.string, away.string) == 0)
        daemon = try DaemonProcess(libraries: [root], state: state)
        status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "unavailable")
        #expect(status["counts"]?["assets"]?.intValue == 21)
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 0)
        #expect(rename(away.string, root.string) == 0)
        status = try daemon.waitFor("the root back", timeout: .seconds(10)) {
            $0["roots"]?[0]?["state"]?.stringValue == "available" && $0["state"]?.stringValue == "idle"
        }
        #expect(status["metadataReads"]?.intValue == 0)
        let final = try daemon.idsByPath()
        for (path, id) in ids { #expect(final[path] == id) }
        try parent.write("lib/d1/newer.jpg", Library.jpeg(date: "2018:06:02 09:00:00"))
        try daemon.waitForAssets(22)
        #expect(daemon.stop() == 0)
    }

    @Test("A tiny watch budget: the directories beyond it are polled, status says so, and changes there are found")
    func tinyWatchBudget() throws {
        let lib = try TemporaryDirectory("live-budget-lib")
        defer { lib.remove() }
        for d in 0..<6 { try lib.write("d\(d)/sub/p.jpg", Library.jpeg(date: "2017:0\(d + 1):01 08:00:00", width: 100 + d)) }
        let state = try TemporaryDirectory("live-budget")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--max-watches", "3", "--poll-interval", "1"])
        let status = try daemon.waitForIdle()
        let watcher = try #require(status["watcher"])
        #expect(watcher["watches"]?.intValue == 3)
        #expect(watcher["budget"]?.intValue == 3)
        let unwatched = watcher["unwatchedTrees"]?.arrayValue ?? []
        #expect(!unwatched.isEmpty)
        #expect(watcher["hint"]?.stringValue?.contains("fs.inotify.max_user_watches") == true)
        #expect((status["roots"]?[0]?["polledTrees"]?.intValue ?? 0) > 0)
        #expect(daemon.log.contains("max_user_watches"))

        // A file added in every folder, watched or not, is found (polled ones within a poll).
        for d in 0..<6 { try lib.write("d\(d)/sub/q.jpg", Library.jpeg(date: "2017:0\(d + 1):02 08:00:00", width: 200 + d)) }
        let after = try daemon.waitFor("the new files", timeout: .seconds(30)) { $0["counts"]?["assets"]?.intValue == 12 }
        #expect((after["watcher"]?["polls"]?.intValue ?? 0) >= 1)
        // Unchanged files are not read again by the polls.
        try daemon.waitFor("two more polls", timeout: .seconds(30)) {
            ($0["watcher"]?["polls"]?.intValue ?? 0) >= (after["watcher"]?["polls"]?.intValue ?? 0) + 2
        }
        #expect(try daemon.waitForIdle()["metadataReads"]?.intValue == 12)
        #expect(daemon.stop() == 0)
    }

    @Test("Recently Deleted is purged after the retention period (--retention-days 0: at once), not before")
    func purgeAfterRetention() throws {
        let lib = try TemporaryDirectory("live-purge-lib")
        defer { lib.remove() }
        for i in 0..<3 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2015:01:0\(1 + i) 12:00:00", width: 100 + i)) }
        let state = try TemporaryDirectory("live-purge")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        #expect(unlink(lib("a/p0.jpg").string) == 0)
        try daemon.waitFor("Recently Deleted") { $0["counts"]?["recentlyDeleted"]?.intValue == 1 }
        #expect(daemon.stop() == 0)
        // Restarted with the default retention: still there.
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        #expect(try daemon.waitForIdle()["counts"]?["recentlyDeleted"]?.intValue == 1)
        #expect(daemon.stop() == 0)
        // With no retention: purged at start-up, and the trash smart album is empty.
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--retention-days", "0"])
        let status = try daemon.waitFor("the purge") { $0["counts"]?["recentlyDeleted"]?.intValue == 0 && $0["state"]?.stringValue == "idle" }
        #expect(status["counts"]?["assets"]?.intValue == 2)
        #expect(try daemon.call("collections.assets", ["id": "s_recentlyDeleted"])["total"]?.intValue == 0)
        #expect(daemon.log.contains("purged 1 assets"))
        #expect(daemon.stop() == 0)
    }

    @Test("The kernel's event queue overflows (max_queued_events lowered, as root): a rescan loses nothing",
          .enabled(if: InotifyQueueKnob.canLower,
                   "lowering max_queued_events needs root (the coalescer's overflow handling is tested in PhotoWatchTests)"))
    func overflow() throws {
        let lib = try TemporaryDirectory("live-overflow-lib")
        defer { lib.remove() }
        try lib.makeDirectory("in")
        let state = try TemporaryDirectory("live-overflow")
        defer { state.remove() }
        // The queue length is fixed when the daemon opens its inotify descriptor.
        let daemon = try InotifyQueueKnob.lowered(to: 16) {
            let daemon = try DaemonProcess(libraries: [lib.path], state: state)
            try daemon.waitForIdle()
            return daemon
        }
        let staging = try TemporaryDirectory("live-overflow-staging")
        defer { staging.remove() }
        for i in 0..<400 { try staging.write("IMG_\(i).jpg", Library.jpeg(date: "2016:04:0\(1 + i % 9) 10:00:00", width: 100 + i)) }
        // Stopped while the files arrive, photod reads none of their events, so the queue of 16
        // overflows whatever the machine's speed (a watcher that keeps up never sees it).
        let pid = daemon.process.processIdentifier
        #expect(kill(pid, SIGSTOP) == 0)
        defer { kill(pid, SIGCONT) }
        try shell("cp", (0..<400).map { staging("IMG_\($0).jpg").string } + [lib("in").string])
        #expect(kill(pid, SIGCONT) == 0)
        let status = try daemon.waitForAssets(400)
        #expect((status["watcher"]?["overflows"]?.intValue ?? 0) >= 1)
        #expect(status["counts"]?["files"]?.intValue == 400)
        #expect(daemon.log.contains("overflowed"))
        #expect(daemon.stop() == 0)
    }
}

/// A library of 200 photos in 2019/trip, all favorites, and 2019/other/a.jpg; photod indexed
/// it, was restarted with the favorites set, and is idle. Returns it, the ids by path and the
/// trip's folder album.
func startWithFavoritedTrip(_ lib: TemporaryDirectory, state: TemporaryDirectory) throws
    -> (daemon: DaemonProcess, before: [String: String], album: JSONValue) {
    for i in 0..<200 { try lib.write("2019/trip/IMG_\(i).jpg", Library.jpeg(date: "2019:07:0\(1 + i % 9) 10:00:00", width: 100 + i)) }
    try lib.write("2019/other/a.jpg", Library.jpeg(date: "2019:01:01 10:00:00"))
    var daemon = try DaemonProcess(libraries: [lib.path], state: state)
    try daemon.waitForIdle()
    #expect(daemon.stop() == 0)
    try markFavorites(database: daemon.database, under: lib("2019/trip"))
    daemon = try DaemonProcess(libraries: [lib.path], state: state)
    try daemon.waitForIdle()
    let album = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "trip" })
    return (daemon, try daemon.idsByPath(), album)
}

/// Why this machine has no two temporary directories on two file systems (/tmp and /dev/shm),
/// or nil when it has (the tests that need them are skipped otherwise).
let twoFileSystemsReason: String? = {
    guard let one = try? TemporaryDirectory("fs-probe-1") else { return "no temporary directory" }
    defer { one.remove() }
    guard let two = try? TemporaryDirectory("fs-probe-2", in: "/dev/shm") else { return "/dev/shm is not writable" }
    defer { two.remove() }
    guard let a = try? FileStat.of(one.path), let b = try? FileStat.of(two.path), a.device != b.device else {
        return "/tmp and /dev/shm are one file system here"
    }
    return nil
}()

/// Two temporary directories on two file systems (/tmp and /dev/shm).
func twoFileSystems(_ prefix: String) throws -> (TemporaryDirectory, TemporaryDirectory) {
    (try TemporaryDirectory(prefix + "1"), try TemporaryDirectory(prefix + "2", in: "/dev/shm"))
}
