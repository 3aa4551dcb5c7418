@preconcurrency import Dispatch
import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem

/// Keeps the service manager informed: `STATUS=` lines a person reads in `systemctl status`, and
/// watchdog pings that mean "the pipeline is alive" — not a free-running timer. A ping goes out
/// every half watchdog interval while the pipeline is idle or has moved since the last one (a
/// job committed or cancelled, a file seen or read, a change applied, a poll run); when work is
/// pending and nothing has moved for that long, the pings stop and systemd restarts photod.
final class ServiceReporter: Sendable {
    let notifier: ServiceNotifier
    let database: Database
    let indexer: Indexer
    let trees: Trees
    let sortQueue: SortQueue
    let live: LiveLoop
    let roots: [PathBytes]
    let logger: Logger
    private let queue = DispatchQueue(label: "photod.service")
    private let state = Locked(State())
    /// The beat: status lines and watchdog pings (resumed by `ready()`).
    private let timer: any DispatchSourceTimer

    private struct State {
        var lastProgress: Int?
        var lastStatus = ""
        var lastAssets = 0
        var stalledSince: ContinuousClock.Instant?
        var stopped = false
        /// Why the last reload was refused: kept at the head of every status line until a reload
        /// succeeds (which is a fresh process: nothing to clear).
        var reloadFailure: String?
    }

    /// How often the status line is refreshed when there is no watchdog.
    static let statusInterval: Duration = .seconds(2)

    init(notifier: ServiceNotifier, database: Database, indexer: Indexer, trees: Trees, sortQueue: SortQueue, live: LiveLoop,
         roots: [PathBytes], logger: Logger) {
        self.notifier = notifier
        self.database = database
        self.indexer = indexer
        self.trees = trees
        self.sortQueue = sortQueue
        self.live = live
        self.roots = roots
        self.logger = logger
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    /// `READY=1` with the first status: the database is open and migrated and the socket listens.
    func ready() {
        let status = statusLine()
        state.withLock { $0.lastStatus = status }
        notifier.notify("READY=1\nSTATUS=\(status)")
        // Resumed even without a manager: a dispatch source must not be released inactive.
        defer { timer.resume() }
        guard notifier.isActive else { return }
        let period = notifier.watchdogInterval.map { min($0 / 2, Self.statusInterval) } ?? Self.statusInterval
        let milliseconds = max(1, Int(period / .milliseconds(1)))
        timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
        timer.setEventHandler { [self] in tick() }
    }

    /// `RELOADING=1` with the time it began (`MONOTONIC_USEC=`, which systemd's
    /// `Type=notify-reload` requires, sd_notify(3)); `READY=1` follows from this process or its
    /// successor.
    func reloading() {
        notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(Monotonic.nanoseconds / 1000)\nSTATUS=Reloading the configuration")
    }

    /// `READY=1` again after a reload that did not happen; `reason` leads the status line from now
    /// until a reload succeeds, so that `systemctl status` still says it when the operator looks.
    func reloadFailed(_ reason: String) {
        let line = statusLine()
        let status = state.withLock { s -> String in
            s.reloadFailure = reason
            s.lastStatus = Self.status(line, reloadFailure: reason)
            return s.lastStatus
        }
        notifier.notify("READY=1\nSTATUS=\(status)")
    }

    /// The status line with a refused reload's reason in front of it.
    static func status(_ line: String, reloadFailure: String?) -> String {
        guard let reloadFailure else { return line }
        return "Reload failed, running the previous configuration: \(reloadFailure); \(line)"
    }

    /// `STOPPING=1`; no more pings or status lines.
    func stopping() {
        state.withLock { $0.stopped = true }
        timer.cancel()
        notifier.notify("STOPPING=1\nSTATUS=Stopping")
    }

    /// One beat: the status line when it changed, and a watchdog ping if the pipeline is alive.
    private func tick() {
        let progress = progressCount()
        let busy = isBusy()
        let now = ContinuousClock.now
        var messages: [String] = []
        let line = statusLine()
        let (ping, stalledFor) = state.withLock { s -> (Bool, Duration?) in
            guard !s.stopped else { return (false, nil) }
            let status = Self.status(line, reloadFailure: s.reloadFailure)
            if status != s.lastStatus {
                s.lastStatus = status
                messages.append("STATUS=\(status)")
            }
            let moved = s.lastProgress != progress
            s.lastProgress = progress
            if !busy || moved {
                s.stalledSince = nil
                return (true, nil)
            }
            if s.stalledSince == nil { s.stalledSince = now }
            return (false, now - s.stalledSince!)
        }
        if ping, notifier.watchdogInterval != nil { messages.append("WATCHDOG=1") }
        if let stalledFor, let interval = notifier.watchdogInterval, stalledFor >= interval / 2 {
            // Logged once per half interval of silence: what systemd will see.
            logger.warning("the pipeline has work pending and has not moved for \(stalledFor): watchdog pings withheld")
        }
        if !messages.isEmpty { notifier.notify(messages.joined(separator: "\n")) }
    }

    /// A number that grows whenever the pipeline does anything.
    func progressCount() -> Int {
        let q = sortQueue.stats
        let i = indexer.status
        let l = live.status
        return q.ran + q.cancelled + q.failed + q.retries + (i.current.map { $0.files + $0.committed + $0.directories } ?? 0)
            + (i.lastScan?.files ?? 0) + l.appliedChanges + l.polls + l.overflows
    }

    /// Whether the pipeline has work it has not done.
    func isBusy() -> Bool {
        let l = live.status
        return sortQueue.isBusy || indexer.status.state == .indexing || l.busy || l.pendingChanges > 0
    }

    /// What `systemctl status` shows: `Indexing 12,400 of ~50,000 files`, `Watching 48,210 assets
    /// in 3 roots (1 polled)`, `Library root /srv/photos unavailable`.
    func statusLine() -> String {
        let i = indexer.status
        if i.state == .indexing, i.current == nil, i.lastScan == nil { return "Starting the first scan" }
        if i.state == .indexing, let scan = i.current {
            // Reading: what was found to read, at what pace, for how long still.
            if scan.expectedToRead > 0 {
                let now = Monotonic.nanoseconds
                return "Indexing: " + ProgressWords.scan(read: scan.committed, toRead: scan.expectedToRead,
                                                         walkFinished: scan.expectationFinal,
                                                         filesPerSecond: scan.filesPerSecond(at: now),
                                                         secondsLeft: scan.secondsLeft(at: now))
            }
            // Comparing with the index, nothing to read so far.
            let known = state.withLock { $0.lastAssets }
            let expected = i.lastScan?.files ?? 0
            if expected > 0 {
                return "Checking \(Self.grouped(scan.files)) of ~\(Self.grouped(max(expected, scan.files))) files"
            }
            return "Checking \(Self.grouped(scan.files)) files" + (known > 0 ? " (\(Self.grouped(known)) assets)" : "")
        }
        let assets = (try? database.read { try $0.counts() })?.assets ?? 0
        state.withLock { $0.lastAssets = assets }
        if sortQueue.stats.waitingForSpace {
            return "Disk full: changes are held and retried until there is space; reads go on"
        }
        if let failure = sortQueue.stats.writeFailure {
            return "The database cannot be written (\(failure)): writes are refused until it can; reads go on"
        }
        let l = live.status
        let polledTrees = l.networkTrees + l.unwatchedTrees
        let polledRoots = l.watchError != nil ? roots.count : roots.filter { root in polledTrees.contains { $0.isWithin(root) } }.count
        var line = "Watching \(Self.grouped(assets)) assets in \(roots.count) root\(roots.count == 1 ? "" : "s")"
        if polledRoots > 0 { line += " (\(polledRoots) polled)" }
        let unavailable = trees.unavailableRoots.keys.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        if let first = unavailable.first {
            let more = unavailable.count > 1 ? " and \(unavailable.count - 1) more" : ""
            return "Library root \(first.string) unavailable\(more); " + line
        }
        let mounts = trees.unavailableMounts.keys.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        if let first = mounts.first {
            let more = mounts.count > 1 ? " and \(mounts.count - 1) more" : ""
            return "Mount \(first.string) unavailable\(more); " + line
        }
        return line
    }

    static func grouped(_ n: Int) -> String { ProgressWords.grouped(Int64(n)) }
}
