import Foundation
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Synchronization
import Testing

/// A reader that renames a folder just before its first read: the race of a folder renamed
/// between the walk's listing and the reader's open (what the crash test's moves scenario hit).
final class RenamingReader: FileReading {
    let inner: MediaFileReader
    let from: PathBytes
    let to: PathBytes
    let done = Atomic<Bool>(false)
    var rulesVersion: Int { inner.rulesVersion }

    init(inner: MediaFileReader, from: PathBytes, to: PathBytes) {
        self.inner = inner
        self.from = from
        self.to = to
    }

    func read(_ c: Candidate) -> FileOutcome {
        if c.directory == from, done.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            _ = rename(from.string, to.string)
        }
        return inner.read(c)
    }
}

@Suite("Files gone between the walk and the read")
struct VanishedFileTests {
    let lib: TemporaryDirectory
    let state: TemporaryDirectory
    init() throws {
        lib = try TemporaryDirectory("vanished-lib")
        state = try TemporaryDirectory("vanished-state")
    }

    func cleanup() {
        lib.remove()
        state.remove()
    }

    static let jpeg = JPEGFixture(width: 64, height: 48).bytes()

    @Test("A file that is gone when opened is reported vanished, not as an error")
    func readerReportsVanished() throws {
        defer { cleanup() }
        let reader = MediaFileReader(zone: FixedZone.utc)
        let outcome = reader.read(Candidate(directory: lib.path, name: Array("nothing.jpg".utf8),
                                            identity: FileIdentity(fsid: 1, inode: 2, size: 3, mtimeNanoseconds: 4)))
        guard case .vanished = outcome.kind else {
            Issue.record("expected vanished, got \(outcome.kind)")
            return
        }
        #expect(outcome.status == nil)
    }

    @Test("A folder renamed under the reader keeps its assets, and renamed back they are not errors")
    func folderRenamedDuringRead() throws {
        defer { cleanup() }
        for i in 0..<5 { try lib.write("event/f\(i).jpg", Self.jpeg) }
        let db = try Database(path: state("v.db").string)
        let zone = FixedZone.utc
        let pipeline = TestPipeline(db)
        let plain = pipeline.indexer(MediaFileReader(zone: zone))
        plain.scan(roots: [lib.path])
        let ids = try Set(db.read { try $0.assets(limit: 100, offset: 0).map(\.id) })
        #expect(ids.count == 5)

        // The files change (so that they are read again), and the folder is renamed between
        // the listing and the first open.
        for i in 0..<5 { try lib.write("event/f\(i).jpg", Self.jpeg + [0xFF, 0xD9]) }
        let racing = pipeline.indexer(RenamingReader(inner: MediaFileReader(zone: zone), from: lib("event"), to: lib("event.moved")))
        racing.scan(roots: [lib.path])
        #expect(try db.read { try $0.counts() }.errors == 0)
        #expect(try Set(db.read { try $0.assets(limit: 100, offset: 0).map(\.id) }) == ids)

        // Renamed back before the next scan (the files then match the rows they had).
        #expect(rename(lib("event.moved").string, lib("event").string) == 0)
        plain.scan(roots: [lib.path])
        #expect(try db.read { try $0.counts() }.errors == 0)
        #expect(try Set(db.read { try $0.assets(limit: 100, offset: 0).map(\.id) }) == ids)
        #expect(try db.read { try $0.counts() }.assets == 5)
    }
}
