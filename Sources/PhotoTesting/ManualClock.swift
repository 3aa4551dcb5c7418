import Dispatch
import PhotoSystem

/// A `LoopClock` a test moves by hand: a loop that waits on it wakes when the test advances it
/// past its deadline (or when the loop is woken otherwise), never by the passing of real time.
public final class ManualClock: LoopClock {
    private struct Waiter {
        var deadline: ContinuousClock.Instant
        var wake: DispatchSemaphore
    }

    private let state: Locked<(now: ContinuousClock.Instant, waiters: [Int: Waiter], next: Int)>

    public init(start: ContinuousClock.Instant = .now) {
        state = Locked((start, [:], 0))
    }

    public var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// Moves the time on, waking the loops whose deadline it reaches.
    public func advance(by duration: Duration) {
        let due = state.withLock { s -> [DispatchSemaphore] in
            s.now = s.now.advanced(by: duration)
            let now = s.now
            let due = s.waiters.filter { $0.value.deadline <= now }
            for key in due.keys { s.waiters[key] = nil }
            return due.values.map(\.wake)
        }
        due.forEach { $0.signal() }
    }

    public func wait(on wake: DispatchSemaphore, until deadline: ContinuousClock.Instant) {
        let key = state.withLock { s -> Int? in
            guard deadline > s.now else { return nil }
            s.next += 1
            s.waiters[s.next] = Waiter(deadline: deadline, wake: wake)
            return s.next
        }
        guard let key else { return }
        wake.wait()
        state.withLock { _ = $0.waiters.removeValue(forKey: key) }
    }
}
