import Dispatch
import PhotoModel
import PhotoSystem

/// Lists directories ahead of the walk, on a thread of its own: each directory's entries in the
/// walk's order and a `fstatat` of each of its files, the kernel's share of a scan. The walk takes
/// a listing when it reaches its directory and does the rest (the index, the comparison, the
/// jobs); on a machine with two cores that halves what a restart over an unchanged library
/// waits for on one thread.
///
/// Only ever a shortcut: the walk uses a listing only if its directory is still the one listed
/// (same device, inode, mtime and ctime: an entry added, removed or renamed since changes the
/// mtime — within the kernel's clock tick it may not, and then the watch, set up before the scan,
/// reports the change, as for any change made while a scan runs), and lists for itself whenever
/// there is none — it waits for the lister only for the directory being listed that moment, and
/// at most 200 ms (without that wait the two, in step, each stat the same files: 1.78 `fstatat` a
/// file over a restart of 1,000,000), so a directory that hangs (a dead network mount) holds up
/// only this thread, which stops at its next directory once the scan is over. It follows the
/// walk's order (entries in byte order, hidden ones and `.nomedia` trees skipped) and leaves
/// mount points below its start to the walk, which checks them first; a listing the walk does not ask for is dropped when it asks for a later one.
/// At most `budget` entries are held ahead.
///
/// A directory the walk had to list itself (`passed`) is only read by the lister for its
/// subdirectories, without a `fstatat` per file: started together, the two would otherwise stat
/// every directory twice, side by side, the walk never finding a listing ready. So the lister
/// gets ahead, and the walk catches up with it when comparing goes faster than listing, which then
/// sends the lister ahead again: the stats split between the two threads.
final class Lister: Sendable {
    struct Listing: Sendable {
        var path: PathBytes
        var directory: FileStat
        var entries: [DirectoryEntry]
        /// Per entry, its `fstatat` when it is a file (or of unknown kind); nil otherwise, or when
        /// that failed (the walk then asks again).
        var stats: [FileStat?]

        /// Whether the directory is still the one listed.
        func matches(_ now: FileStat) -> Bool {
            directory.device == now.device && directory.inode == now.inode
                && directory.mtimeNanoseconds == now.mtimeNanoseconds && directory.ctimeNanoseconds == now.ctimeNanoseconds
        }
    }

    private struct State {
        var ready: [Listing] = []
        var head = 0
        var held = 0
        var stopped = false
        var finished = false
        /// Directories the walk listed itself before the lister reached them.
        var passed = Set<PathBytes>()
        /// The directory being listed now (with its files' stats).
        var current: PathBytes?
        /// The directory the walk waits for (`take`), being listed now.
        var waiting: PathBytes?
    }

    private let state = Locked(State())
    private let room = DispatchSemaphore(value: 0)
    /// Signalled when the listing the walk waits for is held, or will not be.
    private let listed = DispatchSemaphore(value: 0)
    /// How long the walk waits for a listing being made before it lists the directory itself.
    static let patience: DispatchTimeInterval = .milliseconds(200)
    let budget: Int

    init(budget: Int = 4_000) {
        self.budget = budget
    }

    /// Starts listing at `top` on a new thread. `isMountPoint` says which directories below it
    /// are mount points of their own, `isExcluded` which the walk leaves out (neither is entered).
    func start(_ top: PathBytes, isMountPoint: @escaping @Sendable (PathBytes) -> Bool,
               isExcluded: @escaping @Sendable (PathBytes) -> Bool = { _ in false }) {
        spawnThread("photod-list") { [self] in run(top, isMountPoint: isMountPoint, isExcluded: isExcluded) }
    }

    /// Stops at the next directory; what is held is dropped.
    func stop() {
        state.withLock { s in
            s.stopped = true
            s.ready = []
            s.head = 0
            s.held = 0
        }
        room.signal()
    }

    /// The listing of `path` if it is ready, dropping those listed before it that the walk did
    /// not ask for; nil when it is not (not listed yet, or not in the lister's order). When the
    /// lister is listing `path` at that moment, waits for it (at most `patience`): otherwise the
    /// two threads, in step, would each stat the same files. `next` is the directory the walk
    /// goes to after `path`'s subtree: when the walk would wait, it lists that one itself, so
    /// that the stats split between the two threads.
    func take(_ path: PathBytes, sharing next: PathBytes? = nil) -> Listing? {
        if let found = takeReady(path) { return found }
        let wait = state.withLock { s -> Bool in
            guard !s.stopped, s.current == path else { return false }
            s.waiting = path
            if let next, !s.finished { s.passed.insert(next) }
            return true
        }
        guard wait else { return nil }
        room.signal()  // a lister held by the budget takes the listing waited for beyond it
        let answered = listed.wait(timeout: .now() + Self.patience) == .success
        // The lister signals once, with `waiting` cleared under the lock: a signal that came
        // after the wait gave up is taken now, not left for the next wait to return at once.
        let signalled = state.withLock { s -> Bool in
            defer { s.waiting = nil }
            return s.waiting == nil
        }
        if !answered, signalled { listed.wait() }
        return takeReady(path)
    }

    private func takeReady(_ path: PathBytes) -> Listing? {
        let found = state.withLock { s -> Listing? in
            guard let at = s.ready[s.head...].firstIndex(where: { $0.path == path }) else { return nil }
            for skipped in s.ready[s.head..<at] { s.held -= skipped.entries.count }
            let listing = s.ready[at]
            s.held -= listing.entries.count
            s.head = at + 1
            if s.head > 64, s.head * 2 > s.ready.count {
                s.ready.removeFirst(s.head)
                s.head = 0
            }
            return listing
        }
        if found != nil { room.signal() }
        return found
    }

    /// The walk lists `path` itself (no listing of it was ready): the lister, if it has not
    /// reached it yet, only reads its subdirectories.
    func passed(_ path: PathBytes) {
        state.withLock { s in
            if !s.stopped, !s.finished { s.passed.insert(path) }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Entries held ahead of the walk now (for tests).
    var heldEntries: Int { state.withLock { $0.held } }

    /// The directory being listed with its stats now (for tests).
    var listingNow: PathBytes? { state.withLock { $0.current } }

    /// Whether it has listed everything it will (for tests).
    var isFinished: Bool { state.withLock { $0.finished } }

    private func run(_ top: PathBytes, isMountPoint: (PathBytes) -> Bool, isExcluded: (PathBytes) -> Bool) {
        defer { state.withLock { $0.finished = true } }
        var stack = [top]
        while let path = stack.popLast(), !isStopped {
            if path != top, isMountPoint(path) || isExcluded(path) { continue }
            let walked = state.withLock { s -> Bool in
                let walked = s.passed.remove(path) != nil
                if !walked { s.current = path }
                return walked
            }
            let listing = Self.list(path, statFiles: !walked)
            if let listing, !listing.entries.contains(where: { $0.name == Walk.noMedia }) {
                for (entry, stat) in zip(listing.entries, listing.stats).reversed() where !Walk.isHidden(entry.name) {
                    if entry.kind == .directory || (entry.kind == .unknown && stat?.isDirectory == true) {
                        stack.append(path.appending(entry.name))
                    }
                }
            }
            let published = walked || listing.map(publish) ?? true
            state.withLock { s in
                s.current = nil
                if s.waiting == path {
                    s.waiting = nil
                    listed.signal()
                }
            }
            if !published { return }
        }
    }

    /// Holds `listing` once there is room; false when stopped meanwhile.
    private func publish(_ listing: Listing) -> Bool {
        while true {
            let done = state.withLock { s -> Bool? in
                if s.stopped { return false }
                // Beyond the budget only for the listing the walk waits for.
                guard s.held == 0 || s.held + listing.entries.count <= budget || s.waiting == listing.path else { return nil }
                s.ready.append(listing)
                s.held += listing.entries.count
                return true
            }
            if let done { return done }
            room.wait()
        }
    }

    /// One directory's listing in the walk's order, with its files' stats (without, only those
    /// of entries of unknown kind: enough to find the subdirectories).
    static func list(_ path: PathBytes, statFiles: Bool = true) -> Listing? {
        guard let dir = try? Directory(path: path) else { return nil }
        guard let stat = try? dir.stat(), let entries = try? dir.entries().sorted(by: { Walk.precedes($0.name, $1.name) }) else {
            return nil
        }
        let stats = entries.map { e -> FileStat? in
            guard !Walk.isHidden(e.name), e.kind == .unknown || (e.kind == .file && statFiles) else { return nil }
            return try? FileStat.at(dir.descriptor, e.name)
        }
        return Listing(path: path, directory: stat, entries: entries, stats: stats)
    }
}
