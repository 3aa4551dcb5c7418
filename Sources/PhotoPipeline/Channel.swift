import Dispatch
import PhotoSystem

/// A bounded, blocking, multi-producer multi-consumer queue for the pipeline's threads.
/// `send` blocks while the channel is full (backpressure keeps memory flat); `receive`
/// blocks while it is empty and returns `nil` once the channel is closed and drained.
/// Never used from the cooperative thread pool.
final class Channel<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var closed = false
    }

    private let state = Locked(State())
    private let filled: DispatchSemaphore
    private let space: DispatchSemaphore

    init(capacity: Int) {
        filled = DispatchSemaphore(value: 0)
        space = DispatchSemaphore(value: capacity)
    }

    /// Enqueues, waiting for room. Sending on a closed channel drops the element and returns false.
    @discardableResult
    func send(_ element: Element) -> Bool {
        space.wait()
        let accepted = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.items.append(element)
            return true
        }
        if accepted { filled.signal() } else { space.signal() }
        return accepted
    }

    /// Dequeues, waiting for an element; `nil` when closed and empty.
    func receive() -> Element? {
        filled.wait()
        let element = state.withLock { s -> Element? in
            guard s.head < s.items.count else { return nil }
            let e = s.items[s.head]
            s.head += 1
            if s.head > 64, s.head * 2 > s.items.count {
                s.items.removeFirst(s.head)
                s.head = 0
            }
            return e
        }
        if element != nil { space.signal() } else { filled.signal() }  // keep waking other receivers at close
        return element
    }

    /// Closes the channel: receivers drain what is queued, then get `nil`.
    func close() {
        state.withLock { $0.closed = true }
        filled.signal()
    }
}
