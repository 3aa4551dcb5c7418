import Dispatch
import PhotoModel
import PhotoWire
import Synchronization

/// Which change sets a subscription receives.
public struct ChangeFilter: Sendable, Hashable {
    /// Only the change sets that name this collection (members coming, going or changing).
    public var collectionID: String?
    /// Only the inserted and updated assets of this type (and every deleted id).
    public var mediaType: PhotoAsset.MediaType?

    /// Every change set.
    public static let all = ChangeFilter()

    /// The change sets that touch one collection.
    public static func collection(_ id: String) -> ChangeFilter { ChangeFilter(collectionID: id) }

    /// The changes to assets of one type.
    public static func mediaType(_ type: PhotoAsset.MediaType) -> ChangeFilter { ChangeFilter(mediaType: type) }

    /// The `changes.subscribe` / `changes.since` parameters.
    var params: JSONObject {
        var p = JSONObject()
        if let collectionID { p["collection"] = .string(collectionID) }
        if let mediaType { p["mediaType"] = .string(mediaType.rawValue) }
        return p
    }
}

/// What a change stream delivers.
public enum ChangeEvent: Sendable, Hashable {
    /// One commit's changes, in token order, each once.
    case changes(ChangeSet)
    /// The stream's token is older than the daemon's journal keeps (or the index was
    /// rebuilt): changes were lost, so refetch everything. The stream goes on from
    /// `currentToken`.
    case expired(currentToken: Int64)
    /// The connection to the daemon broke (or never came up); the stream is retrying. No
    /// change set is lost: it resumes from the last token it delivered.
    case reconnecting(reason: String)
    /// The stream is subscribed again; the daemon's newest token is `currentToken`.
    case reconnected(currentToken: Int64)
}

/// How a change stream retries a daemon that went away: after `initialDelay`, doubling up to
/// `maxDelay`, for as long as the stream is consumed.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The wait before the first retry.
    public var initialDelay: Duration
    /// The longest wait between retries.
    public var maxDelay: Duration

    /// A policy with these waits (50 ms doubling to 2 s by default).
    public init(initialDelay: Duration = .milliseconds(50), maxDelay: Duration = .seconds(2)) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
    }
}

/// The change sets from a token on, then as they are committed, with reconnection: an
/// asynchronous sequence of ``ChangeEvent``s.
///
/// Each iteration is one subscription, on its own connection, read by its own thread (the
/// connection is blocking). When the daemon goes away — a restart, a crash, a removed socket
/// — the stream reports `.reconnecting`, retries with backoff (``ReconnectPolicy``) and
/// subscribes again `since` the last token it delivered, then reports `.reconnected`: no change
/// set is missed or repeated across the daemon's restart. A token the daemon no longer knows
/// is reported as `.expired` and the stream goes on from the daemon's current token.
///
/// Ending the iteration (breaking out of the loop, or cancelling the consuming task) stops
/// the thread and closes the socket within ``pollInterval``. The sequence throws only what
/// retrying cannot fix: a refused subscription (bad filter), a malformed notification.
public struct ChangeStream: AsyncSequence, Sendable {
    /// Each element is one event.
    public typealias Element = ChangeEvent
    /// What ends the stream with an error.
    public typealias Failure = ClientError

    /// Events read ahead of a slow consumer. Beyond this the reader stops reading: the daemon
    /// then paces a catching-up subscription, or drops a live one that it cannot send to, which
    /// the stream then resumes from its token.
    public static let bufferLimit = 256
    /// How often the reader looks whether the stream was ended while it waits for the daemon.
    public static let pollInterval: Duration = .milliseconds(200)
    /// How long connecting and subscribing may take before the stream retries.
    public static let subscribeTimeout: Duration = .seconds(30)

    /// The sockets tried in order.
    public let sockets: [PathBytes]
    /// The token the stream starts after; nil starts from now.
    public let since: Int64?
    /// Which change sets it receives.
    public let filter: ChangeFilter
    /// How it retries.
    public let policy: ReconnectPolicy

    /// A stream of `filter`'s change sets after `since`, from the first of `sockets` that answers.
    public init(sockets: [PathBytes], since: Int64?, filter: ChangeFilter = .all, policy: ReconnectPolicy = ReconnectPolicy()) {
        self.sockets = sockets
        self.since = since
        self.filter = filter
        self.policy = policy
    }

    /// Subscribes (on a new thread) and returns the iterator of its events.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncThrowingStream<ChangeEvent, any Error>.makeStream()
        let reader = ChangeReader(stream: self, continuation: continuation)
        continuation.onTermination = { _ in reader.cancel() }
        DispatchQueue(label: "photod.client.changes").async { reader.run() }
        return Iterator(base: stream.makeAsyncIterator(), reader: reader)
    }

    /// Delivers a stream's events in order.
    public struct Iterator: AsyncIteratorProtocol {
        /// What ends the stream with an error.
        public typealias Failure = ClientError

        var base: AsyncThrowingStream<ChangeEvent, any Error>.Iterator
        let reader: ChangeReader

        /// The next event; nil once the stream ended or the consuming task was cancelled.
        public mutating func next() async throws(ClientError) -> ChangeEvent? {
            try await next(isolation: nil)
        }

        /// The next event, on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError) -> ChangeEvent? {
            do {
                let event = try await base.next(isolation: actor)
                if event != nil { reader.consumed() }
                return event
            } catch let error as ClientError {
                throw error
            } catch {
                throw .connection("\(error)")
            }
        }
    }
}

/// The reading side of one change stream: subscribes, reads notifications, reconnects. Runs on
/// its own thread; the consumer's side only cancels it and frees buffer slots.
final class ChangeReader: Sendable {
    private let sockets: [PathBytes]
    private let since: Int64?
    private let filter: ChangeFilter
    private let policy: ReconnectPolicy
    private let continuation: AsyncThrowingStream<ChangeEvent, any Error>.Continuation
    private let cancelled = Atomic(false)
    /// Free places in the consumer's buffer. Made empty and then filled: libdispatch traps when
    /// a semaphore is released holding less than it was made with, as a cancelled stream's may.
    private let slots = DispatchSemaphore(value: 0)
    /// Signalled on cancellation, to cut a backoff wait short.
    private let wake = DispatchSemaphore(value: 0)

    init(stream: ChangeStream, continuation: AsyncThrowingStream<ChangeEvent, any Error>.Continuation) {
        sockets = stream.sockets
        since = stream.since
        filter = stream.filter
        policy = stream.policy
        self.continuation = continuation
        for _ in 0..<ChangeStream.bufferLimit { slots.signal() }
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func cancel() {
        if !cancelled.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
    }

    /// The consumer took an event: one more may be buffered.
    func consumed() { slots.signal() }

    /// Hands `event` to the consumer, waiting while its buffer is full; false once the stream
    /// has ended.
    private func deliver(_ event: ChangeEvent) -> Bool {
        while slots.wait(timeout: .now() + Self.dispatch(ChangeStream.pollInterval)) == .timedOut {
            if isCancelled { return false }
        }
        if isCancelled { return false }
        if case .terminated = continuation.yield(event) { return false }
        return true
    }

    /// Why one subscription ended.
    private enum End {
        /// The stream ended.
        case cancelled
        /// The daemon expired the subscription's token: subscribe again at once from `token`.
        case expired
    }

    /// The thread's body: subscribe, read, and on a broken connection retry with backoff, until
    /// cancelled or a failure retrying cannot fix.
    func run() {
        var token = since
        var delay = policy.initialDelay
        var retrying = false
        while !isCancelled {
            do throws(ClientError) {
                switch try session(&token, retrying: &retrying, delay: &delay) {
                case .cancelled:
                    continuation.finish()
                    return
                case .expired: continue
                }
            } catch {
                switch error {
                case .rpc(let e) where e.errorCode == .tokenExpired:
                    // The journal no longer reaches back to `token` (or was rebuilt).
                    guard let current = e.data?["currentToken"]?.int64Value else {
                        continuation.finish(throwing: ClientError.rpc(e))
                        return
                    }
                    guard deliver(.expired(currentToken: current)) else { return continuation.finish() }
                    token = current
                case .rpc(let e) where e.errorCode != .unavailable && e.errorCode != .overloaded:
                    continuation.finish(throwing: error)
                    return
                case .malformedReply:
                    continuation.finish(throwing: error)
                    return
                case .rpc, .unreachable, .timedOut, .connection:
                    if !retrying {
                        retrying = true
                        guard deliver(.reconnecting(reason: error.description)) else { return continuation.finish() }
                    }
                    _ = wake.wait(timeout: .now() + Self.dispatch(delay))
                    delay = min(delay * 2, policy.maxDelay)
                }
            }
        }
        continuation.finish()
    }

    /// One connection: subscribes from `token`, then delivers notifications until the stream
    /// ends, the daemon expires the subscription, or the connection breaks (thrown).
    private func session(_ token: inout Int64?, retrying: inout Bool, delay: inout Duration) throws(ClientError) -> End {
        let connection = try PhotoConnection.connect(anyOf: sockets, timeout: ChangeStream.subscribeTimeout)
        defer { connection.close() }
        var params = filter.params
        if let token { params["since"] = .int(token) }
        let reply = try connection.call("changes.subscribe", params)
        guard let current = reply["token"]?.int64Value else {
            throw .malformedReply(method: "changes.subscribe",
                                  MalformedReply(path: "token", expected: "an integer", found: reply["token"]?.typeName ?? "nothing"))
        }
        if token == nil { token = current }
        if retrying {
            retrying = false
            guard deliver(.reconnected(currentToken: current)) else { return .cancelled }
        }
        delay = policy.initialDelay
        connection.setTimeout(ChangeStream.pollInterval)
        while !isCancelled {
            let notification: RPCNotification
            do throws(ClientError) {
                notification = try connection.nextNotification()
            } catch {
                if case .timedOut = error { continue }
                throw error
            }
            switch notification.method {
            case "changes":
                let change: ChangeSet
                do throws(MalformedReply) {
                    change = try ChangeSet(json: notification.params ?? .null, path: "params")
                } catch {
                    throw .malformedReply(method: "changes", error)
                }
                // A change set at or before the last one delivered is a repeat: skipped.
                if let last = token, change.token <= last { continue }
                guard deliver(.changes(change)) else { return .cancelled }
                token = change.token
            case "changes.expired":
                // The daemon pruned the journal under this subscription and ended it.
                let current = notification.params?["currentToken"]?.int64Value ?? token ?? 0
                guard deliver(.expired(currentToken: current)) else { return .cancelled }
                token = current
                return .expired
            default:
                continue  // a notification this client does not know
            }
        }
        return .cancelled
    }

    static func dispatch(_ d: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = d.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
