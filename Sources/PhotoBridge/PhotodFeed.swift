import PhotoModel
import PhotoSystem
import PhotoWire
#if canImport(Glibc)
import Glibc
#endif

/// What could not be done with photod's socket.
public struct FeedError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// One connection to photod's socket, read line by line (blocking): the bridge's subscription.
final class PhotodFeed {
    let socket: PathBytes
    private let fd: FileDescriptor
    /// Change sets are as long as they are: the framer's limit is far above any photod sends.
    private var framer = LineFramer(maxLineBytes: 1 << 30)
    private var lines: [[UInt8]] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    private init(socket: PathBytes, fd: FileDescriptor) {
        self.socket = socket
        self.fd = fd
    }

    /// The first of `sockets` that accepts a connection.
    static func connect(_ sockets: [PathBytes]) throws(FeedError) -> PhotodFeed {
        var reasons: [String] = []
        for path in sockets {
            do {
                return PhotodFeed(socket: path, fd: try UnixSocket.connect(path))
            } catch {
                reasons.append("\(path): \(error.message)")
            }
        }
        throw FeedError(description: "cannot connect to photod (" + reasons.joined(separator: "; ") + ")")
    }

    func close() { fd.close() }

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

    func send(_ text: String) throws(FeedError) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n: Int?
            do {
                n = try bytes.withUnsafeBytes { raw in try fd.writeSome(raw) }
            } catch {
                throw FeedError(description: "cannot write to photod: \(error)")
            }
            guard let n, n > 0 else { continue }
            bytes = bytes.dropFirst(n)
        }
    }

    /// The next line photod sent, or nil when the connection ended.
    func nextLine() throws(FeedError) -> [UInt8]? {
        while lines.isEmpty {
            let n: Int?
            do {
                n = try buffer.withUnsafeMutableBytes { raw in try fd.readSome(into: raw) }
            } catch {
                throw FeedError(description: "cannot read from photod: \(error)")
            }
            guard let n else { continue }
            if n == 0 { return nil }
            for event in framer.append(buffer[0..<n]) {
                if case .line(let line) = event { lines.append(line) }
            }
        }
        return lines.removeFirst()
    }
}
