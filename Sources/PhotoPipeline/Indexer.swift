import Foundation
import PhotoModel
import PhotoStore
import PhotoSystem
import Synchronization

/// Walks the library roots, reads new and changed files in 50-file chunks on a few worker
/// threads, and commits each chunk in one transaction through the single writer, in the
/// order the walk produced them. Unchanged files (same fsid, inode, size and mtime) are not
/// read; vanished files and directories are removed. Memory stays flat: the walk blocks when
/// the bounded queues are full.
public final class Indexer: Sendable {
    /// Files per chunk: one transaction each (the seeds' batch size).
    public static let chunkSize = 50

    let database: Database
    let reader: any FileReading
    let logger: Logger
    let workers: Int
    let now: @Sendable () -> Int64
    private let statusBox = Locked(IndexerStatus())
    /// Serialises scans: the walk of one root set at a time.
    private let scanLock = Mutex(())
    private let stopRequested = Atomic<Bool>(false)

    /// - Parameters:
    ///   - workers: reader threads (default: one per core).
    ///   - now: wall-clock Unix milliseconds (injected for tests).
    public init(database: Database, reader: any FileReading, logger: Logger, workers: Int? = nil,
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }) {
        self.database = database
        self.reader = reader
        self.logger = logger
        self.workers = max(1, workers ?? ProcessInfo.processInfo.activeProcessorCount)
        self.now = now
    }

    /// Asks a running scan to stop at the next directory: what was read is still committed,
    /// the rest is picked up by the next scan. Used on shutdown.
    public func requestStop() { stopRequested.store(true, ordering: .relaxed) }

    /// Says that a scan is about to start, so that `status` reads `indexing` from now on
    /// (the daemon calls this before it starts listening: `--wait` must never see a daemon that
    /// has not started its first scan as idle).
    public func announceScan() {
        statusBox.withLock {
            $0.queuedScans += 1
            $0.state = .indexing
        }
    }

    /// A copy of the current status.
    public var status: IndexerStatus { statusBox.withLock { $0 } }

    /// Scans `roots` to completion on the calling thread (a dedicated thread: this blocks).
    @discardableResult
    public func scan(roots: [PathBytes]) -> ScanReport {
        scanLock.withLock { _ in runScan(roots: roots) }
    }

    private func runScan(roots: [PathBytes]) -> ScanReport {
        let started = ContinuousClock.now
        statusBox.withLock {
            $0.queuedScans = max(0, $0.queuedScans - 1)
            $0.state = .indexing
            $0.current = ScanProgress()
        }
        do {
            _ = try database.write { try $0.registerRoots(roots) }
        } catch {
            logger.error("cannot record library roots: \(error)")
        }

        let jobs = Channel<Job>(capacity: workers * 2)
        let results = Channel<Job>(capacity: workers * 2 + 2)
        // Jobs between the walk and their commit, at most: with the reorder buffer, a reader stuck
        // on one slow file (a hung network mount) must not let the others pile up results.
        let inFlight = DispatchSemaphore(value: workers * 4 + 4)
        let tally = Locked(Tally())

        var threads: [Thread] = []
        for i in 0..<workers {
            let t = Thread { [reader] in
                while var job = jobs.receive() {
                    job.batch.files = job.candidates.map { reader.read($0) }
                    job.candidates = []
                    results.send(job)
                }
            }
            t.name = "photod-reader-\(i)"
            threads.append(t)
        }
        let writerDone = DispatchSemaphore(value: 0)
        let writerThread = Thread { [self] in
            commitInOrder(results, tally: tally, committed: { inFlight.signal() })
            writerDone.signal()
        }
        writerThread.name = "photod-writer"
        threads.forEach { $0.start() }
        writerThread.start()

        var walker = Walk(database: database, logger: logger, status: statusBox, emit: { job in
                              inFlight.wait()
                              jobs.send(job)
                          },
                          shouldStop: { [self] in stopRequested.load(ordering: .relaxed) })
        for root in roots { walker.walk(root: root) }
        walker.flush()

        jobs.close()
        // Workers exit when `jobs` drains; the writer then needs to know no more results come.
        waitForReaders(threads: threads)
        results.close()
        writerDone.wait()

        let t = tally.withLock { $0 }
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let report = ScanReport(files: walker.filesSeen, readFiles: walker.candidates, removedFiles: walker.removedFiles,
                                removedDirectories: walker.removedDirectories, errors: t.errors,
                                seconds: t.lastCommit.map { Self.seconds(started.duration(to: $0)) } ?? seconds,
                                finishedAt: now())
        statusBox.withLock {
            $0.state = $0.queuedScans > 0 ? .indexing : .idle
            $0.current = nil
            $0.lastScan = report
        }
        logger.info("scan finished: \(report.files) files, \(report.readFiles) read, \(report.errors) errors, "
                    + "\(report.removedFiles) removed, in \(String(format: "%.2f", report.seconds)) s")
        return report
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    private func waitForReaders(threads: [Thread]) {
        // Thread has no join; the workers finish right after `jobs` drains. Poll briefly.
        while threads.contains(where: { !$0.isFinished }) { usleep(1_000) }
    }

    /// Commits results in sequence order, one transaction per job.
    private func commitInOrder(_ results: Channel<Job>, tally: Locked<Tally>, committed: () -> Void) {
        var pending: [Int: Job] = [:]
        var next = 0
        while let job = results.receive() {
            pending[job.sequence] = job
            while let ready = pending.removeValue(forKey: next) {
                commit(ready, tally: tally)
                committed()
                next += 1
            }
        }
        // Jobs are numbered without gaps, so nothing can be left; guard against a bug anyway.
        for key in pending.keys.sorted() {
            commit(pending[key]!, tally: tally)
            committed()
        }
    }

    private func commit(_ job: Job, tally: Locked<Tally>) {
        guard !job.batch.isEmpty else { return }
        do {
            let summary = try database.write { try $0.apply(job.batch, now: now()) }
            tally.withLock {
                $0.errors += summary.errors
                $0.lastCommit = ContinuousClock.now
            }
            statusBox.withLock {
                $0.batchesCommitted += 1
                $0.current?.committed += job.batch.files.count
            }
            logger.debug("committed batch", [("batch.id", String(job.sequence)), ("batch.files", String(job.batch.files.count)),
                                            ("batch.inserted", String(summary.inserted.count))])
        } catch {
            // The files of this batch stay unindexed (or stale) and are read again by the next scan.
            statusBox.withLock {
                $0.batchesFailed += 1
                $0.lastError = "\(error)"
            }
            logger.error("cannot commit batch \(job.sequence): \(error)")
        }
    }
}

/// A chunk of work: candidates to read, plus the directory visits and removals that go with it.
struct Job: Sendable {
    var sequence: Int
    var candidates: [Candidate]
    var batch: WriteBatch
}

struct Tally: Sendable {
    var errors = 0
    var lastCommit: ContinuousClock.Instant?
}
