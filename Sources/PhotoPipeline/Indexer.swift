import Dispatch
import PhotoMetadata
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
    let sortQueue: SortQueue
    let reader: any FileReading
    let logger: Logger
    let workers: Int
    let now: @Sendable () -> Int64
    /// What below the roots is not part of the library (`--exclude` and the defaults): every
    /// scan, and the live path's plans, leave it out.
    public let exclusions: PathExclusions
    private let statusBox = Locked(IndexerStatus())
    /// Whether the status lists unreadable files: read without its lock, so that a read that
    /// succeeds takes the lock only while some file is listed.
    private let listsUnreadableFiles = Atomic<Bool>(false)
    /// Whether a root, or a mount point below one, may be compared with the index (every scan
    /// asks before anything can be removed).
    public let trees: Trees
    /// Serialises scans: the walk of one root set at a time.
    private let scanLock = Locked(())
    private let stopRequested = Atomic<Bool>(false)

    /// - Parameters:
    ///   - workers: reader threads (default: one per core).
    ///   - exclusions: what below the roots is not part of the library.
    ///   - now: wall-clock Unix milliseconds (injected for tests).
    public init(database: Database, sortQueue: SortQueue, trees: Trees, reader: any FileReading, logger: Logger,
                workers: Int? = nil, exclusions: PathExclusions = .none,
                now: @escaping @Sendable () -> Int64 = { WallClock.milliseconds() }) {
        self.exclusions = exclusions
        self.database = database
        self.sortQueue = sortQueue
        self.trees = trees
        self.reader = reader
        self.logger = logger
        self.workers = max(1, workers ?? ProcessEnvironment.processorCount)
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

    /// How many nice steps a scan's reader and census threads run below the process.
    static let scanNiceSteps: Int32 = 5

    /// Reads candidate files on a few threads at once and returns their outcomes in order.
    func read(_ candidates: [Candidate]) -> [FileOutcome] {
        guard candidates.count > 1 else { return candidates.map { readFile($0) } }
        let outcomes = Locked<[FileOutcome?]>(Array(repeating: nil, count: candidates.count))
        DispatchQueue.concurrentPerform(iterations: candidates.count) { [self] i in
            let outcome = readFile(candidates[i])
            outcomes.withLock { $0[i] = outcome }
        }
        return outcomes.withLock { $0.map { $0! } }
    }

    /// Reads one file; a file that could not be opened or read is logged (a corrupt one is only
    /// recorded: `library.errors` lists both). A refused file is read again only once it may be
    /// (`Walk.mayReadAgain`), so this logs it once, not at every scan.
    /// A file the index has that the disk fails to give (an I/O error, `unreadable`) keeps its
    /// row and asset — an I/O error says nothing about the file — and is listed in the status
    /// until a read of it succeeds; a new one is an error row (`library.errors`).
    func readFile(_ candidate: Candidate) -> FileOutcome {
        var outcome = reader.read(candidate)
        if !candidate.isNew, case .error(let code, let message) = outcome.kind, code == MetadataError.Code.unreadable.rawValue {
            outcome.kind = .unreadable(message: message)
        }
        if case .error(let code, let message) = outcome.kind,
           code == MetadataError.Code.permissionDenied.rawValue || code == MetadataError.Code.unreadable.rawValue {
            logger.warning("cannot read '\(outcome.path)': \(message)", [("path", outcome.path.string), ("error.code", code)])
        }
        let failure: String? = switch outcome.kind {
        case .unreadable(let message): message
        case .error(let code, let message) where code == MetadataError.Code.unreadable.rawValue: message
        default: nil
        }
        if case .unreadable(let message) = outcome.kind {
            logger.warning("cannot read '\(outcome.path)', keeping what the index has: \(message)",
                           [("path", outcome.path.string)])
        }
        if failure != nil || listsUnreadableFiles.load(ordering: .relaxed) {
            statusBox.withLock { s in
                if let failure {
                    if s.unreadableFiles.count < IndexerStatus.maxUnreadableDirectories { s.unreadableFiles[outcome.path] = failure }
                } else {
                    s.unreadableFiles[outcome.path] = nil
                }
                listsUnreadableFiles.store(!s.unreadableFiles.isEmpty, ordering: .relaxed)
            }
        }
        return outcome
    }

    /// A copy of the current status.
    public var status: IndexerStatus { statusBox.withLock { $0 } }

    /// Drops the unreadable files the index no longer has a row for (deleted, or moved with
    /// their folder, since their read failed): they are not the library's to list, and a root
    /// is not read again in full for a file it lost. Every one listed has a row while it is
    /// there — an indexed file keeps its own, a new one is an error row — so the index says
    /// which are gone, without touching a disk that may be failing. Called after a scan and after
    /// the watcher's removals and moves; nothing to do while none is listed.
    func forgetUnreadableFilesGone() {
        guard listsUnreadableFiles.load(ordering: .relaxed) else { return }
        let listed = statusBox.withLock { Array($0.unreadableFiles.keys) }
        guard let gone = try? database.read({ r in try listed.filter { try r.file(at: $0) == nil } }), !gone.isEmpty else { return }
        statusBox.withLock { s in
            for path in gone { s.unreadableFiles[path] = nil }
            listsUnreadableFiles.store(!s.unreadableFiles.isEmpty, ordering: .relaxed)
        }
    }

    /// Scans `roots` to completion on the calling thread (a dedicated thread: this blocks).
    @discardableResult
    public func scan(roots: [PathBytes]) -> ScanReport {
        scanLock.withLock { _ in runScan(roots: roots, subtrees: nil) }
    }

    /// Scans directory trees below the roots (new or changed directories the watcher reports,
    /// trees it cannot watch): the same comparison with the index, without the root checks.
    /// `lastScan` keeps describing the last full scan.
    /// - Parameters:
    ///   - deferNewFiles: read new files after the removals, as a full scan does (so that a file
    ///     found elsewhere keeps its asset by content); off for the watcher's scans, whose reads
    ///     should overlap the walk.
    ///   - newFiles: called (on reader threads) with what was read of files the index did not know.
    @discardableResult
    public func scan(subtrees: [PathBytes], roots: [PathBytes], deferNewFiles: Bool = false,
                     newFiles: (@Sendable ([FileOutcome]) -> Void)? = nil) -> ScanReport {
        scanLock.withLock { _ in runScan(roots: roots, subtrees: subtrees, deferNewFiles: deferNewFiles, newFiles: newFiles) }
    }

    private func runScan(roots: [PathBytes], subtrees: [PathBytes]?, deferNewFiles: Bool = true,
                         newFiles: (@Sendable ([FileOutcome]) -> Void)? = nil) -> ScanReport {
        let started = ContinuousClock.now
        statusBox.withLock {
            $0.queuedScans = max(0, $0.queuedScans - 1)
            $0.state = .indexing
            $0.current = ScanProgress()
        }
        var rootIDs: [PathBytes: Int64] = [:]
        if subtrees == nil {
            do {
                // Through the writer only when a root is new (the queue may be busy with others' jobs).
                let known = try database.read { try $0.roots() }
                let ids = Dictionary(known.map { ($0.path, $0.id) }, uniquingKeysWith: { a, _ in a })
                rootIDs = roots.allSatisfy({ ids[$0] != nil }) ? ids : try sortQueue.perform { try $0.registerRoots(roots) }
            } catch {
                logger.error("cannot record library roots: \(error)")
            }
        }
        let reread = subtrees == nil ? rootsToReadAgain(roots, ids: rootIDs) : []

        let walked = Channel<Job>(capacity: 2)
        let jobs = Channel<Job>(capacity: workers * 2)
        let results = Channel<Job>(capacity: workers * 2 + 2)
        // Jobs between the walk and their commit, at most: with the reorder buffer, a reader stuck
        // on one slow file (a hung network mount) must not let the others pile up results. While
        // the writer lags (an initial index), the jobs that wait are merged into one transaction:
        // room for 40 jobs (2,000 files, about a megabyte of outcomes) lets those transactions grow
        // to ~1,000 files, which spreads each commit's WAL write and collection updates thinner.
        let inFlight = DispatchSemaphore(value: workers * 16 + 8)
        let tally = Locked(Tally())

        let readersDone = DispatchGroup()
        for i in 0..<workers {
            readersDone.enter()
            spawnThread("photod-read-\(i)") { [self] in
                // A scan's bulk reading yields to what a person waits for: the image workers and
                // the live path (dispatch threads) stay at the process's priority, as does the
                // writer, which both share.
                lowerThreadPriority(by: Self.scanNiceSteps)
                while var job = jobs.receive() {
                    job.batch.files = job.candidates.map { readFile($0) }
                    if let newFiles {
                        let fresh = zip(job.candidates, job.batch.files).filter { $0.0.isNew }.map(\.1)
                        if !fresh.isEmpty { newFiles(fresh) }
                    }
                    job.candidates = []
                    results.send(job)
                }
                readersDone.leave()
            }
        }
        let ordered = DispatchSemaphore(value: 0)
        let committed = DispatchGroup()
        spawnThread("photod-order") { [self] in
            submitInOrder(results, tally: tally, committed: committed, inFlight: inFlight)
            ordered.signal()
        }
        // Between the walk and the readers: starts the reads of each job's files as it joins the
        // readers' queue, so that up to `workers * 2 + 1` jobs (a few hundred files) are read by
        // the kernel in parallel while the readers parse the ones before. With a reader per core
        // and one file at a time each, a cold disk would otherwise have two reads in flight.
        spawnThread("photod-prefetch") {
            while let job = walked.receive() {
                for c in job.candidates {
                    FileDescriptor.prefetch(c.path, size: c.identity.size, head: FileSource.defaultHeadBytes,
                                            tail: ContentFingerprint.span)
                }
                jobs.send(job)
            }
            jobs.close()
        }

        // Moves made while photod was down are looked for only when the index had files.
        let lookForMoves = ((try? database.read { try $0.counts().files }) ?? 0) > 0
        // A first index reads every file: the census counts them ahead of the walk, for the
        // progress a person reads (done of expected, the time left). The scan never waits for
        // it (a listing may hang on a dead network mount the walk stays out of): it stops at
        // the next directory once the scan is over, and writes only into its own scan's
        // progress (told apart by its start time).
        let scanOver = Locked(false)
        if subtrees == nil, !lookForMoves {
            let scanStart = statusBox.withLock { s -> UInt64? in
                s.current?.counted = 0
                return s.current?.startedNanoseconds
            }
            spawnThread("photod-census") { [self] in
                lowerThreadPriority(by: Self.scanNiceSteps)
                let shouldStop = { [self] in scanOver.withLock { $0 } || stopRequested.load(ordering: .relaxed) }
                let note: (Int, Bool) -> Void = { [self] n, finished in
                    statusBox.withLock { s in
                        guard s.current?.startedNanoseconds == scanStart else { return }
                        s.current?.counted = n
                        if finished { s.current?.countFinished = true }
                    }
                }
                let n = Census.count(roots: roots, exclusions: exclusions, shouldStop: shouldStop) { note($0, false) }
                if !shouldStop() { note(n, true) }
            }
        }
        trees.register(roots: roots)
        if trees.refreshTable() == nil { logger.debug("cannot read the mount table: mounts are judged by the file systems alone") }
        var walker = Walk(database: database, logger: logger, status: statusBox, trees: trees, roots: roots,
                          exclusions: exclusions, emit: { job in
                              inFlight.wait()
                              walked.send(job)
                          },
                          shouldStop: { [self] in stopRequested.load(ordering: .relaxed) },
                          lookForMoves: lookForMoves)
        walker.deferNewFiles = deferNewFiles
        walker.readEverything = reread
        walker.adopting = trees.adoptions
        if let subtrees {
            for tree in subtrees where roots.contains(where: { tree.isWithin($0) }) { walker.walk(subtree: tree) }
        } else {
            for root in roots { walker.walk(root: root) }
        }
        walker.finish()
        statusBox.withLock { $0.current?.walkFinished = true }

        walked.close()
        // The prefetch thread closes `jobs` once `walked` drains, and the readers exit when
        // `jobs` does; the writer then needs to know no more results come.
        readersDone.wait()
        results.close()
        ordered.wait()
        committed.wait()
        scanOver.withLock { $0 = true }

        forgetUnreadableFilesGone()
        if !reread.isEmpty { noteReadAgain(reread, ids: rootIDs) }
        let t = tally.withLock { $0 }
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let report = ScanReport(files: walker.filesSeen, readFiles: walker.candidates, removedFiles: walker.removedFiles,
                                removedDirectories: walker.removedDirectories, movedFiles: walker.movedFiles,
                                movedDirectories: walker.movedDirectories, restoredFiles: walker.restoredFiles,
                                errors: t.errors, busyFiles: walker.busyFiles,
                                seconds: t.lastCommit.map { Self.seconds(started.duration(to: $0)) } ?? seconds,
                                finishedAt: now())
        statusBox.withLock {
            $0.state = $0.queuedScans > 0 ? .indexing : .idle
            $0.current = nil
            if subtrees == nil { $0.lastScan = report }
        }
        if let subtrees {
            logger.debug("rescanned \(subtrees.count) tree(s): \(report.files) files, \(report.readFiles) read")
            return report
        }
        let busy = report.busyFiles > 0 ? ", \(report.busyFiles) held open for writing (read when closed)" : ""
        logger.info("scan finished: \(report.files) files, \(report.readFiles) read, \(report.errors) errors, "
                    + "\(report.removedFiles) removed\(busy), in \(fixedDecimals(report.seconds, 2)) s",
                    [("scan.files", String(report.files)), ("scan.read", String(report.readFiles)),
                     ("scan.errors", String(report.errors)), ("scan.removed", String(report.removedFiles))])
        return report
    }

    /// The roots whose files were read by older rules than the reader's (`FileReading.rulesVersion`,
    /// kept per root in `meta`): this scan reads every file of them again. A root the index holds
    /// nothing of is recorded as read by the current rules at once.
    private func rootsToReadAgain(_ roots: [PathBytes], ids: [PathBytes: Int64]) -> Set<PathBytes> {
        var stale = Set<PathBytes>()
        for root in roots {
            guard let id = ids[root] else { continue }
            let (version, entries) = (try? database.read { r in
                (try r.metaInteger(Self.rulesKey(id)) ?? 1, try r.entryCount(of: root))
            }) ?? (Int64(reader.rulesVersion), 0)
            guard version < reader.rulesVersion else { continue }
            if entries == 0 {
                let version = Int64(reader.rulesVersion)
                try? sortQueue.perform { try $0.setMetaInteger(Self.rulesKey(id), version) }
                continue
            }
            logger.notice("the files under '\(root)' were read by older rules (version \(version), now "
                          + "\(reader.rulesVersion)): this scan reads every one of them again, once", [("root", root.string)])
            stale.insert(root)
        }
        return stale
    }

    /// Records the roots this scan read again completely (available, no mount below them
    /// missing, no indexed file in them the disk failed to give, not stopped) as read by
    /// the current rules: a file whose read failed keeps what older rules found until a scan
    /// reads it, so its root is read again completely by the next scan.
    private func noteReadAgain(_ roots: Set<PathBytes>, ids: [PathBytes: Int64]) {
        guard !stopRequested.load(ordering: .relaxed) else { return }
        let offline = trees.offline
        let failed = statusBox.withLock { Array($0.unreadableFiles.keys) }
        var recorded = 0
        for root in roots where !offline.contains(where: { $0.isWithin(root) }) {
            guard let id = ids[root] else { continue }
            if failed.contains(where: { $0.isWithin(root) }) {
                logger.notice("some files under '\(root)' could not be read: the next scan reads every file of it again",
                              [("root", root.string)])
                continue
            }
            do {
                let version = Int64(reader.rulesVersion)
                try sortQueue.perform { try $0.setMetaInteger(Self.rulesKey(id), version) }
                recorded += 1
            } catch {
                logger.error("cannot record the reader's rules version: \(error)")
            }
        }
        guard recorded > 0, !stopRequested.load(ordering: .relaxed) else { return }
        // Every row of those roots was just rewritten: their pages split. Once, a compact file.
        let started = ContinuousClock.now
        do {
            let (before, after) = try sortQueue.compact()
            logger.notice("compacted the database after reading every file again: \(before / 1_000_000) → \(after / 1_000_000) MB "
                          + "in \(fixedDecimals(Self.seconds(ContinuousClock.now - started), 1)) s")
        } catch {
            logger.warning("cannot compact the database after reading every file again (it stays as it is): \(error)")
        }
    }

    static func rulesKey(_ rootID: Int64) -> String { "reader.rules.\(rootID)" }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Hands results to the sort queue in walk order (readers finish out of order), so that a
    /// directory's visit is never committed before its files.
    private func submitInOrder(_ results: Channel<Job>, tally: Locked<Tally>, committed: DispatchGroup,
                               inFlight: DispatchSemaphore) {
        var pending: [Int: Job] = [:]
        var next = 0
        func submit(_ job: Job) {
            guard !job.batch.isEmpty else {
                inFlight.signal()
                job.committed?.signal()
                return
            }
            committed.enter()
            let files = job.batch.files.count
            // This job's own broken files: the summary the queue hands back is the whole
            // transaction's, shared by every job merged into it, so adding it up per job counted
            // a file once per job of its transaction.
            let errors = job.batch.files.count { $0.status == .error }
            sortQueue.submit(job.batch) { [self] result in
                switch result {
                case .success:
                    tally.withLock {
                        $0.errors += errors
                        $0.lastCommit = ContinuousClock.now
                    }
                    statusBox.withLock { $0.current?.noteCommitted(files) }
                case .failure:
                    break  // logged by the queue; the files are read again by the next scan
                }
                inFlight.signal()
                job.committed?.signal()
                committed.leave()
            }
        }
        while let job = results.receive() {
            pending[job.sequence] = job
            while let ready = pending.removeValue(forKey: next) {
                submit(ready)
                next += 1
            }
        }
        // Jobs are numbered without gaps, so nothing can be left; guard against a bug anyway.
        for key in pending.keys.sorted() { submit(pending[key]!) }
    }
}

/// A chunk of work: candidates to read, plus the directory visits and removals that go with it.
struct Job: Sendable {
    var sequence: Int
    var candidates: [Candidate]
    var batch: WriteBatch
    /// Signalled once the job's transaction has run (the walk waits on directory moves).
    var committed: DispatchSemaphore?
}

struct Tally: Sendable {
    var errors = 0
    var lastCommit: ContinuousClock.Instant?
}
