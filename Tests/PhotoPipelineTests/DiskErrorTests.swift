import Foundation
import PhotoMetadata
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing

/// A reader whose disk fails: the files named in `failing` give an I/O error, as the metadata
/// reader reports `EIO` (`unreadable`); the others read as `FakeReader`'s assets.
final class FailingDiskReader: FileReading {
    let failing = Locked<Set<String>>([])
    let rulesVersion: Int

    init(rulesVersion: Int = 1) { self.rulesVersion = rulesVersion }

    func read(_ c: Candidate) -> FileOutcome {
        if failing.withLock({ $0.contains(String(decoding: c.name, as: UTF8.self)) }) {
            return FileOutcome(directory: c.directory, name: c.name, identity: c.identity, fingerprint: nil,
                               kind: .error(code: MetadataError.Code.unreadable.rawValue,
                                            message: "cannot read the file: pread: Input/output error"))
        }
        return FakeReader().read(c)
    }
}

/// Reads that fail on a dying disk (issue 34): `scripts/failing-disk-test` makes them with a
/// FUSE disk; these take the reader's side of it.
@Suite("Files the disk fails to read")
struct DiskErrorTests {
    let lib: TemporaryDirectory
    let state: TemporaryDirectory
    init() throws {
        lib = try TemporaryDirectory("diskerror-lib")
        state = try TemporaryDirectory("diskerror-state")
    }

    func cleanup() {
        lib.remove()
        state.remove()
    }

    /// A new mtime for `name`, as an edit gives (the next scan reads the file again).
    func touch(_ name: String) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)],
                                              ofItemAtPath: lib(name).string)
    }

    @Test("An indexed file whose read fails on an I/O error keeps its asset, is listed, and is read again")
    func indexedFileKeepsItsAsset() throws {
        defer { cleanup() }
        for name in ["a.jpg", "b.jpg", "c.jpg"] { try lib.write(name, [1]) }
        let db = try Database(path: state("d.db").string)
        let pipeline = TestPipeline(db, roots: [lib.path])
        let reader = FailingDiskReader()
        let indexer = pipeline.indexer(reader)
        indexer.scan(roots: [lib.path])
        let before = try db.read { try $0.assets(limit: 10, offset: 0) }
        #expect(before.count == 3)

        reader.failing.withLock { $0 = ["a.jpg"] }
        try touch("a.jpg")
        indexer.scan(roots: [lib.path])
        let counts = try db.read { try $0.counts() }
        #expect(counts.assets == 3)
        #expect(counts.recentlyDeleted == 0)
        #expect(try db.read { try $0.assets(limit: 10, offset: 0) }.map(\.id) == before.map(\.id))
        #expect(indexer.status.unreadableFiles == [lib("a.jpg"): "cannot read the file: pread: Input/output error"])

        reader.failing.withLock { $0 = [] }
        indexer.scan(roots: [lib.path])
        #expect(indexer.status.unreadableFiles.isEmpty)
        #expect(try db.read { try $0.counts() }.assets == 3)
    }

    @Test("A file listed unreadable is no longer listed once deleted, nor under its old name once moved with its folder")
    func goneFilesAreNotListed() throws {
        defer { cleanup() }
        for name in ["a.jpg", "b.jpg", "sub/c.jpg", "sub/d.jpg"] { try lib.write(name, [1]) }
        let db = try Database(path: state("d.db").string)
        let pipeline = TestPipeline(db, roots: [lib.path])
        let reader = FailingDiskReader()
        let indexer = pipeline.indexer(reader)
        indexer.scan(roots: [lib.path])
        reader.failing.withLock { $0 = ["a.jpg", "c.jpg"] }
        try touch("a.jpg")
        try touch("sub/c.jpg")
        indexer.scan(roots: [lib.path])
        #expect(Set(indexer.status.unreadableFiles.keys) == [lib("a.jpg"), lib("sub/c.jpg")])

        try FileManager.default.removeItem(atPath: lib("a.jpg").string)
        #expect(rename(lib("sub").string, lib("sub2").string) == 0)
        indexer.scan(roots: [lib.path])
        // c.jpg, still failing, is read again where it is now (its mtime is not the indexed one).
        #expect(Set(indexer.status.unreadableFiles.keys) == [lib("sub2/c.jpg")])
        let counts = try db.read { try $0.counts() }
        #expect(counts.recentlyDeleted == 1, "\(counts)")  // a.jpg; the folder and its two files moved

        reader.failing.withLock { $0 = [] }
        indexer.scan(roots: [lib.path])
        #expect(indexer.status.unreadableFiles.isEmpty)
    }

    @Test("A new file that failed on an I/O error is an error row, read again at the next scan though unchanged")
    func newFileIsReadAgain() throws {
        defer { cleanup() }
        for name in ["a.jpg", "b.jpg"] { try lib.write(name, [1]) }
        let db = try Database(path: state("d.db").string)
        let pipeline = TestPipeline(db, roots: [lib.path])
        let reader = FailingDiskReader()
        reader.failing.withLock { $0 = ["a.jpg"] }
        let indexer = pipeline.indexer(reader)
        indexer.scan(roots: [lib.path])
        #expect(try db.read { try $0.counts() }.assets == 1)
        #expect(try db.read { try $0.fileIssues(limit: 10) }.map(\.code) == [MetadataError.Code.unreadable.rawValue])

        reader.failing.withLock { $0 = [] }
        indexer.scan(roots: [lib.path])
        #expect(try db.read { try $0.counts() }.assets == 2)
        #expect(try db.read { try $0.fileIssues(limit: 10) }.isEmpty)
        #expect(indexer.status.unreadableFiles.isEmpty)
    }

    @Test("A root read again for newer rules is not recorded as read while one of its files failed: the next scan reads it all again")
    func newerRulesWaitForEveryFile() throws {
        defer { cleanup() }
        for name in ["a.jpg", "b.jpg"] { try lib.write(name, [1]) }
        let db = try Database(path: state("d.db").string)
        let pipeline = TestPipeline(db, roots: [lib.path])
        pipeline.indexer(FailingDiskReader(rulesVersion: 1)).scan(roots: [lib.path])
        let key = Indexer.rulesKey(1)
        #expect(try db.read { try $0.metaInteger(key) } ?? 1 == 1)

        let newer = FailingDiskReader(rulesVersion: 2)
        newer.failing.withLock { $0 = ["a.jpg"] }
        let indexer = pipeline.indexer(newer)
        indexer.scan(roots: [lib.path])
        #expect(try db.read { try $0.counts() }.assets == 2)
        #expect(try db.read { try $0.metaInteger(key) } ?? 1 == 1, "a.jpg keeps what rules 1 found: the root is not read by rules 2 yet")

        newer.failing.withLock { $0 = [] }
        indexer.scan(roots: [lib.path])
        #expect(try db.read { try $0.metaInteger(key) } == 2)
        #expect(indexer.status.unreadableFiles.isEmpty)
    }
}
