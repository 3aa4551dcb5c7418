import PhotoPipeline
import Testing

@Suite("A scan's rate and time left")
struct ScanProgressTests {
    static let second: UInt64 = 1_000_000_000

    @Test("No rate in the first second; then committed files over the time since the start")
    func start() {
        var p = ScanProgress(startedNanoseconds: 100 * Self.second)
        p.toRead = 10_000
        #expect(p.filesPerSecond(at: 100 * Self.second + Self.second / 2) == nil)
        p.noteCommitted(500, at: 100 * Self.second + Self.second / 2)
        #expect(p.filesPerSecond(at: 100 * Self.second + Self.second / 2) == nil)
        p.noteCommitted(1_500, at: 102 * Self.second)
        #expect(p.filesPerSecond(at: 102 * Self.second) == 1_000)
        #expect(p.secondsLeft(at: 102 * Self.second) == 8)
        #expect(p.elapsedSeconds(at: 102 * Self.second) == 2)
    }

    @Test("The rate follows the recent pace: after a fast minute and a slow 20 s, the slow one")
    func window() {
        var p = ScanProgress(startedNanoseconds: 0)
        p.toRead = 1_000_000
        // 60 s at 10,000 files/s, then 20 s at 1,000 files/s, committed every 200 ms.
        var t: UInt64 = 0
        for _ in 0..<300 {
            t += Self.second / 5
            p.noteCommitted(2_000, at: t)
        }
        #expect(p.filesPerSecond(at: t).map { abs($0 - 10_000) < 1 } == true)
        for _ in 0..<100 {
            t += Self.second / 5
            p.noteCommitted(200, at: t)
        }
        let rate = try! #require(p.filesPerSecond(at: t))
        #expect(rate > 900 && rate < 1_300, "\(rate)")
        #expect(p.committed == 620_000)
        let left = try! #require(p.secondsLeft(at: t))
        #expect(abs(left - 380_000 / rate) < 0.001)
    }

    @Test("Nothing committed for 5 s: a rate of 0 and no time left to tell; the samples stay few")
    func stalled() {
        var p = ScanProgress(startedNanoseconds: 0)
        p.toRead = 10
        #expect(p.filesPerSecond(at: 3 * Self.second) == nil)
        #expect(p.filesPerSecond(at: 6 * Self.second) == 0)
        #expect(p.secondsLeft(at: 6 * Self.second) == nil)
        // A long scan with a commit every 10 ms keeps about a window's worth of samples, not all.
        var t: UInt64 = 0
        for _ in 0..<100_000 {
            t += Self.second / 100
            p.noteCommitted(1, at: t)
        }
        #expect(p.filesPerSecond(at: t).map { abs($0 - 100) < 2 } == true)
    }
}
