import CNATS
#if canImport(Glibc)
import Glibc
#endif

/// A NATS or JetStream call that failed, with nats.c's reason.
public struct NATSError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// JetStream's error code (10059 stream not found, 10071 wrong last sequence), or 0.
    public var jetStreamCode = 0
    /// nats.c's status (`natsStatus`), or 0.
    public var status = 0

    /// The stream is gone, or nobody answers for its subjects: make it again.
    public var isStreamMissing: Bool { jetStreamCode == 10059 || status == Int(pn_status_no_responders()) }
    /// The subject's last message is not the one the publish expected.
    public var isWrongLastSequence: Bool { jetStreamCode == 10071 }

    init(description: String) {
        self.description = description
        jetStreamCode = Int(pn_last_js_error())
        status = Int(pn_last_status())
    }
}

/// One connection to NATS with its JetStream context (nats.c, through `CNATS`). nats.c's
/// connections are safe to use from several threads, and it reconnects by itself after a loss
/// (forever, every `reconnectWait`); calls made meanwhile fail and are retried by the caller.
public final class NATSClient: @unchecked Sendable {
    private let handle: OpaquePointer

    /// Connects to `urls` (comma-separated); fails when no server answers now.
    public init(urls: String, name: String, credentials: String? = nil, caFile: String? = nil,
                reconnectWait: Duration = .milliseconds(250), timeout: Duration = .seconds(2)) throws(NATSError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let h = pn_connect(urls, name, credentials, caFile, Self.milliseconds(reconnectWait), Self.milliseconds(timeout),
                                 &error, error.count) else {
            throw NATSError(description: Self.text(error))
        }
        handle = h
    }

    deinit { pn_close(handle) }

    /// Whether the connection is up now (false while nats.c reconnects).
    public var isConnected: Bool { pn_connected(handle) }

    /// The server's `max_payload`: the largest message it takes.
    public var maxPayload: Int { Int(pn_max_payload(handle)) }

    /// Makes sure the stream exists; true when it was created here.
    public func ensureStream(_ name: String, subjects: [String], duplicateWindow: Duration, replicas: Int,
                             maxAge: Duration?) throws(NATSError) -> Bool {
        var error = [CChar](repeating: 0, count: 512)
        let rc = pn_ensure_stream(handle, name, subjects.joined(separator: ","), Self.milliseconds(duplicateWindow),
                                  Int64(replicas), maxAge.map(Self.milliseconds) ?? 0, &error, error.count)
        guard rc >= 0 else { throw NATSError(description: Self.text(error)) }
        return rc == 1
    }

    /// The last message on `subject` in `stream`: its `header`'s value and its sequence, or nil
    /// when the subject has none.
    public func lastMessage(stream: String, subject: String, header: String) throws(NATSError) -> (value: String, sequence: UInt64)? {
        var error = [CChar](repeating: 0, count: 512)
        var value = [CChar](repeating: 0, count: 256)
        var sequence: UInt64 = 0
        let rc = pn_last_header(handle, stream, subject, header, &value, value.count, &sequence, &error, error.count)
        guard rc >= 0 else { throw NATSError(description: Self.text(error)) }
        return rc == 1 ? (Self.text(value), sequence) : nil
    }

    /// Publishes to JetStream and waits for the stream's acknowledgment. With
    /// `expectingLastSubjectSequence`, the stream stores it only after that message of the subject.
    @discardableResult
    public func publish(subject: String, payload: [UInt8], headers: [(String, String)], expectingLastSubjectSequence: UInt64? = nil,
                        timeout: Duration = .seconds(2)) throws(NATSError) -> (sequence: UInt64, duplicate: Bool) {
        var error = [CChar](repeating: 0, count: 512)
        var sequence: UInt64 = 0
        var duplicate = false
        let names = headers.map { strdup($0.0) }, values = headers.map { strdup($0.1) }
        defer { (names + values).forEach { free($0) } }
        var namePointers = names.map { UnsafePointer<CChar>($0) }, valuePointers = values.map { UnsafePointer<CChar>($0) }
        let rc = payload.withUnsafeBytes { bytes in
            pn_publish(handle, subject, bytes.baseAddress, Int32(bytes.count), &namePointers, &valuePointers, Int32(headers.count),
                       Self.milliseconds(timeout), expectingLastSubjectSequence ?? 0, &sequence, &duplicate, &error, error.count)
        }
        guard rc == 0 else { throw NATSError(description: Self.text(error)) }
        return (sequence, duplicate)
    }

    /// A message of `stream` by its sequence, with one header's value; nil when there is none.
    public func message(stream: String, sequence: UInt64, header: String) throws(NATSError)
        -> (subject: String, payload: [UInt8], header: String)? {
        var error = [CChar](repeating: 0, count: 512)
        var value = [CChar](repeating: 0, count: 256)
        var subject: UnsafeMutablePointer<CChar>?
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        let rc = pn_get(handle, stream, sequence, &subject, &data, &length, header, &value, value.count, &error, error.count)
        guard rc >= 0 else { throw NATSError(description: Self.text(error)) }
        guard rc == 1, let subject, let data else { return nil }
        defer { free(subject); free(data) }
        let payload = UnsafeRawBufferPointer(start: data, count: Int(length))
        return (String(cString: subject), Array(payload), Self.text(value))
    }

    /// The stream's last sequence (0 when it is empty), or nil when there is no such stream.
    public func lastSequence(stream: String) throws(NATSError) -> UInt64? {
        var error = [CChar](repeating: 0, count: 512)
        let n = pn_last_seq(handle, stream, &error, error.count)
        if n == -2 { return nil }
        guard n >= 0 else { throw NATSError(description: Self.text(error)) }
        return UInt64(n)
    }

    /// Subscribes to `subject`, for `NATSSubscription.next`; at most `maxPending` messages and
    /// `maxPendingBytes` wait unread (beyond, nats.c drops them: their requesters time out).
    public func subscribe(_ subject: String, queue: String? = nil, maxPending: Int = 1_000,
                          maxPendingBytes: Int = 64 << 20) throws(NATSError) -> NATSSubscription {
        var error = [CChar](repeating: 0, count: 512)
        guard let sub = pn_subscribe(handle, subject, queue, Int32(maxPending), Int32(maxPendingBytes), &error, error.count) else {
            throw NATSError(description: Self.text(error))
        }
        return NATSSubscription(sub, owner: self)
    }

    /// Publishes a core NATS message (a reply to a request): not stored, not acknowledged.
    public func send(subject: String, reply: String? = nil, payload: [UInt8], headers: [(String, String)] = []) throws(NATSError) {
        var error = [CChar](repeating: 0, count: 512)
        let names = headers.map { strdup($0.0) }, values = headers.map { strdup($0.1) }
        defer { (names + values).forEach { free($0) } }
        var namePointers = names.map { UnsafePointer<CChar>($0) }, valuePointers = values.map { UnsafePointer<CChar>($0) }
        let rc = payload.withUnsafeBytes { bytes in
            pn_send(handle, subject, reply, bytes.baseAddress, Int32(bytes.count), &namePointers, &valuePointers, Int32(headers.count),
                    &error, error.count)
        }
        guard rc == 0 else { throw NATSError(description: Self.text(error)) }
    }

    /// Sends a request and waits for its reply.
    public func request(subject: String, payload: [UInt8], timeout: Duration = .seconds(5)) throws(NATSError) -> NATSMessage {
        var error = [CChar](repeating: 0, count: 512)
        var reply: OpaquePointer?
        let rc = payload.withUnsafeBytes { bytes in
            pn_request(handle, subject, bytes.baseAddress, Int32(bytes.count), Self.milliseconds(timeout), &reply, &error, error.count)
        }
        guard rc == 0, let reply else { throw NATSError(description: Self.text(error)) }
        return NATSMessage(reply)
    }

    /// The asynchronous errors the server reported (a permissions violation): how many, the last.
    public var asyncErrors: (count: Int, last: String) {
        var text = [CChar](repeating: 0, count: 256)
        let n = pn_async_errors(handle, &text, text.count)
        return (Int(n), Self.text(text))
    }

    /// Waits until what is buffered has reached the server.
    public func flush(timeout: Duration = .seconds(2)) -> Bool { pn_flush(handle, Self.milliseconds(timeout)) == 0 }

    static func milliseconds(_ d: Duration) -> Int64 { Int64(d / .milliseconds(1)) }

    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A subscription read by `next` (nats.c's synchronous subscription). Keeps its connection.
public final class NATSSubscription: @unchecked Sendable {
    private let handle: OpaquePointer
    private let owner: NATSClient

    init(_ handle: OpaquePointer, owner: NATSClient) {
        self.handle = handle
        self.owner = owner
    }

    deinit { pn_unsubscribe(handle) }

    /// The next message, or nil after `timeout` without one.
    public func next(timeout: Duration) throws(NATSError) -> NATSMessage? {
        var error = [CChar](repeating: 0, count: 512)
        var message: OpaquePointer?
        let rc = pn_next(handle, NATSClient.milliseconds(timeout), &message, &error, error.count)
        guard rc >= 0 else { throw NATSError(description: NATSClient.text(error)) }
        return rc == 1 ? message.map(NATSMessage.init) : nil
    }
}

/// A message received, or a reply: subject, reply subject, payload and headers.
public final class NATSMessage: @unchecked Sendable {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { pn_msg_free(handle) }

    public var subject: String { String(cString: pn_msg_subject(handle)) }
    /// Where the answer goes; nil for a message that is not a request.
    public var reply: String? { pn_msg_reply(handle).map { String(cString: $0) } }

    public var payload: [UInt8] {
        var length: Int32 = 0
        guard let data = pn_msg_data(handle, &length), length > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }

    public func header(_ name: String) -> String? { pn_msg_header(handle, name).map { String(cString: $0) } }
}
