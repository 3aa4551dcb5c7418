import PhotoSystem
import PhotoTesting
import Testing

/// PhotoTesting's one wait: what it returns, and what its failure says.
@Suite("eventually: awaiting a condition with a scaled deadline")
struct EventuallyTests {
    @Test("Returns what was seen when the condition held, looking again until it does")
    func returnsWhatHeld() throws {
        let looks = Locked(0)
        let seen = try eventually("the third look") { looks.withLock { $0 += 1; return $0 } } until: { $0 >= 3 }
        #expect(seen == 3)
    }

    @Test("Times out with what was awaited, what was seen last, and where")
    func timeoutSaysWhatWasSeen() throws {
        do {
            try eventually("a value over 10", timeout: .milliseconds(30)) { 7 } until: { $0 > 10 }
            Issue.record("a condition that never holds held")
        } catch let error as WaitTimeout {
            #expect(error.what == "a value over 10" && error.lastSeen == "7", "\(error)")
            #expect(error.location.hasPrefix("PhotoSystemTests/EventuallyTests.swift:"), "\(error)")
            #expect(error.waited == .milliseconds(30) * TestTime.scale)
        }
    }

    @Test("An error thrown while looking ends the wait at once")
    func errorEndsTheWait() throws {
        struct Gone: Error {}
        let started = ContinuousClock.now
        #expect(throws: Gone.self) { try eventually("what cannot come", timeout: .seconds(30)) { () throws -> Bool in throw Gone() } }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("The async variant waits without a thread, and fails the same way")
    func async() async throws {
        let looks = Locked(0)
        try await eventually("the second look") { looks.withLock { $0 += 1; return $0 >= 2 } }
        await #expect(throws: WaitTimeout.self) { try await eventually("never", timeout: .milliseconds(30)) { false } }
    }
}
