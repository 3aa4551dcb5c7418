import PhotoModel
import PhotoStore
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// `LiveFacts` answered from the disk (`lstat`, `faccessat`) and the index (the pooled readers):
/// the I/O shell of `LiveChanges`. One per batch of watcher changes, on the live loop's thread.
/// `beginStep` looks a step's files up at once — each `lstat`, then in one read transaction the
/// index's rows of their groups and, for a file the index has no row for, where a file with its
/// identity was indexed and whether it is in Recently Deleted — so that a burst of new files
/// costs one transaction, not two queries a file.
final class DiskFacts: LiveFacts {
    let database: Database
    /// `st_dev` → `f_fsid`, for the files of this batch.
    private var fileSystems: [UInt64: UInt64] = [:]
    private var entries: [PathBytes: LiveChanges.Entry?] = [:]
    private var rows: [PathBytes: (row: IndexedFile?, groupIsEmpty: Bool)] = [:]
    private var origins: [FileIdentity: [PathBytes]] = [:]
    private var tombstones: [FileIdentity: Int64?] = [:]

    init(database: Database) { self.database = database }

    /// Starts a step: forgets what earlier steps saw (their writes may have changed it), and
    /// looks up the step's `paths`.
    func beginStep(_ paths: [PathBytes]) {
        entries = [:]
        rows = [:]
        origins = [:]
        tombstones = [:]
        prefetch(paths)
    }

    /// Looks up `paths` on the disk and in the index (one read transaction).
    private func prefetch(_ paths: [PathBytes]) {
        let missing = paths.filter { rows[$0] == nil }
        guard !missing.isEmpty else { return }
        let found = try? database.read { r in
            try r.consistent { () throws(StoreError) in
                try missing.map { path throws(StoreError) in
                    let group = try r.group(directory: path.parent, key: ResourcePairing.groupKey(of: path.lastComponent))
                    let row = group.first { $0.name == path.lastComponent }
                    var looked: (origins: [PathBytes], tombstone: Int64?)?
                    if row == nil, let entry = stat(path), entry.kind == .file {
                        looked = (try r.files(identity: entry.identity), try r.tombstone(identity: entry.identity))
                    }
                    return (path, row, group.isEmpty, looked)
                }
            }
        }
        for (path, row, empty, looked) in found ?? [] {
            rows[path] = (row, empty)
            if let looked, let identity = stat(path)?.identity {
                origins[identity] = looked.origins
                tombstones[identity] = .some(looked.tombstone)
            }
        }
    }

    func stat(_ path: PathBytes) -> LiveChanges.Entry? {
        if let known = entries[path] { return known }
        let entry = look(at: path)
        entries[path] = .some(entry)
        return entry
    }

    private func look(at path: PathBytes) -> LiveChanges.Entry? {
        guard let st = try? FileStat.of(path, followLinks: false) else { return nil }
        let fsid: UInt64
        if let known = fileSystems[st.device] {
            fsid = known
        } else {
            fsid = (try? Directory(path: path.parent).fileSystem().fsid) ?? st.device
            fileSystems[st.device] = fsid
        }
        let kind: LiveChanges.Entry.Kind = st.isRegularFile ? .file : st.isDirectory ? .directory : .other
        return LiveChanges.Entry(kind: kind, identity: FileIdentity(fsid: fsid, inode: st.inode, size: st.size,
                                                                    mtimeNanoseconds: st.mtimeNanoseconds))
    }

    func indexed(_ path: PathBytes) -> (row: IndexedFile?, groupIsEmpty: Bool) {
        if let known = rows[path] { return known }
        prefetch([path])
        // The index cannot be read: the file is read as new (the writer compares it again).
        return rows[path] ?? (nil, false)
    }

    func isReadable(_ path: PathBytes) -> Bool { FileStat.isReadable(FileDescriptor(rawValue: AT_FDCWD), path.bytes) }

    /// A hard link keeps both names: not a move.
    func movedFrom(_ identity: FileIdentity, to path: PathBytes) -> PathBytes? {
        let candidates = origins[identity] ?? (try? database.read { try $0.files(identity: identity) }) ?? []
        return candidates.first { $0 != path && !Walk.exists($0, inode: identity.inode) }
    }

    func tombstone(_ identity: FileIdentity) -> Int64? {
        if let known = tombstones[identity] { return known }
        return (try? database.read { try $0.tombstone(identity: identity) }) ?? nil
    }

    func contents(files: [PathBytes], directories: [PathBytes]) -> [IndexedContent] {
        (try? database.read { try $0.contents(files: files, directories: directories) }) ?? []
    }
}
