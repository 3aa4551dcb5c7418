import Dispatch
import PhotoModel
@testable import PhotoPipeline
@testable import PhotoStore
import PhotoSystem
import PhotoTesting
import Synchronization
import Testing

@Suite("Sort queue")
struct SortQueueTests {
    static func outcome(_ dir: PathBytes, _ name: String, inode: UInt64) -> FileOutcome {
        let media = MediaFields(mediaType: .image, format: "jpeg",
                                 captureDate: CaptureDate(local: LocalDateTime(year: 2020, month: 1, day: 1)!, offset: nil,
                                                          source: .fileName))
        return FileOutcome(directory: dir, name: Array(name.utf8),
                           identity: FileIdentity(fsid: 1, inode: inode, size: 10, mtimeNanoseconds: 1),
                           fingerprint: nil, kind: .media(media))
    }

    @Test("Jobs that pile up are merged into the newest; no data is dropped, every completion runs")
    func mergesPendingJobs() throws {
        let dir = try TemporaryDirectory("queue")
        defer { dir.remove() }
        let db = try Database(path: dir("q.db").string)
        let root = PathBytes("/lib")
        _ = try db.write { try $0.registerRoots([root]) }
        let queue = SortQueue(database: db, logger: .silent)
        queue.start()
        let completions = Atomic<Int>(0)
        let done = DispatchGroup()

        // Hold the writer so that the jobs below pile up behind the first one.
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? db.write { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        for i in 0..<40 {
            var batch = WriteBatch()
            batch.files = [Self.outcome(root.appending("d\(i % 3)"), "f\(i).jpg", inode: UInt64(i + 1))]
            done.enter()
            queue.submit(batch) { result in
                if case .success = result { completions.wrappingAdd(1, ordering: .relaxed) }
                done.leave()
            }
        }
        release.signal()
        done.wait()

        let stats = queue.stats
        let completed = completions.load(ordering: .relaxed)
        #expect(completed == 40)
        #expect(stats.ran + stats.cancelled == 40)
        #expect(stats.ran < 40, "jobs waiting behind a busy writer must be merged")
        #expect(stats.cancelled > 0)
        #expect(try db.read { try $0.counts() }.assets == 40)
        queue.stop()
    }

    @Test("A failed transaction reports failure to every merged job and the queue goes on")
    func failureIsReported() throws {
        let dir = try TemporaryDirectory("queue-fail")
        defer { dir.remove() }
        let db = try Database(path: dir("q.db").string)
        let queue = SortQueue(database: db, logger: .silent)
        queue.start()
        // No root registered: the writer refuses a directory outside every root.
        var bad = WriteBatch()
        bad.files = [Self.outcome(PathBytes("/elsewhere"), "x.jpg", inode: 1)]
        let failed = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        queue.submit(bad) { result in
            if case .failure = result { failed.store(true, ordering: .relaxed) }
            done.signal()
        }
        done.wait()
        let didFail = failed.load(ordering: .relaxed)
        #expect(didFail)
        #expect(queue.stats.failed == 1)
        #expect(queue.stats.lastError?.contains("not inside any library root") == true)

        _ = try db.write { try $0.registerRoots([PathBytes("/elsewhere")]) }
        queue.submit(bad) { _ in done.signal() }
        done.wait()
        #expect(try db.read { try $0.counts() }.assets == 1)
        queue.stop()
    }

    @Test("A disk error in a maintenance (a compaction) fails it, and the next job opens the database again first")
    func failedMaintenanceReopens() throws {
        let dir = try TemporaryDirectory("queue-maintenance")
        defer { dir.remove() }
        let db = try Database(path: dir("q.db").string)
        let root = PathBytes("/lib")
        _ = try db.write { try $0.registerRoots([root]) }
        let queue = SortQueue(database: db, logger: .silent)
        queue.start()
        defer { queue.stop() }
        #expect(throws: StoreError.self) {
            try queue.maintain { () throws(StoreError) in throw StoreError(code: .ioError, message: "fsync: Input/output error") }
        }
        #expect(queue.stats.reopened == 0)
        var batch = WriteBatch()
        batch.files = [Self.outcome(root, "a.jpg", inode: 1)]
        let done = DispatchSemaphore(value: 0)
        queue.submit(batch) { _ in done.signal() }
        done.wait()
        #expect(queue.stats.reopened == 1)
        #expect(try db.read { try $0.counts() }.assets == 1)
    }
}
