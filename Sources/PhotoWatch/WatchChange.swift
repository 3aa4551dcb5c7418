import PhotoModel

/// A semantic change in a watched tree, as the watcher delivers it: what a file or directory
/// became, not which system calls made it so.
///
/// Changes arrive in batches (`[WatchChange]`). The consumer contract (checked by a property
/// test with random histories):
/// 1. **Apply a batch in order**, batches in the order delivered (or joined with `joining`).
///    The changes that ask for a scan (`directoryAdded`, `rescan`) come after every other
///    change of their batch: scanning them last, the scan reconciles the disk with what the
///    consumer knows and is authoritative for everything below the scanned directory.
/// 2. Paths are those at the time of the events; the consumer reads later. A read that finds
///    nothing (the file was renamed or deleted meanwhile) is remembered as *unresolved*: a
///    later `removed` forgets it, a later `moved` of it reads the target, a later
///    `directoryMoved` above it retries it under the new path.
/// 3. A `moved`/`directoryMoved` whose source the consumer does not know is an addition of
///    the target (`directoryAdded` for a directory); a `removed`/`directoryRemoved` of an
///    unknown path is nothing.
public enum WatchChange: Sendable, Hashable, CustomStringConvertible {
    /// A new file, complete: created and closed after writing, moved in from outside the
    /// watched tree, or (without a close: a hard link, `cp -al`, an NFS export) settled. Read
    /// it. For a path the consumer already knows, the old file was replaced: re-read it.
    case added(PathBytes)
    /// An existing file was rewritten (`IN_CLOSE_WRITE`, never `IN_MODIFY`) or settled after
    /// writes without a close, or was replaced by a new file (removed, then added under the same
    /// name within one batch). Re-read it (a consumer that compares size, mtime and inode may
    /// skip an unchanged one).
    case modified(PathBytes)
    /// A file is gone (deleted, or moved out of the watched tree, or moved to a dot-name).
    case removed(PathBytes)
    /// A file was renamed inside the watched tree: the same file (same inode, same content)
    /// under a new path; keep its identity. If `to` was known, that file was replaced. If
    /// `from` is unknown to the consumer, treat it as `added(to)`.
    case moved(from: PathBytes, to: PathBytes)
    /// A new directory (created, or moved in from outside the tree). The watcher already
    /// watches it and everything below it; scan it recursively to learn what it holds
    /// (files created before its watch existed are only found by that scan).
    case directoryAdded(PathBytes)
    /// A directory is gone (deleted, or moved out of the tree): drop everything below it.
    /// Its watches are gone too.
    case directoryRemoved(PathBytes)
    /// A hint after a `removed` or `directoryRemoved` of the same path: it went by a rename
    /// whose destination no watch saw (an `IN_MOVED_FROM` without its `IN_MOVED_TO`) — moved
    /// out of the tree, or into a directory created an instant before and not watched yet. A
    /// consumer may apply that removal after the batch's scans, which may find it again; never
    /// given for a deletion. Changes nothing by itself.
    case movedOut(PathBytes)
    /// A directory was renamed inside the tree: rewrite the path prefix of everything below
    /// `from` to `to`; identities stay. The watches followed it. If `from` is unknown to the
    /// consumer, treat it as `directoryAdded(to)`.
    case directoryMoved(from: PathBytes, to: PathBytes)
    /// Compare this directory tree with the disk (scan it recursively, as for a new directory,
    /// removing what is no longer there): a `.nomedia` file appeared in it (the tree is now
    /// excluded) or disappeared (the tree is included again, and watched again), or a file
    /// system mounted below it was unmounted.
    case rescan(PathBytes)
    /// The kernel's event queue overflowed (`IN_Q_OVERFLOW`): changes were lost. Rescan every
    /// root (comparing the disk with the index; directory mtimes let the scan skip unchanged
    /// directories). The watches stay in place.
    case overflow
    /// Directory trees the watcher could not watch: the watch budget ran out or the kernel
    /// refused (`ENOSPC` from `inotify_add_watch`). Poll each of these trees at an interval;
    /// call `InotifyWatcher.retryUnwatched()` from time to time to take them over again when
    /// watches were freed.
    case unwatched([PathBytes])
    /// A root given to `watchTree` was moved, deleted or unmounted: all its watches are gone.
    /// Report the root unavailable (delete nothing); when its path is back, call `watchTree`
    /// again and rescan it.
    case rootGone(PathBytes)

    /// Whether the change asks for a scan after the rest of its batch.
    public var isScan: Bool {
        switch self {
        case .directoryAdded, .rescan: return true
        default: return false
        }
    }

    /// The paths the change names.
    public var paths: [PathBytes] {
        switch self {
        case .added(let p), .modified(let p), .removed(let p), .directoryAdded(let p), .directoryRemoved(let p),
             .movedOut(let p), .rescan(let p), .rootGone(let p):
            return [p]
        case .moved(let f, let t), .directoryMoved(let f, let t):
            return [f, t]
        case .unwatched(let ps):
            return ps
        case .overflow:
            return []
        }
    }

    /// A short form for logs and test failures: `added(/a/b.jpg)`.
    public var description: String {
        switch self {
        case .added(let p): return "added(\(p))"
        case .modified(let p): return "modified(\(p))"
        case .removed(let p): return "removed(\(p))"
        case .moved(let f, let t): return "moved(\(f) -> \(t))"
        case .directoryAdded(let p): return "directoryAdded(\(p))"
        case .directoryRemoved(let p): return "directoryRemoved(\(p))"
        case .directoryMoved(let f, let t): return "directoryMoved(\(f) -> \(t))"
        case .movedOut(let p): return "movedOut(\(p))"
        case .rescan(let p): return "rescan(\(p))"
        case .overflow: return "overflow"
        case .unwatched(let ps): return "unwatched(\(ps.map(\.string).joined(separator: ", ")))"
        case .rootGone(let p): return "rootGone(\(p))"
        }
    }
}

extension WatchChange {
    /// Several batches as one, for a consumer that takes whatever has piled up: the same
    /// contract as a single batch (apply in order; scans last). Every scan moves to the end,
    /// rebased through the directory renames that follow it in later batches and dropped when
    /// a later removal takes its directory; a rename out of a directory whose scan is pending
    /// becomes an addition, as the coalescer does within a batch.
    public static func joining(_ batches: [[WatchChange]]) -> [WatchChange] {
        var changes: [WatchChange] = []
        var scans: [WatchChange] = []
        func scanPath(_ change: WatchChange) -> PathBytes {
            switch change {
            case .directoryAdded(let p), .rescan(let p): return p
            default: preconditionFailure("not a scan: \(change)")
            }
        }
        /// Whether `path` lies below (or at) a pending scan of a directory new to the consumer.
        func newToConsumer(_ path: PathBytes) -> Bool {
            scans.contains { if case .directoryAdded(let d) = $0 { path.isWithin(d) } else { false } }
        }
        func addScan(_ change: WatchChange) {
            let path = scanPath(change)
            if scans.contains(where: { path.isWithin(scanPath($0)) }) { return }
            scans.removeAll { scanPath($0).isWithin(path) }
            scans.append(change)
        }
        for batch in batches {
            for change in batch {
                switch change {
                case .directoryAdded, .rescan:
                    addScan(change)
                case .moved(let from, let to) where newToConsumer(from) && from != to:
                    changes.append(.added(to))
                case .directoryMoved(let from, let to):
                    let unknown = newToConsumer(from)
                    let coveredExactly = scans.contains { scanPath($0) == from }
                    scans = scans.map { scan in
                        let p = scanPath(scan)
                        guard p.isWithin(from) else { return scan }
                        let moved = Coalescer.rebase(p, from: from, to: to)
                        if case .directoryAdded = scan { return .directoryAdded(moved) }
                        return .rescan(moved)
                    }
                    if unknown {
                        if !coveredExactly { addScan(.directoryAdded(to)) }
                    } else {
                        changes.append(change)
                    }
                case .directoryRemoved(let p), .rootGone(let p):
                    scans.removeAll { scanPath($0).isWithin(p) }
                    changes.append(change)
                default:
                    changes.append(change)
                }
            }
        }
        return changes + scans
    }
}
