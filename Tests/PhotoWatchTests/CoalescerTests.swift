import PhotoModel
@testable import PhotoWatch
import Testing

/// One rule of the coalescer: records in one read, then time passes until nothing waits.
struct Rule: Sendable, CustomTestStringConvertible {
    var label: String
    var events: [InotifyEvent]
    var expected: [WatchChange]
    /// The watch actions expected (nil: not checked).
    var actions: [CoalescerAction]?

    init(_ label: String, _ events: [InotifyEvent], _ expected: [WatchChange], actions: [CoalescerAction]? = nil) {
        self.label = label
        self.events = events
        self.expected = expected
        self.actions = actions
    }

    var testDescription: String { label }
}

let D: InotifyMask = .isDirectory

@Suite("Coalescer rules")
struct CoalescerRuleTests {
    static let files: [Rule] = [
        Rule("create+close is added", [ev(.create, "/r/a.jpg"), ev(.modify, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg")],
             [.added(p("/r/a.jpg"))]),
        Rule("create+delete before a close cancels", [ev(.create, "/r/a.jpg"), ev(.modify, "/r/a.jpg"), ev(.delete, "/r/a.jpg")], []),
        Rule("added then removed is nothing", [ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.delete, "/r/a.jpg")], []),
        Rule("a close of an existing file is modified", [ev(.modify, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg")],
             [.modified(p("/r/a.jpg"))]),
        Rule("a close without writes is modified", [ev(.closeWrite, "/r/a.jpg")], [.modified(p("/r/a.jpg"))]),
        Rule("modified many times is modified once",
             [ev(.modify, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.modify, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"),
              ev(.closeWrite, "/r/a.jpg")],
             [.modified(p("/r/a.jpg"))]),
        Rule("added then modified is added",
             [ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.modify, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg")],
             [.added(p("/r/a.jpg"))]),
        Rule("delete is removed", [ev(.delete, "/r/a.jpg")], [.removed(p("/r/a.jpg"))]),
        Rule("modified then removed is removed", [ev(.closeWrite, "/r/a.jpg"), ev(.delete, "/r/a.jpg")], [.removed(p("/r/a.jpg"))]),
        Rule("removed then added (a replaced file) is modified",
             [ev(.delete, "/r/a.jpg"), ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg")], [.modified(p("/r/a.jpg"))]),
        Rule("IN_MODIFY without a close is modified once it settles", [ev(.modify, "/r/a.jpg")], [.modified(p("/r/a.jpg"))]),
        Rule("attributes right after a close are read with the file",
             [ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.attrib, "/r/a.jpg")], [.added(p("/r/a.jpg"))]),
        Rule("different files keep their order",
             [ev(.create, "/r/b.jpg"), ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.closeWrite, "/r/b.jpg"),
              ev(.delete, "/r/c.jpg")],
             [.added(p("/r/a.jpg")), .added(p("/r/b.jpg")), .removed(p("/r/c.jpg"))]),
        Rule("dot-files are ignored",
             [ev(.create, "/r/.a.jpg.swp"), ev(.closeWrite, "/r/.a.jpg.swp"), ev(.delete, "/r/.x"), ev(.create.union(D), "/r/.cache")],
             []),
    ]

    static let moves: [Rule] = [
        Rule("a rename pairs by cookie", [ev(.movedFrom, "/r/a.jpg", cookie: 7), ev(.movedTo, "/r/b.jpg", cookie: 7)],
             [.moved(from: p("/r/a.jpg"), to: p("/r/b.jpg"))]),
        Rule("a rename across directories pairs", [ev(.movedFrom, "/r/x/a.jpg", cookie: 7), ev(.movedTo, "/r/y/a.jpg", cookie: 7)],
             [.moved(from: p("/r/x/a.jpg"), to: p("/r/y/a.jpg"))]),
        Rule("another cookie does not pair", [ev(.movedFrom, "/r/a.jpg", cookie: 7), ev(.movedTo, "/r/b.jpg", cookie: 8)],
             [.removed(p("/r/a.jpg")), .movedOut(p("/r/a.jpg")), .added(p("/r/b.jpg"))]),
        Rule("an unpaired MOVED_FROM is removed, with the hint that it went by a rename",
             [ev(.movedFrom, "/r/a.jpg", cookie: 7)], [.removed(p("/r/a.jpg")), .movedOut(p("/r/a.jpg"))]),
        Rule("an unpaired MOVED_TO is added", [ev(.movedTo, "/r/a.jpg", cookie: 7)], [.added(p("/r/a.jpg"))]),
        Rule("any record between the halves makes MOVED_FROM a removal",
             [ev(.movedFrom, "/r/a.jpg", cookie: 7), ev(.closeWrite, "/r/c.jpg"), ev(.movedTo, "/r/b.jpg", cookie: 7)],
             [.removed(p("/r/a.jpg")), .movedOut(p("/r/a.jpg")), .modified(p("/r/c.jpg")), .added(p("/r/b.jpg"))]),
        Rule("a record of another directory between the halves leaves the rename paired (another process's copy)",
             [ev(.movedFrom.union(.isDirectory), "/r/x/a", cookie: 7), ev(.closeWrite, "/r/y/c.jpg"),
              ev(.movedTo.union(.isDirectory), "/r/x/a.moved", cookie: 7)],
             [.modified(p("/r/y/c.jpg")), .directoryMoved(from: p("/r/x/a"), to: p("/r/x/a.moved"))]),
        Rule("a record inside the renamed folder between the halves makes it a removal",
             [ev(.movedFrom.union(.isDirectory), "/r/x/a", cookie: 7), ev(.closeWrite, "/r/x/a/c.jpg"),
              ev(.movedTo.union(.isDirectory), "/r/x/a.moved", cookie: 7)],
             [.directoryRemoved(p("/r/x/a")), .movedOut(p("/r/x/a")), .modified(p("/r/x/a/c.jpg")),
              .directoryAdded(p("/r/x/a.moved"))]),
        Rule("renamed to a dot-name is removed", [ev(.movedFrom, "/r/a.jpg", cookie: 3), ev(.movedTo, "/r/.a.jpg", cookie: 3)],
             [.removed(p("/r/a.jpg")), .movedOut(p("/r/a.jpg"))]),
        Rule("a deletion is a removal without the hint", [ev(.delete, "/r/a.jpg")], [.removed(p("/r/a.jpg"))]),
        Rule("a file deleted, made again and renamed away: the removal has no hint (the indexed file was deleted)",
             [ev(.delete, "/r/a.jpg"), ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.movedFrom, "/r/a.jpg", cookie: 9),
              ev(.closeWrite, "/r/b.jpg")],
             [.removed(p("/r/a.jpg")), .modified(p("/r/b.jpg"))]),
        Rule("renamed from a dot-name is added (rsync's temporary file)",
             [ev(.create, "/r/.a.jpg.Xy12"), ev(.closeWrite, "/r/.a.jpg.Xy12"), ev(.movedFrom, "/r/.a.jpg.Xy12", cookie: 3),
              ev(.movedTo, "/r/a.jpg", cookie: 3)],
             [.added(p("/r/a.jpg"))]),
        Rule("created and renamed in one batch is added under the final name",
             [ev(.create, "/r/a.part"), ev(.closeWrite, "/r/a.part"), ev(.movedFrom, "/r/a.part", cookie: 4),
              ev(.movedTo, "/r/a.jpg", cookie: 4)],
             [.added(p("/r/a.jpg"))]),
        Rule("created, renamed before the close, closed: added under the final name",
             [ev(.create, "/r/a.part"), ev(.movedFrom, "/r/a.part", cookie: 4), ev(.movedTo, "/r/a.jpg", cookie: 4),
              ev(.closeWrite, "/r/a.jpg")],
             [.added(p("/r/a.jpg"))]),
        Rule("modified then renamed: the rename, then a re-read under the new name",
             [ev(.closeWrite, "/r/a.jpg"), ev(.movedFrom, "/r/a.jpg", cookie: 4), ev(.movedTo, "/r/b.jpg", cookie: 4)],
             [.moved(from: p("/r/a.jpg"), to: p("/r/b.jpg")), .modified(p("/r/b.jpg"))]),
        Rule("renamed then modified", [ev(.movedFrom, "/r/a.jpg", cookie: 4), ev(.movedTo, "/r/b.jpg", cookie: 4),
                                       ev(.closeWrite, "/r/b.jpg")],
             [.moved(from: p("/r/a.jpg"), to: p("/r/b.jpg")), .modified(p("/r/b.jpg"))]),
        Rule("a swap through a third name keeps every rename",
             [ev(.movedFrom, "/r/a", cookie: 1), ev(.movedTo, "/r/t", cookie: 1), ev(.movedFrom, "/r/b", cookie: 2),
              ev(.movedTo, "/r/a", cookie: 2), ev(.movedFrom, "/r/t", cookie: 3), ev(.movedTo, "/r/b", cookie: 3)],
             [.moved(from: p("/r/a"), to: p("/r/t")), .moved(from: p("/r/b"), to: p("/r/a")), .moved(from: p("/r/t"), to: p("/r/b"))]),
        Rule("a file moved in and out again is a removal (it may have replaced a known file of that name)",
             [ev(.movedTo, "/r/a.jpg", cookie: 1), ev(.movedFrom, "/r/a.jpg", cookie: 2), ev(.closeWrite, "/r/b.jpg")],
             [.removed(p("/r/a.jpg")), .modified(p("/r/b.jpg"))]),
        Rule("a file created and moved out again is nothing",
             [ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), ev(.movedFrom, "/r/a.jpg", cookie: 2),
              ev(.closeWrite, "/r/b.jpg")],
             [.modified(p("/r/b.jpg"))]),
        Rule("renamed onto a name before its close, then deleted: the name's old file is gone",
             [ev(.create, "/r/a.part"), ev(.movedFrom, "/r/a.part", cookie: 4), ev(.movedTo, "/r/a.jpg", cookie: 4),
              ev(.delete, "/r/a.jpg")],
             [.removed(p("/r/a.jpg"))]),
        Rule("a rename half waiting past the quiet delay lets the batch before it go",
             [ev(.movedTo, "/r/a.jpg", cookie: 1), ev(.movedFrom, "/r/a.jpg", cookie: 2)],
             [.added(p("/r/a.jpg")), .removed(p("/r/a.jpg")), .movedOut(p("/r/a.jpg"))]),
    ]

    static let directories: [Rule] = [
        Rule("mkdir is directoryAdded, watched first", [ev(.create.union(D), "/r/d")], [.directoryAdded(p("/r/d"))],
             actions: [.watch(p("/r/d"))]),
        Rule("files in a new directory are left to its scan",
             [ev(.create.union(D), "/r/d"), ev(.create, "/r/d/a.jpg"), ev(.closeWrite, "/r/d/a.jpg"),
              ev(.create.union(D), "/r/d/e"), ev(.create, "/r/d/e/b.jpg"), ev(.closeWrite, "/r/d/e/b.jpg")],
             [.directoryAdded(p("/r/d"))], actions: [.watch(p("/r/d")), .watch(p("/r/d/e"))]),
        Rule("rmdir is directoryRemoved, its files' removals folded in",
             [ev(.delete, "/r/d/a.jpg"), ev(.delete, "/r/d/b.jpg"), ev(.delete.union(D), "/r/d"),
              selfEvent(.deleteSelf, "/r/d"), selfEvent(.ignored, "/r/d")],
             [.directoryRemoved(p("/r/d"))], actions: [.unwatch(p("/r/d"))]),
        Rule("a directory rename pairs and moves the watches",
             [ev(.movedFrom.union(D), "/r/d", cookie: 9), ev(.movedTo.union(D), "/r/e", cookie: 9), selfEvent(.moveSelf, "/r/d")],
             [.directoryMoved(from: p("/r/d"), to: p("/r/e"))], actions: [.moveWatches(from: p("/r/d"), to: p("/r/e"))]),
        Rule("a directory moved out is directoryRemoved and unwatched",
             [ev(.movedFrom.union(D), "/r/d", cookie: 9), selfEvent(.moveSelf, "/r/d")],
             [.directoryRemoved(p("/r/d")), .movedOut(p("/r/d"))], actions: [.unwatch(p("/r/d"))]),
        Rule("a directory moved in is directoryAdded and watched", [ev(.movedTo.union(D), "/r/d", cookie: 9)],
             [.directoryAdded(p("/r/d"))], actions: [.watch(p("/r/d"))]),
        Rule("a new directory renamed at once is added under its final name",
             [ev(.create.union(D), "/r/New Folder"), ev(.movedFrom.union(D), "/r/New Folder", cookie: 2),
              ev(.movedTo.union(D), "/r/Trip", cookie: 2), ev(.create, "/r/Trip/a.jpg"), ev(.closeWrite, "/r/Trip/a.jpg")],
             [.directoryAdded(p("/r/Trip"))]),
        Rule("a pending read below a renamed directory follows it",
             [ev(.create, "/r/d/a.jpg"), ev(.closeWrite, "/r/d/a.jpg"), ev(.movedFrom.union(D), "/r/d", cookie: 5),
              ev(.movedTo.union(D), "/r/e", cookie: 5)],
             [.directoryMoved(from: p("/r/d"), to: p("/r/e")), .added(p("/r/e/a.jpg"))]),
        Rule("a rename into a new directory comes before its scan",
             [ev(.create.union(D), "/r/d"), ev(.movedFrom, "/r/x.jpg", cookie: 5), ev(.movedTo, "/r/d/x.jpg", cookie: 5)],
             [.moved(from: p("/r/x.jpg"), to: p("/r/d/x.jpg")), .directoryAdded(p("/r/d"))]),
        Rule("a file renamed out of a new directory is added where it went",
             [ev(.create.union(D), "/r/d"), ev(.create, "/r/d/x.jpg"), ev(.closeWrite, "/r/d/x.jpg"),
              ev(.movedFrom, "/r/d/x.jpg", cookie: 5), ev(.movedTo, "/r/x.jpg", cookie: 5)],
             [.added(p("/r/x.jpg")), .directoryAdded(p("/r/d"))]),
        Rule("a directory created and removed at once leaves a harmless removal",
             [ev(.create.union(D), "/r/d"), ev(.delete.union(D), "/r/d")], [.directoryRemoved(p("/r/d"))]),
        Rule("a subdirectory of a renamed parent is scanned under the new path",
             [ev(.create.union(D), "/r/d/sub"), ev(.movedFrom.union(D), "/r/d", cookie: 6), ev(.movedTo.union(D), "/r/e", cookie: 6)],
             [.directoryMoved(from: p("/r/d"), to: p("/r/e")), .directoryAdded(p("/r/e/sub"))]),
    ]

    static let special: [Rule] = [
        Rule(".nomedia appearing rescans its directory and mutes it", [ev(.create, "/r/d/.nomedia"), ev(.closeWrite, "/r/d/.nomedia")],
             [.rescan(p("/r/d"))], actions: [.noMedia(p("/r/d"), present: true)]),
        Rule(".nomedia disappearing rescans its directory", [ev(.delete, "/r/d/.nomedia")],
             [.rescan(p("/r/d"))], actions: [.noMedia(p("/r/d"), present: false)]),
        Rule(".nomedia renamed away", [ev(.movedFrom, "/r/d/.nomedia", cookie: 2), ev(.movedTo, "/r/d/nomedia.txt", cookie: 2)],
             [.rescan(p("/r/d"))], actions: [.noMedia(p("/r/d"), present: false)]),
        Rule("overflow delivers what was buffered, then overflow",
             [ev(.create, "/r/a.jpg"), ev(.closeWrite, "/r/a.jpg"), .overflow], [.added(p("/r/a.jpg")), .overflow]),
        Rule("overflow drops a waiting rename half (the rescan decides)",
             [ev(.movedFrom, "/r/a.jpg", cookie: 2), .overflow], [.overflow]),
        Rule("self events of directories report nothing",
             [selfEvent(.moveSelf, "/r/d"), selfEvent(.deleteSelf, "/r/d"), selfEvent(.ignored, "/r/d")], []),
    ]

    @Test("files", arguments: files) func fileRules(rule: Rule) { check(rule) }
    @Test("renames", arguments: moves) func moveRules(rule: Rule) { check(rule) }
    @Test("directories", arguments: directories) func directoryRules(rule: Rule) { check(rule) }
    @Test(".nomedia, overflow, self events", arguments: special) func specialRules(rule: Rule) { check(rule) }

    func check(_ rule: Rule) {
        var h = Harness(CoalescerLimits(settleInterval: .milliseconds(100)))
        // A file written without a close settles on this disk.
        for e in rule.events { h.disk[e.path] = SettleStat(size: 10, mtimeNanoseconds: 1) }
        h.feed(rule.events)
        h.settle()
        #expect(h.changes == rule.expected)
        if let actions = rule.actions {
            #expect(h.actions.filter { if case .stat = $0 { false } else { true } } == actions)
        }
        #expect(h.coalescer.nextDeadline == nil, "idle afterwards: no timer")
        #expect(h.coalescer.pendingCount == 0)
    }

    @Test("inotify mask values are the kernel's")
    func maskValues() {
        let pairs: [(InotifyMask, Int32)] = [
            (.access, IN_ACCESS), (.modify, IN_MODIFY), (.attrib, IN_ATTRIB), (.closeWrite, IN_CLOSE_WRITE),
            (.closeNoWrite, IN_CLOSE_NOWRITE), (.open, IN_OPEN), (.movedFrom, IN_MOVED_FROM), (.movedTo, IN_MOVED_TO),
            (.create, IN_CREATE), (.delete, IN_DELETE), (.deleteSelf, IN_DELETE_SELF), (.moveSelf, IN_MOVE_SELF),
            (.unmount, IN_UNMOUNT), (.queueOverflow, IN_Q_OVERFLOW), (.ignored, IN_IGNORED), (.onlyDirectory, IN_ONLYDIR),
            (.dontFollow, IN_DONT_FOLLOW), (.excludeUnlinked, IN_EXCL_UNLINK), (.isDirectory, IN_ISDIR),
        ]
        for (mask, c) in pairs { #expect(mask.rawValue == UInt32(bitPattern: c), "\(mask)") }
    }
}

#if canImport(Glibc)
import Glibc
#endif
