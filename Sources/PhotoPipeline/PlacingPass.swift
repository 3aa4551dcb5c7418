import PhotoModel
import PhotoStore
import PhotoSystem
import Synchronization

/// Places the assets of a library indexed before places (`IndexWriter.placeAssets`): from its
/// start, one job of `chunk` assets at a time on the sort queue, each queued when the one
/// before has committed, so the live path's batches take their turns between them. Nothing is
/// re-read: the coordinates are in the index. Progress is in `library.status` (`placing`).
public final class PlacingPass: Service {
    private let database: Database
    private let sortQueue: SortQueue
    private let logger: Logger
    private let chunk: Int
    private let stopping = Atomic<Bool>(false)

    public init(database: Database, sortQueue: SortQueue, logger: Logger, chunk: Int = 2000) {
        self.database = database
        self.sortQueue = sortQueue
        self.logger = logger
        self.chunk = chunk
    }

    public func start() throws {
        guard let progress = try database.read({ try $0.placingProgress() }) else { return }
        logger.info("placing \(progress.total - progress.done) assets indexed before places, in the background")
        next(total: progress.total)
    }

    public func stop() {
        stopping.store(true, ordering: .relaxed)
        // The job in the queue finishes (or fails) on its own; the queue stops after this
        // service and runs it first.
    }

    /// Queues the next job; `total` (the first job's) is the count `start` made.
    private func next(total: Int? = nil) {
        guard !stopping.load(ordering: .relaxed) else { return }
        let more = Locked(false)
        sortQueue.submit(operation: { [chunk] writer, now in
            let (changes, left) = try writer.placeAssets(limit: chunk, now: now, total: total)
            more.withLock { $0 = left }
            return changes
        }, done: { [self] result in
            switch result {
            case .success:
                if more.withLock({ $0 }) { next() } else { logger.info("every asset indexed before places is placed") }
            case .failure(let error):
                // The next start goes on from where this one stopped.
                logger.warning("placing assets indexed before places stopped: \(error.message)")
            }
        })
    }
}
