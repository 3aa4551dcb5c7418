import Foundation
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing

/// When the live loop has timed work (`LiveSchedule`), with synthetic time; and the loop driven
/// by a clock the test moves (`ManualClock`).
@Suite("The live loop's timing")
struct LiveScheduleTests {
    static let t0 = ContinuousClock.now

    static var options: LiveOptions {
        var o = LiveOptions()
        o.purgeInterval = .seconds(3_600)
        o.pollInterval = .seconds(300)
        o.rootRecheckInterval = .seconds(2)
        o.mountRecheckInterval = .seconds(30)
        return o
    }

    @Test("The purge at once, then hourly; no wake-up in between while nothing is polled, unavailable or unwatched")
    func purgeHourly() {
        var s = LiveSchedule(options: Self.options, start: Self.t0)
        #expect(s.due(at: Self.t0, mountsChanged: false, mountTableWatched: true, hasOffline: false) == .init(purge: true))
        #expect(s.nextWake(at: Self.t0, mountTableWatched: true, hasOffline: false, hasPolledTrees: false)
                == Self.t0.advanced(by: .seconds(3_600)))
        #expect(!s.due(at: Self.t0.advanced(by: .seconds(3_599)), mountsChanged: false, mountTableWatched: true, hasOffline: false).purge)
        #expect(s.due(at: Self.t0.advanced(by: .seconds(3_600)), mountsChanged: false, mountTableWatched: true, hasOffline: false).purge)
    }

    @Test("Polled trees: a poll every interval, the wake-up at the next; with none, the poll is put off a whole interval")
    func polls() {
        var s = LiveSchedule(options: Self.options, start: Self.t0)
        _ = s.due(at: Self.t0, mountsChanged: false, mountTableWatched: true, hasOffline: false)
        #expect(s.nextWake(at: Self.t0, mountTableWatched: true, hasOffline: false, hasPolledTrees: true)
                == Self.t0.advanced(by: .seconds(300)))
        #expect(s.due(at: Self.t0.advanced(by: .seconds(300)), mountsChanged: false, mountTableWatched: true, hasOffline: false)
                == .init(poll: true))
        // Nothing polled for a while: a tree that becomes polled waits a whole interval.
        let later = Self.t0.advanced(by: .seconds(1_000))
        _ = s.nextWake(at: later, mountTableWatched: true, hasOffline: false, hasPolledTrees: false)
        #expect(s.due(at: later.advanced(by: .seconds(299)), mountsChanged: false, mountTableWatched: true, hasOffline: false) == .init())
        #expect(s.due(at: later.advanced(by: .seconds(300)), mountsChanged: false, mountTableWatched: true, hasOffline: false)
                == .init(poll: true))
    }

    @Test("An unavailable tree: rechecked every 2 s; a change of the mount table: every tree at once; unwatched table: every 30 s")
    func rechecks() {
        var s = LiveSchedule(options: Self.options, start: Self.t0)
        _ = s.due(at: Self.t0, mountsChanged: false, mountTableWatched: true, hasOffline: false)
        #expect(s.nextWake(at: Self.t0, mountTableWatched: true, hasOffline: true, hasPolledTrees: false)
                == Self.t0.advanced(by: .seconds(2)))
        #expect(s.due(at: Self.t0.advanced(by: .seconds(2)), mountsChanged: false, mountTableWatched: true, hasOffline: true)
                == .init(recheck: true))
        #expect(s.due(at: Self.t0.advanced(by: .seconds(3)), mountsChanged: true, mountTableWatched: true, hasOffline: false)
                == .init(recheck: true, everyTree: true))
        var u = LiveSchedule(options: Self.options, start: Self.t0)
        _ = u.due(at: Self.t0, mountsChanged: false, mountTableWatched: false, hasOffline: false)
        #expect(u.nextWake(at: Self.t0, mountTableWatched: false, hasOffline: false, hasPolledTrees: false)
                == Self.t0.advanced(by: .seconds(30)))
        #expect(u.due(at: Self.t0.advanced(by: .seconds(30)), mountsChanged: false, mountTableWatched: false, hasOffline: false)
                == .init(recheck: true, everyTree: true))
    }

    @Test("The loop on a clock the test moves: a deleted photo waits in Recently Deleted until the purge's hour has passed")
    func purgeOnTheTestsClock() throws {
        let lib = try TemporaryDirectory("schedule-lib")
        let state = try TemporaryDirectory("schedule-state")
        defer {
            lib.remove()
            state.remove()
        }
        try lib.write("a.jpg", [1])
        try lib.write("b.jpg", [2])
        var options = Self.options
        options.retentionMilliseconds = 0
        let clock = ManualClock()
        let live = try TestLive(try Database(path: state("s.db").string), roots: [lib.path], options: options, clock: clock)
        defer { live.stop() }
        try live.pipeline.awaitCommit("the index") { try $0.counts().assets == 2 }

        try FileManager.default.removeItem(atPath: lib("a.jpg").string)
        try live.pipeline.awaitCommit("the removal") { try $0.counts().recentlyDeleted == 1 }
        clock.advance(by: .seconds(3_600))
        try live.pipeline.awaitCommit("the purge") { try $0.counts().recentlyDeleted == 0 }
        #expect(try live.pipeline.db.read { try $0.counts() }.assets == 1)
    }
}
