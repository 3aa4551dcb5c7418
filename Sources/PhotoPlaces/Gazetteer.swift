#if canImport(Glibc)
import Glibc
#endif
import CGeoNames
import PhotoModel

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
    /// from is `nodes[i]`, the place `cities[i]`; `widest[i]` is the greatest reach (as a chord)
    /// in the subtree of the range i is the middle of, which bounds how deep in any place of it a
    /// coordinate can be. 24,361 places take ~2 MB this way (8 MB as an array of entries and one
    /// of places beside the tree: most of what an idle daemon held beyond SQLite's caches).
    private let nodes: [Node]
    private let widest: [Double]
    private let cities: [City]
    /// Each distinct region, country and time zone once, as the place of a photo there without
    /// its city: a lookup copies one and sets the city (names cleaned once, at the build).
    private let templates: [Place]

    private struct Node {
        var point: SIMD3<Double>
        /// The reach as a chord of the unit sphere.
        var reach: Double
    }

    private struct City {
        var name: String?
        var template: UInt32
    }

    /// How many places the gazetteer holds.
    public var count: Int { cities.count }

    /// Builds the tree (24,000 places: a few ms). The tree is ordered on small items (a point,
    /// a reach and the entry's index), and each distinct region, country, code and zone becomes
    /// its template once: ordering whole places, or making one per entry, cost the writer
    /// ~0.3 s (perf) at the first photo with coordinates.
    public init(_ entries: [GazetteerEntry]) {
        var items = entries.indices.map { i in
            (node: Node(point: Self.unit(latitude: entries[i].latitude, longitude: entries[i].longitude),
                        reach: Self.chord(kilometres: Self.reach(population: entries[i].population))),
             place: i)
        }
        Self.build(&items[...], depth: 0)
        struct Names: Hashable {
            var region, country, countryCode, timeZone: String?
        }
        var templateIndex: [Names: UInt32] = [:]
        var templates: [Place] = []
        cities = items.map { item in
            let e = entries[item.place]
            let names = Names(region: e.region, country: e.country, countryCode: e.countryCode, timeZone: e.timeZone)
            let template: UInt32
            if let known = templateIndex[names] {
                template = known
            } else {
                template = UInt32(templates.count)
                templateIndex[names] = template
                templates.append(Place(region: e.region, country: e.country, countryCode: e.countryCode, source: .geonames,
                                       timeZone: e.timeZone))
            }
            return City(name: Place(city: e.name, source: .geonames).city, template: template)
        }
        self.templates = templates
        nodes = items.map(\.node)
        var widest = [Double](repeating: 0, count: items.count)
        Self.widest(nodes, 0, nodes.count, into: &widest)
        self.widest = widest
    }

    /// The place of a photo in city `i` of the tree.
    private func place(_ i: Int) -> Place {
        var place = templates[Int(cities[i].template)]
        place.city = cities[i].name
        return place
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
        var inside = (node: -1, depth: 1.0)
        deepest(q, 0, nodes.count, depth: 0, &inside)
        if inside.node >= 0 { return place(inside.node) }
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

    /// Median split on axis depth % 3, recursively: node i of a range is its middle element.
    private static func build<Item>(_ items: inout ArraySlice<(node: Node, place: Item)>, depth: Int) {
        guard items.count > 1 else { return }
        let axis = depth % 3
        items.sort { $0.node.point[axis] < $1.node.point[axis] }
        let mid = items.startIndex + items.count / 2
        build(&items[items.startIndex..<mid], depth: depth + 1)
        build(&items[(mid + 1)..<items.endIndex], depth: depth + 1)
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

    /// The place whose reach covers q with the least distance ÷ reach (`best.depth` < 1). A
    /// subtree is skipped when even its widest reach cannot cover q deeper than the best so far:
    /// every point of a half lies at least as far as the splitting plane.
    private func deepest(_ q: SIMD3<Double>, _ lo: Int, _ hi: Int, depth: Int, _ best: inout (node: Int, depth: Double)) {
        guard lo < hi else { return }
        let mid = lo + (hi - lo) / 2
        let node = nodes[mid]
        let delta = q - node.point
        let distance = (delta * delta).sum().squareRoot()
        if distance < node.reach * best.depth { best = (mid, distance / node.reach) }
        let split = q[depth % 3] - node.point[depth % 3]
        let (near, far) = split < 0 ? ((lo, mid), (mid + 1, hi)) : ((mid + 1, hi), (lo, mid))
        deepest(q, near.0, near.1, depth: depth + 1, &best)
        if far.0 < far.1, abs(split) < widest[far.0 + (far.1 - far.0) / 2] * best.depth {
            deepest(q, far.0, far.1, depth: depth + 1, &best)
        }
    }
}

private func asinClamped(_ x: Double) -> Double { asin(min(1, max(-1, x))) }

extension Gazetteer {
    /// The GeoNames cities compiled into libgeonames (24,361 places of 15,000 people or more
    /// in Debian 12's 0.3.0), read once; names as the data set spells them.
    public static func geonames() -> Gazetteer {
        let n = Int(geonames_get_n_cities())
        var entries: [GazetteerEntry] = []
        entries.reserveCapacity(n)
        // Regions and countries repeat: one String each.
        var interned: [String: String] = [:]
        func text(_ p: UnsafePointer<CChar>?, intern: Bool = false) -> String? {
            guard let p else { return nil }
            let s = String(cString: p)
            guard !s.isEmpty else { return nil }
            guard intern else { return s }
            if let known = interned[s] { return known }
            interned[s] = s
            return s
        }
        for i in 0..<n {
            guard let city = geonames_get_city(Int32(i)) else { continue }
            defer { geonames_city_free(city) }
            guard let name = text(geonames_city_get_name(city)) else { continue }
            entries.append(GazetteerEntry(
                name: name, region: text(geonames_city_get_state(city), intern: true),
                country: text(geonames_city_get_country(city), intern: true),
                countryCode: text(geonames_city_get_country_code(city), intern: true),
                timeZone: text(geonames_city_get_timezone(city), intern: true),
                latitude: geonames_city_get_latitude(city), longitude: geonames_city_get_longitude(city),
                population: Int(geonames_city_get_population(city))))
        }
        return Gazetteer(entries)
    }
}
