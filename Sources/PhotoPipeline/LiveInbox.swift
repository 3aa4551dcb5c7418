import Dispatch
import PhotoModel
import PhotoSystem
import PhotoWatch

/// What waits for the live loop: the watcher's batches, changes of the mount table, rescans and
/// adoptions asked by clients. Filled from other threads (the watcher's queue, the mount
/// watcher's thread, clients' queues), emptied by the loop, which it wakes. Bounded: when more
/// than `maxQueuedChanges` changes wait, they are dropped for one full rescan, which finds them
/// all.
public final class LiveInbox: Sendable {
    /// What the loop takes at once.
    struct Taken: Sendable {
        var batches: [[WatchChange]] = []
        /// Changes were dropped: a full rescan finds them.
        var lostChanges = false
        /// A client asked for a full rescan.
        var rescanRequested = false
        /// The mount table changed.
        var mountsChanged = false
        /// Signalled once what was taken is applied (the callers of `rescan`).
        var waiters: [DispatchSemaphore] = []
        var adoptions: [Adoption] = []

        var isEmpty: Bool { batches.isEmpty && !lostChanges && !rescanRequested && adoptions.isEmpty && !mountsChanged }
    }

    /// A tree an operator adopts, with who waits for the answer.
    struct Adoption: Sendable {
        var tree: PathBytes
        var done: Callback<LiveLoop.AdoptionResult, Void>
    }

    private struct State: Sendable {
        var own = OwnRenames()
        var taken = Taken()
        var pendingCount = 0
        var closed = false
        var backlogRescans = 0
        var mountChanges = 0
    }

    let maxQueuedChanges: Int
    let logger: Logger
    /// Signalled whenever something arrives.
    let wake = DispatchSemaphore(value: 0)
    private let state = Locked(State())

    public init(maxQueuedChanges: Int, logger: Logger) {
        self.maxQueuedChanges = maxQueuedChanges
        self.logger = logger
    }

    /// The trash's renames, before it makes them: the watcher's reports of the names leaving
    /// change nothing (`OwnRenames`).
    public func expectOwnRenames(removed: [PathBytes]) {
        state.withLock { $0.own.expect(removed: removed, at: .now) }
    }

    /// Forgets expected renames that were not made (a call that failed and undid its own).
    public func forgetOwnRenames(removed: [PathBytes]) {
        state.withLock { $0.own.forget(removed: removed) }
    }

    /// A batch from the watcher (on its queue: only queued here).
    public func receive(_ changes: [WatchChange]) {
        guard !changes.isEmpty else { return }
        let dropped = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            let kept = s.own.filter(changes, at: .now)
            if kept.count != changes.count { logger.debug("\(changes.count - kept.count) reports of photod's own renames dropped") }
            let changes = kept
            guard !changes.isEmpty else { return false }
            if s.pendingCount + changes.count > maxQueuedChanges {
                s.taken.batches = []
                s.pendingCount = 0
                let first = !s.taken.lostChanges
                s.taken.lostChanges = true
                if first { s.backlogRescans += 1 }
                return first
            }
            s.taken.batches.append(changes)
            s.pendingCount += changes.count
            return false
        }
        if dropped { logger.warning("more than \(maxQueuedChanges) changes wait: a full rescan will find them instead") }
        wake.signal()
    }

    /// The mount table changed (on the mount watcher's thread).
    public func mountsChanged() {
        state.withLock {
            $0.taken.mountsChanged = true
            $0.mountChanges += 1
        }
        wake.signal()
    }

    /// Queues a rescan of `trees` (all roots when empty); the semaphore is signalled once it is
    /// applied. False when the loop is stopping.
    func rescan(_ trees: [PathBytes], done: DispatchSemaphore) -> Bool {
        let accepted = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            if trees.isEmpty {
                s.taken.rescanRequested = true
            } else {
                s.taken.batches.append(trees.map { .rescan($0) })
                s.pendingCount += trees.count
            }
            s.taken.waiters.append(done)
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// Queues an adoption. False when the loop is stopping.
    func adopt(_ adoption: Adoption) -> Bool {
        let accepted = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.taken.adoptions.append(adoption)
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// Takes everything waiting.
    func take() -> Taken {
        state.withLock { s in
            defer {
                s.taken = Taken()
                s.pendingCount = 0
            }
            return s.taken
        }
    }

    /// Refuses what comes from now on, and wakes the loop.
    func close() {
        state.withLock { $0.closed = true }
        wake.signal()
    }

    /// Changes waiting, drops for a rescan so far, changes of the mount table seen.
    var counts: (pending: Int, backlogRescans: Int, mountChanges: Int) {
        state.withLock { ($0.pendingCount, $0.backlogRescans, $0.mountChanges) }
    }
}

/// When the live loop has timed work: the hourly purge, polls of the trees inotify cannot watch,
/// rechecks of unavailable trees (and of every tree when the mount table cannot be watched).
/// Pure: time is an input.
struct LiveSchedule: Sendable {
    typealias Instant = ContinuousClock.Instant

    let options: LiveOptions
    private(set) var nextPurge: Instant
    private(set) var nextPoll: Instant
    private(set) var nextRecheck: Instant
    private(set) var nextMountRecheck: Instant

    /// What is due.
    struct Due: Sendable, Hashable {
        var purge = false
        /// Recheck the unavailable trees (`everyTree`: every tree a change of the mount table concerns).
        var recheck = false
        var everyTree = false
        var poll = false
    }

    /// The purge is due at once; the rest after their intervals.
    init(options: LiveOptions, start: Instant) {
        self.options = options
        nextPurge = start
        nextPoll = start.advanced(by: options.pollInterval)
        nextRecheck = start.advanced(by: options.rootRecheckInterval)
        nextMountRecheck = start.advanced(by: options.mountRecheckInterval)
    }

    /// What is due at `now`, moving those deadlines on. `mountsChanged`: the mount table changed;
    /// `mountTableWatched`: its changes are reported (else every tree is rechecked at intervals);
    /// `hasOffline`: some tree is unavailable.
    mutating func due(at now: Instant, mountsChanged: Bool, mountTableWatched: Bool, hasOffline: Bool) -> Due {
        var due = Due()
        if nextPurge <= now {
            due.purge = true
            nextPurge = now.advanced(by: options.purgeInterval)
        }
        due.everyTree = mountsChanged
        if !mountTableWatched, nextMountRecheck <= now {
            // Nothing tells photod of mounts: look at the table now and then.
            due.everyTree = true
            nextMountRecheck = now.advanced(by: options.mountRecheckInterval)
        }
        if due.everyTree || (hasOffline && nextRecheck <= now) {
            due.recheck = true
            nextRecheck = now.advanced(by: options.rootRecheckInterval)
        }
        if nextPoll <= now {
            due.poll = true
            nextPoll = now.advanced(by: options.pollInterval)
        }
        return due
    }

    /// When to wake next when nothing arrives. With nothing polled, the next poll is put off:
    /// a tree that becomes polled waits a whole interval for its first poll.
    mutating func nextWake(at now: Instant, mountTableWatched: Bool, hasOffline: Bool, hasPolledTrees: Bool) -> Instant {
        var deadline = nextPurge
        if hasOffline { deadline = min(deadline, nextRecheck) }
        if !mountTableWatched { deadline = min(deadline, nextMountRecheck) }
        if hasPolledTrees {
            deadline = min(deadline, nextPoll)
        } else {
            nextPoll = now.advanced(by: options.pollInterval)
        }
        return deadline
    }
}

/// The removals photod's own trash will cause, by path, taken out of the watcher's batches as
/// they come (`LiveInbox.expectOwnRenames`): the trash's commit took the rows out already, and a
/// removal decided before a quick restore and applied after it would take the restored file out.
/// Additions (a restore's) are not taken out: compared with the index, they change nothing. A
/// report of anything else at an expected path (a new file written there) ends the expectation,
/// and so does a minute without any: a tree no watch covers never reports.
struct OwnRenames: Sendable {
    private(set) var removals: [PathBytes: Int] = [:]
    private var since: ContinuousClock.Instant?
    static let window: Duration = .seconds(60)

    mutating func expect(removed: [PathBytes], at now: ContinuousClock.Instant) {
        expire(at: now)
        for p in removed { removals[p, default: 0] += 1 }
        since = now
    }

    mutating func forget(removed: [PathBytes]) {
        for p in removed { _ = take(p) }
    }

    /// `changes` without the removals expected.
    mutating func filter(_ changes: [WatchChange], at now: ContinuousClock.Instant) -> [WatchChange] {
        expire(at: now)
        guard !removals.isEmpty else { return changes }
        var dropped = Set<PathBytes>()
        return changes.filter { change in
            switch change {
            case .removed(let p) where take(p):
                dropped.insert(p)
                return false
            case .movedOut(let p) where dropped.contains(p):
                return false
            case .added(let p), .modified(let p):
                removals[p] = nil  // the disk moved on: a later removal there is someone else's
                return true
            case .moved(_, let to):
                removals[to] = nil
                return true
            default:
                return true
            }
        }
    }

    private mutating func take(_ p: PathBytes) -> Bool {
        guard let n = removals[p], n > 0 else { return false }
        removals[p] = n == 1 ? nil : n - 1
        return true
    }

    private mutating func expire(at now: ContinuousClock.Instant) {
        if let since, now - since > Self.window {
            removals = [:]
            self.since = nil
        }
    }
}
