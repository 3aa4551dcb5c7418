@preconcurrency import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem

/// Watches directory trees with one inotify descriptor (one watch per directory, never per
/// file) and delivers coalesced `WatchChange` batches.
///
/// Threading: events are read, coalesced and delivered on the watcher's own serial queue;
/// `onChanges` runs there, so keep it short (hand the batch to your own queue) and never call
/// `stop()` from it. The other methods may be called from any thread; `watchTree` and
/// `retryUnwatched` read directories and block while they do (call them off the cooperative
/// thread pool). Idle, the watcher makes no wake-ups: its timer is armed only while a batch,
/// a rename half or a settling file waits.
public final class InotifyWatcher: Service {
    /// The limits in force.
    public let limits: WatchLimits
    /// Directories below the roots that are not part of the library: never watched.
    public let exclusions: PathExclusions

    private let logger: Logger
    private let fd: FileDescriptor
    private let queue = DispatchQueue(label: "photod.watch")
    private let readSource: any DispatchSourceRead
    private let timer: any DispatchSourceTimer
    private let onChanges: @Sendable ([WatchChange]) -> Void
    private let registry = Locked(WatchRegistry())
    private let engine: Locked<Engine>
    private let origin = SuspendingClock.now
    private let lifecycle = Locked(Lifecycle())

    /// Opens the inotify descriptor (`inotify_init1(IN_NONBLOCK | IN_CLOEXEC)`); `start()`
    /// begins reading it. Nothing is watched until `watchTree` (which may come before `start`:
    /// the events wait in the kernel's queue).
    /// - Parameters:
    ///   - limits: the watch budget and read buffer (default: the system's limit minus a reserve).
    ///   - coalescing: the coalescer's windows (default: 15 ms quiet, 250 ms or 50 changes at
    ///     most, 50 ms rename wait, 1 s settle interval).
    ///   - exclusions: the directories below the roots (`watchTree`'s) not to watch: what is made
    ///     in them is not part of the library.
    ///   - logger: where the budget warnings and read errors go.
    ///   - onChanges: receives each batch, on the watcher's serial queue.
    public init(limits: WatchLimits = .system(), coalescing: CoalescerLimits = CoalescerLimits(), exclusions: PathExclusions = .none,
                logger: Logger, onChanges: @escaping @Sendable ([WatchChange]) -> Void) throws(SystemError) {
        self.limits = limits
        self.exclusions = exclusions
        self.logger = logger
        self.onChanges = onChanges
        engine = Locked(Engine(coalescer: Coalescer(limits: coalescing)))
        let raw = try syscall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        fd = FileDescriptor(rawValue: raw)
        readSource = DispatchSource.makeReadSource(fileDescriptor: raw, queue: queue)
        timer = DispatchSource.makeTimerSource(queue: queue)

        let closed = DispatchSemaphore(value: 0)
        lifecycle.withLock { $0.closed = closed }
        readSource.setEventHandler { [weak self] in self?.drain() }
        readSource.setCancelHandler { [fd] in
            // Dispatch watches the descriptor until the source is cancelled: close it only now.
            fd.close()
            closed.signal()
        }
        timer.setEventHandler { [weak self] in self?.timerFired() }
        timer.schedule(deadline: .distantFuture)
    }

    deinit {
        let l = lifecycle.withLock { $0 }
        if !l.stopped {
            // A source must not be released inactive or suspended: resumed, then cancelled.
            if !l.started || l.suspended { readSource.resume() }
            if !l.started { timer.resume() }
            readSource.cancel()
            timer.cancel()
        }
    }

    /// Starts reading the descriptor (events are read, coalesced and delivered on the watcher's
    /// queue from now on). Once; `stop()` ends it.
    public func start() {
        let go = lifecycle.withLock { l -> Bool in
            guard !l.started, !l.stopped else { return false }
            l.started = true
            return true
        }
        guard go else { return }
        readSource.resume()
        timer.resume()
    }

    // MARK: Public API

    /// Watches `root` and every directory below it (dot-directories and excluded ones skipped; a
    /// directory holding `.nomedia` is watched itself, to notice `.nomedia` going, but nothing below it).
    /// Each watch is added before its directory is listed, so a subdirectory created meanwhile
    /// is seen either by the listing or as an event. If `root` is later moved, deleted or
    /// unmounted, a `rootGone(root)` change reports it.
    /// - Returns: counts, and the trees left unwatched (budget, `ENOSPC`: poll them) or on a
    ///   network or FUSE file system (poll them).
    @discardableResult
    public func watchTree(_ root: PathBytes) -> WatchTreeReport {
        registry.withLock { _ = $0.roots.insert(root) }
        return walkAndWatch(root)
    }

    /// Watches a directory and everything below it, like `watchTree`, inside a tree already
    /// watched (a mount point below a root whose disk is back): its loss is not `rootGone`.
    @discardableResult
    public func watchSubtree(_ path: PathBytes) -> WatchTreeReport {
        walkAndWatch(path)
    }

    /// Watches one directory (not what lies below it). For a consumer that found a new
    /// directory while polling; `watchTree` is usually what you want.
    @discardableResult
    public func watch(directory: PathBytes) -> WatchTreeReport {
        walkAndWatch(directory, recursive: false)
    }

    /// Stops watching `path` and everything below it (`inotify_rm_watch`), and forgets the
    /// unwatched and network trees there. Pending changes already buffered are still delivered.
    public func unwatch(directoryTree path: PathBytes) {
        let removed = registry.withLock { reg -> [WatchDescriptor] in
            reg.roots = reg.roots.filter { !$0.isWithin(path) }
            return reg.removeTree(path)
        }
        removeWatches(removed)
    }

    /// Tries again to watch the trees reported `unwatched` (watches may have been freed).
    /// Those still left out are in the returned report (and stay in `unwatchedTrees`).
    @discardableResult
    public func retryUnwatched() -> WatchTreeReport {
        let trees = registry.withLock { reg -> [PathBytes] in
            defer { reg.unwatched.removeAll() }
            return reg.unwatched.sorted()
        }
        var report = WatchTreeReport()
        for tree in trees { report.merge(walkAndWatch(tree)) }
        return report
    }

    /// Directories watched now.
    public var watchedCount: Int { registry.withLock { $0.count } }

    /// The trees currently left unwatched (budget or `ENOSPC`), to be polled.
    public var unwatchedTrees: [PathBytes] { registry.withLock { $0.unwatched.sorted() } }

    /// The trees on network or FUSE file systems (not watched), to be polled.
    public var networkOrFUSETrees: [PathBytes] { registry.withLock { $0.networkOrFUSE.sorted() } }

    /// Delivers what is buffered now instead of at the end of its window (a waiting rename
    /// half as a removal; settling files stay) and returns when `onChanges` has run.
    public func flush() {
        queue.sync {
            let actions = engine.withLock { $0.coalescer.flush(at: now()) }
            perform(actions)
            rearm()
        }
    }

    /// Delivers what is buffered, stops reading and closes the descriptor. Idempotent; do not
    /// call it from `onChanges`.
    public func stop() {
        let (first, started, wasSuspended, closed) = lifecycle.withLock { l -> (Bool, Bool, Bool, DispatchSemaphore?) in
            defer { l.stopped = true }
            return (!l.stopped, l.started, l.suspended, l.closed)
        }
        guard first else { return }
        if !started {
            // Never read: the sources are inactive, and must run once to be cancelled.
            readSource.resume()
            timer.resume()
        }
        flush()
        if wasSuspended { readSource.resume() }  // a suspended source never runs its cancel handler
        readSource.cancel()
        timer.cancel()
        queue.sync {}
        closed?.wait()
    }

    // MARK: Test hooks

    /// Stops draining the descriptor (events pile up in the kernel's queue) until `resumeReading()`.
    package func suspendReading() {
        let changed = lifecycle.withLock { l -> Bool in
            guard l.started, !l.suspended, !l.stopped else { return false }
            l.suspended = true
            return true
        }
        if changed { readSource.suspend() }
        queue.sync {}
    }

    /// Resumes draining after `suspendReading()`.
    package func resumeReading() {
        let changed = lifecycle.withLock { l -> Bool in
            guard l.suspended, !l.stopped else { return false }
            l.suspended = false
            return true
        }
        if changed { readSource.resume() }
    }

    /// The timer's armed deadline (nil: parked, no wake-ups).
    package var armedDeadline: Duration? { engine.withLock { $0.armed } }

    // MARK: Reading

    private func now() -> Duration { SuspendingClock.now - origin }

    /// Reads until `EAGAIN`, handling each record before the next is resolved (a rename
    /// rewrites the paths that later records of the same read resolve to).
    private func drain() {
        // Let a burst accumulate before reading: a copier writing files one by one would
        // otherwise wake this queue for every few records (each wake-up costs more than the
        // records it reads). 2 ms is small next to the coalescer's 15 ms quiet window.
        usleep(Self.accumulation)
        withUnsafeTemporaryAllocation(byteCount: limits.readBufferBytes, alignment: 8) { buffer in
            while true {
                let n: Int
                do {
                    guard let read = try fd.readSome(into: buffer), read > 0 else { break }
                    n = read
                } catch {
                    logger.error("cannot read inotify events: \(error)")
                    break
                }
                Self.parse(UnsafeRawBufferPointer(rebasing: buffer[..<n])) { record in handle(record) }
                // The timer cannot fire while this loop holds the queue: under a steady stream of
                // records, deliver what is due between reads.
                let current = now()
                if engine.withLock({ e in e.coalescer.nextDeadline.map { $0 <= current } ?? false }) {
                    perform(engine.withLock { $0.coalescer.tick(at: current) })
                }
                if lifecycle.withLock({ $0.suspended }) { break }
            }
        }
        rearm()
    }

    /// Microseconds to wait after the descriptor becomes readable, before reading it.
    static let accumulation: UInt32 = 2_000

    /// One record as the kernel wrote it.
    struct RawRecord: Sendable, Hashable {
        var wd: WatchDescriptor
        var mask: InotifyMask
        var cookie: UInt32
        var name: [UInt8]
    }

    /// Splits a read into records: `struct inotify_event` is 16 bytes (wd, mask, cookie, len),
    /// followed by `len` bytes of NUL-padded name. Loads are unaligned-safe.
    static func parse(_ bytes: UnsafeRawBufferPointer, _ body: (RawRecord) -> Void) {
        var offset = 0
        let header = 16
        while offset + header <= bytes.count {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let start = offset + header
            let end = min(start + length, bytes.count)
            var name: [UInt8] = []
            if end > start {
                let field = bytes[start..<end]
                let nul = field.firstIndex(of: 0) ?? end
                name = Array(bytes[start..<nul])
            }
            body(RawRecord(wd: WatchDescriptor(rawValue: wd), mask: InotifyMask(rawValue: mask), cookie: cookie, name: name))
            offset = start + length
        }
    }

    private func handle(_ record: RawRecord) {
        let mask = record.mask
        if mask.contains(.queueOverflow) {
            logger.warning("inotify event queue overflowed (fs.inotify.max_queued_events); changes were lost, a rescan follows")
            // Lost events may include new, renamed or deleted directories: bring the watches in
            // line with the disk first, so that the consumer's rescan misses nothing after it.
            let (unwatched, rootsGone) = resynchronize()
            var actions: [CoalescerAction] = []
            if !unwatched.isEmpty { actions += engine.withLock { $0.coalescer.post(.unwatched(unwatched), at: now()) } }
            for root in rootsGone {
                logger.warning("watched root '\(root)' is gone (found after lost events)", [("path", root.string)])
                actions += engine.withLock { $0.coalescer.post(.rootGone(root), at: now()) }
            }
            actions += engine.withLock { $0.coalescer.receive(.overflow, at: now()) }
            perform(actions)
            return
        }
        guard let entry = registry.withLock({ $0.entry(record.wd) }) else { return }  // a watch already dropped
        if record.name.isEmpty {
            handleSelf(record, entry)
            return
        }
        if entry.muted && record.name != Coalescer.noMedia { return }
        let event = InotifyEvent(directory: entry.path, name: record.name, mask: mask, cookie: record.cookie)
        let actions = engine.withLock { $0.coalescer.receive(event, at: now()) }
        perform(actions)
    }

    /// Events on a watched directory itself.
    private func handleSelf(_ record: RawRecord, _ entry: WatchRegistry.Entry) {
        let mask = record.mask
        let isRoot = registry.withLock { $0.roots.contains(entry.path) }
        var actions = engine.withLock {
            $0.coalescer.receive(InotifyEvent(directory: entry.path, name: [], mask: mask, cookie: record.cookie), at: now())
        }
        if isRoot && (mask.contains(.deleteSelf) || mask.contains(.moveSelf) || mask.contains(.unmount) || mask.contains(.ignored)) {
            logger.warning("watched root '\(entry.path)' was \(Self.describeLoss(mask)); its watches are dropped",
                           [("path", entry.path.string)])
            let removed = registry.withLock { reg -> [WatchDescriptor] in
                reg.roots.remove(entry.path)
                return reg.removeTree(entry.path)
            }
            removeWatches(removed)
            actions += engine.withLock { $0.coalescer.post(.rootGone(entry.path), at: now()) }
        } else if mask.contains(.unmount) {
            // A file system mounted below a root went away: watch what the mount point shows now.
            let removed = registry.withLock { $0.removeTree(entry.path) }
            removeWatches(removed)
            let report = walkAndWatch(entry.path)
            actions += engine.withLock { $0.coalescer.post(.rescan(entry.path), at: now()) }
            if !report.unwatched.isEmpty {
                actions += engine.withLock { $0.coalescer.post(.unwatched(report.unwatched), at: now()) }
            }
        } else if mask.contains(.deleteSelf) || mask.contains(.moveSelf),
                  registry.withLock({ $0.byPath[entry.path.parent] == nil }) {
            // Watched without its parent (`watch(directory:)`): no parent record reports it.
            let removed = registry.withLock { $0.removeTree(entry.path) }
            removeWatches(removed)
            actions += engine.withLock { $0.coalescer.post(.directoryRemoved(entry.path), at: now()) }
        } else if mask.contains(.ignored) {
            registry.withLock { _ = $0.remove(record.wd) }
        }
        perform(actions)
    }

    private static func describeLoss(_ mask: InotifyMask) -> String {
        if mask.contains(.deleteSelf) { return "deleted" }
        if mask.contains(.moveSelf) { return "moved away" }
        if mask.contains(.unmount) { return "unmounted" }
        return "no longer watchable"
    }

    private func timerFired() {
        let actions = engine.withLock { e -> [CoalescerAction] in
            e.armed = nil
            return e.coalescer.tick(at: now())
        }
        perform(actions)
        rearm()
    }

    /// Schedules the timer at the coalescer's next deadline, or parks it (no wake-ups) when
    /// nothing waits.
    private func rearm() {
        let current = now()
        engine.withLock { e in
            let deadline = e.coalescer.nextDeadline
            guard deadline != e.armed else { return }
            // A deadline that moved later (the quiet window restarts with every event of a
            // burst) keeps the earlier timer: when it fires, `tick` delivers nothing yet and
            // the timer is set again. One wake-up per window instead of a reschedule through
            // Dispatch's manager thread per read.
            if let deadline, let armed = e.armed, deadline > armed, armed > current { return }
            e.armed = deadline
            if let deadline {
                let delay = max(deadline - current, .zero)
                let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
                timer.schedule(deadline: .now() + .nanoseconds(Int(nanoseconds)), leeway: .milliseconds(1))
            } else {
                timer.schedule(deadline: .distantFuture)
            }
        }
    }

    // MARK: Actions

    /// Performs the coalescer's actions in order, feeding back what they produce. On the queue.
    private func perform(_ initial: [CoalescerAction]) {
        var work = initial
        var i = 0
        while i < work.count {
            defer { i += 1 }
            switch work[i] {
            case .watch(let path):
                let report = walkAndWatch(path)
                if !report.unwatched.isEmpty {
                    work += engine.withLock { $0.coalescer.post(.unwatched(report.unwatched), at: now()) }
                }
            case .directoryAttributes(let path):
                // Only a directory left out for being unreadable is news: a watched one is
                // current, a polled one is compared at each poll.
                let known = registry.withLock { reg in
                    reg.byPath[path] != nil || reg.unwatched.contains(where: { path.isWithin($0) })
                        || reg.networkOrFUSE.contains(where: { path.isWithin($0) })
                }
                guard !known else { continue }
                let report = walkAndWatch(path)
                if !report.unwatched.isEmpty {
                    work += engine.withLock { $0.coalescer.post(.unwatched(report.unwatched), at: now()) }
                }
                if report.watched > 0 {
                    logger.info("directory '\(path)' can be watched now (its permissions changed): rescanning it",
                                [("path", path.string)])
                    work += engine.withLock { $0.coalescer.post(.rescan(path), at: now()) }
                }
            case .moveWatches(let from, let to):
                removeWatches(registry.withLock { $0.move(from: from, to: to) })
                // A directory created and renamed in one burst was gone from its first name when
                // its creation was handled: it has no watch to move. Watch it under its new name
                // (its content is scanned with the move), or every later change in it is lost.
                if registry.withLock({ $0.byPath[to] == nil }) {
                    let report = walkAndWatch(to)
                    if !report.unwatched.isEmpty {
                        work += engine.withLock { $0.coalescer.post(.unwatched(report.unwatched), at: now()) }
                    }
                }
            case .unwatch(let path):
                let removed = registry.withLock { $0.removeTree(path) }
                removeWatches(removed)
            case .noMedia(let path, let present):
                if present {
                    let removed = registry.withLock { reg -> [WatchDescriptor] in
                        reg.setMuted(path, true)
                        return reg.removeTree(path, includingSelf: false)
                    }
                    removeWatches(removed)
                } else {
                    registry.withLock { $0.setMuted(path, false) }
                    let report = walkAndWatch(path)
                    if !report.unwatched.isEmpty {
                        work += engine.withLock { $0.coalescer.post(.unwatched(report.unwatched), at: now()) }
                    }
                }
            case .stat(let paths):
                let cwd = FileDescriptor(rawValue: AT_FDCWD)
                let results = paths.map { path -> SettleResult in
                    guard let st = try? FileStat.at(cwd, path.bytes, followLinks: false), st.isRegularFile else {
                        return SettleResult(path: path, stat: nil)
                    }
                    // A writer that merely paused (a stalled download) closes later: wait for that.
                    let busy = FileStat.isOpenForWriting(cwd, path.bytes) == true
                    return SettleResult(path: path, stat: SettleStat(size: st.size, mtimeNanoseconds: st.mtimeNanoseconds),
                                        isOpenForWriting: busy)
                }
                work += engine.withLock { $0.coalescer.settled(results, at: now()) }
            case .deliver(let changes):
                onChanges(changes)
            }
        }
    }

    private func removeWatches(_ descriptors: [WatchDescriptor]) {
        for wd in descriptors {
            _ = inotify_rm_watch(fd.rawValue, wd.rawValue)  // EINVAL when the kernel dropped it already
        }
    }

    // MARK: Walking

    private enum AddResult {
        case added, existing, overBudget, gone, failed(SystemError)
    }

    /// Watches `top` (and, when `recursive`, every directory below it), listing each directory
    /// after its watch exists.
    private func walkAndWatch(_ top: PathBytes, recursive: Bool = true) -> WatchTreeReport {
        var report = WatchTreeReport()
        var stack: [(path: PathBytes, device: UInt64?)] = [(top, nil)]
        var countsLinks: [UInt64: Bool] = [:]  // st_dev → FileSystemInfo.countsSubdirectoryLinks
        let roots = exclusions.isEmpty ? [] : registry.withLock { Array($0.roots) }
        while let (path, parentDevice) = stack.popLast() {
            if !roots.isEmpty, exclusions.excludes(path, roots: roots) { continue }
            let dir: Directory
            let stat: FileStat
            do {
                dir = try Directory(path: path)
                stat = try dir.stat()
            } catch {
                // Below the top, a directory may vanish between its parent's listing and now.
                if path == top || !Self.isGone(error.errno) {
                    logger.warning("cannot open directory '\(path)' to watch it, skipping: \(error.message)", [("path", path.string)])
                    report.unreadable.append(path)
                }
                continue
            }
            if parentDevice != stat.device, let fs = try? dir.fileSystem(), fs.isNetworkOrFUSE {
                registry.withLock { _ = $0.networkOrFUSE.insert(path) }
                logger.notice("'\(path)' is on a network or FUSE file system, where inotify misses changes made elsewhere: "
                              + "it is polled instead", [("path", path.string)])
                report.networkOrFUSE.append(path)
                continue
            }
            switch addWatch(path, inode: stat.inode) {
            case .added: report.watched += 1
            case .existing: report.alreadyWatched += 1
            case .overBudget:
                report.unwatched.append(path)
                continue
            case .gone:
                continue
            case .failed(let error):
                logger.warning("cannot watch directory '\(path)', skipping: \(error.message)", [("path", path.string)])
                report.unreadable.append(path)
                continue
            }
            // A directory without subdirectories (most of a photo library's) need not be listed:
            // whether it holds `.nomedia` is one `fstatat`. Its link count is read after the watch
            // is in place: a subdirectory made before is counted, one made after is an event.
            if recursive, (try? dir.stat())?.linkCount == 2, countsLinks[stat.device] ?? {
                let counts = (try? dir.fileSystem())?.countsSubdirectoryLinks ?? false
                countsLinks[stat.device] = counts
                return counts
            }() {
                let probe: Bool?
                do {
                    _ = try FileStat.at(dir.descriptor, Coalescer.noMedia)
                    probe = true
                } catch {
                    probe = error.errno == ENOENT ? false : nil  // no search permission: list it
                }
                if let hasNoMedia = probe {
                    let below = registry.withLock { reg -> [WatchDescriptor] in
                        reg.setMuted(path, hasNoMedia)
                        return hasNoMedia ? reg.removeTree(path, includingSelf: false) : []
                    }
                    removeWatches(below)
                    if hasNoMedia { report.noMedia += 1 }
                    continue
                }
            }
            let entries: [DirectoryEntry]
            do {
                entries = try dir.entries()
            } catch {
                if !Self.isGone(error.errno) {
                    logger.warning("cannot list directory '\(path)', skipping: \(error.message)", [("path", path.string)])
                    report.unreadable.append(path)
                }
                continue
            }
            let hasNoMedia = entries.contains { $0.name == Coalescer.noMedia }
            let below = registry.withLock { reg -> [WatchDescriptor] in
                reg.setMuted(path, hasNoMedia)
                return hasNoMedia ? reg.removeTree(path, includingSelf: false) : []
            }
            removeWatches(below)
            if hasNoMedia {
                report.noMedia += 1
                continue
            }
            guard recursive else { continue }
            for entry in entries where !Coalescer.isIgnored(entry.name) {
                var isDirectory = entry.kind == .directory
                if entry.kind == .unknown {
                    isDirectory = (try? FileStat.at(dir.descriptor, entry.name))?.isDirectory ?? false
                }
                if isDirectory { stack.append((path.appending(entry.name), stat.device)) }
            }
        }
        return report
    }

    /// After lost events: walks every root again (watching what is new, re-pathing what was
    /// renamed), then drops the watches whose path no longer leads to their directory.
    /// Returns the trees the budget left out and the roots no longer there.
    private func resynchronize() -> (unwatched: [PathBytes], rootsGone: [PathBytes]) {
        let roots = registry.withLock { $0.roots.sorted() }
        let watchedRoots = registry.withLock { reg in roots.filter { reg.byPath[$0] != nil } }
        var unwatched: [PathBytes] = []
        for root in roots { unwatched += walkAndWatch(root).unwatched }
        let entries = registry.withLock { $0.byDescriptor }
        var stale: [WatchDescriptor] = []
        for (wd, entry) in entries {
            let st = try? FileStat.at(FileDescriptor(rawValue: AT_FDCWD), entry.path.bytes, followLinks: false)
            if st == nil || st?.isDirectory == false || (entry.inode != 0 && st?.inode != entry.inode) { stale.append(wd) }
        }
        let rootsGone = registry.withLock { reg -> [PathBytes] in
            for wd in stale { reg.remove(wd) }
            let gone = watchedRoots.filter { reg.byPath[$0] == nil }
            for root in gone {
                reg.roots.remove(root)
                stale += reg.removeTree(root)
            }
            return gone
        }
        removeWatches(stale)
        if !stale.isEmpty { logger.info("dropped \(stale.count) watches of directories gone while events were lost") }
        return (unwatched, rootsGone)
    }

    private static func isGone(_ e: Int32) -> Bool { e == ENOENT || e == ENOTDIR || e == ELOOP }

    /// Adds the watch for one directory within the budget.
    private func addWatch(_ path: PathBytes, inode: UInt64) -> AddResult {
        let (result, displaced) = registry.withLock { reg -> (AddResult, WatchDescriptor?) in
            let known = reg.byPath[path] != nil
            if !known && reg.count >= limits.maxWatches {
                reg.unwatched.insert(path)
                warnBudget(&reg, path: path, kernelRefused: false)
                return (.overBudget, nil)
            }
            let wd = path.withCString { inotify_add_watch(fd.rawValue, $0, InotifyMask.directoryWatch.rawValue) }
            if wd < 0 {
                let e = errno
                if e == ENOSPC {
                    reg.unwatched.insert(path)
                    warnBudget(&reg, path: path, kernelRefused: true)
                    return (.overBudget, nil)
                }
                if Self.isGone(e) { return (.gone, nil) }
                return (.failed(SystemError(call: "inotify_add_watch", errno: e, context: path.string)), nil)
            }
            let insertion = reg.insert(WatchDescriptor(rawValue: wd), path: path, inode: inode)
            if reg.count < limits.maxWatches { reg.budgetWarned = false }
            return (insertion.isNew ? .added : .existing, insertion.displaced)
        }
        if let displaced { removeWatches([displaced]) }
        return result
    }

    private func warnBudget(_ reg: inout WatchRegistry, path: PathBytes, kernelRefused: Bool) {
        guard !reg.budgetWarned else { return }
        reg.budgetWarned = true
        let system = WatchLimits.systemMaxUserWatches()
        let suggestion = max((system ?? 8_192) * 2, 524_288)
        let why = kernelRefused
            ? "the kernel refused a watch (ENOSPC: this user's fs.inotify.max_user_watches=\(system.map(String.init) ?? "?") is used up)"
            : "the watch budget is used up (\(limits.maxWatches) watches, fs.inotify.max_user_watches "
              + "\(system.map(String.init) ?? "?") minus a reserve for other programs)"
        logger.warning("\(why): '\(path)' and further directories are polled instead of watched. Raise the limit with "
                       + "`sysctl fs.inotify.max_user_watches=\(suggestion)` (persist it in /etc/sysctl.d/) and restart",
                       [("path", path.string), ("watch.count", String(reg.count))])
    }
}

extension InotifyWatcher {
    /// The coalescer and the timer's current deadline (touched on the queue).
    struct Engine: Sendable {
        var coalescer: Coalescer
        var armed: Duration?
    }

    struct Lifecycle: Sendable {
        var started = false
        var stopped = false
        var suspended = false
        var closed: DispatchSemaphore?
    }
}
