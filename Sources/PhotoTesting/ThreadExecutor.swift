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

    private let name: String
    /// The jobs waiting, and whether the thread has been started (with the first job).
    private let jobs = Locked<(waiting: [UnownedJob], started: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)

    /// An executor whose thread starts with its first job.
    public init(name: String) { self.name = name }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let first = jobs.withLock { j -> Bool in
            j.waiting.append(job)
            defer { j.started = true }
            return !j.started
        }
        if first { spawnThread(name) { [self] in run() } }
        available.signal()
    }

    private func run() {
        while true {
            available.wait()
            let job = jobs.withLock { $0.waiting.removeFirst() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
