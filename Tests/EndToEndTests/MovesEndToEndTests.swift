import Foundation
import PhotoModel
@testable import PhotoStore
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Marks every asset under `folder` favorite, the way the user-state API will (the daemon is stopped).
func markFavorites(database: PathBytes, under folder: PathBytes) throws {
    var o = Database.Options()
    o.exclusive = false
    let db = try Database(path: database.string, options: o)
    _ = try db.write { w in
        try w.connection.execute("""
            UPDATE assets SET is_favorite = 1 WHERE path >= CAST('\(folder.string)/' AS BLOB) AND path < CAST('\(folder.string)0' AS BLOB);
            INSERT INTO user_state (asset_id, is_favorite, is_hidden, updated_at)
                SELECT id, 1, 0, 0 FROM assets WHERE is_favorite = 1 ON CONFLICT (asset_id) DO NOTHING;
            """)
    }
}

/// After a folder of 200 favorites moved from `from` to `to`: every asset below `to` has the id
/// it had below `from` and is still a favorite, the folder album (same id) has the new path and
/// title, and Favorites counts the 200.
func expectFolderMoved(_ daemon: DaemonProcess, before: [String: String], album: JSONValue, from: PathBytes, to: PathBytes,
                       total: Int) throws {
    let after = try daemon.allAssets()
    #expect(after.count == total)
    let (fromPrefix, toPrefix) = (from.string + "/", to.string + "/")
    var moved = 0
    for a in after where a["path"]!.stringValue!.hasPrefix(toPrefix) {
        let old = fromPrefix + a["path"]!.stringValue!.dropFirst(toPrefix.count)
        #expect(a["id"]?.stringValue == before[old])
        #expect(a["isFavorite"]?.boolValue == true)
        moved += 1
    }
    #expect(moved == 200)
    let folder = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["id"] == album["id"] })
    #expect(folder["title"]?.stringValue == String(decoding: to.lastComponent, as: UTF8.self))
    #expect(folder["path"]?.stringValue == to.string)
    #expect(folder["assetCount"]?.intValue == 200)
    let favorites = try daemon.call("smartAlbums.fetch")["smartAlbums"]?.arrayValue?.first { $0["id"]?.stringValue == "s_favorites" }
    #expect(favorites?["assetCount"]?.intValue == 200)
}

@Suite("Moves and deletions while photod was down, end to end", .serialized)
struct MovesEndToEndTests {
    @Test("A folder of 200 favorited photos moved while stopped: same ids, still favorites, the album follows, nothing re-read")
    func folderMovedWhileDown() throws {
        let lib = try TemporaryDirectory("moves-lib")
        defer { lib.remove() }
        for i in 0..<200 { try lib.write("2019/trip/IMG_\(i).jpg", Library.jpeg(date: "2019:07:0\(1 + i % 9) 10:00:00")) }
        try lib.write("2019/other/a.jpg", Library.jpeg(date: "2019:01:01 10:00:00"))
        let state = try TemporaryDirectory("moves")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let before = Dictionary(uniqueKeysWithValues: try daemon.allAssets().map { ($0["path"]!.stringValue!, $0["id"]!.stringValue!) })
        let album = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "trip" })
        #expect(daemon.stop() == 0)
        try markFavorites(database: daemon.database, under: lib("2019/trip"))

        try lib.makeDirectory("best")
        #expect(rename(lib("2019/trip").string, lib("best/Iceland").string) == 0)
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let status = try daemon.waitForIdle()
        #expect(status["metadataReads"]?.intValue == 0)
        #expect(status["lastScan"]?["movedDirectories"]?.intValue == 1)
        #expect(status["lastScan"]?["removedDirectories"]?.intValue == 0, "a move counted once: \(status["lastScan"] ?? .null)")
        try expectFolderMoved(daemon, before: before, album: album, from: lib("2019/trip"), to: lib("best/Iceland"), total: 201)
        #expect(daemon.stop() == 0)
    }

    /// ext4 and XFS hand a freed directory inode to the next mkdir: a folder deleted while
    /// photod was down and a new one made after it look, by inode alone, like one folder moved.
    @Test("A folder deleted while stopped and a new one made (its inode reused): the new folder and photo are new, the old ones in Recently Deleted")
    func deletedFolderInodeReusedWhileDown() throws {
        let lib = try TemporaryDirectory("reuse-lib")
        defer { lib.remove() }
        for i in 0..<3 { try lib.write("old/IMG_\(i).jpg", Library.jpeg(date: "2019:07:0\(1 + i) 10:00:00", width: 100 + i)) }
        try lib.write("keep/k.jpg", Library.jpeg(date: "2019:01:01 10:00:00"))
        let state = try TemporaryDirectory("reuse")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let before = Dictionary(uniqueKeysWithValues: try daemon.allAssets().map { ($0["path"]!.stringValue!, $0["id"]!.stringValue!) })
        let oldAlbum = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "old" })
        #expect(daemon.stop() == 0)
        try markFavorites(database: daemon.database, under: lib("old"))

        for i in 0..<3 { #expect(unlink(lib("old/IMG_\(i).jpg").string) == 0) }
        #expect(rmdir(lib("old").string) == 0)
        #expect(mkdir(lib("new").string, 0o755) == 0)
        try lib.write("new/IMG_0.jpg", Library.jpeg(date: "2024:01:01 10:00:00", width: 321))
        // Whether the file system reused the inode or not (it does when the deletion has been
        // committed to its journal), the index is made to say it did.
        let newInode = try FileStat.of(lib("new")).inode
        var o = Database.Options()
        o.exclusive = false
        let db = try Database(path: daemon.database.string, options: o)
        _ = try db.write { w in
            try w.connection.execute("UPDATE directories SET inode = \(Int64(bitPattern: newInode)) WHERE path = CAST('\(lib("old").string)' AS BLOB)")
        }
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let status = try daemon.waitForIdle()
        #expect(status["lastScan"]?["movedDirectories"]?.intValue == 0)
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 3, "\(status)")
        let new = try daemon.allAssets().first { $0["path"]?.stringValue == lib("new/IMG_0.jpg").string }
        #expect(new?["id"]?.stringValue != before[lib("old/IMG_0.jpg").string], "the new photo took over a deleted one's asset")
        #expect(new?["isFavorite"]?.boolValue == false, "the new photo inherited a deleted one's favorite")
        let newAlbum = try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "new" }
        #expect(newAlbum?["id"] != oldAlbum["id"], "the new folder took over the deleted folder's album")
        #expect(daemon.stop() == 0)
    }

    @Test("nested: a parent holding only a subfolder moved, and the subfolder renamed within it")
    func nestedMoveWhileDown() throws {
        let lib = try TemporaryDirectory("mv-nested-lib")
        defer { lib.remove() }
        for i in 0..<3 { try lib.write("trips/2019/IMG_\(i).jpg", Library.jpeg(date: "2019:07:0\(1 + i) 10:00:00", width: 100 + i)) }
        try lib.write("keep/k.jpg", Library.jpeg(date: "2019:01:01 10:00:00"))
        let state = try TemporaryDirectory("mv-nested")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let albums = try daemon.call("albums.fetch")["albums"]?.arrayValue ?? []
        print("albums before: \(albums.map { "\($0["title"]?.stringValue ?? "?")=\($0["id"]?.stringValue ?? "?")" })")
        #expect(daemon.stop() == 0)
        #expect(rename(lib("trips").string, lib("albums").string) == 0)
        #expect(rename(lib("albums/2019").string, lib("albums/y2019").string) == 0)
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let status = try daemon.waitForIdle()
        #expect(status["lastScan"]?["movedDirectories"]?.intValue == 2, "\(status["lastScan"] ?? .null)")
        let after = try daemon.call("albums.fetch")["albums"]?.arrayValue ?? []
        print("albums after: \(after.map { "\($0["title"]?.stringValue ?? "?")=\($0["id"]?.stringValue ?? "?")" })")
        if let trips = albums.first(where: { $0["title"]?.stringValue == "trips" }) {
            #expect(after.contains { $0["id"] == trips["id"] && $0["title"]?.stringValue == "albums" }, "the parent's album was not moved")
        }
        #expect(daemon.stop() == 0)
    }

    /// A folder moved while down and every file in it renamed (a batch renamer).
    @Test("a folder moved while down whose files were all renamed keeps its album")
    func renamedFilesWhileDown() throws {
        let lib = try TemporaryDirectory("mv-ren-lib")
        defer { lib.remove() }
        for i in 0..<3 { try lib.write("trip/IMG_\(i).jpg", Library.jpeg(date: "2019:07:0\(1 + i) 10:00:00", width: 100 + i)) }
        try lib.write("keep/k.jpg", Library.jpeg(date: "2019:01:01 10:00:00"))
        let state = try TemporaryDirectory("mv-ren")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let album = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "trip" })
        #expect(daemon.stop() == 0)
        #expect(rename(lib("trip").string, lib("Iceland").string) == 0)
        for i in 0..<3 { #expect(rename(lib("Iceland/IMG_\(i).jpg").string, lib("Iceland/2019-07-0\(1 + i).jpg").string) == 0) }
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let status = try daemon.waitForIdle()
        #expect(status["lastScan"]?["movedDirectories"]?.intValue == 1, "\(status["lastScan"] ?? .null)")
        let after = try daemon.call("albums.fetch")["albums"]?.arrayValue ?? []
        #expect(after.contains { $0["id"] == album["id"] && $0["title"]?.stringValue == "Iceland" }, "\(after)")
        #expect(daemon.stop() == 0)
    }

    @Test("Files moved one by one while stopped keep their ids; deleted ones wait in Recently Deleted and come back")
    func filesMovedAndDeletedWhileDown() throws {
        let lib = try TemporaryDirectory("del-lib")
        defer { lib.remove() }
        for i in 0..<10 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2020:02:0\(1 + i % 9) 12:00:00", width: 100 + i)) }
        try lib.makeDirectory("b")
        let state = try TemporaryDirectory("del")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let ids = Dictionary(uniqueKeysWithValues: try daemon.allAssets().map { ($0["path"]!.stringValue!, $0["id"]!.stringValue!) })
        #expect(daemon.stop() == 0)

        // p0..p2 move to b/, p3..p4 are deleted (kept aside).
        for i in 0..<3 { #expect(rename(lib("a/p\(i).jpg").string, lib("b/q\(i).jpg").string) == 0) }
        let aside = try TemporaryDirectory("del-aside")
        defer { aside.remove() }
        for i in 3..<5 { #expect(rename(lib("a/p\(i).jpg").string, aside("p\(i).jpg").string) == 0) }
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        var status = try daemon.waitForIdle()
        #expect(status["metadataReads"]?.intValue == 0)
        #expect(status["lastScan"]?["movedFiles"]?.intValue == 3)
        #expect(status["lastScan"]?["removedFiles"]?.intValue == 2, "the moves counted once, the two deletions as removals: \(status["lastScan"] ?? .null)")
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 2)
        let now = Dictionary(uniqueKeysWithValues: try daemon.allAssets().map { ($0["path"]!.stringValue!, $0["id"]!.stringValue!) })
        for i in 0..<3 { #expect(now[lib("b/q\(i).jpg").string] == ids[lib("a/p\(i).jpg").string]) }
        let trash = try daemon.call("collections.assets", ["id": "s_recentlyDeleted"])["assets"]?.arrayValue ?? []
        #expect(Set(trash.compactMap { $0["id"]?.stringValue }) == Set((3..<5).compactMap { ids[lib("a/p\($0).jpg").string] }))
        #expect(daemon.stop() == 0)

        // They come back (to another folder): same ids, out of Recently Deleted, nothing read.
        for i in 3..<5 { #expect(rename(aside("p\(i).jpg").string, lib("b/p\(i).jpg").string) == 0) }
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        status = try daemon.waitForIdle()
        #expect(status["metadataReads"]?.intValue == 0)
        #expect(status["lastScan"]?["restoredFiles"]?.intValue == 2)
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 0)
        let back = Dictionary(uniqueKeysWithValues: try daemon.allAssets().map { ($0["path"]!.stringValue!, $0["id"]!.stringValue!) })
        for i in 3..<5 { #expect(back[lib("b/p\(i).jpg").string] == ids[lib("a/p\(i).jpg").string]) }
        #expect(back.count == 10)
        #expect(daemon.stop() == 0)
    }

    @Test("A file copied elsewhere and its original deleted while stopped (a move across file systems) keeps its id")
    func copiedAcrossWhileDown() throws {
        let lib = try TemporaryDirectory("copy-lib")
        defer { lib.remove() }
        for i in 0..<4 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2020:03:0\(1 + i) 12:00:00", width: 100 + i)) }
        let state = try TemporaryDirectory("copy")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        #expect(daemon.stop() == 0)
        try markFavorites(database: daemon.database, under: lib("a"))

        // cp + rm (what mv does between file systems): new inodes, same content.
        try lib.makeDirectory("z")
        for i in 0..<2 {
            try shell("cp", [lib("a/p\(i).jpg").string, lib("z/p\(i).jpg").string])
            #expect(unlink(lib("a/p\(i).jpg").string) == 0)
        }
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let status = try daemon.waitForIdle()
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 0)
        #expect(status["counts"]?["assets"]?.intValue == 4)
        let assets = try daemon.allAssets()
        for i in 0..<2 {
            let a = assets.first { $0["path"]?.stringValue == lib("z/p\(i).jpg").string }
            #expect(a?["id"]?.stringValue == ids[lib("a/p\(i).jpg").string])
            #expect(a?["isFavorite"]?.boolValue == true)
        }
        #expect(daemon.stop() == 0)
    }
}
