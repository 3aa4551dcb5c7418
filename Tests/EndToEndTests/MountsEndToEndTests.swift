import Foundation
import PhotoClient
import PhotoModel
@testable import PhotoStore
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real mounts for the tests: bind mounts, and ext4, FAT and exFAT images on loop devices. They
/// need root with `CAP_SYS_ADMIN` (CI has it); without, the tests that use them are skipped.
enum Mounts {
    /// Whether a bind mount can be made here (tried once).
    static let canBind: Bool = {
        guard getuid() == 0, let dir = try? TemporaryDirectory("mount-probe") else { return false }
        defer { dir.remove() }
        guard (try? dir.makeDirectory("a")) != nil, (try? dir.makeDirectory("b")) != nil,
              (try? bind(dir("a"), at: dir("b"))) != nil else { return false }
        return (try? unmount(dir("b"))) != nil
    }()

    /// Whether an image of this kind can be made and mounted on a loop device (tried once each).
    static let canLoop = canMount(.disk)
    static let canFAT = canMount(.fat("1234ABCD"))
    static let canExFAT = canMount(.exfat)
    /// Whether a FUSE mount (bindfs) can be made (tried once).
    static let canFUSE: Bool = {
        guard canBind, FileManager.default.fileExists(atPath: "/usr/bin/bindfs"),
              let dir = try? TemporaryDirectory("fuse-probe") else { return false }
        defer { dir.remove() }
        guard (try? dir.makeDirectory("a")) != nil, (try? dir.makeDirectory("b")) != nil,
              (try? runDetached("bindfs", [dir("a").string, dir("b").string])) != nil else { return false }
        return (try? unmount(dir("b"))) != nil
    }()

    private static func canMount(_ kind: MountKind) -> Bool {
        guard canBind, FileManager.default.fileExists(atPath: "/dev/loop-control"),
              let dir = try? TemporaryDirectory("loop-probe") else { return false }
        defer { dir.remove() }
        guard (try? makeImage(dir("disk.img"), kind)) != nil, (try? dir.makeDirectory("m")) != nil,
              (try? mountImage(dir("disk.img"), at: dir("m"))) != nil else { return false }
        return (try? unmount(dir("m"))) != nil
    }

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

    /// Runs a tool that leaves a daemon behind (a FUSE file system): through Python, which
    /// closes every other descriptor in the child, so that the daemon does not hold the one by
    /// which `Process` learns that its child has ended.
    static func runDetached(_ tool: String, _ arguments: [String]) throws {
        try run("python3", ["-c", "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:], close_fds=True))", tool] + arguments)
    }

    static func bind(_ source: PathBytes, at target: PathBytes) throws { try run("mount", ["--bind", source.string, target.string]) }

    /// A fresh 16 MB image of the kind's file system.
    static func makeImage(_ image: PathBytes, _ kind: MountKind) throws {
        try run("truncate", ["-s", "16M", image.string])
        switch kind {
        case .bind, .fuse: break
        case .disk: try run("mkfs.ext4", ["-q", "-F", image.string])
        case .fat(let serial): try run("mkfs.vfat", ["-i", serial, image.string])
        case .exfat: try run("mkfs.exfat", [image.string])
        }
    }

    static func mountImage(_ image: PathBytes, at target: PathBytes) throws { try run("mount", ["-o", "loop", image.string, target.string]) }

    static func unmount(_ target: PathBytes, lazily: Bool = false) throws { try run("umount", (lazily ? ["-l"] : []) + [target.string]) }

    /// Unmounts whatever is still mounted at or below `path` (a failed test's leftovers).
    static func unmountAll(below path: PathBytes) {
        let points = ((try? MountTable.read())?.entries.map(\.mountPoint) ?? []).filter { $0.isWithin(path) }
        for point in points.sorted().reversed() { try? run("umount", ["-l", point.string]) }
    }
}

/// How the library's file system goes away and comes back in a test.
enum MountKind: CustomTestStringConvertible, Sendable, Equatable {
    /// `mount --bind` of a directory: an unmount no inotify event reports.
    case bind
    /// An ext4 image on a loop device: the kernel sends `IN_UNMOUNT`.
    case disk
    /// A FAT image with this volume serial (8 hex digits): its `f_fsid` is the loop device's number.
    case fat(String)
    /// An exFAT image: the same, and no serial photod can read here (no udev).
    case exfat
    /// A FUSE mount of `source` (bindfs): `f_fsid` 0, told apart by its source; polled.
    case fuse

    var testDescription: String {
        switch self {
        case .bind: "bind"
        case .disk: "ext4"
        case .fat(let serial): "vfat \(serial)"
        case .exfat: "exfat"
        case .fuse: "fuse"
        }
    }
}

/// A directory tree that lives on its own mount: a bind mount of `source`, or an image.
struct MountedTree {
    let kind: MountKind
    let work: TemporaryDirectory
    let target: PathBytes
    var source: PathBytes { work("source") }
    var image: PathBytes { work("disk.img") }

    /// Writes `beneath` into `target` itself (what shows when nothing is mounted there), then
    /// mounts the tree at `target` and fills it with `files` (relative path → bytes).
    init(_ kind: MountKind, at target: PathBytes, files: [(String, [UInt8])], beneath: [(String, [UInt8])] = []) throws {
        self.kind = kind
        self.target = target
        work = try TemporaryDirectory("mounted")
        try work.makeDirectory("source")
        if kind != .bind && kind != .fuse { try Mounts.makeImage(image, kind) }
        try Directory.makePath(target)
        for (path, bytes) in beneath { _ = try TemporaryDirectory(existing: target).write(path, bytes) }
        try mount()
        let top = TemporaryDirectory(existing: target)
        for (path, bytes) in files { _ = try top.write(path, bytes) }
    }

    func mount() throws {
        switch kind {
        case .bind: try Mounts.bind(source, at: target)
        case .fuse: try Mounts.runDetached("bindfs", ["-o", "nonempty", source.string, target.string])
        default: try Mounts.mountImage(image, at: target)
        }
    }

    func unmount(lazily: Bool = false) throws { try Mounts.unmount(target, lazily: lazily) }

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
        // What the mount point shows when nothing is mounted: a stale copy with a stranger's photo
        // (the old rule, "empty while the index holds files", would have taken it for the library).
        let tree = try MountedTree(kind, at: root, files: Self.photos("", count: 6),
                                   beneath: [("trip/stale.jpg", Library.jpeg(date: "2001:01:01 10:00:00"))])
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
        #expect(try daemon.allAssets().count == 6, "the stale photo is not indexed")
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

    @Test("The library copied to a new disk: unavailable until adopted; adopted, ids, favorites and albums carry over, a file moved on the new disk is matched by content, another photo under an old name is new",
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
        // Another photo under an old name: not the indexed one.
        try copy.write("trip/IMG_2.jpg", Library.jpeg(date: "2023:03:03 10:00:00", width: 777))
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
        #expect(cli.stdout.contains("adopted \(root)") && cli.stdout.contains("2 assets not found there"), "\(cli.stdout)")
        let after = try daemon.waitForIdle()
        #expect(after["roots"]?[0]?["state"]?.stringValue == "available")
        let now = try daemon.idsByPath()
        for (path, id) in ids where !path.contains("/gone/") && !path.hasSuffix("home/IMG_1.jpg") && !path.hasSuffix("trip/IMG_2.jpg") {
            #expect(now[path] == id, "\(path)")
        }
        let replaced = try #require(now[root.appending("trip/IMG_2.jpg").string])
        #expect(replaced != ids[root.appending("trip/IMG_2.jpg").string], "another photo under an old name is a new asset")
        #expect(now[root.appending("elsewhere/IMG_1.jpg").string] == favorite, "matched by content")
        let asset = try daemon.allAssets().first { $0["id"]?.stringValue == favorite }
        #expect(asset?["isFavorite"]?.boolValue == true)
        let members = try daemon.call("collections.assets", ["id": .string(user)])["assets"]?.arrayValue ?? []
        #expect(members.compactMap { $0["id"]?.stringValue } == [favorite])
        let tripNow = try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "trip" }
        #expect(tripNow?["id"]?.stringValue == trip)
        // The file the new disk lacks and the one it has another photo for are in Recently Deleted.
        #expect(after["counts"]?["recentlyDeleted"]?.intValue == 2)
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

    @Test("A disk mounted over an indexed folder that holds photos: unavailable, its photos kept; unmounted, they are back as they were",
          .enabled(if: Mounts.canLoop))
    func mountedOverIndexedFolder() throws {
        let lib = try TemporaryDirectory("mounts-over")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("2019/", count: 4) { try lib.write(path, bytes) }
        let state = try TemporaryDirectory("mounts-over-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        let token = try daemon.currentToken()
        let disk = try MountedTree(.disk, at: lib("2019/trip"), files: [("x.jpg", Library.jpeg(date: "2020:01:01 10:00:00"))])
        defer { disk.remove() }
        let status = try daemon.waitFor("the folder unavailable") {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).contains {
                $0["reason"]?.stringValue?.contains("mounted over the indexed folder") == true
            }
        }
        #expect(status["counts"]?["assets"]?.intValue == 4)
        #expect(try daemon.rescan(lib.path) == nil)
        try daemon.expectNothingDeleted(since: token, "mounted over")
        try disk.unmount()
        _ = try daemon.waitFor("the folder back", timeout: .seconds(15)) {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).isEmpty && $0["state"]?.stringValue == "idle"
        }
        #expect(try daemon.idsByPath() == ids)
        try daemon.expectNothingDeleted(since: token, "unmounted again")
        #expect(daemon.stop() == 0)
    }

    @Test("Another FAT card in the same reader (same device, another serial) is not the one indexed; the first one back is",
          .enabled(if: Mounts.canFAT))
    func anotherFATCard() throws { try anotherCard(.fat("1111AAAA"), .fat("2222BBBB")) }

    @Test("Another exFAT card (no serial to read): told apart by its files", .enabled(if: Mounts.canExFAT))
    func anotherExFATCard() throws { try anotherCard(.exfat, .exfat) }

    func anotherCard(_ first: MountKind, _ second: MountKind) throws {
        let lib = try TemporaryDirectory("mounts-card")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("main/", count: 2) { try lib.write(path, bytes) }
        let card = lib("card")
        // The same names on both cards, other photos (as two cameras' DCIM folders).
        let a = try MountedTree(first, at: card, files: Self.photos("DCIM/", count: 3))
        defer { a.remove() }
        let state = try TemporaryDirectory("mounts-card-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        let token = try daemon.currentToken()
        try a.unmount()
        let b = try MountedTree(second, at: card, files: (0..<3).map { i in
            ("DCIM/\(i % 2 == 0 ? "trip" : "home")/IMG_\(i).jpg", Library.jpeg(date: "2024:02:0\(1 + i) 10:00:00", width: 900 + i))
        })
        defer { b.remove() }
        #expect(try daemon.rescan(card)?.errorCode == .unavailable)
        let status = try daemon.waitFor("the other card unavailable") {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).contains { $0["path"]?.stringValue == card.string }
        }
        #expect(status["counts"]?["assets"]?.intValue == 5)
        try daemon.expectNothingDeleted(since: token, "another card")
        try b.unmount()
        try a.mount()
        _ = try daemon.waitFor("the first card back", timeout: .seconds(15)) {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).isEmpty && $0["state"]?.stringValue == "idle"
        }
        #expect(try daemon.idsByPath() == ids)
        try daemon.expectNothingDeleted(since: token, "back")
        #expect(daemon.stop() == 0)
    }

    @Test("A disk mounted below a dot-folder, or in a NAS's snapshot folder (#snapshot, excluded by default), is not the library; gone again, it leaves nothing behind",
          .enabled(if: Mounts.canLoop), arguments: [".snap", "#snapshot/GMT+01_2024.01.01"])
    func mountBelowDotFolder(_ folder: String) throws {
        let lib = try TemporaryDirectory("mounts-dot")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("main/", count: 2) { try lib.write(path, bytes) }
        let state = try TemporaryDirectory("mounts-dot-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let snap = try MountedTree(.disk, at: lib(folder), files: [("x.jpg", Library.jpeg(date: "2020:01:01 10:00:00"))])
        defer { snap.remove() }
        #expect(try daemon.rescan(nil) == nil)
        #expect(try daemon.waitForIdle()["counts"]?["assets"]?.intValue == 2)
        try snap.unmount()
        #expect(rmdir(lib(folder).string) == 0)
        #expect(try daemon.rescan(nil) == nil)
        let status = try daemon.waitForIdle()
        #expect(status["counts"]?["assets"]?.intValue == 2)
        #expect(status["roots"]?[0]?["unavailableMounts"]?.arrayValue?.count == 0, "\(status)")
        #expect(daemon.stop() == 0)
    }

    @Test("A folder above an unmounted mount point renamed, then deleted: the mount's assets follow the rename and are kept",
          .enabled(if: Mounts.canBind))
    func folderAboveUnmountedMount() throws {
        let lib = try TemporaryDirectory("mounts-above")
        defer { lib.remove() }
        for (path, bytes) in Self.photos("main/", count: 2) { try lib.write(path, bytes) }
        try lib.write("disks/readme.jpg", Library.jpeg(date: "2018:01:01 10:00:00"))
        let tree = try MountedTree(.bind, at: lib("disks/usb"), files: Self.photos("", count: 2))
        defer { tree.remove() }
        let state = try TemporaryDirectory("mounts-above-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let token = try daemon.currentToken()
        try tree.unmount()
        _ = try daemon.waitFor("the mount unavailable") { ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).count == 1 }
        #expect(rename(lib("disks").string, lib("drives").string) == 0)
        var status = try daemon.waitFor("the rename") {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).map { $0["path"]?.stringValue } == [lib("drives/usb").string]
                && $0["state"]?.stringValue == "idle"
        }
        let offline = try daemon.allAssets().filter { $0["isAvailable"]?.boolValue == false }.compactMap { $0["path"]?.stringValue }
        #expect(offline.count == 2 && offline.allSatisfy { PathBytes($0).isWithin(lib("drives/usb")) }, "\(offline)")
        try shell("rm", ["-r", lib("drives").string])
        status = try daemon.waitFor("the folder's photo gone") { $0["counts"]?["recentlyDeleted"]?.intValue == 1 }
        #expect(status["counts"]?["assets"]?.intValue == 4, "the mount's two kept")
        let sets = try #require(try daemon.call("changes.since", ["since": .int(Int64(token))])["changes"]?.arrayValue)
        let removed = sets.flatMap { $0["assets"]?["updated"]?.arrayValue ?? [] }.count
        #expect(removed >= 1)
        #expect(try daemon.allAssets().filter { PathBytes($0["path"]?.stringValue ?? "").isWithin(lib("drives/usb")) }.count == 2)
        #expect(daemon.stop() == 0)
    }

    @Test("A root given as a link to a disk that is mounted later: unavailable, then indexed when the disk comes",
          .enabled(if: Mounts.canLoop))
    func rootThroughLinkMountedLater() throws {
        let place = try TemporaryDirectory("mounts-link")
        defer { place.remove() }
        try place.makeDirectory("mnt")
        #expect(symlink(place("mnt/photos").string, place("link").string) == 0)
        let state = try TemporaryDirectory("mounts-link-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [place("link")], state: state)
        var status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "unavailable", "\(status)")
        #expect(status["roots"]?[0]?["path"]?.stringValue == place("mnt/photos").string, "the root is where the link leads")
        let disk = try MountedTree(.disk, at: place("mnt/photos"), files: Self.photos("", count: 2))
        defer { disk.remove() }
        status = try daemon.waitFor("the root indexed", timeout: .seconds(15)) {
            $0["counts"]?["assets"]?.intValue == 2 && $0["roots"]?[0]?["state"]?.stringValue == "available"
        }
        #expect(daemon.stop() == 0)
    }

    @Test("A root adopted on a new disk keeps the unmounted disk below it: its assets stay, unavailable",
          .enabled(if: Mounts.canLoop))
    func adoptKeepsMountsBelow() throws {
        let place = try TemporaryDirectory("mounts-adopt-below")
        defer { place.remove() }
        let root = place("lib")
        let old = try MountedTree(.disk, at: root, files: Self.photos("", count: 2))
        defer { old.remove() }
        let usb = try MountedTree(.bind, at: root.appending("usb"), files: Self.photos("", count: 2))
        defer { usb.remove() }
        let state = try TemporaryDirectory("mounts-adopt-below-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [root], state: state)
        try daemon.waitForIdle()
        try usb.unmount()
        try old.unmount()
        // The new disk has the library's own photos, and an empty mount point for the second disk.
        let new = try MountedTree(.disk, at: root, files: Self.photos("", count: 2))
        defer { new.remove() }
        try Directory.makePath(root.appending("usb"))
        _ = try daemon.waitFor("another file system") { $0["roots"]?[0]?["state"]?.stringValue == "unavailable" }
        _ = try daemon.call("library.adopt", ["path": .string(root.string)])
        let status = try daemon.waitForIdle()
        #expect(status["counts"]?["assets"]?.intValue == 4, "\(status)")
        #expect(status["roots"]?[0]?["unavailableMounts"]?.arrayValue?.count == 1, "\(status)")
        #expect(daemon.stop() == 0)
    }

    @Test("A lazy unmount of a busy bind mount, with nothing watching the mount table: a rescan finds it gone, removes nothing",
          .enabled(if: Mounts.canBind))
    func lazyUnmount() throws {
        let place = try TemporaryDirectory("mounts-lazy")
        defer { place.remove() }
        let root = place("lib")
        let tree = try MountedTree(.bind, at: root, files: Self.photos("", count: 3), beneath: [("x/stale.jpg", Library.jpeg(date: "2001:01:01 10:00:00"))])
        defer { tree.remove() }
        let state = try TemporaryDirectory("mounts-lazy-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [root], state: state,
                                       environment: ["PHOTOD_TEST_HOOKS": "1", "PHOTOD_TEST_MOUNT_TABLE": "unwatched"])
        try daemon.waitForIdle()
        let token = try daemon.currentToken()
        let busy = open(root.appending("trip/IMG_0.jpg").string, O_RDONLY)
        #expect(busy >= 0)
        defer { close(busy) }
        try tree.unmount(lazily: true)
        #expect(try daemon.rescan(root)?.errorCode == .unavailable)
        #expect(try daemon.rescan(nil) == nil)
        try daemon.expectNothingDeleted(since: token)
        #expect(try daemon.allAssets().count == 3)
        #expect(daemon.stop() == 0)
    }

    @Test("An index from before mounts were recorded, another disk at the root when it starts: unavailable, nothing removed",
          .enabled(if: Mounts.canLoop))
    func upgradedIndexAnotherDisk() throws {
        let place = try TemporaryDirectory("mounts-upgrade")
        defer { place.remove() }
        let root = place("lib")
        let a = try MountedTree(.disk, at: root, files: Self.photos("", count: 3))
        defer { a.remove() }
        let state = try TemporaryDirectory("mounts-upgrade-state")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [root], state: state)
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        #expect(daemon.stop() == 0)
        // What an older photod left: no record of the file system.
        do {
            let db = try Database(path: daemon.database.string)
            _ = try db.write { try $0.connection.execute("DELETE FROM mounts") }
        }
        try a.unmount()
        let b = try MountedTree(.disk, at: root, files: [("other/x.jpg", Library.jpeg(date: "2022:02:02 10:00:00"))])
        defer { b.remove() }
        daemon = try DaemonProcess(libraries: [root], state: state)
        var status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["state"]?.stringValue == "unavailable", "\(status)")
        #expect(status["counts"]?["recentlyDeleted"]?.intValue == 0)
        #expect(status["counts"]?["assets"]?.intValue == 3)
        // The right disk back: recorded at last, nothing read again.
        try b.unmount()
        try a.mount()
        status = try daemon.waitFor("the root back", timeout: .seconds(15)) {
            $0["roots"]?[0]?["state"]?.stringValue == "available" && $0["state"]?.stringValue == "idle"
        }
        #expect(try daemon.idsByPath() == ids)
        #expect(daemon.stop() == 0)
    }

    @Test("A root on a FUSE mount (polled): unmounted, unavailable and kept; another FUSE source there is another file system; back, the same ids",
          .enabled(if: Mounts.canFUSE))
    func rootOnFUSE() throws {
        let place = try TemporaryDirectory("mounts-fuse")
        defer { place.remove() }
        let root = place("lib")
        let tree = try MountedTree(.fuse, at: root, files: Self.photos("", count: 3))
        defer { tree.remove() }
        let state = try TemporaryDirectory("mounts-fuse-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [root], state: state, arguments: ["--poll-interval", "1"])
        var status = try daemon.waitForIdle()
        #expect(status["roots"]?[0]?["mode"]?.stringValue == "polled", "\(status)")
        let ids = try daemon.idsByPath()
        let token = try daemon.currentToken()
        try tree.unmount()
        try place.write("lib/stale/x.jpg", Library.jpeg(date: "2001:01:01 10:00:00"))
        _ = try daemon.waitFor("the root unavailable") { $0["roots"]?[0]?["state"]?.stringValue == "unavailable" }
        let other = try MountedTree(.fuse, at: root, files: Self.photos("", count: 1))
        defer { other.remove() }
        #expect(try daemon.rescan(root)?.errorCode == .unavailable)
        status = try daemon.call("library.status")
        #expect(status["roots"]?[0]?["reason"]?.stringValue?.contains("another file system") == true, "\(status)")
        try daemon.expectNothingDeleted(since: token)
        try other.unmount()
        try tree.mount()
        _ = try daemon.waitFor("the root back", timeout: .seconds(15)) {
            $0["roots"]?[0]?["state"]?.stringValue == "available" && $0["state"]?.stringValue == "idle"
        }
        #expect(try daemon.idsByPath() == ids)
        try daemon.expectNothingDeleted(since: token)
        #expect(daemon.stop() == 0)
    }
}
