import PhotoClient
@testable import PhotoDaemon
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing

/// A daemon at rest gives back what SQLite's caches and malloc hold: once quiet for a while, or
/// every so often when a monitor keeps asking; never while the pipeline works, never twice for
/// nothing.
@Suite("Rest")
struct RestTests {
    let policy = RestPolicy(quiet: .seconds(10), period: .seconds(60))
    let t0 = ContinuousClock.now

    /// Runs `steps` of (seconds after t0, activity, busy) and returns the seconds at which it rested.
    func rests(_ steps: [(Int, Int, Bool)]) -> [Int] {
        var state = RestPolicy.State()
        return steps.compactMap { second, activity, busy in
            policy.observe(&state, activity: activity, busy: busy, at: t0 + .seconds(second)) ? second : nil
        }
    }

    @Test("Quiet for `quiet` after activity: one rest, and none again until something happens")
    func quiet() {
        #expect(rests([(0, 1, false), (5, 1, false), (10, 1, false), (15, 1, false), (100, 1, false)]) == [10])
        #expect(rests([(0, 1, false), (5, 2, false), (10, 2, false), (15, 2, false), (20, 3, false), (30, 3, false)]) == [15, 30])
    }

    @Test("Never while the pipeline has work, however long; quiet counts from its end")
    func busy() {
        #expect(rests([(0, 1, true), (30, 1, true), (90, 1, true), (95, 1, false), (105, 1, false)]) == [105])
    }

    @Test("A monitor asking every few seconds does not keep the caches full: a rest every `period`")
    func polled() {
        let steps = (0...30).map { (5 * $0, $0, false) }  // a request between every two observations
        #expect(rests(steps) == [60, 120])
    }

    @Test("In-process: the daemon rests once quiet, says so in library.status, and answers the same after")
    func daemonRests() throws {
        let (lib, state) = try (TemporaryDirectory("rest-lib"), TemporaryDirectory("rest-state"))
        defer {
            lib.remove()
            state.remove()
        }
        for i in 0..<20 { try lib.write("2024/\(i).jpg", JPEGFixture.make(width: 64 + i, height: 48)) }
        let daemon = try InProcessDaemonTests.start(library: lib, state: state,
                                                    environment: ["PHOTOD_TEST_HOOKS": "1", "PHOTOD_TEST_REST_AFTER_MS": "200"])
        defer { daemon.stop() }
        let client = try PhotoConnection(socket: state("photod.sock"), timeout: .seconds(60) * TestTime.scale)
        defer { client.close() }
        let fetch: JSONObject = ["predicate": .string("pixelWidth >= 70"), "sort": .string("-pixelWidth"), "limit": .int(5)]
        let before = try eventually("the library to be indexed") { try client.call("assets.fetch", fetch) }
            until: { $0["total"] == .int(14) }
        let status = try eventually("the daemon to rest") { try client.call("library.status") }
            until: { ($0["memory"]?["rests"]?.intValue ?? 0) >= 1 }
        #expect((status["memory"]?["residentBytes"]?.intValue ?? 0) > 1 << 20)
        #expect(try client.call("assets.fetch", fetch) == before, "the same answer from emptied caches")
    }
}
