import Dispatch

/// The clock a thread's loop reads and waits on: the time now, and a wait that ends at a
/// deadline or when the loop is woken. Passed in, so that a loop's timing can be driven by a
/// test's own clock.
public protocol LoopClock: Sendable {
    /// The time now (monotonic).
    var now: ContinuousClock.Instant { get }
    /// Waits until `deadline`, or until `wake` is signalled, whichever comes first.
    func wait(on wake: DispatchSemaphore, until deadline: ContinuousClock.Instant)
}

/// The system's monotonic clock.
public struct SystemLoopClock: LoopClock {
    public init() {}

    public var now: ContinuousClock.Instant { .now }

    public func wait(on wake: DispatchSemaphore, until deadline: ContinuousClock.Instant) {
        let wait = ContinuousClock.now.duration(to: deadline)
        guard wait > .zero else { return }
        let (seconds, attoseconds) = wait.components
        _ = wake.wait(timeout: .now() + .nanoseconds(Int(min(seconds, 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }
}
