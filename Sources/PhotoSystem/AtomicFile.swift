#if canImport(Glibc)
import Glibc
#endif
import PhotoModel

/// Whole-file replacement that a crash cannot leave half done: the new content goes to a
/// temporary file in the same directory, is synced, renamed over the old file, and the
/// directory is synced so that the rename itself is durable. A reader sees the old file or
/// the new one, never a mixture.
public enum AtomicFile {
    /// Replaces `path` with `bytes` (mode 0600: the file may name private photos).
    public static func write(_ bytes: [UInt8], to path: PathBytes, mode: mode_t = 0o600) throws(SystemError) {
        let temporary = PathBytes(path.bytes + Array(".tmp-\(getpid())".utf8))
        let fd = try temporary.withCString { p throws(SystemError) in
            try syscall("open", context: temporary.string) { Glibc.open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
        }
        do throws(SystemError) {
            var offset = 0
            while offset < bytes.count {
                let n = try syscall("write", context: temporary.string) {
                    bytes.withUnsafeBytes { b in Glibc.write(fd, b.baseAddress! + offset, b.count - offset) }
                }
                offset += n
            }
            _ = try syscall("fsync", context: temporary.string) { Glibc.fsync(fd) }
            _ = Glibc.close(fd)
        } catch {
            _ = Glibc.close(fd)
            _ = temporary.withCString { unlink($0) }
            throw error
        }
        do throws(SystemError) {
            _ = try temporary.withCString { from throws(SystemError) in
                try path.withCString { to throws(SystemError) in
                    try syscall("rename", context: path.string) { Glibc.rename(from, to) }
                }
            }
        } catch {
            _ = temporary.withCString { unlink($0) }
            throw error
        }
        try syncDirectory(path.parent)
    }

    /// Removes `path` (nothing when it is not there).
    public static func remove(_ path: PathBytes) throws(SystemError) {
        do {
            _ = try path.withCString { p throws(SystemError) in try syscall("unlink", context: path.string) { unlink(p) } }
        } catch where error.errno == ENOENT {
        }
    }

    /// `fsync` on a directory: makes the renames and links in it durable.
    public static func syncDirectory(_ directory: PathBytes) throws(SystemError) {
        let dir = directory.bytes.isEmpty ? PathBytes(".") : directory
        let fd = try FileDescriptor.open(dir, flags: O_DIRECTORY)
        defer { fd.close() }
        _ = try syscall("fsync", context: dir.string) { Glibc.fsync(fd.rawValue) }
    }
}
