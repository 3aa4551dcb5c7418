import PhotoModel
import PhotoSystem
import PhotoWire
#if canImport(Glibc)
import Glibc
#endif

/// What could not be done with photod's socket.
public struct FeedError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// photod's answer was longer than the connection takes (its bytes, at least).
    public var tooLong: Int?
}

/// One connection to photod's socket, read line by line (blocking): the bridge's subscription,
/// and each of the connections that carry requests from NATS (`call`, with a deadline).
final class PhotodFeed: @unchecked Sendable {  // used by one thread at a time (the pool hands it out)
    let socket: PathBytes
    private let fd: FileDescriptor
    /// Change sets are as long as they are: the subscription's limit is far above any photod
    /// sends. A request's answer goes into one NATS message: no more than NATS's largest.
    private var framer: LineFramer
    private var lines: [[UInt8]] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    private init(socket: PathBytes, fd: FileDescriptor, maxLineBytes: Int) {
        self.socket = socket
        self.fd = fd
        framer = LineFramer(maxLineBytes: maxLineBytes)
    }

    /// The first of `sockets` that accepts a connection.
    static func connect(_ sockets: [PathBytes], maxLineBytes: Int = 1 << 30) throws(FeedError) -> PhotodFeed {
        var reasons: [String] = []
        for path in sockets {
            do {
                return PhotodFeed(socket: path, fd: try UnixSocket.connect(path), maxLineBytes: maxLineBytes)
            } catch {
                reasons.append("\(path): \(error.message)")
            }
        }
        throw FeedError(description: "cannot connect to photod (" + reasons.joined(separator: "; ") + ")")
    }

    func close() { fd.close() }

    /// Ends the connection in both directions without closing the descriptor: a read blocked on
    /// it on another thread returns (the end of the stream), and its owner closes it then.
    func shutDown() { _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_RDWR)) }

    /// Whether photod said something or hung up while the connection was idle: it closed or
    /// is closing it (a pooled connection has no request waiting, so nothing else comes).
    var isStale: Bool {
        if !lines.isEmpty { return true }
        var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) != 0
    }

    /// Reads and writes give up every 250 ms to look at a deadline (`call`).
    func useDeadlines() { UnixSocket.setTimeout(fd, .milliseconds(250)) }

    /// Sends one request line and returns photod's answer to it (the next line that is not a
    /// notification), or throws when none came by `deadline` (`Monotonic.nanoseconds`).
    func call(_ line: [UInt8], deadline: UInt64) throws(FeedError) -> [UInt8] {
        try send(line + [0x0A], deadline: deadline)
        while let answer = try nextLine(deadline: deadline) {
            if RawJSON.member("method", in: answer) == nil { return answer }
        }
        throw FeedError(description: "photod closed the connection")
    }

    enum Subscription {
        case subscribed(current: Int64)
        case expired(current: Int64)
    }

    /// `changes.subscribe` after `since` (from now without it).
    func subscribe(since: Int64?) throws(FeedError) -> Subscription {
        let params = since.map { ",\"params\":{\"since\":\($0)}" } ?? ""
        try send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"changes.subscribe\"\(params)}\n")
        while let line = try nextLine() {
            guard RawJSON.member("id", in: line).map({ Array($0) }) == Array("1".utf8) else { continue }
            guard let answer = try? JSONValue.parse(line) else { throw FeedError(description: "photod's answer is not JSON") }
            if let token = answer["result"]?["token"]?.int64Value { return .subscribed(current: token) }
            if answer["error"]?["message"]?.stringValue == "tokenExpired",
               let current = answer["error"]?["data"]?["currentToken"]?.int64Value {
                return .expired(current: current)
            }
            throw FeedError(description: "changes.subscribe: \(answer["error"].map { $0.jsonString } ?? "no result")")
        }
        throw FeedError(description: "photod closed the connection")
    }

    func send(_ text: String) throws(FeedError) { try send(Array(text.utf8), deadline: nil) }

    func send(_ data: [UInt8], deadline: UInt64?) throws(FeedError) {
        var bytes = data[...]
        while !bytes.isEmpty {
            let n: Int?
            do {
                n = try bytes.withUnsafeBytes { raw in try fd.writeSome(raw) }
            } catch {
                throw FeedError(description: "cannot write to photod: \(error)")
            }
            guard let n, n > 0 else {
                try check(deadline)
                continue
            }
            bytes = bytes.dropFirst(n)
        }
    }

    /// The next line photod sent, or nil when the connection ended.
    func nextLine(deadline: UInt64? = nil) throws(FeedError) -> [UInt8]? {
        while lines.isEmpty {
            let n: Int?
            do {
                n = try buffer.withUnsafeMutableBytes { raw in try fd.readSome(into: raw) }
            } catch {
                throw FeedError(description: "cannot read from photod: \(error)")
            }
            guard let n else {
                try check(deadline)
                continue
            }
            if n == 0 { return nil }
            for event in framer.append(buffer[0..<n]) {
                switch event {
                case .line(let line): lines.append(line)
                case .tooLong(let dropped):
                    throw FeedError(description: "photod's answer is over \(dropped) bytes", tooLong: dropped)
                }
            }
        }
        return lines.removeFirst()
    }

    /// A timeout that passed `deadline`.
    static let timedOut = "photod did not answer in time"

    private func check(_ deadline: UInt64?) throws(FeedError) {
        if let deadline, Monotonic.nanoseconds >= deadline { throw FeedError(description: Self.timedOut) }
    }
}
