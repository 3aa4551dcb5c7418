import PhotoModel
import Testing

/// The naming rule for a group of assets by place, as a table.
@Suite struct PlaceTitlesTests {
    static func city(_ name: String, _ region: String, _ country: String, _ code: String) -> Place {
        Place(city: name, region: region, country: country, countryCode: code, source: .geonames)
    }
    static let lisbon = city("Lisbon", "Lisbon", "Portugal", "PT")
    static let sintra = city("Sintra", "Lisbon", "Portugal", "PT")
    static let cascais = city("Cascais", "Lisbon", "Portugal", "PT")
    static let porto = city("Porto", "Porto", "Portugal", "PT")
    static let madrid = city("Madrid", "Madrid", "Spain", "ES")
    static let paris = city("Paris", "Île-de-France", "France", "FR")
    static let atSea = Place(region: "Lisbon", country: "Portugal", countryCode: "PT", near: "Cascais", source: .geonames)

    @Test("Titles", arguments: [
        ([] as [(Place, Int)], nil as String?, [] as [String]),
        ([(lisbon, 3)], "Lisbon", ["Lisbon"]),
        ([(lisbon, 1), (sintra, 4)], "Sintra & Lisbon", ["Sintra", "Lisbon"]),
        ([(lisbon, 2), (sintra, 2)], "Lisbon & Sintra", ["Lisbon", "Sintra"]),
        ([(lisbon, 5), (sintra, 2), (cascais, 1)], "Lisbon", ["Lisbon", "Sintra", "Cascais"]),
        ([(lisbon, 5), (sintra, 2), (porto, 1)], "Portugal", ["Lisbon", "Sintra", "Porto"]),
        ([(lisbon, 1), (madrid, 3), (paris, 2)], "Spain, France & Portugal", ["Madrid", "Paris", "Lisbon"]),
        ([(atSea, 2)], "Lisbon", []),
        ([(atSea, 2), (lisbon, 1)], "Lisbon", ["Lisbon"]),
        ([(Place(country: "Portugal", source: .file), 1)], "Portugal", []),
        ([(Place(city: "Bondi", source: .file), 1), (Place(city: "Manly", source: .file), 1), (Place(city: "Coogee", source: .file), 1)],
         "Bondi, Coogee & Manly", ["Bondi", "Coogee", "Manly"]),
    ])
    func titles(tally: [(Place, Int)], title: String?, names: [String]) {
        let t = tally.map { (place: $0.0, count: $0.1) }
        #expect(PlaceTitles.title(t) == title)
        #expect(PlaceTitles.locationNames(t) == names)
    }
}
