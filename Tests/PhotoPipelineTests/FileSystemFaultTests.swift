import Foundation
import PhotoMetadata
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a test does to a file at the worst moment.
enum FileChange: String, CaseIterable, Sendable {
    /// Cut to 20 bytes (a JPEG header without its frame).
    case truncate
    /// Another photo renamed over it (what editors and `rsync` do).
    case replace
    /// Deleted.
    case delete

    /// Applies the change to `path` (the replacement is 800 pixels wide).
    func apply(to path: PathBytes) {
        switch self {
        case .truncate:
            _ = Glibc.truncate(path.string, 20)
        case .replace:
            let temp = PathBytes(path.string + ".tmp")
            try? TemporaryDirectory.writeFile(temp.string, JPEGFixture.make(width: 800, height: 600))
            _ = rename(temp.string, path.string)
        case .delete:
            _ = unlink(path.string)
        }
    }
}

/// A flag set once, from any thread.
final class Once: Sendable {
    private let flag = Atomic<Bool>(false)
    /// True the first time only.
    func first() -> Bool { !flag.exchange(true, ordering: .relaxed) }
    var happened: Bool { flag.load(ordering: .relaxed) }
}

/// A reader that changes one file just before the real reader opens it: between the walk's
/// `stat` and the read.
struct ChangingReader: FileReading {
    let inner: MediaFileReader
    let victim: [UInt8]
    let change: FileChange
    let done = Once()
    var rulesVersion: Int { inner.rulesVersion }

    func read(_ c: Candidate) -> FileOutcome {
        if c.name == victim, done.first() { change.apply(to: c.path) }
        return inner.read(c)
    }
}

@Suite("File-system faults: files changing under the reader, links, depth")
struct FileSystemFaultTests {
    let lib: TemporaryDirectory
    let state: TemporaryDirectory
    init() throws {
        lib = try TemporaryDirectory("fsfault-lib")
        state = try TemporaryDirectory("fsfault-state")
    }

    func cleanup() {
        lib.remove()
        state.remove()
    }

    func makeLibrary() throws {
        for i in 0..<5 { try lib.write("a/keep\(i).jpg", JPEGFixture.make(width: 640, height: 480)) }
        try lib.write("a/victim.jpg", JPEGFixture.make(width: 640, height: 480))
    }

    func indexer(_ pipeline: TestPipeline, reader: any FileReading) -> Indexer {
        pipeline.indexer(reader, workers: 2)
    }

    /// The index's row for the victim must describe the file on disk now (or be gone with it).
    func expectMatchesDisk(_ db: Database, _ change: FileChange) throws {
        let victim = lib("a/victim.jpg")
        let row = try db.read { try $0.file(at: victim) }
        let counts = try db.read { try $0.counts() }
        let assets = try db.read { try $0.assets(limit: 100, offset: 0) }
        switch change {
        case .delete:
            #expect(row == nil, "a file deleted before its read leaves no row (no error for a name that is gone)")
            #expect(counts.errors == 0)
            #expect(counts.files == 5 && assets.count == 5)
        case .truncate:
            let st = try FileStat.of(victim)
            #expect(row?.identity.size == st.size && row?.identity.mtimeNanoseconds == st.mtimeNanoseconds,
                    "the stored identity is the file's as read, not as first measured")
            #expect(row?.status == .error, "a cut JPEG is a per-file error")
            #expect(counts.errors == 1 && assets.count == 5)
        case .replace:
            let st = try FileStat.of(victim)
            #expect(row?.identity.inode == st.inode && row?.identity.size == st.size)
            #expect(row?.status == .media)
            #expect(assets.first { $0.path == victim }?.pixelWidth == 800, "the asset describes the replacement")
            #expect(counts.errors == 0 && assets.count == 6)
        }
    }

    @Test("Truncated, replaced or deleted between the walk's stat and the read", arguments: FileChange.allCases)
    func changedAfterWalk(_ change: FileChange) throws {
        defer { cleanup() }
        try makeLibrary()
        let db = try Database(path: state("f.db").string)
        let pipeline = TestPipeline(db)
        let reader = ChangingReader(inner: MediaFileReader(zone: FixedZone.utc), victim: Array("victim.jpg".utf8), change: change)
        let report = indexer(pipeline, reader: reader).scan(roots: [lib.path])
        #expect(report.files == 6)
        try expectMatchesDisk(db, change)
        // A rescan agrees with the disk: nothing left to read, nothing to remove.
        let again = indexer(pipeline, reader: MediaFileReader(zone: FixedZone.utc)).scan(roots: [lib.path])
        #expect(again.readFiles == 0 && again.removedFiles == 0)
    }

    @Test("Truncated, replaced or deleted between the reader's own stat and its reads", arguments: FileChange.allCases)
    func changedDuringRead(_ change: FileChange) throws {
        defer { cleanup() }
        try makeLibrary()
        let db = try Database(path: state("f.db").string)
        let pipeline = TestPipeline(db)
        let done = Once()
        let reader = MediaFileReader(zone: FixedZone.utc, afterStat: { path in
            if path.lastComponent == Array("victim.jpg".utf8), done.first() { change.apply(to: path) }
        })
        indexer(pipeline, reader: reader).scan(roots: [lib.path])
        #expect(done.happened)
        try expectMatchesDisk(db, change)
        let again = indexer(pipeline, reader: MediaFileReader(zone: FixedZone.utc)).scan(roots: [lib.path])
        #expect(again.readFiles == 0 && again.removedFiles == 0)
    }

    @Test("A file that never stops changing is read a bounded number of times, then left for the next look")
    func endlessWriter() throws {
        defer { cleanup() }
        try lib.write("a/busy.jpg", JPEGFixture.make(width: 640, height: 480))
        let reads = ReadCounter()
        let opened = ReadCounter()
        let reader = MediaFileReader(zone: FixedZone.utc, reads: reads, afterStat: { path in
            opened.increment()
            let n = opened.value
            _ = Glibc.truncate(path.string, off_t(1000 + n))  // another size at every read
        })
        let outcome = reader.read(Candidate(directory: lib("a"), name: Array("busy.jpg".utf8),
                                            identity: FileIdentity(fsid: 1, inode: 0, size: 0, mtimeNanoseconds: 0)))
        #expect(opened.value == MediaFileReader.maxAttempts)
        #expect(reads.value == 1)
        // The identity is the one measured before the last read: it differs from the disk's, so
        // the next comparison reads the file again.
        #expect(outcome.identity.size != (try FileStat.of(lib("a/busy.jpg"))).size)
    }

    @Test("Symbolic link loops, links to an ancestor and to the root: not followed, no hang, counted once")
    func symlinkLoops() throws {
        defer { cleanup() }
        try lib.write("x/y/photo.jpg", [1])
        try lib.write("z/other.jpg", [2])
        #expect(symlink("b.jpg", lib("z/a.jpg").string) == 0)          // a -> b -> a
        #expect(symlink("a.jpg", lib("z/b.jpg").string) == 0)
        #expect(symlink("self", lib("z/self").string) == 0)            // a link to itself
        #expect(symlink("../..", lib("x/y/up").string) == 0)           // a directory link to an ancestor
        #expect(symlink(lib.path.string, lib("x/root").string) == 0)   // to the root, absolute
        #expect(symlink("loopdir", lib("loopdir").string) == 0)
        let db = try Database(path: state("f.db").string)
        let pipeline = TestPipeline(db)
        let reader = FakeReader()
        let report = indexer(pipeline, reader: reader).scan(roots: [lib.path])
        #expect(report.files == 2)
        #expect(reader.reads.value == 2)
        #expect(try db.read { try $0.counts() }.directories == 4)  // root, x, x/y, z
        #expect(indexer(pipeline, reader: reader).scan(roots: [lib.path]).readFiles == 0)
    }

    /// Makes `levels` nested directories named `name` below `top` through `mkdirat`/`openat`
    /// (paths past PATH_MAX cannot be made by path), with a file `f<level>.jpg` in each.
    static func nest(_ top: PathBytes, levels: Int, name: String) throws -> Int {
        var fd = open(top.string, O_DIRECTORY | O_RDONLY)
        #expect(fd >= 0)
        var length = top.bytes.count
        for level in 0..<levels {
            #expect(mkdirat(fd, name, 0o755) == 0)
            let next = openat(fd, name, O_DIRECTORY | O_RDONLY)
            #expect(next >= 0)
            close(fd)
            fd = next
            length += 1 + name.utf8.count
            let file = openat(fd, "f\(level).jpg", O_WRONLY | O_CREAT, 0o644)
            #expect(file >= 0)
            _ = write(file, [1, 2, 3], 3)
            close(file)
        }
        close(fd)
        return length
    }

    /// `rm -rf`: it removes trees deeper than PATH_MAX (FileManager does not).
    static func removeTree(_ path: PathBytes) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/rm")
        p.arguments = ["-rf", path.string]
        try? p.run()
        p.waitUntilExit()
    }

    @Test("1,000 nested directories, and a chain past PATH_MAX: no recursion, no hang; past PATH_MAX a clear error")
    func deepTrees() throws {
        defer {
            Self.removeTree(lib.path)
            state.remove()
        }
        try lib.makeDirectory("shallow")
        try lib.makeDirectory("long")
        let depth = try Self.nest(lib("shallow"), levels: 1000, name: "d")
        #expect(depth < Int(PATH_MAX))
        // 30 levels of 200-byte names: 6,000 bytes; the directories from the 20th on are past PATH_MAX.
        let name = String(repeating: "n", count: 200)
        _ = try Self.nest(lib("long"), levels: 30, name: name)
        let reachable = (0..<30).filter { lib("long").bytes.count + ($0 + 1) * 201 < Int(PATH_MAX) }.count

        let db = try Database(path: state("f.db").string)
        let pipeline = TestPipeline(db)
        let reader = FakeReader()
        let indexer = indexer(pipeline, reader: reader)
        let report = indexer.scan(roots: [lib.path])
        #expect(report.files == 1000 + reachable)
        #expect(try db.read { try $0.counts() }.files == 1000 + reachable)
        let unreadable = indexer.status.unreadableDirectories
        #expect(unreadable.count == 1, "\(unreadable)")
        #expect(unreadable.first?.key.bytes.count ?? 0 >= Int(PATH_MAX))
        #expect(unreadable.first?.value.contains("PATH_MAX") == true)
        // Unchanged: nothing read again, nothing removed (the part past PATH_MAX included).
        let again = indexer.scan(roots: [lib.path])
        #expect(again.readFiles == 0 && again.removedFiles == 0 && again.removedDirectories == 0)
        #expect(indexer.status.unreadableDirectories.count == 1)
        // The whole tree goes: every row of it goes (no recursion on the way either).
        Self.removeTree(lib("shallow"))
        let removed = indexer.scan(roots: [lib.path])
        #expect(removed.removedDirectories == 1)
        let left = try db.read { try $0.counts() }
        #expect(left.files == reachable, "\(left) \(removed)")
    }
}
