import Foundation
import PhotoModel
@testable import PhotoPipeline
import PhotoSystem
import PhotoTesting
import Testing

@Suite("The lister: directories listed ahead of the walk")
struct ListerTests {
    /// The listing of `path` once the lister has made it (two seconds at most).
    static func take(_ lister: Lister, _ path: PathBytes) throws -> Lister.Listing {
        let listing = try eventually("the listing of \(path)", timeout: .seconds(2)) { lister.take(path) } until: { $0 != nil }
        return listing!
    }

    /// Waits until the lister has listed all it will (a small tree, within its budget).
    static func waitFinished(_ lister: Lister) throws {
        try eventually("the lister to finish", timeout: .seconds(10)) { lister.isFinished }
    }

    @Test("It lists in the walk's order, by the walk's rules: no dot-folders, links or .nomedia trees; files with their stats")
    func order() throws {
        let dir = try TemporaryDirectory("lister")
        defer { dir.remove() }
        try CensusTests.tree(dir)
        let lister = Lister()
        lister.start(dir.path, isMountPoint: { _ in false })
        defer { lister.stop() }
        let root = try Self.take(lister, dir.path)
        #expect(root.entries.map { String(decoding: $0.name, as: UTF8.self) }
                    == [".hidden.jpg", ".thumbs", "2020", "2021", "a.jpg", "empty", "link.jpg", "linked-folder", "notes.txt", "skip"])
        let statted = zip(root.entries, root.stats).filter { $0.1 != nil }.map { String(decoding: $0.0.name, as: UTF8.self) }
        #expect(statted == ["a.jpg", "notes.txt"], "files only, dot-files left out")
        #expect(root.stats[4]?.size == 3)
        // The tree is far below the budget: the lister finishes. A miss drops nothing, so a
        // dot-folder listed right after the root would be found here.
        try Self.waitFinished(lister)
        #expect(lister.take(dir(".thumbs")) == nil, "a dot-folder is not entered")
        for path in ["2020", "2020/deep", "2020/deep/er", "2021", "empty", "skip"] {
            #expect(lister.take(dir(path)) != nil, "\(path)")
        }
        #expect(lister.take(dir("skip/sub")) == nil, "a .nomedia tree is not entered")
    }

    @Test("A listing stops matching its directory once an entry is added; a mount point below the start is not entered")
    func staleAndMounts() throws {
        let dir = try TemporaryDirectory("lister-stale")
        defer { dir.remove() }
        try CensusTests.tree(dir)
        let lister = Lister()
        lister.start(dir.path, isMountPoint: { $0 == dir("2021") })
        defer { lister.stop() }
        let root = try Self.take(lister, dir.path)
        #expect(root.matches(try FileStat.of(dir.path)))
        // Past the kernel's coarse clock tick (a file's times move in steps of a few ms): what is
        // compared is the directory's time, so time must pass; there is nothing to await.
        usleep(20_000)
        try dir.write("new.jpg", [9])
        #expect(!root.matches(try FileStat.of(dir.path)), "the walk lists it again")
        for path in ["2020", "2020/deep", "2020/deep/er"] { _ = try Self.take(lister, dir(path)) }
        try Self.waitFinished(lister)
        #expect(lister.take(dir("2021")) == nil, "the mount point is the walk's to check")
        _ = try Self.take(lister, dir("empty"))
    }

    @Test("The walk that reaches the directory being listed waits for its listing instead of stating its files too")
    func waitsForTheDirectoryBeingListed() throws {
        let dir = try TemporaryDirectory("lister-wait")
        defer { dir.remove() }
        for i in 0..<5_000 { try dir.write("big/\(i).jpg", [1]) }
        try dir.write("next/a.jpg", [1])
        let lister = Lister()
        lister.start(dir.path, isMountPoint: { _ in false })
        defer { lister.stop() }
        _ = try Self.take(lister, dir.path)
        try eventually("the lister to list big", timeout: .seconds(10)) { lister.listingNow == dir("big") || lister.isFinished }
        // Being listed, or listed since: either way the walk gets the listing, with every stat.
        let big = try #require(lister.take(dir("big"), sharing: dir("next")))
        #expect(big.stats.compactMap { $0 }.count == 5_000)
    }

    @Test("A listing the walk waits for is taken beyond the budget: the lister held by it does not leave the walk waiting")
    func waitedForBeyondTheBudget() throws {
        let dir = try TemporaryDirectory("lister-budget")
        defer { dir.remove() }
        for i in 0..<20 { try dir.write("a/\(i).jpg", [1]) }
        let lister = Lister(budget: 10)
        lister.start(dir.path, isMountPoint: { _ in false })
        defer { lister.stop() }
        // The root's listing is held (nobody takes it); a's 20 entries exceed the budget beside it.
        try eventually("the lister to be held with a's listing", timeout: .seconds(10)) { lister.listingNow == dir("a") }
        #expect(lister.take(dir("a")) != nil)
    }

    @Test("A directory the walk listed itself is not listed again with stats, nor held: the lister goes on below it")
    func passedByTheWalk() throws {
        let dir = try TemporaryDirectory("lister-passed")
        defer { dir.remove() }
        try CensusTests.tree(dir)
        let lister = Lister()
        lister.passed(dir("2020"))  // before the lister reaches it
        lister.start(dir.path, isMountPoint: { _ in false })
        defer { lister.stop() }
        _ = try Self.take(lister, dir.path)
        try Self.waitFinished(lister)
        #expect(lister.take(dir("2020")) == nil)
        for path in ["2020/deep", "2020/deep/er", "2021"] { #expect(lister.take(dir(path)) != nil, "\(path)") }
    }

    @Test("At most its budget of entries is held ahead; each take makes room; a directory not asked for is dropped; stop ends it")
    func budget() throws {
        let dir = try TemporaryDirectory("lister-budget")
        defer { dir.remove() }
        for d in 0..<10 {
            for f in 0..<10 { try dir.write("d\(d)/f\(f).jpg", [1]) }
        }
        let lister = Lister(budget: 25)
        lister.start(dir.path, isMountPoint: { _ in false })
        defer { lister.stop() }
        _ = try Self.take(lister, dir.path)
        // What is tested is that no more is listed however long the walk takes to ask: a span of
        // time with nothing to await.
        usleep(200_000)
        #expect(lister.heldEntries <= 25 && lister.heldEntries >= 10, "\(lister.heldEntries)")
        _ = try Self.take(lister, dir("d0"))
        // d1 is never asked for: taking d2 drops it.
        _ = try Self.take(lister, dir("d2"))
        #expect(lister.take(dir("d1")) == nil)
        for d in 3..<10 { _ = try Self.take(lister, dir("d\(d)")) }
        lister.stop()
        #expect(lister.heldEntries == 0)
    }
}
