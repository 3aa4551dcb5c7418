import Foundation
import PhotoSystem
import Testing

/// Thread priorities of a scan's readers and pre-caching: relative to what the
/// thread inherited, never raised.
@Suite struct ThreadPriorityTests {
    /// Runs `body` on a new thread and returns what it returns.
    func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0! }
    }

    @Test("by: steps below the inherited nice value (10 → 15), at most 19")
    func relative() throws {
        let (start, lowered, capped) = onThread { () -> (Int32?, Int32?, Int32?) in
            lowerThreadPriority(nice: 10)  // a process started at nice 10
            let start = threadNiceValue()
            lowerThreadPriority(by: 5)
            let lowered = threadNiceValue()
            lowerThreadPriority(by: 50)
            return (start, lowered, threadNiceValue())
        }
        // 10 unless the tests themselves run nicer than that.
        let base = try #require(start)
        #expect(base >= 10)
        #expect(lowered == min(base + 5, 19))
        #expect(capped == 19)
    }

    @Test("nice: lowers to the value, never raises (a thread already nicer stays so)")
    func absolute() throws {
        let (first, second) = onThread { () -> (Int32?, Int32?) in
            lowerThreadPriority(nice: 12)
            let first = threadNiceValue()
            lowerThreadPriority(nice: 5)  // would raise it: refused even as root
            return (first, threadNiceValue())
        }
        let base = try #require(first)
        #expect(base >= 12)
        #expect(second == base)
    }
}
