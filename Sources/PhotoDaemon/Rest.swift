@preconcurrency import Dispatch
import PhotoSystem
import Synchronization

/// When a daemon at rest gives memory back. SQLite's page caches (the writer's and each reader's,
/// up to 4 MB each) fill during a scan and a client's fetches and would stay full for as long as
/// the daemon runs: most of what it holds at idle. A rest empties them and returns malloc's free
/// pages to the kernel; the pages come back from the kernel's page cache when next read.
///
/// Rest comes once the daemon has been quiet for `quiet` (no request answered, nothing moved in
/// the pipeline, no image rendered), or, for a daemon that a monitor asks something every few
/// seconds, once `period` has passed since the last rest with the pipeline idle. Never while the
/// pipeline has work, and not again until something happened.
struct RestPolicy: Sendable, Equatable {
    var quiet: Duration = .seconds(10)
    var period: Duration = .seconds(60)

    /// What the policy remembers between observations.
    struct State: Sendable, Equatable {
        var activity: Int?
        var quietSince: ContinuousClock.Instant?
        /// Since when `period` counts: the first observation, the last rest, the pipeline's last work.
        var periodStart: ContinuousClock.Instant?
        /// Whether anything happened since the last rest.
        var dirty = true
    }

    /// Takes one observation (a counter that grows with every request, commit and render, and
    /// whether the pipeline has work) and says whether to rest now.
    func observe(_ s: inout State, activity: Int, busy: Bool, at now: ContinuousClock.Instant) -> Bool {
        if activity != s.activity || busy {
            s.activity = activity
            s.quietSince = now
            s.dirty = true
        }
        if busy || s.periodStart == nil { s.periodStart = now }
        guard !busy, s.dirty, let quietSince = s.quietSince, let periodStart = s.periodStart,
              now - quietSince >= quiet || now - periodStart >= period else { return false }
        s.periodStart = now
        s.dirty = false
        return true
    }
}

/// Counts the requests the socket answered, for the rest policy's activity.
final class RequestCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Applies `RestPolicy` on a timer: observes every `quiet / 4` (a rest comes 10–12.5 s after the
/// last activity) and, when it says so, runs `rest`.
final class RestService: Service {
    let policy: RestPolicy
    private let activity: @Sendable () -> Int
    private let busy: @Sendable () -> Bool
    private let rest: @Sendable () -> Void
    private let queue = DispatchQueue(label: "photod.rest", qos: .utility)
    private let timer: any DispatchSourceTimer
    private let state = Locked(RestPolicy.State())
    private let rests = Atomic<Int>(0)

    init(policy: RestPolicy, activity: @escaping @Sendable () -> Int, busy: @escaping @Sendable () -> Bool,
         rest: @escaping @Sendable () -> Void) {
        self.policy = policy
        self.activity = activity
        self.busy = busy
        self.rest = rest
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    /// How many times the daemon rested (`library.status`'s `memory.rests`).
    var restCount: Int { rests.load(ordering: .relaxed) }

    func start() {
        let every = max(1, Int(policy.quiet / .milliseconds(1)) / 4)
        timer.schedule(deadline: .now() + .milliseconds(every), repeating: .milliseconds(every), leeway: .milliseconds(every / 4 + 1))
        timer.setEventHandler { [self] in tick() }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        queue.sync {}  // a tick in progress has ended
    }

    private func tick() {
        let (activity, busy, now) = (activity(), busy(), ContinuousClock.now)
        guard state.withLock({ policy.observe(&$0, activity: activity, busy: busy, at: now) }) else { return }
        rest()
        rests.wrappingAdd(1, ordering: .relaxed)
    }
}
