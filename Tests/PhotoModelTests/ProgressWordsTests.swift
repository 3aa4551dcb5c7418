import PhotoModel
import Testing

@Suite("Progress in words")
struct ProgressWordsTests {
    @Test("Numbers are grouped by thousands", arguments: [
        (Int64(0), "0"), (999, "999"), (1_000, "1,000"), (48_210, "48,210"), (1_000_000, "1,000,000"), (-12_345, "-12,345"),
    ])
    func grouped(_ n: Int64, _ words: String) {
        #expect(ProgressWords.grouped(n) == words)
    }

    @Test("Durations are rounded to what a person needs", arguments: [
        (0.2, "1 s"), (8.0, "8 s"), (59.4, "1 min"), (61.0, "1 min"), (179.0, "3 min"), (3_600.0, "1 h"),
        (4_800.0, "1 h 20 min"), (86_400.0, "1 d"), (190_800.0, "2 d 5 h"),
    ])
    func duration(_ seconds: Double, _ words: String) {
        #expect(ProgressWords.duration(seconds) == words)
    }

    @Test("A scan: read of found (+ while the walk finds more), the rate, the time left when known")
    func scan() {
        #expect(ProgressWords.scan(read: 12_400, toRead: 50_000, walkFinished: false, filesPerSecond: 1_900.4, secondsLeft: 19.6)
            == "12,400 of 50,000+ files read, 1,900 files/s, at least 20 s left")
        #expect(ProgressWords.scan(read: 12_400, toRead: 50_000, walkFinished: true, filesPerSecond: 1_900, secondsLeft: 197)
            == "12,400 of 50,000 files read, 1,900 files/s, about 3 min left")
        #expect(ProgressWords.scan(read: 0, toRead: 310, walkFinished: false, filesPerSecond: nil, secondsLeft: nil)
            == "0 of 310+ files read")
        // Everything found is read: no time left to tell.
        #expect(ProgressWords.scan(read: 500, toRead: 500, walkFinished: true, filesPerSecond: 2_000, secondsLeft: 0)
            == "500 of 500 files read, 2,000 files/s")
    }
}
