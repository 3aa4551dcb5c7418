import PhotoModel
import Testing

@Suite struct PlaceTreeTests {
    static func t(_ row: Int64, _ p: Place, _ n: Int, _ day: Int) -> PlaceTally {
        let local = LocalDateTime(year: 2021, month: 7, day: day, hour: 12, minute: 0, second: 0)!
        return PlaceTally(row: row, place: p, count: n, start: local, end: local)
    }

    @Test func countriesRegionsCities() throws {
        let tallies = [
            Self.t(1, Place(city: "Lisbon", region: "Lisbon", country: "Portugal", countryCode: "PT", source: .geonames), 5, 1),
            Self.t(2, Place(city: "Sintra", region: "Lisbon", country: "Portugal", countryCode: "PT", source: .geonames), 2, 2),
            Self.t(3, Place(city: "Lisboa", subLocation: "Belém", region: "Lisbon", country: "Portugal", countryCode: "PT", source: .file), 1, 3),
            Self.t(4, Place(region: "Lisbon", country: "Portugal", countryCode: "PT", near: "Cascais", source: .geonames), 1, 4),
            Self.t(5, Place(city: "Porto", country: "Portugal", source: .file), 3, 5),
            Self.t(6, Place(city: "Madrid", region: "Madrid", country: "Spain", countryCode: "ES", source: .geonames), 4, 6),
            Self.t(7, Place(city: "Nowhere", source: .file), 9, 7),
        ]
        let tree = PlaceTree.build(tallies)
        #expect(tree.map(\.title) == ["Portugal", "Spain"])
        let pt = tree[0]
        #expect(pt.assetCount == 12 && pt.countryCode == "PT" && pt.kind == .country)
        #expect(pt.start.day == 1 && pt.end.day == 5)
        // Porto's file names the country but no code: it joins Portugal, as a city without a region.
        #expect(pt.children.map(\.title) == ["Lisbon", "Porto"])
        #expect(pt.children[1].kind == .city)
        let region = pt.children[0]
        #expect(region.kind == .region && region.assetCount == 9 && region.rows.sorted() == [1, 2, 3, 4])
        #expect(region.children.map(\.title) == ["Lisbon", "Sintra", "Lisboa"])
        #expect(region.children.allSatisfy { $0.kind == .city })
        let all = PlaceTree.flatten(tree)
        #expect(!all.contains { $0.title == "Nowhere" })
        #expect(Set(all.map(\.id)).count == all.count)
        #expect(PlaceTree.id(country: "PT", region: "Lisbon", city: "Lisbon") == region.children[0].id)
        #expect(PlaceTree.id(country: "PT", region: "Lisbon") != PlaceTree.id(country: "PT", region: nil, city: "Lisbon"))
        #expect(PlaceTree.id(country: "PT").hasPrefix("pl_") && PlaceTree.id(country: "PT").count == 19)
    }

    @Test func regionlessCitiesBelongToTheirCountry() {
        let tree = PlaceTree.build([Self.t(1, Place(city: "Porto", country: "Portugal", source: .file), 3, 5)])
        #expect(tree.count == 1 && tree[0].title == "Portugal" && tree[0].countryCode == nil)
        #expect(tree[0].children.map(\.kind) == [.city])
        #expect(tree[0].children[0].assetCount == 3)
    }
}

@Suite("A place's names")
struct PlaceNameTests {
    @Test("Whitespace around a name is cut, an empty name is none, a name without any is kept as it is")
    func cleaned() {
        let p = Place(city: "  Lisbon\n", subLocation: "Alfama", region: "", country: " \t", countryCode: " pt ",
                      near: "São Paulo", source: .file, timeZone: "Europe/Lisbon")
        #expect(p.city == "Lisbon")
        #expect(p.subLocation == "Alfama")
        #expect(p.region == nil && p.country == nil)
        #expect(p.countryCode == "PT")
        #expect(p.near == "São Paulo")
        #expect(p.timeZone == "Europe/Lisbon")
        #expect(Place(city: "Rio de Janeiro", source: .geonames).city == "Rio de Janeiro")
        #expect(Place(city: "\u{3000}東京\u{3000}", source: .file).city == "東京")   // ideographic spaces
        #expect(Place(city: "e\u{301}", source: .file).city == "e\u{301}")
    }
}
