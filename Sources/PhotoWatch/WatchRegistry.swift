import PhotoModel

/// An inotify watch descriptor (`int wd` from `inotify_add_watch`).
public struct WatchDescriptor: RawRepresentable, Hashable, Sendable {
    /// The kernel's number.
    public let rawValue: Int32
    /// Wraps a descriptor the kernel returned.
    public init(rawValue: Int32) { self.rawValue = rawValue }
}

/// Which directory each watch descriptor stands for, both ways, and what is left unwatched.
/// Pure bookkeeping: the shell makes the system calls.
struct WatchRegistry: Sendable {
    struct Entry: Sendable, Hashable {
        var path: PathBytes
        /// The directory's inode when its watch was added (0: unknown): tells a renamed or
        /// replaced directory from the one watched, when events were lost.
        var inode: UInt64 = 0
        /// The directory holds `.nomedia`: only that name's events count, nothing below is watched.
        var muted: Bool
    }

    private(set) var byDescriptor: [WatchDescriptor: Entry] = [:]
    private(set) var byPath: [PathBytes: WatchDescriptor] = [:]
    /// The trees given to `watchTree` (their loss is `rootGone`).
    var roots: Set<PathBytes> = []
    /// Trees left out because the budget ran out or the kernel refused: polled by the consumer.
    var unwatched: Set<PathBytes> = []
    /// Trees on network or FUSE file systems, where inotify does not see other machines' changes.
    var networkOrFUSE: Set<PathBytes> = []
    /// Whether the budget warning was logged since the budget last had room.
    var budgetWarned = false

    var count: Int { byDescriptor.count }

    func entry(_ wd: WatchDescriptor) -> Entry? { byDescriptor[wd] }

    /// What `insert` did.
    struct Insertion: Sendable, Hashable {
        /// Whether the watch is new (the kernel returns the same descriptor for a directory
        /// already watched, possibly known under an older path).
        var isNew: Bool
        /// A stale descriptor that was registered for the same path (its directory was
        /// replaced unseen): to `inotify_rm_watch`.
        var displaced: WatchDescriptor?
    }

    /// Records `wd` for `path` (a directory with inode `inode`).
    @discardableResult
    mutating func insert(_ wd: WatchDescriptor, path: PathBytes, inode: UInt64 = 0, muted: Bool = false) -> Insertion {
        var displaced: WatchDescriptor?
        if let other = byPath[path], other != wd {
            byDescriptor[other] = nil
            displaced = other
        }
        unwatched.remove(path)
        if let old = byDescriptor[wd] {
            if old.path != path, byPath[old.path] == wd { byPath[old.path] = nil }
            byDescriptor[wd] = Entry(path: path, inode: inode, muted: old.muted || muted)
            byPath[path] = wd
            return Insertion(isNew: false, displaced: displaced)
        }
        byDescriptor[wd] = Entry(path: path, inode: inode, muted: muted)
        byPath[path] = wd
        return Insertion(isNew: true, displaced: displaced)
    }

    /// Forgets one descriptor (`IN_IGNORED`).
    @discardableResult
    mutating func remove(_ wd: WatchDescriptor) -> Entry? {
        guard let entry = byDescriptor.removeValue(forKey: wd) else { return nil }
        if byPath[entry.path] == wd { byPath[entry.path] = nil }
        return entry
    }

    /// Forgets every watch at or below `path` (`includingSelf`) or strictly below it, and the
    /// unwatched and network trees there; returns the descriptors to `inotify_rm_watch`.
    mutating func removeTree(_ path: PathBytes, includingSelf: Bool = true) -> [WatchDescriptor] {
        var removed: [WatchDescriptor] = []
        for (wd, entry) in byDescriptor where entry.path.isWithin(path) && (includingSelf || entry.path != path) {
            remove(wd)
            removed.append(wd)
        }
        unwatched = unwatched.filter { !($0.isWithin(path) && (includingSelf || $0 != path)) }
        networkOrFUSE = networkOrFUSE.filter { !($0.isWithin(path) && (includingSelf || $0 != path)) }
        return removed.sorted { $0.rawValue < $1.rawValue }
    }

    /// A directory was renamed: every watch at or below `from` now lies below `to`. Returns
    /// the descriptors of directories the rename replaced (to `inotify_rm_watch`).
    @discardableResult
    mutating func move(from: PathBytes, to: PathBytes) -> [WatchDescriptor] {
        var moved: [(WatchDescriptor, Entry)] = []
        for (wd, entry) in byDescriptor where entry.path.isWithin(from) {
            moved.append((wd, entry))
        }
        for (wd, entry) in moved where byPath[entry.path] == wd { byPath[entry.path] = nil }
        var displaced: [WatchDescriptor] = []
        for (wd, var entry) in moved {
            entry.path = Coalescer.rebase(entry.path, from: from, to: to)
            if let stale = byPath[entry.path], stale != wd {
                byDescriptor[stale] = nil
                displaced.append(stale)
            }
            byDescriptor[wd] = entry
            byPath[entry.path] = wd
        }
        unwatched = Set(unwatched.map { $0.isWithin(from) ? Coalescer.rebase($0, from: from, to: to) : $0 })
        networkOrFUSE = Set(networkOrFUSE.map { $0.isWithin(from) ? Coalescer.rebase($0, from: from, to: to) : $0 })
        return displaced
    }

    mutating func setMuted(_ path: PathBytes, _ muted: Bool) {
        if let wd = byPath[path] { byDescriptor[wd]?.muted = muted }
    }
}
