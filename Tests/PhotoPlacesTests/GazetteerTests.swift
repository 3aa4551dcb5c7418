import PhotoModel
@testable import PhotoPlaces
import PhotoTesting
import Testing

/// The naming rule on a small table of places, the k-d tree against a brute-force search, and
/// reverse lookups of known coordinates in the GeoNames data libgeonames carries.
@Suite struct GazetteerTests {
    static func entry(_ name: String, _ lat: Double, _ lon: Double, population: Int = 50_000, cc: String = "XX") -> GazetteerEntry {
        GazetteerEntry(name: name, region: "R-\(name)", country: "C-\(cc)", countryCode: cc, timeZone: "Etc/UTC",
                       latitude: lat, longitude: lon, population: population)
    }

    /// Distances from a town of 50,000 (reach 9.8 km) due north of it.
    @Test(arguments: [
        (5.0, "city"), (9.5, "city"), (12.0, "near"), (29.0, "near"), (31.0, "region"), (99.0, "region"), (101.0, "none"),
    ])
    func namingRule(kilometres: Double, expected: String) {
        let g = Gazetteer([Self.entry("Town", 0, 0)])
        let lat = kilometres / (Gazetteer.earthRadius * .pi / 180)
        let place = g.place(latitude: lat, longitude: 0)
        switch expected {
        case "city": #expect(place?.city == "Town" && place?.near == nil && place?.country == "C-XX")
        case "near": #expect(place?.city == nil && place?.near == "Town" && place?.region == "R-Town")
        case "region": #expect(place?.city == nil && place?.near == nil && place?.region == "R-Town" && place?.countryCode == "XX")
        default: #expect(place == nil)
        }
        #expect(place.map { $0.source == .geonames && $0.timeZone == "Etc/UTC" } ?? true)
    }

    @Test func reachGrowsWithPopulation() {
        #expect(abs(Gazetteer.reach(population: 15_000) - 8.98) < 0.01)
        #expect(Gazetteer.reach(population: 1_000_000) == 16)
        #expect(Gazetteer.reach(population: 37_000_000) > 50)
    }

    @Test func acrossTheAntimeridian() {
        let g = Gazetteer([Self.entry("East", -16.8, 179.95), Self.entry("Far", -16.8, 170)])
        // 0.1° of longitude west of the line is ~3 km from East, across it.
        let place = g.place(latitude: -16.8, longitude: -179.98)
        #expect(place?.city == "East")
        let d = Gazetteer.distance((-16.8, -179.98), (-16.8, 179.95))
        #expect(d > 6 && d < 9)
    }

    @Test func atThePoles() {
        let g = Gazetteer([Self.entry("Station", 89.9, 10), Self.entry("South", -78, 166)])
        // Every longitude meets at the pole: 11 km from the station whatever the longitude says.
        #expect(g.place(latitude: 90, longitude: -170)?.near == "Station")
        #expect(g.place(latitude: 90, longitude: 10)?.near == "Station")
        #expect(g.place(latitude: -90, longitude: 0) == nil)
    }

    @Test func offTheGlobeIsNoPlace() {
        let g = Gazetteer([Self.entry("Town", 0, 0)])
        #expect(g.place(latitude: .nan, longitude: 0) == nil)
        #expect(g.place(latitude: 91, longitude: 0) == nil)
        #expect(Gazetteer([]).place(latitude: 0, longitude: 0) == nil)
    }

    @Test func treeAgreesWithBruteForce() {
        var rng = SplitMix64(seed: 29)
        let entries = (0..<3000).map { i in
            Self.entry("P\(i)", rng.uniform(-90, 90), rng.uniform(-180, 180))
        }
        let g = Gazetteer(entries)
        for _ in 0..<2000 {
            let lat = rng.uniform(-90, 90), lon = rng.uniform(-180, 180)
            let best = entries.min { Gazetteer.distance((lat, lon), ($0.latitude, $0.longitude)) < Gazetteer.distance((lat, lon), ($1.latitude, $1.longitude)) }!
            let found = g.nearest(latitude: lat, longitude: lon)!
            #expect(abs(found.kilometres - Gazetteer.distance((lat, lon), (best.latitude, best.longitude))) < 1e-6)
        }
    }

    @Test func deepestAgreesWithBruteForce() {
        var rng = SplitMix64(seed: 30)
        let entries = (0..<3000).map { i in
            Self.entry("P\(i)", rng.uniform(40, 50), rng.uniform(0, 10), population: Int(rng.uniform(15_000, 3_000_000)))
        }
        let g = Gazetteer(entries)
        for _ in 0..<2000 {
            let lat = rng.uniform(39, 51), lon = rng.uniform(-1, 11)
            let scored = entries.map { e in (e, Gazetteer.distance((lat, lon), (e.latitude, e.longitude)) / Gazetteer.reach(population: e.population)) }
            let inside = scored.filter { $0.1 < 1 }.min { $0.1 < $1.1 }?.0
            let place = g.place(latitude: lat, longitude: lon)
            #expect(place?.city == inside?.name, "\(lat), \(lon)")
        }
    }

    @Test("Lookups by the kept cells agree with a brute-force search: photos in clusters (cells shared, their edges crossed), across the antimeridian, at the pole")
    func cellsAgreeWithBruteForce() {
        var rng = SplitMix64(seed: 31)
        var entries = (0..<2000).map { i in
            Self.entry("P\(i)", rng.uniform(40, 50), rng.uniform(0, 10), population: Int(rng.uniform(15_000, 3_000_000)))
        }
        entries += (0..<300).map { i in
            Self.entry("F\(i)", rng.uniform(-20, -10), rng.uniform(-5, 5) + (i % 2 == 0 ? 180 : -180), population: Int(rng.uniform(15_000, 300_000)))
        }
        entries += [Self.entry("Pole", 89.95, 10, population: 20_000)]
        let g = Gazetteer(entries)
        var centres: [(Double, Double)] = (0..<25).map { _ in (rng.uniform(40, 50), rng.uniform(0, 10)) }
        centres += (0..<10).map { _ in (rng.uniform(-20, -10), rng.uniform(-0.05, 0.05) + 180) }
        centres += [(89.99, 0), (90, 0)]
        for (lat0, lon0) in centres {
            for _ in 0..<60 {
                let lat = min(90, lat0 + rng.uniform(-0.03, 0.03))
                var lon = lon0 + rng.uniform(-0.03, 0.03)
                if lon > 180 { lon -= 360 }
                let scored = entries.map { e in (e, Gazetteer.distance((lat, lon), (e.latitude, e.longitude)) / Gazetteer.reach(population: e.population)) }
                let inside = scored.filter { $0.1 < 1 }.min { $0.1 < $1.1 }?.0
                let place = g.place(latitude: lat, longitude: lon)
                if let inside {
                    #expect(place?.city == inside.name, "\(lat), \(lon)")
                } else {
                    #expect(place?.city == nil, "\(lat), \(lon)")
                }
            }
        }
    }

    @Test("A coordinate's cell: 0.01° rows and columns, longitudes taken round the globe, the centre within the slack of every coordinate in it", arguments: [
        (0.0, 0.0), (-0.004, -0.004), (45.123, 7.987), (-89.999, 179.999), (90, 180), (90, -180), (12.5, 359.995), (12.5, -359.995),
    ])
    func cells(latitude: Double, longitude: Double) {
        let cell = Gazetteer.cell(latitude: latitude, longitude: longitude)
        #expect(Gazetteer.distance((latitude, longitude), (cell.latitude, cell.longitude)) < 0.8)
        let wrapped = Gazetteer.cell(latitude: latitude, longitude: longitude + 360)
        #expect(wrapped.key == cell.key)
    }

    // MARK: GeoNames, as libgeonames carries it

    static let geonames = Gazetteer.geonames()

    /// Known coordinates: capitals, a border town each side of the Rhine, a Lisbon suburb, a
    /// photo off the coast and one mid-ocean, the antimeridian in Fiji, the poles.
    @Test(arguments: [
        (38.7110, -9.1366, "Lisbon", "PT"),          // Baixa
        (48.8584, 2.2945, "Paris", "FR"),            // the Eiffel Tower
        (35.6586, 139.7454, "Tokyo", "JP"),          // Tokyo Tower
        (-35.3081, 149.1245, "Canberra", "AU"),      // Parliament House
        (48.5839, 7.7455, "Strasbourg", "FR"),       // Strasbourg cathedral
        (48.5727, 7.8150, "Kehl", "DE"),             // Kehl, across the Rhine
        (38.7979, -9.3880, "Sintra", "PT"),          // Sintra's old town
        (-18.1416, 178.4419, "Suva", "FJ"),          // Suva, 1.5° from the antimeridian
    ])
    func knownPlaces(lat: Double, lon: Double, city: String, countryCode: String) throws {
        try #require(Self.geonames.count > 20_000, "libgeonames carries the cities of 15,000 people or more")
        let place = Self.geonames.place(latitude: lat, longitude: lon)
        #expect(place?.city == city, "\(lat), \(lon): \(String(describing: place))")
        #expect(place?.countryCode == countryCode)
        #expect(place?.timeZone != nil)
    }

    @Test func farFromEverything() {
        #expect(Self.geonames.place(latitude: 30, longitude: -40) == nil)    // the mid-Atlantic
        #expect(Self.geonames.place(latitude: 90, longitude: 0) == nil)      // the North Pole
        #expect(Self.geonames.place(latitude: -90, longitude: 0) == nil)     // the South Pole
        // Taveuni's coast on the antimeridian: Fiji, a town across the line or no city.
        let taveuni = Self.geonames.place(latitude: -16.80, longitude: -179.98)
        #expect(taveuni == nil || taveuni?.countryCode == "FJ")
    }

    @Test func offTheCoastIsNearTheCity() {
        // 20 km west of Cascais, at sea.
        let place = Self.geonames.place(latitude: 38.69, longitude: -9.65)
        #expect(place?.city == nil)
        #expect(place?.near != nil && place?.countryCode == "PT")
    }

    @Test func mostOfEuropeIsNamed() {
        // Random points over western and central Europe, land and sea: most are near a town.
        var rng = SplitMix64(seed: 1)
        var named = 0
        for _ in 0..<1000 where Self.geonames.place(latitude: rng.uniform(35, 60), longitude: rng.uniform(-10, 30)) != nil {
            named += 1
        }
        #expect(named > 500)
    }
}

extension SplitMix64 {
    /// A uniform value in lo..<hi.
    mutating func uniform(_ lo: Double, _ hi: Double) -> Double { Double.random(in: lo..<hi, using: &self) }
}

/// The gazetteer's load reads where each city is from its GVariant bytes.
@Suite struct GeoNamesBytesTests {
    @Test("Each city's place and population read from its bytes are what libgeonames' getters give")
    func sameAsTheGetters() {
        let (bytes, read) = Gazetteer.geonamesPoints(fromBytes: true)
        let getters = Gazetteer.geonamesPoints(fromBytes: false).points
        #expect(bytes.count == getters.count && bytes.count > 20_000)
        #expect(read == bytes.count, "every city read from its bytes")
        let differing = zip(bytes, getters).filter {
            $0.latitude != $1.latitude || $0.longitude != $1.longitude || $0.population != $1.population || $0.source != $1.source
        }
        #expect(differing.isEmpty, "\(differing.count) cities differ, first \(String(describing: differing.first))")
    }

    /// A `(sssssssudd)` tuple as GLib lays it out.
    static func tuple(_ strings: [String], population: UInt32, latitude: Double, longitude: Double) -> [UInt8] {
        var out: [UInt8] = []
        var ends: [Int] = []
        for s in strings {
            out += Array(s.utf8) + [0]
            ends.append(out.count)
        }
        while out.count % 4 != 0 { out.append(0) }
        withUnsafeBytes(of: population) { out += $0 }
        while out.count % 8 != 0 { out.append(0) }
        withUnsafeBytes(of: latitude) { out += $0 }
        withUnsafeBytes(of: longitude) { out += $0 }
        let width = out.count + 7 <= 0xFF ? 1 : 2
        for end in ends.reversed() {
            for k in 0..<width { out.append(UInt8(truncatingIfNeeded: end >> (8 * k))) }
        }
        return out
    }

    @Test("Short and long tuples (one- and two-byte framing offsets) read; bytes laid out otherwise do not")
    func layouts() {
        let short = Self.tuple(["1", "Oslo", "12", "Oslo", "NO", "Norway", "Europe/Oslo"], population: 580_000,
                               latitude: 59.91, longitude: 10.75)
        let long = Self.tuple(["2", String(repeating: "Llanfair", count: 40), "", "", "GB", "United Kingdom", "Europe/London"],
                              population: 3_000, latitude: 53.22, longitude: -4.2)
        #expect(short.count <= 0xFF && long.count > 0xFF)
        for (bytes, expected) in [(short, (59.91, 10.75, UInt32(580_000))), (long, (53.22, -4.2, UInt32(3_000)))] {
            let p = bytes.withUnsafeBytes { Gazetteer.cityPoint($0) }
            #expect(p?.latitude == expected.0 && p?.longitude == expected.1 && p?.population == expected.2)
        }
        #expect(Array(short.dropLast()).withUnsafeBytes { Gazetteer.cityPoint($0) } == nil)
        #expect(Array(short.dropFirst()).withUnsafeBytes { Gazetteer.cityPoint($0) } == nil)
        #expect(Array(short.prefix(5)).withUnsafeBytes { Gazetteer.cityPoint($0) } == nil)
        #expect([UInt8]().withUnsafeBytes { Gazetteer.cityPoint($0) } == nil)
    }
}
