import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Who started a thread: a running daemon owns the threads its services start, and the threads
/// those start in turn (a scan's readers, a probe), so that whoever stops it can check that
/// every one of them has ended. A thread started with `spawnThread` belongs to the owner of the
/// thread that started it; a thread nobody owns belongs to `ThreadOwner.process`.
public final class ThreadOwner: Sendable {
    private let running = Locked<[String: Int]>([:])
    private let group = DispatchGroup()

    public init() {}

    /// The owner of threads started where no other owner is in force.
    public static let process = ThreadOwner()

    /// The owner of the calling thread.
    public static var current: ThreadOwner {
        guard let raw = pthread_getspecific(ownerKey) else { return .process }
        return Unmanaged<ThreadOwner>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Runs `body` with the calling thread owned by this owner: threads it starts are this owner's.
    public func adopt<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let previous = pthread_getspecific(ownerKey)
        pthread_setspecific(ownerKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(ownerKey, previous) }
        return try body()
    }

    /// The names of this owner's threads that have not ended, sorted.
    public var runningThreads: [String] {
        running.withLock { r in r.flatMap { Array(repeating: $0.key, count: $0.value) } }.sorted()
    }

    /// Waits until every thread of this owner has ended, at most `timeout`; returns the names
    /// of those still running (empty: all ended).
    public func waitUntilEnded(timeout: Duration) -> [String] {
        let (seconds, attoseconds) = timeout.components
        _ = group.wait(timeout: .now() + .nanoseconds(Int(min(seconds, 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        return runningThreads
    }

    fileprivate func began(_ name: String) {
        group.enter()
        running.withLock { $0[name, default: 0] += 1 }
    }

    fileprivate func ended(_ name: String) {
        running.withLock { r in
            r[name, default: 1] -= 1
            if r[name] == 0 { r[name] = nil }
        }
        group.leave()
    }
}

/// The thread-specific slot that names a thread's owner (an unretained reference: the thread's
/// own closure, or `adopt`'s caller, keeps the owner alive while it is set).
private let ownerKey: pthread_key_t = {
    var key = pthread_key_t()
    let error = pthread_key_create(&key, nil)
    precondition(error == 0, "pthread_key_create failed: \(error)")
    return key
}()

/// Starts a thread named `name` (as `top` and the journal show it; 15 bytes at most are kept),
/// owned by the calling thread's owner, running `body`. photod's one way of starting a thread.
public func spawnThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
    let owner = ThreadOwner.current
    owner.began(name)
    let start = ThreadStart {
        setThreadName(name)
        owner.adopt { body() }
        owner.ended(name)
    }
    var thread = pthread_t()
    let error = pthread_create(&thread, nil, { argument in
        Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
    }, Unmanaged.passRetained(start).toOpaque())
    precondition(error == 0, "pthread_create failed: \(error)")
    pthread_detach(thread)
}

/// A thread's body, handed through `pthread_create`'s argument.
private final class ThreadStart {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
