/// Places as collections (`places.fetch`): countries, the regions in them, the cities in
/// those, each with how many assets are there and when they were taken. Built from the index's
/// places with their counts; a place's id is derived from its names alone (`pl_` and 16 hex
/// digits), so it survives rebuilds and moves.
public struct PlaceNode: Sendable, Hashable, Identifiable {
    public enum Kind: String, Sendable, Hashable {
        case country, region, city
    }

    public var id: String
    public var kind: Kind
    public var title: String
    /// ISO 3166-1 alpha-2 of the country it is in, when known.
    public var countryCode: String?
    public var assetCount: Int
    public var start: LocalDateTime
    public var end: LocalDateTime
    /// Regions and cities below it (a country's cities without a region are its own), most
    /// assets first.
    public var children: [PlaceNode]
    /// The index's place rows it covers.
    public var rows: [Int64]
    /// Its newest assets, newest first (set by the store).
    public var keyAssetIDs: [AssetID] = []
}

/// One place row of the index with its visible assets.
public struct PlaceTally: Sendable, Hashable {
    public var row: Int64
    public var place: Place
    public var count: Int
    public var start: LocalDateTime
    public var end: LocalDateTime

    public init(row: Int64, place: Place, count: Int, start: LocalDateTime, end: LocalDateTime) {
        self.row = row
        self.place = place
        self.count = count
        self.start = start
        self.end = end
    }
}

public enum PlaceTree {
    /// Countries (by code; a place that names its country without a code joins the country of
    /// that name that has one, else is a country by its name), their regions and cities. A
    /// place that names no country is in no country; a place with a country but no city counts
    /// in its country and region only.
    public static func build(_ tallies: [PlaceTally]) -> [PlaceNode] {
        var codeByName: [String: String] = [:]
        for t in tallies { if let name = t.place.country, let code = t.place.countryCode { codeByName[name] = code } }
        var countries: [String: PlaceNode] = [:]
        for t in tallies {
            let p = t.place
            guard let countryKey = p.countryCode ?? p.country.map({ codeByName[$0] ?? $0 }) else { continue }
            let countryID = id(country: countryKey)
            let code = p.countryCode ?? p.country.flatMap { codeByName[$0] }
            var country = countries[countryID] ?? PlaceNode(id: countryID, kind: .country, title: p.country ?? countryKey,
                                                           countryCode: code, assetCount: 0, start: t.start, end: t.end,
                                                           children: [], rows: [])
            // The gazetteer's spelling names the country when it has one (files write "USA",
            // "United States"...).
            if let name = p.country, country.title == countryKey || p.source == .geonames { country.title = name }
            add(t, to: &country)
            var cityParent: PlaceNode
            var regionIndex: Int?
            if let region = p.region {
                let regionID = id(country: countryKey, region: region)
                regionIndex = country.children.firstIndex { $0.id == regionID }
                if regionIndex == nil {
                    country.children.append(PlaceNode(id: regionID, kind: .region, title: region, countryCode: code,
                                                      assetCount: 0, start: t.start, end: t.end, children: [], rows: []))
                    regionIndex = country.children.count - 1
                }
                add(t, to: &country.children[regionIndex!])
                cityParent = country.children[regionIndex!]
            } else {
                cityParent = country
            }
            if let city = p.city {
                let cityID = id(country: countryKey, region: p.region, city: city)
                if let i = cityParent.children.firstIndex(where: { $0.id == cityID }) {
                    add(t, to: &cityParent.children[i])
                } else {
                    var node = PlaceNode(id: cityID, kind: .city, title: city, countryCode: code, assetCount: 0,
                                         start: t.start, end: t.end, children: [], rows: [])
                    add(t, to: &node)
                    cityParent.children.append(node)
                }
            }
            if let regionIndex { country.children[regionIndex] = cityParent } else { country = cityParent }
            countries[countryID] = country
        }
        return sorted(Array(countries.values))
    }

    /// Every node of the tree, depth first.
    public static func flatten(_ nodes: [PlaceNode]) -> [PlaceNode] {
        nodes.flatMap { [$0] + flatten($0.children) }
    }

    /// `pl_` and the FNV-1a hash of the names that place it (country, region, city).
    public static func id(country: String, region: String? = nil, city: String? = nil) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        let key = [country, region ?? "", city ?? ""].joined(separator: "\u{1F}") + (city == nil ? (region == nil ? "\u{1F}c" : "\u{1F}r") : "")
        for b in key.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        let hex = String(h, radix: 16)
        return "pl_" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static func add(_ t: PlaceTally, to node: inout PlaceNode) {
        node.assetCount += t.count
        node.rows.append(t.row)
        if MomentGrouping.precedes(t.start, node.start) { node.start = t.start }
        if MomentGrouping.precedes(node.end, t.end) { node.end = t.end }
    }

    private static func sorted(_ nodes: [PlaceNode]) -> [PlaceNode] {
        nodes.map { n in
            var n = n
            n.children = sorted(n.children)
            return n
        }.sorted { $0.assetCount != $1.assetCount ? $0.assetCount > $1.assetCount : $0.title < $1.title }
    }
}
