import PhotoModel
@testable import PhotoWatch

/// Drives a coalescer with injected time and a fake disk for its `stat` requests.
struct Harness {
    var coalescer: Coalescer
    var now: Duration = .zero
    /// Delivered batches, in order.
    var batches: [[WatchChange]] = []
    /// Every other action, in order.
    var actions: [CoalescerAction] = []
    /// What `lstat` answers (absent: the path is gone).
    var disk: [PathBytes: SettleStat] = [:]
    /// How many `stat` requests were answered.
    var statRequests = 0

    init(_ limits: CoalescerLimits = CoalescerLimits()) {
        coalescer = Coalescer(limits: limits)
    }

    var changes: [WatchChange] { batches.flatMap { $0 } }

    mutating func record(_ out: [CoalescerAction]) {
        for action in out {
            switch action {
            case .deliver(let changes):
                batches.append(changes)
            case .stat(let paths):
                statRequests += 1
                actions.append(action)
                let results = paths.map { SettleResult(path: $0, stat: disk[$0]) }
                record(coalescer.settled(results, at: now))
            default:
                actions.append(action)
            }
        }
    }

    /// Feeds records (one read) at the current time.
    mutating func feed(_ events: [InotifyEvent]) {
        for e in events { record(coalescer.receive(e, at: now)) }
    }

    mutating func feed(_ events: InotifyEvent...) { feed(events) }

    /// Lets time pass, ticking at every deadline on the way (as the shell's timer does).
    mutating func advance(by delta: Duration) {
        let target = now + delta
        while let deadline = coalescer.nextDeadline, deadline <= target {
            now = max(now, deadline)
            record(coalescer.tick(at: now))
        }
        now = target
    }

    /// Lets time pass until nothing waits any more (at most a minute).
    mutating func settle() {
        let end = now + .seconds(60)
        while let deadline = coalescer.nextDeadline, deadline <= end {
            now = max(now, deadline)
            record(coalescer.tick(at: now))
        }
    }
}

/// Shorthand for records: `ev(.create, "/r/a.jpg")`.
func ev(_ mask: InotifyMask, _ path: String, cookie: UInt32 = 0) -> InotifyEvent {
    let p = PathBytes(path)
    return InotifyEvent(directory: p.parent, name: p.lastComponent, mask: mask, cookie: cookie)
}

/// A record on a watched directory itself.
func selfEvent(_ mask: InotifyMask, _ path: String) -> InotifyEvent {
    InotifyEvent(directory: PathBytes(path), name: [], mask: mask)
}

func p(_ s: String) -> PathBytes { PathBytes(s) }
