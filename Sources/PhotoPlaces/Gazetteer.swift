#if canImport(Glibc)
import Glibc
#endif
import CGeoNames
import PhotoModel
import PhotoSystem

/// One populated place of a gazetteer.
public struct GazetteerEntry: Sendable, Hashable {
    public var name: String
    public var region: String?
    public var country: String?
    public var countryCode: String?
    public var timeZone: String?
    public var latitude: Double
    public var longitude: Double
    public var population: Int

    public init(name: String, region: String?, country: String?, countryCode: String?, timeZone: String?,
                latitude: Double, longitude: Double, population: Int) {
        self.name = name
        self.region = region
        self.country = country
        self.countryCode = countryCode
        self.timeZone = timeZone
        self.latitude = latitude
        self.longitude = longitude
        self.population = population
    }
}

/// Reverse geocoding, offline: which populated place a coordinate is in, from a k-d tree over
/// points on the unit sphere (so the antimeridian and the poles need no special case: nearest
/// in 3-D is nearest on the globe).
///
/// A place's name carries as far as its reach: 8 km + 8 km × √(population / 1,000,000) (9 km
/// for a town of 15,000, 16 km for a city of a million, 57 km for Tokyo). The rule:
/// - Of the places whose reach covers the coordinate, the one it is deepest in (the least
///   distance ÷ reach): the city, its region and country. Not simply the nearest centre, which
///   names the suburb beside the centre of a capital (the Eiffel Tower is 3 km from
///   Neuilly-sur-Seine's centre and 4 km from Paris's: it is in Paris).
/// - Else, for the nearest place at distance d: d ≤ max(3 × reach, 30 km): no city; `near`
///   names it, with its region and country. d ≤ 100 km: its region and country only.
/// - Farther (at sea, the poles, the empty quarters): no place. Never a town hundreds of km away.
public final class Gazetteer: Sendable {
    /// Earth's mean radius, km.
    public static let earthRadius = 6371.0088
    /// Beyond this, no region or country is named either.
    public static let regionLimit = 100.0

    /// The k-d tree: node i of an implicit, median-split tree over the ranges it was built
    /// from is `nodes[i]`; `widest[i]` is the greatest reach (as a chord) in the subtree of the
    /// range i is the middle of, which bounds how deep in any place of it a coordinate can be.
    /// `sources[i]` is the index of node i's place in the data set, whose names are read the
    /// first time a coordinate is placed there (`named`): a library meets a few hundred of the
    /// 24,361 places, and reading every place's names through libgeonames was most of the
    /// gazetteer's load (~1.1 of its 1.5 billion instructions, callgrind).
    private let nodes: [Node]
    private let widest: [Double]
    private let sources: [Int32]
    private let names: @Sendable (Int) -> Place
    /// What lookups keep (`Kept`).
    private let kept = Locked(Kept())

    /// The places named so far by source index, each made once: a lookup returns the same
    /// strings for the same place, which the writer compares cheaply. And for cells of a grid
    /// of `cellDegrees`, the nodes of the places whose reach may cover a coordinate in the cell,
    /// found by one search of the tree: the photos of a library lie in a few hundred cells, and
    /// a lookup then weighs a handful of places instead of walking the tree (~2,400
    /// instructions). A cell is kept in the slot its key hashes to, until another takes it.
    private struct Kept {
        var named: [Int32: Place] = [:]
        var cells = [(key: Int64, nodes: [Int32])](repeating: (-1, []), count: Gazetteer.cellSlots)
    }

    /// The grid's cells, degrees of latitude and of longitude (1.1 km at the equator), and how
    /// many slots keep them.
    static let cellDegrees = 0.01
    static let cellSlots = 4096
    /// More than the distance from a cell's centre to any coordinate in it (half its diagonal,
    /// ≤ 0.79 km), as a chord: a place whose reach covers a coordinate of the cell is within
    /// its reach and this of the centre.
    static let cellSlack = chord(kilometres: 0.8)

    private struct Node {
        var point: SIMD3<Double>
        /// The reach as a chord of the unit sphere.
        var reach: Double
    }

    /// Where a place of the data set is and how many live there, for the tree.
    struct Point {
        var latitude: Double
        var longitude: Double
        var population: Int
        /// Its index in the data set: what `names` is asked for.
        var source: Int
    }

    /// How many places the gazetteer holds.
    public var count: Int { nodes.count }

    /// A gazetteer of these places (a test's table).
    public convenience init(_ entries: [GazetteerEntry]) {
        self.init(entries.indices.map { i in
            Point(latitude: entries[i].latitude, longitude: entries[i].longitude, population: entries[i].population, source: i)
        }) { i in
            let e = entries[i]
            return Place(city: e.name, region: e.region, country: e.country, countryCode: e.countryCode, source: .geonames,
                         timeZone: e.timeZone)
        }
    }

    /// Builds the tree over the points (24,000 places: a few ms), each level's median found by
    /// selection rather than a sort; `names` names a point's place by its source index when a
    /// coordinate is first placed there.
    init(_ points: [Point], names: @escaping @Sendable (Int) -> Place) {
        let unit = points.map { Self.unit(latitude: $0.latitude, longitude: $0.longitude) }
        var order = Array(points.indices)
        Self.build(&order, 0, order.count, depth: 0, unit)
        nodes = order.map { Node(point: unit[$0], reach: Self.chord(kilometres: Self.reach(population: points[$0].population))) }
        sources = order.map { Int32(points[$0].source) }
        self.names = names
        var widest = [Double](repeating: 0, count: nodes.count)
        Self.widest(nodes, 0, nodes.count, into: &widest)
        self.widest = widest
    }

    /// The place of a photo in city `i` of the tree.
    private func place(_ i: Int) -> Place {
        kept.withLock { kept in
            let source = sources[i]
            if let known = kept.named[source] { return known }
            let place = names(Int(source))
            kept.named[source] = place
            return place
        }
    }

    /// How far a place's name carries, km.
    public static func reach(population: Int) -> Double {
        8 + 8 * (Double(max(population, 0)) / 1_000_000).squareRoot()
    }

    /// The nearest place (its city named, whatever the distance) and its distance in km; nil for
    /// an empty gazetteer or a coordinate off the globe.
    public func nearest(latitude: Double, longitude: Double) -> (place: Place, kilometres: Double)? {
        nearestIndex(latitude: latitude, longitude: longitude).map { (place($0.index), $0.kilometres) }
    }

    private func nearestIndex(latitude: Double, longitude: Double) -> (index: Int, kilometres: Double)? {
        guard let q = Self.query(latitude, longitude), !nodes.isEmpty else { return nil }
        var best = (node: -1, squared: Double.infinity)
        nearest(q, 0, nodes.count, depth: 0, &best)
        return (best.node, Self.kilometres(chord: best.squared.squareRoot()))
    }

    /// The place the rule above names for a coordinate.
    public func place(latitude: Double, longitude: Double) -> Place? {
        guard let q = Self.query(latitude, longitude), !nodes.isEmpty else { return nil }
        if let inside = deepest(q, latitude: latitude, longitude: longitude) { return place(inside) }
        guard let (index, d) = nearestIndex(latitude: latitude, longitude: longitude) else { return nil }
        var place = place(index)
        if d <= max(3 * Self.kilometres(chord: nodes[index].reach), 30) {
            place.near = place.city
            place.city = nil
            return place
        }
        if d <= Self.regionLimit {
            place.city = nil
            return place
        }
        return nil
    }

    /// Great-circle distance in km between two coordinates (haversine).
    public static func distance(_ a: (latitude: Double, longitude: Double), _ b: (latitude: Double, longitude: Double)) -> Double {
        let chord = (unit(latitude: a.latitude, longitude: a.longitude) - unit(latitude: b.latitude, longitude: b.longitude))
        let c = (chord * chord).sum().squareRoot()
        return 2 * earthRadius * asinClamped(c / 2)
    }

    static func unit(latitude: Double, longitude: Double) -> SIMD3<Double> {
        let φ = latitude * .pi / 180, λ = longitude * .pi / 180
        return SIMD3(cos(φ) * cos(λ), cos(φ) * sin(λ), sin(φ))
    }

    private static func query(_ latitude: Double, _ longitude: Double) -> SIMD3<Double>? {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 360 else { return nil }
        return unit(latitude: latitude, longitude: longitude)
    }

    static func chord(kilometres: Double) -> Double { 2 * sin(min(kilometres / earthRadius, .pi) / 2) }

    static func kilometres(chord: Double) -> Double { 2 * earthRadius * asinClamped(chord / 2) }

    /// Median split on axis depth % 3, recursively: node i of a range is its middle element,
    /// none before it greater on the axis and none after it less.
    private static func build(_ order: inout [Int], _ lo: Int, _ hi: Int, depth: Int, _ unit: [SIMD3<Double>]) {
        guard hi - lo > 1 else { return }
        let mid = lo + (hi - lo) / 2
        select(&order, lo, hi, mid, axis: depth % 3, unit)
        build(&order, lo, mid, depth: depth + 1, unit)
        build(&order, mid + 1, hi, depth: depth + 1, unit)
    }

    /// Puts the element of rank k (on `axis`) of order[lo..<hi] at k, the lesser before it and
    /// the greater after (Hoare's selection).
    private static func select(_ order: inout [Int], _ lo: Int, _ hi: Int, _ k: Int, axis: Int, _ unit: [SIMD3<Double>]) {
        var lo = lo, hi = hi - 1
        while lo < hi {
            let pivot = unit[order[lo + (hi - lo) / 2]][axis]
            var i = lo, j = hi
            while i <= j {
                while unit[order[i]][axis] < pivot { i += 1 }
                while unit[order[j]][axis] > pivot { j -= 1 }
                if i <= j {
                    order.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j { hi = j } else if k >= i { lo = i } else { return }
        }
    }

    @discardableResult
    private static func widest(_ nodes: [Node], _ lo: Int, _ hi: Int, into widest: inout [Double]) -> Double {
        guard lo < hi else { return 0 }
        let mid = lo + (hi - lo) / 2
        let w = max(nodes[mid].reach, Self.widest(nodes, lo, mid, into: &widest), Self.widest(nodes, mid + 1, hi, into: &widest))
        widest[mid] = w
        return w
    }

    private func nearest(_ q: SIMD3<Double>, _ lo: Int, _ hi: Int, depth: Int, _ best: inout (node: Int, squared: Double)) {
        guard lo < hi else { return }
        let mid = lo + (hi - lo) / 2
        let p = nodes[mid].point
        let delta = q - p
        let squared = (delta * delta).sum()
        if squared < best.squared { best = (mid, squared) }
        let split = q[depth % 3] - p[depth % 3]
        let (near, far) = split < 0 ? ((lo, mid), (mid + 1, hi)) : ((mid + 1, hi), (lo, mid))
        nearest(q, near.0, near.1, depth: depth + 1, &best)
        if split * split < best.squared { nearest(q, far.0, far.1, depth: depth + 1, &best) }
    }

    /// The node of the place whose reach covers q (at that latitude and longitude) with the
    /// least distance ÷ reach, of those kept for its cell (the first by node on a tie); nil
    /// when none covers it.
    private func deepest(_ q: SIMD3<Double>, latitude: Double, longitude: Double) -> Int? {
        let cell = Self.cell(latitude: latitude, longitude: longitude)
        let slot = Int((UInt64(bitPattern: cell.key) &* 0x9E37_79B9_7F4A_7C15) >> 52)  // Fibonacci hashing: 12 bits
        let candidates = kept.withLock { kept in
            if kept.cells[slot].key == cell.key { return kept.cells[slot].nodes }
            var found: [Int32] = []
            covering(Self.unit(latitude: cell.latitude, longitude: cell.longitude), 0, nodes.count, depth: 0, into: &found)
            found.sort()
            kept.cells[slot] = (cell.key, found)
            return found
        }
        var best = (node: -1, depth: 1.0)
        for i in candidates {
            let node = nodes[Int(i)]
            let delta = q - node.point
            let distance = (delta * delta).sum().squareRoot()
            if distance < node.reach * best.depth { best = (Int(i), distance / node.reach) }
        }
        return best.node >= 0 ? best.node : nil
    }

    /// The grid cell of a coordinate: its key, and its centre.
    static func cell(latitude: Double, longitude: Double) -> (key: Int64, latitude: Double, longitude: Double) {
        var east = (longitude + 180).truncatingRemainder(dividingBy: 360)
        if east < 0 { east += 360 }
        let row = Int64(((latitude + 90) / cellDegrees).rounded(.down)), column = Int64((east / cellDegrees).rounded(.down))
        return (row << 20 | column, (Double(row) + 0.5) * cellDegrees - 90, (Double(column) + 0.5) * cellDegrees - 180)
    }

    /// The nodes within their reach and `cellSlack` of c, the centre of a cell. A subtree is
    /// skipped when even its widest reach and the slack do not get across the splitting plane:
    /// every point of a half lies at least as far as the plane.
    private func covering(_ c: SIMD3<Double>, _ lo: Int, _ hi: Int, depth: Int, into found: inout [Int32]) {
        guard lo < hi else { return }
        let mid = lo + (hi - lo) / 2
        let node = nodes[mid]
        let delta = c - node.point
        if (delta * delta).sum().squareRoot() < node.reach + Self.cellSlack { found.append(Int32(mid)) }
        let split = c[depth % 3] - node.point[depth % 3]
        let (near, far) = split < 0 ? ((lo, mid), (mid + 1, hi)) : ((mid + 1, hi), (lo, mid))
        covering(c, near.0, near.1, depth: depth + 1, into: &found)
        if far.0 < far.1, abs(split) < widest[far.0 + (far.1 - far.0) / 2] + Self.cellSlack {
            covering(c, far.0, far.1, depth: depth + 1, into: &found)
        }
    }
}

private func asinClamped(_ x: Double) -> Double { asin(min(1, max(-1, x))) }

extension Gazetteer {
    /// The GeoNames cities compiled into libgeonames (24,361 places of 15,000 people or more
    /// in Debian 12's 0.3.0): where each is and its population read at once, its names (as the
    /// data set spells them) when a photo is first placed there.
    public static func geonames() -> Gazetteer {
        Gazetteer(geonamesPoints(fromBytes: true).points) { i in
            guard let city = geonames_get_city(Int32(i)) else { return Place(source: .geonames) }
            defer { geonames_city_free(city) }
            func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
            return Place(city: text(geonames_city_get_name(city)), region: text(geonames_city_get_state(city)),
                         country: text(geonames_city_get_country(city)),
                         countryCode: text(geonames_city_get_country_code(city)), source: .geonames,
                         timeZone: text(geonames_city_get_timezone(city)))
        }
    }

    /// Where each city of libgeonames is and how many live there, in its order. `fromBytes`:
    /// read from each city's GVariant bytes (`cityPoint`) while its type is the one that reads,
    /// else, and for every city after one that does not read, through the library's getters;
    /// and how many were read from their bytes.
    static func geonamesPoints(fromBytes: Bool) -> (points: [Point], fromBytes: Int) {
        let n = Int(geonames_get_n_cities())
        var points: [Point] = []
        points.reserveCapacity(n)
        var fromBytes = fromBytes
        var read = 0
        for i in 0..<n {
            guard let city = geonames_get_city(Int32(i)) else { continue }
            defer { geonames_city_free(city) }
            if fromBytes, let type = g_variant_get_type_string(city), strcmp(type, cityType) == 0,
               let data = g_variant_get_data(city),
               let p = cityPoint(UnsafeRawBufferPointer(start: data, count: Int(g_variant_get_size(city)))),
               read > 0 || (p.latitude == geonames_city_get_latitude(city) && p.longitude == geonames_city_get_longitude(city)
                            && p.population == geonames_city_get_population(city)) {
                // (The first city read both ways: bytes that read otherwise than the getters say
                // turn the bytes off for all.)
                points.append(Point(latitude: p.latitude, longitude: p.longitude, population: Int(p.population), source: i))
                read += 1
                continue
            }
            fromBytes = false
            points.append(Point(latitude: geonames_city_get_latitude(city), longitude: geonames_city_get_longitude(city),
                                population: Int(geonames_city_get_population(city)), source: i))
        }
        return (points, read)
    }

    /// The GVariant type of a libgeonames 0.3 city: id, name, state code, state, country code,
    /// country, time zone, population, latitude, longitude.
    static let cityType = "(sssssssudd)"

    /// Population, latitude and longitude from the bytes of a `cityType` tuple in GLib's
    /// GVariant serialisation: its seven strings, then the uint32 at the next multiple of 4 and
    /// the two doubles at the next multiple of 8 (in the machine's byte order, as GLib makes
    /// them), then one framing offset per string — each where that string ends, little-endian,
    /// in reverse order, of the width the tuple's size needs. Nil when the bytes are not laid
    /// out so.
    static func cityPoint(_ bytes: UnsafeRawBufferPointer) -> (latitude: Double, longitude: Double, population: UInt32)? {
        let size = bytes.count
        let width = size <= 0xFF ? 1 : size <= 0xFFFF ? 2 : 4
        let framing = 7 * width
        guard size > framing else { return nil }
        var stringsEnd = 0  // the last string's offset: the 7th from the end
        for k in 0..<width { stringsEnd |= Int(bytes[size - framing + k]) << (8 * k) }
        let population = (stringsEnd + 3) & ~3
        let latitude = (population + 4 + 7) & ~7
        guard stringsEnd > 0, latitude + 16 == size - framing else { return nil }
        func double(_ at: Int) -> Double { bytes.loadUnaligned(fromByteOffset: at, as: Double.self) }
        return (double(latitude), double(latitude + 8), bytes.loadUnaligned(fromByteOffset: population, as: UInt32.self))
    }
}
