#if canImport(Glibc)
import Glibc
#endif
import PhotoModel

/// What a service manager (systemd) gives photod and hears from it, without libsystemd: the
/// notification datagrams of sd_notify(3) and the inherited sockets of sd_listen_fds(3). Both
/// protocols are a few lines; doing them here keeps them testable with a plain socket and
/// keeps glibc's socket declarations out of a C module (../shared/SWIFT-LINUX.md, pitfall 1).
public final class ServiceNotifier: Sendable {
    private let socket: FileDescriptor?
    private let address: [UInt8]
    /// How often systemd wants a `WATCHDOG=1` (`WATCHDOG_USEC`, when `WATCHDOG_PID` is unset or
    /// this process); nil without a watchdog.
    public let watchdogInterval: Duration?
    /// What was sent, newest last (for `library.status` and tests), at most 20 entries.
    private let sent = Locked<[String]>([])

    /// From `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace), `WATCHDOG_USEC` and
    /// `WATCHDOG_PID`. Without `NOTIFY_SOCKET` every call does nothing.
    public init(environment: [String: String]) {
        var interval: Duration?
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0,
           environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true {
            interval = .microseconds(Int64(clamping: usec))
        }
        watchdogInterval = interval
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count <= UnixSocket.maxPathBytes,
              path.hasPrefix("/") || path.hasPrefix("@")
        else {
            socket = nil
            address = []
            return
        }
        var bytes = Array(path.utf8)
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }  // the abstract namespace
        address = bytes
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        socket = fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }

    /// Whether a service manager listens.
    public var isActive: Bool { socket != nil }

    /// Sends one notification (`READY=1`, `STATUS=…`, `WATCHDOG=1`, several joined by `\n`).
    /// Returns whether it was delivered; a missing manager is not an error (false).
    @discardableResult
    public func notify(_ state: String) -> Bool {
        sent.withLock {
            $0.append(state)
            if $0.count > 20 { $0.removeFirst($0.count - 20) }
        }
        guard let socket else { return false }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in raw.copyBytes(from: address) }
        // An abstract name is exactly its bytes long; a path ends with its NUL.
        let length = MemoryLayout<sa_family_t>.size + address.count + (address.first == 0 ? 0 : 1)
        var message = Array(state.utf8)
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                message.withUnsafeMutableBytes { m in
                    Glibc.sendto(socket.rawValue, m.baseAddress, m.count, Int32(MSG_NOSIGNAL), sa, socklen_t(length))
                }
            }
        }
        return rc >= 0
    }

    /// The notifications sent so far (the last 20).
    public var history: [String] { sent.withLock { $0 } }
}

/// Sockets passed by socket activation (sd_listen_fds(3)): `LISTEN_PID` must be this process,
/// `LISTEN_FDS` says how many, starting at descriptor 3. They are made close-on-exec.
public enum ListenFDs {
    public static let start: Int32 = 3

    /// The inherited descriptors (empty when not socket-activated).
    public static func take(environment: [String: String]) -> [FileDescriptor] {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap(Int32.init), count > 0, count < 1024
        else { return [] }
        return (start..<(start + count)).map { fd in
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
            return FileDescriptor(rawValue: fd)
        }
    }

    /// Whether `fd` is a listening Unix stream socket.
    public static func isListeningUnixStream(_ fd: FileDescriptor) -> Bool {
        var type: Int32 = 0, listening: Int32 = 0, family = sockaddr_un()
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd.rawValue, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue) else {
            return false
        }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd.rawValue, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening != 0 else { return false }
        var addressLength = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &family) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd.rawValue, $0, &addressLength) }
        }
        return rc == 0 && family.sun_family == sa_family_t(AF_UNIX)
    }

    /// The path a Unix socket is bound to, or nil (an abstract or unnamed socket).
    public static func boundPath(_ fd: FileDescriptor) -> PathBytes? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd.rawValue, $0, &length) }
        }
        guard rc == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let bytes = withUnsafeBytes(of: address.sun_path) { raw -> [UInt8] in
            let count = min(raw.count, max(0, Int(length) - MemoryLayout<sa_family_t>.size))
            return Array(raw.prefix(count).prefix { $0 != 0 })
        }
        guard let first = bytes.first, first == UInt8(ascii: "/") else { return nil }
        return PathBytes(bytes)
    }

    /// Makes `fd` non-blocking (the server's accept loop expects it).
    public static func makeNonBlocking(_ fd: FileDescriptor) {
        let flags = fcntl(fd.rawValue, F_GETFL)
        if flags >= 0 { _ = fcntl(fd.rawValue, F_SETFL, flags | O_NONBLOCK) }
    }
}
