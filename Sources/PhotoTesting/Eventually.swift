import Foundation

/// How much longer than on a plain build tests wait for a daemon, a watcher or a client:
/// `PHOTOD_TEST_TIME_SCALE` (`scripts/sanitize` sets it: sanitized code runs several times
/// slower), else 1. Only deadlines scale; no test waits longer when things go well.
public enum TestTime {
    /// The factor every deadline is multiplied by.
    public static let scale = max(1, Int(ProcessInfo.processInfo.environment["PHOTOD_TEST_TIME_SCALE"] ?? "") ?? 1)

    /// The deadline `timeout` from now, scaled.
    public static func deadline(_ timeout: Duration) -> ContinuousClock.Instant { ContinuousClock.now + timeout * scale }
}

/// A wait that ran out: what was awaited, how long (scaled), where, and what was seen last.
public struct WaitTimeout: Error, CustomStringConvertible {
    public let what: String
    public let waited: Duration
    public let lastSeen: String
    public let location: String

    public var description: String {
        "\(location): timed out after \(waited) waiting for \(what); last seen: \(lastSeen)"
    }

    /// What was seen, its first 4,000 characters (a whole library's assets would bury the rest).
    static func shown(_ seen: some Any) -> String {
        let text = "\(seen)"
        return text.count <= 4_000 ? text : text.prefix(4_000) + "… (\(text.count) characters)"
    }
}

/// The pause between two looks: 1 ms, doubling, at most 16 ms. What a test awaits is usually
/// there within milliseconds; a slow one costs a look every 16 ms, a cheap call.
struct PollInterval {
    private(set) var current: Duration = .milliseconds(1)

    mutating func next() -> Duration {
        defer { current = min(current * 2, .milliseconds(16)) }
        return current
    }
}

/// Looks at something with `observe` until `until` holds for what it saw, and returns that.
/// Throws `WaitTimeout` (with `what` and the last thing seen) when `timeout` — scaled by
/// `TestTime` — passes first; an error `observe` or `until` throws ends the wait at once (throw
/// one to stop waiting for what can no longer come: a process that exited).
///
///     let status = try eventually("photod idle") { try c.call("library.status") }
///                     until: { $0["state"]?.stringValue == "idle" }
///
/// In an async function the async variant is chosen (this one is disfavored): a wait there
/// never holds a thread of the cooperative pool.
@discardableResult @_disfavoredOverload
public func eventually<Seen>(_ what: @autoclosure () -> String, timeout: Duration = .seconds(30),
                             fileID: String = #fileID, line: Int = #line,
                             observe: () throws -> Seen, until done: (Seen) throws -> Bool) throws -> Seen {
    let deadline = TestTime.deadline(timeout)
    var interval = PollInterval()
    while true {
        let seen = try observe()
        if try done(seen) { return seen }
        if ContinuousClock.now >= deadline {
            throw WaitTimeout(what: what(), waited: timeout * TestTime.scale, lastSeen: WaitTimeout.shown(seen), location: "\(fileID):\(line)")
        }
        Thread.sleep(forTimeInterval: interval.next().timeInterval)
    }
}

/// Waits until `condition` holds (see `eventually(_:timeout:observe:until:)`). `what` is
/// evaluated only when the wait fails: it may show the state that was not reached.
@_disfavoredOverload
public func eventually(_ what: @autoclosure () -> String, timeout: Duration = .seconds(30),
                       fileID: String = #fileID, line: Int = #line, _ condition: () throws -> Bool) throws {
    try eventually(what(), timeout: timeout, fileID: fileID, line: line, observe: condition, until: { $0 })
}

/// `eventually` for async tests: waits without holding a thread of the cooperative pool.
@discardableResult
public func eventually<Seen>(_ what: @autoclosure () -> String, timeout: Duration = .seconds(30),
                             fileID: String = #fileID, line: Int = #line,
                             observe: () async throws -> Seen, until done: (Seen) throws -> Bool) async throws -> Seen {
    let deadline = TestTime.deadline(timeout)
    var interval = PollInterval()
    while true {
        let seen = try await observe()
        if try done(seen) { return seen }
        if ContinuousClock.now >= deadline {
            throw WaitTimeout(what: what(), waited: timeout * TestTime.scale, lastSeen: WaitTimeout.shown(seen), location: "\(fileID):\(line)")
        }
        try await Task.sleep(for: interval.next())
    }
}

/// Waits until `condition` holds, without holding a thread of the cooperative pool.
public func eventually(_ what: @autoclosure () -> String, timeout: Duration = .seconds(30),
                       fileID: String = #fileID, line: Int = #line, _ condition: () async throws -> Bool) async throws {
    try await eventually(what(), timeout: timeout, fileID: fileID, line: line, observe: condition, until: { $0 })
}

extension Duration {
    /// The duration in seconds, for APIs that take a `TimeInterval`.
    var timeInterval: TimeInterval {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
