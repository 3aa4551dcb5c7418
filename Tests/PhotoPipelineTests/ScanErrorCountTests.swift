import Dispatch
import Foundation
import PhotoMetadata
import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing

/// A reader that makes every file named `bad…` a per-file error and the rest assets, without
/// opening them.
struct BrokenFilesReader: FileReading {
    func read(_ c: Candidate) -> FileOutcome {
        if c.name.starts(with: Array("bad".utf8)) {
            return FileOutcome(directory: c.directory, name: c.name, identity: c.identity, fingerprint: nil,
                               kind: .error(code: MetadataError.Code.corrupt.rawValue, message: "corrupt on purpose"))
        }
        return FakeReader().read(c)
    }
}

@Suite("A scan's error count")
struct ScanErrorCountTests {
    /// A library of `chunks` full chunks of files, each chunk holding `badPerChunk` broken ones.
    static func makeLibrary(_ lib: TemporaryDirectory, chunks: Int, badPerChunk: Int) throws {
        for c in 0..<chunks {
            for i in 0..<Indexer.chunkSize {
                try lib.write("d\(c)/\(i < badPerChunk ? "bad" : "ok")\(i).jpg", [1])
            }
        }
    }

    @Test("lastScan.errors counts each broken file once when the scan's jobs pile up and are merged")
    func mergedJobsCountEachFileOnce() throws {
        let lib = try TemporaryDirectory("errcount-lib")
        let state = try TemporaryDirectory("errcount-state")
        defer {
            lib.remove()
            state.remove()
        }
        try Self.makeLibrary(lib, chunks: 4, badPerChunk: 2)
        let db = try Database(path: state("e.db").string)
        let queue = SortQueue(database: db, logger: .silent)
        defer { queue.stop() }
        let indexer = Indexer(database: db, sortQueue: queue, reader: BrokenFilesReader(), logger: .silent, workers: 2)

        // Hold the queue's thread in a completion (the database stays free for the scan's own
        // writes) so that every job of the scan waits behind it and they are merged.
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        queue.submit(WriteBatch()) { _ in
            holding.signal()
            release.wait()
        }
        holding.wait()
        let scanned = DispatchSemaphore(value: 0)
        let report = Locked<ScanReport?>(nil)
        Thread.detachNewThread {
            report.withLock { $0 = indexer.scan(roots: [lib.path]) }
            scanned.signal()
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while queue.stats.pending < 4 && ContinuousClock.now < deadline { usleep(1_000) }
        #expect(queue.stats.pending >= 4, "the scan's four chunks wait behind the held job")
        release.signal()
        scanned.wait()

        #expect(queue.stats.cancelled >= 3, "the waiting jobs were merged")
        let counts = try db.read { try $0.counts() }
        let listed = try db.read { try $0.fileIssues(limit: 1000) }
        #expect(counts.errors == 8)
        #expect(listed.count == 8)
        #expect(report.withLock { $0?.errors } == 8)
        #expect(indexer.status.lastScan?.errors == 8)
    }

    @Test("lastScan.errors equals counts.errors when nothing is merged, and a rescan of unchanged files finds none")
    func unmergedScan() throws {
        let lib = try TemporaryDirectory("errcount1-lib")
        let state = try TemporaryDirectory("errcount1-state")
        defer {
            lib.remove()
            state.remove()
        }
        try Self.makeLibrary(lib, chunks: 3, badPerChunk: 1)
        let db = try Database(path: state("e.db").string)
        let queue = SortQueue(database: db, logger: .silent)
        defer { queue.stop() }
        let indexer = Indexer(database: db, sortQueue: queue, reader: BrokenFilesReader(), logger: .silent, workers: 2)
        #expect(indexer.scan(roots: [lib.path]).errors == 3)
        #expect(try db.read { try $0.counts() }.errors == 3)
        // The broken files are unchanged: not read again, so this scan found no new errors.
        #expect(indexer.scan(roots: [lib.path]).errors == 0)
        #expect(try db.read { try $0.counts() }.errors == 3)
    }
}
