@preconcurrency import Dispatch
import PhotoModel
import PhotoSystem
import PhotoWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a connection (from `SO_PEERCRED`).
struct ClientContext: Sendable {
    var id: Int
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
}

/// Turns request lines into response lines. Called on the client's own serial queue, so a
/// slow request delays only its own client.
protocol LineHandler: Sendable {
    /// The bytes to send back (complete lines, each ending in `\n`), or empty for a notification.
    func handle(line: [UInt8], client: ClientContext) -> [UInt8]
    /// The answer to a line longer than the limit (which was discarded unread).
    func lineTooLong(droppedBytes: Int, client: ClientContext) -> [UInt8]
    /// The answer sent to a client refused because too many are connected.
    func tooManyClients() -> [UInt8]
}

/// The server's named limits.
enum ServerLimits {
    /// Connected clients at most; one more is told `overloaded` and disconnected.
    static let maxClients = 256
    /// Unsent bytes per client at most (well above two full pages of 1,000 assets): a client
    /// that does not read is cut off rather than allowed to grow the daemon's memory.
    static let maxOutboundBytes = 16 << 20
    /// Bytes of responses one batch may produce; later members get `overloaded`.
    static let maxBatchResponseBytes = 4 << 20
    /// Bytes read from a socket per `read` call.
    static let readChunk = 64 << 10
}

/// The Unix-socket server: accepts connections on a listening socket and runs each client on
/// its own serial Dispatch queue, with a bounded input line and a bounded outbound queue.
final class SocketServer: Service {
    let listener: FileDescriptor
    let path: PathBytes?
    let handler: any LineHandler
    let logger: Logger
    private let queue = DispatchQueue(label: "photod.accept")
    private let acceptSource: any DispatchSourceRead
    private let clients = Locked<[Int: ClientConnection]>([:])
    private let nextID = Atomic<Int>(1)
    private let cancelled = Locked<DispatchSemaphore?>(nil)
    /// Whether accepting is paused because the process ran out of descriptors (touched on `queue`).
    private let paused = Locked(false)
    private let disconnectHandler = Locked<Callback<Int, Void>?>(nil)
    /// Whether `stop` hands the listening socket over (leaves it open).
    private let keepListener = Atomic<Bool>(false)
    /// The line every client is sent at `stop` (`prepareStop`).
    private let farewell = Locked<[UInt8]?>(nil)

    /// `path` is unlinked at `stop()` (nil for an inherited, socket-activated listener).
    init(listener: FileDescriptor, path: PathBytes?, handler: any LineHandler, logger: Logger) {
        self.listener = listener
        self.path = path
        self.handler = handler
        self.logger = logger
        acceptSource = DispatchSource.makeReadSource(fileDescriptor: listener.rawValue, queue: queue)
    }

    func start() {
        acceptSource.setEventHandler { [self] in acceptPending() }
        // Dispatch may still watch the descriptor until the source is cancelled: close it only
        // then (unless it is being handed over to a successor).
        let listenerDone = DispatchSemaphore(value: 0)
        acceptSource.setCancelHandler { [self] in
            if !keepListener.load(ordering: .relaxed) { listener.close() }
            listenerDone.signal()
        }
        cancelled.withLock { $0 = listenerDone }
        acceptSource.resume()
    }

    /// Says how `stop()` ends: each client is sent `farewell` (a notification line) first, and
    /// `keepListener` hands the listening socket over to a successor (it stays open).
    func prepareStop(farewell: [UInt8]?, keepListener keep: Bool) {
        self.farewell.withLock { $0 = farewell }
        keepListener.store(keep, ordering: .relaxed)
    }

    /// Stops accepting and disconnects every client, after sending each the farewell
    /// (`prepareStop`) if it can take it. The socket file is removed unless photod did not make
    /// it (no `path`) or the listening socket is handed over.
    func stop() {
        let keep = keepListener.load(ordering: .relaxed)
        let farewell = self.farewell.withLock { $0 }
        acceptSource.cancel()
        queue.sync {}
        cancelled.withLock { $0 }?.wait()
        if !keep, let path { _ = path.withCString { unlink($0) } }
        let all = clients.withLock { c -> [ClientConnection] in
            defer { c.removeAll() }
            return Array(c.values)
        }
        for client in all {
            if let farewell { client.perform { client.enqueue(farewell) } }
            client.close()
        }
        // Let the farewells reach the sockets before the process exits.
        for client in all { client.drain() }
    }

    var clientCount: Int { clients.withLock { $0.count } }

    /// A connected client, by id (nil once it is gone).
    func connection(_ id: Int) -> ClientConnection? { clients.withLock { $0[id] } }

    /// Called with a client's id when it disconnects (subscriptions end with it).
    func onDisconnect(_ handler: @escaping @Sendable (Int) -> Void) {
        disconnectHandler.withLock { $0 = Callback(handler) }
    }

    private func acceptPending() {
        while true {
            let fd: FileDescriptor
            do {
                guard let accepted = try UnixSocket.accept(listener) else { return }
                fd = accepted
            } catch {
                // Out of descriptors (EMFILE, ENFILE) or memory: the pending connection stays
                // queued and the level-triggered source would fire again at once. Pause
                // accepting for a moment instead of spinning, and say so once.
                logger.warning("cannot accept a client, pausing for 250 ms: \(error)")
                let alreadyPaused = paused.withLock { p -> Bool in defer { p = true }; return p }
                if !alreadyPaused {
                    acceptSource.suspend()
                    queue.asyncAfter(deadline: .now() + .milliseconds(250)) { [self] in
                        paused.withLock { $0 = false }
                        acceptSource.resume()
                    }
                }
                return
            }
            let cred = UnixSocket.peerCredentials(fd)
            let context = ClientContext(id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue, pid: cred?.pid ?? 0,
                                        uid: cred?.uid ?? UInt32.max, gid: cred?.gid ?? UInt32.max)
            let full = clients.withLock { $0.count >= ServerLimits.maxClients }
            if full {
                let reply = handler.tooManyClients()
                _ = reply.withUnsafeBytes { try? fd.writeSome($0) }
                fd.close()
                logger.warning("refused a client: \(ServerLimits.maxClients) clients connected", [("client.pid", String(context.pid))])
                continue
            }
            let client = ClientConnection(fd: fd, context: context, handler: handler, logger: logger) { [weak self] id in
                _ = self?.clients.withLock { $0.removeValue(forKey: id) }
                self?.disconnectHandler.withLock { $0 }?(id)
            }
            clients.withLock { $0[context.id] = client }
            logger.debug("client connected", [("client.id", String(context.id)), ("client.pid", String(context.pid)),
                                              ("client.uid", String(context.uid))])
            client.start()
        }
    }
}

/// One connected client: reads lines, answers them in order, writes without blocking.
final class ClientConnection: Sendable {
    let fd: FileDescriptor
    let context: ClientContext
    let handler: any LineHandler
    let logger: Logger
    let onClose: @Sendable (Int) -> Void
    private let queue: DispatchQueue
    private let readSource: any DispatchSourceRead
    private let writeSource: any DispatchSourceWrite
    /// Sources not yet cancelled; the descriptor is closed when both are done with it.
    private let liveSources = Atomic<Int>(2)

    private struct State {
        var framer = LineFramer(maxLineBytes: WireLimits.maxLineBytes)
        var outbound: [UInt8] = []
        var sent = 0
        var writeArmed = false
        var readClosed = false
        var closed = false
    }

    private let state = Locked(State())

    init(fd: FileDescriptor, context: ClientContext, handler: any LineHandler, logger: Logger,
         onClose: @escaping @Sendable (Int) -> Void) {
        self.fd = fd
        self.context = context
        self.handler = handler
        self.logger = logger
        self.onClose = onClose
        queue = DispatchQueue(label: "photod.client.\(context.id)")
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd.rawValue, queue: queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: fd.rawValue, queue: queue)
    }

    func start() {
        readSource.setEventHandler { [self] in readAvailable() }
        writeSource.setEventHandler { [self] in flush() }
        let release: @Sendable () -> Void = { [self] in
            if liveSources.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 { fd.close() }
        }
        readSource.setCancelHandler(handler: release)
        writeSource.setCancelHandler(handler: release)
        readSource.resume()
    }

    /// Runs `work` on the client's serial queue, after what is queued there (responses and
    /// notifications stay in order).
    func perform(after delay: Duration? = nil, _ work: @escaping @Sendable () -> Void) {
        if let delay {
            let (s, a) = delay.components
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(s) * 1_000_000_000 + Int(a / 1_000_000_000)), execute: work)
        } else {
            queue.async(execute: work)
        }
    }

    /// Bytes queued for the client and not yet written.
    var pendingOutboundBytes: Int { state.withLock { $0.outbound.count - $0.sent } }

    /// Whether the connection is closed.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Waits until the connection's queue has run what was queued before.
    func drain() { queue.sync {} }

    /// Closes the connection (idempotent); safe from any thread.
    func close() {
        queue.async { [self] in closeOnQueue() }
    }

    private func closeOnQueue() {
        let wasArmed = state.withLock { s -> Bool? in
            guard !s.closed else { return nil }
            s.closed = true
            s.outbound = []
            return s.writeArmed
        }
        guard let wasArmed else { return }
        // A suspended source must be resumed before it can be cancelled.
        if !wasArmed { writeSource.resume() }
        writeSource.cancel()
        readSource.cancel()
        onClose(context.id)
        logger.debug("client disconnected", [("client.id", String(context.id))])
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: ServerLimits.readChunk)
        while true {
            let n: Int?
            do {
                n = try buffer.withUnsafeMutableBytes { try fd.readSome(into: $0) }
            } catch {
                closeOnQueue()
                return
            }
            guard let n else { break }  // EAGAIN: wait for the next event
            if n == 0 {
                endOfInput()
                return
            }
            let events = state.withLock { $0.framer.append(buffer[0..<n]) }
            guard handle(events) else { return }
            if n < buffer.count { break }
        }
    }

    /// Answers the framed events in order; false once the connection is closed.
    private func handle(_ events: [FramerEvent]) -> Bool {
        for event in events {
            switch event {
            case .line(let line):
                enqueue(handler.handle(line: line, client: context))
            case .tooLong(let dropped):
                enqueue(handler.lineTooLong(droppedBytes: dropped, client: context))
            }
            if state.withLock({ $0.closed }) { return false }
        }
        return true
    }

    /// The client shut down its sending side (`echo ... | socat`): answer what it sent, finish
    /// writing, then close.
    private func endOfInput() {
        let events = state.withLock { s -> [FramerEvent] in
            s.readClosed = true
            return s.framer.finish()
        }
        readSource.cancel()
        guard handle(events) else { return }
        if state.withLock({ $0.sent >= $0.outbound.count }) { closeOnQueue() }
    }

    /// Queues response bytes and writes what the socket takes now. A client whose earlier
    /// responses are still unread beyond the limit is cut off: it never slows the daemon.
    /// Call it on the client's queue (`perform`).
    func enqueue(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let overflow = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            if s.outbound.count - s.sent > ServerLimits.maxOutboundBytes { return true }
            s.outbound.append(contentsOf: bytes)
            return false
        }
        if overflow {
            logger.warning("client \(context.id) does not read its responses; disconnecting it",
                           [("client.pid", String(context.pid))])
            closeOnQueue()
            return
        }
        flush()
    }

    private func flush() {
        enum Next { case done, arm, disarm, close }
        let next = state.withLock { s -> Next in
            guard !s.closed else { return .done }
            while s.sent < s.outbound.count {
                let result = s.outbound.withUnsafeBytes { raw in
                    Result { try fd.writeSome(UnsafeRawBufferPointer(rebasing: raw[s.sent...])) }
                }
                switch result {
                case .success(let n?): s.sent += n
                case .success(nil):
                    if s.writeArmed { return .done }
                    s.writeArmed = true
                    return .arm
                case .failure: return .close
                }
            }
            s.outbound.removeAll(keepingCapacity: s.outbound.count < 1 << 20)
            s.sent = 0
            if s.readClosed { return .close }
            if s.writeArmed {
                s.writeArmed = false
                return .disarm
            }
            return .done
        }
        switch next {
        case .done: break
        case .arm: writeSource.resume()
        case .disarm: writeSource.suspend()
        case .close: closeOnQueue()
        }
    }
}
