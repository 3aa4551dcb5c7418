#if canImport(Glibc)
import Glibc
#endif
import CLinux
import PhotoModel

/// An exclusive advisory lock (`flock(LOCK_EX | LOCK_NB)`) held for the owner's lifetime:
/// one photod per database. The kernel drops it when the process dies, even by `kill -9`,
/// so a crash never leaves a stale lock behind.
public final class LockFile: Sendable {
    public let path: PathBytes
    private let fd: FileDescriptor

    /// Why a lock could not be taken.
    public enum Failure: Error, Sendable {
        /// Another process holds it (its pid, when it wrote one).
        case held(pid: Int32?)
        case system(SystemError)
    }

    /// Creates the lock file when needed and takes the lock, or fails at once.
    public init(path: PathBytes) throws(Failure) {
        let fd: CInt
        do {
            fd = try path.withCString { p throws(SystemError) in
                try syscall("open", context: path.string) { Glibc.open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
            }
        } catch { throw .system(error) }
        if photo_lock_exclusive_nonblocking(fd) != 0 {
            let e = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = buffer.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, 31, 0) }
            Glibc.close(fd)
            if photo_errno_would_block(e) != 0 {
                let text = String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self)
                throw .held(pid: Int32(text.split(whereSeparator: { $0 == "\n" }).first ?? ""))
            }
            throw .system(SystemError(call: "flock", errno: e, context: path.string))
        }
        // Record the holder's pid: helps an operator who finds a second photod refused.
        let pid = Array("\(getpid())\n".utf8)
        _ = Glibc.ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { Glibc.pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.path = path
        self.fd = FileDescriptor(rawValue: fd)
    }

    deinit { fd.close() }
}
