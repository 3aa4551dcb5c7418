import Dispatch
import PhotoModel
import PhotoSystem

/// Runs what looks at a library tree's file system (`statfs`, `statx`, opening its directory,
/// `stat`s inside it) on a thread of its own, with a deadline: a hard-mounted NFS share whose
/// server is down, or a FUSE daemon that hangs, blocks such a call in the kernel for as long as
/// it is down, and the thread that asked must not block with it. A probe that does not answer
/// in time is abandoned (its thread ends when the call returns, if ever); until it does, the
/// tree's further probes answer "not answering" at once, so a tree that hangs costs one thread
/// and one deadline, not one per question.
final class Prober: Sendable {
    /// How long a probe may take before its tree counts as not answering.
    let deadline: Duration
    /// Called (on the probe's thread) when an abandoned probe finally answers: the tree may be
    /// looked at again.
    private let onAnswer: Callback<PathBytes, Void>
    /// The trees with an abandoned probe that has not returned.
    private let hung = Locked<Set<PathBytes>>([])

    init(deadline: Duration = .seconds(2), onAnswer: @escaping @Sendable (PathBytes) -> Void = { _ in }) {
        self.deadline = deadline
        self.onAnswer = Callback(onAnswer)
    }

    /// The trees whose file system has not answered a probe yet.
    var notAnswering: Set<PathBytes> { hung.withLock { $0 } }

    /// The reason a tree that does not answer is given.
    var reason: String {
        "its file system does not answer (nothing within \(deadline); a network share whose server is down, or a FUSE "
            + "file system that hangs?): nothing indexed in it is removed, and it is looked at again when it answers"
    }

    /// Runs `body` for `tree` on a thread of its own and returns what it returns, or nil when it
    /// did not return within the deadline (or a probe of the tree is still hung).
    func run<T: Sendable>(_ tree: PathBytes, _ body: @escaping @Sendable () -> T) -> T? {
        guard !hung.withLock({ $0.contains(tree) }) else { return nil }
        // `waiting`: the caller still waits; the one of the two that comes second decides.
        let outcome = Locked<(value: T?, waiting: Bool)>((nil, true))
        let done = DispatchSemaphore(value: 0)
        spawnThread("photod-probe") { [hung, onAnswer] in
            let value = body()
            let abandoned = outcome.withLock { o -> Bool in
                o.value = value
                return !o.waiting
            }
            if abandoned {
                hung.withLock { _ = $0.remove(tree) }
                onAnswer(tree)
            } else {
                done.signal()
            }
        }
        let (seconds, attoseconds) = deadline.components
        let nanoseconds = Int(min(seconds, 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        if done.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success { return outcome.withLock { $0.value } }
        return outcome.withLock { o -> T? in
            if let value = o.value { return value }  // answered just now
            o.waiting = false
            hung.withLock { _ = $0.insert(tree) }
            return nil
        }
    }
}
