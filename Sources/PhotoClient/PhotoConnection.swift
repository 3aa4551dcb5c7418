#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem
import PhotoWire

/// Why a call to the daemon failed.
public enum ClientError: Error, Sendable, CustomStringConvertible {
    /// No daemon answers at the socket (missing, refused, permission denied).
    case unreachable(socket: PathBytes, SystemError)
    /// The daemon did not answer within the connection's timeout.
    case timedOut(socket: PathBytes)
    /// The daemon answered with a JSON-RPC error.
    case rpc(RPCError)
    /// The connection broke or the daemon sent something that is not a response.
    case connection(String)
    /// The daemon's answer to `method` does not have the shape the method promises.
    case malformedReply(method: String, MalformedReply)

    public var description: String {
        switch self {
        case .unreachable(let socket, let e): return "cannot reach photod at \(socket): \(e.message)"
        case .timedOut(let socket): return "photod at \(socket) did not answer in time"
        case .rpc(let e):
            // photod's own codes carry only their name as the message; the detail says what.
            if let detail = e.detail, !e.message.contains(detail) { return "\(e.message): \(detail)" }
            return e.message
        case .connection(let m): return m
        case .malformedReply(let method, let e): return "photod's answer to \(method) is malformed: \(e)"
        }
    }

    /// The socket is there but this process may not connect to it (`EACCES`, `EPERM`): a daemon
    /// may well be running; the user lacks the socket's group (or the search right on its
    /// directory).
    public var isPermissionDenied: Bool {
        guard case .unreachable(_, let e) = self else { return false }
        return e.errno == EACCES || e.errno == EPERM
    }

    /// Of the errors of trying several sockets in order, the one to report: the first refusal
    /// for want of permission (a daemon is there, the user may not reach it; a socket missing
    /// elsewhere says less), else the first.
    public static func mostTelling(_ errors: [ClientError]) -> ClientError? {
        errors.first(where: \.isPermissionDenied) ?? errors.first
    }
}

/// A blocking connection to photod: one request at a time, answered in order. For command
/// line tools and scripts; not shared between threads.
public final class PhotoConnection {
    /// The socket this connection is on.
    public let socket: PathBytes
    private let fd: FileDescriptor
    private var framer = LineFramer(maxLineBytes: WireLimits.maxResponseLineBytes)
    private var pending: [[UInt8]] = []
    private var nextID: Int64 = 1
    private var closed = false
    /// Notifications that arrived while a call waited for its response, oldest first.
    private var notifications: [RPCNotification] = []

    /// Connects to the daemon's socket. With a `timeout`, every later call fails with
    /// `timedOut` when the daemon does not answer within it (a stopped or wedged daemon).
    public init(socket: PathBytes, timeout: Duration? = nil) throws(ClientError) {
        self.socket = socket
        do {
            fd = try UnixSocket.connect(socket)
        } catch {
            throw .unreachable(socket: socket, error)
        }
        if let timeout { UnixSocket.setTimeout(fd, timeout) }
    }

    /// Connects to the first socket that answers, in order; when none does, throws the most
    /// telling of their errors (`ClientError.mostTelling`).
    public static func connect(anyOf sockets: [PathBytes], timeout: Duration? = nil) throws(ClientError) -> PhotoConnection {
        var errors: [ClientError] = []
        for socket in sockets {
            do {
                return try PhotoConnection(socket: socket, timeout: timeout)
            } catch {
                errors.append(error)
            }
        }
        throw ClientError.mostTelling(errors) ?? .connection("no socket to connect to")
    }

    deinit { close() }

    /// Closes the connection (idempotent).
    public func close() {
        guard !closed else { return }
        closed = true
        fd.close()
    }

    /// Calls `method` and returns its result, or throws the daemon's error.
    public func call(_ method: String, _ params: JSONObject = [:]) throws(ClientError) -> JSONValue {
        try call(method, params) { _, _ in false }
    }

    /// Calls `method`; each notification that arrives before the response is offered to
    /// `intercept` with this call's request id (an `images.degraded` names it): those it returns
    /// true for are its own, the rest are kept for `nextNotification()`.
    public func call(_ method: String, _ params: JSONObject, intercept: (RPCNotification, RPCID) -> Bool) throws(ClientError)
        -> JSONValue {
        let id = nextID
        nextID += 1
        let request = RPCRequest(id: .int(id), method: method, params: .object(params))
        try send(request.encodedLine())
        while true {
            switch try readMessage() {
            case .response(.success(let rid, let result)) where rid == .int(id):
                return result
            case .response(.failure(let rid, let error)) where rid == .int(id) || rid == nil:
                throw .rpc(error)
            case .notification(let n):
                // A subscription's notification overtook the response: kept, in order, for
                // `nextNotification()`.
                if intercept(n, .int(id)) { continue }
                notifications.append(n)
            default:
                throw .connection("photod answered a different request than \(id)")
            }
        }
    }

    /// The next notification (`changes`, `changes.expired`), waiting for one when none is
    /// queued — at most the connection's timeout, if it has one (then `timedOut`). Notifications
    /// that arrived during a `call` come first, in the order they were sent.
    public func nextNotification() throws(ClientError) -> RPCNotification {
        if !notifications.isEmpty { return notifications.removeFirst() }
        while true {
            switch try readMessage() {
            case .notification(let n): return n
            case .response(.failure(nil, let error)): throw .rpc(error)
            default: throw .connection("photod sent a response when no request was waiting")
            }
        }
    }

    /// Sets or clears the time a call or `nextNotification()` waits for the daemon.
    public func setTimeout(_ timeout: Duration?) {
        if let timeout { UnixSocket.setTimeout(fd, timeout) } else { UnixSocket.clearTimeout(fd) }
    }

    private func send(_ bytes: [UInt8]) throws(ClientError) {
        var sent = 0
        while sent < bytes.count {
            let n: Int?
            do {
                n = try bytes.withUnsafeBytes { raw throws(SystemError) in
                    try fd.writeSome(UnsafeRawBufferPointer(rebasing: raw[sent...]))
                }
            } catch {
                throw .connection("cannot send to photod: \(error)")
            }
            guard let n else { throw .timedOut(socket: socket) }  // EAGAIN after SO_SNDTIMEO
            sent += n
        }
    }

    /// The next line, decoded.
    private func readMessage() throws(ClientError) -> RPCServerMessage {
        let line = try readLine()
        do {
            return try RPCMessage.decodeServerMessage(line)
        } catch {
            throw .connection("photod sent an unreadable line: \(error)")
        }
    }

    private func readLine() throws(ClientError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while pending.isEmpty {
            let n: Int?
            do {
                n = try buffer.withUnsafeMutableBytes { try fd.readSome(into: $0) }
            } catch {
                throw .connection("cannot read from photod: \(error)")
            }
            guard let n else { throw .timedOut(socket: socket) }  // EAGAIN after SO_RCVTIMEO
            guard n > 0 else { throw .connection("photod closed the connection") }
            for event in framer.append(buffer[0..<n]) {
                switch event {
                case .line(let line): pending.append(line)
                case .tooLong: throw .connection("photod sent a line longer than \(WireLimits.maxResponseLineBytes) bytes")
                }
            }
        }
        return pending.removeFirst()
    }
}
