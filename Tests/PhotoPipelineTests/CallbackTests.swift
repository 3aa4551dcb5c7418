import PhotoSystem
import Testing

/// Closures kept in locks (the sort queue's commit handler, the watcher's inbox, the change
/// feed's connection lookup, the socket server's disconnect handler) are read on every commit,
/// batch or delivery. Kept bare in a lock, each read wrapped the closure in two more thunks:
/// 5,000 reads took 0.4 s and each further 5,000 took 0.8 s longer, until the stack overflowed.
@Suite("Callbacks in locks")
struct CallbackTests {
    final class Target: Sendable {}

    @Test("A callback read from a Locked 300,000 times is the same closure every time (no growing thunk chain)")
    func noThunkChain() {
        let target = Target()
        let lock = Locked<Callback<Int, Target?>?>(nil)
        lock.withLock { $0 = Callback { _ in target } }
        var found = 0
        for i in 0..<300_000 where lock.withLock({ $0 })?(i) === target { found += 1 }
        #expect(found == 300_000)
    }
}
