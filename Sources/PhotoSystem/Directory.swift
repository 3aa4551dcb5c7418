#if canImport(Glibc)
import Glibc
#endif
import CLinux
import PhotoModel

/// One entry of a directory listing.
public struct DirectoryEntry: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case file, directory, symlink, other, unknown
    }

    public var name: [UInt8]
    /// From `d_type`; `unknown` on file systems that do not fill it (then `fstatat` decides).
    public var kind: Kind

    public init(name: [UInt8], kind: Kind) {
        self.name = name
        self.kind = kind
    }
}

/// An open directory (closed when released): its descriptor (for `fstatat`/`openat` relative to it) and its entries.
public final class Directory {
    public let descriptor: FileDescriptor
    public let path: PathBytes

    /// Opens a directory without following a final symbolic link.
    public init(path: PathBytes) throws(SystemError) {
        self.path = path
        descriptor = try FileDescriptor.open(path, flags: O_DIRECTORY | O_NOFOLLOW)
    }

    deinit { descriptor.close() }

    /// `fstat` of the directory itself.
    public func stat() throws(SystemError) -> FileStat { try descriptor.stat() }

    /// The file system of the directory (`fstatfs`).
    public func fileSystem() throws(SystemError) -> FileSystemInfo {
        var info = photo_fsinfo()
        _ = try syscall("fstatfs", context: path.string) { photo_fstatfs(descriptor.rawValue, &info) }
        return FileSystemInfo(fsid: info.fsid, type: info.type)
    }

    /// Whether the directory holds an entry whose name does not start with a dot (what a scan
    /// looks at); reads only as far as the first one.
    public func hasVisibleEntries() throws(SystemError) -> Bool {
        var found = false
        try forEachEntry { entry in
            found = entry.name.first != UInt8(ascii: ".")
            return !found
        }
        return found
    }

    /// Every entry except `.` and `..`, in the order the file system returns them.
    public func entries() throws(SystemError) -> [DirectoryEntry] {
        var result: [DirectoryEntry] = []
        try forEachEntry { entry in
            result.append(entry)
            return true
        }
        return result
    }

    /// Calls `body` with each entry except `.` and `..`, in the order the file system returns
    /// them, until it returns false.
    private func forEachEntry(_ body: (DirectoryEntry) -> Bool) throws(SystemError) {
        // fdopendir takes ownership of the descriptor it is given: hand it a duplicate.
        let dup = try syscall("dup") { Glibc.fcntl(descriptor.rawValue, F_DUPFD_CLOEXEC, 0) }
        guard let dir = fdopendir(dup) else {
            let e = errno
            Glibc.close(dup)
            throw SystemError(call: "fdopendir", errno: e, context: path.string)
        }
        defer { closedir(dir) }
        rewinddir(dir)
        while true {
            errno = 0
            guard let ent = readdir(dir) else {
                if errno != 0 { throw SystemError(call: "readdir", errno: errno, context: path.string) }
                return
            }
            let name: [UInt8] = withUnsafePointer(to: &ent.pointee.d_name) { p in
                p.withMemoryRebound(to: UInt8.self, capacity: 256) { q in
                    Array(UnsafeBufferPointer(start: q, count: strnlen(UnsafeRawPointer(q).assumingMemoryBound(to: CChar.self), 256)))
                }
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            let kind: DirectoryEntry.Kind
            switch Int32(ent.pointee.d_type) {
            case Int32(DT_REG): kind = .file
            case Int32(DT_DIR): kind = .directory
            case Int32(DT_LNK): kind = .symlink
            case Int32(DT_UNKNOWN): kind = .unknown
            default: kind = .other
            }
            guard body(DirectoryEntry(name: name, kind: kind)) else { return }
        }
    }
}

/// What `statfs` says about a file system.
public struct FileSystemInfo: Sendable, Hashable {
    /// `f_fsid`: identifies the file system across reboots (unlike `st_dev`).
    public var fsid: UInt64
    /// `f_type`: the file-system magic number.
    public var type: Int64

    public init(fsid: UInt64, type: Int64) {
        self.fsid = fsid
        self.type = type
    }

    /// File systems whose directories count their subdirectories in their link count (2 and
    /// one per subdirectory, up to ext4's limit of 65,000, past which it stays 1): on them a
    /// directory whose count is 2 has none. Not btrfs (always 1), not FAT or network ones.
    public var countsSubdirectoryLinks: Bool {
        switch UInt32(truncatingIfNeeded: type) {
        case 0xEF53,        // ext2, ext3, ext4
             0x5846_5342,   // XFS
             0x0102_1994:   // tmpfs
            return true
        default:
            return false
        }
    }

    /// Network and FUSE file systems, where inotify sees no changes made by other machines.
    public var isNetworkOrFUSE: Bool {
        switch UInt32(truncatingIfNeeded: type) {
        case 0x6969,        // NFS
             0xFF53_4D42,   // CIFS
             0xFE53_4D42,   // SMB2
             0x517B,        // SMB
             0x0102_1997,   // 9P (v9fs)
             0x6573_5546,   // FUSE
             0x0BD0_0BD0,   // Lustre
             0x7461_636f:   // OCFS2
            return true
        default:
            return false
        }
    }
}

extension Directory {
    /// `mkdir -p`: creates `path` and its missing parents with `mode` (existing ones are kept).
    /// Each directory made is synced into its parent: a database made in it, then synced, is
    /// not lost with its directory at a power cut (the power-cut test found it so on a file
    /// system that keeps a directory's entries only when the directory is synced).
    public static func makePath(_ path: PathBytes, mode: mode_t = 0o755) throws(SystemError) {
        var prefix: [UInt8] = []
        for component in path.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let parent = prefix.isEmpty ? [UInt8(ascii: "/")] : prefix
            prefix += [UInt8(ascii: "/")] + component
            let rc = PathBytes.withCString(prefix) { mkdir($0, mode) }
            if rc != 0 && errno != EEXIST {
                throw SystemError(call: "mkdir", errno: errno, context: String(decoding: prefix, as: UTF8.self))
            }
            if rc == 0 { try? AtomicFile.syncDirectory(PathBytes(parent)) }
        }
    }

    /// Removes `path`, a directory of files only, with its files (what an older photod left
    /// behind); nothing when it does not exist. A subdirectory in it fails the removal.
    public static func removeWithFiles(_ path: PathBytes) throws(SystemError) {
        let dir: Directory
        do {
            dir = try Directory(path: path)
        } catch where error.errno == ENOENT {
            return
        }
        for entry in try dir.entries() {
            _ = try syscall("unlinkat", context: path.string) {
                PathBytes.withCString(entry.name) { unlinkat(dir.descriptor.rawValue, $0, 0) }
            }
        }
        _ = try syscall("rmdir", context: path.string) { path.withCString { rmdir($0) } }
    }

    /// Checks that a directory others could have prepared (`/tmp/photod-$UID`) is safe to put a
    /// socket in: a real directory (not a symbolic link), owned by this user or root, and not
    /// writable by others unless sticky. Throws `EPERM` with the reason otherwise.
    public static func checkTrusted(_ path: PathBytes) throws(SystemError) {
        let st = try FileStat.at(FileDescriptor(rawValue: AT_FDCWD), path.bytes, followLinks: false)
        let uid = getuid()
        guard st.isDirectory else {
            throw SystemError(call: "lstat", errno: ENOTDIR, context: "\(path) is not a directory (a symbolic link?)")
        }
        guard st.uid == uid || st.uid == 0 else {
            throw SystemError(call: "lstat", errno: EPERM, context: "\(path) belongs to uid \(st.uid), not to this user")
        }
        let sticky = st.mode & UInt32(S_ISVTX) != 0
        guard st.mode & 0o002 == 0 || sticky else {
            throw SystemError(call: "lstat", errno: EPERM, context: "\(path) is writable by every user")
        }
    }
}

/// Names the calling thread (what `top -H`, `perf` and `/proc/PID/task/*/comm` show).
public func setThreadName(_ name: String) {
    name.withCString { photo_set_thread_name($0) }
}

/// Lowers the calling thread's scheduling priority to the nice value `nice` (0...19):
/// background work that must never slow what users wait for. Never raises it (a thread that is
/// already nicer stays so). Cannot be undone without privilege.
public func lowerThreadPriority(nice: Int32) {
    let current = photo_thread_nice()
    guard current != 100, current < nice else { return }
    _ = photo_set_thread_nice(min(nice, 19))
}

/// Lowers the calling thread's scheduling priority by `steps` below what it inherited (the
/// process's nice value, 0 under the systemd unit and from a shell), at most to 19: a scan's
/// readers below the threads that answer clients, wherever photod runs.
public func lowerThreadPriority(by steps: Int32) {
    let current = photo_thread_nice()
    guard current != 100 else { return }
    _ = photo_set_thread_nice(min(current + max(steps, 0), 19))
}

/// The calling thread's nice value (-20...19), or nil when it cannot be read.
public func threadNiceValue() -> Int32? {
    let value = photo_thread_nice()
    return value == 100 ? nil : value
}
