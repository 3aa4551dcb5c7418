import PhotoModel

/// The coalescer's windows and thresholds.
public struct CoalescerLimits: Sendable, Hashable {
    /// A buffered batch is delivered after this much time without a new change: a single file
    /// is not held back longer than this. Default 15 ms.
    public var quietDelay: Duration
    /// A batch is delivered at the latest this long after its first change, however busy the
    /// tree is. Default 250 ms.
    public var maxDelay: Duration
    /// A batch is delivered as soon as it holds this many changes: a 5,000-file copy arrives
    /// as batches of this size. Default 50 (the enumerator's chunk).
    public var maxPaths: Int
    /// How long an `IN_MOVED_FROM` that ended a read waits for its `IN_MOVED_TO`. Default 50 ms.
    public var moveWait: Duration
    /// Files that change without a close (hard links, `cp -al`, NFS exports) are examined
    /// (`lstat`) this long after their last event, and again at this interval until two
    /// examinations in a row agree on size and mtime. Default 1 s, so a quiet file settles
    /// after about 2 s.
    public var settleInterval: Duration
    /// How long after delivering a scan (`directoryAdded`, `rescan`) the coalescer assumes the
    /// consumer's scan may still run and see files there: a file created and deleted below it
    /// meanwhile is reported `removed` instead of cancelling out (the scan may have indexed
    /// it). Default 30 s.
    public var recentScanWindow: Duration

    /// The defaults: 15 ms quiet, 250 ms at most, 50 changes, 50 ms move wait, 1 s settle
    /// interval, 30 s recent-scan window.
    public init(quietDelay: Duration = .milliseconds(15), maxDelay: Duration = .milliseconds(250), maxPaths: Int = 50,
                moveWait: Duration = .milliseconds(50), settleInterval: Duration = .seconds(1),
                recentScanWindow: Duration = .seconds(30)) {
        precondition(maxPaths > 0, "maxPaths must be positive")
        self.quietDelay = quietDelay
        self.maxDelay = maxDelay
        self.maxPaths = maxPaths
        self.moveWait = moveWait
        self.settleInterval = settleInterval
        self.recentScanWindow = recentScanWindow
    }
}

/// What an `lstat` of a settling file found: the fields that must hold still.
public struct SettleStat: Sendable, Hashable {
    /// `st_size`.
    public var size: Int64
    /// `st_mtim` in nanoseconds.
    public var mtimeNanoseconds: Int64

    /// A stat result.
    public init(size: Int64, mtimeNanoseconds: Int64) {
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
    }
}

/// The shell's answer to `CoalescerAction.stat`: a path and what `lstat` found (nil when the
/// path is gone or is not a regular file).
public struct SettleResult: Sendable, Hashable {
    /// The path that was examined.
    public var path: PathBytes
    /// Its size and mtime, or nil when it vanished or is not a regular file.
    public var stat: SettleStat?
    /// Another process holds the file open for writing (a stalled copy): its close will come,
    /// keep waiting whatever the stat says.
    public var isOpenForWriting: Bool

    /// A result for `path`.
    public init(path: PathBytes, stat: SettleStat?, isOpenForWriting: Bool = false) {
        self.path = path
        self.stat = stat
        self.isOpenForWriting = isOpenForWriting
    }
}

/// What the coalescer asks its shell to do. Perform the actions in order, at once: the
/// watch actions before the next record is resolved, so that later records of the same read
/// already see the rewritten paths.
public enum CoalescerAction: Sendable, Hashable {
    /// Watch this new directory and every directory below it (it was created or moved in).
    case watch(PathBytes)
    /// A watched directory was renamed inside the tree: rewrite the path of every watch at or
    /// below `from` to lie below `to` (the watches follow the inode).
    case moveWatches(from: PathBytes, to: PathBytes)
    /// A directory left the tree (deleted, or moved out): drop every watch at or below it.
    case unwatch(PathBytes)
    /// A `.nomedia` file appeared in (`present`) or disappeared from the directory: keep its
    /// own watch (to see `.nomedia` go) but ignore its other events and drop (or, when it
    /// disappeared, add back) the watches below it.
    case noMedia(PathBytes, present: Bool)
    /// A directory's mode, owner or ACL changed (`IN_ATTRIB`): if it is not watched (it could
    /// not be read before), watch it now and post a `rescan` of it when that worked — a
    /// `chmod` that makes a directory readable brings its files in.
    case directoryAttributes(PathBytes)
    /// `lstat` these files and answer with `Coalescer.settled(_:at:)`: they changed without a
    /// close and have been quiet for the settle interval.
    case stat([PathBytes])
    /// Hand this batch of changes to the consumer.
    case deliver([WatchChange])
}

/// Turns resolved inotify records into batches of semantic changes. A pure state machine:
/// time is an input (`Duration` since any fixed origin, monotonic), nothing is read from the
/// disk; the shell performs the returned actions and calls `tick(at:)` at `nextDeadline`.
///
/// Rules:
/// - A file is reported after `IN_CLOSE_WRITE` (created and closed: `added`; otherwise
///   `modified`) or a rename, never on `IN_MODIFY`. A file created or written without a close
///   (hard link, `cp -al`, NFS) is examined after `settleInterval` of quiet and reported when
///   two examinations in a row agree on size and mtime.
/// - `IN_MOVED_FROM`/`IN_MOVED_TO` pair by cookie. The pair is queued back to back but for
///   records of other directories (`mayComeBetween`): any other record after a `MOVED_FROM`
///   makes it unpaired, and a `MOVED_FROM` that ends a read waits `moveWait` for the next read. Unpaired `MOVED_FROM` → `removed` (`directoryRemoved`);
///   unpaired `MOVED_TO` → `added` (`directoryAdded`).
/// - Names starting with `.` are ignored, except `.nomedia`, whose appearance or
///   disappearance is a `rescan` of its directory.
/// - Successive changes of one path collapse: added+modified → added, modified+modified →
///   modified, added+removed → nothing (also created and deleted before a close), removed+added
///   → modified (a replaced file is re-read), modified+removed → removed. A file created and
///   renamed in one batch is `added` under its final name. Nothing cancels out when the
///   consumer may know the file: when the addition came from a rename (which may have
///   replaced a known file of that name), or when a scan of a directory above it was
///   delivered within `recentScanWindow` (the consumer's scan may run late and index it):
///   then the result is `removed`.
/// - A change below a directory whose scan is pending in the batch (`directoryAdded`,
///   `rescan`) is left to that scan, except renames into it; scans go last in their batch.
/// - Adaptive window: a batch is delivered after `quietDelay` without a new change, at the
///   latest `maxDelay` after its first change, or as soon as it holds `maxPaths` changes.
/// - `IN_Q_OVERFLOW` delivers the batch at once with `overflow` at its end.
public struct Coalescer: Sendable {
    /// The windows and thresholds in force.
    public let limits: CoalescerLimits

    private var batch = Batch()
    private var pendingMove: PendingMove?
    private var unsettled: [PathBytes: Unsettled] = [:]
    private var nextSettleSweep: Duration?
    /// Scans delivered within `recentScanWindow`, oldest first.
    private var recentScans: [(path: PathBytes, at: Duration)] = []
    private var clock: Duration = .zero

    /// A coalescer with nothing buffered.
    public init(limits: CoalescerLimits = CoalescerLimits()) {
        self.limits = limits
    }

    // MARK: Inputs

    /// Feeds one record (its directory resolved from the watch descriptor) received at `now`.
    public mutating func receive(_ event: InotifyEvent, at now: Duration) -> [CoalescerAction] {
        clock = max(clock, now)
        var out: [CoalescerAction] = []
        if let move = pendingMove, !event.mask.contains(.queueOverflow) {
            let pairs = event.mask.contains(.movedTo) && event.cookie == move.cookie && !Self.isIgnored(event.name)
            if pairs {
                pendingMove = nil
                paired(move, to: event.path, now: now, &out)
                flushIfFull(&out)
                return out
            }
            if !Self.mayComeBetween(event, halvesOf: move) {
                pendingMove = nil
                unpairedFrom(move, now: now, &out)
            }
        }
        handle(event, now: now, &out)
        flushIfFull(&out)
        return out
    }

    /// Whether a record may come between the halves of a rename and leave them paired: one of
    /// another directory — neither the renamed entry's nor one inside it — and not itself a
    /// rename's. inotify(7): when several processes cause events, "an arbitrary number of other
    /// events may appear between the IN_MOVED_FROM and IN_MOVED_TO events" (on two cores, a copy
    /// into one folder while another is renamed back and forth did, ~1 time in 10 in the
    /// power-cut test: the rename became a removal and an addition, and the copy, read in
    /// between, took one of the folder's assets by its content). A record of the renamed
    /// entry's own directory still breaks the pair: there the order is the kernel's.
    static func mayComeBetween(_ event: InotifyEvent, halvesOf move: PendingMove) -> Bool {
        let mask = event.mask
        guard !mask.contains(.movedFrom), !mask.contains(.movedTo), !mask.contains(.queueOverflow), !event.name.isEmpty
        else { return false }
        return event.directory != move.path.parent && !event.directory.isWithin(move.path)
    }

    /// Feeds several records in order (convenience for tests and replays).
    public mutating func receive(_ events: [InotifyEvent], at now: Duration) -> [CoalescerAction] {
        events.flatMap { receive($0, at: now) }
    }

    /// Adds a change the shell found itself (`unwatched`, `rootGone`, `overflow`, `rescan`);
    /// `rootGone` and `overflow` deliver the batch at once.
    public mutating func post(_ change: WatchChange, at now: Duration) -> [CoalescerAction] {
        clock = max(clock, now)
        var out: [CoalescerAction] = []
        switch change {
        case .overflow:
            overflow(now: now, &out)
        case .rootGone:
            flushPendingMove(now: now, &out)
            append(change, now: now)
            deliver(&out)
        case .added(let p), .modified(let p), .removed(let p):
            fileChange(change, path: p, now: now)
        case .moved(let from, let to):
            fileMoved(from: from, to: to, now: now)
        case .directoryAdded(let p), .rescan(let p):
            addScan(change, path: p, now: now)
        case .directoryRemoved(let p):
            directoryGone(p, now: now)
        case .directoryMoved(let from, let to):
            directoryMoved(from: from, to: to, now: now)
        case .unwatched, .movedOut:
            append(change, now: now)
        }
        flushIfFull(&out)
        return out
    }

    /// The shell's answers to a `stat` action.
    public mutating func settled(_ results: [SettleResult], at now: Duration) -> [CoalescerAction] {
        clock = max(clock, now)
        var out: [CoalescerAction] = []
        for result in results {
            guard var entry = unsettled[result.path], entry.awaitingStat else { continue }  // stale answer
            guard let stat = result.stat else {
                unsettled[result.path] = nil  // vanished (its IN_DELETE follows) or not a regular file
                continue
            }
            if entry.lastStat == stat && !result.isOpenForWriting {
                unsettled[result.path] = nil
                fileChange(entry.isNew ? .added(result.path) : .modified(result.path), path: result.path, now: now,
                           replacing: entry.replaced)
                flushIfFull(&out)
            } else {
                entry.lastStat = result.isOpenForWriting ? nil : stat
                entry.awaitingStat = false
                entry.lastEvent = now
                unsettled[result.path] = entry
                scheduleSweep(now + limits.settleInterval)
            }
        }
        return out
    }

    /// Advances time: delivers what is due, turns an expired `MOVED_FROM` into a removal, and
    /// asks for the settling files that are due. Call it at `nextDeadline` (earlier is harmless).
    public mutating func tick(at now: Duration) -> [CoalescerAction] {
        clock = max(clock, now)
        var out: [CoalescerAction] = []
        if let move = pendingMove, now >= move.at + limits.moveWait {
            pendingMove = nil
            unpairedFrom(move, now: now, &out)
        }
        if unsettled.isEmpty {
            nextSettleSweep = nil
        } else if let sweep = nextSettleSweep, now >= sweep {
            sweepUnsettled(now: now, &out)
        }
        if batch.live > 0, let first = batch.firstAt, let last = batch.lastAt,
           now >= last + limits.quietDelay || now >= first + limits.maxDelay {
            deliver(&out)
        }
        flushIfFull(&out)
        return out
    }

    /// Delivers everything buffered now (a waiting `MOVED_FROM` as a removal); files still
    /// settling stay. For shutdown and tests.
    public mutating func flush(at now: Duration) -> [CoalescerAction] {
        clock = max(clock, now)
        var out: [CoalescerAction] = []
        flushPendingMove(now: now, &out)
        deliver(&out)
        return out
    }

    // MARK: State for the shell

    /// When `tick(at:)` must run next; nil when nothing waits (no timer, no wake-ups).
    public var nextDeadline: Duration? {
        var deadline: Duration?
        func consider(_ d: Duration) { deadline = min(deadline ?? d, d) }
        if batch.live > 0, let first = batch.firstAt, let last = batch.lastAt {
            consider(min(last + limits.quietDelay, first + limits.maxDelay))
        }
        if let move = pendingMove { consider(move.at + limits.moveWait) }
        if let sweep = nextSettleSweep, !unsettled.isEmpty { consider(sweep) }
        return deadline
    }

    /// Changes buffered in the current batch.
    public var pendingCount: Int { batch.live }

    /// Files seen created or written without a close, not yet settled.
    public var settlingCount: Int { unsettled.count }

    // MARK: Records

    static let noMedia: [UInt8] = Array(".nomedia".utf8)

    static func isIgnored(_ name: [UInt8]) -> Bool { name.first == UInt8(ascii: ".") }

    private mutating func handle(_ event: InotifyEvent, now: Duration, _ out: inout [CoalescerAction]) {
        let mask = event.mask
        if mask.contains(.queueOverflow) {
            overflow(now: now, &out)
            return
        }
        // Events on a watched directory itself (DELETE_SELF, MOVE_SELF, IGNORED, UNMOUNT): its
        // parent's records say what happened to it; roots are the shell's business.
        guard !event.name.isEmpty else { return }
        if event.name == Self.noMedia {
            if mask.contains(.create) || mask.contains(.movedTo) {
                noMedia(in: event.directory, present: true, now: now, &out)
            } else if mask.contains(.delete) || mask.contains(.movedFrom) {
                noMedia(in: event.directory, present: false, now: now, &out)
            }
            return
        }
        if Self.isIgnored(event.name) { return }
        let path = event.path
        let isDirectory = mask.contains(.isDirectory)
        if mask.contains(.movedFrom) {
            pendingMove = PendingMove(path: path, isDirectory: isDirectory, cookie: event.cookie, at: now)
        } else if mask.contains(.movedTo) {
            if isDirectory {
                out.append(.watch(path))
                addScan(.directoryAdded(path), path: path, now: now)
            } else {
                unsettled[path] = nil  // whatever was settling there was replaced
                fileChange(.added(path), path: path, now: now, replacing: true)
            }
        } else if mask.contains(.create) {
            if isDirectory {
                out.append(.watch(path))
                addScan(.directoryAdded(path), path: path, now: now)
            } else {
                unsettled[path] = Unsettled(isNew: true, lastEvent: now)
                scheduleSweep(now + limits.settleInterval)
            }
        } else if mask.contains(.delete) {
            if isDirectory {
                out.append(.unwatch(path))
                directoryGone(path, now: now)
            } else {
                fileRemoved(path, now: now)
            }
        } else if mask.contains(.closeWrite) {
            guard !isDirectory else { return }
            let entry = unsettled.removeValue(forKey: path)
            fileChange(entry?.isNew == true ? .added(path) : .modified(path), path: path, now: now,
                       replacing: entry?.replaced == true)
        } else if mask.contains(.modify) || mask.contains(.attrib) {
            guard !isDirectory else {
                if mask.contains(.attrib) { out.append(.directoryAttributes(path)) }
                return
            }
            touched(path, attributesOnly: !mask.contains(.modify), now: now)
        }
    }

    private mutating func overflow(now: Duration, _ out: inout [CoalescerAction]) {
        // The other half of a waiting rename may be among the lost events: the rescan decides.
        pendingMove = nil
        append(.overflow, now: now)
        deliver(&out)
    }

    private mutating func noMedia(in directory: PathBytes, present: Bool, now: Duration, _ out: inout [CoalescerAction]) {
        out.append(.noMedia(directory, present: present))
        addScan(.rescan(directory), path: directory, now: now)
    }

    private mutating func touched(_ path: PathBytes, attributesOnly: Bool, now: Duration) {
        if var entry = unsettled[path] {
            entry.lastEvent = now
            entry.lastStat = nil
            entry.awaitingStat = false  // an answer in flight no longer counts
            unsettled[path] = entry
            scheduleSweep(now + limits.settleInterval)
            return
        }
        if coveringScan(of: path) != nil { return }
        if attributesOnly, let i = batch.collapsible[path], let pending = batch.changes[i] {
            // `cp -p`, `rsync -t`: times and modes set right after the close; the read that
            // follows the batch sees them.
            if case .added = pending { return }
            if case .modified = pending { return }
        }
        unsettled[path] = Unsettled(isNew: false, lastEvent: now)
        scheduleSweep(now + limits.settleInterval)
    }

    private mutating func fileRemoved(_ path: PathBytes, now: Duration) {
        if let entry = unsettled.removeValue(forKey: path), entry.isNew, !entry.replaced, !recentlyScanned(path) {
            return  // created and deleted before a close, and no scan can have seen it
        }
        fileChange(.removed(path), path: path, now: now)
    }

    /// Whether a scan delivered within `recentScanWindow` covers `path` (the consumer's scan
    /// may run after the delivery, and may have indexed a file created since).
    private func recentlyScanned(_ path: PathBytes) -> Bool {
        recentScans.contains { path.isWithin($0.path) && clock - $0.at < limits.recentScanWindow }
    }

    private mutating func paired(_ move: PendingMove, to: PathBytes, now: Duration, _ out: inout [CoalescerAction]) {
        if move.isDirectory {
            out.append(.moveWatches(from: move.path, to: to))
            directoryMoved(from: move.path, to: to, now: now)
        } else {
            fileMoved(from: move.path, to: to, now: now)
        }
    }

    private mutating func unpairedFrom(_ move: PendingMove, now: Duration, _ out: inout [CoalescerAction]) {
        let removal: WatchChange?
        if move.isDirectory {
            out.append(.unwatch(move.path))
            directoryGone(move.path, now: now)
            removal = batch.changes.last ?? nil
        } else {
            // A change of this path already in the batch (a write, or a deletion and a new file)
            // means the indexed file may be gone for good: no hint then.
            let pending = batch.collapsible[move.path].flatMap { batch.changes[$0] }
            fileRemoved(move.path, now: now)
            removal = pending == nil ? batch.collapsible[move.path].flatMap { batch.changes[$0] } : nil
        }
        // The hint, when a removal was recorded (not when a pending scan covers the path, or a
        // file created and renamed away before its close left nothing).
        if removal == .removed(move.path) || removal == .directoryRemoved(move.path) {
            append(.movedOut(move.path), now: now)
        }
    }

    private mutating func flushPendingMove(now: Duration, _ out: inout [CoalescerAction]) {
        if let move = pendingMove {
            pendingMove = nil
            unpairedFrom(move, now: now, &out)
        }
    }

    // MARK: Semantic changes

    private mutating func fileMoved(from: PathBytes, to: PathBytes, now: Duration) {
        if var entry = unsettled.removeValue(forKey: from) {
            // Known to the consumer under `from`: a rename onto a known name, or a recent scan.
            let mayBeKnown = entry.replaced || recentlyScanned(from)
            entry.lastEvent = now
            entry.lastStat = nil
            entry.awaitingStat = false
            entry.replaced = true  // a file the consumer knows may have been at `to`
            unsettled[to] = entry
            scheduleSweep(now + limits.settleInterval)
            // Created and never closed: nothing was reported yet; it settles (or closes) under
            // its new name. Unless the consumer may know it under the old one.
            if entry.isNew && !mayBeKnown { return }
        } else {
            unsettled[to] = nil
        }
        if let scan = coveringScan(of: from), case .directoryAdded = batch.scans[scan] {
            // The consumer never heard of `from`: the file is new to it.
            fileChange(.added(to), path: to, now: now, replacing: true)
            return
        }
        if let i = batch.collapsible[from], let pending = batch.changes[i] {
            switch pending {
            case .added where !batch.replacing.contains(from) && !recentlyScanned(from):
                // Never reported under its old name: new under the new one.
                tombstoneChange(i, path: from)
                fileChange(.added(to), path: to, now: now, replacing: true)
                return
            case .added:
                // The consumer may know a file under the old name: the rename, then a read.
                tombstoneChange(i, path: from)
                append(.moved(from: from, to: to), now: now)
                batch.collapsible[from] = nil
                batch.collapsible[to] = nil
                fileChange(.added(to), path: to, now: now, replacing: true)
                return
            case .modified:
                // Re-read under the new name, after the rename (the old name is gone when the consumer reads).
                tombstoneChange(i, path: from)
                append(.moved(from: from, to: to), now: now)
                batch.collapsible[from] = nil
                batch.collapsible[to] = nil
                fileChange(.modified(to), path: to, now: now)
                return
            default:
                break
            }
        }
        append(.moved(from: from, to: to), now: now)
        batch.collapsible[from] = nil
        batch.collapsible[to] = nil
    }

    private mutating func directoryMoved(from: PathBytes, to: PathBytes, now: Duration) {
        recentScans = recentScans.map { $0.path.isWithin(from) ? (Self.rebase($0.path, from: from, to: to), $0.at) : $0 }
        for (path, entry) in unsettled where path.isWithin(from) {
            unsettled[path] = nil
            unsettled[Self.rebase(path, from: from, to: to)] = entry
        }
        if let scan = coveringScan(of: from, includingSelf: true), case .directoryAdded(let scanned) = batch.scans[scan] {
            // New to the consumer: a scan of where it is now says what it holds. The rename
            // itself matters only to files renamed into it earlier in the batch (which the
            // consumer knows under the old path): report it when there may be such.
            rewriteScans(from: from, to: to)
            if scanned != from { addScan(.directoryAdded(to), path: to, now: now) }
            touch(now)
            let renamesPending = batch.changes.contains {
                switch $0 {
                case .moved?, .directoryMoved?: return true
                default: return false
                }
            }
            if renamesPending {
                append(.directoryMoved(from: from, to: to), now: now)
                batch.collapsible = batch.collapsible.filter { !$0.key.isWithin(from) && !$0.key.isWithin(to) }
            }
            return
        }
        // Reads still pending below `from` name the new paths and come after the rename
        // (unless a later change names the old path: then the order must stay).
        var moved: [WatchChange] = []
        for i in batch.changes.indices {
            guard let change = batch.changes[i] else { continue }
            switch change {
            case .added(let p) where p.isWithin(from) && p != from && !mentionedAfter(i, p):
                tombstoneChange(i, path: p)
                moved.append(.added(Self.rebase(p, from: from, to: to)))
            case .modified(let p) where p.isWithin(from) && p != from && !mentionedAfter(i, p):
                tombstoneChange(i, path: p)
                moved.append(.modified(Self.rebase(p, from: from, to: to)))
            default:
                continue
            }
        }
        append(.directoryMoved(from: from, to: to), now: now)
        // A barrier for the paths it moves: nothing of them collapses across it.
        batch.collapsible = batch.collapsible.filter { !$0.key.isWithin(from) && !$0.key.isWithin(to) }
        rewriteScans(from: from, to: to)
        for change in moved {
            switch change {
            case .added(let p), .modified(let p): fileChange(change, path: p, now: now)
            default: break
            }
        }
    }

    /// Whether a change after index `i` names `path` (or a directory above it).
    private func mentionedAfter(_ i: Int, _ path: PathBytes) -> Bool {
        for change in batch.changes[(i + 1)...] {
            switch change {
            case .added(let p)?, .modified(let p)?, .removed(let p)?:
                if p == path { return true }
            case .moved(let f, let t)?:
                if f == path || t == path { return true }
            case .directoryMoved(let f, let t)?:
                if path.isWithin(f) || path.isWithin(t) { return true }
            case .directoryRemoved(let d)?:
                if path.isWithin(d) { return true }
            default:
                continue
            }
        }
        return false
    }

    private mutating func directoryGone(_ path: PathBytes, now: Duration) {
        for p in unsettled.keys where p.isWithin(path) { unsettled[p] = nil }
        // Changes before a rename of this tree (or of a tree above or below it) named other
        // files than the ones the removal takes: only those after it fold into the removal.
        let start = (batch.changes.lastIndex { change in
            switch change {
            case .directoryMoved(let f, let t)?:
                return f.isWithin(path) || t.isWithin(path) || path.isWithin(f) || path.isWithin(t)
            default:
                return false
            }
        } ?? -1) + 1
        for i in batch.changes.indices.dropFirst(start) {
            guard let change = batch.changes[i] else { continue }
            switch change {
            case .added(let p), .modified(let p), .removed(let p):
                if p.isWithin(path) && p != path { tombstoneChange(i, path: p) }
            default:
                continue
            }
        }
        for i in batch.scans.indices {
            guard let scan = batch.scans[i] else { continue }
            if Self.scanPath(scan).isWithin(path) {
                batch.scans[i] = nil
                batch.live -= 1
            }
        }
        touch(now)
        if coveringScan(of: path) != nil { return }  // the pending scan above it finds it gone
        append(.directoryRemoved(path), now: now)
        batch.collapsible = batch.collapsible.filter { !$0.key.isWithin(path) }
    }

    /// Adds an added/modified/removed change, collapsing it with the path's pending one.
    /// `replacing`: an addition by a rename, which may have replaced a file the consumer knows
    /// (no record says so), so that a removal after it must not cancel out.
    private mutating func fileChange(_ change: WatchChange, path: PathBytes, now: Duration, replacing: Bool = false) {
        if coveringScan(of: path) != nil { return }
        touch(now)
        if replacing { batch.replacing.insert(path) }
        if let i = batch.collapsible[path], let old = batch.changes[i] {
            if let merged = Self.merge(old, change, path: path) {
                batch.changes[i] = merged
            } else if recentlyScanned(path) || batch.replacing.contains(path) {
                // A recent scan may have indexed it, or it replaced a known file: say it is gone.
                batch.changes[i] = change
                batch.replacing.remove(path)
            } else {
                tombstoneChange(i, path: path)
            }
            return
        }
        batch.collapsible[path] = batch.changes.count
        batch.changes.append(change)
        batch.live += 1
    }

    /// Two successive changes of one path as one (nil: they cancel).
    static func merge(_ old: WatchChange, _ new: WatchChange, path: PathBytes) -> WatchChange? {
        switch (old, new) {
        case (.added, .added), (.added, .modified): return .added(path)
        case (.added, .removed): return nil
        case (.modified, .removed), (.removed, .removed): return .removed(path)
        default: return .modified(path)  // modified+modified, removed+added (replaced), removed+modified
        }
    }

    private mutating func addScan(_ change: WatchChange, path: PathBytes, now: Duration) {
        if coveringScan(of: path, includingSelf: true) != nil { return }
        for i in batch.scans.indices {
            if let scan = batch.scans[i], Self.scanPath(scan).isWithin(path) {
                batch.scans[i] = nil  // covered by the new one
                batch.live -= 1
            }
        }
        touch(now)
        batch.scans.append(change)
        batch.live += 1
    }

    private mutating func rewriteScans(from: PathBytes, to: PathBytes) {
        for i in batch.scans.indices {
            switch batch.scans[i] {
            case .directoryAdded(let p)? where p.isWithin(from):
                batch.scans[i] = .directoryAdded(Self.rebase(p, from: from, to: to))
            case .rescan(let p)? where p.isWithin(from):
                batch.scans[i] = .rescan(Self.rebase(p, from: from, to: to))
            default:
                continue
            }
        }
    }

    /// The index of a pending scan strictly above `path` (or at it, when asked).
    private func coveringScan(of path: PathBytes, includingSelf: Bool = false) -> Int? {
        for i in batch.scans.indices {
            guard let scan = batch.scans[i] else { continue }
            let dir = Self.scanPath(scan)
            if path.isWithin(dir) && (includingSelf || path != dir) { return i }
        }
        return nil
    }

    private static func scanPath(_ change: WatchChange) -> PathBytes {
        switch change {
        case .directoryAdded(let p), .rescan(let p): return p
        default: preconditionFailure("not a scan: \(change)")
        }
    }

    /// `path` (at or below `from`) moved below `to`.
    /// `path`, which lies at or below `from`, under `to` instead (a directory moved).
    public static func rebase(_ path: PathBytes, from: PathBytes, to: PathBytes) -> PathBytes {
        if path == from { return to }
        let prefixCount = from.bytes.last == UInt8(ascii: "/") ? from.bytes.count - 1 : from.bytes.count
        return PathBytes(to.bytes + path.bytes[prefixCount...])
    }

    private mutating func append(_ change: WatchChange, now: Duration) {
        touch(now)
        batch.changes.append(change)
        batch.live += 1
    }

    private mutating func tombstoneChange(_ i: Int, path: PathBytes) {
        batch.changes[i] = nil
        batch.live -= 1
        if batch.collapsible[path] == i { batch.collapsible[path] = nil }
    }

    private mutating func touch(_ now: Duration) {
        if batch.firstAt == nil || batch.live == 0 { batch.firstAt = now }
        batch.lastAt = now
    }

    private mutating func flushIfFull(_ out: inout [CoalescerAction]) {
        if batch.live >= limits.maxPaths {
            deliver(&out)
        } else if batch.live == 0 && (!batch.changes.isEmpty || !batch.scans.isEmpty) {
            batch = Batch()  // everything cancelled out
        }
    }

    private mutating func deliver(_ out: inout [CoalescerAction]) {
        if batch.live > 0 {
            let scans = batch.scans.compactMap { $0 }
            out.append(.deliver(batch.changes.compactMap { $0 } + scans))
            recentScans.removeAll { clock - $0.at >= limits.recentScanWindow }
            recentScans += scans.map { (Self.scanPath($0), clock) }
            if recentScans.count > Self.maxRecentScans { recentScans.removeFirst(recentScans.count - Self.maxRecentScans) }
        }
        batch = Batch()
    }

    /// Scans remembered for `recentScanWindow` at most (the oldest are forgotten first).
    static let maxRecentScans = 1_024

    // MARK: Settling

    private mutating func scheduleSweep(_ at: Duration) {
        nextSettleSweep = min(nextSettleSweep ?? at, at)
    }

    private mutating func sweepUnsettled(now: Duration, _ out: inout [CoalescerAction]) {
        var due: [PathBytes] = []
        var next: Duration?
        for (path, entry) in unsettled where !entry.awaitingStat {
            let at = entry.lastEvent + limits.settleInterval
            if at <= now {
                due.append(path)
            } else {
                next = min(next ?? at, at)
            }
        }
        for path in due { unsettled[path]?.awaitingStat = true }
        nextSettleSweep = next
        if !due.isEmpty { out.append(.stat(due.sorted())) }
    }
}

extension Coalescer {
    /// The buffered batch: changes in event order (nil: cancelled) and the scans that go last.
    struct Batch: Sendable {
        var changes: [WatchChange?] = []
        var scans: [WatchChange?] = []
        /// Path → index in `changes` of its latest added/modified/removed, while later changes
        /// of that path may still merge into it (renames and directory changes end that).
        var collapsible: [PathBytes: Int] = [:]
        /// Paths whose pending `added` came from a rename (may have replaced a known file).
        var replacing: Set<PathBytes> = []
        /// Changes not cancelled.
        var live = 0
        var firstAt: Duration?
        var lastAt: Duration?
    }

    /// A `MOVED_FROM` waiting for its `MOVED_TO`.
    struct PendingMove: Sendable {
        var path: PathBytes
        var isDirectory: Bool
        var cookie: UInt32
        var at: Duration
    }

    /// A file seen created or written without a close yet.
    struct Unsettled: Sendable {
        /// Created (reported as `added` when settled) rather than written (`modified`).
        var isNew: Bool
        var lastEvent: Duration
        var lastStat: SettleStat?
        var awaitingStat = false
        /// Renamed onto a name where a file the consumer knows may have been: a removal is
        /// reported even if it never settles.
        var replaced = false

        init(isNew: Bool, lastEvent: Duration) {
            self.isNew = isNew
            self.lastEvent = lastEvent
        }
    }
}
