import PhotoModel
import PhotoStore
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// `LiveFacts` answered from the disk (`lstat`, `faccessat`) and the index (the pooled readers):
/// the I/O shell of `LiveChanges`. One per batch of watcher changes, on the live loop's thread:
/// it keeps the file-system ids of the devices seen and, once `prefetch`ed, the index's rows for
/// a step's files from one read transaction.
final class DiskFacts: LiveFacts {
    let database: Database
    /// `st_dev` → `f_fsid`, for the files of this batch.
    private var fileSystems: [UInt64: UInt64] = [:]
    private var rows: [PathBytes: (row: IndexedFile?, groupIsEmpty: Bool)] = [:]

    init(database: Database) { self.database = database }

    /// Looks up the index's rows for `paths` (and their groups) in one read transaction.
    func prefetch(_ paths: [PathBytes]) {
        let missing = paths.filter { rows[$0] == nil }
        guard !missing.isEmpty else { return }
        let found = try? database.read { r in
            try r.consistent { () throws(StoreError) in
                try missing.map { path throws(StoreError) in
                    let group = try r.group(directory: path.parent, key: ResourcePairing.groupKey(of: path.lastComponent))
                    return (path, group.first { $0.name == path.lastComponent }, group.isEmpty)
                }
            }
        }
        for (path, row, empty) in found ?? [] { rows[path] = (row, empty) }
    }

    func stat(_ path: PathBytes) -> LiveChanges.Entry? {
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
        let origins = (try? database.read { try $0.files(identity: identity) }) ?? []
        return origins.first { $0 != path && !Walk.exists($0, inode: identity.inode) }
    }

    func tombstone(_ identity: FileIdentity) -> Int64? {
        (try? database.read { try $0.tombstone(identity: identity) }) ?? nil
    }

    func contentKeys(files: [PathBytes], directories: [PathBytes]) -> [ContentKey] {
        (try? database.read { try $0.contentKeys(files: files, directories: directories) }) ?? []
    }
}
