#if canImport(Glibc)
import Glibc
#endif
import CLinux
import PhotoModel

/// A directory below a library root, opened one component at a time without following a
/// symbolic link (`openat` with `O_NOFOLLOW` from the root down): the only way photod changes
/// names in a library (trash, restore, delete for good), so that a link planted in the tree
/// cannot send a rename or an unlink outside it. Closed when released.
public final class ConfinedDirectory {
    public let descriptor: FileDescriptor
    public let path: PathBytes

    /// Opens `path`, which lies at or below `root` (the root itself is opened as the operator
    /// named it).
    public init(_ path: PathBytes, below root: PathBytes) throws(SystemError) {
        guard path.isWithin(root) else {
            throw SystemError(call: "open", errno: EXDEV, context: "\(path) is not below \(root)")
        }
        let relative = path.bytes.dropFirst(root.bytes.count)
        var fd = try FileDescriptor.open(root, flags: O_DIRECTORY)
        for component in relative.split(separator: UInt8(ascii: "/")) where !component.isEmpty {
            let parent = fd
            defer { parent.close() }
            guard component != [UInt8(ascii: ".")], component != [UInt8(ascii: "."), UInt8(ascii: ".")] else {
                throw SystemError(call: "openat", errno: EINVAL, context: path.string)
            }
            fd = try FileDescriptor.open(Array(component), in: parent, flags: O_DIRECTORY | O_NOFOLLOW)
        }
        descriptor = fd
        self.path = path
    }

    deinit { descriptor.close() }

    /// `fstatat` of `name`, not following a link.
    public func stat(_ name: [UInt8]) throws(SystemError) -> FileStat { try FileStat.at(descriptor, name) }

    /// The file system's id (`fstatfs`), as the index records it.
    public func fileSystemID() throws(SystemError) -> UInt64 {
        var info = photo_fsinfo()
        _ = try syscall("fstatfs", context: path.string) { photo_fstatfs(descriptor.rawValue, &info) }
        return info.fsid
    }

    /// Why photod may not change names in this directory (`EROFS`: a read-only mount, as
    /// systemd's `ProtectSystem=strict` makes the library, said first; `EACCES`: its user lacks
    /// write permission); nil when it may.
    public func writeDenial() -> SystemError? {
        // A read-only mount first: the kernel checks the permission bits before the mount's flag.
        var fs = statvfs()
        if fstatvfs(descriptor.rawValue, &fs) == 0, fs.f_flag & UInt(ST_RDONLY) != 0 {
            return SystemError(call: "fstatvfs", errno: EROFS, context: path.string)
        }
        return faccessat(descriptor.rawValue, ".", W_OK, AT_EACCESS) == 0 ? nil : SystemError(call: "faccessat", errno: errno, context: path.string)
    }

    /// Renames `name` to `newName` in this directory; `EEXIST` when `newName` is taken (never
    /// replaces a file).
    public func rename(_ name: [UInt8], to newName: [UInt8]) throws(SystemError) {
        _ = try PathBytes.withCString(name) { old throws(SystemError) in
            try PathBytes.withCString(newName) { new throws(SystemError) in
                try syscall("renameat2", context: path.appending(name).string) {
                    photo_rename_noreplace(descriptor.rawValue, old, descriptor.rawValue, new)
                }
            }
        }
    }

    /// Unlinks the file `name`; nothing when it is already gone.
    public func unlink(_ name: [UInt8]) throws(SystemError) {
        do {
            _ = try PathBytes.withCString(name) { n throws(SystemError) in
                try syscall("unlinkat", context: path.appending(name).string) { unlinkat(descriptor.rawValue, n, 0) }
            }
        } catch where error.errno == ENOENT {
        }
    }

    /// `fsync` of the directory: its renames and unlinks are on disk.
    public func sync() throws(SystemError) {
        _ = try syscall("fsync", context: path.string) { fsync(descriptor.rawValue) }
    }
}
