#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
@testable import PhotoWatch
import Testing

/// The watcher on the real kernel, on temporary trees. Serialized: the overflow test lowers
/// a system-wide queue length for a moment, and timing is steadier one test at a time.
@Suite("Inotify watcher on the kernel", .serialized)
struct InotifyWatcherTests {
    @Test("a file created, written and closed is one added")
    func createWriteClose() async throws {
        let rig = try Rig("create")
        defer { rig.tearDown() }
        let report = rig.watcher.watchTree(rig.root)
        #expect(report.watched == 1)
        let file = rig.root.appending("a.jpg")
        try writeFile(file, [UInt8](repeating: 7, count: 100_000))
        try await rig.collector.wait(for: .added(file))
        rig.watcher.flush()
        #expect(rig.collector.changes == [.added(file)])
    }

    @Test("appending to an existing file is modified; deleting it is removed")
    func appendAndDelete() async throws {
        let rig = try Rig("append") { try writeFile($0.appending("a.jpg")) }
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        let file = rig.root.appending("a.jpg")
        try writeFile(file, Array(" more".utf8), append: true)
        try await rig.collector.wait(for: .modified(file))
        try removeFile(file)
        try await rig.collector.wait(for: .removed(file))
        rig.watcher.flush()
        #expect(rig.collector.changes == [.modified(file), .removed(file)])
    }

    @Test("renames inside the tree are moves; a renamed directory's watch follows it")
    func movesInside() async throws {
        let rig = try Rig("moves") { root in
            try writeFile(root.appending("a.jpg"))
            try Directory.makePath(root.appending("d/inner"))
            try writeFile(root.appending("d/inner/x.jpg"))
        }
        defer { rig.tearDown() }
        #expect(rig.watcher.watchTree(rig.root).watched == 3)
        let (a, b) = (rig.root.appending("a.jpg"), rig.root.appending("b.jpg"))
        try rename(a, b)
        try await rig.collector.wait(for: .moved(from: a, to: b))

        let (d, e) = (rig.root.appending("d"), rig.root.appending("e"))
        try rename(d, e)
        try await rig.collector.wait(for: .directoryMoved(from: d, to: e))
        // Created inside the moved tree: reported under the new path (the watch paths were rewritten).
        let y = e.appending("inner/y.jpg")
        try writeFile(y)
        try await rig.collector.wait(for: .added(y))
        try rename(e.appending("inner/x.jpg"), e.appending("x.jpg"))
        try await rig.collector.wait(for: .moved(from: e.appending("inner/x.jpg"), to: e.appending("x.jpg")))
        rig.watcher.flush()
        #expect(!rig.collector.changes.contains { paths(of: $0).contains { $0.isWithin(d) } && $0 != .directoryMoved(from: d, to: e) })
        #expect(rig.watcher.watchedCount == 3)
    }

    @Test("moved out of the tree is removed; moved in is added (a directory: watched, then directoryAdded)")
    func movesAcrossTheBoundary() async throws {
        let outside = try TemporaryDirectory("watch-outside")
        defer { outside.remove() }
        let rig = try Rig("boundary") { root in
            try writeFile(root.appending("a.jpg"))
            try Directory.makePath(root.appending("d"))
            try writeFile(root.appending("d/x.jpg"))
        }
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        try rename(rig.root.appending("a.jpg"), outside.path.appending("a.jpg"))
        try await rig.collector.wait(for: .removed(rig.root.appending("a.jpg")))
        try rename(rig.root.appending("d"), outside.path.appending("d"))
        try await rig.collector.wait(for: .directoryRemoved(rig.root.appending("d")))
        #expect(rig.watcher.watchedCount == 1, "the moved-out directory's watch is dropped")
        // Changes in the moved-out directory are no longer reported.
        try writeFile(outside.path.appending("d/late.jpg"))

        try writeFile(outside.path.appending("in.jpg"))
        try rename(outside.path.appending("in.jpg"), rig.root.appending("in.jpg"))
        try await rig.collector.wait(for: .added(rig.root.appending("in.jpg")))
        try Directory.makePath(outside.path.appending("album/sub"))
        try rename(outside.path.appending("album"), rig.root.appending("album"))
        try await rig.collector.wait(for: .directoryAdded(rig.root.appending("album")))
        #expect(rig.watcher.watchedCount == 3, "the moved-in tree is watched, subdirectory included")
        let fresh = rig.root.appending("album/sub/new.jpg")
        try writeFile(fresh)
        try await rig.collector.wait(for: .added(fresh))
        rig.watcher.flush()
        #expect(!rig.collector.changes.contains { paths(of: $0).contains { $0.string.hasSuffix("late.jpg") } })
    }

    @Test("a new directory filled at once: watched, reported, and its scan finds every file")
    func newDirectoryRace() async throws {
        let rig = try Rig("race")
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        let d = rig.root.appending("burst")
        try makeDirectory(d)
        var expected: Set<PathBytes> = []
        for i in 0..<200 {
            let f = d.appending("\(i).jpg")
            try writeFile(f)
            expected.insert(f)
        }
        try await rig.collector.wait(for: .directoryAdded(d))
        // The consumer scans the directory after the batch that names it.
        let scanned = try listFiles(d)
        rig.watcher.flush()
        var known = scanned
        for case .added(let f) in rig.collector.changes { known.insert(f) }
        #expect(known == expected)
        #expect(rig.watcher.watchedCount == 2)
    }

    @Test("cp of 1,000 files: batches of at most 50, every file reported once")
    func copyBurst() async throws {
        let source = try TemporaryDirectory("watch-source")
        defer { source.remove() }
        for i in 0..<1_000 { try writeFile(source.path.appending(String(format: "IMG_%04d.jpg", i)), [UInt8](repeating: 1, count: 2_000)) }
        let rig = try Rig("copy")
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        #expect(try shell("cp \"$1\"/* \"$2\"/", [source.path.string, rig.root.string]) == 0)
        try await rig.collector.wait("1,000 changes", timeout: .seconds(30)) { changes in changes.count >= 1_000 }
        rig.watcher.flush()
        let batches = rig.collector.batches
        #expect(batches.allSatisfy { $0.count <= 50 }, "\(batches.map(\.count))")
        let changes = rig.collector.changes
        #expect(changes.count == 1_000)
        #expect(changes.allSatisfy { if case .added = $0 { true } else { false } })
        #expect(Set(changes).count == 1_000)
        #expect(batches.count >= 20, "coalesced into chunks, not one batch per file: \(batches.count) batches")
    }

    @Test("a hard link (no close) is added after the settle period")
    func hardLinkSettles() async throws {
        let outside = try TemporaryDirectory("watch-link")
        defer { outside.remove() }
        // Same file system for link(2): the rig's temporary directory sits next to `outside`.
        let original = outside.path.appending("original.jpg")
        try writeFile(original)
        let rig = try Rig("link", coalescing: CoalescerLimits(settleInterval: .milliseconds(100)))
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        let link = rig.root.appending("linked.jpg")
        let started = ContinuousClock.now
        try hardLink(original, link)
        try await rig.collector.wait(for: .added(link))
        #expect(ContinuousClock.now - started >= .milliseconds(200), "two examinations a settle interval apart")
        rig.watcher.flush()
        #expect(rig.collector.changes == [.added(link)])
    }

    @Test("a tiny watch budget: the rest of the tree is reported unwatched, and so is a new directory")
    func tinyBudget() async throws {
        let rig = try Rig("budget", limits: WatchLimits(maxWatches: 3)) { root in
            for i in 0..<9 { try Directory.makePath(root.appending("d\(i)")) }
        }
        defer { rig.tearDown() }
        let report = rig.watcher.watchTree(rig.root)
        #expect(report.watched == 3)
        #expect(report.unwatched.count == 7)
        #expect(rig.watcher.watchedCount == 3)
        #expect(Set(rig.watcher.unwatchedTrees) == Set(report.unwatched))
        // Every directory is watched or inside an unwatched tree.
        let all = [rig.root] + (0..<9).map { rig.root.appending("d\($0)") }
        let watchedOrPolled = all.filter { dir in report.unwatched.contains { dir.isWithin($0) } }.count + 3
        #expect(watchedOrPolled == 10)

        let fresh = rig.root.appending("new")
        try makeDirectory(fresh)
        try await rig.collector.wait { $0.contains(.unwatched([fresh])) && $0.contains(.directoryAdded(fresh)) }
        #expect(rig.watcher.unwatchedTrees.contains(fresh))

        // Freed watches are taken over again by a retry.
        let watchedChild = try #require(all.dropFirst().first { d in !report.unwatched.contains(d) })
        rig.watcher.unwatch(directoryTree: watchedChild)
        let retry = rig.watcher.retryUnwatched()
        #expect(retry.watched == 1)
        #expect(rig.watcher.watchedCount == 3)
        #expect(rig.watcher.unwatchedTrees.count == 7)
    }

    @Test("Excluded directories are not watched, at the start nor when made later; what is made in them is not reported")
    func excludedDirectories() async throws {
        let rig = try Rig("excluded", exclusions: try PathExclusions(patterns: ["/Scans"])) { root in
            try Directory.makePath(root.appending("d/@eaDir/IMG_1.JPG"))
            try Directory.makePath(root.appending("Scans/x"))
        }
        defer { rig.tearDown() }
        let report = rig.watcher.watchTree(rig.root)
        #expect(report.watched == 2, "root and d; not @eaDir nor Scans, nor below them")
        let thumbs = rig.root.appending("d/@eaDir/IMG_2.JPG")
        try makeDirectory(thumbs)
        try writeFile(thumbs.appending("SYNOPHOTO_THUMB_XL.jpg"))
        let recycle = rig.root.appending("d/#recycle")
        try makeDirectory(recycle)
        try writeFile(rig.root.appending("Scans/x/s.jpg"))
        let later = rig.root.appending("d/later.jpg")
        try await rig.collector.wait(for: .directoryAdded(recycle))
        try writeFile(recycle.appending("old.jpg"))
        try writeFile(later)
        try await rig.collector.wait(for: .added(later))
        #expect(rig.watcher.watchedCount == 2, "#recycle, made later, is not watched")
        #expect(!rig.collector.changes.contains { paths(of: $0).contains { $0.string.hasSuffix("s.jpg") || $0.string.hasSuffix("old.jpg")
            || $0.string.hasSuffix("THUMB_XL.jpg") } })
    }

    @Test(".nomedia: the directory is rescanned and muted; removing it brings the tree back")
    func noMedia() async throws {
        let rig = try Rig("nomedia") { root in
            try Directory.makePath(root.appending("d/sub"))
            try Directory.makePath(root.appending("hidden/sub"))
            try writeFile(root.appending("hidden/.nomedia"), [])
            try Directory.makePath(root.appending(".thumbnails/x"))
        }
        defer { rig.tearDown() }
        let report = rig.watcher.watchTree(rig.root)
        #expect(report.watched == 4, "root, d, d/sub, hidden (for its .nomedia); not below it, not dot-directories")
        #expect(report.noMedia == 1)
        let d = rig.root.appending("d")
        try writeFile(d.appending(".nomedia"), [])
        try await rig.collector.wait(for: .rescan(d))
        #expect(rig.watcher.watchedCount == 3)
        try writeFile(d.appending("ignored.jpg"))
        try removeFile(d.appending(".nomedia"))
        try await rig.collector.wait { $0.filter { $0 == .rescan(d) }.count == 2 }
        #expect(rig.watcher.watchedCount == 4)
        let later = d.appending("sub/later.jpg")
        try writeFile(later)
        try await rig.collector.wait(for: .added(later))
        #expect(!rig.collector.changes.contains(.added(d.appending("ignored.jpg"))))
        try writeFile(rig.root.appending("hidden/sub/x.jpg"))
        try writeFile(rig.root.appending(".thumbnails/x/y.jpg"))
        rig.watcher.flush()
        #expect(!rig.collector.changes.contains { paths(of: $0).contains { $0.string.hasSuffix("x.jpg") || $0.string.hasSuffix("y.jpg") } })
    }

    @Test("Directories without subdirectories are not listed (their link count says so): a leaf's .nomedia is found by one fstatat and mutes it; a leaf gets a subdirectory later and it is watched")
    func leaves() async throws {
        let rig = try Rig("leaves") { root in
            try Directory.makePath(root.appending("muted"))
            try writeFile(root.appending("muted/.nomedia"), [])
            try writeFile(root.appending("muted/a.jpg"))
            try Directory.makePath(root.appending("plain"))
            try writeFile(root.appending("plain/b.jpg"))
        }
        defer { rig.tearDown() }
        let fs = try Directory(path: rig.root).fileSystem()
        let leaf = try FileStat.of(rig.root.appending("plain"))
        if fs.countsSubdirectoryLinks { #expect(leaf.linkCount == 2, "a leaf on this file system: the shortcut is taken") }
        print("leaves test: file system type 0x\(String(fs.type, radix: 16)), counts subdirectory links: \(fs.countsSubdirectoryLinks)")
        let report = rig.watcher.watchTree(rig.root)
        #expect(report.watched == 3 && report.noMedia == 1, "\(report)")
        try writeFile(rig.root.appending("muted/c.jpg"))
        let sub = rig.root.appending("plain/sub")
        try Directory.makePath(sub)
        try await rig.collector.wait(for: .directoryAdded(sub))
        let later = sub.appending("d.jpg")
        try writeFile(later)
        try await rig.collector.wait(for: .added(later))
        rig.watcher.flush()
        #expect(!rig.collector.changes.contains { paths(of: $0).contains { $0.string.hasSuffix("c.jpg") } })
        #expect(rig.watcher.watchedCount == 4)
    }

    @Test("a root renamed away is rootGone, and its watches are dropped")
    func rootGone() async throws {
        let rig = try Rig("root") { try Directory.makePath($0.appending("d")) }
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        let away = rig.dir.path.appending("lib-away")
        try rename(rig.root, away)
        try await rig.collector.wait(for: .rootGone(rig.root))
        #expect(rig.watcher.watchedCount == 0)
        try rename(away, rig.root)
        let again = rig.watcher.watchTree(rig.root)
        #expect(again.watched == 2)
    }

    @Test("deleting a directory tree is directoryRemoved and frees its watches")
    func deleteTree() async throws {
        let rig = try Rig("rmtree") { root in
            try Directory.makePath(root.appending("d/e/f"))
            for i in 0..<10 { try writeFile(root.appending("d/e/\(i).jpg")) }
        }
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        #expect(rig.watcher.watchedCount == 4)
        #expect(try shell("rm -r \"$1\"", [rig.root.appending("d").string]) == 0)
        try await rig.collector.wait(for: .directoryRemoved(rig.root.appending("d")))
        try await rig.collector.wait(timeout: .seconds(5)) { _ in rig.watcher.watchedCount == 1 }
    }

    @Test("IN_Q_OVERFLOW on the kernel is reported as overflow; the watches stay",
          .enabled(if: InotifyQueueKnob.canLower && WatchLimits.systemMaxQueuedEvents() != nil,
                   "lowering fs.inotify.max_queued_events needs root and a writable /proc/sys"))
    func kernelOverflow() async throws {
        // The queue length is fixed when the inotify instance is created: lower it just for that.
        let collector = Collector()
        let (watcher, saved) = try InotifyQueueKnob.lowered(to: 16) {
            (try InotifyWatcher(limits: WatchLimits(maxWatches: 1_000), logger: .silent) { collector.append($0) },
             WatchLimits.systemMaxQueuedEvents())
        }
        watcher.start()
        #expect(saved == 16, "lowered for the watcher")
        #expect(WatchLimits.systemMaxQueuedEvents() != 16, "restored")
        let dir = try TemporaryDirectory("watch-overflow")
        defer { watcher.stop(); dir.remove() }
        try Directory.makePath(dir.path.appending("old/inner"))
        try Directory.makePath(dir.path.appending("doomed"))
        watcher.watchTree(dir.path)
        #expect(watcher.watchedCount == 4)
        watcher.suspendReading()
        for i in 0..<40 { try writeFile(dir.path.appending("\(i).jpg")) }
        // Directory changes whose records are lost with the overflow.
        try Directory.makePath(dir.path.appending("new/sub"))
        try rename(dir.path.appending("old"), dir.path.appending("renamed"))
        #expect(try shell("rmdir \"$1\"", [dir.path.appending("doomed").string]) == 0)
        watcher.resumeReading()
        try await collector.wait(for: .overflow)
        // The watches were brought in line with the disk before the overflow was reported.
        #expect(watcher.watchedCount == 5, "root, renamed, renamed/inner, new, new/sub")
        let files = [dir.path.appending("after.jpg"), dir.path.appending("new/sub/a.jpg"), dir.path.appending("renamed/inner/b.jpg")]
        for f in files { try writeFile(f) }
        try await collector.wait { changes in files.allSatisfy { changes.contains(.added($0)) } }
    }

    @Test("idle: once a batch is delivered the timer is parked (no wake-ups)")
    func idleTimer() async throws {
        let rig = try Rig("idle")
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        #expect(rig.watcher.armedDeadline == nil)
        try writeFile(rig.root.appending("a.jpg"))
        try await rig.collector.wait(for: .added(rig.root.appending("a.jpg")))
        try await rig.collector.wait(timeout: .seconds(5)) { _ in rig.watcher.armedDeadline == nil }
    }

    @Test("a directory watched without its parent reports its own deletion")
    func parentlessDirectory() async throws {
        let rig = try Rig("parentless") { try Directory.makePath($0.appending("only")) }
        defer { rig.tearDown() }
        let only = rig.root.appending("only")
        #expect(rig.watcher.watch(directory: only).watched == 1)
        #expect(try shell("rmdir \"$1\"", [only.string]) == 0)
        try await rig.collector.wait(for: .directoryRemoved(only))
        #expect(rig.watcher.watchedCount == 0)
    }

    @Test("a root that is missing or a symbolic link is reported unreadable, not silently skipped")
    func badRoots() throws {
        let rig = try Rig("badroot")
        defer { rig.tearDown() }
        let missing = rig.dir.path.appending("missing")
        #expect(rig.watcher.watchTree(missing).unreadable == [missing])
        let link = rig.dir.path.appending("link")
        _ = try link.withCString { l throws(SystemError) in
            try rig.root.withCString { t throws(SystemError) in try syscall("symlink") { symlink(t, l) } }
        }
        #expect(rig.watcher.watchTree(link).unreadable == [link])
        #expect(rig.watcher.watchedCount == 0)
    }

    @Test("the watcher on a network or FUSE file system is not used there (detected with statfs)")
    func fileSystemCheck() throws {
        let rig = try Rig("fs")
        defer { rig.tearDown() }
        let info = try Directory(path: rig.root).fileSystem()
        let report = rig.watcher.watchTree(rig.root)
        if info.isNetworkOrFUSE {
            #expect(report.networkOrFUSE == [rig.root])
        } else {
            #expect(report.networkOrFUSE.isEmpty)
            #expect(report.watched == 1)
        }
    }

    @Test("a file created and held open for writing is not reported by the settle rule, only at its close")
    func stalledWriter() async throws {
        let rig = try Rig("stalled", coalescing: CoalescerLimits(settleInterval: .milliseconds(50)))
        defer { rig.tearDown() }
        rig.watcher.watchTree(rig.root)
        let file = rig.root.appending("partial.mov")
        let fd = try file.withCString { p throws(SystemError) in try syscall("open") { open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) } }
        _ = [UInt8](repeating: 1, count: 10).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        // Several settle intervals of stillness while the descriptor stays open: what is tested is
        // that time passing reports nothing, so nothing can be awaited.
        try await Task.sleep(for: .milliseconds(400))
        #expect(rig.collector.changes.isEmpty, "reported while open: \(rig.collector.changes)")
        close(fd)
        try await rig.collector.wait(for: .added(file))
        rig.watcher.flush()
        #expect(rig.collector.changes == [.added(file)])
    }
}
