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
    let rulesVersion = 1
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
    /// A library of `chunks` full chunks of files, each chunk holding `badPerChunk` broken
    /// ones, an empty index, its queue and an indexer reading with `BrokenFilesReader`.
    struct Fixture {
        let lib: TemporaryDirectory
        let state: TemporaryDirectory
        let db: Database
        let queue: SortQueue
        let indexer: Indexer

        init(chunks: Int, badPerChunk: Int) throws {
            lib = try TemporaryDirectory("errcount-lib")
            state = try TemporaryDirectory("errcount-state")
            for c in 0..<chunks {
                for i in 0..<Indexer.chunkSize {
                    try lib.write("d\(c)/\(i < badPerChunk ? "bad" : "ok")\(i).jpg", [1])
                }
            }
            db = try Database(path: state("e.db").string)
            queue = SortQueue(database: db, logger: .silent)
            queue.start()
            // Known before the test holds the queue: a scan writes a root only when it is new.
            _ = try queue.perform { [lib] in try $0.registerRoots([lib.path]) }
            indexer = Indexer(database: db, sortQueue: queue, trees: Trees(roots: [lib.path], database: db, sortQueue: queue, logger: .silent),
                              reader: BrokenFilesReader(), logger: .silent, workers: 2)
        }

        func finish() {
            queue.stop()
            lib.remove()
            state.remove()
        }
    }

    @Test("lastScan.errors counts each broken file once when the scan's jobs pile up and are merged")
    func mergedJobsCountEachFileOnce() throws {
        let f = try Fixture(chunks: 4, badPerChunk: 2)
        defer { f.finish() }
        // Hold the queue's thread in a completion (the database stays free for the scan's own
        // writes) so that every job of the scan waits behind it and they are merged.
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        f.queue.submit(WriteBatch()) { _ in
            holding.signal()
            release.wait()
        }
        holding.wait()
        let scanned = DispatchSemaphore(value: 0)
        let report = Locked<ScanReport?>(nil)
        Thread.detachNewThread {
            report.withLock { $0 = f.indexer.scan(roots: [f.lib.path]) }
            scanned.signal()
        }
        // Recorded, not thrown: the held job is released below whatever happens.
        do { try eventually("the scan's four chunks waiting behind the held job") { f.queue.stats.pending } until: { $0 >= 4 } } catch {
            Issue.record(error)
        }
        release.signal()
        scanned.wait()

        #expect(f.queue.stats.cancelled >= 3, "the waiting jobs were merged")
        let counts = try f.db.read { try $0.counts() }
        let listed = try f.db.read { try $0.fileIssues(limit: 1000) }
        #expect(counts.errors == 8)
        #expect(listed.count == 8)
        #expect(report.withLock { $0?.errors } == 8)
        #expect(f.indexer.status.lastScan?.errors == 8)
    }

    @Test("lastScan.errors equals counts.errors however the queue merges, and a rescan of unchanged files finds none")
    func scanThenRescan() throws {
        let f = try Fixture(chunks: 3, badPerChunk: 1)
        defer { f.finish() }
        #expect(f.indexer.scan(roots: [f.lib.path]).errors == 3)
        #expect(try f.db.read { try $0.counts() }.errors == 3)
        // The broken files are unchanged: not read again, so this scan found no new errors.
        #expect(f.indexer.scan(roots: [f.lib.path]).errors == 0)
        #expect(try f.db.read { try $0.counts() }.errors == 3)
    }
}
