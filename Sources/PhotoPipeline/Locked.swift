import Synchronization

/// A `Mutex` in a reference, so that it can be shared between threads and stored in structs.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<R: Sendable, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try mutex.withLock { (v: inout Value) throws(E) -> R in try body(&v) }
    }
}
