import Dispatch
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing

/// The pure and the timed parts of `Trees`: which mounts a change of the table concerns, and
/// probes that do not answer.
@Suite("Trees")
struct TreesTests {
    static func entry(_ id: UInt64, _ point: String, source: String = "/dev/sdb1") -> MountEntry {
        MountEntry(id: id, parentID: 1, root: "/", mountPoint: PathBytes(point), fsType: "ext4", source: source)
    }

    static let root = entry(1, "/", source: "/dev/sda1")

    @Test("A change of the mount table concerns the mounts that came, went or were mounted again; not one whose folder above was renamed")
    func changedMountPoints() {
        let before = MountTable(entries: [Self.root, Self.entry(7, "/lib/disks/usb")])
        #expect(Trees.changedMountPoints(nil, before) == ["/", "/lib/disks/usb"], "no earlier table: every mount")
        #expect(Trees.changedMountPoints(before, before).isEmpty)
        #expect(Trees.changedMountPoints(before, MountTable(entries: [Self.root])) == ["/lib/disks/usb"], "unmounted")
        #expect(Trees.changedMountPoints(before, MountTable(entries: [Self.root, Self.entry(7, "/lib/disks/usb"),
                                                                      Self.entry(8, "/lib/card")])) == ["/lib/card"], "mounted")
        #expect(Trees.changedMountPoints(before, MountTable(entries: [Self.root, Self.entry(9, "/lib/disks/usb")])) == ["/lib/disks/usb"],
                "mounted again: another mount at the same place")
        #expect(Trees.changedMountPoints(before, MountTable(entries: [Self.root, Self.entry(7, "/lib/drives/usb")])).isEmpty,
                "the folder above renamed: the watcher's move carries it")
        #expect(Trees.changedMountPoints(before, MountTable(entries: [Self.root, Self.entry(7, "/lib/disks/stick")]))
                == ["/lib/disks/usb", "/lib/disks/stick"], "moved elsewhere (mount --move): gone here, there there")
    }

    @Test("A mount point in an excluded folder (a NAS's #snapshot) is no tree of the library; one beside it is")
    func mountsInExcludedFolders() throws {
        let state = try TemporaryDirectory("trees-excluded")
        defer { state.remove() }
        let db = try Database(path: state("t.db").string)
        let queue = SortQueue(database: db, logger: .silent)
        queue.start()
        defer { queue.stop() }
        let trees = Trees(roots: ["/lib"], database: db, sortQueue: queue, logger: .silent,
                          exclusions: try PathExclusions(patterns: ["/Scans"]))
        trees.update(MountTable(entries: [Self.root, Self.entry(7, "/lib/#snapshot/GMT+01_2024.01.01"), Self.entry(8, "/lib/usb"),
                                          Self.entry(9, "/lib/Scans/card"), Self.entry(10, "/lib/a/@eaDir/x")]))
        #expect(trees.trees(below: "/lib") == ["/lib/usb"])
    }

    @Test("A probe that does not answer in time is abandoned: its tree answers 'not answering' at once until the call returns, then is looked at again")
    func hungProbe() throws {
        let answered = Locked<[PathBytes]>([])
        let prober = Prober(deadline: .milliseconds(100), onAnswer: { tree in answered.withLock { $0.append(tree) } })
        #expect(prober.run("/lib") { 42 } == 42)
        let release = DispatchSemaphore(value: 0)
        let started = ContinuousClock.now
        #expect(prober.run("/lib/net") { release.wait(); return 1 } == nil)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(prober.notAnswering == ["/lib/net"])
        // While it hangs, its tree is not probed again (no thread more), the others are.
        #expect(prober.run("/lib/net") { 2 } == nil)
        #expect(prober.run("/lib") { 3 } == 3)
        let done = DispatchSemaphore(value: 0)
        let owner = ThreadOwner()
        owner.adopt { _ = prober.run("/lib/other") { done.signal(); return 0 } }
        done.wait()
        #expect(owner.waitUntilEnded(timeout: .seconds(5)).isEmpty, "a probe that answers leaves no thread")
        release.signal()
        try eventually("the hung call to return", timeout: .seconds(5)) { !answered.withLock { $0.isEmpty } }
        #expect(answered.withLock { $0 } == ["/lib/net"], "the hung call returned: the tree may be looked at again")
        #expect(prober.notAnswering.isEmpty)
        #expect(prober.run("/lib/net") { 5 } == 5)
    }
}
