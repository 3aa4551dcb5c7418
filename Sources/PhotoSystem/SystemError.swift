#if canImport(Glibc)
import Glibc
#endif

/// An error from a system call: the call's name, `errno`, and what it was working on.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C function that failed (`open`, `inotify_add_watch`).
    public var call: String
    /// The `errno` value.
    public var errno: Int32
    /// What the call was working on (a path, a socket), when there is one.
    public var context: String?

    public init(call: String, errno: Int32, context: String? = nil) {
        self.call = call
        self.errno = errno
        self.context = context
    }

    /// `strerror(errno)`.
    public var message: String { String(cString: strerror(errno)) }

    public var description: String {
        if let context { return "\(call)(\(context)): \(message)" }
        return "\(call): \(message)"
    }
}

/// Runs a system call: retries on `EINTR`, throws `SystemError` on an environment error,
/// and traps on errors only a bug can cause (`EBADF`, `EFAULT`).
@inline(__always)
public func syscall<T: BinaryInteger>(_ name: @autoclosure () -> String, context: @autoclosure () -> String? = nil,
                                      _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let e = Glibc.errno
        if e == EINTR { continue }
        precondition(e != EBADF && e != EFAULT, "\(name()) failed with a programming error: errno \(e)")
        throw SystemError(call: name(), errno: e, context: context())
    }
}
