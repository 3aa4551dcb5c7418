import PhotoModel
@testable import PhotoWatch
import Testing

@Suite("Coalescer windows and settling")
struct CoalescerTimingTests {
    @Test("a single file is delivered after the quiet delay, not before")
    func singleFile() {
        var h = Harness()
        h.feed(ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"))
        #expect(h.coalescer.nextDeadline == .milliseconds(15))
        h.advance(by: .milliseconds(14))
        #expect(h.batches.isEmpty)
        h.advance(by: .milliseconds(1))
        #expect(h.batches == [[.added(p("/r/a.jpg"))]])
        #expect(h.coalescer.nextDeadline == nil)
    }

    @Test("a steady trickle is delivered at most 250 ms after its first change")
    func maxDelay() {
        var h = Harness()
        // A change every 10 ms (never 15 ms of quiet), 100 files: fewer than 50 per 250 ms.
        for i in 0..<100 {
            h.feed(ev(.create, "/r/\(i).jpg"), ev(.closeWrite, "/r/\(i).jpg"))
            h.advance(by: .milliseconds(10))
        }
        h.settle()
        #expect(h.changes.count == 100)
        #expect(h.batches.count == 4, "\(h.batches.map(\.count))")
        #expect(h.batches.allSatisfy { $0.count <= 26 })
    }

    @Test("a 5,000-file burst arrives as batches of 50, each file once")
    func burst() {
        var h = Harness()
        for i in 0..<5_000 {
            h.feed(ev(.create, "/r/d/\(i).jpg"), ev(.modify, "/r/d/\(i).jpg"), ev(.closeWrite, "/r/d/\(i).jpg"))
            h.advance(by: .microseconds(100))
        }
        h.settle()
        #expect(h.batches.count == 100)
        #expect(h.batches.allSatisfy { $0.count == 50 })
        let expected = (0..<5_000).map { WatchChange.added(p("/r/d/\($0).jpg")) }
        #expect(h.changes == expected)
    }

    @Test("a burst with cancellations delivers only what is left, in batches of at most 50")
    func burstWithChurn() {
        var h = Harness(CoalescerLimits(maxPaths: 50))
        for i in 0..<1_000 {
            h.feed(ev(.create, "/r/\(i).tmp.jpg"), ev(.delete, "/r/\(i).tmp.jpg"))  // cancels
            h.feed(ev(.create, "/r/\(i).jpg"), ev(.closeWrite, "/r/\(i).jpg"))
        }
        h.settle()
        #expect(h.changes.count == 1_000)
        #expect(h.batches.allSatisfy { $0.count <= 50 })
        #expect(Set(h.changes).count == 1_000)
    }

    @Test("a rename pairs across reads within the wait")
    func moveAcrossReads() {
        var h = Harness()
        h.feed(ev(.movedFrom, "/r/a.jpg", cookie: 5))  // the last record of a read
        #expect(h.coalescer.nextDeadline == .milliseconds(50))
        h.advance(by: .milliseconds(30))
        #expect(h.batches.isEmpty)
        h.feed(ev(.movedTo, "/r/b.jpg", cookie: 5))  // the next read
        h.settle()
        #expect(h.changes == [.moved(from: p("/r/a.jpg"), to: p("/r/b.jpg"))])
    }

    @Test("a directory rename pairs across reads within the wait")
    func directoryMoveAcrossReads() {
        var h = Harness()
        h.feed(ev(.movedFrom.union(.isDirectory), "/r/d", cookie: 5))
        h.advance(by: .milliseconds(49))
        h.feed(ev(.movedTo.union(.isDirectory), "/r/e", cookie: 5))
        h.settle()
        #expect(h.changes == [.directoryMoved(from: p("/r/d"), to: p("/r/e"))])
        #expect(h.actions == [.moveWatches(from: p("/r/d"), to: p("/r/e"))])
    }

    @Test("a rename half left waiting becomes a removal after the wait")
    func moveTimesOut() {
        var h = Harness()
        h.feed(ev(.movedFrom, "/r/a.jpg", cookie: 5))
        h.advance(by: .milliseconds(50))
        h.feed(ev(.movedTo, "/r/b.jpg", cookie: 5))  // too late: an unpaired add
        h.settle()
        #expect(h.changes == [.removed(p("/r/a.jpg")), .movedOut(p("/r/a.jpg")), .added(p("/r/b.jpg"))])
    }

    @Test("a hard link (no close) is added once size and mtime hold still")
    func hardLinkSettles() {
        var h = Harness()
        h.disk[p("/r/link.jpg")] = SettleStat(size: 100, mtimeNanoseconds: 7)
        h.feed(ev(.create, "/r/link.jpg"))
        #expect(h.coalescer.nextDeadline == .seconds(1))
        h.advance(by: .milliseconds(1_500))
        #expect(h.statRequests == 1)
        #expect(h.changes.isEmpty)
        h.advance(by: .milliseconds(600))
        #expect(h.statRequests == 2)
        #expect(h.batches == [[.added(p("/r/link.jpg"))]])
        #expect(h.coalescer.settlingCount == 0)
        #expect(h.coalescer.nextDeadline == nil)
    }

    @Test("a file growing without a close waits until it stops")
    func growingFileWaits() {
        var h = Harness()
        h.disk[p("/r/nfs.mov")] = SettleStat(size: 1, mtimeNanoseconds: 1)
        h.feed(ev(.create, "/r/nfs.mov"))
        for size in 2...5 {
            h.advance(by: .seconds(1))  // a stat each second sees another size
            h.disk[p("/r/nfs.mov")] = SettleStat(size: Int64(size), mtimeNanoseconds: Int64(size))
        }
        #expect(h.changes.isEmpty)
        h.settle()
        #expect(h.changes == [.added(p("/r/nfs.mov"))])
    }

    @Test("writes without a close keep postponing the examination")
    func modifyEventsPostpone() {
        var h = Harness()
        h.disk[p("/r/a.jpg")] = SettleStat(size: 1, mtimeNanoseconds: 1)
        for _ in 0..<10 {
            h.feed(ev(.modify, "/r/a.jpg"))
            h.advance(by: .milliseconds(500))
        }
        #expect(h.statRequests == 0)
        h.settle()
        #expect(h.changes == [.modified(p("/r/a.jpg"))])
        #expect(h.statRequests == 2)
    }

    @Test("a close while settling wins; the late answer is ignored")
    func closeWhileSettling() {
        var c = Coalescer()
        _ = c.receive(ev(.create, "/r/a.jpg"), at: .zero)
        let ask = c.tick(at: .seconds(1))
        #expect(ask == [.stat([p("/r/a.jpg")])])
        _ = c.receive(ev(.closeWrite, "/r/a.jpg"), at: .seconds(1) + .milliseconds(1))
        _ = c.settled([SettleResult(path: p("/r/a.jpg"), stat: SettleStat(size: 1, mtimeNanoseconds: 1))],
                      at: .seconds(1) + .milliseconds(2))
        let out = c.flush(at: .seconds(2))
        #expect(out == [.deliver([.added(p("/r/a.jpg"))])])
        #expect(c.settlingCount == 0)
    }

    @Test("a settling file that vanished or is not a regular file is dropped")
    func vanishedWhileSettling() {
        var h = Harness()
        h.feed(ev(.create, "/r/fifo"), ev(.create, "/r/symlink.jpg"))
        h.settle()
        #expect(h.changes.isEmpty)
        #expect(h.coalescer.settlingCount == 0)
    }

    @Test("a settling file renamed settles under its new name; one below a renamed directory too")
    func settlingFollowsRenames() {
        var h = Harness()
        h.disk[p("/r/b.jpg")] = SettleStat(size: 1, mtimeNanoseconds: 1)
        h.disk[p("/r/e/c.jpg")] = SettleStat(size: 1, mtimeNanoseconds: 1)
        h.feed(ev(.create, "/r/a.jpg"), ev(.movedFrom, "/r/a.jpg", cookie: 1), ev(.movedTo, "/r/b.jpg", cookie: 1))
        h.feed(ev(.create, "/r/d/c.jpg"), ev(.movedFrom.union(.isDirectory), "/r/d", cookie: 2),
               ev(.movedTo.union(.isDirectory), "/r/e", cookie: 2))
        h.settle()
        #expect(h.batches == [[.directoryMoved(from: p("/r/d"), to: p("/r/e"))], [.added(p("/r/b.jpg")), .added(p("/r/e/c.jpg"))]])
    }

    @Test("posted changes: rootGone and overflow deliver at once, unwatched waits for the window")
    func posted() {
        var c = Coalescer()
        _ = c.receive(ev(.closeWrite, "/r/a.jpg"), at: .zero)
        #expect(c.post(.unwatched([p("/r/x")]), at: .zero).isEmpty)
        let out = c.post(.rootGone(p("/r")), at: .milliseconds(1))
        #expect(out == [.deliver([.modified(p("/r/a.jpg")), .unwatched([p("/r/x")]), .rootGone(p("/r"))])])
        #expect(c.post(.overflow, at: .milliseconds(2)) == [.deliver([.overflow])])
        #expect(c.nextDeadline == nil)
    }

    @Test("idle: no deadline at all")
    func idle() {
        let c = Coalescer()
        #expect(c.nextDeadline == nil)
        var h = Harness()
        h.feed(ev(.create, "/r/a.jpg"), ev(.delete, "/r/a.jpg"))
        #expect(h.coalescer.nextDeadline == nil, "a cancelled pair leaves nothing to wait for")
    }

    @Test("rebase of paths below a renamed directory", arguments: [
        ("/r/d", "/r/d", "/r/e", "/r/e"),
        ("/r/d/x/y.jpg", "/r/d", "/r/e", "/r/e/x/y.jpg"),
        ("/r/d/x", "/r/d/", "/r/e", "/r/e/x"),
    ])
    func rebase(path: String, from: String, to: String, expected: String) {
        #expect(Coalescer.rebase(p(path), from: p(from), to: p(to)) == p(expected))
    }
}

@Suite("Joining batches")
struct JoiningTests {
    @Test("batches joined keep the single-batch contract", arguments: [
        ([[.added(p("/r/a")), .directoryAdded(p("/r/d"))], [.removed(p("/r/b"))]] as [[WatchChange]],
         [.added(p("/r/a")), .removed(p("/r/b")), .directoryAdded(p("/r/d"))] as [WatchChange]),
        ([[.directoryAdded(p("/r/d"))], [.directoryMoved(from: p("/r/d"), to: p("/r/e"))]],
         [.directoryAdded(p("/r/e"))]),
        ([[.directoryAdded(p("/r/d"))], [.directoryMoved(from: p("/r/d/sub"), to: p("/r/x"))]],
         [.directoryAdded(p("/r/d")), .directoryAdded(p("/r/x"))]),
        ([[.rescan(p("/r/d/sub"))], [.directoryMoved(from: p("/r/d"), to: p("/r/e"))]],
         [.directoryMoved(from: p("/r/d"), to: p("/r/e")), .rescan(p("/r/e/sub"))]),
        ([[.directoryAdded(p("/r/d"))], [.moved(from: p("/r/d/a.jpg"), to: p("/r/a.jpg"))]],
         [.added(p("/r/a.jpg")), .directoryAdded(p("/r/d"))]),
        ([[.directoryAdded(p("/r/d/e"))], [.directoryRemoved(p("/r/d"))]],
         [.directoryRemoved(p("/r/d"))]),
        ([[.directoryAdded(p("/r/d/e"))], [.directoryAdded(p("/r/d"))], [.overflow]],
         [.overflow, .directoryAdded(p("/r/d"))]),
    ] as [([[WatchChange]], [WatchChange])])
    func join(batches: [[WatchChange]], expected: [WatchChange]) {
        #expect(WatchChange.joining(batches) == expected)
    }

    @Test("a single batch is returned as is")
    func single() {
        var h = Harness()
        h.feed(ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.create.union(.isDirectory), "/r/d"),
               ev(.movedFrom, "/r/x.jpg", cookie: 1), ev(.movedTo, "/r/d/x.jpg", cookie: 1), ev(.delete, "/r/z.jpg"))
        h.settle()
        #expect(h.batches.count == 1)
        #expect(WatchChange.joining(h.batches) == h.batches[0])
    }
}

@Suite("Settling with an open writer")
struct SettleBusyTests {
    @Test("a file still open for writing does not settle, however still it holds")
    func busyWriter() {
        var c = Coalescer(limits: CoalescerLimits(settleInterval: .seconds(1)))
        let path = p("/r/download.mov")
        let still = SettleStat(size: 5, mtimeNanoseconds: 5)
        _ = c.receive(ev(.create, "/r/download.mov"), at: .zero)
        var t = Duration.zero
        for _ in 0..<5 {
            t += .seconds(1)
            #expect(c.tick(at: t) == [.stat([path])])
            #expect(c.settled([SettleResult(path: path, stat: still, isOpenForWriting: true)], at: t).isEmpty)
        }
        #expect(c.settlingCount == 1)
        // The writer closes: the close reports it at once.
        _ = c.receive(ev(.closeWrite, "/r/download.mov"), at: t)
        #expect(c.flush(at: t) == [.deliver([.added(path)])])
    }
}

@Suite("A consumer's scan may run late")
struct RecentScanTests {
    @Test("a file created below a just-delivered scan and deleted is reported removed, not cancelled")
    func createDeleteAfterScan() {
        var h = Harness()
        h.feed(ev(.create.union(.isDirectory), "/r/d"))
        h.advance(by: .milliseconds(20))
        #expect(h.batches == [[.directoryAdded(p("/r/d"))]])
        h.feed(ev(.create, "/r/d/a.jpg"), ev(.closeWrite, "/r/d/a.jpg"), ev(.delete, "/r/d/a.jpg"))
        h.feed(ev(.create, "/r/d/b.jpg"), ev(.delete, "/r/d/b.jpg"))
        h.feed(ev(.create, "/r/e.jpg"), ev(.delete, "/r/e.jpg"))  // not below a scan: cancels
        h.settle()
        #expect(h.batches.last == [.removed(p("/r/d/a.jpg")), .removed(p("/r/d/b.jpg"))])
    }

    @Test("after the recent-scan window, create+delete cancels again")
    func windowExpires() {
        var h = Harness(CoalescerLimits(recentScanWindow: .seconds(1)))
        h.feed(ev(.create.union(.isDirectory), "/r/d"))
        h.advance(by: .seconds(2))
        h.feed(ev(.create, "/r/d/a.jpg"), ev(.closeWrite, "/r/d/a.jpg"), ev(.delete, "/r/d/a.jpg"))
        h.settle()
        #expect(h.batches == [[.directoryAdded(p("/r/d"))]])
    }
}
