#if canImport(Glibc)
import Glibc
#endif
import CLinux
import PhotoModel

/// Unix stream sockets: the daemon's listener and the client's connection.
public enum UnixSocket {
    /// The longest path `sockaddr_un.sun_path` holds (with its NUL).
    public static let maxPathBytes = 107

    static func address(_ path: PathBytes) throws(SystemError) -> sockaddr_un {
        guard path.bytes.count <= maxPathBytes, !path.bytes.contains(0) else {
            throw SystemError(call: "socket", errno: ENAMETOOLONG, context: path.string)
        }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: path.bytes)
            raw[path.bytes.count] = 0
        }
        return addr
    }

    static func withSockaddr<R>(_ addr: inout sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A new stream socket, close-on-exec.
    static func makeSocket(nonblocking: Bool) throws(SystemError) -> CInt {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonblocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try syscall("socket") { Glibc.socket(AF_UNIX, type, 0) }
    }

    /// Connects to a listening socket (blocking).
    public static func connect(_ path: PathBytes) throws(SystemError) -> FileDescriptor {
        var addr = try address(path)
        let fd = try makeSocket(nonblocking: false)
        let rc = withSockaddr(&addr) { p, len in
            var r: Int32
            repeat { r = Glibc.connect(fd, p, len) } while r == -1 && errno == EINTR
            return r
        }
        if rc != 0 {
            let e = errno
            Glibc.close(fd)
            throw SystemError(call: "connect", errno: e, context: path.string)
        }
        return FileDescriptor(rawValue: fd)
    }

    /// Creates a listening socket at `path` with `mode` permissions. A stale socket file (no
    /// process accepting on it) is replaced; a live one is an error (`EADDRINUSE`): another
    /// daemon is serving there.
    public static func listen(_ path: PathBytes, mode: mode_t = 0o660, backlog: Int32 = 128) throws(SystemError) -> FileDescriptor {
        var addr = try address(path)
        if let existing = try? FileStat.of(path) {
            if existing.mode & UInt32(S_IFMT) != UInt32(S_IFSOCK) {
                throw SystemError(call: "bind", errno: EEXIST, context: "\(path) exists and is not a socket")
            }
            if let probe = try? connect(path) {
                probe.close()
                throw SystemError(call: "bind", errno: EADDRINUSE, context: "\(path) (another photod is listening)")
            }
            _ = path.withCString { unlink($0) }
        }
        let fd = try makeSocket(nonblocking: true)
        do throws(SystemError) {
            // Create the file with the final mode at once: no window with wider permissions.
            let old = umask(0o777 & ~mode)
            let rc = withSockaddr(&addr) { Glibc.bind(fd, $0, $1) }
            let e = errno
            umask(old)
            if rc != 0 { throw SystemError(call: "bind", errno: e, context: path.string) }
            _ = try syscall("listen", context: path.string) { Glibc.listen(fd, backlog) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return FileDescriptor(rawValue: fd)
    }

    /// Accepts one pending connection, non-blocking and close-on-exec; `nil` when none is pending.
    public static func accept(_ listener: FileDescriptor) throws(SystemError) -> FileDescriptor? {
        while true {
            let fd = photo_accept_nonblocking(listener.rawValue)
            if fd >= 0 { return FileDescriptor(rawValue: fd) }
            let e = errno
            switch e {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw SystemError(call: "accept4", errno: e)
            }
        }
    }

    /// Sets `SO_RCVTIMEO` and `SO_SNDTIMEO`: a blocking read or write gives up after `timeout`
    /// (and reports `EAGAIN`) instead of waiting forever on a stopped peer.
    public static func setTimeout(_ fd: FileDescriptor, _ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var tv = timeval(tv_sec: max(0, Int(seconds)), tv_usec: max(0, Int(attoseconds / 1_000_000_000_000)))
        if tv.tv_sec == 0 && tv.tv_usec == 0 { tv.tv_usec = 1 }  // 0 would mean "no timeout"
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(fd.rawValue, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// Clears the send and receive timeouts: reads and writes block until they can proceed.
    public static func clearTimeout(_ fd: FileDescriptor) {
        var tv = timeval(tv_sec: 0, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(fd.rawValue, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// The peer's pid, uid and gid (`SO_PEERCRED`).
    public static func peerCredentials(_ fd: FileDescriptor) -> (pid: Int32, uid: UInt32, gid: UInt32)? {
        var cred = photo_ucred()
        guard photo_peer_credentials(fd.rawValue, &cred) == 0 else { return nil }
        return (cred.pid, cred.uid, cred.gid)
    }
}
