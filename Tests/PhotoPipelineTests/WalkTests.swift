import Foundation
import PhotoModel
@testable import PhotoPipeline
@testable import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing

/// A `FileReading` that makes every file an asset without opening it, and counts the reads.
struct FakeReader: FileReading {
    let reads = ReadCounter()
    var rulesVersion = 1
    /// Every file's fingerprint (with equal sizes, equal content).
    var fingerprint: UInt64?
    func read(_ c: Candidate) -> FileOutcome {
        reads.increment()
        let media = MediaFields(mediaType: .image, format: "jpeg",
                                 captureDate: CaptureDate(local: LocalDateTime(year: 2020, month: 1, day: 1)!, offset: nil,
                                                          source: .fileModified))
        return FileOutcome(directory: c.directory, name: c.name, identity: c.identity, fingerprint: fingerprint, kind: .media(media))
    }
}

@Suite("Directory walk and scan")
struct WalkTests {
    let lib: TemporaryDirectory
    let state: TemporaryDirectory
    init() throws {
        lib = try TemporaryDirectory("walk-lib")
        state = try TemporaryDirectory("walk-state")
    }

    func cleanup() {
        lib.remove()
        state.remove()
    }

    /// Runs one walk and returns the jobs it emitted.
    func walk(_ db: Database) -> [Job] {
        var jobs: [Job] = []
        let pipeline = TestPipeline(db, roots: [lib.path])
        var w = Walk(database: db, logger: .silent, status: Locked(IndexerStatus()), trees: pipeline.trees, roots: [lib.path],
                     emit: { jobs.append($0) })
        w.walk(root: lib.path)
        w.finish()
        return jobs
    }

    @Test("Chunks hold at most 50 files; dot-files, .nomedia trees and symbolic links are skipped")
    func chunking() throws {
        defer { cleanup() }
        for i in 0..<137 { try lib.write("a/f\(i).jpg", [1]) }
        for i in 0..<3 { try lib.write("b/g\(i).jpg", [1]) }
        try lib.write(".cache/x.jpg", [1])
        try lib.write("a/.hidden.jpg", [1])
        try lib.write("excluded/.nomedia", [])
        try lib.write("excluded/deep/y.jpg", [1])
        #expect(symlink(lib("a/f0.jpg").string, lib("b/link.jpg").string) == 0)
        #expect(symlink(lib("a").string, lib("linkdir").string) == 0)
        let db = try Database(path: state("w.db").string)
        _ = try db.write { try $0.registerRoots([lib.path]) }
        let jobs = walk(db)
        let sizes = jobs.map(\.candidates.count)
        #expect(sizes.allSatisfy { $0 <= Indexer.chunkSize })
        #expect(sizes.reduce(0, +) == 140)
        #expect(jobs.map(\.sequence) == Array(0..<jobs.count))
        let names = Set(jobs.flatMap(\.candidates).map { String(decoding: $0.name, as: UTF8.self) })
        #expect(!names.contains(".hidden.jpg"))
        #expect(!names.contains("x.jpg"))
        #expect(!names.contains("y.jpg"))
        #expect(!names.contains("link.jpg"))
        // A directory's visit is emitted with or after its last file.
        for (index, job) in jobs.enumerated() {
            for visit in job.batch.directories {
                let later = jobs[(index + 1)...].flatMap(\.candidates).filter { $0.directory == visit.path }
                #expect(later.isEmpty, "visit of \(visit.path) before its files")
            }
        }
    }

    @Test("Excluded folders and files are not indexed; a new pattern sends what it matches to Recently Deleted, dropping it brings them back")
    func exclusions() throws {
        defer { cleanup() }
        try lib.write("2024/a.jpg", [1])
        try lib.write("2024/@eaDir/a.jpg/SYNOPHOTO_THUMB_XL.jpg", [2])
        try lib.write("2024/._a.jpg", [3])
        try lib.write("#recycle/old.jpg", [4])
        try lib.write("Scans/s1.jpg", [5])
        try lib.write("Scans/deep/s2.jpg", [6])
        let db = try Database(path: state("w.db").string)
        let pipeline = TestPipeline(db)
        let defaults = try PathExclusions(patterns: [])
        var report = pipeline.indexer(exclusions: defaults).scan(roots: [lib.path])
        #expect(report.readFiles == 3)
        #expect(try db.read { try $0.counts() }.assets == 3)

        report = pipeline.indexer(exclusions: try PathExclusions(patterns: ["/Scans"])).scan(roots: [lib.path])
        #expect(report.readFiles == 0)
        var counts = try db.read { try $0.counts() }
        #expect(counts.assets == 1 && counts.recentlyDeleted == 2)

        report = pipeline.indexer(exclusions: defaults).scan(roots: [lib.path])
        counts = try db.read { try $0.counts() }
        #expect(counts.assets == 3 && counts.recentlyDeleted == 0)
        #expect(report.restoredFiles == 2)

        // Without the defaults, the NAS's folders are files like any other.
        _ = pipeline.indexer(exclusions: .none).scan(roots: [lib.path])
        #expect(try db.read { try $0.counts() }.assets == 5, "._a.jpg stays out: a dot-file")
    }

    @Test("A rescan reads nothing unchanged, reads what changed, removes what vanished")
    func rescan() throws {
        defer { cleanup() }
        for i in 0..<10 { try lib.write("a/f\(i).jpg", [UInt8(i)]) }
        try lib.write("b/c/g.jpg", [1])
        let db = try Database(path: state("w.db").string)
        let reader = FakeReader()
        let pipeline = TestPipeline(db)
        let indexer = pipeline.indexer(reader)
        var report = indexer.scan(roots: [lib.path])
        #expect(report.readFiles == 11)
        #expect(reader.reads.value == 11)
        report = indexer.scan(roots: [lib.path])
        #expect(report.readFiles == 0)
        #expect(reader.reads.value == 11)

        try lib.write("a/f3.jpg", [9, 9])  // size changes
        try FileManager.default.removeItem(atPath: lib("a/f4.jpg").string)
        try FileManager.default.removeItem(atPath: lib("b").string)
        report = indexer.scan(roots: [lib.path])
        #expect(report.readFiles == 1)
        #expect(report.removedFiles == 1)
        #expect(report.removedDirectories == 1)
        #expect(try db.read { try $0.counts() }.assets == 9)
    }

    @Test("A file another writer holds open (a copy in progress) is left for its close; read once it is complete")
    func busyFileSkipped() throws {
        defer { cleanup() }
        try lib.write("a/done.jpg", [1, 2, 3])
        try lib.write("a/copying.jpg", [1])
        let db = try Database(path: state("w.db").string)
        let reader = FakeReader()
        let pipeline = TestPipeline(db)
        let indexer = pipeline.indexer(reader)
        let writer = open(lib("a/copying.jpg").string, O_WRONLY | O_APPEND)
        #expect(writer >= 0)
        var report = indexer.scan(roots: [lib.path])
        // Leases cannot be taken everywhere (someone else's file without CAP_LEASE, some file
        // systems): then the file is read as before.
        let dir = try Directory(path: lib("a"))
        let leases = FileStat.isOpenForWriting(dir.descriptor, Array("copying.jpg".utf8)) != nil
        #expect(report.readFiles == (leases ? 1 : 2))
        #expect(write(writer, [2, 3], 2) == 2)
        close(writer)
        report = indexer.scan(roots: [lib.path])
        #expect(report.readFiles == 1)
        #expect(reader.reads.value == (leases ? 2 : 3))
        #expect(try db.read { try $0.counts() }.files == 2)
    }

    @Test("An emptied root (an unmounted disk) is unavailable and nothing is removed")
    func emptiedRoot() throws {
        defer { cleanup() }
        for i in 0..<5 { try lib.write("d/f\(i).jpg", [1]) }
        let db = try Database(path: state("w.db").string)
        let pipeline = TestPipeline(db)
        let indexer = pipeline.indexer()
        indexer.scan(roots: [lib.path])
        try FileManager.default.removeItem(atPath: lib("d").string)
        let report = indexer.scan(roots: [lib.path])
        #expect(report.removedDirectories == 0)
        #expect(pipeline.trees.unavailableRoots[lib.path]?.contains("mounted") == true)
        #expect(try db.read { try $0.counts() }.assets == 5)
    }

    @Test("Newer reading rules read every file again once, in each root as it is scanned whole; a fresh root is recorded at once")
    func newerRulesReadAgain() throws {
        defer { cleanup() }
        for i in 0..<5 { try lib.write("d/f\(i).jpg", [1]) }
        let other = try TemporaryDirectory("walk-other")
        defer { other.remove() }
        try other.write("x.jpg", [1])
        let db = try Database(path: state("w.db").string)
        let pipeline = TestPipeline(db)
        func scan(_ roots: [PathBytes], version: Int) -> (ScanReport, Int) {
            let reader = FakeReader(rulesVersion: version)
            let indexer = pipeline.indexer(reader)
            return (indexer.scan(roots: roots), reader.reads.value)
        }
        #expect(scan([lib.path, other.path], version: 1).1 == 6)
        #expect(scan([lib.path, other.path], version: 1).1 == 0)
        // Free pages in the file (what rows rewritten at once leave behind, in a large library).
        try db.write { w in
            try w.connection.execute("CREATE TABLE junk (x BLOB); INSERT INTO junk VALUES (zeroblob(400000)); DROP TABLE junk;")
        }
        #expect((try db.read { try $0.connection.scalar("PRAGMA freelist_count").int64 } ?? 0) > 50)
        // The rules change: one root scanned alone first (a root that came back), then both.
        #expect(scan([other.path], version: 2).1 == 1)
        #expect(scan([lib.path, other.path], version: 2).1 == 5)
        #expect(scan([lib.path, other.path], version: 2).1 == 0)
        // The file was compacted after the re-read (VACUUM leaves no free page) and is whole.
        #expect(try db.read { try $0.connection.scalar("PRAGMA freelist_count").int64 } == 0)
        #expect(try db.read { try $0.connection.scalar("PRAGMA integrity_check").string } == "ok")
        // A new root, empty in the index: nothing to read again later.
        let fresh = try TemporaryDirectory("walk-fresh")
        defer { fresh.remove() }
        try fresh.write("y.jpg", [1])
        #expect(scan([fresh.path], version: 3).1 == 1)
        #expect(scan([fresh.path], version: 3).1 == 0)
        #expect(try db.read { try $0.counts() }.files == 7)
    }

    /// The visible assets by file name.
    static func visibleIDs(_ db: Database) throws -> [String: AssetID] {
        var ids: [String: AssetID] = [:]
        for asset in try db.read({ try $0.assets(limit: 10, offset: 0) }) { ids[String(decoding: asset.path.lastComponent, as: UTF8.self)] = asset.id }
        return ids
    }

    /// Visible assets no file refers to: there must be none.
    static func filelessVisible(_ db: Database) throws -> Int64? {
        try db.read {
            try $0.connection.scalar("SELECT count(*) FROM assets a WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.asset_pk = a.pk) AND a.deleted_at IS NULL").int64
        }
    }

    /// A full re-read finds every file's content again, and Recently Deleted keeps tombstones of
    /// the same content (a duplicate deleted): a file still where its row says is the same file,
    /// and keeps its own asset.
    @Test("Reading every file again under newer rules leaves each file its asset: the original does not take a deleted copy's")
    func newerRulesKeepEachFilesAsset() throws {
        defer { cleanup() }
        try lib.write("d/a.jpg", [1, 2, 3])
        try lib.write("d/copy.jpg", [1, 2, 3])
        let db = try Database(path: state("w.db").string)
        let pipeline = TestPipeline(db)
        func scan(version: Int) { pipeline.indexer(FakeReader(rulesVersion: version, fingerprint: 42)).scan(roots: [lib.path]) }
        scan(version: 1)
        let before = try Self.visibleIDs(db)
        #expect(before.count == 2)
        #expect(unlink(lib("d/copy.jpg").string) == 0)
        scan(version: 1)
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)
        scan(version: 2)
        #expect(try Self.visibleIDs(db) == ["a.jpg": try #require(before["a.jpg"])])
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)
        #expect(try Self.filelessVisible(db) == 0)
    }

    /// A file whose new content is a deleted file's (a backup copied over it): the deleted
    /// asset comes back to the file, and the asset the file held goes to Recently Deleted —
    /// never left visible without a file.
    @Test("A file overwritten with a deleted file's content takes that asset back, and its own asset goes to Recently Deleted")
    func overwrittenWithDeletedContent() throws {
        defer { cleanup() }
        try lib.write("d/a.jpg", [1, 2, 3])
        try lib.write("d/b.jpg", [4, 5, 6, 7])
        let db = try Database(path: state("w.db").string)
        let pipeline = TestPipeline(db)
        func scan() { pipeline.indexer(FakeReader(fingerprint: 42)).scan(roots: [lib.path]) }
        scan()
        let before = try Self.visibleIDs(db)
        #expect(before.count == 2)
        #expect(unlink(lib("d/b.jpg").string) == 0)
        scan()
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)
        try lib.write("d/a.jpg", [4, 5, 6, 7])
        scan()
        #expect(try Self.visibleIDs(db) == ["a.jpg": try #require(before["b.jpg"])])
        #expect(try db.read { try $0.counts() }.recentlyDeleted == 1)
        #expect(try Self.filelessVisible(db) == 0)
    }

    @Test("Many directories without new files still commit in bounded jobs")
    func boundedExtras() throws {
        defer { cleanup() }
        for i in 0..<1200 { try lib.makeDirectory("d\(i)") }
        let db = try Database(path: state("w.db").string)
        _ = try db.write { try $0.registerRoots([lib.path]) }
        let jobs = walk(db)
        #expect(jobs.allSatisfy { $0.batch.directories.count <= Walk.extrasPerJob })
        #expect(jobs.map(\.batch.directories.count).reduce(0, +) == 1201)
    }

    /// How a folder the walk finds gone from its parent's listing is renamed again before the
    /// walk reaches it: back to its indexed name, or on to a third one.
    enum RenameDuringWalk: String, CaseIterable, CustomTestStringConvertible {
        case back = "A.moved", on = "A.renamed"
        var testDescription: String { self == .back ? "renamed back" : "renamed on" }
    }

    @Test("A folder renamed back and forth while the walk goes by keeps its assets: walked where it is, never removed",
          arguments: RenameDuringWalk.allCases)
    func renamedDuringWalk(_ how: RenameDuringWalk) throws {
        defer { cleanup() }
        for name in ["x.jpg", "y.jpg"] { try lib.write("A/\(name)", [1]) }
        let db = try Database(path: state("w.db").string)
        let pipeline = TestPipeline(db, roots: [lib.path])
        pipeline.indexer().scan(roots: [lib.path])
        let before = Dictionary(uniqueKeysWithValues: try db.read { try $0.assets(limit: 10, offset: 0) }.map { ($0.path.lastComponent, $0.id) })
        #expect(before.count == 2)

        // Renamed while photod was down; the walk lists the root (A.moved, and 50 new files whose
        // job it emits), and the folder is renamed again before its turn: the walk finds nothing
        // at A.moved.
        #expect(rename(lib("A").string, lib("A.moved").string) == 0)
        for i in 0..<Indexer.chunkSize { try lib.write("n\(i).jpg", [2]) }
        let final = how == .back ? lib("A") : lib("A.renamed")
        var jobs: [Job] = []
        var w = Walk(database: db, logger: .silent, status: Locked(IndexerStatus()), trees: pipeline.trees, roots: [lib.path],
                     emit: { job in
                         if jobs.isEmpty { #expect(Glibc.rename(lib("A.moved").string, final.string) == 0) }
                         jobs.append(job)
                         // Moves are waited for: applied here, as the writer would.
                         if let done = job.committed {
                             #expect(throws: Never.self) { _ = try db.write { try $0.apply(job.batch, now: 2) } }
                             done.signal()
                         }
                     }, lookForMoves: true)
        w.deferNewFiles = false
        w.walk(root: lib.path)
        w.finish()

        #expect(!jobs.flatMap(\.batch.removedDirectories).contains(lib("A")), "the folder was removed")
        #expect(jobs.flatMap(\.candidates).allSatisfy { $0.directory == lib.path }, "the folder's files were read again")
        for job in jobs where job.committed == nil { _ = try db.write { try $0.apply(job.batch, now: 3) } }
        let after = try db.read { try $0.assets(limit: 10, offset: 0) }
        for name in ["x.jpg", "y.jpg"] {
            let asset = after.first { $0.path == final.appending(Array(name.utf8)) }
            #expect(asset?.id == before[Array(name.utf8)], "\(name) lost its id")
        }
    }
}

@Suite("Bounded channel")
struct ChannelTests {
    @Test("Delivers everything in order to one receiver, then nil after close")
    func drains() {
        let c = Channel<Int>(capacity: 3)
        let received = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let t = Thread {
            while let v = c.receive() { received.withLock { $0.append(v) } }
            done.signal()
        }
        t.start()
        for i in 0..<1000 { c.send(i) }
        c.close()
        done.wait()
        #expect(received.withLock { $0 } == Array(0..<1000))
        #expect(c.receive() == nil)
    }

    @Test("Several receivers all stop at close")
    func manyReceivers() {
        let c = Channel<Int>(capacity: 2)
        let total = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                while let v = c.receive() { total.withLock { $0 += v } }
                group.leave()
            }.start()
        }
        for i in 1...500 { c.send(i) }
        c.close()
        group.wait()
        #expect(total.withLock { $0 } == 500 * 501 / 2)
    }
}

@Suite("Default paths")
struct DefaultPathsTests {
    @Test("Precedence: PHOTOD_SOCKET, RUNTIME_DIRECTORY, XDG_RUNTIME_DIR, then /run or /tmp")
    func socket() {
        #expect(DefaultPaths(environment: ["PHOTOD_SOCKET": "/x/s", "RUNTIME_DIRECTORY": "/r"], uid: 5).socket == "/x/s")
        #expect(DefaultPaths(environment: ["RUNTIME_DIRECTORY": "/r:/other", "XDG_RUNTIME_DIR": "/u"], uid: 5).socket == "/r/photod.sock")
        #expect(DefaultPaths(environment: ["XDG_RUNTIME_DIR": "/run/user/5"], uid: 5).socket == "/run/user/5/photod.sock")
        #expect(DefaultPaths(environment: [:], uid: 0).socket == "/run/photod/photod.sock")
        #expect(DefaultPaths(environment: [:], uid: 5).socket == "/tmp/photod-5/photod.sock")
        #expect(DefaultPaths(environment: ["XDG_RUNTIME_DIR": "/u"], uid: 5).clientSockets == ["/u/photod.sock", "/run/photod/photod.sock"])
        #expect(DefaultPaths(environment: ["PHOTOD_SOCKET": "/x/s"], uid: 5).clientSockets == ["/x/s"])
        #expect(DefaultPaths(environment: [:], uid: 0).clientSockets == ["/run/photod/photod.sock"])
    }

    @Test("Precedence: PHOTOD_DATABASE, STATE_DIRECTORY, XDG_STATE_HOME, then /var/lib or ~/.local/state")
    func database() {
        #expect(DefaultPaths(environment: ["PHOTOD_DATABASE": "/d.db", "STATE_DIRECTORY": "/s"], uid: 5).database == "/d.db")
        #expect(DefaultPaths(environment: ["STATE_DIRECTORY": "/s", "XDG_STATE_HOME": "/x"], uid: 5).database == "/s/photod.db")
        #expect(DefaultPaths(environment: ["XDG_STATE_HOME": "/x", "HOME": "/h"], uid: 5).database == "/x/photod/photod.db")
        #expect(DefaultPaths(environment: ["HOME": "/h"], uid: 5).database == "/h/.local/state/photod/photod.db")
        #expect(DefaultPaths(environment: ["HOME": "/root"], uid: 0).database == "/var/lib/photod/photod.db")
    }

    @Test("Paths are made absolute and normalised without resolving links")
    func normalise() {
        #expect(DefaultPaths.normalized("/a//b/./c/../d/") == "/a/b/d")
        #expect(DefaultPaths.absolute("/x/../y") == "/y")
        #expect(DefaultPaths.absolute("rel").string.hasSuffix("/rel"))
    }
}
