import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Where a file says it was taken: IPTC-IIM's location datasets in a JPEG's APP13, XMP's flat
/// properties and its LocationCreated / LocationShown structures, and an XMP sidecar's.
@Suite struct LocationTests {
    static func jpeg(iptc: IPTCFixture? = nil, xmp: String? = nil) -> [UInt8] {
        JPEGFixture(width: 8, height: 8, xmp: xmp,
                    leadingSegments: iptc.map { [.init(marker: 0xED, payload: $0.app13Payload())] } ?? []).bytes()
    }

    static func packet(_ body: String) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
          xmlns:Iptc4xmpCore="http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/"
          xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/"\(body)
        </rdf:Description></rdf:RDF></x:xmpmeta>
        """
    }

    @Test func iptcLocationDatasets() throws {
        let iptc = IPTCFixture(city: "Lisboa", subLocation: "Belém", region: "Lisboa", countryCode: "PRT", country: "Portugal")
        let place = try #require(try Build.read(Self.jpeg(iptc: iptc)).place)
        #expect(place == Place(city: "Lisboa", subLocation: "Belém", region: "Lisboa", country: "Portugal", countryCode: "PT",
                               source: .file))
    }

    @Test("IPTC-IIM text: UTF-8 when declared or valid, Latin-1 otherwise", arguments: [
        (Array("Zürich".utf8), true, "Zürich"),
        (Array("Zürich".utf8), false, "Zürich"),
        ([0x5A, 0xFC, 0x72, 0x69, 0x63, 0x68] as [UInt8], false, "Zürich"),   // Latin-1
        ([0x53, 0xE3, 0x6F, 0x20, 0x50, 0x61, 0x75, 0x6C, 0x6F], false, "São Paulo"),
    ])
    func iptcCharacterSets(bytes: [UInt8], declared: Bool, city: String) throws {
        let iptc = IPTCFixture(location: [90: bytes], declaresUTF8: declared)
        #expect(try Build.read(Self.jpeg(iptc: iptc)).place?.city == city)
    }

    @Test func iptcWithoutLocationHasNoPlace() throws {
        #expect(try Build.read(Self.jpeg(iptc: IPTCFixture(dateCreated: "20190504"))).place == nil)
        // Empty and blank datasets are no place either.
        #expect(try Build.read(Self.jpeg(iptc: IPTCFixture(city: "", region: "  "))).place == nil)
        // A country's name in the code field is dropped, the rest kept.
        let odd = try Build.read(Self.jpeg(iptc: IPTCFixture(city: "Porto", countryCode: "Portugal"))).place
        #expect(odd?.city == "Porto" && odd?.countryCode == nil)
        // Without a code, the country's name gives it.
        for (name, code) in [("United States", "US"), ("USA", "US"), ("portugal", "PT"), ("United States of America", "US"),
                             ("Deutschland", nil as String?)] {
            #expect(try Build.read(Self.jpeg(iptc: IPTCFixture(city: "X", country: name))).place?.countryCode == code, "\(name)")
        }
    }

    @Test func xmpFlatProperties() throws {
        let xmp = Self.packet("""
             photoshop:City="Zürich" photoshop:State="Zürich" photoshop:Country="Switzerland"
              Iptc4xmpCore:Location="Altstadt" Iptc4xmpCore:CountryCode="CH">
            """ + "<photoshop:Credit>x</photoshop:Credit>")
        let place = try #require(try Build.read(Self.jpeg(xmp: xmp)).place)
        #expect(place == Place(city: "Zürich", subLocation: "Altstadt", region: "Zürich", country: "Switzerland",
                               countryCode: "CH", source: .file))
    }

    @Test func xmpElementsAndEntities() throws {
        let xmp = Self.packet(">" + """
            <photoshop:City>Saint-Germain-en-Laye</photoshop:City>
            <photoshop:Country>France &amp; Navarre</photoshop:Country>
            """)
        let place = try Build.read(Self.jpeg(xmp: xmp)).place
        #expect(place?.city == "Saint-Germain-en-Laye" && place?.country == "France & Navarre")
    }

    @Test func xmpLocationShownStructure() throws {
        let xmp = Self.packet(">" + """
            <Iptc4xmpExt:LocationShown><rdf:Bag>
              <rdf:li Iptc4xmpExt:City="Sintra" Iptc4xmpExt:ProvinceState="Lisboa" Iptc4xmpExt:CountryName="Portugal"
                      Iptc4xmpExt:CountryCode="PT" Iptc4xmpExt:Sublocation="Palácio da Pena"/>
            </rdf:Bag></Iptc4xmpExt:LocationShown>
            """)
        let place = try Build.read(Self.jpeg(xmp: xmp)).place
        #expect(place == Place(city: "Sintra", subLocation: "Palácio da Pena", region: "Lisboa", country: "Portugal",
                               countryCode: "PT", source: .file))
    }

    @Test func locationCreatedBeforeShownBeforeFlat() throws {
        let xmp = Self.packet(" photoshop:City=\"Flat\">" + """
            <Iptc4xmpExt:LocationShown><rdf:Bag><rdf:li rdf:parseType="Resource">
              <Iptc4xmpExt:City>Shown</Iptc4xmpExt:City></rdf:li></rdf:Bag></Iptc4xmpExt:LocationShown>
            <Iptc4xmpExt:LocationCreated><rdf:Bag><rdf:li rdf:parseType="Resource">
              <Iptc4xmpExt:City>Created</Iptc4xmpExt:City></rdf:li></rdf:Bag></Iptc4xmpExt:LocationCreated>
            """)
        #expect(try Build.read(Self.jpeg(xmp: xmp)).place?.city == "Created")
        let shownOnly = Self.packet(" photoshop:City=\"Flat\">" + """
            <Iptc4xmpExt:LocationShown><rdf:Bag><rdf:li Iptc4xmpExt:City="Shown"/></rdf:Bag></Iptc4xmpExt:LocationShown>
            """)
        #expect(try Build.read(Self.jpeg(xmp: shownOnly)).place?.city == "Shown")
    }

    @Test func xmpBeforeIPTC() throws {
        let iptc = IPTCFixture(city: "Old Town")
        let xmp = Self.packet(" photoshop:City=\"New Town\">")
        #expect(try Build.read(Self.jpeg(iptc: iptc, xmp: xmp)).place?.city == "New Town")
        // XMP without location fields leaves IPTC's.
        #expect(try Build.read(Self.jpeg(iptc: iptc, xmp: Self.packet(" photoshop:Credit=\"x\">"))).place?.city == "Old Town")
    }

    @Test func sidecarLocation() throws {
        var source = MemorySource(Array(Self.packet(" photoshop:City=\"Porto\" Iptc4xmpCore:CountryCode=\"prt\">").utf8))
        let sidecar = try MetadataReader().readSidecar(&source)
        #expect(sidecar.place == Place(city: "Porto", countryCode: "PT", source: .file))
    }

    @Test("Country codes: alpha-2 kept, alpha-3 mapped, anything else dropped", arguments: [
        ("PT", "PT" as String?), ("prt", "PT"), (" DEU ", "DE"), ("GBR", "GB"), ("USA", "US"), ("XX", nil), ("Portugal", nil), ("", nil),
    ])
    func countryCodes(code: String, alpha2: String?) {
        #expect(CountryCodes.alpha2(code) == alpha2)
    }

    @Test func placeEncodingRoundTrips() {
        let places = [
            Place(city: "Lisbon", region: "Lisbon", country: "Portugal", countryCode: "PT", source: .geonames, timeZone: "Europe/Lisbon"),
            Place(region: "Aragon", country: "Spain", countryCode: "ES", near: "Huesca", source: .geonames),
            Place(city: "São Paulo", subLocation: "Sé", source: .file),
        ]
        for p in places { #expect(Place(encoded: p.encoded) == p) }
        #expect(Place(encoded: "nonsense") == nil)
    }
}
