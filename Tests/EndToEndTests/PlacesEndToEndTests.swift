import Foundation
import PhotoClient
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing

/// Places through the real binaries: GeoNames names from coordinates, a file's own location
/// fields before them, a sidecar's before those, zone offsets, and a sidecar added while
/// running.
@Suite("Places, end to end", .serialized)
struct PlacesEndToEndTests {
    static func tagged(_ iptc: IPTCFixture, gps: GPSFixture) -> [UInt8] {
        let exif = ExifFixture(make: "Canon", model: "EOS 5D", orientation: 1, dateTimeOriginal: "2021:07:01 12:00:00",
                               offsetTimeOriginal: "+01:00", gps: gps)
        return JPEGFixture(width: 64, height: 48, exif: exif, leadingSegments: [.init(marker: 0xED, payload: iptc.app13Payload())]).bytes()
    }

    @Test("GeoNames places from coordinates, IPTC's before them, a sidecar's before both; the zone's offset for a photo without one; a sidecar added live")
    func places() throws {
        let lib = try TemporaryDirectory("places-lib")
        defer { lib.remove() }
        // Lisbon's Baixa, summer, no offset in the file: the zone gives +01:00.
        try lib.write("trip/baixa.jpg", Library.jpeg(date: "2021:07:01 12:00:00", gps: GPSFixture(latitude: 38.711, longitude: -9.1366)))
        // The same spot in winter, with its own offset: kept.
        try lib.write("trip/winter.jpg", Library.jpeg(date: "2021:01:10 12:00:00", offset: "+00:00",
                                                      gps: GPSFixture(latitude: 38.711, longitude: -9.1366)))
        // The Eiffel Tower: Paris, not the suburb whose centre is nearer.
        try lib.write("trip/eiffel.jpg", Library.jpeg(date: "2021:07:02 12:00:00", offset: "+02:00",
                                                      gps: GPSFixture(latitude: 48.8584, longitude: 2.2945)))
        // Mid-Atlantic: no place.
        try lib.write("trip/sea.jpg", Library.jpeg(date: "2021:07:03 12:00:00", offset: "+00:00", gps: GPSFixture(latitude: 30, longitude: -40)))
        // IPTC location fields (alpha-3 code) beside coordinates in Lisbon.
        try lib.write("trip/pena.jpg", Self.tagged(IPTCFixture(city: "Sintra", subLocation: "Palácio da Pena", region: "Lisboa",
                                                               countryCode: "PRT", country: "Portugal"),
                                                   gps: GPSFixture(latitude: 38.711, longitude: -9.1366)))
        try lib.write("trip/nogps.jpg", Library.jpeg(date: "2021:07:04 12:00:00"))

        let state = try TemporaryDirectory("places")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForAssets(6)
        func asset(_ name: String) throws -> JSONValue? {
            try daemon.allAssets().first { $0["path"]?.stringValue?.hasSuffix("/" + name) == true }
        }
        let baixa = try #require(try asset("baixa.jpg"))
        #expect(baixa["place"]?["city"]?.stringValue == "Lisbon")
        #expect(baixa["place"]?["countryCode"]?.stringValue == "PT")
        #expect(baixa["place"]?["source"]?.stringValue == "geonames")
        #expect(baixa["utcOffset"]?.stringValue == "+01:00" && baixa["utcOffsetSource"]?.stringValue == "place")
        #expect(baixa["localDateTime"]?.stringValue == "2021-07-01T12:00:00")
        let winter = try #require(try asset("winter.jpg"))
        #expect(winter["utcOffset"]?.stringValue == "+00:00" && winter["utcOffsetSource"]?.stringValue == "metadata")
        #expect(try asset("eiffel.jpg")?["place"]?["city"]?.stringValue == "Paris")
        #expect(try asset("sea.jpg")?["place"] == .null)
        #expect(try asset("nogps.jpg")?["place"] == .null)
        #expect(try asset("nogps.jpg")?["utcOffsetSource"] == .null)
        let pena = try #require(try asset("pena.jpg"))
        #expect(pena["place"] == .object(["city": "Sintra", "subLocation": "Palácio da Pena", "region": "Lisboa", "country": "Portugal",
                                          "countryCode": "PT", "source": "file"]))

        // Places as collections: Portugal > Lisbon > Lisbon (and Sintra from the IPTC fields),
        // France > Île-de-France > Paris; collections.assets on a city lists its photos.
        let c = try daemon.connect()
        let places = try c.call("places.fetch")
        let countries = try #require(places["places"]?.arrayValue)
        #expect(countries.map { $0["title"]?.stringValue } == ["Portugal", "France"])
        #expect(countries[0]["countryCode"]?.stringValue == "PT" && countries[0]["assetCount"]?.intValue == 3)
        let lisbonRegion = try #require(countries[0]["places"]?[0])
        #expect(lisbonRegion["kind"]?.stringValue == "region")
        let cities = lisbonRegion["places"]?.arrayValue ?? []
        let lisbonCity = try #require(cities.first { $0["title"]?.stringValue == "Lisbon" })
        #expect(lisbonCity["kind"]?.stringValue == "city" && lisbonCity["assetCount"]?.intValue == 2)
        #expect(lisbonCity["keyAssetIDs"]?.arrayValue?.count == 2)
        let inLisbon = try c.call("collections.assets", ["id": lisbonCity["id"]!, "limit": 10])
        #expect(Set(inLisbon["assets"]?.arrayValue?.compactMap { $0["path"]?.stringValue?.split(separator: "/").last.map(String.init) } ?? [])
                == ["baixa.jpg", "winter.jpg"])
        #expect(try c.call("collections.assets", ["id": countries[0]["id"]!, "limit": 10])["total"]?.intValue == 3)
        #expect(throws: (any Error).self) { try c.call("collections.assets", ["id": "pl_0000000000000000"]) }
        // The same through photoctl and the Swift client.
        let table = try run("photoctl", ["--socket", daemon.socket.string, "places"]).stdout
        #expect(table.contains("Portugal") && table.contains("    Lisbon") && table.contains(lisbonCity["id"]!.stringValue!))
        let fetched = try PhotoLibrary(socket: daemon.socket).fetchPlaces()
        #expect(fetched.items.map(\.title) == ["Portugal", "France"])
        // Sintra's file spells its region "Lisboa", GeoNames "Lisbon District": two regions, each as its source spells it.
        #expect(fetched.items[0].places.map(\.title).sorted() == ["Lisboa", "Lisbon District"])
        #expect(fetched.items[0].places.flatMap(\.places).contains { $0.title == "Sintra" && $0.kind == "city" })
        // The moment of the day in Lisbon is titled by it.
        let moments = try c.call("moments.fetch")["moments"]?.arrayValue ?? []
        let july1 = try #require(moments.first { $0["id"]?.stringValue == "m_20210701" })
        #expect(july1["title"]?.stringValue == "Lisbon & Sintra" && july1["locationNames"] == ["Lisbon", "Sintra"])
        #expect(july1["dateTitle"]?.stringValue == "Thursday, 1 July 2021")

        // A sidecar naming the place, written while photod runs: the asset's place follows.
        let id = try #require(baixa["id"]?.stringValue)
        let xmp = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description rdf:about="" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" photoshop:City="Cascais"
              photoshop:Country="Portugal"/></rdf:RDF></x:xmpmeta>
            """
        try lib.write("trip/baixa.jpg.xmp", Array(xmp.utf8))
        let moved = try eventually("the sidecar's place on the asset", timeout: .seconds(60)) { try asset("baixa.jpg") } until: {
            $0?["place"]?["city"]?.stringValue == "Cascais"
        }
        #expect(moved?["id"]?.stringValue == id)
        #expect(moved?["place"]?["source"]?.stringValue == "file")
        // With the sidecar gone, the coordinates' place is back.
        try FileManager.default.removeItem(atPath: lib("trip/baixa.jpg.xmp").string)
        _ = try eventually("the coordinates' place again", timeout: .seconds(60)) { try asset("baixa.jpg") } until: {
            $0?["place"]?["city"]?.stringValue == "Lisbon"
        }
        #expect(daemon.stop() == 0)

        // With the gazetteer off, a new photo's coordinates name no place; a file's own still do.
        try lib.write("trip/later.jpg", Library.jpeg(date: "2021:07:05 12:00:00", gps: GPSFixture(latitude: 48.8584, longitude: 2.2945)))
        let plain = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--gazetteer", "off"])
        try plain.waitForAssets(7)
        let later = try #require(try plain.allAssets().first { $0["path"]?.stringValue?.hasSuffix("/later.jpg") == true })
        #expect(later["place"] == .null && later["utcOffsetSource"] == .null)
        #expect(try plain.allAssets().first { $0["path"]?.stringValue?.hasSuffix("/pena.jpg") == true }?["place"]?["city"] == "Sintra")
        #expect(plain.stop() == 0)
    }

    @Test("Search: words from names, folders, keywords and places, folded and by prefix; it follows a folder moved while running; a bad query is -32602 with its position")
    func search() throws {
        let lib = try TemporaryDirectory("search-lib")
        defer { lib.remove() }
        try lib.write("trips/Lisbon 2021/IMG_1.jpg", Library.jpeg(date: "2021:07:01 12:00:00"))
        try lib.write("trips/Lisbon 2021/IMG_2.jpg", Library.jpeg(date: "2021:07:01 13:00:00"))
        try lib.write("other/zurich.jpg", Library.jpeg(date: "2021:07:02 12:00:00", gps: GPSFixture(latitude: 47.3769, longitude: 8.5417)))
        let state = try TemporaryDirectory("search")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForAssets(3)
        let c = try daemon.connect()
        func found(_ query: String) throws -> [String] {
            (try c.call("assets.search", ["query": .string(query)])["assets"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        }
        let lisbon = try found("lisb")
        #expect(lisbon.count == 2)
        #expect(try found("ZÜRICH").count == 1, "GeoNames spells it Zürich; folded")
        #expect(try found("switzerland zur").count == 1)
        #expect(try c.call("assets.search", ["query": "zurich", "predicate": "localDate == \"2021-07-02\""])["total"]?.intValue == 1)
        #expect(try c.call("assets.search", ["query": "lisbon", "predicate": "localDate == \"2021-07-02\""])["total"]?.intValue == 0)
        // The folder renamed while photod runs: the words follow, the ids stay.
        try FileManager.default.moveItem(atPath: lib("trips/Lisbon 2021").string, toPath: lib("trips/Porto 2021").string)
        let porto = try eventually("the moved folder's new name in the search", timeout: .seconds(60)) { try found("porto") } until: { $0.count == 2 }
        #expect(Set(porto) == Set(lisbon))
        #expect(try found("lisbon").isEmpty)
        // Errors name the position; FTS5's own syntax is only text.
        do {
            _ = try c.call("assets.search", ["query": "beach \"sao paulo"])
            Issue.record("an unbalanced quote was accepted")
        } catch {
            #expect(String(describing: error).contains("at 6"), "\(error)")
        }
        #expect(try found("NEAR(lisbon OR *").isEmpty)
        // photoctl and the Swift client.
        let table = try run("photoctl", ["--socket", daemon.socket.string, "search", "porto", "2021"]).stdout
        #expect(table.contains("Porto 2021/IMG_1.jpg") && table.contains("Porto 2021/IMG_2.jpg"))
        let bad = try run("photoctl", ["--socket", daemon.socket.string, "search", "\"porto"])
        #expect(bad.status == 64 && bad.stderr.contains("^"), "\(bad.status) \(bad.stderr)")
        let viaClient = try PhotoLibrary(socket: daemon.socket).search("zur")
        #expect(viaClient.total == 1 && viaClient.assets.first?.place?.countryCode == "CH")

        // Collections by their own words: a place, a user album, a folder album, a moment, a smart album.
        let ids = try #require(porto.first)
        let album = try c.call("albums.create", ["title": "Best of Porto"])["id"]?.stringValue
        _ = try c.call("albums.addAssets", ["id": .string(try #require(album)), "ids": [.string(ids)]])
        func kinds(_ query: String) throws -> [String] {
            (try c.call("collections.search", ["query": .string(query)])["collections"]?.arrayValue ?? []).map {
                "\($0["kind"]?.stringValue ?? "?"):\($0["title"]?.stringValue ?? $0["localDate"]?.stringValue ?? "?")"
            }
        }
        #expect(try kinds("porto") == ["user:Best of Porto", "folder:Porto 2021"])
        #expect(try kinds("switz") == ["country:Switzerland"])
        let zurich = try kinds("zurich")
        #expect(zurich == ["region:Canton of Zurich", "city:Zurich", "moment:Zurich"], "\(zurich)")
        #expect(try kinds("favor") == ["smart:Favorites"])
        #expect(try kinds("nothing here").isEmpty)
        let viaSwift = try PhotoLibrary(socket: daemon.socket).searchCollections("zurich")
        #expect(viaSwift.places.map(\.title) == ["Canton of Zurich", "Zurich"] && viaSwift.collections.map(\.id) == ["m_20210702"])
        #expect(throws: (any Error).self) { try c.call("collections.search", ["query": "\"porto"]) }
        #expect(daemon.stop() == 0)
    }
}

