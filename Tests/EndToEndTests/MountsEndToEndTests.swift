import Foundation
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real mounts for the tests: bind mounts and ext4 images on loop devices. Both need root with
/// `CAP_SYS_ADMIN` (CI has it); without, the tests that use them are skipped.
enum Mounts {
    /// Whether a bind mount can be made here (tried once).
    static let canBind: Bool = {
        guard getuid() == 0, let dir = try? TemporaryDirectory("mount-probe") else { return false }
        defer { dir.remove() }
        guard (try? dir.makeDirectory("a")) != nil, (try? dir.makeDirectory("b")) != nil,
              (try? bind(dir("a"), at: dir("b"))) != nil else { return false }
        return (try? unmount(dir("b"))) != nil
    }()

    /// Whether an ext4 image can be made and mounted on a loop device (tried once).
    static let canLoop: Bool = {
        guard canBind, FileManager.default.fileExists(atPath: "/dev/loop-control"),
              let dir = try? TemporaryDirectory("loop-probe") else { return false }
        defer { dir.remove() }
        guard (try? makeDisk(dir("disk.img"))) != nil, (try? dir.makeDirectory("m")) != nil,
              (try? mountDisk(dir("disk.img"), at: dir("m"))) != nil else { return false }
        return (try? unmount(dir("m"))) != nil
    }()

    static func run(_ tool: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [tool] + arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        if p.terminationStatus != 0 { throw HarnessError("\(tool) \(arguments.joined(separator: " ")) failed: \(p.terminationStatus)") }
    }

    static func bind(_ source: PathBytes, at target: PathBytes) throws { try run("mount", ["--bind", source.string, target.string]) }

    /// A fresh 16 MB ext4 image.
    static func makeDisk(_ image: PathBytes) throws {
        try run("truncate", ["-s", "16M", image.string])
        try run("mkfs.ext4", ["-q", "-F", image.string])
    }

    static func mountDisk(_ image: PathBytes, at target: PathBytes) throws { try run("mount", ["-o", "loop", image.string, target.string]) }

    static func unmount(_ target: PathBytes) throws { try run("umount", [target.string]) }

    /// Unmounts whatever is still mounted at or below `path` (a failed test's leftovers).
    static func unmountAll(below path: PathBytes) {
        let points = ((try? MountTable.read())?.entries.map(\.mountPoint) ?? []).filter { $0.isWithin(path) }
        for point in points.sorted().reversed() { try? run("umount", ["-l", point.string]) }
    }
}

/// How the library's file system goes away and comes back in a test.
enum MountKind: String, CustomTestStringConvertible, Sendable {
    /// `mount --bind` of a directory: an unmount no inotify event reports.
    case bind
    /// An ext4 image on a loop device: the kernel sends `IN_UNMOUNT`.
    case disk

    var testDescription: String { rawValue }
}

/// A directory tree that lives on its own mount: a bind mount of `source`, or an ext4 image.
struct MountedTree {
    let kind: MountKind
    let work: TemporaryDirectory
    let target: PathBytes
    var source: PathBytes { work("source") }
    var image: PathBytes { work("disk.img") }

    /// Fills the tree with `files` (relative path → bytes) and mounts it at `target`.
    init(_ kind: MountKind, at target: PathBytes, files: [(String, [UInt8])]) throws {
        self.kind = kind
        self.target = target
        work = try TemporaryDirectory("mounted-\(kind.rawValue)")
        try work.makeDirectory("source")
        if kind == .disk { try Mounts.makeDisk(image) }
        try Directory.makePath(target)
        try mount()
        let top = TemporaryDirectory(existing: target)
        for (path, bytes) in files { _ = try top.write(path, bytes) }
    }

    func mount() throws {
        if kind == .bind { try Mounts.bind(source, at: target) } else { try Mounts.mountDisk(image, at: target) }
    }

    func unmount() throws { try Mounts.unmount(target) }

    func remove() {
        Mounts.unmountAll(below: target)
        work.remove()
    }
}

extension DaemonProcess {
    /// Fails when any change set after `token` deleted an asset or touched Recently Deleted.
    func expectNothingDeleted(since token: Int, _ comment: Comment? = nil) throws {
        let sets = try #require(try call("changes.since", ["since": .int(Int64(token))])["changes"]?.arrayValue)
        for set in sets {
            let deleted = set["assets"]?["deleted"]?.arrayValue ?? []
            #expect(deleted.isEmpty, "assets deleted: \(set) \(comment.map { "(\($0))" } ?? "")")
            let touched = ["inserted", "updated", "deleted"].flatMap { set["collections"]?[$0]?.arrayValue ?? [] }.compactMap(\.stringValue)
            #expect(!touched.contains("s_recentlyDeleted"), "an asset went to Recently Deleted: \(set) \(comment.map { "(\($0))" } ?? "")")
        }
        let counts = try call("library.status")["counts"]
        #expect(counts?["recentlyDeleted"]?.intValue == 0, "\(comment.map { "\($0)" } ?? "")")
    }

    /// `library.rescan` of `path` (nil: the library); the error, if it answered with one.
    @discardableResult
    func rescan(_ path: PathBytes?) throws -> RPCError? {
        do {
            _ = try call("library.rescan", path.map { ["path": .string($0.string)] } ?? [:])
            return nil
        } catch ClientError.rpc(let error) {
            return error
        }
    }
}

/// Nothing is ever mass-deleted because a disk went away: roots and mount points below them on
/// bind mounts and ext4 disks, unmounted and remounted while photod runs, with rescans, polls
/// and restarts in between (issue 13, item 1).
@Suite("Mounts, end to end", .serialized)
struct MountsEndToEndTests {
    static func photos(_ prefix: String, count: Int) -> [(String, [UInt8])] {
        (0..<count).map { i in
            ("\(prefix)\(i % 2 == 0 ? "trip" : "home")/IMG_\(i).jpg",
             Library.jpeg(date: String(format: "2019:06:%02d 10:00:00", 1 + i), width: 200 + i))
        }
    }

    @Test("A root on a bind mount, unmounted: rescans of it, of a folder in it and of the library, polls and a restart remove nothing; back, it keeps its ids and favorites",
          .enabled(if: Mounts.canBind), arguments: [true, false])
    func rootOnBindMount(mountTableWatched: Bool) throws { try rootUnmounted(.bind, mountTableWatched: mountTableWatched) }

    @Test("A root on an ext4 disk, unmounted: the same", .enabled(if: Mounts.canLoop), arguments: [true, false])
    func rootOnDisk(mountTableWatched: Bool) throws { try rootUnmounted(.disk, mountTableWatched: mountTableWatched) }

    func rootUnmounted(_ kind: MountKind, mountTableWatched: Bool) throws {
        let place = try TemporaryDirectory("mounts-root")
        defer { place.remove() }
        let root = place("lib")
        let tree = try MountedTree(kind, at: root, files: Self.photos("", count: 6))
        defer { tree.remove() }
        let state = try TemporaryDirectory("mounts-root-state")
        defer { state.remove() }
        let environment = mountTableWatched ? [:] : ["PHOTOD_TEST_HOOKS": "1", "PHOTOD_TEST_MOUNT_TABLE": "unwatched"]
        // One watch: the folders are polled every second, so polls run while it is unmounted.
        let arguments = ["--max-watches", "1", "--poll-interval", "1"]
        var daemon = try DaemonProcess(libraries: [root], state: state, arguments: arguments, environment: environment)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        #expect(ids.count == 6)
        let favorite = try #require(ids[root.appending("trip/IMG_0.jpg").string])
        _ = try daemon.call("assets.setFavorite", ["ids": [.string(favorite)], "favorite": true])
        let token = try daemon.currentToken()

        try tree.unmount()
        // Noticed by the mount table's change, or (not watched) by the next poll of the folders
        // beyond the watch budget: nothing else runs meanwhile.
        let polls = try daemon.call("library.status")["watcher"]?["polls"]?.intValue ?? 0
        var status = try daemon.waitFor("the root unavailable", timeout: .seconds(15)) {
            $0["roots"]?[0]?["state"]?.stringValue == "unavailable"
        }
        #expect(status["roots"]?[0]?["reason"]?.stringValue?.contains("not mounted") == true, "\(status)")
        if !mountTableWatched && kind == .bind { #expect((status["watcher"]?["polls"]?.intValue ?? 0) > polls, "found by a poll") }
        try daemon.expectNothingDeleted(since: token, "unmounted")
        // A rescan of the path, of a folder in it, of the whole library.
        let refused = try #require(try daemon.rescan(root))
        #expect(refused.errorCode == .unavailable && (refused.detail ?? "").contains("not mounted"), "\(refused)")
        #expect(try daemon.rescan(root.appending("trip"))?.errorCode == .unavailable)
        #expect(try daemon.rescan(nil) == nil)
        status = try daemon.call("library.status")
        #expect(status["roots"]?[0]?["state"]?.stringValue == "unavailable", "\(status)")
        #expect(try daemon.allAssets().count == 6)
        #expect(try daemon.allAssets().allSatisfy { $0["isAvailable"]?.boolValue == false })
        try daemon.expectNothingDeleted(since: token, "unmounted")

        // Restarted while unmounted: still unavailable, nothing removed.
        #expect(daemon.stop() == 0)
        daemon = try DaemonProcess(libraries: [root], state: state, arguments: arguments, environment: environment)
        status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "unavailable", "\(status)")
        try daemon.expectNothingDeleted(since: token, "restarted")

        // Back: noticed at once with the mount table watched, within the 2 s recheck without.
        try tree.mount()
        status = try daemon.waitFor("the root back", timeout: .seconds(15)) {
            $0["roots"]?[0]?["state"]?.stringValue == "available" && $0["state"]?.stringValue == "idle"
        }
        #expect(status["metadataReads"]?.intValue == 0, "nothing read again")
        #expect(try daemon.idsByPath() == ids)
        let asset = try daemon.allAssets().first { $0["id"]?.stringValue == favorite }
        #expect(asset?["isFavorite"]?.boolValue == true)
        try daemon.expectNothingDeleted(since: token, "back")
        // Watched and polled again: a new photo is found.
        _ = try TemporaryDirectory(existing: root).write("home/new.jpg", Library.jpeg(date: "2019:07:01 10:00:00"))
        try daemon.waitForAssets(7, timeout: .seconds(20))
        #expect(daemon.stop() == 0)
    }

    @Test("A bind mount below a root, unmounted: its assets are unavailable, not deleted; the rest of the root lives on; back, the same ids",
          .enabled(if: Mounts.canBind), arguments: [true, false])
    func nestedBindMount(mountTableWatched: Bool) throws { try nestedMountUnmounted(.bind, mountTableWatched: mountTableWatched) }

    @Test("A second disk below a root, unmounted: the same", .enabled(if: Mounts.canLoop), arguments: [true, false])
    func nestedDisk(mountTableWatched: Bool) throws { try nestedMountUnmounted(.disk, mountTableWatched: mountTableWatched) }

    func nestedMountUnmounted(_ kind: MountKind, mountTableWatched: Bool) throws {
        let lib = try TemporaryDirectory("mounts-nested")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("main/", count: 2) { try lib.write(path, bytes) }
        let usb = lib("usb")
        let tree = try MountedTree(kind, at: usb, files: Self.photos("", count: 4))
        defer { tree.remove() }
        let state = try TemporaryDirectory("mounts-nested-state")
        defer { state.remove() }
        let environment = mountTableWatched ? [:] : ["PHOTOD_TEST_HOOKS": "1", "PHOTOD_TEST_MOUNT_TABLE": "unwatched"]
        let arguments = ["--max-watches", "2", "--poll-interval", "1"]
        var daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments, environment: environment)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        #expect(ids.count == 6)
        let token = try daemon.currentToken()

        try tree.unmount()
        // The mount point now shows the directory beneath, with a stranger's photo in it.
        try lib.write("usb/stray.jpg", Library.jpeg(date: "2001:01:01 10:00:00"))
        #expect(try daemon.rescan(usb)?.errorCode == .unavailable)
        #expect(try daemon.rescan(usb.appending("trip"))?.errorCode == .unavailable)
        #expect(try daemon.rescan(lib.path) == nil)
        #expect(try daemon.rescan(nil) == nil)
        var status = try daemon.waitFor("the mount unavailable") {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).contains { $0["path"]?.stringValue == usb.string }
        }
        #expect(status["roots"]?[0]?["state"]?.stringValue == "available")
        let assets = try daemon.allAssets()
        #expect(assets.count == 6, "the stray photo is not indexed, nothing is removed")
        for a in assets {
            let path = try #require(a["path"]?.stringValue)
            #expect(a["isAvailable"]?.boolValue == !PathBytes(path).isWithin(usb), "\(path)")
        }
        // The rest of the root is still watched or polled.
        try lib.write("main/home/new.jpg", Library.jpeg(date: "2019:08:01 10:00:00"))
        try daemon.waitForAssets(7, timeout: .seconds(20))
        try daemon.expectNothingDeleted(since: token, "unmounted")

        #expect(daemon.stop() == 0)
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments, environment: environment)
        status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["unavailableMounts"]?.arrayValue?.count == 1, "\(status)")
        try daemon.expectNothingDeleted(since: token, "restarted")

        try tree.mount()
        status = try daemon.waitFor("the mount back", timeout: .seconds(15)) {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).isEmpty && $0["state"]?.stringValue == "idle"
        }
        let back = try daemon.idsByPath()
        for (path, id) in ids { #expect(back[path] == id, "\(path)") }
        #expect(back[usb.appending("stray.jpg").string] == nil)
        #expect(try daemon.allAssets().allSatisfy { $0["isAvailable"]?.boolValue == true })
        try daemon.expectNothingDeleted(since: token, "back")
        // Its own watches (or polls) are in place again.
        _ = try TemporaryDirectory(existing: usb).write("home/new.jpg", Library.jpeg(date: "2019:09:01 10:00:00"))
        try daemon.waitForAssets(8, timeout: .seconds(20))
        #expect(daemon.stop() == 0)
    }

    @Test("A disk mounted below a root while photod runs is indexed; unmounted and mounted again at once, it is still watched",
          .enabled(if: Mounts.canLoop))
    func mountedWhileRunning() throws {
        let lib = try TemporaryDirectory("mounts-late")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("main/", count: 2) { try lib.write(path, bytes) }
        try lib.makeDirectory("usb")
        let state = try TemporaryDirectory("mounts-late-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let tree = try MountedTree(.disk, at: lib("usb"), files: Self.photos("", count: 3))
        defer { tree.remove() }
        // The watch on the mount point's own directory sees nothing of the new file system.
        try daemon.waitForAssets(5, timeout: .seconds(15))
        let ids = try daemon.idsByPath()
        let token = try daemon.currentToken()
        try tree.unmount()
        try tree.mount()
        _ = try TemporaryDirectory(existing: lib("usb")).write("trip/late.jpg", Library.jpeg(date: "2019:10:01 10:00:00"))
        try daemon.waitForAssets(6, timeout: .seconds(15))
        let now = try daemon.idsByPath()
        for (path, id) in ids { #expect(now[path] == id) }
        try daemon.expectNothingDeleted(since: token)
        #expect(daemon.stop() == 0)
    }

    @Test("The folder above a mount point renamed while mounted: the mount's record follows; unmounted afterwards, it is kept",
          .enabled(if: Mounts.canBind))
    func folderAboveMountRenamed() throws {
        let lib = try TemporaryDirectory("mounts-rename")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("main/", count: 2) { try lib.write(path, bytes) }
        let tree = try MountedTree(.bind, at: lib("disks/usb"), files: Self.photos("", count: 2))
        defer { tree.remove() }
        let state = try TemporaryDirectory("mounts-rename-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        let token = try daemon.currentToken()
        #expect(rename(lib("disks").string, lib("drives").string) == 0)
        try daemon.waitFor("the move") { _ in try daemon.idsByPath()[lib("drives/usb/trip/IMG_0.jpg").string] != nil }
        var status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["unavailableMounts"]?.arrayValue?.count == 0, "\(status)")
        #expect(try daemon.idsByPath()[lib("drives/usb/trip/IMG_0.jpg").string] == ids[lib("disks/usb/trip/IMG_0.jpg").string])
        try Mounts.unmount(lib("drives/usb"))
        #expect(try daemon.rescan(lib.path) == nil)
        status = try daemon.waitFor("the mount unavailable") {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).map { $0["path"]?.stringValue } == [lib("drives/usb").string]
        }
        #expect(status["counts"]?["assets"]?.intValue == 4)
        try daemon.expectNothingDeleted(since: token)
        #expect(daemon.stop() == 0)
    }

    @Test("The library copied to a new disk: unavailable until adopted; adopted, ids, favorites and albums carry over, a file moved on the new disk is matched by content",
          .enabled(if: Mounts.canLoop))
    func adoptNewDisk() throws {
        let place = try TemporaryDirectory("mounts-adopt")
        defer { place.remove() }
        let root = place("lib")
        let old = try MountedTree(.disk, at: root, files: Self.photos("", count: 6) + [("gone/IMG_9.jpg", Library.jpeg(date: "2019:05:05 10:00:00"))])
        defer { old.remove() }
        let state = try TemporaryDirectory("mounts-adopt-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [root], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        let favorite = try #require(ids[root.appending("home/IMG_1.jpg").string])
        _ = try daemon.call("assets.setFavorite", ["ids": [.string(favorite)], "favorite": true])
        let albums = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue)
        let trip = try #require(albums.first { $0["title"]?.stringValue == "trip" }?["id"]?.stringValue)
        let user = try #require(try daemon.call("albums.create", ["title": "Best"])["id"]?.stringValue)
        _ = try daemon.call("albums.addAssets", ["id": .string(user), "ids": [.string(favorite)]])

        // A new disk with a copy (new inodes, another file system), one file moved elsewhere on
        // it, one left behind.
        let copy = try TemporaryDirectory("mounts-adopt-copy")
        defer { copy.remove() }
        try shell("cp", ["-a", root.string + "/.", copy.path.string])
        try shell("mkdir", [copy("elsewhere").string])
        try shell("mv", [copy("home/IMG_1.jpg").string, copy("elsewhere/IMG_1.jpg").string])
        try shell("rm", ["-r", copy("gone").string])
        try old.unmount()
        let new = try MountedTree(.disk, at: root, files: [])
        defer { new.remove() }
        try shell("cp", ["-a", copy.path.string + "/.", root.string])
        let token = try daemon.currentToken()
        #expect(try daemon.rescan(root)?.errorCode == .unavailable)
        let status = try daemon.waitFor("another file system") {
            $0["roots"]?[0]?["reason"]?.stringValue?.contains("another file system is mounted here") == true
        }
        #expect(status["roots"]?[0]?["reason"]?.stringValue?.contains("photoctl adopt \(root)") == true)
        try daemon.expectNothingDeleted(since: token, "before adopting")

        let cli = try run("photoctl", ["--socket", daemon.socket.string, "adopt", root.string])
        #expect(cli.status == 0, "\(cli)")
        #expect(cli.stdout.contains("adopted \(root)"), "\(cli.stdout)")
        let after = try daemon.waitForIdle()
        #expect(after["roots"]?[0]?["state"]?.stringValue == "available")
        let now = try daemon.idsByPath()
        for (path, id) in ids where !path.contains("/gone/") && !path.hasSuffix("home/IMG_1.jpg") { #expect(now[path] == id, "\(path)") }
        #expect(now[root.appending("elsewhere/IMG_1.jpg").string] == favorite, "matched by content")
        let asset = try daemon.allAssets().first { $0["id"]?.stringValue == favorite }
        #expect(asset?["isFavorite"]?.boolValue == true)
        let members = try daemon.call("collections.assets", ["id": .string(user)])["assets"]?.arrayValue ?? []
        #expect(members.compactMap { $0["id"]?.stringValue } == [favorite])
        let tripNow = try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "trip" }
        #expect(tripNow?["id"]?.stringValue == trip)
        // The one file the new disk lacks is in Recently Deleted, with its id.
        #expect(after["counts"]?["recentlyDeleted"]?.intValue == 1)
        // Watched on the new disk.
        _ = try TemporaryDirectory(existing: root).write("home/new.jpg", Library.jpeg(date: "2019:07:01 10:00:00"))
        try daemon.waitForAssets(7, timeout: .seconds(15))
        #expect(daemon.stop() == 0)
    }

    @Test("A mount point that is gone with its disk is unavailable; adopting it lets its assets go to Recently Deleted",
          .enabled(if: Mounts.canBind))
    func mountPointRemoved() throws {
        let lib = try TemporaryDirectory("mounts-gone")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("main/", count: 2) { try lib.write(path, bytes) }
        let tree = try MountedTree(.bind, at: lib("usb"), files: Self.photos("", count: 2))
        defer { tree.remove() }
        let state = try TemporaryDirectory("mounts-gone-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let token = try daemon.currentToken()
        try tree.unmount()
        #expect(rmdir(lib("usb").string) == 0)
        #expect(try daemon.rescan(nil) == nil)
        let status = try daemon.waitFor("the mount unavailable") { ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).count == 1 }
        #expect(status["counts"]?["assets"]?.intValue == 4)
        try daemon.expectNothingDeleted(since: token)
        // Not a root, nor a mount point: refused.
        #expect(throws: ClientError.self) { try daemon.call("library.adopt", ["path": .string(lib("main").string)]) }
        _ = try daemon.call("library.adopt", ["path": .string(lib("usb").string)])
        let after = try daemon.waitForIdle()
        #expect(after["counts"]?["assets"]?.intValue == 2)
        #expect(after["counts"]?["recentlyDeleted"]?.intValue == 2)
        #expect(after["roots"]?[0]?["unavailableMounts"]?.arrayValue?.count == 0)
        #expect(daemon.stop() == 0)
    }
}
