import Dispatch
import Foundation
import PhotoModel
import PhotoSystem
import PhotoWire
#if canImport(Glibc)
import Glibc
#endif

/// Which of photod's methods a NATS request may call.
public enum RPCPolicy {
    /// Read methods: served to whoever may publish on `photod.<name>.rpc`.
    public static let reads: Set<String> = [
        "rpc.hello", "library.status", "library.errors", "assets.fetch", "assets.fetchIDs", "assets.get", "moments.fetch",
        "momentLists.fetch", "albums.fetch", "smartAlbums.fetch", "collectionLists.fetch", "userAlbums.fetch",
        "collections.assets", "changes.currentToken", "changes.since", "images.request", "images.startCaching",
        "images.stopCaching", "places.fetch", "assets.search", "collections.search",
    ]
    /// Write methods: refused unless `--allow-writes`.
    public static let writes: Set<String> = [
        "assets.setFavorite", "assets.setHidden", "assets.setKeywords", "assets.addKeywords", "assets.removeKeywords",
        "albums.create", "albums.createFolder", "albums.rename", "albums.move", "albums.delete", "albums.addAssets",
        "albums.removeAssets", "library.rescan", "library.adopt", "assets.trash", "assets.restore", "assets.deletePermanently",
    ]
    /// Methods bound to one socket connection, which a request over NATS does not have.
    public static let connectionBound: [String: String] = [
        "changes.subscribe": "change sets are in the JetStream stream: consume photod.<name>.changes",
        "changes.unsubscribe": "change sets are in the JetStream stream: consume photod.<name>.changes",
        "images.cancel": "a request over NATS cannot be cancelled: give it a timeout",
    ]

    enum Verdict: Equatable {
        case read, write
        case refused(RPCError)
    }

    static func verdict(_ method: String, allowWrites: Bool, name: String) -> Verdict {
        if reads.contains(method) { return .read }
        if writes.contains(method) {
            return allowWrites ? .write : .refused(RPCError(.permissionDenied, detail:
                "writes over NATS are off: start photod-nats with --allow-writes, and let NATS permissions decide who may publish to photod.\(name).rpc"))
        }
        if let reason = connectionBound[method] {
            return .refused(RPCError(.methodNotFound, detail: "'\(method)' is not served over NATS: "
                                     + reason.replacingOccurrences(of: "<name>", with: name), extra: ["method": .string(method)]))
        }
        return .refused(RPCError(.methodNotFound, detail: "no method '\(method)'", extra: ["method": .string(method)]))
    }
}

/// Serves photod's read methods (and, with `--allow-writes`, its writes) as NATS
/// request/reply on `photod.<name>.rpc`, images as bytes, and the bridge's own status on
/// `photod.<name>.bridge.status`.
///
/// Each request is passed to photod on a socket connection of a small pool, one request per
/// connection at a time, so the answer is photod's own, byte for byte. A request must have an
/// `id` (a notification would get no answer). Requests wait for a worker (`--rpc-workers`) in
/// nats.c's bounded queue.
final class RPCServer: Service {
    let options: BridgeOptions
    let logger: Logger
    let status: @Sendable (NATSClient?, PhotodPool) -> JSONObject
    let pool: PhotodPool
    private let workers: DispatchSemaphore
    private let nats = Locked<NATSClient?>(nil)
    private let counts = Locked(Counts())
    private let stopFlag = StopFlag()
    /// The threads serving requests and status queries, while they run.
    private let serving = DispatchGroup()

    var natsErrors: (count: Int, last: String)? { nats.withLock { $0?.asyncErrors } }

    struct Counts {
        var served = 0
        var refused = 0
        var images = 0
        var failed = 0
    }

    /// -32009 `tooLarge`: an answer over the NATS server's `max_payload` (photod-nats only).
    static let tooLarge = RPCErrorCode(rawValue: -32009)

    init(options: BridgeOptions, logger: Logger, status: @escaping @Sendable (NATSClient?, PhotodPool) -> JSONObject) {
        self.options = options
        self.logger = logger
        self.status = status
        pool = PhotodPool(sockets: options.sockets)
        workers = DispatchSemaphore(value: options.rpcWorkers)
    }

    var served: Counts { counts.withLock { $0 } }

    /// Connects (retrying) and serves until `stop`, on threads of its own.
    func start() {
        serving.enter()
        spawnThread("photod-nats-rpc") { [self] in
            var backoff = Backoff(stop: stopFlag)
            while !stopFlag.isStopped {
                do {
                    try serveConnection()
                } catch {
                    logger.warning("cannot serve \(options.rpcSubject): \(error); retrying")
                }
                backoff.wait()
            }
            serving.leave()
        }
    }

    /// Stops taking requests (within a second: the subscriptions' wait), waits for the serving
    /// threads and the requests being answered, and closes the connection to NATS.
    func stop() {
        stopFlag.stop()
        serving.wait()
        // Every worker slot back: no request is being answered.
        for _ in 0..<options.rpcWorkers { workers.wait() }
        for _ in 0..<options.rpcWorkers { workers.signal() }
        pool.closeAll()
    }

    /// One connection to NATS: subscribes to both subjects and serves them until nats.c closes
    /// the subscription (the connection gone for good). A function of its own: with this body
    /// inline in `start`'s thread closure, the release build's optimizer never finished (Swift
    /// 6.3.1).
    private func serveConnection() throws(NATSError) {
        let client = try NATSClient(urls: options.servers, name: "photod-nats \(options.name) rpc",
                                    credentials: options.credentials, caFile: options.caFile)
        let requests = try client.subscribe(options.rpcSubject, queue: "photod-nats")
        let statuses = try client.subscribe(options.statusSubject)
        // The server knows both subscriptions before "serving" is said, and a permissions
        // violation (the user may not subscribe there) is said instead.
        guard client.flush(timeout: .seconds(5)) else { throw NATSError(description: "the server did not answer a flush") }
        usleep(100_000)
        let (errors, last) = client.asyncErrors
        if errors > 0 { throw NATSError(description: "the server refused the subscriptions: \(last)") }
        nats.withLock { $0 = client }
        logger.notice("serving \(options.rpcSubject) (\(options.allowWrites ? "reads and writes" : "reads only"), "
                      + "\(options.rpcWorkers) workers) and \(options.statusSubject)")
        serving.enter()
        spawnThread("photod-nats-sts") { [self] in
            serve(statuses, client) { message in answerStatus(message, client) }
            serving.leave()
        }
        var reported = 0
        serve(requests, client) { message in
            let (errors, last) = client.asyncErrors
            if errors > reported {
                reported = errors
                logger.warning("NATS: \(last)")
            }
            workers.wait()
            DispatchQueue.global().async { [self] in
                defer { workers.signal() }
                answer(message, client)
            }
        }
        nats.withLock { $0 = nil }
    }

    /// Hands each message of `subscription` to `body` until the subscription ends.
    private func serve(_ subscription: NATSSubscription, _ client: NATSClient, _ body: (NATSMessage) -> Void) {
        while !stopFlag.isStopped {
            do {
                guard let message = try subscription.next(timeout: .seconds(1)) else { continue }
                body(message)
            } catch {
                logger.warning("receiving requests: \(error)")
                return
            }
        }
    }

    /// Where answers may go: a requester's inbox, never a subject the bridge's own permissions
    /// would let it publish on otherwise (the stream's subjects, JetStream's API: a request whose
    /// reply subject were `$JS.API.STREAM.PURGE.PHOTOD` would have the bridge purge the stream).
    func mayReply(to subject: String?) -> String? {
        guard let subject, options.replyPrefixes.contains(where: { subject.hasPrefix($0) }) else {
            counts.withLock { $0.refused += 1 }
            if let subject { logOnce("a request's reply subject '\(subject)' is not an inbox (\(options.replyPrefixes.joined(separator: ", "))): not answered") }
            return nil
        }
        return subject
    }

    private let warned = Locked<Set<String>>([])

    private func logOnce(_ text: String) {
        if warned.withLock({ $0.count < 100 && $0.insert(text).inserted }) { logger.warning(text) }
    }

    private func answerStatus(_ message: NATSMessage, _ client: NATSClient) {
        guard let reply = mayReply(to: message.reply) else { return }
        let body = Array(JSONValue.object(status(client, pool)).jsonString.utf8)
        try? client.send(subject: reply, payload: body, headers: [("Content-Type", "application/json")])
    }

    /// Answers one request on `photod.<name>.rpc`.
    func answer(_ message: NATSMessage, _ client: NATSClient) {
        guard let reply = mayReply(to: message.reply) else { return }
        let (payload, headers) = respond(to: message.payload, maxPayload: client.maxPayload)
        var body = payload, replyHeaders = headers
        let size = body.count + headerBytes(headers)
        if size > client.maxPayload {
            body = Self.errorLine(id: RawJSON.member("id", in: message.payload), Self.tooLargeError(size, client.maxPayload))
            replyHeaders = []
            counts.withLock { $0.failed += 1 }
        }
        do {
            try client.send(subject: reply, payload: body, headers: replyHeaders)
        } catch {
            logger.warning("cannot answer a request on \(options.rpcSubject): \(error)")
        }
    }

    static func tooLargeError(_ bytes: Int, _ maxPayload: Int) -> RPCError {
        RPCError(code: tooLarge.rawValue, message: "tooLarge", data: .object([
            "name": "tooLarge",
            "detail": .string("the answer is \(bytes) bytes, over the NATS server's max_payload of \(maxPayload): "
                              + "ask for less (a smaller limit or targetSize), or raise max_payload in nats-server.conf"),
            "bytes": .int(Int64(bytes)), "maxPayload": .int(Int64(maxPayload)),
        ]))
    }

    private func headerBytes(_ headers: [(String, String)]) -> Int {
        headers.reduce(16) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
    }

    /// The reply's payload and headers for a request's bytes.
    func respond(to request: [UInt8], maxPayload: Int) -> ([UInt8], [(String, String)]) {
        // One line to photod: JSON allows line breaks only between tokens.
        let line = request.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
        let rawID = RawJSON.member("id", in: line)
        guard let parsed = try? JSONValue.parse(line) else { return (forward(line), []) }
        switch parsed {
        case .object(let object):
            guard object["id"] != nil else {
                counts.withLock { $0.refused += 1 }
                return (Self.errorLine(id: nil, RPCError(.invalidRequest, detail:
                    "a request over NATS needs an id: a notification gets no answer")), [])
            }
            guard let method = object["method"]?.stringValue else { return (forward(line), []) }
            switch RPCPolicy.verdict(method, allowWrites: options.allowWrites, name: options.name) {
            case .refused(let error):
                counts.withLock { $0.refused += 1 }
                return (Self.errorLine(id: rawID, error), [])
            case .read where method == "images.request":
                return image(line, maxPayload: maxPayload)
            case .read where Self.isCaching(method):
                // Pre-caching belongs to a connection: every such request goes to the same one.
                return (forward(line, caching: true), [])
            case .read:
                return (forward(line), [])
            case .write:
                return (forward(line, idempotent: false), [])
            }
        case .array(let members):
            guard !members.isEmpty else { return (forward(line), []) }
            guard members.contains(where: { $0["id"] != nil }) else {
                counts.withLock { $0.refused += 1 }
                return (Self.errorLine(id: nil, RPCError(.invalidRequest, detail:
                    "a batch over NATS needs a request with an id: notifications get no answer")), [])
            }
            for (index, member) in members.enumerated() {
                guard let method = member["method"]?.stringValue else { continue }
                if case .refused(let error) = RPCPolicy.verdict(method, allowWrites: options.allowWrites, name: options.name) {
                    counts.withLock { $0.refused += 1 }
                    var extra = error.data?.objectValue ?? [:]
                    let detail = "batch member \(index): " + (extra["detail"]?.stringValue ?? "")
                    extra["name"] = nil
                    extra["detail"] = nil
                    extra["index"] = .int(Int64(index))
                    return (Self.errorLine(id: nil, RPCError(error.errorCode, detail: detail, extra: extra)), [])
                }
            }
            let caching = members.contains { ($0["method"]?.stringValue).map(Self.isCaching) ?? false }
            let writes = members.contains { ($0["method"]?.stringValue).map { RPCPolicy.writes.contains($0) } ?? false }
            return (forward(line, caching: caching, idempotent: !writes), [])
        default:
            return (forward(line), [])
        }
    }

    static func isCaching(_ method: String) -> Bool { method == "images.startCaching" || method == "images.stopCaching" }

    /// photod's answer to `line`, or an error of the bridge's when photod cannot be asked.
    func forward(_ line: [UInt8], caching: Bool = false, idempotent: Bool = true) -> [UInt8] {
        do {
            let answer = try pool.call(line, timeout: options.rpcTimeout, caching: caching, idempotent: idempotent)
            counts.withLock { $0.served += 1 }
            return answer
        } catch {
            counts.withLock { $0.failed += 1 }
            if let bytes = error.tooLong {
                return Self.errorLine(id: RawJSON.member("id", in: line), Self.tooLargeError(bytes, PhotodPool.maxAnswerBytes))
            }
            return Self.errorLine(id: RawJSON.member("id", in: line), RPCError(.unavailable, detail:
                "photod-nats cannot ask photod now: \(error)"))
        }
    }

    /// `images.request`: the image's bytes, its result in the `Photod-Result` header.
    func image(_ line: [UInt8], maxPayload: Int) -> ([UInt8], [(String, String)]) {
        let id = RawJSON.member("id", in: line)
        // The cache may drop a file between the answer and the read: ask again once.
        for attempt in 0..<2 {
            let answer = forward(line)
            guard let result = RawJSON.member("result", in: answer),
                  let parsed = try? JSONValue.parse(Array(result)),
                  let path = parsed["path"]?.stringValue else {
                return (answer, [])
            }
            let format = parsed["format"]?.stringValue ?? "jpeg"
            do {
                let file = try FileDescriptor.open(PathBytes(path))
                defer { file.close() }
                let size = try file.stat().size
                if size + Int64(result.count) > Int64(maxPayload) {
                    counts.withLock { $0.failed += 1 }
                    return (Self.errorLine(id: id, Self.tooLargeError(Int(size) + result.count, maxPayload)), [])
                }
                let bytes = try Self.read(file, size: Int(size))
                counts.withLock { $0.images += 1 }
                return (bytes, [("Photod-Result", String(decoding: result, as: UTF8.self)),
                                ("Content-Type", format == "png" ? "image/png" : "image/jpeg")])
            } catch where error.errno == ENOENT && attempt == 0 {
                continue
            } catch {
                counts.withLock { $0.failed += 1 }
                let hint = error.errno == EACCES ? " (photod-nats must be in the image cache's group, photod's own: the unit's SupplementaryGroups=photod)" : ""
                return (Self.errorLine(id: id, RPCError(.internalError, detail: "photod-nats cannot read the image \(path): \(error)\(hint)")), [])
            }
        }
        return (Self.errorLine(id: id, RPCError(.unavailable, detail: "the image left photod's cache before it could be read")), [])
    }

    /// A whole file from its descriptor (the one whose size was looked at).
    static func read(_ fd: FileDescriptor, size: Int) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            var n: Int?
            var failure: SystemError?
            bytes.withUnsafeMutableBytes { raw in
                do throws(SystemError) { n = try fd.readSome(into: UnsafeMutableRawBufferPointer(rebasing: raw[done...])) } catch { failure = error }
            }
            if let failure { throw failure }
            guard let n, n > 0 else { break }
            done += n
        }
        return Array(bytes[..<done])
    }

    /// An error response echoing the request's id as it was sent (null when there is none).
    static func errorLine(id: ArraySlice<UInt8>?, _ error: RPCError) -> [UInt8] {
        var line = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
        line += id.map(Array.init) ?? Array("null".utf8)
        line += Array(#","error":"#.utf8)
        error.json.write(into: &line)
        line.append(UInt8(ascii: "}"))
        return line
    }
}

/// photod socket connections for requests from NATS: one request on a connection at a time,
/// connections kept for the next, a broken one dropped. Pre-caching has a connection of its
/// own, so that `images.stopCaching` reaches what `images.startCaching` began.
final class PhotodPool: Sendable {
    let sockets: [PathBytes]
    private let idle = Locked<[PhotodFeed]>([])
    private let caching = Locked<PhotodFeed?>(nil)

    init(sockets: [PathBytes]) { self.sockets = sockets }

    /// Closes the connections kept (at a stop, when no request is being answered).
    func closeAll() {
        idle.withLock { feeds in
            feeds.forEach { $0.close() }
            feeds = []
        }
        caching.withLock { feed in
            feed?.close()
            feed = nil
        }
    }

    /// The largest answer taken from photod: NATS's largest message (a server's `max_payload`
    /// is at most 64 MiB); a longer one is read past without being kept, and is `tooLarge`.
    static let maxAnswerBytes = 64 << 20

    /// photod's answer to `line`. A read (`idempotent`) that fails on a kept connection before
    /// any answer (photod restarted since) is asked again once on a new one; a write is not.
    func call(_ line: [UInt8], timeout: Duration, caching forCaching: Bool = false, idempotent: Bool = true) throws(FeedError) -> [UInt8] {
        if forCaching {
            return try caching.withLock { (feed: inout PhotodFeed?) throws(FeedError) -> [UInt8] in
                // The deadline starts once this request has the connection.
                let deadline = Monotonic.nanoseconds + UInt64(timeout / .nanoseconds(1))
                if let stale = feed, stale.isStale {
                    stale.close()
                    feed = nil
                }
                let connection: PhotodFeed
                if let open = feed { connection = open } else { connection = try Self.open(sockets) }
                feed = nil
                do throws(FeedError) {
                    let answer = try connection.call(line, deadline: deadline)
                    feed = connection
                    return answer
                } catch {
                    connection.close()
                    throw error
                }
            }
        }
        let deadline = Monotonic.nanoseconds + UInt64(timeout / .nanoseconds(1))
        // A connection photod closed (it restarted, it said photod.stopping) is not reused.
        var kept: PhotodFeed?
        while let candidate = idle.withLock({ $0.popLast() }) {
            if candidate.isStale { candidate.close() } else { kept = candidate; break }
        }
        if let kept {
            do throws(FeedError) {
                let answer = try kept.call(line, deadline: deadline)
                idle.withLock { $0.append(kept) }
                return answer
            } catch {
                kept.close()
                guard idempotent, error.tooLong == nil, error.description != PhotodFeed.timedOut else { throw error }
            }
        }
        let connection = try Self.open(sockets)
        do throws(FeedError) {
            let answer = try connection.call(line, deadline: deadline)
            idle.withLock { $0.append(connection) }
            return answer
        } catch {
            connection.close()
            throw error
        }
    }

    private static func open(_ sockets: [PathBytes]) throws(FeedError) -> PhotodFeed {
        let feed = try PhotodFeed.connect(sockets, maxLineBytes: maxAnswerBytes)
        feed.useDeadlines()
        return feed
    }
}
