import Dispatch

/// A long-lived part of a process (a queue with its thread, a watcher, a server): started once,
/// stopped once, by the `ServiceGroup` that holds it. Nothing starts in an initializer: an
/// initializer only stores what the service is given, so that a process is wired first and
/// started as a whole, in order.
public protocol Service: AnyObject, Sendable {
    /// Acquires what the service needs and starts its threads; returns at once. Throws when the
    /// service cannot run (the group then stops those started before it).
    func start() throws
    /// Finishes what it holds (or hands it over) and returns once every thread it started has
    /// ended. Called once, and only after `start` returned.
    func stop()
}

/// Services started in order and stopped in the reverse order, as swift-service-lifecycle's
/// `ServiceGroup` does: each is started after those it uses and stopped before them, so a
/// service never sees one it depends on gone.
public final class ServiceGroup: Sendable {
    /// A service with the name the log uses for it.
    public struct Member: Sendable {
        public var name: String
        public var service: any Service

        /// A member named `name`; nil when there is no service (one that could not be made:
        /// the group goes without it).
        public init?(_ name: String, _ service: (any Service)?) {
            guard let service else { return nil }
            self.name = name
            self.service = service
        }
    }

    private let members: [Member]
    private let logger: Logger
    /// How many members have been started (and are to be stopped), and whether the group stopped.
    private let state = Locked((started: 0, stopped: false))
    /// Held while a member starts and while the group stops: a stop that comes during a start
    /// (a signal) waits for the member being started, and stops it too.
    private let transition = Locked(())

    public init(_ members: [Member?], logger: Logger) {
        self.members = members.compactMap { $0 }
        self.logger = logger
    }

    /// Starts every member in order. When one throws, those started before it are stopped in
    /// reverse order and the error is passed on. Members not started when a stop comes are not.
    public func start() throws {
        for (i, member) in members.enumerated() {
            let started: Bool
            do {
                started = try transition.withLock { _ -> Bool in
                    guard !state.withLock({ $0.stopped }) else { return false }
                    try member.service.start()
                    state.withLock { $0.started = i + 1 }
                    return true
                }
            } catch {
                logger.debug("service \(member.name) did not start: \(error)")
                stop()
                throw error
            }
            guard started else { return }
            logger.debug("service \(member.name) started")
        }
    }

    /// Stops the started members in reverse order; later calls do nothing.
    public func stop() {
        transition.withLock { _ in
            let count = state.withLock { s -> Int? in
                guard !s.stopped else { return nil }
                s.stopped = true
                return s.started
            }
            guard let count else { return }
            for member in members.prefix(count).reversed() {
                member.service.stop()
                logger.debug("service \(member.name) stopped")
            }
        }
    }
}

/// A service's "stop now", which its threads look at between steps and sleep on: a sleep ends
/// at once when the stop comes.
public final class StopFlag: Sendable {
    private let stopped = Locked(false)
    private let wake = DispatchSemaphore(value: 0)

    public init() {}

    /// Whether the stop has come.
    public var isStopped: Bool { stopped.withLock { $0 } }

    /// Stops: every sleeper wakes, now and later.
    public func stop() {
        stopped.withLock { $0 = true }
        wake.signal()
    }

    /// Sleeps `duration`, or until the stop; returns whether the stop has come.
    @discardableResult
    public func sleep(_ duration: Duration) -> Bool {
        guard !isStopped else { return true }
        let (seconds, attoseconds) = duration.components
        if wake.wait(timeout: .now() + .nanoseconds(Int(min(seconds, 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
            == .success {
            wake.signal()  // the next sleeper wakes too
        }
        return isStopped
    }
}
