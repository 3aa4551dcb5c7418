import Dispatch
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import PhotoWatch

/// What the daemon wires around a database, for tests: its one writer (the sort queue, started),
/// the trees, and indexers with the readers a test chooses. The queue stops with the pipeline.
final class TestPipeline {
    let db: Database
    let queue: SortQueue
    let trees: Trees

    /// Signalled at every commit.
    private let committed = DispatchSemaphore(value: 0)

    init(_ db: Database, roots: [PathBytes] = [], probeDeadline: Duration = .seconds(2)) {
        self.db = db
        queue = SortQueue(database: db, logger: .silent)
        trees = Trees(roots: roots, database: db, sortQueue: queue, logger: .silent, probeDeadline: probeDeadline)
        queue.onCommit { [committed] _, _ in committed.signal() }
        queue.start()
    }

    /// Waits until `condition` holds, reading the index, now or after a commit; fails after
    /// `timeout` (scaled).
    func awaitCommit(_ what: String, timeout: Duration = .seconds(30), _ condition: (IndexReader) throws -> Bool) throws {
        try eventually(what, timeout: timeout) {
            if (try? db.read(condition)) == true { return true }
            // Nothing changes in the index but by a commit: await the next one (or look again).
            return committed.wait(timeout: .now() + .milliseconds(100)) == .success && (try? db.read(condition)) == true
        }
    }

    deinit { queue.stop() }

    /// An indexer over this pipeline that reads with `reader`.
    func indexer(_ reader: any FileReading = FakeReader(), workers: Int? = nil, exclusions: PathExclusions = .none) -> Indexer {
        Indexer(database: db, sortQueue: queue, trees: trees, reader: reader, logger: .silent, workers: workers, exclusions: exclusions)
    }
}

/// A live loop over a library as the daemon wires it — the watchers report to an inbox the loop
/// takes from — started as a service group; `stop()` stops it in reverse order.
final class TestLive {
    let pipeline: TestPipeline
    let inbox: LiveInbox
    let loop: LiveLoop
    private let group: ServiceGroup
    private var stopped = false

    init(_ db: Database, roots: [PathBytes], options: LiveOptions = LiveOptions(), reader: any FileReading = FakeReader(),
         clock: any LoopClock = SystemLoopClock(), watch: Bool = true, exclusions: PathExclusions = .none) throws {
        pipeline = TestPipeline(db, roots: roots)
        inbox = LiveInbox(maxQueuedChanges: options.maxQueuedChanges, logger: .silent)
        let watcher = watch ? try InotifyWatcher(limits: options.watchLimits, exclusions: exclusions, logger: .silent,
                                                  onChanges: inbox.receive) : nil
        loop = LiveLoop(indexer: pipeline.indexer(reader, exclusions: exclusions), sortQueue: pipeline.queue, trees: pipeline.trees, inbox: inbox, roots: roots,
                        watcher: watcher, watchError: watch ? nil : "not watched (a test)", mountWatcher: nil,
                        mountWatchError: "not watched (a test)", options: options, logger: .silent, clock: clock)
        group = ServiceGroup([.init("watcher", watcher), .init("live loop", loop)], logger: .silent)
        try group.start()
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        group.stop()
    }

    deinit { stop() }
}
