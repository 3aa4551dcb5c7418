#if canImport(Glibc)
import Glibc
#endif

/// A value behind a lock, in a reference, so that it can be shared between threads, captured
/// by closures and stored in structs. Every access goes through `withLock`; the lock is not
/// recursive (taking it again on the same thread is a bug).
///
/// photod's one lock type, instead of `Synchronization.Mutex`: on Linux that `Mutex` is a
/// priority-inheritance futex (`FUTEX_LOCK_PI`), and under contention the kernel hands it from
/// one thread to the next without a user-space atomic that ThreadSanitizer can see, so TSan
/// reports every contended `withLock` as a data race and real races drown among them
/// (swiftlang/swift#88440 describes the handoff). TSan intercepts `pthread_mutex_t`, so the
/// state behind this lock is checked like any other memory, and its deadlock detector sees
/// the lock order. Uncontended it costs the same.
///
/// `@unchecked Sendable` on the same terms as `Mutex`: `value` is only touched with the lock
/// held, and it enters and leaves in its own region (`sending`), so a non-`Sendable` value
/// cannot escape to another thread through it.
public final class Locked<Value>: @unchecked Sendable {
    /// Heap-allocated: a `pthread_mutex_t` must not move once initialised.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Out of line, as `Mutex` keeps it: a stored property of a generic class would not do for
    /// a zero-sized value (`Locked<Void>`, a lock around a resource rather than a value).
    /// TSan's access check puts such a property at the object's own address, which every
    /// generic method reads, unlocked, for the type's metadata: a race report on every call.
    private let value: UnsafeMutablePointer<Value>

    /// A lock around `value`.
    public init(_ value: sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let error = pthread_mutex_init(mutex, nil)
        precondition(error == 0, "pthread_mutex_init failed: \(error)")
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        let error = pthread_mutex_destroy(mutex)
        precondition(error == 0, "pthread_mutex_destroy failed: \(error)")  // destroyed while held: a bug
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the lock held and the value lent to it; what `body` returns or throws
    /// is passed on. The lock is released however `body` leaves.
    public func withLock<R, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> sending R {
        // The only errors pthread_mutex_lock/unlock return for a default mutex are bugs
        // (EINVAL, EDEADLK, EPERM): trap on them, like the syscall helper.
        let error = pthread_mutex_lock(mutex)
        precondition(error == 0, "pthread_mutex_lock failed: \(error)")
        defer {
            let error = pthread_mutex_unlock(mutex)
            precondition(error == 0, "pthread_mutex_unlock failed: \(error)")
        }
        return try body(&value.pointee)
    }
}
