import Foundation
import PhotoModel
import PhotoSystem
import PhotoWire
#if canImport(Glibc)
import Glibc
#endif

/// Publishes photod's change sets to JetStream, in token order, each once.
///
/// Stateless about progress: at start, and whenever it connects to photod again, it reads the
/// newest token the stream holds for its subjects (JetStream's last message by subject) and
/// subscribes after it. Every change set goes out with `Nats-Msg-Id: <name>:<token>`, so a
/// publish retried after a lost acknowledgment is dropped by the stream's deduplication. While
/// NATS is away it stops reading photod's socket (photod waits for a subscriber catching up,
/// and drops one that leaves 16 MiB of live changes unread; the bridge then resubscribes from
/// its last token): memory stays bounded. A token photod's journal no longer reaches back to is
/// published as a resync event, and publishing goes on from photod's current token.
public final class Bridge: Service {
    let options: BridgeOptions
    let logger: Logger
    let notifier: ServiceNotifier
    private let state = Locked(Progress())

    /// What `STATUS=` and the watchdog look at.
    struct Progress {
        var lastToken: Int64?
        /// The stream sequence of the last change set on the changes subject: each publish
        /// expects it (`ExpectLastSubjectSeq`), so that a retry the deduplication window no
        /// longer covers, or a second bridge under the same name, cannot store a change set twice.
        var subjectSequence: UInt64?
        /// The token photod gave the last subscription: where to resume when the stream holds
        /// nothing of this name yet (a photod restart before the first change set).
        var subscribedAt: Int64?
        var published = 0
        var resyncs = 0
        /// A change set is in hand and not yet acknowledged by the stream.
        var inHand = false
        var natsUp = false
        var photodUp = false
        /// When the last publish attempt began (`Monotonic.nanoseconds`): a retry loop waiting
        /// out an outage is alive, an attempt that never returns is not.
        var lastAttempt: UInt64 = 0
        /// When the last change set was acknowledged, and how long after photod committed it.
        var lastPublishedAt: Double?
        var lastLatencyMilliseconds: Double?
    }

    private let startedAt = Date().timeIntervalSince1970
    private let rpc: RPCServer
    /// The publisher's "stop now", and the connection to photod it may be blocked reading.
    private let stopFlag = StopFlag()
    private let feed = Locked<PhotodFeed?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    public init(options: BridgeOptions, logger: Logger, environment: [String: String]) {
        self.options = options
        self.logger = logger
        notifier = ServiceNotifier(environment: environment)
        let status = Locked<Callback<(NATSClient?, PhotodPool), JSONObject>?>(nil)
        rpc = RPCServer(options: options, logger: logger) { client, pool in status.withLock { $0 }?((client, pool)) ?? [:] }
        status.withLock { $0 = Callback { [weak self] in self?.statusObject($0.0, $0.1) ?? [:] } }
    }

    /// The bridge's parts, in the order they start (and stop in reverse): the watchdog, the
    /// request/reply server, the publisher (not with `--rpc-only`).
    public var services: ServiceGroup {
        ServiceGroup([.init("watchdog", BridgeWatchdog(bridge: self)), .init("rpc", rpc),
                      .init("publisher", options.rpcOnly ? nil : self)], logger: logger)
    }

    /// Runs until SIGTERM or SIGINT, which stop the parts in reverse order (nothing is in flight
    /// that a restart would not redo: the stream deduplicates), then exits.
    public func run() -> Never {
        // Ready once running: the bridge waits for photod and NATS itself (STATUS= says which it
        // waits for), so that neither being away holds up the boot or fails the start.
        _ = notifier.notify("READY=1\nSTATUS=Connecting to photod (\(options.sockets.map(\.string).joined(separator: " or "))) "
                            + "and NATS (\(options.servers))")
        if options.rpcOnly {
            _ = notifier.notify("STATUS=Serving \(options.rpcSubject) (\(options.allowWrites ? "reads and writes" : "reads")); publishing nothing")
        }
        let group = services
        let stopping = DispatchSemaphore(value: 0)
        let signals = DispatchQueue(label: "photod-nats.signals")
        let sources = [SIGTERM, SIGINT].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: signals)
            source.setEventHandler { stopping.signal() }
            source.resume()
            return source
        }
        do {
            try group.start()
        } catch {
            logger.error("cannot start: \(error)")
            exit(1)
        }
        stopping.wait()
        _ = notifier.notify("STOPPING=1")
        group.stop()
        withExtendedLifetime(sources) {}
        exit(0)
    }

    /// Starts publishing, on a thread of its own.
    public func start() {
        spawnThread("photod-nats-pub") { [self] in
            publishUntilStopped()
            finished.signal()
        }
    }

    /// Stops publishing: a change set in hand is given up (the next start publishes it again),
    /// the connection to photod closed.
    public func stop() {
        stopFlag.stop()
        feed.withLock { $0 }?.shutDown()
        finished.wait()
    }

    private func publishUntilStopped() {
        var nats: NATSClient?
        var backoff = Backoff(stop: stopFlag)
        while !stopFlag.isStopped {
            if nats == nil {
                do {
                    nats = try connectNATS()
                    backoff = Backoff(stop: stopFlag)
                } catch {
                    logOnce("nats", "cannot connect to NATS at \(options.servers): \(error); retrying")
                    backoff.wait()
                    continue
                }
            }
            guard let client = nats else { continue }
            do {
                try session(client)
                backoff = Backoff(stop: stopFlag)
            } catch where error is Stopped || stopFlag.isStopped {
                return
            } catch let error as NATSError {
                // Connect again: the stream is made again if it went away.
                logOnce("nats", "NATS: \(error); connecting again")
                state.withLock { $0.natsUp = false }
                nats = nil
                backoff.wait()
            } catch {
                logOnce("photod", "photod: \(error); retrying")
                state.withLock { $0.photodUp = false }
                backoff.wait()
            }
        }
    }

    /// The publisher was stopped in the middle of something.
    struct Stopped: Error {}

    func connectNATS() throws(NATSError) -> NATSClient {
        let client = try NATSClient(urls: options.servers, name: "photod-nats \(options.name)", credentials: options.credentials,
                                    caFile: options.caFile)
        if try client.ensureStream(options.stream, subjects: ["photod.*.changes", "photod.*.resync"],
                                   duplicateWindow: options.duplicateWindow, replicas: options.replicas,
                                   maxAge: options.maxAgeDays.map { .seconds($0 * 86_400) }) {
            logger.notice("made the stream \(options.stream) (subjects photod.*.changes, photod.*.resync; "
                          + "deduplication \(options.duplicateWindow), \(options.replicas) replica(s))")
        }
        logger.notice("connected to NATS at \(options.servers); stream \(options.stream), subject \(options.changesSubject)")
        state.withLock { $0.natsUp = true }
        forget("nats")
        return client
    }

    /// Where the stream stands for this name: the token of its newest message (by stream
    /// sequence) on the changes or resync subject, and the sequence of the last change set.
    static func resumePoint(_ nats: NATSClient, _ options: BridgeOptions) throws(NATSError)
        -> (token: Int64?, subjectSequence: UInt64?) {
        let changes = try nats.lastMessage(stream: options.stream, subject: options.changesSubject, header: "Photod-Token")
        let resync = try nats.lastMessage(stream: options.stream, subject: options.resyncSubject, header: "Photod-Token")
        let newest = [changes, resync].compactMap { $0 }.max { $0.sequence < $1.sequence }
        return (newest.flatMap { Int64($0.value) }, changes?.sequence)
    }

    /// One connection to photod: subscribe after the stream's newest token, publish what comes.
    func session(_ nats: NATSClient) throws {
        let point = try Self.resumePoint(nats, options)
        var since = point.token ?? state.withLock { $0.subscribedAt }
        state.withLock { $0.subjectSequence = point.subjectSequence }
        let feed = try PhotodFeed.connect(options.sockets)
        self.feed.withLock { $0 = feed }
        defer {
            self.feed.withLock { $0 = nil }
            feed.close()
        }
        guard !stopFlag.isStopped else { throw Stopped() }
        state.withLock { $0.photodUp = true }
        forget("photod")
        while true {
            switch try feed.subscribe(since: since) {
            case .subscribed(let current):
                logger.notice("subscribed to photod at \(feed.socket) "
                              + (since.map { "after token \($0)" } ?? "from its current token \(current)"))
                state.withLock { s in
                    s.lastToken = since ?? s.lastToken
                    s.subscribedAt = since ?? current
                    _ = notifier.notify("STATUS=\(status(s))")
                }
                if let next = try pump(feed, nats, after: since ?? current) {
                    since = next
                    continue
                }
                if stopFlag.isStopped { throw Stopped() }
                return
            case .expired(let current):
                try resync(nats, from: since, to: current, reason: "tokenExpired")
                since = current
            }
        }
    }

    /// Publishes change sets until the connection ends (nil) or photod says the subscription
    /// expired (the token to subscribe after, once the resync event is out).
    func pump(_ feed: PhotodFeed, _ nats: NATSClient, after since: Int64?) throws -> Int64? {
        var last = since
        while let line = try feed.nextLine() {
            guard let method = RawJSON.member("method", in: line).map({ String(decoding: $0, as: UTF8.self) }) else { continue }
            switch method {
            case "\"changes\"":
                guard let params = RawJSON.member("params", in: line),
                      let tokenBytes = RawJSON.member("token", in: Array(params)),
                      let token = Int64(String(decoding: tokenBytes, as: UTF8.self)) else {
                    // Not photod's protocol: connect again rather than skip a change set.
                    throw FeedError(description: "a change set without a token: \(String(decoding: line.prefix(200), as: UTF8.self))")
                }
                if let last, token <= last { continue }
                try publish(Array(params), token: token, committed: RawJSON.member("time", in: Array(params)).flatMap(Self.commitTime), nats)
                last = token
                state.withLock { $0.subscribedAt = token }
            case "\"changes.expired\"":
                let params = RawJSON.member("params", in: line).map(Array.init) ?? []
                let current = RawJSON.member("currentToken", in: params).flatMap { Int64(String(decoding: $0, as: UTF8.self)) } ?? (last ?? 0)
                try resync(nats, from: last, to: current, reason: "tokenExpired")
                return current
            case "\"photod.stopping\"", "\"photod.reloading\"":
                logger.info("photod is \(method == "\"photod.stopping\"" ? "stopping" : "reloading"); reconnecting")
            default:
                continue
            }
        }
        return nil
    }

    /// Publishes one change set, retrying until the stream has it.
    func publish(_ payload: [UInt8], token: Int64, committed: Double? = nil, _ nats: NATSClient) throws {
        state.withLock { $0.inHand = true }
        defer { state.withLock { $0.inHand = false } }
        let headers = [("Nats-Msg-Id", "\(options.name):\(token)"), ("Photod-Token", String(token))]
        if payload.count + 512 > nats.maxPayload {
            // NATS refuses a message over the server's max_payload: the consumers refetch instead.
            try resync(nats, from: token - 1, to: token, reason: "tooLarge")
            return
        }
        var backoff = Backoff(stop: stopFlag)
        while true {
            if stopFlag.isStopped { throw Stopped() }
            let expected = state.withLock { s in
                s.lastAttempt = Monotonic.nanoseconds
                return s.subjectSequence
            }
            do {
                let ack = try nats.publish(subject: options.changesSubject, payload: payload, headers: headers,
                                           expectingLastSubjectSequence: expected)
                let now = Date().timeIntervalSince1970
                state.withLock { s in
                    s.lastToken = token
                    s.subjectSequence = ack.sequence
                    s.published += 1
                    s.natsUp = true
                    s.lastPublishedAt = now
                    s.lastLatencyMilliseconds = committed.map { max(0, (now - $0) * 1000) }
                    _ = notifier.notify("STATUS=\(status(s))")
                }
                forget("publish")
                if ack.duplicate { logger.debug("change set \(token) was in the stream already") }
                return
            } catch where error.isWrongLastSequence {
                // The subject moved on: this change set stored by a publish whose acknowledgment
                // was lost (then it is done), or another bridge publishing under this name.
                let last = try nats.lastMessage(stream: options.stream, subject: options.changesSubject, header: "Photod-Token")
                state.withLock { $0.subjectSequence = last?.sequence }
                if let last, let stored = Int64(last.value), stored >= token {
                    state.withLock { s in
                        s.lastToken = token
                        s.published += 1
                    }
                    return
                }
                logger.error("the stream's last change set of \(options.name) is not the one this bridge published "
                             + "(token \(last?.value ?? "none")): is another photod-nats publishing as --name \(options.name)?")
                backoff.wait()
            } catch where error.isStreamMissing {
                throw error
            } catch {
                state.withLock { s in
                    s.natsUp = nats.isConnected
                    _ = notifier.notify("STATUS=\(status(s))")
                }
                logOnce("publish", "cannot publish change set \(token): \(error); retrying")
                backoff.wait()
            }
        }
    }

    /// Tells consumers that the change sets after `from` up to `to` will not come: refetch.
    func resync(_ nats: NATSClient, from: Int64?, to current: Int64, reason: String) throws {
        var body: JSONObject = [:]
        body["name"] = .string(options.name)
        body["reason"] = .string(reason)
        body["lastToken"] = from.map { .int($0) } ?? .null
        body["currentToken"] = .int(current)
        let payload = Array(JSONValue.object(body).jsonString.utf8)
        let headers = [("Nats-Msg-Id", "\(options.name):resync:\(current)"), ("Photod-Token", String(current))]
        logger.warning("publishing a resync event (\(reason)): change sets after \(from.map(String.init) ?? "the start") "
                       + "up to \(current) are not in the stream; consumers refetch")
        state.withLock { $0.inHand = true }
        defer { state.withLock { $0.inHand = false } }
        var backoff = Backoff(stop: stopFlag)
        while true {
            if stopFlag.isStopped { throw Stopped() }
            state.withLock { $0.lastAttempt = Monotonic.nanoseconds }
            do {
                try nats.publish(subject: options.resyncSubject, payload: payload, headers: headers)
                state.withLock { s in
                    s.lastToken = current
                    s.subscribedAt = current
                    s.resyncs += 1
                }
                return
            } catch where error.isStreamMissing {
                throw error
            } catch {
                logOnce("publish", "cannot publish the resync event: \(error); retrying")
                backoff.wait()
            }
        }
    }

    /// The change set's commit `time` (`"2026-11-29T16:06:52.020Z"`, quoted) in seconds since 1970.
    static func commitTime(_ raw: ArraySlice<UInt8>) -> Double? {
        guard raw.count >= 2, raw.first == UInt8(ascii: "\""), raw.last == UInt8(ascii: "\""),
              let t = Timestamp.iso8601(Array(raw.dropFirst().dropLast())), let seconds = t.unixSeconds else { return nil }
        return Double(seconds) + Double(t.local.millisecond ?? 0) / 1000
    }

    /// The answer to `photod.<name>.bridge.status`: where publishing stands, how far behind
    /// photod it is (photod asked now), and what the rpc subject served.
    func statusObject(_ client: NATSClient?, _ pool: PhotodPool) -> JSONObject {
        let s = state.withLock { $0 }
        let now = Date().timeIntervalSince1970
        // photod's newest token, and the commit time of the oldest change set not yet published.
        var photodToken: Int64?
        var oldestUnpublished: Double?
        // Short waits: the status must answer while photod is slow (that is when it is asked).
        if let answer = try? pool.call(Array(#"{"jsonrpc":"2.0","id":1,"method":"changes.currentToken"}"#.utf8), timeout: .milliseconds(500)),
           let token = (try? JSONValue.parse(answer))?["result"]?["token"]?.int64Value {
            photodToken = token
            let after = s.lastToken ?? s.subscribedAt ?? token
            if token > after,
               let since = try? pool.call(Array(#"{"jsonrpc":"2.0","id":2,"method":"changes.since","params":{"since":\#(after),"limit":1}}"#.utf8),
                                          timeout: .milliseconds(500)),
               let time = (try? JSONValue.parse(since))?["result"]?["changes"]?[0]?["time"]?.stringValue {
                oldestUnpublished = Self.commitTime(Array("\"\(time)\"".utf8)[...])
            }
        }
        var body: JSONObject = [:]
        body["name"] = .string(options.name)
        body["version"] = .string(BridgeOptions.version)
        body["stream"] = .string(options.stream)
        body["subject"] = options.rpcOnly ? .null : .string(options.changesSubject)
        // The rpc connection answers this; the publishing one must be up too (unless there is none).
        let connected = (client?.isConnected ?? false) && (options.rpcOnly || s.natsUp)
        let errors = rpc.natsErrors
        body["nats"] = .object(["connected": .bool(connected), "servers": .string(options.servers),
                                "maxPayload": client.map { .int(Int64($0.maxPayload)) } ?? .null,
                                "errors": .int(Int64(errors?.count ?? 0)),
                                "lastError": errors.flatMap { $0.count > 0 ? .string($0.last) : nil } ?? .null])
        body["photod"] = .object(["connected": .bool(photodToken != nil), "token": photodToken.map { .int($0) } ?? .null])
        body["lastPublishedToken"] = s.lastToken.map { .int($0) } ?? .null
        body["published"] = .int(Int64(s.published))
        body["resyncs"] = .int(Int64(s.resyncs))
        let behind = photodToken.map { max(0, $0 - (s.lastToken ?? s.subscribedAt ?? $0)) }
        body["lag"] = .object([
            "changeSets": behind.map { .int($0) } ?? .null,
            "milliseconds": behind == nil ? .null : .int(Int64(oldestUnpublished.map { max(0, (now - $0) * 1000) } ?? 0)),
        ])
        body["lastPublishedAt"] = s.lastPublishedAt.map { .string(Self.timestamp($0)) } ?? .null
        body["lastLatencyMilliseconds"] = s.lastLatencyMilliseconds.map { .double(($0 * 10).rounded() / 10) } ?? .null
        let served = rpc.served
        body["rpc"] = .object(["subject": .string(options.rpcSubject), "allowWrites": .bool(options.allowWrites),
                               "workers": .int(Int64(options.rpcWorkers)), "served": .int(Int64(served.served)),
                               "images": .int(Int64(served.images)), "refused": .int(Int64(served.refused)),
                               "failed": .int(Int64(served.failed))])
        body["startedAt"] = .string(Self.timestamp(startedAt))
        return body
    }

    /// `2026-12-02T13:48:38.843Z`, as photod writes its times.
    static func timestamp(_ seconds: Double) -> String {
        let ms = Int64((seconds * 1000).rounded(.down))
        let whole = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        guard let t = LocalDateTime(unixSeconds: whole, offsetSeconds: 0, millisecond: Int(ms - whole * 1000)) else { return "" }
        return t.description + "Z"
    }

    func status(_ s: Progress) -> String {
        let token = s.lastToken.map { "token \($0)" } ?? "no change set yet"
        return "Publishing \(options.changesSubject) to \(options.stream): \(token), \(s.published) published"
            + (s.resyncs > 0 ? ", \(s.resyncs) resync event\(s.resyncs == 1 ? "" : "s")" : "")
            + (s.natsUp ? "" : "; NATS unreachable, waiting") + (s.photodUp ? "" : "; photod unreachable, waiting")
    }

    /// Whether the publisher is alive: nothing is in hand, or the change set in hand is being
    /// tried (published, or retried through an outage: an attempt began within the longest
    /// backoff and publish timeout). A publish that hangs is not.
    var isAlive: Bool {
        let stalled: UInt64 = 10_000_000_000  // 5 s of backoff, 2 s of publish timeout, and room
        return state.withLock { s in !s.inHand || Monotonic.nanoseconds - s.lastAttempt < stalled }
    }

    // One warning per outage, not one per retry.
    private let warned = Locked<Set<String>>([])

    func logOnce(_ key: String, _ message: String) {
        if warned.withLock({ $0.insert(key).inserted }) { logger.warning(message) }
    }

    func forget(_ key: String) {
        if warned.withLock({ $0.remove(key) }) != nil { logger.notice("\(key == "nats" ? "NATS" : key) is back") }
    }
}

/// Watchdog pings every half interval while the publisher is alive (`Bridge.isAlive`): a
/// publish that hangs stops them, and the service manager restarts the bridge.
final class BridgeWatchdog: Service {
    let bridge: Bridge
    private let stopFlag = StopFlag()
    private let finished = DispatchSemaphore(value: 0)
    private let running = Locked(false)

    init(bridge: Bridge) { self.bridge = bridge }

    func start() {
        guard let interval = bridge.notifier.watchdogInterval else { return }
        running.withLock { $0 = true }
        spawnThread("photod-nats-dog") { [self] in
            while !stopFlag.sleep(interval / 2) {
                if bridge.isAlive { _ = bridge.notifier.notify("WATCHDOG=1") }
            }
            finished.signal()
        }
    }

    func stop() {
        stopFlag.stop()
        if running.withLock({ $0 }) { finished.wait() }
    }
}

/// Waits between retries: 100 ms, doubling, at most 5 s; at once when the bridge stops.
struct Backoff {
    let stop: StopFlag
    private var next: Duration = .milliseconds(100)

    init(stop: StopFlag) { self.stop = stop }

    mutating func wait() {
        stop.sleep(next)
        next = min(next * 2, .seconds(5))
    }
}
