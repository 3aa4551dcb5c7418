import Glibc
import Dispatch
import PhotoModel
import PhotoStore
import PhotoSystem

/// The daemon's one writer: a serial queue of sort jobs, each committed in one transaction.
///
/// When jobs pile up (enumeration is faster than sorting), every pending job but the newest is
/// cancelled and the newest takes over their work: they are merged, in order, into one batch
/// and one transaction. Cancellation drops intermediate *work* (a transaction, a round of
/// collection updates, a change set), never *data*: every job's completion handler runs with
/// the result of the transaction that carried its files. The last job of a scan always runs,
/// because nothing is ever dropped.
public final class SortQueue: Service {
    /// What the queue did since the daemon started.
    public struct Stats: Sendable, Hashable {
        /// Transactions run.
        public var ran = 0
        /// Jobs merged into a newer one instead of running alone.
        public var cancelled = 0
        /// Transactions that failed (their files are read again by the next scan).
        public var failed = 0
        /// Jobs waiting.
        public var pending = 0
        public var lastError: String?
        /// A job is held because the disk (or the database's size limit) is full: it is retried
        /// until it commits; reads go on meanwhile.
        public var waitingForSpace = false
        /// Attempts to commit a held job (progress, for the watchdog: waiting is not a wedge).
        public var retries = 0
        /// The disk failed a write or an fsync of the database (`StoreError.Code.ioError`): the
        /// error, until a transaction commits again. Meanwhile clients' writes are refused.
        public var writeFailure: String?
        /// Times the database was opened again and checked after such a failure.
        public var reopened = 0
        public init() {}
    }

    /// How a job ended: the summary is that of the transaction that carried the job, the same
    /// for every job merged into it (a per-job tally must count the job's own batch, not add
    /// this up once per job).
    public typealias Completion = @Sendable (Result<ChangeSet, StoreError>) -> Void

    /// Work for the writer other than a batch (a purge, a user-state write): runs alone, in
    /// its own transaction, and returns its change set.
    public typealias Operation = @Sendable (IndexWriter, _ now: Int64) throws -> ChangeSet

    struct Entry: Sendable {
        var batch: WriteBatch
        var operation: Operation?
        /// Work on the database as a whole (a compaction): runs alone, without the writer held.
        var maintenance: Callback<Void, StoreError?>?
        var done: Completion

        /// Whether the entry runs alone (a maintenance, an operation, a batch that moves files).
        var runsAlone: Bool { maintenance != nil || operation != nil || batch.hasMoves }
    }

    private struct State: Sendable {
        var pending: [Entry] = []
        var stats = Stats()
        var stopping = false
        var busy = false
        /// Why a batch is held (the disk full, or failing): clients' writes are refused with it.
        var held: StoreError?
        /// The disk failed a write or fsync: the database is opened again before the next write.
        var needsReopen = false
        /// Clients' writes are refused at once until then after the disk failed one: each try
        /// costs a reopen and a `quick_check` (a read of every page), at most once in this time.
        var refusingUntil: ContinuousClock.Instant?
    }

    /// How long clients' writes are refused at once after the disk failed one.
    static let failureBackoff: Duration = .seconds(1)

    let writer: DatabaseWriter
    let logger: Logger
    let now: @Sendable () -> Int64
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let commitHandler = Locked<Callback<(ChangeSet, Int64), Void>?>(nil)
    /// The queue's thread, while it runs (`perform` must not wait for itself).
    private let thread = Locked<pthread_t?>(nil)

    /// Takes the database's writer (`Database.takeWriter()`): the queue is its one writer.
    /// `start()` starts the thread.
    public init(database: Database, logger: Logger,
                now: @escaping @Sendable () -> Int64 = { WallClock.milliseconds() }) {
        writer = database.takeWriter()
        self.logger = logger
        self.now = now
    }

    /// Starts the queue's thread.
    public func start() {
        spawnThread("photod-sort") { [self] in
            thread.withLock { $0 = pthread_self() }
            run()
        }
    }

    /// Queues a batch. `done` runs on the queue's thread after the transaction that carried it.
    public func submit(_ batch: WriteBatch, done: @escaping Completion = { _ in }) {
        enqueue(Entry(batch: batch, done: done))
    }

    /// Queues the purge of the assets that went to Recently Deleted before `cutoff` (Unix
    /// milliseconds): a job of its own, with its change set (they are `deleted`).
    /// The trashed files of those assets (`assets.trash`) are unlinked first; an asset whose
    /// trashed files cannot be (its root closed to the trash, its tree unavailable) stays.
    public func submitPurge(deletedBefore cutoff: Int64, trash: LibraryTrash, done: @escaping Completion = { _ in }) {
        submit(operation: { [logger] writer, now in
            let expired = try writer.trashedAssets(deletedBefore: cutoff)
            let kept = try trash.deleteForGood(expired, recordingIn: writer).kept
            let keptIDs = Set(kept.map(\.id))
            let keeping = Set(expired.filter { keptIDs.contains($0.id) }.map(\.pk))
            if let first = kept.first {
                logger.notice("kept \(kept.count) assets in Recently Deleted past their time, their trashed files not "
                              + "deleted (e.g. \(first.id): \(first.reason))")
            }
            let summary = try writer.purge(deletedBefore: cutoff, keeping: keeping, now: now)
            if !summary.deleted.isEmpty { logger.info("purged \(summary.deleted.count) assets from Recently Deleted") }
            return summary
        }, done: done)
    }

    /// Queues an operation: it is never merged with other jobs, and `done` runs after its commit.
    public func submit(operation: @escaping Operation, done: @escaping Completion = { _ in }) {
        enqueue(Entry(batch: WriteBatch(), operation: operation, done: done))
    }

    /// Runs an operation in its turn and waits for its commit: its change set. Blocks the
    /// caller, which must not be the queue's own thread.
    public func commit(_ operation: @escaping Operation) throws(StoreError) -> ChangeSet {
        precondition(thread.withLock { $0.map { pthread_equal($0, pthread_self()) == 0 } ?? true },
                     "SortQueue.commit called on the queue's own thread")
        let outcome = Locked<Result<ChangeSet, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        submit(operation: operation) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }

    /// Runs `body` on the queue's thread, in its turn after what was queued before, and returns
    /// what it returns: a write that is not a batch (a record of the library's trees, a meta
    /// value) goes through the one writer too. Blocks the caller, which must not be the queue's
    /// own thread (a completion handler).
    public func perform<R: Sendable>(_ body: @escaping @Sendable (IndexWriter) throws -> R) throws -> R {
        // The body's own error, not the queue's report of it.
        let outcome = Locked<Result<R, any Error>?>(nil)
        do {
            _ = try commit { writer, _ in
                do {
                    let value = try body(writer)
                    outcome.withLock { $0 = .success(value) }
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                    throw error
                }
                return ChangeSet()
            }
        } catch {
            outcome.withLock { $0 = $0 ?? .failure(error) }
        }
        return try outcome.withLock { $0 }!.get()
    }

    /// Called on the queue's thread after each commit that recorded a change set, before the
    /// jobs' completions (subscribers hear of a change no later than its writer does).
    public func onCommit(_ handler: @escaping @Sendable (ChangeSet, _ time: Int64) -> Void) {
        commitHandler.withLock { $0 = Callback { handler($0.0, $0.1) } }
    }

    /// Compacts the database file (`Database.compact`) in the queue's turn, with nothing
    /// written meanwhile; returns its bytes before and after.
    public func compact() throws -> (before: Int64, after: Int64) {
        try maintain { [writer] () throws(StoreError) in try writer.database.compact() }
    }

    /// Runs `body` on the database in the queue's turn, alone, with nothing written meanwhile.
    /// A disk error in it has the next job open the database again first, as a failed write's
    /// does (`noteFailure`).
    func maintain<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) throws -> T {
        let outcome = Locked<Result<T, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        enqueue(Entry(batch: WriteBatch(), maintenance: Callback { () -> StoreError? in
            do throws(StoreError) {
                let value = try body()
                outcome.withLock { $0 = .success(value) }
                return nil
            } catch {
                outcome.withLock { $0 = .failure(error) }
                return error
            }
        }, done: { result in
            if case .failure(let error) = result { outcome.withLock { $0 = $0 ?? .failure(error) } }
            done.signal()
        }))
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }

    private func enqueue(_ entry: Entry) {
        let done = entry.done
        if entry.operation != nil || entry.maintenance != nil, let held = state.withLock({ s -> StoreError? in
            if let held = s.held { return held }
            guard let until = s.refusingUntil, ContinuousClock.now < until, let failure = s.stats.writeFailure else { return nil }
            return StoreError(code: .ioError, message: failure)
        }) {
            done(.failure(held.code == .full
                ? StoreError(code: .full, message: "the disk is full; writes resume when there is space again")
                : StoreError(code: held.code, message: "\(held.message); writes resume when the database can be written again")))
            return
        }
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.pending.append(entry)
            s.stats.pending = s.pending.count
            return true
        }
        if accepted {
            wake.signal()
        } else {
            done(.failure(StoreError(code: .sqlite, message: "the sort queue is stopped")))
        }
    }

    /// A copy of the statistics.
    public var stats: Stats { state.withLock { $0.stats } }

    /// Whether a job is waiting or running.
    public var isBusy: Bool { state.withLock { $0.busy || !$0.pending.isEmpty } }

    /// Runs what is queued, then stops the thread. Later submissions fail.
    public func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
        finished.wait()
        thread.withLock { $0 = nil }
    }

    private func run() {
        while true {
            wake.wait()
            let (entries, stop) = state.withLock { s -> ([Entry], Bool) in
                let taken = s.pending
                s.pending = []
                s.stats.pending = 0
                s.busy = !taken.isEmpty
                return (taken, s.stopping)
            }
            // Jobs that move or restore files run alone; the others between them are merged.
            var run: [Entry] = []
            for entry in entries {
                if entry.runsAlone {
                    if !run.isEmpty { runJob(run) }
                    run = []
                    runJob([entry])
                } else {
                    run.append(entry)
                }
            }
            if !run.isEmpty { runJob(run) }
            state.withLock { $0.busy = false }
            if stop && state.withLock({ $0.pending.isEmpty }) {
                finished.signal()
                return
            }
        }
    }

    /// Merges the pending jobs into the newest and commits them as one.
    private func runJob(_ entries: [Entry]) {
        let merged = WriteBatch.merged(entries.map(\.batch))
        let result: Result<ChangeSet, StoreError>
        do {
            try reopenIfNeeded()
            let summary: ChangeSet
            let time = now()
            if entries.count == 1, let maintenance = entries[0].maintenance {
                if let error = maintenance(()) { throw error }
                summary = ChangeSet()
            } else if entries.count == 1, let operation = entries[0].operation {
                summary = try writer.write { try operation($0, time) }
            } else {
                summary = try writer.write { try $0.apply(merged, now: time) }
            }
            if summary.token != nil, let handler = commitHandler.withLock({ $0 }) { handler((summary, time)) }
            result = .success(summary)
            state.withLock {
                $0.stats.ran += 1
                $0.stats.cancelled += entries.count - 1
                $0.stats.writeFailure = nil
            }
            logger.debug("sort job committed", [("job.files", String(merged.files.count)),
                                                 ("job.merged", String(entries.count)),
                                                 ("job.inserted", String(summary.inserted.count))])
        } catch let error as StoreError where Self.isDiskFailure(error) && entries.allSatisfy({ $0.operation == nil && $0.maintenance == nil }) {
            // A full or failing disk loses nothing: the files' batch waits and is tried again;
            // clients' writes (operations) fail at once with the reason, and reads go on.
            noteFailure(error)
            holdUntilWritable(entries, error)
            return
        } catch {
            let storeError = StoreError.wrapping(error)
            noteFailure(storeError)
            result = .failure(storeError)
            state.withLock {
                $0.stats.failed += 1
                $0.stats.lastError = "\(storeError)"
            }
            if entries.contains(where: { $0.maintenance != nil }) {
                logger.error("database maintenance failed: \(storeError)")
            } else {
                logger.error("sort job failed, its \(merged.files.count) files will be read again by the next scan: \(storeError)",
                             [("job.files", String(merged.files.count))])
            }
        }
        for e in entries { e.done(result) }
    }

    /// A full disk (`full`), or one that failed a write or an fsync of the database
    /// (`ioError`): what a held batch waits out.
    static func isDiskFailure(_ error: StoreError) -> Bool { error.code == .full || error.code == .ioError }

    /// After the disk failed a write or an fsync, no transaction runs on the connections that
    /// met the failure: the next job opens the database again and checks it first
    /// (`Database.reopenAfterFailure`).
    private func noteFailure(_ error: StoreError) {
        guard error.code == .ioError else { return }
        state.withLock {
            $0.needsReopen = true
            $0.stats.writeFailure = error.message
            $0.refusingUntil = ContinuousClock.now + Self.failureBackoff
        }
    }

    /// Opens the database again and checks it, when a disk error asked for it; throws an
    /// `ioError` (the next job tries again) while that fails.
    private func reopenIfNeeded() throws(StoreError) {
        guard state.withLock({ $0.needsReopen }) else { return }
        do {
            try writer.database.reopenAfterFailure()
        } catch {
            throw StoreError(code: .ioError, message: "the database cannot be opened again after a disk error: \(error)")
        }
        state.withLock {
            $0.needsReopen = false
            $0.stats.reopened += 1
        }
        logger.notice("the database was opened again and checked after a disk error")
    }

    /// Retries a batch that failed for want of space or on a failing disk, every 1 s at first
    /// and then up to every 30 s, until it commits or the queue stops (then its files are read
    /// again at the next start: the disk still has them).
    private func holdUntilWritable(_ entries: [Entry], _ first: StoreError) {
        logger.error("\(first.code == .full ? "the disk is full" : "the database cannot be written"): \(first); holding "
                     + "\(entries.count) job(s) and retrying until it can be written again; reads go on")
        state.withLock {
            $0.held = first
            $0.stats.waitingForSpace = first.code == .full
            $0.stats.lastError = "\(first)"
        }
        var delay: Duration = .seconds(1)
        while true {
            if state.withLock({ $0.stopping }) {
                logger.warning("stopping with a job held for want of space: its files are read again at the next start")
                state.withLock { $0.held = nil }
                for e in entries { e.done(.failure(first)) }
                return
            }
            // Clients' writes do not wait behind the held job: they fail now, with the reason.
            let refused = state.withLock { s -> [Entry] in
                let operations = s.pending.filter { $0.operation != nil || $0.maintenance != nil }
                s.pending.removeAll { $0.operation != nil || $0.maintenance != nil }
                s.stats.pending = s.pending.count
                return operations
            }
            for e in refused { e.done(.failure(first)) }
            sleepThread(seconds: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            delay = min(delay * 2, .seconds(30))
            state.withLock { $0.stats.retries += 1 }
            let merged = WriteBatch.merged(entries.map(\.batch))
            do {
                try reopenIfNeeded()
                let time = now()
                let summary = try writer.write { try $0.apply(merged, now: time) }
                if summary.token != nil, let handler = commitHandler.withLock({ $0 }) { handler((summary, time)) }
                state.withLock {
                    $0.stats.ran += 1
                    $0.stats.cancelled += entries.count - 1
                    $0.stats.waitingForSpace = false
                    $0.stats.writeFailure = nil
                    $0.held = nil
                }
                logger.notice(first.code == .full ? "there is space again: the held job committed"
                                                  : "the database can be written again: the held job committed")
                for e in entries { e.done(.success(summary)) }
                return
            } catch let error as StoreError where Self.isDiskFailure(error) {
                noteFailure(error)
                continue
            } catch {
                let storeError = StoreError.wrapping(error)
                state.withLock {
                    $0.stats.failed += 1
                    $0.stats.lastError = "\(storeError)"
                    $0.stats.waitingForSpace = false
                    $0.held = nil
                }
                logger.error("a held job failed: \(storeError)")
                for e in entries { e.done(.failure(storeError)) }
                return
            }
        }
    }
}
