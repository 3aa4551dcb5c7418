import PhotoModel
#if canImport(Glibc)
import Glibc
#endif

/// The counters that answer `smartAlbums.fetch` without counting the library.
///
/// Every smart album but Recently Added has a rule that does not depend on the time: its count
/// is a counter, `smart.<kind>`, moved by each job's before and after states of the assets it
/// touched, in the job's transaction. Recently Added ("first indexed in the last 30 days") moves
/// with the clock, so what is kept is when the visible assets were added: how many per hour
/// (`added.h.<hour>`) and per minute (`added.m.<minute>`). Its count is the hours after the
/// window's first, the minutes after its first minute within that hour, and the assets of that
/// one minute counted by the `added_at` index — at most a minute's worth, where the whole
/// window of a freshly indexed library was a million. Buckets older than the window (and an
/// hour's margin for the clock) are dropped by the writer.
enum SmartCounters {
    static let hour: Int64 = 3_600_000
    static let minute: Int64 = 60_000

    /// The smart albums whose counts are kept as they are.
    static let timeless: [SmartAlbum.Kind] = SmartAlbum.Kind.allCases.filter { $0 != .recentlyAdded }

    static func album(_ kind: SmartAlbum.Kind) -> String { "smart." + kind.rawValue }

    /// Bucket names sort as their times do: fixed-width numbers.
    static func hourBucket(_ ms: Int64) -> String { "added.h." + padded(ms / hour, 10) }
    static func minuteBucket(_ ms: Int64) -> String { "added.m." + padded(ms / minute, 12) }
    static let hourPrefixEnd = "added.h/"
    static let minutePrefixEnd = "added.m/"

    private static func padded(_ n: Int64, _ width: Int) -> String {
        let digits = String(max(0, n))
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The oldest time whose buckets are kept at `now`.
    static func retained(now: Int64) -> Int64 { now - SmartAlbums.recentlyAddedWindowMilliseconds - hour }

    /// What one asset adds to the counters (`sign` +1) or takes from them (-1).
    static func add(_ facts: SmartAlbumFacts, _ sign: Int, now: Int64, into deltas: inout [String: Int]) {
        for kind in timeless where SmartAlbums.contains(kind, facts, now: now) { deltas[album(kind), default: 0] += sign }
        if facts.deletedAt == nil, !facts.isHidden, facts.addedAt >= retained(now: now) {
            deltas[hourBucket(facts.addedAt), default: 0] += sign
            deltas[minuteBucket(facts.addedAt), default: 0] += sign
        }
    }

    /// The counters as a scan of `assets` finds them at `now`: what the kept ones must equal.
    static func recount(_ db: Connection, now: Int64) throws(StoreError) -> [String: Int] {
        var result: [String: Int] = [:]
        for kind in timeless {
            let condition = IndexReader.smartAlbumSQL(SmartAlbums.album(kind), now: now).condition
            result[album(kind)] = Int(try db.scalar("SELECT count(*) FROM assets a WHERE \(condition)").int64 ?? 0)
        }
        let s = try db.statement("""
            SELECT added_at FROM assets a WHERE \(IndexReader.visible) AND added_at >= :retained
            """)
        defer { s.reset() }
        s.bind(":retained", to: retained(now: now))
        while try s.step() {
            let added = s.int64(0)
            guard added >= 0 else { continue }
            result[hourBucket(added), default: 0] += 1
            result[minuteBucket(added), default: 0] += 1
        }
        return result
    }

    /// The kept counters that `recount` finds (the smart albums', and the buckets from
    /// `retained(now:)` on), zeros left out.
    static func kept(_ db: Connection, now: Int64) throws(StoreError) -> [String: Int] {
        var result: [String: Int] = [:]
        let s = try db.statement("""
            SELECT name, value FROM counters WHERE (name > 'smart.' AND name < 'smart/')
                OR (name >= :hour AND name < 'added.h/') OR (name >= :minute AND name < 'added.m/')
            """)
        defer { s.reset() }
        let from = retained(now: now)
        s.bind(":hour", to: hourBucket(from))
        s.bind(":minute", to: minuteBucket(from))
        while try s.step() {
            if s.int(1) != 0 { result[s.string(0)] = s.int(1) }
        }
        return result
    }

    /// The kept counts of the timeless smart albums, by counter name.
    static func albums(_ db: Connection) throws(StoreError) -> [String: Int] {
        var result: [String: Int] = [:]
        let s = try db.statement("SELECT name, value FROM counters WHERE name > 'smart.' AND name < 'smart/'")
        defer { s.reset() }
        while try s.step() { result[s.string(0)] = s.int(1) }
        return result
    }

    /// Whether the smart counters have been set up (a database from before them has none).
    static func exist(_ db: Connection) throws(StoreError) -> Bool {
        try db.scalar("SELECT 1 FROM counters WHERE name = 'smart.allPhotos'").int64 != nil
    }

    /// Replaces every kept smart counter with `actual`.
    static func replace(_ db: Connection, with actual: [String: Int]) throws(StoreError) {
        try db.execute("DELETE FROM counters WHERE (name > 'smart.' AND name < 'smart/') OR (name > 'added.' AND name < 'added/')")
        let s = try db.statement("INSERT INTO counters (name, value) VALUES (:name, :value)")
        for (name, value) in actual.sorted(by: { $0.key < $1.key }) {
            s.bind(":name", to: name)
            s.bind(":value", to: value)
            try s.run()
        }
    }

    /// Drops the buckets older than the window (and its margin) at `now`.
    static func prune(_ db: Connection, now: Int64) throws(StoreError) {
        let from = retained(now: now)
        let s = try db.statement("""
            DELETE FROM counters WHERE (name > 'added.h.' AND name < :hour) OR (name > 'added.m.' AND name < :minute)
            """)
        s.bind(":hour", to: hourBucket(from))
        s.bind(":minute", to: minuteBucket(from))
        try s.run()
    }

    /// Recently Added's count at `now`, from the buckets and one minute of the index.
    static func recentlyAdded(_ db: Connection, now: Int64) throws(StoreError) -> Int {
        let cutoff = now - SmartAlbums.recentlyAddedWindowMilliseconds
        let firstHourEnd = (cutoff / hour + 1) * hour
        let firstMinuteEnd = (cutoff / minute + 1) * minute
        let hours = try db.statement("SELECT coalesce(sum(value), 0) FROM counters WHERE name >= :from AND name < 'added.h/'")
        defer { hours.reset() }
        hours.bind(":from", to: hourBucket(firstHourEnd))
        guard try hours.step() else { return 0 }
        var total = hours.int(0)
        let minutes = try db.statement("SELECT coalesce(sum(value), 0) FROM counters WHERE name >= :from AND name < :to")
        defer { minutes.reset() }
        minutes.bind(":from", to: minuteBucket(firstMinuteEnd))
        minutes.bind(":to", to: minuteBucket(firstHourEnd))
        if try minutes.step() { total += minutes.int(0) }
        let exact = try db.statement("""
            SELECT count(*) FROM assets a WHERE a.added_at >= :cutoff AND a.added_at < :end AND \(IndexReader.visible)
            """)
        defer { exact.reset() }
        exact.bind(":cutoff", to: cutoff)
        exact.bind(":end", to: min(firstMinuteEnd, firstHourEnd))
        if try exact.step() { total += exact.int(0) }
        return total
    }

    /// The wall clock in Unix milliseconds (for the start-up check, which has no job's time).
    static var now: Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
