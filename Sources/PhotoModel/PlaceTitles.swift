/// How a group of assets (a moment, a month, a year) is named by where it was taken, as
/// PhotoKit names its moments ("Lisbon", "Lisbon & Sintra", "Portugal").
public enum PlaceTitles {
    /// The places of a group's assets with how many assets are at each.
    public typealias Tally = [(place: Place, count: Int)]

    /// The distinct city names, most assets first (ties by name). A place beyond every city's
    /// reach (`near`) names no city.
    public static func locationNames(_ tally: Tally) -> [String] {
        locationCounts(tally).map(\.name)
    }

    /// The same cities with how many assets are in each.
    public static func locationCounts(_ tally: Tally) -> [PlaceCount] {
        var totals: [String: Int] = [:]
        for (place, count) in tally { if let city = place.city { totals[city, default: 0] += count } }
        return ranked(tally) { $0.city }.map { PlaceCount(name: $0, count: totals[$0]!) }
    }

    /// The title: nil when no asset has a place; one city; "A & B" for two; for more, the one
    /// region they are all in, else the one country, else up to three countries ("Portugal,
    /// Spain & France"); without city names the same rule over regions and countries.
    public static func title(_ tally: Tally) -> String? {
        let cities = locationNames(tally)
        switch cities.count {
        case 1: return cities[0]
        case 2: return cities[0] + " & " + cities[1]
        default: break
        }
        // Spread wider (or no city at all): the one region, else the one country, else a list.
        // A region is known by its name within its country (Georgia, the state and the country).
        let regions = ranked(tally) { p in p.region.map { [$0, p.countryCode ?? p.country ?? ""] } }
        if regions.count == 1 { return regions[0][0] }
        let countries = ranked(tally) { $0.country ?? $0.countryCode }
        if countries.count == 1 { return countries[0] }
        if countries.isEmpty { return cities.isEmpty ? nil : list(Array(cities.prefix(3))) }
        return list(Array(countries.prefix(3)))
    }

    /// "A", "A & B", "A, B & C".
    static func list(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " & " + names.last!
    }

    /// Distinct keys of the tally, by total count (then key order for strings, first seen otherwise).
    private static func ranked<K: Hashable>(_ tally: Tally, _ key: (Place) -> K?) -> [K] {
        var totals: [K: Int] = [:]
        var order: [K] = []
        for (place, count) in tally {
            guard let k = key(place) else { continue }
            if totals[k] == nil { order.append(k) }
            totals[k, default: 0] += count
        }
        return order.enumerated().sorted { a, b in
            let (ca, cb) = (totals[a.element]!, totals[b.element]!)
            if ca != cb { return ca > cb }
            if let sa = a.element as? String, let sb = b.element as? String { return sa < sb }
            return a.offset < b.offset
        }.map(\.element)
    }
}
