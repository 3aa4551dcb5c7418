import PhotoModel
@testable import PhotoPipeline
import PhotoWatch
import Testing

@Suite("Watcher changes sorted into sort-job steps")
struct ChangePlanTests {
    let root = PathBytes("/lib")
    func p(_ s: String) -> PathBytes { PathBytes("/lib/" + s) }

    @Test("A batch in apply order is one step; reads are not repeated")
    func oneStep() {
        let plan = ChangePlan([.directoryRemoved(p("old")), .removed(p("a.jpg")), .directoryMoved(from: p("x"), to: p("y")),
                               .moved(from: p("b.jpg"), to: p("c.jpg")), .added(p("d.jpg")), .modified(p("d.jpg"))],
                              roots: [root])
        #expect(plan.steps.count == 1)
        let step = plan.steps[0]
        #expect(step.removedDirectories == [p("old")])
        #expect(step.removedFiles == [p("a.jpg")])
        #expect(step.movedDirectories.map(\.to) == [p("y")])
        #expect(step.movedFiles.map(\.from) == [p("b.jpg")])
        #expect(step.reads == [p("d.jpg")])
    }

    @Test("Changes in excluded paths are dropped; a move out of one reads, a move into one removes; their scans are dropped")
    func excluded() throws {
        let exclusions = try PathExclusions(patterns: ["Scans"])
        let plan = ChangePlan([.added(p("2024/@eaDir/a.jpg/thumb.jpg")), .added(p("2024/._a.jpg")), .added(p("Scans/s.jpg")),
                               .directoryAdded(p("2024/@eaDir")), .directoryAdded(p("x/Scans")),
                               .moved(from: p("#recycle/b.jpg"), to: p("2024/b.jpg")),
                               .moved(from: p("2024/c.jpg"), to: p("#recycle/c.jpg")),
                               .directoryMoved(from: p("2024/d"), to: p("#recycle/d")), .added(p("2024/a.jpg"))],
                              roots: [root], exclusions: exclusions)
        #expect(plan.steps.flatMap(\.reads) == [p("2024/b.jpg"), p("2024/a.jpg")])
        #expect(plan.steps.flatMap(\.removedFiles) == [p("2024/c.jpg")])
        #expect(plan.steps.flatMap(\.removedDirectories) == [p("2024/d")])
        #expect(plan.scans.isEmpty)
    }

    @Test("Changes below an unavailable mount are dropped (they name another directory's files); scans go through, the walk checks them")
    func offlineMounts() {
        let plan = ChangePlan([.removed(p("usb/a.jpg")), .directoryRemoved(p("usb/trip")), .added(p("usb/b.jpg")),
                               .moved(from: p("usb/c.jpg"), to: p("main/c.jpg")), .directoryMoved(from: p("main/d"), to: p("usb/d")),
                               .removed(p("main/e.jpg")), .rescan(p("usb")), .directoryAdded(p("usb/new"))],
                              roots: [root], offline: [p("usb")])
        #expect(plan.steps.flatMap(\.removedFiles) == [p("main/e.jpg")])
        #expect(plan.steps.flatMap(\.removedDirectories) == [p("main/d")])
        #expect(plan.steps.flatMap(\.reads) == [p("main/c.jpg")])
        #expect(plan.steps.flatMap(\.movedFiles).isEmpty && plan.steps.flatMap(\.movedDirectories).isEmpty)
        #expect(plan.scans == [p("usb")])
        // `usbx` is not below `usb`.
        #expect(ChangePlan([.removed(p("usbx/a.jpg"))], roots: [root], offline: [p("usb")]).steps.flatMap(\.removedFiles)
                == [p("usbx/a.jpg")])
    }

    @Test("A change that the writer would apply before an earlier one starts a new step")
    func orderKept() {
        // Written, then moved away, then a new file written where it was: the move needs a step
        // of its own after the first write (the writer moves before it writes); the second
        // write can follow the move in that step.
        let plan = ChangePlan([.added(p("a.jpg")), .moved(from: p("a.jpg"), to: p("b.jpg")), .added(p("a.jpg"))], roots: [root])
        #expect(plan.steps.count == 2)
        guard plan.steps.count == 2 else { return }
        #expect(plan.steps[0].reads == [p("a.jpg")])
        #expect(plan.steps[1].movedFiles.map(\.to) == [p("b.jpg")])
        #expect(plan.steps[1].reads == [p("a.jpg")])
        // A directory moved after a file in it was written.
        let dirs = ChangePlan([.added(p("d/x.jpg")), .directoryMoved(from: p("d"), to: p("e")), .removed(p("e/x.jpg"))],
                              roots: [root])
        #expect(dirs.steps.count == 3)
    }

    @Test("Paths outside the roots or below a dot-directory are dropped; moves across the boundary are adds or removals")
    func boundaries() {
        let plan = ChangePlan([.added(PathBytes("/elsewhere/a.jpg")), .added(p(".cache/t.jpg")), .added(p("a/.hidden.jpg")),
                               .moved(from: p("in.jpg"), to: p(".trash/in.jpg")), .moved(from: p(".tmp/new.jpg"), to: p("new.jpg")),
                               .directoryMoved(from: p("dir"), to: p(".Trash/dir")), .directoryMoved(from: p(".part"), to: p("done")),
                               .directoryRemoved(root)],
                              roots: [root])
        let all = plan.steps + [plan.afterScans]
        #expect(all.flatMap(\.reads) == [p("new.jpg")])
        #expect(all.flatMap(\.removedFiles) == [p("in.jpg")])
        #expect(all.flatMap(\.removedDirectories) == [p("dir")])  // never the root itself
        #expect(plan.scans == [p("done")])
    }

    @Test("Scans keep only the outermost trees; overflow, unwatched trees and lost roots are reported")
    func followUps() {
        let plan = ChangePlan([.directoryAdded(p("a/b")), .directoryAdded(p("a")), .rescan(p("a/b/c")), .rescan(p("z")),
                               .overflow, .unwatched([p("deep")]), .rootGone(root)], roots: [root])
        #expect(plan.scans == [p("a"), p("z")])
        #expect(plan.overflow)
        #expect(plan.unwatched == [p("deep")])
        #expect(plan.rootsGone == [root])
        #expect(plan.steps.isEmpty)
        // A rescan of a root itself is kept (a .nomedia removed at the top).
        #expect(ChangePlan([.rescan(root)], roots: [root]).scans == [root])
    }

    @Test("With scans, removals nothing else touches wait until after them; the others keep their place")
    func removalsAfterScans() {
        // mkdir best && mv trip best/ && mv a.jpg best/: the new directory's scan must find
        // trip and a.jpg while the index still knows them.
        let moved = ChangePlan([.directoryAdded(p("best")), .directoryRemoved(p("2019/trip")), .movedOut(p("2019/trip")),
                                .removed(p("2019/a.jpg")), .movedOut(p("2019/a.jpg")), .added(p("2019/b.jpg"))], roots: [root])
        #expect(moved.steps.count == 1)
        #expect(moved.steps.first?.reads == [p("2019/b.jpg")])
        #expect(moved.steps.allSatisfy { $0.removedDirectories.isEmpty && $0.removedFiles.isEmpty })
        #expect(moved.afterScans.removedDirectories == [p("2019/trip")])
        #expect(moved.afterScans.removedFiles == [p("2019/a.jpg")])
        #expect(moved.scans == [p("best")])

        // Removed, then a new one of that name, a change inside it, or a scan over it: in place.
        let hints: [WatchChange] = ["x", "y", "z.jpg", "w", "v/sub"].map { .movedOut(p($0)) }
        let kept = ChangePlan([.directoryRemoved(p("x")), .directoryRemoved(p("y")), .removed(p("z.jpg")),
                               .directoryRemoved(p("w")), .directoryAdded(p("x")), .added(p("y/new.jpg")),
                               .removed(p("z.jpg")), .rescan(p("v")), .directoryRemoved(p("v/sub"))] + hints, roots: [root])
        #expect(kept.steps.flatMap(\.removedDirectories) == [p("x"), p("y"), p("v/sub")])
        #expect(kept.steps.flatMap(\.removedFiles) == [p("z.jpg"), p("z.jpg")])
        #expect(kept.afterScans.removedDirectories == [p("w")])
        #expect(kept.afterScans.removedFiles.isEmpty)

        // Without a scan nothing moves: the removals stay in their steps.
        let plain = ChangePlan([.directoryRemoved(p("trip")), .movedOut(p("trip")), .removed(p("a.jpg"))], roots: [root])
        #expect(plain.afterScans.isEmpty)
        #expect(plain.steps.flatMap(\.removedDirectories) == [p("trip")])

        // Deletions (no hint) stay in place: a directory made right after one may reuse its
        // inode, and the scan would take it for the deleted one moved.
        let deleted = ChangePlan([.directoryRemoved(p("old")), .removed(p("a.jpg")), .directoryAdded(p("new"))], roots: [root])
        #expect(deleted.afterScans.isEmpty)
        #expect(deleted.steps.flatMap(\.removedDirectories) == [p("old")])
        #expect(deleted.steps.flatMap(\.removedFiles) == [p("a.jpg")])
    }

    @Test("A scan of the root itself, spelled / or with a trailing slash, keeps the removals below it in place")
    func rootScans() {
        let slash = PathBytes("/")
        #expect(ChangePlan([.removed(PathBytes("/a/b.jpg")), .movedOut(PathBytes("/a/b.jpg")), .rescan(slash)],
                           roots: [slash]).afterScans.isEmpty)
        let trailing = PathBytes("/lib/")
        let plan = ChangePlan([.removed(PathBytes("/lib/a/b.jpg")), .movedOut(PathBytes("/lib/a/b.jpg")), .rescan(trailing)],
                              roots: [trailing])
        #expect(plan.afterScans.isEmpty)
        #expect(plan.steps.flatMap(\.removedFiles) == [PathBytes("/lib/a/b.jpg")])
    }

    @Test("Nested roots: a path belongs to the innermost root")
    func nestedRoots() {
        #expect(ChangePlan.isIndexable(PathBytes("/lib/.x/inner/a.jpg"), roots: [root, PathBytes("/lib/.x/inner")]))
        #expect(!ChangePlan.isIndexable(PathBytes("/lib/.x/a.jpg"), roots: [root, PathBytes("/lib/.x/inner")]))
        #expect(!ChangePlan.isIndexable(PathBytes("/library/a.jpg"), roots: [root]))
    }
}
