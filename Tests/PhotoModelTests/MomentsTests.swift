import PhotoModel
import PhotoTesting
import Testing

enum MomentFixtures {
    static func local(_ s: String) -> LocalDateTime { LocalDateTime(iso: s)! }

    static func id(_ n: Int) -> AssetID {
        var g = SplitMix64(seed: UInt64(n))
        return AssetID.random(milliseconds: 0, using: &g)
    }

    static func member(_ n: Int, _ local: String, _ path: String = "", video: Bool = false,
                       gps: (Double, Double)? = nil) -> MomentMember {
        MomentMember(id: id(n), local: Self.local(local), path: PathBytes(path.isEmpty ? "/lib/\(n).jpg" : path),
                     mediaType: video ? .video : .image, latitude: gps?.0, longitude: gps?.1)
    }
}

@Suite("Moments")
struct MomentsTests {
    typealias F = MomentFixtures

    @Test("The offset never moves the day: grouping uses the capture clock's wall time", arguments: [
        ("2019:05:04 23:30:00", "+09:00", "2019-05-04"),   // Tokyo, late evening: 14:30 UTC, same day
        ("2019:05:04 00:10:00", "-05:00", "2019-05-04"),   // New York, just after midnight: 05:10 UTC
        ("2019:05:04 00:10:00", "+14:00", "2019-05-04"),   // Kiribati: the previous UTC day
        ("2019:05:04 23:59:59", "-12:00", "2019-05-04"),   // Baker Island: the next UTC day
        ("2019:05:04 00:00:00", nil, "2019-05-04"),
        ("2019:12:31 23:59:59", "+05:45", "2019-12-31"),
    ] as [(String, String?, String)])
    func dayBoundaries(exif: String, offset: String?, day: String) throws {
        let t = try #require(Timestamp.exif(Array(exif.utf8), offset: offset.map { Array($0.utf8) }))
        let asset = Asset(id: F.id(1), path: "/lib/a.jpg",
                          media: MediaFields(mediaType: .image, format: "jpeg",
                                             captureDate: CaptureDate(local: t.local, offset: t.offset, source: .exifOriginal)),
                          fileSize: 1, addedAt: 0)
        let moments = MomentGrouping.group([MomentMember(asset)])
        #expect(moments.count == 1)
        #expect(moments.first?.localDate == day)
        #expect(moments.first?.id == "m_" + day.filter { $0 != "-" })
    }

    @Test("Titles", arguments: [
        ("2019-05-04", "Saturday, 4 May 2019"),
        ("2024-02-29", "Thursday, 29 February 2024"),
        ("1999-12-31", "Friday, 31 December 1999"),
        ("2000-01-01", "Saturday, 1 January 2000"),
        ("2023-01-01", "Sunday, 1 January 2023"),
        ("1969-12-31", "Wednesday, 31 December 1969"),
        ("1970-01-01", "Thursday, 1 January 1970"),
        ("2038-01-19", "Tuesday, 19 January 2038"),
        ("1900-03-01", "Thursday, 1 March 1900"),
    ])
    func titles(date: String, title: String) throws {
        let day = try #require(MomentGrouping.day(ofLocalDate: date))
        #expect(MomentGrouping.title(day: day) == title)
        let m = try #require(MomentGrouping.moment(day: day, members: [F.member(1, date + "T12:00:00")]))
        #expect(m.dateTitle == title)
        #expect(m.localDate == date)
    }

    @Test("Moment ids are the date, and parse back")
    func ids() throws {
        let day = CivilTime.daysFromCivil(year: 2019, month: 5, day: 4)
        #expect(MomentGrouping.id(day: day) == "m_20190504")
        #expect(MomentGrouping.day(ofMomentID: "m_20190504") == day)
        for d in stride(from: CivilTime.daysFromCivil(year: 1826, month: 1, day: 1),
                        through: CivilTime.daysFromCivil(year: 2199, month: 12, day: 31), by: 37) {
            #expect(MomentGrouping.day(ofMomentID: MomentGrouping.id(day: d)) == d)
        }
        for bad in ["m_20190230", "m_2019054", "m_201905040", "x_20190504", "m_2019050a", "", "m_", "M_20190504",
                    "m_00000000", "m-20190504"] {
            #expect(MomentGrouping.day(ofMomentID: bad) == nil, "\(bad)")
        }
    }

    @Test("Display order: oldest first, then path bytes, then id; no milliseconds before .000")
    func ordering() {
        let a = F.member(1, "2019-05-04T10:00:00", "/lib/b.jpg")
        let b = F.member(2, "2019-05-04T10:00:00", "/lib/a.jpg")
        let c = F.member(3, "2019-05-04T10:00:00.000", "/lib/a.jpg")
        let d = F.member(4, "2019-05-04T09:59:59.999", "/lib/z.jpg")
        let e = F.member(5, "2019-05-04T10:00:00", "/lib/a.jpg")  // same time and path as b: by id
        let ordered = MomentGrouping.ordered([a, b, c, d, e])
        let (first, second) = b.id < e.id ? (b, e) : (e, b)
        #expect(ordered == [d, first, second, a, c])
    }

    @Test("The member order is the byte order of the stored text (local, path, id)")
    func orderMatchesStoredText() {
        var g = SplitMix64(seed: 42)
        let times = ["2019-05-04T10:00:00", "2019-05-04T10:00:00.000", "2019-05-04T10:00:00.001",
                     "2019-05-04T10:00:01", "2019-05-04T09:59:59.999", "2019-05-05T00:00:00", "2018-12-31T23:59:59"]
        let paths = ["/a", "/a/b", "/a-b", "/B", "/a/\u{E9}", "/a/e\u{301}"]
        var members: [MomentMember] = []
        for n in 0..<200 {
            members.append(F.member(n, times.randomElement(using: &g)!, paths.randomElement(using: &g)!))
        }
        let byText = members.sorted {
            let ka = (Array($0.local.description.utf8), $0.path.bytes, Array($0.id.rawValue.utf8))
            let kb = (Array($1.local.description.utf8), $1.path.bytes, Array($1.id.rawValue.utf8))
            if ka.0 != kb.0 { return ka.0.lexicographicallyPrecedes(kb.0) }
            if ka.1 != kb.1 { return ka.1.lexicographicallyPrecedes(kb.1) }
            return ka.2.lexicographicallyPrecedes(kb.2)
        }
        #expect(MomentGrouping.ordered(members) == byText)
    }

    @Test("Grouping: newest first, start and end, counts, the oldest geotagged member's location")
    func grouping() throws {
        let members = [
            F.member(1, "2019-05-04T18:00:00", gps: (35.0, 139.0)),
            F.member(2, "2019-05-04T08:00:00", video: true),
            F.member(3, "2019-05-04T09:00:00", "/lib/b.jpg", gps: (48.85, 2.35)),
            F.member(4, "2019-05-04T09:00:00", "/lib/a.jpg", gps: (51.5, -0.12)),  // same time, earlier path
            F.member(5, "2019-05-03T23:59:59.999"),
            F.member(6, "2019-06-01T00:00:00", gps: (.nan, 1)),  // not a position
            F.member(7, "2019-05-04T23:59:59", video: true),
        ]
        let moments = MomentGrouping.group(members)
        #expect(moments.map(\.id) == ["m_20190601", "m_20190504", "m_20190503"])
        let may4 = moments[1]
        #expect(may4.start == F.local("2019-05-04T08:00:00"))
        #expect(may4.end == F.local("2019-05-04T23:59:59"))
        #expect((may4.assetCount, may4.photoCount, may4.videoCount) == (5, 3, 2))
        #expect(may4.latitude == 51.5)
        #expect(may4.longitude == -0.12)
        #expect(may4.locationMember == members[3].key)
        #expect(moments[0].latitude == nil)
        #expect(moments[2].end == F.local("2019-05-03T23:59:59.999"))
        #expect(MomentGrouping.group([]).isEmpty)
        #expect(MomentGrouping.moment(day: may4.day, members: []) == nil)
        // Members of other days are ignored by `moment(day:members:)`.
        #expect(MomentGrouping.moment(day: may4.day, members: members) == may4)
        // A moment rebuilt from its stored columns is the same value.
        let stored = Moment(day: may4.day, start: may4.start, end: may4.end, assetCount: 5, photoCount: 3, videoCount: 2,
                            latitude: 51.5, longitude: -0.12, locationMember: members[3].key)
        #expect(stored == may4)
    }

    @Test("Merging a run of changes nets out per asset")
    func mergingNets() {
        let a1 = F.member(1, "2019-05-04T10:00:00")
        let a2 = F.member(1, "2019-05-06T10:00:00")
        let b1 = F.member(2, "2019-05-04T11:00:00")
        let b2 = F.member(2, "2019-05-04T11:00:00", gps: (1, 2))
        let b3 = F.member(2, "2019-05-07T11:00:00")
        let c1 = F.member(3, "2019-05-04T12:00:00")
        let d1 = F.member(4, "2019-05-04T13:00:00")
        let runs: [MomentChange] = [
            MomentChange(added: [a1, b2]),                          // a added; b updated (b1 → b2) below
            MomentChange(removed: [a1], added: [a2]),               // a updated
            MomentChange(removed: [a2]),                            // a deleted: nets out entirely
            MomentChange(removed: [c1]),                            // c deleted, then back unchanged
            MomentChange(added: [c1]),
            MomentChange(removed: [d1], added: [d1]),               // no-op update
        ]
        var withB = runs
        withB[0] = MomentChange(removed: [b1], added: [a1, b2])
        withB.append(MomentChange(removed: [b2], added: [b3]))
        let net = MomentChange.merging(withB)
        #expect(net == MomentChange(removed: [b1], added: [b3]))
        #expect(MomentChange.merging([]) == MomentChange())
        #expect(MomentChange.merging([MomentChange(added: [a1]), MomentChange(removed: [a1])]).isEmpty)
    }

    @Test("A day that only gains members is updated without loading it")
    func addOnly() throws {
        let old = [F.member(1, "2019-05-04T10:00:00", gps: (1, 1)), F.member(2, "2019-05-04T12:00:00")]
        let existing = try #require(MomentGrouping.moment(day: old[0].day, members: old))
        let new = [F.member(3, "2019-05-04T09:00:00", gps: (2, 2)), F.member(4, "2019-05-05T09:00:00", video: true)]
        let (moments, diff) = MomentMerge.apply(MomentChange(added: new), existing: [existing.day: existing]) { day in
            Issue.record("membersAfter(\(day)) called for an add-only change")
            return []
        }
        let expected = MomentGrouping.group(old + new)
        #expect(moments[existing.day] == .some(expected[1]))
        #expect(moments[existing.day + 1] == .some(expected[0]))
        #expect(diff == MomentDiff(inserted: ["m_20190505"], updated: ["m_20190504"], contentChanged: ["m_20190504"]))
        #expect(expected[1].latitude == 2)
    }

    @Test("Removals recompute their day from the store; the diff says what changed")
    func removals() throws {
        let a = F.member(1, "2019-05-04T10:00:00", gps: (1, 1))
        let b = F.member(2, "2019-05-04T12:00:00")
        let c = F.member(3, "2019-05-05T12:00:00")
        var store: [AssetID: MomentMember] = [a.id: a, b.id: b, c.id: c]
        var existing: [Int: Moment] = [:]
        for m in MomentGrouping.group(Array(store.values)) { existing[m.day] = m }

        // A GPS-only change of a non-location member: nothing visible changes.
        var b2 = b
        b2.latitude = 5
        b2.longitude = 5
        store[b.id] = b2
        var calls: [Int] = []
        var r = MomentMerge.apply(MomentChange(removed: [b], added: [b2]), existing: existing) { day in
            calls.append(day)
            return store.values.filter { $0.day == day }
        }
        #expect(calls == [a.day])
        #expect(r.diff.isEmpty)
        #expect(r.moments[a.day] == .some(existing[a.day]))

        // Deleting the day's last member deletes the moment; moving one within the day changes its content.
        store[c.id] = nil
        var a2 = a
        a2.local = F.local("2019-05-04T13:00:00")
        store[a.id] = a2
        r = MomentMerge.apply(MomentChange(removed: [c, a], added: [a2]), existing: existing) { day in
            store.values.filter { $0.day == day }
        }
        #expect(r.diff == MomentDiff(updated: ["m_20190504"], deleted: ["m_20190505"], contentChanged: ["m_20190504"]))
        #expect(r.moments[c.day] == .some(nil))
        let may4 = try #require(r.moments[a.day] ?? nil)
        #expect(may4.start == F.local("2019-05-04T12:00:00"))
        #expect(may4.latitude == 5)  // b2 is now the oldest geotagged member
    }

    @Test("Moment lists by year and month")
    func lists() throws {
        let members = [
            F.member(1, "2019-05-04T10:00:00"), F.member(2, "2019-05-04T11:00:00", video: true),
            F.member(3, "2019-05-20T10:00:00"), F.member(4, "2019-12-31T23:00:00"),
            F.member(5, "2020-01-01T00:30:00", video: true),
        ]
        let (years, months) = MomentLists.build(MomentGrouping.group(members))
        #expect(years.map(\.id) == ["y_2020", "y_2019"])
        #expect(years.map(\.title) == ["2020", "2019"])
        #expect(months.map(\.id) == ["mo_2020-01", "mo_2019-12", "mo_2019-05"])
        #expect(months.map(\.title) == ["January 2020", "December 2019", "May 2019"])
        let y2019 = years[1]
        #expect(y2019.kind == .year && y2019.month == nil && y2019.year == 2019)
        #expect(y2019.momentIDs == ["m_20191231", "m_20190520", "m_20190504"])
        #expect((y2019.assetCount, y2019.photoCount, y2019.videoCount) == (4, 3, 1))
        #expect(y2019.start == F.local("2019-05-04T10:00:00"))
        #expect(y2019.end == F.local("2019-12-31T23:00:00"))
        let may = months[2]
        #expect(may.kind == .month && may.month == 5)
        #expect(may.momentIDs == ["m_20190520", "m_20190504"])
        #expect((may.assetCount, may.photoCount, may.videoCount) == (3, 2, 1))
        // A list rebuilt from a superset of moments ignores the other periods.
        let all = MomentGrouping.group(members)
        #expect(MomentLists.monthList(year: 2019, month: 5, moments: all) == may)
        #expect(MomentLists.yearList(year: 2019, moments: all) == y2019)
        #expect(MomentLists.yearList(year: 2021, moments: all) == nil)
        // The one-pass build equals each period's list built alone, in any input order, for
        // random days over 30 years with random cities (a year's tallied from its months').
        var g = SplitMix64(seed: 7)
        let cities = ["Lisbon", "Porto", "Sintra", "São Paulo", "東京"]
        for _ in 0..<20 {
            let days = Set((0..<Int.random(in: 1...400, using: &g)).map { _ in Int.random(in: 9_000...20_000, using: &g) })
            var random = days.map { day in
                var m = Moment(day: day, start: LocalDateTime(unixSeconds: Int64(day) * 86_400 + Int64.random(in: 0..<43_200, using: &g), offsetSeconds: 0)!,
                               end: LocalDateTime(unixSeconds: Int64(day) * 86_400 + Int64.random(in: 43_200..<86_400, using: &g), offsetSeconds: 0)!,
                               assetCount: 3, photoCount: 2, videoCount: 1)
                m.locationCounts = cities.shuffled(using: &g).prefix(Int.random(in: 0...3, using: &g)).map {
                    PlaceCount(name: $0, count: Int.random(in: 1...9, using: &g))
                }
                return m
            }
            random.shuffle(using: &g)
            let (ys, ms) = MomentLists.build(random)
            let yearsBack = Set(days.map { CivilTime.civilFromDays($0).year }).sorted(by: >)
            #expect(ys == yearsBack.compactMap { MomentLists.yearList(year: $0, moments: random) })
            let monthsBack = Set(days.map { d in
                let c = CivilTime.civilFromDays(d)
                return c.year * 100 + c.month
            }).sorted(by: >)
            #expect(ms == monthsBack.compactMap { MomentLists.monthList(year: $0 / 100, month: $0 % 100, moments: random) })
            #expect(MomentLists.build(random.sorted { $0.day > $1.day }) == (ys, ms))
            for list in ys + ms {
                #expect(list.locationNames.count == min(3, Set(list.momentIDs.flatMap { id in
                    random.first { $0.id == id }!.locationNames
                }).count))
            }
        }
        // A year's cities: the most assets over all its months first, ties by name.
        func moment(_ date: String, _ cities: KeyValuePairs<String, Int>) -> Moment {
            var m = Moment(day: F.local(date).dayNumber, start: F.local(date), end: F.local(date), assetCount: 9, photoCount: 9,
                           videoCount: 0)
            m.locationCounts = cities.map { PlaceCount(name: $0.key, count: $0.value) }
            return m
        }
        let (summer, summerMonths) = MomentLists.build([moment("2019-07-01T10:00:00", ["Porto": 5, "Lisbon": 4]),
                                                        moment("2019-08-01T10:00:00", ["Lisbon": 2, "Faro": 4, "Braga": 4])])
        #expect(summer.map(\.locationNames) == [["Lisbon", "Porto", "Braga"]])
        #expect(summerMonths.map(\.locationNames) == [["Braga", "Faro", "Lisbon"], ["Porto", "Lisbon"]])
    }
}

/// The issue's property: for random libraries, random sequences of changes, random chunkings
/// and random cancellation points, incremental maintenance equals grouping from scratch.
@Suite("Moments: incremental merge equals grouping from scratch")
struct MomentMergePropertyTests {
    /// A random library's world: a few dozen days, a pool of wall times (so duplicates occur),
    /// a pool of paths (so ties on time and path occur), GPS on some assets.
    struct World {
        var g: SplitMix64
        let baseDay: Int
        let dayCount: Int
        var timePool: [LocalDateTime] = []

        init(seed: UInt64) {
            g = SplitMix64(seed: seed)
            baseDay = CivilTime.daysFromCivil(year: 2019, month: 1, day: 1) + Int.random(in: 0..<700, using: &g)
            dayCount = Int.random(in: 1...40, using: &g)
        }

        mutating func local() -> LocalDateTime {
            if !timePool.isEmpty, Int.random(in: 0..<4, using: &g) == 0 { return timePool.randomElement(using: &g)! }
            let (y, m, d) = CivilTime.civilFromDays(baseDay + Int.random(in: 0..<dayCount, using: &g))
            // Times near midnight are over-represented: the day boundary is where bugs live.
            let second = Bool.random(using: &g) ? Int.random(in: 0..<86_400, using: &g)
                : [0, 1, 86_399, 86_398, 600].randomElement(using: &g)!
            let ms: Int? = [nil, nil, 0, 999, Int.random(in: 0...999, using: &g)].randomElement(using: &g)!
            let t = LocalDateTime(year: y, month: m, day: d, hour: second / 3600, minute: second / 60 % 60,
                                  second: second % 60, millisecond: ms)!
            timePool.append(t)
            return t
        }

        mutating func member(id: AssetID) -> MomentMember {
            let path = PathBytes("/lib/" + String(Int.random(in: 0..<60, using: &g)) + ".jpg")
            let geo = Int.random(in: 0..<3, using: &g) == 0
            return MomentMember(id: id, local: local(), path: path, mediaType: Bool.random(using: &g) ? .image : .video,
                                latitude: geo ? Double(Int.random(in: -90...90, using: &g)) : nil,
                                longitude: geo ? Double(Int.random(in: -180...180, using: &g)) : nil)
        }

        /// A variation of an existing member: another day, another type, GPS on or off, another
        /// time in the day, another path (a move), or nothing at all (a re-read).
        mutating func update(_ m: MomentMember) -> MomentMember {
            var n = m
            switch Int.random(in: 0..<6, using: &g) {
            case 0: n.local = local()
            case 1: n.mediaType = n.mediaType == .image ? .video : .image
            case 2:
                if n.latitude == nil {
                    n.latitude = Double(Int.random(in: -90...90, using: &g))
                    n.longitude = 0
                } else {
                    n.latitude = nil
                    n.longitude = nil
                }
            case 3:
                var t = n.local
                t.hour = Int.random(in: 0...23, using: &g)
                n.local = t
            case 4: n.path = PathBytes("/lib/moved/" + String(Int.random(in: 0..<60, using: &g)) + ".jpg")
            default: break
            }
            return n
        }
    }

    /// One random case: a change sequence (the initial index and later edits), chunked, with
    /// runs of chunks merged as cancelled jobs are, applied incrementally and checked after
    /// every job against grouping from scratch. Returns a failure description, or nil.
    static func run(seed: UInt64) -> String? {
        var w = World(seed: seed)
        var g = SplitMix64(seed: seed ^ 0xD1B5_4A32_D192_ED03)

        // The single-asset changes, in the order the world sees them.
        var live: [AssetID: MomentMember] = [:]
        var liveIDs: [AssetID] = []
        var gone: [MomentMember] = []
        var ops: [MomentChange] = []
        let initial = Int.random(in: 0...400, using: &g)
        let edits = Int.random(in: 0...150, using: &g)
        for _ in 0..<initial {
            let m = w.member(id: AssetID.random(milliseconds: 0, using: &g))
            live[m.id] = m
            liveIDs.append(m.id)
            ops.append(MomentChange(added: [m]))
        }
        for _ in 0..<edits {
            let kind = Int.random(in: 0..<10, using: &g)
            if liveIDs.isEmpty || kind < 2 {
                // A new asset, or a deleted one coming back (restored from Recently Deleted).
                var m = w.member(id: AssetID.random(milliseconds: 0, using: &g))
                if !gone.isEmpty, Bool.random(using: &g) { m = gone.remove(at: Int.random(in: 0..<gone.count, using: &g)) }
                live[m.id] = m
                liveIDs.append(m.id)
                ops.append(MomentChange(added: [m]))
            } else if kind < 7 {
                let id = liveIDs.randomElement(using: &g)!
                let old = live[id]!
                let new = w.update(old)
                live[id] = new
                ops.append(MomentChange(removed: [old], added: [new]))
            } else {
                let i = Int.random(in: 0..<liveIDs.count, using: &g)
                let id = liveIDs.remove(at: i)
                let old = live.removeValue(forKey: id)!
                gone.append(old)
                ops.append(MomentChange(removed: [old]))
            }
        }

        // Chunks (what a sort job gets), then runs of chunks merged at cancellation points.
        var chunks: [MomentChange] = []
        var i = 0
        while i < ops.count {
            let n = Int.random(in: 1...60, using: &g)
            chunks.append(MomentChange.merging(Array(ops[i..<min(i + n, ops.count)])))
            i += n
        }
        var jobs: [MomentChange] = []
        i = 0
        while i < chunks.count {
            let n = Int.random(in: 0..<3, using: &g) == 0 ? Int.random(in: 1...8, using: &g) : 1
            jobs.append(MomentChange.merging(Array(chunks[i..<min(i + n, chunks.count)])))
            i += n
        }

        // The store: asset rows, and an index by day (what a `day` column gives SQLite).
        var store: [AssetID: MomentMember] = [:]
        var byDay: [Int: [AssetID: MomentMember]] = [:]
        var moments: [Int: Moment] = [:]
        for (j, job) in jobs.enumerated() {
            for m in job.removed {
                guard store[m.id] == m else { return "job \(j): removed value \(m.id) is not the stored one" }
                store[m.id] = nil
                byDay[m.day]![m.id] = nil
            }
            for m in job.added {
                guard store[m.id] == nil else { return "job \(j): added \(m.id) twice" }
                store[m.id] = m
                byDay[m.day, default: [:]][m.id] = m
            }
            let affected = MomentMerge.affectedDays(job)
            let recompute = MomentMerge.daysToRecompute(job)
            // Give `apply` exactly the affected days' moments (the contract's minimum), or
            // sometimes every moment (what a lazy caller might pass).
            let existing = Bool.random(using: &g) ? moments : moments.filter { affected.contains($0.key) }
            var calls: [Int] = []
            let (changed, diff) = MomentMerge.apply(job, existing: existing) { day in
                calls.append(day)
                return Array(byDay[day]?.values ?? [:].values)
            }
            if calls.count != Set(calls).count || !Set(calls).isSubset(of: recompute) {
                return "job \(j): membersAfter called for \(calls.sorted()), allowed \(recompute.sorted())"
            }
            guard Set(changed.keys) == affected else { return "job \(j): result days differ from the affected days" }
            let beforeIDs = Set(moments.values.map(\.id))
            for (day, m) in changed { moments[day] = m }
            let afterIDs = Set(moments.values.map(\.id))
            guard beforeIDs.subtracting(diff.deleted).union(diff.inserted) == afterIDs,
                  Set(diff.inserted).isDisjoint(with: beforeIDs), Set(diff.deleted).isDisjoint(with: afterIDs),
                  Set(diff.updated).isSubset(of: beforeIDs.intersection(afterIDs))
            else { return "job \(j): the diff does not explain the change" }

            // Days the job did not touch kept their moments and their members, so checking the
            // affected days against grouping from scratch checks the whole library.
            for day in affected {
                let scratch = MomentGrouping.group(Array(byDay[day]?.values ?? [:].values)).first
                if moments[day] != scratch {
                    return "job \(j) of \(jobs.count), day \(MomentGrouping.id(day: day)): incremental "
                        + "\(String(describing: moments[day])), from scratch \(String(describing: scratch))"
                }
            }
        }
        let final = MomentGrouping.group(Array(live.values))
        guard moments.values.sorted(by: { $0.day > $1.day }) == final else { return "final moments differ from the library's" }
        guard MomentLists.build(Array(moments.values)) == MomentLists.build(final) else { return "lists differ" }
        return nil
    }

    /// 2,000 cases in 8 shards that run in parallel; seeds `0x5eed00000000` ... `0x5eed000007cf`.
    @Test("Thousands of seeded random cases", arguments: 0..<8)
    func randomCases(shard: Int) {
        let base: UInt64 = 0x5EED_0000_0000
        for k in (shard * 250)..<((shard + 1) * 250) {
            let seed = base + UInt64(k)
            if let failure = Self.run(seed: seed) {
                Issue.record("seed 0x\(String(seed, radix: 16)): \(failure)")
                return
            }
        }
    }

    @Test("Merging a run of changes equals applying them one by one")
    func mergingIsSequential() {
        for k in 0..<500 {
            let seed = 0xC0DE_0000 + UInt64(k)
            var w = World(seed: seed)
            var g = SplitMix64(seed: seed)
            let ids = (0..<12).map { _ in AssetID.random(milliseconds: 0, using: &g) }
            var state: [AssetID: MomentMember] = [:]
            for id in ids where Bool.random(using: &g) { state[id] = w.member(id: id) }
            let initial = state
            var changes: [MomentChange] = []
            for _ in 0..<Int.random(in: 0...30, using: &g) {
                var c = MomentChange()
                for id in ids.shuffled(using: &g).prefix(Int.random(in: 0...4, using: &g)) {
                    if let old = state[id] {
                        c.removed.append(old)
                        if Bool.random(using: &g) { state[id] = nil; continue }
                        let new = w.update(old)
                        state[id] = new
                        c.added.append(new)
                    } else {
                        let new = w.member(id: id)
                        state[id] = new
                        c.added.append(new)
                    }
                }
                changes.append(c)
            }
            // The merged change applies to the initial state (its old values are the stored
            // ones) and reaches the final state.
            let net = MomentChange.merging(changes)
            var replay = initial
            var consistent = true
            for m in net.removed {
                consistent = consistent && replay[m.id] == m
                replay[m.id] = nil
            }
            for m in net.added {
                consistent = consistent && replay[m.id] == nil
                replay[m.id] = m
            }
            if replay != state || !consistent {
                Issue.record("seed 0x\(String(seed, radix: 16)): merged change \(net) does not reach the final state")
                return
            }
        }
    }
}
