import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// A reload's hand-over: the listening socket becomes descriptor 3, announced as socket
/// activation would announce it (`LISTEN_PID`, `LISTEN_FDS`), and the process execs photod again
/// with the same arguments — the successor reads the configuration afresh, opens the index,
/// takes the socket and reconciles, in the same process (the service manager's `MAINPID` stays).
/// Clients were told (`photod.reloading`) and reconnect; subscribers resume from their tokens.
enum Restart {
    static func exec(listener: FileDescriptor, ownsSocketPath: Bool, arguments: [String], logger: Logger) -> Never {
        let target = ListenFDs.start
        if listener.rawValue != target {
            guard dup2(listener.rawValue, target) == target else {
                logger.error("cannot move the listening socket to descriptor 3 (errno \(errno)); stopping")
                exit(1)
            }
            listener.close()
        }
        let flags = fcntl(target, F_GETFD)
        _ = fcntl(target, F_SETFD, flags & ~FD_CLOEXEC)
        setenv("LISTEN_PID", String(getpid()), 1)
        setenv("LISTEN_FDS", "1", 1)
        unsetenv("LISTEN_FDNAMES")
        if ownsSocketPath { setenv("PHOTOD_SOCKET_OWNED", "1", 1) }
        logger.notice("restarting in place with the new configuration")
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(binary(), &argv)
        logger.error("cannot exec photod again (errno \(errno)); stopping")
        exit(1)
    }

    /// The binary's own path (`/proc/self/exe` resolved), so that the process keeps its name:
    /// exec'd through the link itself, it was called `exe` (`systemctl status`, `pgrep -x
    /// photod` and the journal's `_COMM` saw that). A binary replaced since it started (a
    /// package upgrade) is the one at its path now; the link itself when that path is gone.
    static func binary() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "/proc/self/exe" }
        var path = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        return access(path, X_OK) == 0 ? path : "/proc/self/exe"
    }
}
