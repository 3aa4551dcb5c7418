import Dispatch
import Foundation
import PhotoSystem

/// A task executor with one thread of its own.
///
/// Swift Testing runs tests on the cooperative pool, which has one thread per core (two in
/// CI), and most end-to-end tests block their thread while a daemon works. A task that must
/// keep up with something outside the test process — a change stream's consumer — starves
/// behind them: its events wait, unread, while the test's deadline passes. Started with this
/// executor as its preference (`Task(executorPreference: ThreadExecutor.shared)`), it runs
/// whatever the pool is doing.
public final class ThreadExecutor: TaskExecutor, Sendable {
    /// One thread shared by every consumer that needs it (they never block it).
    public static let shared = ThreadExecutor(name: "photod.tests.executor")

    private let jobs = Locked<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    /// Starts the executor's thread.
    public init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    private func run() {
        while true {
            available.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
