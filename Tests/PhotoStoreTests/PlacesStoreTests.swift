import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

/// A gazetteer of two places for the store's tests: "Sydney" south of latitude -30, "Lisbon"
/// north of 30, nothing between; zones at a fixed offset.
struct TablePlaces: PlaceLookup {
    func place(latitude: Double, longitude: Double) -> Place? {
        if latitude < -30 { return Place(city: "Sydney", region: "New South Wales", country: "Australia", countryCode: "AU",
                                         source: .geonames, timeZone: "Australia/Sydney") }
        if latitude > 30 { return Place(city: "Lisbon", region: "Lisbon", country: "Portugal", countryCode: "PT",
                                        source: .geonames, timeZone: "Europe/Lisbon") }
        return nil
    }

    func offset(timeZone: String, at local: LocalDateTime) -> UTCOffset? {
        timeZone == "Australia/Sydney" ? UTCOffset(seconds: 36000) : UTCOffset(seconds: local.month >= 4 && local.month <= 10 ? 3600 : 0)
    }
}

@Suite("Places in the store")
struct PlacesStoreTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory("places") }

    func open(lookup: (any PlaceLookup)? = TablePlaces()) throws -> Database {
        var options = Database.Options()
        options.places = lookup
        return try Database(path: dir("index.db").string, options: options)
    }

    func asset(_ db: Database, _ path: String) throws -> Asset? {
        try db.read { try $0.assets(limit: 1000, offset: 0) }.first { $0.path == PathBytes(path) }
    }

    @Test("An asset's place: the gazetteer's for its coordinates, its file's own before it; zone offsets only without one")
    func writerPlaces() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        var own = Make.media(date: "2021-07-01T12:00:00", latitude: 38.7, longitude: -9.1)
        own.filePlace = Place(city: "Belém", country: "Portugal", countryCode: "PT", source: .file)
        let noOffset = Make.media(date: "2021-07-01T12:00:00", offset: nil, latitude: 38.7, longitude: -9.1)
        let nameDated = Make.media(date: "2021-07-01T12:00:00", offset: nil, source: .fileName, latitude: 38.7, longitude: -9.1)
        let batch = Make.batch([
            Make.outcome("/lib/sydney.jpg", inode: 1, .media(Make.media())),
            Make.outcome("/lib/own.jpg", inode: 2, .media(own)),
            Make.outcome("/lib/nooffset.jpg", inode: 3, .media(noOffset)),
            Make.outcome("/lib/named.jpg", inode: 4, .media(nameDated)),
            Make.outcome("/lib/sea.jpg", inode: 5, .media(Make.media(latitude: 0, longitude: 0))),
            Make.outcome("/lib/nogps.jpg", inode: 6, .media(Make.media(latitude: nil, longitude: nil))),
        ])
        _ = try db.write { try $0.apply(batch, now: 1) }
        let sydney = try #require(try asset(db, "/lib/sydney.jpg"))
        #expect(sydney.place?.city == "Sydney" && sydney.place?.source == .geonames && sydney.place?.countryCode == "AU")
        #expect(sydney.zoneOffset == nil, "its metadata gives an offset")
        let withOwn = try #require(try asset(db, "/lib/own.jpg"))
        #expect(withOwn.place?.city == "Belém" && withOwn.place?.source == .file)
        #expect(withOwn.place?.timeZone == "Europe/Lisbon", "a file's place takes the zone of its coordinates")
        let bare = try #require(try asset(db, "/lib/nooffset.jpg"))
        #expect(bare.captureDate.offset == nil && bare.zoneOffset?.seconds == 3600)
        #expect(bare.captureDate.local.description == "2021-07-01T12:00:00", "the wall clock stays")
        #expect(try asset(db, "/lib/named.jpg")?.zoneOffset == nil, "a name's date is no capture clock")
        #expect(try asset(db, "/lib/sea.jpg")?.place == nil)
        #expect(try asset(db, "/lib/nogps.jpg")?.place == nil)
        // Assets at one place share its row.
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM places").int64 } == 3)
    }

    @Test("Without a gazetteer an asset's place is its file's alone")
    func noLookup() throws {
        defer { dir.remove() }
        let db = try open(lookup: nil)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        var own = Make.media()
        own.filePlace = Place(city: "Manly", source: .file)
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a.jpg", inode: 1, .media(Make.media())),
                                                    Make.outcome("/lib/b.jpg", inode: 2, .media(own))]), now: 1) }
        #expect(try asset(db, "/lib/a.jpg")?.place == nil)
        #expect(try asset(db, "/lib/b.jpg")?.place?.city == "Manly")
    }

    @Test("A sidecar's place comes before the file's; removing the sidecar gives the file's back")
    func sidecarPlace() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/IMG_1.jpg", inode: 1, .media(Make.media()))]), now: 1) }
        let sidecar = SidecarFields(date: nil, rating: nil, keywords: [], place: Place(city: "Bondi", source: .file))
        let changes = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/IMG_1.xmp", inode: 2, .sidecar(sidecar))]), now: 2) }
        let id = try #require(try asset(db, "/lib/IMG_1.jpg")?.id)
        #expect(changes.updated.contains(id))
        #expect(try asset(db, "/lib/IMG_1.jpg")?.place?.city == "Bondi")
        var removal = WriteBatch()
        removal.removedFiles = [(PathBytes("/lib"), Array("IMG_1.xmp".utf8))]
        _ = try db.write { try $0.apply(removal, now: 3) }
        #expect(try asset(db, "/lib/IMG_1.jpg")?.place?.city == "Sydney")
    }

    @Test("Migration 011: assets indexed before places are placed by the pass, a chunk a job, each change set listing them, the moments they title and the user albums holding them")
    func migrationPass() throws {
        defer { dir.remove() }
        let album: String
        do {
            let db = try open(lookup: nil)
            _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
            let outcomes = (1...7).map { i in
                Make.outcome("/lib/\(i).jpg", inode: UInt64(i),
                             .media(Make.media(date: "2021-01-0\(i)T10:00:00", latitude: i == 4 ? nil : (i % 2 == 0 ? 38.7 : -33.9),
                                               longitude: 10)))
            }
            _ = try db.write { try $0.apply(Make.batch(outcomes), now: 1) }
            let first = try #require(try db.read { try $0.assets(limit: 100, offset: 0) }.first { $0.path.string == "/lib/1.jpg" })
            album = try db.write { try $0.createUserAlbum(title: "Trip", folder: nil, now: 2) }.id
            _ = try db.write { try $0.addToUserAlbum(album, ids: [first.id], now: 3) }
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutPlaces + "PRAGMA user_version = 10;") }
        }
        let db = try open()
        #expect(try db.read { try $0.placingProgress() } == PlacingProgress(done: 0, total: 6))
        var rounds = 0
        var updated = 0
        var collections = Set<String>()
        while true {
            let (changes, more) = try db.write { try $0.placeAssets(limit: 4, now: 10) }
            updated += changes.updated.count
            collections.formUnion(changes.collectionsUpdated)
            #expect(changes.inserted.isEmpty && changes.deleted.isEmpty && changes.collectionsInserted.isEmpty)
            rounds += 1
            if !more { break }
            #expect(try db.read { try $0.placingProgress() } == PlacingProgress(done: 4, total: 6))
        }
        #expect(rounds == 2 && updated == 6)
        // Every day with a placed photo got its title (the 4th has no coordinates: no title, no
        // change), and the album holding the first photo was told.
        let days = [1, 2, 3, 5, 6, 7].map { MomentGrouping.id(day: CivilTime.daysFromCivil(year: 2021, month: 1, day: $0)) }
        #expect(collections == Set(days + [album]))
        #expect(try db.read { try $0.moments() }.filter { $0.title != nil }.count == 6)
        #expect(try db.read { try $0.placingProgress() } == nil)
        let all = try db.read { try $0.assets(limit: 100, offset: 0) }
        #expect(all.filter { $0.place?.city == "Sydney" }.count == 4)
        #expect(all.filter { $0.place?.city == "Lisbon" }.count == 2)
        #expect(all.first { $0.latitude == nil }?.place == nil)
    }

    @Test("A moment is titled by its assets' places and names its cities; a place that changes updates it in the same change set")
    func momentTitles() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/IMG_1.jpg", inode: 1, .media(Make.media(date: "2021-07-01T10:00:00"))),
                Make.outcome("/lib/IMG_2.jpg", inode: 2, .media(Make.media(date: "2021-07-01T11:00:00"))),
                Make.outcome("/lib/IMG_3.jpg", inode: 3, .media(Make.media(date: "2021-07-01T12:00:00", latitude: 38.7, longitude: -9.1))),
                Make.outcome("/lib/IMG_4.jpg", inode: 4, .media(Make.media(date: "2021-07-02T12:00:00", latitude: nil, longitude: nil))),
            ]), now: 1)
        }
        func moment(_ id: String) throws -> Moment? { try db.read { try $0.moments() }.first { $0.id == id } }
        #expect(try moment("m_20210701")?.title == "Sydney & Lisbon")
        #expect(try moment("m_20210701")?.locationNames == ["Sydney", "Lisbon"])
        #expect(try moment("m_20210702")?.title == nil)
        #expect(try moment("m_20210702")?.locationNames == [])
        // A sidecar naming another city for one photo: the moment's cities change with it.
        let sidecar = SidecarFields(date: nil, rating: nil, keywords: [], place: Place(city: "Bondi", source: .file))
        let changes = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/IMG_1.xmp", inode: 5, .sidecar(sidecar))]), now: 2) }
        #expect(changes.collectionsUpdated.contains("m_20210701"))
        #expect(try moment("m_20210701")?.locationNames == ["Bondi", "Lisbon", "Sydney"])
        let (years, months) = try db.read { try $0.momentLists() }
        #expect(years.map(\.locationNames) == [["Bondi", "Lisbon", "Sydney"]])
        #expect(months.map(\.id) == ["mo_2021-07"] && months.map(\.locationNames) == [["Bondi", "Lisbon", "Sydney"]])
        // Three cities in two countries: the countries, most photos first.
        #expect(try moment("m_20210701")?.title == "Australia & Portugal")
        // Hidden photos do not name their day.
        let lisbonID = try #require(try asset(db, "/lib/IMG_3.jpg")?.id)
        _ = try db.write { try $0.set(.hidden, true, ids: [lisbonID], now: 3) }
        #expect(try moment("m_20210701")?.locationNames == ["Bondi", "Sydney"])
    }

    @Test("A moment whose dates are not dates is named in the error, by the moments and by the lists alike")
    func undecodableMoment() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write {
            try $0.apply(Make.batch([Make.outcome("/lib/IMG_1.jpg", inode: 1, .media(Make.media(date: "2021-07-01T10:00:00")))]), now: 1)
        }
        let day = try #require(try db.read { try $0.moments() }.first?.day)
        try db.write { w in try w.connection.execute("UPDATE moments SET end_local = 'noon' WHERE day = \(day)") }
        #expect(throws: StoreError.undecodable(table: "moments", key: String(day))) { try db.read { try $0.moments() } }
        #expect(throws: StoreError.undecodable(table: "moments", key: String(day))) { try db.read { try $0.momentLists() } }
    }

    @Test("A moment's cities are read back from their column as written, whatever the names' scripts; a malformed pair is skipped")
    func momentPlacesColumn() {
        let counts = [PlaceCount(name: "São Paulo", count: 12), PlaceCount(name: "東京", count: 3),
                      PlaceCount(name: "Llanfairpwllgwyngyll-gogerychwyrndrobwll", count: 1), PlaceCount(name: "Nice", count: 1_000_000)]
        #expect(MomentPlaces.decode(MomentPlaces.encode(counts)) == counts)
        #expect(MomentPlaces.decode(nil) == [] && MomentPlaces.encode([]) == nil)
        let malformed = ["Lisbon\u{1E}", "\u{1E}4", "Porto\u{1E}x", "Faro\u{1E}1\u{1E}2", "", "Braga", "Evora\u{1E}-3",
                         "Sintra\u{1E}7", "Tavira\u{1E}99999999999999999999"].joined(separator: "\u{1F}")
        #expect(MomentPlaces.decode(malformed) == [PlaceCount(name: "", count: 4), PlaceCount(name: "Sintra", count: 7)])
        #expect(MomentPlaces.names(MomentPlaces.encode(counts)) == counts.map { Substring($0.name) })
    }

    @Test("A moment's kept tally of places, added to by jobs that only add assets, is always what counting its day gives, and so is its title")
    func keptTallies() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        var rng = SplitMix64(seed: 16)
        var files: [(path: String, inode: UInt64)] = []
        let latitudes: [Double?] = [-33.5, -33.5, 38.7, 0, nil]
        func media(_ day: Int) -> MediaFields {
            let latitude = latitudes[Int(rng.next() % UInt64(latitudes.count))]
            return Make.media(date: "2021-07-0\(day)T1\(rng.next() % 10):00:00", latitude: latitude, longitude: latitude.map { _ in 10 })
        }
        func check(_ round: Int) throws {
            try db.read { r in
                let moments = try r.connection.statement("SELECT day, title, location_names, place_tally FROM moments")
                while try moments.step() {
                    let day = moments.int(0)
                    let counted = try r.connection.statement("""
                        SELECT a.place_id, count(*), p.key FROM assets a JOIN places p ON p.id = a.place_id
                        WHERE a.day = \(day) AND a.is_hidden = 0 AND a.deleted_at IS NULL GROUP BY a.place_id ORDER BY a.place_id
                        """)
                    var tally: [Int64: Int] = [:]
                    var counts: PlaceTitles.Tally = []
                    while try counted.step() {
                        tally[counted.int64(0)] = counted.int(1)
                        counts.append((try #require(Place(encoded: counted.string(2))), counted.int(1)))
                    }
                    if round < 15 || !moments.isNull(3) {
                        #expect(moments.optionalString(3) == PlaceRows.encodeTally(tally), "round \(round), day \(day)")
                    }
                    #expect(moments.optionalString(1) == PlaceTitles.title(counts), "round \(round), day \(day)")
                    #expect(moments.optionalString(2) == MomentPlaces.encode(PlaceTitles.locationCounts(counts)), "round \(round), day \(day)")
                }
                // The lists, read straight from the rows, are the lists of the moments.
                #expect(try r.momentLists() == MomentLists.build(try r.moments()), "round \(round)")
            }
            try SearchStoreTests.expectMomentWordsConsistent(db, "round \(round)")
        }
        var inode: UInt64 = 0
        for round in 0..<30 {
            var batch: [FileOutcome] = []
            var removal = WriteBatch()
            switch round % 5 {
            case 0, 1, 2:
                // New photos only, on one to three days.
                for _ in 0..<(3 + Int(rng.next() % 8)) {
                    inode += 1
                    let path = "/lib/IMG_\(inode).jpg"
                    files.append((path, inode))
                    batch.append(Make.outcome(path, inode: inode, .media(media(1 + Int(rng.next() % 3)))))
                }
            case 3:
                // A photo rewritten (another day or place), one deleted, a sidecar naming a city.
                let changed = files[Int(rng.next() % UInt64(files.count))]
                batch.append(Make.outcome(changed.path, inode: changed.inode, .media(media(1 + Int(rng.next() % 3))), size: 99))
                let gone = files.remove(at: Int(rng.next() % UInt64(files.count)))
                if gone.path != changed.path {
                    removal.removedFiles = [(PathBytes("/lib"), Array(gone.path.dropFirst(5).utf8))]
                }
                inode += 1
                let named = files[Int(rng.next() % UInt64(files.count))]
                let sidecar = SidecarFields(date: nil, rating: nil, keywords: [], place: Place(city: "Bondi", source: .file))
                batch.append(Make.outcome(String(named.path.dropLast(4)) + ".xmp", inode: inode, .sidecar(sidecar)))
            default:
                // Hidden, then shown again with new photos on its day.
                let id = try #require(try asset(db, files[Int(rng.next() % UInt64(files.count))].path)?.id)
                _ = try db.write { try $0.set(.hidden, rng.next() % 2 == 0, ids: [id], now: Int64(round)) }
            }
            if round == 15 {
                // As migration 016 leaves the moments made before it: not counted.
                _ = try db.write { w in try w.connection.execute("UPDATE moments SET place_tally = NULL") }
            }
            if !batch.isEmpty { _ = try db.write { try $0.apply(Make.batch(batch), now: Int64(round)) } }
            if !removal.removedFiles.isEmpty { _ = try db.write { try $0.apply(removal, now: Int64(round)) } }
            try check(round)
        }
        let titled = try db.read { try $0.moments() }.filter { $0.title != nil }
        #expect(titled.count == 3)
    }

    @Test("Predicates on the place: city, region, country, countryCode with ==, !=, IN, CONTAINS, BEGINSWITH and null", arguments: [
        ("city == \"sydney\"", ["a", "b"]),
        ("city != \"Sydney\"", ["c", "d", "e"]),
        ("city == null", ["d", "e"]),
        ("city IN {\"Lisbon\", \"Porto\"}", ["c"]),
        ("city CONTAINS \"sbo\"", ["c"]),
        ("region BEGINSWITH \"new\"", ["a", "b"]),
        ("country == \"Portugal\" OR countryCode == \"AU\"", ["a", "b", "c"]),
        ("countryCode IN {\"PT\"}", ["c"]),
        ("countryCode != null AND NOT city == \"Lisbon\"", ["a", "b"]),
    ])
    func placePredicates(predicate: String, expected: [String]) throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/a.jpg", inode: 1, .media(Make.media(date: "2021-07-01T10:00:00"))),
                Make.outcome("/lib/b.jpg", inode: 2, .media(Make.media(date: "2021-07-01T11:00:00"))),
                Make.outcome("/lib/c.jpg", inode: 3, .media(Make.media(date: "2021-07-01T12:00:00", latitude: 38.7, longitude: -9.1))),
                Make.outcome("/lib/d.jpg", inode: 4, .media(Make.media(date: "2021-07-02T12:00:00", latitude: nil, longitude: nil))),
                Make.outcome("/lib/e.jpg", inode: 5, .media(Make.media(date: "2021-07-03T12:00:00", latitude: 0, longitude: 0))),
            ]), now: 1)
        }
        let query = AssetQuery(predicate: try AssetPredicate.parse(predicate))
        let found = try db.read { try $0.assets(query, limit: 100, offset: 0, now: 2) }
        let names = (found?.assets ?? []).map { String($0.path.string.dropFirst(5).prefix(1)) }.sorted()
        #expect(names == expected, "\(predicate)")
        #expect(found?.total == expected.count)
    }

    @Test func freshDatabaseHasNoPass() throws {
        defer { dir.remove() }
        #expect(try open().read { try $0.placingProgress() } == nil)
    }
}

/// `location WITHIN` and `location NEAR` against a brute-force check, with the antimeridian
/// and the poles.
@Suite("Location predicates")
struct LocationPredicateTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory("location") }

    static let points: [(String, Double?, Double?)] = [
        ("lisbon", 38.7223, -9.1393), ("sintra", 38.8029, -9.3817), ("porto", 41.1579, -8.6291), ("madrid", 40.4168, -3.7038),
        ("suva", -18.1416, 178.4419), ("taveuni", -16.80, -179.98), ("apia", -13.8333, -171.7667),
        ("northpole", 89.99, 120), ("svalbard", 78.22, 15.65), ("nowhere", nil, nil),
    ]

    func open() throws -> Database {
        let db = try Database(path: dir("index.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write {
            try $0.apply(Make.batch(Self.points.enumerated().map { i, p in
                Make.outcome("/lib/\(p.0).jpg", inode: UInt64(i + 1), .media(Make.media(date: "2021-07-0\(i % 9 + 1)T10:00:00",
                                                                                      latitude: p.1, longitude: p.2)))
            }), now: 1)
        }
        return db
    }

    func names(_ db: Database, _ predicate: String) throws -> [String] {
        let found = try db.read { try $0.assets(AssetQuery(predicate: try AssetPredicate.parse(predicate)), limit: 100, offset: 0, now: 2) }
        return (found?.assets ?? []).map { String($0.path.string.dropFirst(5).dropLast(4)) }.sorted()
    }

    @Test("WITHIN and NEAR", arguments: [
        ("location WITHIN {38, -10, 39, -9}", ["lisbon", "sintra"]),
        ("location WITHIN {-90, -180, 90, 180}", ["apia", "lisbon", "madrid", "northpole", "porto", "sintra", "suva", "svalbard", "taveuni"]),
        ("location WITHIN {-20, 178, -15, -179}", ["suva", "taveuni"]),            // across the antimeridian
        ("location WITHIN {-20, -179, -15, 178}", []),                            // the other way round: the rest of the world's band
        ("location NEAR {38.7223, -9.1393, 25}", ["lisbon", "sintra"]),
        ("location NEAR {38.7223, -9.1393, 20}", ["lisbon"]),
        ("location NEAR {-17.5, 179.9, 250}", ["suva", "taveuni"]),
        ("location NEAR {90, 0, 100}", ["northpole"]),
        ("location NEAR {90, 0, 1400}", ["northpole", "svalbard"]),
        ("NOT location NEAR {38.7223, -9.1393, 25} AND latitude > 30", ["madrid", "northpole", "porto", "svalbard"]),
    ])
    func areas(predicate: String, expected: [String]) throws {
        defer { dir.remove() }
        let db = try open()
        #expect(try names(db, predicate) == expected, "\(predicate)")
    }

    /// The assets the coordinates' index holds.
    static let located = "SELECT count(*) FROM assets INDEXED BY assets_location WHERE latitude IS NOT NULL AND longitude IS NOT NULL"

    @Test func theIndexFollowsTheAssets() throws {
        defer { dir.remove() }
        let db = try open()
        #expect(try db.read { try $0.connection.scalar(Self.located).int64 } == 9)
        // Moved to Madrid, and one deleted: the index follows in the same job.
        _ = try db.write {
            try $0.apply(Make.batch([Make.outcome("/lib/lisbon.jpg", inode: 1, .media(Make.media(latitude: 40.4168, longitude: -3.7038)))]), now: 2)
        }
        var removal = WriteBatch()
        removal.removedFiles = [(PathBytes("/lib"), Array("porto.jpg".utf8))]
        _ = try db.write { try $0.apply(removal, now: 3) }
        _ = try db.write { try $0.purge(deletedBefore: 4, now: 4) }
        #expect(try names(db, "location NEAR {40.4168, -3.7038, 1}") == ["lisbon", "madrid"])
        #expect(try db.read { try $0.connection.scalar(Self.located).int64 } == 8)
    }

    @Test("A database of schema 14 (coordinates in an R*Tree) finds them by the index once upgraded; the tree is gone")
    func upgradedToLocationsByBTree() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutLocationsByBTree + "PRAGMA user_version = 14;") }
            #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM asset_locations").int64 } == 9)
        }
        let db = try open()
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'asset_locations%'").int64 } == 0)
        #expect(try db.read { try $0.connection.scalar(Self.located).int64 } == 9)
        #expect(try names(db, "location NEAR {38.7223, -9.1393, 20}") == ["lisbon"])
        #expect(try names(db, "location NEAR {-17.5, 179.9, 250}") == ["suva", "taveuni"])
    }

    @Test("Bad areas are errors with their position", arguments: [
        "location WITHIN {38, -10, 39}", "location NEAR {38, -10}", "location WITHIN {91, 0, 92, 1}", "location WITHIN {39, 0, 38, 1}",
        "location NEAR {0, 0, 0}", "location NEAR {0, 200, 5}", "location == 3", "location WITHIN 3", "latitude WITHIN {0, 0, 1, 1}",
        "location NEAR {\"a\", 0, 1}",
    ])
    func badAreas(predicate: String) {
        #expect(throws: AssetPredicateError.self) { _ = try AssetPredicate.parse(predicate) }
    }

    @Test func canonicalText() throws {
        let p = try AssetPredicate.parse("location near {38.7, -9.1, 25} AND location within {1, 2, 3, 4}")
        #expect(p.description == "location NEAR {38.7, -9.1, 25.0} AND location WITHIN {1.0, 2.0, 3.0, 4.0}")
        #expect(try AssetPredicate.parse(p.description) == p)
    }
}

@Suite("Text search in the store")
struct SearchStoreTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory("search") }

    func open() throws -> Database {
        var options = Database.Options()
        options.places = TablePlaces()
        return try Database(path: dir("index.db").string, options: options)
    }

    func fill(_ db: Database) throws {
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        var zurich = Make.media(date: "2021-07-03T10:00:00", make: "NIKON CORPORATION", latitude: nil, longitude: nil)
        zurich.filePlace = Place(city: "Zürich", country: "Switzerland", source: .file)
        var beach = Make.media(date: "2021-07-02T10:00:00", latitude: nil, longitude: nil)
        beach.keywords = ["Beach", "Family"]
        _ = try db.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/São Paulo trip/IMG_1.jpg", inode: 1, .media(Make.media(date: "2021-07-01T10:00:00"))),
                Make.outcome("/lib/São Paulo trip/IMG_2.jpg", inode: 2, .media(beach)),
                Make.outcome("/lib/2021/zurich.jpg", inode: 3, .media(zurich)),
                Make.outcome("/lib/2021/lisbon-beach.jpg", inode: 4, .media(Make.media(date: "2021-07-04T10:00:00", latitude: 38.7, longitude: -9.1))),
            ]), now: 1)
        }
    }

    func names(_ db: Database, _ text: String, predicate: String? = nil, sort: String? = nil) throws -> [String] {
        var query = AssetQuery(predicate: try predicate.map { try AssetPredicate.parse($0) })
        if let sort { query.sort = try AssetSort.parse(sort) }
        let found = try db.read { try $0.search(try SearchQuery.parse(text), query, limit: 100, offset: 0, now: 2) }
        #expect(found.total == found.assets.count)
        return found.assets.map { String(decoding: $0.path.lastComponent, as: UTF8.self) }
    }

    @Test("Case and diacritics folded, prefixes as one types, every word required, ranked then newest", arguments: [
        ("sao paulo", ["IMG_2.jpg", "IMG_1.jpg"]),
        ("SÃO", ["IMG_2.jpg", "IMG_1.jpg"]),
        ("zurich", ["zurich.jpg"]),
        ("switzerland nikon", ["zurich.jpg"]),
        ("lisb", ["lisbon-beach.jpg"]),
        ("beach", ["IMG_2.jpg", "lisbon-beach.jpg"]),          // a keyword weighs more than a name
        ("family beach", ["IMG_2.jpg"]),
        ("sydney", ["IMG_1.jpg"]),                               // the gazetteer's place
        ("\"paulo trip\"", ["IMG_2.jpg", "IMG_1.jpg"]),
        ("\"trip paulo\"", []),
        ("lib", []),                                             // the root's own path is no word of an asset
        ("canon 2021", ["lisbon-beach.jpg"]),
    ])
    func searches(text: String, expected: [String]) throws {
        defer { dir.remove() }
        let db = try open()
        try fill(db)
        let found = try names(db, text)
        #expect(found == expected, "\(text): \(found)")
    }

    @Test func withAPredicateAndASort() throws {
        defer { dir.remove() }
        let db = try open()
        try fill(db)
        #expect(try names(db, "beach", predicate: "localDate == \"2021-07-04\"") == ["lisbon-beach.jpg"])
        #expect(try names(db, "paulo", sort: "localDateTime") == ["IMG_1.jpg", "IMG_2.jpg"])
    }

    @Test("The index follows the assets in their own jobs: a tagger's keyword, a move, Recently Deleted")
    func followsTheAssets() throws {
        defer { dir.remove() }
        let db = try open()
        try fill(db)
        let id = try #require(try db.read { try $0.assets(limit: 10, offset: 0) }.first { $0.path.string.hasSuffix("zurich.jpg") }?.id)
        _ = try db.write { try $0.editKeywords(.add(["Matterhorn"]), source: "tagger", ids: [id], now: 3) }
        #expect(try names(db, "matterhorn") == ["zurich.jpg"])
        var move = WriteBatch()
        move.removedFiles = [(PathBytes("/lib/2021"), Array("zurich.jpg".utf8))]
        _ = try db.write { try $0.apply(move, now: 4) }
        #expect(try names(db, "matterhorn") == [])
        #expect(try names(db, "zurich") == [])
        try Self.expectWordsConsistent(db)
    }

    @Test("A folder's words follow it when it moves; a camera's and a file's words follow the file")
    func followsFoldersAndFiles() throws {
        defer { dir.remove() }
        let db = try open()
        try fill(db)
        var move = WriteBatch()
        move.movedDirectories = [DirectoryMove(from: "/lib/São Paulo trip", to: "/lib/2021/Rio de Janeiro")]
        _ = try db.write { try $0.apply(move, now: 3) }
        #expect(try names(db, "paulo") == [])
        #expect(try names(db, "rio janeiro") == ["IMG_2.jpg", "IMG_1.jpg"])
        #expect(try names(db, "2021").count == 4)            // a folder's words are its subfolders' too
        var rename = WriteBatch()
        rename.movedFiles = [FileMove(from: "/lib/2021/zurich.jpg", to: "/lib/2021/matterhorn.jpg")]
        _ = try db.write { try $0.apply(rename, now: 4) }
        #expect(try names(db, "matterhorn") == ["matterhorn.jpg"])
        #expect(try names(db, "nikon") == ["matterhorn.jpg"])
        try Self.expectWordsConsistent(db)
    }

    @Test("An asset's words and coordinates are written at the end of the transaction that inserts it, as its row is then: changed, moved or deleted before that, the indexes agree")
    func indexedAtTheEndOfTheTransaction() throws {
        defer { dir.remove() }
        let db = try open()
        try fill(db)
        let (pending, words) = try db.write { w in
            try w.connection.transaction { () throws(StoreError) -> (Int64?, [Int64]) in
                // A copy of an asset with another id, path, keywords and place.
                func insert(_ name: String, _ latitude: String) throws(StoreError) {
                    try w.connection.execute("""
                        CREATE TEMP TABLE copied AS SELECT * FROM assets LIMIT 1;
                        UPDATE copied SET pk = NULL, id = 'a_k3j5x7q2m4n6p7r2\(name.prefix(4))', path = CAST('/lib/new/\(name).jpg' AS BLOB),
                            keywords = 'Leica', latitude = \(latitude), longitude = 10.5;
                        INSERT INTO assets SELECT * FROM copied;
                        DROP TABLE copied;
                        """)
                }
                try insert("kept", "47.1")        // then its words and coordinates change
                try insert("dropped", "46.0")     // then deleted
                try insert("plain", "NULL")       // no coordinates
                try insert("hidden", "45.0")      // then hidden: in no place's count
                try w.connection.execute("""
                    UPDATE assets SET is_hidden = 1 WHERE id LIKE '%hidd';
                    UPDATE assets SET path = CAST('/lib/new/renamed.jpg' AS BLOB), keywords = 'Hasselblad', latitude = 48.5
                        WHERE id = 'a_k3j5x7q2m4n6p7r2kept';
                    DELETE FROM assets WHERE id = 'a_k3j5x7q2m4n6p7r2drop';
                    UPDATE assets SET latitude = 1.0 WHERE path = CAST('/lib/2021/lisbon-beach.jpg' AS BLOB);
                    """)
                let pending = try w.connection.scalar("SELECT count(*) FROM assets_unindexed").int64
                try w.assets.indexInserted()
                let s = try w.connection.statement("SELECT rowid FROM asset_words WHERE asset_words MATCH 'hasselblad OR leica' ORDER BY rowid")
                defer { s.reset() }
                var words: [Int64] = []
                while try s.step() { words.append(s.int64(0)) }
                return (pending, words)
            }
        }
        #expect(pending == 3)
        #expect(words.count == 3)          // "kept" (Hasselblad), "plain" and "hidden" (Leica); not the deleted one
        #expect(try names(db, "renamed") == ["renamed.jpg"])
        #expect(try names(db, "hasselblad") == ["renamed.jpg"])
        #expect(try names(db, "kept") == [] && names(db, "dropped") == [])
        #expect(try names(db, "leica") == ["plain.jpg"])
        let near = try db.read { r in
            try r.connection.scalar("SELECT group_concat(latitude) FROM (SELECT latitude FROM assets INDEXED BY assets_location WHERE latitude > 0 AND longitude IS NOT NULL ORDER BY 1)").string
        }
        #expect(near == "1.0,45.0,48.5")
        try Self.expectWordsConsistent(db)
    }

    @Test("A database of schema 13 (words and coordinates by a trigger per row) keeps them when upgraded, and writes new ones per transaction")
    func upgradedToIndexesPerTransaction() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            try fill(db)
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutIndexesPerTransaction + "PRAGMA user_version = 13;") }
        }
        let db = try open()
        #expect(try names(db, "zurich") == ["zurich.jpg"])
        _ = try db.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/2022/oslo.jpg", inode: 9, .media(Make.media(date: "2022-02-01T10:00:00", latitude: 59.9, longitude: 10.7))),
            ]), now: 6)
        }
        #expect(try names(db, "oslo") == ["oslo.jpg"])
        try Self.expectWordsConsistent(db)
    }

    @Test("A database of schema 19 (a moment's words by a trigger per row, its cities with their counts) gets them again without the counts, and per transaction after")
    func upgradedToMomentWordsPerTransaction() throws {
        defer { dir.remove() }
        func momentDays(_ db: Database, _ text: String) throws -> [Int] {
            try db.read { try $0.collectionMatches(try SearchQuery.parse(text), limit: 10) }.momentDays
        }
        do {
            let db = try open()
            try fill(db)
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutMomentWordsPerTransaction + "PRAGMA user_version = 19;") }
            #expect(try momentDays(db, "1").count == 3)  // Sydney's, Zürich's and Lisbon's single photos
        }
        let db = try open()
        #expect(try momentDays(db, "1") == [])
        #expect(try momentDays(db, "zurich") == [try #require(MomentGrouping.day(ofLocalDate: "2021-07-03"))])
        try Self.expectMomentWordsConsistent(db)
        _ = try db.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/2021/lisbon-2.jpg", inode: 9, .media(Make.media(date: "2021-07-04T11:00:00", latitude: 38.7, longitude: -9.1))),
                Make.outcome("/lib/2021/sydney.jpg", inode: 10, .media(Make.media(date: "2021-07-04T12:00:00"))),
            ]), now: 6)
        }
        #expect(try momentDays(db, "sydney lisbon") == [try #require(MomentGrouping.day(ofLocalDate: "2021-07-04"))])
        try Self.expectMomentWordsConsistent(db)
    }

    @Test("A database of schema 22 gets the index of its own words' first letters: prefixes of one and two letters find what they found")
    func upgradedToWordPrefixes() throws {
        defer { dir.remove() }
        let letters = ["i", "z", "n", "2", "c", "l", "b", "s", "j", "im", "zu", "20", "ni", "jp"]
        var before: [[String]] = []
        do {
            let db = try open()
            try fill(db)
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutWordPrefixes + "PRAGMA user_version = 22;") }
            before = try letters.map { try names(db, $0) }
        }
        let db = try open()
        #expect(try db.read { try $0.connection.scalar("SELECT sql FROM sqlite_schema WHERE name = 'asset_words'").string }?
            .contains("prefix = '1 2'") == true)
        #expect(try letters.map { try names(db, $0) } == before)
        #expect(before.contains { !$0.isEmpty })
        try Self.expectWordsConsistent(db)
    }

    @Test("A database of schema 21 gets its counts of folder, place and camera together, kept as assets are hidden, moved, re-read and deleted")
    func upgradedToGroupCounts() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            try fill(db)
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutGroupCounts + "PRAGMA user_version = 21;") }
        }
        let db = try open()
        #expect(try db.read { try $0.connection.scalar("SELECT sum(assets) FROM group_counts").int64 } ?? 0 > 0)
        try Self.expectWordsConsistent(db)
        let all = try db.read { try $0.assets(limit: 100, offset: 0) }
        _ = try db.write { try $0.set(.hidden, true, ids: [all[0].id], now: 3) }
        try Self.expectWordsConsistent(db)
        _ = try db.write { try $0.set(.hidden, false, ids: [all[0].id], now: 4) }
        // Re-read at another place and with another camera; then moved to another folder.
        var leica = Make.media(date: "2021-07-03T10:00:00", make: "Leica", latitude: 38.7, longitude: -9.1)
        leica.model = "Q2"
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/2021/zurich.jpg", inode: 3, .media(leica))]), now: 5) }
        try Self.expectWordsConsistent(db)
        var moved = WriteBatch()
        moved.removedFiles = [(PathBytes("/lib/2021"), Array("zurich.jpg".utf8))]
        _ = try db.write { try $0.apply(moved, now: 6) }
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/elsewhere/zurich.jpg", inode: 3, .media(leica))]), now: 7) }
        try Self.expectWordsConsistent(db)
        // A visible asset's row deleted (as the writer deletes a copy that turned out to be a
        // deleted asset's file come back): its group loses it.
        _ = try db.write { w in
            try w.connection.execute("""
                UPDATE files SET asset_pk = NULL, role = NULL WHERE asset_pk = (SELECT max(pk) FROM assets WHERE is_hidden = 0);
                DELETE FROM assets WHERE pk = (SELECT max(pk) FROM assets WHERE is_hidden = 0);
                """)
        }
        try Self.expectWordsConsistent(db)
        var gone = WriteBatch()
        gone.removedFiles = all.suffix(2).map { ($0.path.parent, $0.path.lastComponent) }
        _ = try db.write { try $0.apply(gone, now: 8) }
        _ = try db.write { try $0.purge(deletedBefore: 9, now: 9) }
        try Self.expectWordsConsistent(db)
    }

    @Test("A database of schema 20 (a camera's words among the asset's own) gets its cameras as groups: the same assets found, and a changed camera found by its new words only")
    func upgradedToCameras() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            try fill(db)
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutCameras + "PRAGMA user_version = 20;") }
            #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM asset_words WHERE asset_words MATCH 'camera : nikon'").int64 } == 1)
        }
        let db = try open()
        #expect(try names(db, "nikon") == ["zurich.jpg"])
        #expect(try names(db, "corporation zurich") == ["zurich.jpg"])
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM asset_words WHERE asset_words MATCH 'nikon'").int64 } == 0,
                "no camera among the asset's own words")
        #expect(try db.read { try $0.groupedSearch(try SearchQuery.parse("nikon").terms[0], needed: 10, wanted: 10) }?.found?.total == 1)
        try Self.expectWordsConsistent(db)
        // The same file read again with another camera; a new file with the old one.
        var leica = Make.media(date: "2021-07-03T10:00:00", make: "Leica")
        leica.model = "Q2"
        _ = try db.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/2021/zurich.jpg", inode: 3, .media(leica)),
                Make.outcome("/lib/2021/oslo.jpg", inode: 9, .media(Make.media(date: "2021-07-05T10:00:00", make: "NIKON CORPORATION"))),
            ]), now: 6)
        }
        #expect(try names(db, "nikon") == ["oslo.jpg"])
        #expect(try names(db, "leica q2") == ["zurich.jpg"])
        #expect(try names(db, "q2") == ["zurich.jpg"])
        try Self.expectWordsConsistent(db)
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM cameras").int64 } == 3)  // Canon, Nikon, Leica Q2
    }

    @Test("A user album's title finds its assets, as it is renamed and deleted")
    func userAlbumTitles() throws {
        defer { dir.remove() }
        let db = try open()
        try fill(db)
        let ids = try db.read { try $0.assets(limit: 10, offset: 0) }.filter { $0.path.string.hasSuffix("IMG_1.jpg") }.map(\.id)
        let album = try db.write { try $0.createUserAlbum(title: "Best of Brazil", folder: nil, now: 3) }.id
        _ = try db.write { try $0.addToUserAlbum(album, ids: ids, now: 3) }
        #expect(try names(db, "brazil") == ["IMG_1.jpg"])
        _ = try db.write { try $0.renameUserCollection(album, title: "Carnival", now: 4) }
        #expect(try names(db, "brazil") == [])
        #expect(try names(db, "carn") == ["IMG_1.jpg"])
        _ = try db.write { try $0.deleteUserCollection(album, now: 5) }
        #expect(try names(db, "carnival") == [])
        try Self.expectWordsConsistent(db)
    }

    @Test("The ranked engine and SQL's join agree: order, total and pages, with hidden and deleted assets and bursts, walking or reading by pk, one word by its places' and folders' counts or not")
    func rankedAgreesWithSQL() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        var rng = SystemRandomNumberGenerator()
        let folders = ["2019/Lisbon trip", "2019/Porto", "2020/beach days", "2020/Lisbon again", "misc"]
        let words = ["beach", "family", "lisbon", "sunset", "dog", "nikon"]
        var files: [FileOutcome] = []
        for i in 0..<400 {
            let date = "20\(19 + i % 3)-0\(1 + i % 9)-1\(i % 10)T1\(i % 7):00:00"
            let latitude: Double? = i % 3 == 0 ? nil : Bool.random(using: &rng) ? 38.7 : -33.9
            var media = Make.media(date: date,
                                   make: ["Canon", "NIKON CORPORATION", nil][i % 3],
                                   latitude: latitude, longitude: 151)
            media.model = [nil, "Canon EOS R5", "NIKON Z 6"][i % 5 % 3]
            media.keywords = (0..<Int.random(in: 0...2, using: &rng)).map { _ in words.randomElement(using: &rng)! }
            if i % 11 == 0 { media.burstIdentifier = "B\(i % 3)" }
            let name = ["IMG_\(i).jpg", "beach \(i).jpg", "DSC\(i % 50).jpg"][i % 3]
            files.append(Make.outcome("/lib/\(folders[i % folders.count])/\(name)", inode: UInt64(i + 1), .media(media)))
        }
        _ = try db.write { try $0.apply(Make.batch(files), now: 1) }
        let all = try db.read { try $0.assets(limit: 1000, offset: 0) }
        _ = try db.write { try $0.set(.hidden, true, ids: all.prefix(40).map(\.id), now: 2) }
        var gone = WriteBatch()
        gone.removedFiles = all.suffix(30).map { ($0.path.parent, $0.path.lastComponent) }
        _ = try db.write { try $0.apply(gone, now: 3) }
        // A rare word is looked up first, whatever the query's order (matches: img 134, "2019"* 127,
        // porto 64, nothing 0); the result does not change.
        let terms = try SearchQuery.parse("img 2019 porto nothing").terms
        #expect(try db.read { try $0.rareFirst(terms, few: 100) }.map(\.text) == ["porto", "img", "2019", "nothing"])
        #expect(try db.read { try $0.rareFirst(terms, few: 130) }.map(\.text) == ["2019", "img", "porto", "nothing"])
        #expect(try db.read { try $0.rareFirst(Array(terms.prefix(2)), few: 100) }.map(\.text) == ["img", "2019"], "none rare: as asked")
        // One word is answered by its places' and folders' counts unless its own matches are
        // more than it reads; then by the pass. A word of no place or folder is the pass's too.
        let lisb = try SearchQuery.parse("lisb").terms[0], beach = try SearchQuery.parse("beach").terms[0]
        #expect(try db.read { try $0.groupedSearch(lisb, needed: 10, wanted: 10) }?.found?.total ?? 0 > 0)
        #expect(try db.read { try $0.groupedSearch(beach, needed: 10, wanted: 10) }?.found != nil)
        #expect(try db.read { try $0.groupedSearch(beach, needed: 10, wanted: 10, ownAtMost: 3) }?.found == nil)
        #expect(try db.read { try $0.groupedSearch(try SearchQuery.parse("img").terms[0], needed: 10, wanted: 10) } == nil)
        // A camera's word too, its keywords ("nikon") weighing more than the camera read.
        let nikon = try SearchQuery.parse("nikon").terms[0]
        #expect(try db.read { try $0.groupedSearch(nikon, needed: 10, wanted: 10) }?.found?.total ?? 0 > 0)
        #expect(try db.read { try $0.groupedSearch(nikon, needed: 10, wanted: 10, ownAtMost: 3) }?.found == nil)
        // Every own match changes a camera word's score (a name or keyword weighs more than a
        // camera): none is left unread, whatever the number read one by one.
        let nikonAnswer = try db.read { try $0.rankedSearch(try SearchQuery.parse("nikon"), AssetQuery(), needed: 30, wanted: 60,
                                                            readAtMost: 2_000, grouped: false) }
        for atMost in [1, 10, 20, 30, 40, 50, 60, 70, 80, 5_000] {
            let found = try db.read { try $0.groupedSearch(nikon, needed: 30, wanted: 60, ownAtMost: atMost) }?.found
            #expect(found == nil || (found!.total == nikonAnswer.total && found!.pks == nikonAnswer.pks), "\(atMost)")
        }
        func compare(_ texts: [String]) throws {
          for text in texts {
            let q = try SearchQuery.parse(text)
            for hidden in [false, true] {
                var query = AssetQuery()
                query.includeHidden = hidden
                for (limit, offset) in [(500, 0), (7, 3), (50, 120), (10, 1000)] {
                    let joined = try db.read { try $0.search(q, query, limit: limit, offset: offset, now: 4, ranked: false) }
                    for readAtMost in [0, 2_000] {
                        for grouped in [true, false] {
                            let ranked = try db.read {
                                try $0.search(q, query, limit: limit, offset: offset, now: 4, readAtMost: readAtMost, grouped: grouped, keeps: false)
                            }
                            let what = "\(text) \(hidden) \(limit) \(offset) \(readAtMost) \(grouped)"
                            #expect(ranked.total == joined.total, "\(what)")
                            #expect(ranked.assets.map(\.id) == joined.assets.map(\.id), "\(what)")
                        }
                    }
                }
            }
          }
        }
        try compare(["2019", "lisb", "beach", "porto 2019", "2019 porto", "img", "canon", "family beach", "beach family img",
                     "img beach family", "\"lisbon trip\"", "sydney dog", "dog sydney", "img dog lisb", "nothing",
                     "nikon", "corporation", "eos", "nik", "nikon beach", "canon lisb", "lisb canon 2019", "canon nikon", "z",
                     "n", "a", "l"])

        // The counts the groups keep follow the changes: assets shown again, files moved into a
        // matched folder, new ones at a matched place and in a burst, others gone.
        _ = try db.write { try $0.set(.hidden, false, ids: all.prefix(10).map(\.id), now: 5) }
        var changes = WriteBatch()
        let moved = all.filter { $0.path.parent == PathBytes("/lib/misc") }.prefix(12)
        changes.removedFiles = moved.map { ($0.path.parent, $0.path.lastComponent) } + all.dropFirst(60).prefix(5).map { ($0.path.parent, $0.path.lastComponent) }
        var added: [FileOutcome] = []
        for (n, asset) in moved.enumerated() {
            var file = try #require(files.first { $0.directory == asset.path.parent && $0.name == asset.path.lastComponent })
            file.directory = PathBytes("/lib/2020/Lisbon again")
            file.name = Array("moved \(n).jpg".utf8)
            added.append(file)
        }
        for n in 0..<20 {
            var media = Make.media(date: "2023-05-0\(1 + n % 9)T1\(n % 10):00:00", latitude: 38.7, longitude: 151)
            if n % 3 == 0 { media.burstIdentifier = "B1" }
            if n % 7 == 0 { media.keywords = ["Porto"] } else if n % 5 == 0 { media.keywords = ["2021"] }
            added.append(Make.outcome("/lib/2019/Porto/porto \(n).jpg", inode: UInt64(1_000 + n), .media(media)))
        }
        // A camera changed (a file read again), and a folder named as a camera is.
        for asset in all.dropFirst(70).prefix(4) {
            var file = try #require(files.first { $0.directory == asset.path.parent && $0.name == asset.path.lastComponent })
            if case .media(var media) = file.kind {
                media.make = "Leica"
                media.model = "Q2"
                file.kind = .media(media)
            }
            added.append(file)
        }
        for n in 0..<6 {
            added.append(Make.outcome("/lib/canon shots/shot \(n).jpg", inode: UInt64(2_000 + n),
                                      .media(Make.media(date: "2022-03-0\(1 + n)T10:00:00", make: "Canon"))))
        }
        changes.files = added
        #expect(try db.read { try $0.groupedSearch(try SearchQuery.parse("canon").terms[0], needed: 10, wanted: 10) } != nil)
        _ = try db.write { try $0.apply(changes, now: 6) }
        #expect(try db.read { try $0.groupedSearch(try SearchQuery.parse("canon").terms[0], needed: 10, wanted: 10) }?.found != nil,
                "a word of a camera and a folder: the camera's assets in the folder counted as the folder's")
        try compare(["2019", "lisb", "lisbon", "porto", "sunset", "2020", "beach", "again", "nothing",
                     "canon", "leica", "q2", "nikon", "leica lisb", "nikon 2020", "canon shots", "n"])
        try Self.expectWordsConsistent(db)
        // Many own matches: only those that change a score are read ("porto": 20 file names in
        // its folder change nothing, 3 keywords weigh more than the folder).
        let portoQuery = try SearchQuery.parse("porto"), porto = portoQuery.terms[0]
        let reference = try db.read { try $0.rankedSearch(portoQuery, AssetQuery(), needed: 30, wanted: 60,
                                                          readAtMost: 2_000, grouped: false) }
        for atMost in [2, 5, 10, 5_000] {
            let found = try db.read { try $0.groupedSearch(porto, needed: 30, wanted: 60, ownAtMost: atMost) }?.found
            #expect(found.map { [Int64($0.total)] + $0.pks } == (atMost < 5 ? nil : [Int64(reference.total)] + reference.pks), "\(atMost)")
        }
        // Several words, none rare: one word's places and folders drive, the others are told
        // from the index entries; the same as the pass, page by page.
        var joined = 0, intersected = 0
        for text in ["porto 2019", "2019 porto", "lisb 2020", "lisbon again", "beach family", "family beach img",
                     "sunset lisb", "porto sunset 2019", "lisb lisb", "2019 2020", "img dog", "again porto", "beach lisb",
                     "nikon lisb", "lisb nikon", "nikon 2019", "2019 nikon nikon", "corporation sunset", "leica 2019",
                     "nikon z", "eos canon"] {
            let q = try SearchQuery.parse(text)
            for (needed, wanted) in [(10, 20), (1, 500), (0, 0), (45, 45)] {
                let passed = try db.read { try $0.rankedSearch(q, AssetQuery(), needed: needed, wanted: wanted, readAtMost: 2_000, grouped: false) }
                if let found = try db.read({ try $0.joinedSearch(q.terms, needed: needed, wanted: wanted) }) {
                    joined += 1
                    #expect(found.total == passed.total && found.pks == passed.pks, "\(text) \(needed) \(wanted)")
                }
                if let found = try db.read({ try $0.joinedSearch(q.terms, needed: needed, wanted: wanted, intersecting: false) }) {
                    #expect(found.total == passed.total && found.pks == passed.pks, "\(text) \(needed) \(wanted) not intersecting")
                }
                // Where each word is one kind of group, counted where they meet.
                let met = try db.read { r -> (pks: [Int64], total: Int)? in
                    var words = try r.searchWords(q.terms)
                    guard let driver = SearchJoin.driver(words) else { return nil }
                    try r.addOwnMatches(&words, q.terms)
                    #expect(try r.intersectedSearch(words, driver: driver, needed: needed, wanted: wanted, readAtMost: 0) == nil,
                            "the hidden assets are more than it reads")
                    return try r.intersectedSearch(words, driver: driver, needed: needed, wanted: wanted)
                }
                if let met {
                    intersected += 1
                    #expect(met.total == passed.total && met.pks == passed.pks, "\(text) \(needed) \(wanted) intersected")
                }
            }
        }
        #expect(joined >= 20, "most of these are answered by the join")
        #expect(intersected >= 24, "\(intersected) answered where the groups meet")
        let lisb2020 = try SearchQuery.parse("lisb 2020").terms
        #expect(try db.read { try $0.joinedSearch(lisb2020, needed: 10, wanted: 10, matchesAtMost: 3) } == nil)
        #expect(try db.read { try $0.joinedSearch(try SearchQuery.parse("img dog").terms, needed: 10, wanted: 10) } == nil,
                "no word of a place or folder")
        let beachLisb = try SearchQuery.parse("beach lisb").terms
        #expect(try db.read { try $0.joinedSearch(beachLisb, needed: 10, wanted: 10) } != nil, "beach drives, its names outside its folder read")
        #expect(try db.read { try $0.joinedSearch(beachLisb, needed: 10, wanted: 10, outsideAtMost: 0) } == nil,
                "beach's own matches outside its folder are too many")
        #expect(try db.read { try $0.joinedSearch(try SearchQuery.parse("beach family").terms, needed: 10, wanted: 10) } == nil,
                "the join saves nothing when the other words have no place or folder")

        // A word whose folders hold most of the library ("20"*: 2019's and 2020's): its own
        // matches that change a score are found from the other folders' assets.
        let twenty = try SearchQuery.parse("20")
        let twentyAnswer = try db.read { try $0.rankedSearch(twenty, AssetQuery(), needed: 30, wanted: 60, readAtMost: 2_000, grouped: false) }
        var twentyRead = 0
        for atMost in [0, 1, 2, 5, 10, 20, 40, 80, 160, 5_000] {
            let found = try db.read { try $0.groupedSearch(twenty.terms[0], needed: 30, wanted: 60, ownAtMost: atMost) }?.found
            if found != nil { twentyRead += 1 }
            #expect(found == nil || (found!.total == twentyAnswer.total && found!.pks == twentyAnswer.pks), "20 \(atMost)")
        }
        #expect(twentyRead >= 2)
        // Too many that change scores: the pass goes on from the weights made for them.
        for text in ["porto", "beach", "lisb", "2019", "20", "2", "c"] {
            let q = try SearchQuery.parse(text)
            let passed = try db.read { try $0.rankedSearch(q, AssetQuery(), needed: 30, wanted: 60, readAtMost: 2_000, grouped: false) }
            for atMost in [0, 2] {
                let goneOn = try db.read { try $0.rankedSearch(q, AssetQuery(), needed: 30, wanted: 60, readAtMost: 2_000, ownAtMost: atMost) }
                #expect(goneOn.total == passed.total && goneOn.pks == passed.pks, "\(text) \(atMost)")
            }
        }
    }

    @Test("Words of one kind of group each are counted where the groups meet, in the span of the other words' visible assets: a hidden asset outside it is neither counted nor taken off")
    func intersectionSpan() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        func lisbon(_ date: String) -> MediaFields {
            var media = Make.media(date: date, make: nil, latitude: nil, longitude: nil)
            media.filePlace = Place(city: "Lisbon", country: "Portugal", source: .file)
            return media
        }
        var files = (0..<3).map { Make.outcome("/lib/trip/t\($0).jpg", inode: UInt64(1 + $0), .media(lisbon("2021-05-0\(1 + $0)T10:00:00"))) }
        files.append(Make.outcome("/lib/trip/old.jpg", inode: 9, .media(lisbon("2019-01-01T10:00:00"))))
        files += (0..<6).map { Make.outcome("/lib/home/h\($0).jpg", inode: UInt64(20 + $0), .media(lisbon("2021-06-0\(1 + $0)T10:00:00"))) }
        _ = try db.write { try $0.apply(Make.batch(files), now: 1) }
        let old = try db.read { try $0.assets(limit: 100, offset: 0) }.filter { $0.path.string.hasSuffix("old.jpg") }.map(\.id)
        _ = try db.write { try $0.set(.hidden, true, ids: old, now: 2) }
        let q = try SearchQuery.parse("trip lisbon")
        let passed = try db.read { try $0.rankedSearch(q, AssetQuery(), needed: 10, wanted: 10, readAtMost: 2_000, grouped: false) }
        let met = try db.read { r -> (pks: [Int64], total: Int)? in
            var words = try r.searchWords(q.terms)
            guard let driver = SearchJoin.driver(words) else { return nil }
            #expect(words[driver].folders.count == 1, "the folder drives")
            try r.addOwnMatches(&words, q.terms)
            return try r.intersectedSearch(words, driver: driver, needed: 10, wanted: 10)
        }
        #expect(passed.total == 3)
        #expect(met?.total == 3 && met?.pks == passed.pks)
        #expect(SearchIntersection.overlap([("2019-01", "2019-12"), ("2019-06", "2020-03")]) == ("2019-06", "2019-12"))
        #expect(SearchIntersection.overlap([("2019-01", "2019-12"), nil]) == ("\u{10FFFF}", ""))
    }

    @Test func walkOrRead() {
        #expect(SearchScores.walks(members: 500_000, wanted: 100, assets: 1_000_000))
        #expect(!SearchScores.walks(members: 50, wanted: 100, assets: 1_000_000))
        #expect(!SearchScores.walks(members: 2_000, wanted: 100, assets: 1_000_000))
        #expect(SearchScores.walks(members: 500_000, wanted: 500_000, assets: 1_000_000))   // all wanted: a walk is cheaper
        #expect(!SearchScores.walks(members: 30_000, wanted: 30_000, assets: 1_000_000))
    }

    /// Every word list agrees with the rows it is made from (FTS5's own check, against the
    /// content for `asset_words`).
    static func expectWordsConsistent(_ db: Database) throws {
        _ = try db.write { w in
            try w.connection.execute("""
                INSERT INTO asset_words (asset_words, rank) VALUES ('integrity-check', 1);
                INSERT INTO folder_words (folder_words) VALUES ('integrity-check');
                INSERT INTO place_words (place_words) VALUES ('integrity-check');
                INSERT INTO camera_words (camera_words) VALUES ('integrity-check');
                INSERT INTO keyword_words (keyword_words) VALUES ('integrity-check');
                INSERT INTO album_words (album_words) VALUES ('integrity-check');
                INSERT INTO moment_words (moment_words) VALUES ('integrity-check');
                """)
        }
        let counts = try db.read { r in
            try ["folder_words", "directories", "place_words", "places", "camera_words", "cameras", "keyword_words",
                 "(SELECT DISTINCT keyword FROM asset_keywords)", "album_words", "user_albums"].map {
                try r.connection.scalar("SELECT count(*) FROM \($0)").int64 ?? -1
            }
        }
        for i in stride(from: 0, to: counts.count, by: 2) { #expect(counts[i] == counts[i + 1], "\(i / 2): \(counts)") }
        // The kept counts of places equal a recount.
        let differing = try db.read { r in
            try r.connection.scalar("""
                SELECT count(*) FROM (
                    SELECT place_id, assets FROM place_counts WHERE assets != 0
                    EXCEPT SELECT place_id, count(*) FROM assets
                        WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY place_id)
                """).int64
        }
        let missing = try db.read { r in
            try r.connection.scalar("""
                SELECT count(*) FROM (
                    SELECT place_id, count(*) FROM assets
                        WHERE place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY place_id
                    EXCEPT SELECT place_id, assets FROM place_counts)
                """).int64
        }
        #expect(differing == 0 && missing == 0, "place counts differ from a recount: \(differing ?? -1), \(missing ?? -1)")
        // And the cameras': each visible asset's camera is the one its make, model and lens name.
        let cameras = try db.read { r in
            try r.connection.scalar("""
                SELECT (SELECT count(*) FROM (
                        SELECT camera_id, assets FROM camera_counts WHERE assets != 0
                        EXCEPT SELECT camera_id, count(*) FROM assets
                            WHERE camera_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY camera_id))
                    + (SELECT count(*) FROM (
                        SELECT camera_id, count(*) FROM assets
                            WHERE camera_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL GROUP BY camera_id
                        EXCEPT SELECT camera_id, assets FROM camera_counts))
                    + (SELECT count(*) FROM assets a LEFT JOIN cameras c ON c.id = a.camera_id
                        WHERE (a.camera_id IS NULL) != (coalesce(a.make, a.model, a.lens_model) IS NULL)
                           OR c.make != coalesce(a.make, '') OR c.model != coalesce(a.model, '')
                           OR c.lens_model != coalesce(a.lens_model, ''))
                """).int64
        }
        #expect(cameras == 0, "camera counts or ids differ from a recount: \(cameras ?? -1)")
        // And each folder's, place's and camera's together.
        let groups = try db.read { r in
            try r.connection.scalar("""
                SELECT (SELECT count(*) FROM (SELECT * FROM group_counts EXCEPT \(Self.groupRecount)))
                     + (SELECT count(*) FROM (\(Self.groupRecount) EXCEPT SELECT * FROM group_counts))
                """).int64
        }
        #expect(groups == 0, "group counts differ from a recount: \(groups ?? -1)")
        // No inserted asset waits for its words once a transaction has committed.
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM assets_unindexed").int64 } == 0)
        try expectMomentWordsConsistent(db)
    }

    /// The visible assets of each folder, place and camera together, as `group_counts` keeps them.
    static let groupRecount = """
        SELECT directory_id, coalesce(place_id, 0), coalesce(camera_id, 0), count(*) FROM assets
        WHERE is_hidden = 0 AND deleted_at IS NULL GROUP BY 1, 2, 3
        """

    /// Each moment with a title or cities has its words: the title, and the cities without
    /// their counts; no other day has any, and no moment waits for its words.
    static func expectMomentWordsConsistent(_ db: Database, _ comment: Comment? = nil) throws {
        func rows(_ sql: String, names: (String?) -> String?) throws -> [String] {
            try db.read { r in
                let s = try r.connection.statement(sql)
                defer { s.reset() }
                var out: [String] = []
                while try s.step() { out.append("\(s.int(0)) \(s.optionalString(1) ?? "-") \(names(s.optionalString(2)) ?? "-")") }
                return out
            }
        }
        let words = try rows("SELECT rowid, title, location_names FROM moment_words ORDER BY rowid") { $0 }
        let moments = try rows("""
            SELECT day, title, location_names FROM moments WHERE title IS NOT NULL OR location_names IS NOT NULL ORDER BY day
            """) { stored in stored.map { MomentPlaces.decode($0).map { $0.name + "\u{1F}" }.joined() } }
        #expect(words == moments, comment)
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM moments_unindexed").int64 } == 0, comment)
    }

    @Test("A database from before the search sources gets every asset's, folder's and place's words when it is opened")
    func rebuiltOnUpgrade() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            try fill(db)
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutSearchSources + "PRAGMA user_version = 11;") }
        }
        let db = try open()
        #expect(try names(db, "zurich") == ["zurich.jpg"])
        #expect(try names(db, "2021") == ["lisbon-beach.jpg", "zurich.jpg"])
        #expect(try db.read { try $0.connection.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'asset_search'").int64 } == 0)
        try SearchStoreTests.expectWordsConsistent(db)
    }
}
