import PhotoModel
import Testing

@Suite("Capture-date rules")
struct DateRulesTests {
    static func ts(_ s: String, _ off: String? = nil) -> Timestamp {
        Timestamp.exif(Array(s.utf8), offset: off.map { Array($0.utf8) })!
    }

    @Test("EXIF date-time parsing", arguments: [
        ("2019:05:04 13:22:10", nil, nil, "2019-05-04T13:22:10", nil as String?),
        ("2019:05:04 13:22:10", "054", nil, "2019-05-04T13:22:10.054", nil),
        ("2019:05:04 13:22:10", "023460", "+09:00", "2019-05-04T13:22:10.023", "+09:00"),
        ("2019:05:04 13:22:10", "5", "-05:00", "2019-05-04T13:22:10.500", "-05:00"),
        ("2019-05-04 13:22:10\0", nil, nil, "2019-05-04T13:22:10", nil),
        ("2019:05:04 13:22:10+02:00", nil, nil, "2019-05-04T13:22:10", "+02:00"),
        ("2019:05:04 13:22:10.25", nil, nil, "2019-05-04T13:22:10.250", nil),
    ] as [(String, String?, String?, String, String?)])
    func exifParsing(text: String, sub: String?, off: String?, expected: String, expectedOffset: String?) throws {
        let t = try #require(Timestamp.exif(Array(text.utf8), subSeconds: sub.map { Array($0.utf8) },
                                            offset: off.map { Array($0.utf8) }))
        #expect(t.local.description == expected)
        #expect(t.offset?.description == expectedOffset)
    }

    @Test("Invalid EXIF dates are rejected", arguments: [
        "0000:00:00 00:00:00", "    :  :     :  :  ", "2019:13:04 13:22:10", "2019:02:30 10:00:00",
        "2019:05:04 24:00:00", "2019:05:04", "", "garbage garbage garb", "1200:01:01 00:00:00",
    ])
    func exifInvalid(text: String) {
        #expect(Timestamp.exif(Array(text.utf8)) == nil)
    }

    @Test("ISO 8601 / XMP dates", arguments: [
        ("2019-05-04T13:22:10.5+02:00", "2019-05-04T13:22:10.500", "+02:00" as String?),
        ("2019-05-04T13:22:10Z", "2019-05-04T13:22:10", "+00:00"),
        ("2019-05-04T13:22", "2019-05-04T13:22:00", nil),
        ("2019-05-04", "2019-05-04T00:00:00", nil),
        ("2013-07-05T03:18:27-0700", "2013-07-05T03:18:27", "-07:00"),
    ])
    func iso(text: String, expected: String, offset: String?) throws {
        let t = try #require(Timestamp.iso8601(text))
        #expect(t.local.description == expected)
        #expect(t.offset?.description == offset)
    }

    @Test("Offsets", arguments: [
        ("+09:00", 32_400 as Int?), ("-05:00", -18_000), ("+0530", 19_800), ("Z", 0), ("+05:45", 20_700),
        ("+25:00", nil), ("09:00", nil), ("", nil), ("+09:00\0", 32_400),
    ])
    func offsets(text: String, seconds: Int?) {
        #expect(UTCOffset(parsing: text)?.seconds == seconds)
    }

    @Test("Rule order: the first source that exists wins")
    func order() {
        let zone = FixedZone(seconds: 3600)
        var c = DateCandidates()
        let name = Array("IMG_20200101_101010.jpg".utf8)
        // Only mtime.
        var d = CaptureDate.resolve(c, fileName: Array("x.jpg".utf8), mtimeNanoseconds: 1_600_000_000_000_000_000, zone: zone)
        #expect(d.source == .fileModified)
        #expect(d.local.description == "2020-09-13T13:26:40.000")
        #expect(d.offset?.description == "+01:00")
        // File name beats mtime.
        d = CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone)
        #expect(d.source == .fileName)
        #expect(d.local.description == "2020-01-01T10:10:10")
        #expect(d.offset == nil)
        // Container UTC (mvhd) is shown in the daemon's zone.
        c.containerUTC = 1_500_000_000
        d = CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone)
        #expect(d.source == .quicktime)
        #expect(d.local.description == "2017-07-14T03:40:00")
        #expect(d.offset?.description == "+01:00")
        // Apple's local creation date beats mvhd.
        c.quickTimeLocal = Timestamp.iso8601("2017-07-14T05:40:00+03:00")
        d = CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone)
        #expect(d.local.description == "2017-07-14T05:40:00")
        #expect(d.offset?.description == "+03:00")
        // EXIF DateTime is the time of the last edit: every capture date comes before it.
        c.exifModified = Self.ts("2015:01:01 00:00:00")
        #expect(CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone).source == .exifModified)
        c.iptc = Timestamp(local: LocalDateTime(year: 2016, month: 6, day: 1, hour: 12)!, offset: UTCOffset(seconds: 3600))
        d = CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone)
        #expect(d.source == .iptc && d.local.description == "2016-06-01T12:00:00" && d.offset?.description == "+01:00")
        c.xmp = Timestamp.iso8601("2016-01-01T00:00:00")
        #expect(CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone).source == .xmp)
        c.exifDigitized = Self.ts("2014:01:01 00:00:00")
        #expect(CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone).source == .exifDigitized)
        c.exifOriginal = Self.ts("2013:01:01 00:00:00", "+09:00")
        d = CaptureDate.resolve(c, fileName: name, mtimeNanoseconds: 0, zone: zone)
        #expect(d.source == .exifOriginal)
        #expect(d.local.description == "2013-01-01T00:00:00")
        #expect(d.offset?.description == "+09:00")
    }

    @Test("An XMP time without an offset takes the IPTC time's when both name the same moment", arguments: [
        ("2016-06-01T12:00:00", "120000+0100", "+01:00" as String?),
        ("2016-06-01T12:00:00.250", "120000-0530", "-05:30"),       // XMP's fraction: the same second
        ("2016-06-01T12:00:00+02:00", "120000+0100", "+02:00"),     // XMP's own offset stands
        ("2016-06-01T12:00:01", "120000+0100", nil),                // another second
        ("2016-06-01T12:00:00", "120000", nil),                     // IPTC without an offset
    ])
    func xmpOffsetFromIPTC(xmp: String, iptcTime: String, expected: String?) throws {
        var c = DateCandidates()
        c.xmp = Timestamp.iso8601(xmp)
        #expect(c.xmp != nil)
        c.iptc = Timestamp(local: LocalDateTime(year: 2016, month: 6, day: 1, hour: 12)!,
                           offset: iptcTime.count > 6 ? UTCOffset(parsing: String(iptcTime.dropFirst(6))) : nil)
        let d = CaptureDate.resolve(c, fileName: [], mtimeNanoseconds: 0, zone: FixedZone.utc)
        #expect(d.source == .xmp)
        #expect(d.offset?.description == expected)
    }

    @Test("GPS time stamps give a missing offset, rounded to 15 minutes", arguments: [
        ("2019:05:04 23:30:00", "2019-05-04T14:30:00", 9 * 3600 as Int?),   // Tokyo
        ("2019:05:04 00:10:00", "2019-05-04T05:10:00", -5 * 3600),           // New York, early morning
        ("2019:05:04 12:00:07", "2019-05-04T06:14:55", 20_700),              // Nepal +05:45, clocks 12 s apart
        ("2019:05:04 12:00:00", "2019-05-01T12:00:00", nil),                 // a stale fix days old
        ("2019:05:04 12:00:00", "2019-05-04T11:52:00", nil),                 // 8 minutes off: not a zone
    ])
    func gpsOffset(local: String, gps: String, expected: Int?) {
        var c = DateCandidates()
        c.exifOriginal = Self.ts(local)
        c.gpsUTC = LocalDateTime(iso: gps)
        let d = CaptureDate.resolve(c, fileName: [], mtimeNanoseconds: 0, zone: FixedZone.utc)
        #expect(d.offset?.seconds == expected)
        #expect(d.local == Self.ts(local).local)  // the wall time never moves
    }

    @Test("An explicit EXIF offset beats the GPS-derived one")
    func explicitOffsetWins() {
        var c = DateCandidates()
        c.exifOriginal = Self.ts("2019:05:04 23:30:00", "+08:00")
        c.gpsUTC = LocalDateTime(iso: "2019-05-04T14:30:00")
        #expect(CaptureDate.resolve(c, fileName: [], mtimeNanoseconds: 0, zone: FixedZone.utc).offset?.seconds == 8 * 3600)
    }

    @Test("Local calendar day on the capture clock, across offsets", arguments: [
        ("2024-03-31T23:30:00Z", 2 * 3600, "2024-04-01"),
        ("2024-03-31T23:30:00Z", 14 * 3600, "2024-04-01"),
        ("2024-03-31T23:30:00Z", -5 * 3600, "2024-03-31"),
        ("1969-12-31T23:59:59Z", 0, "1969-12-31"),
    ])
    func localDay(utc: String, offset: Int, day: String) throws {
        let t = try #require(Timestamp.iso8601(utc))
        let unix = try #require(t.unixSeconds)
        let local = try #require(LocalDateTime(unixSeconds: unix, offsetSeconds: offset))
        #expect(local.dateString == day)
    }

    @Test("Civil calendar round trip")
    func civil() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let (y, m, d) = CivilTime.civilFromDays(days)
            #expect(CivilTime.daysFromCivil(year: y, month: m, day: d) == days)
        }
        #expect(CivilTime.weekday(days: CivilTime.daysFromCivil(year: 2019, month: 5, day: 4)) == 6)  // a Saturday
    }
}

@Suite("Dates in file names")
struct FileNameDateTests {
    @Test(arguments: [
        ("IMG_20190504_132210.jpg", "2019-05-04T13:22:10" as String?),
        ("VID_20190504_132210.mp4", "2019-05-04T13:22:10"),
        ("PXL_20230101_101010123.jpg", "2023-01-01T10:10:10.123"),
        ("20190504_132210.jpg", "2019-05-04T13:22:10"),
        ("IMG-20190504-WA0001.jpg", "2019-05-04T00:00:00"),
        ("Screenshot_20230504-132210.png", "2023-05-04T13:22:10"),
        ("Screenshot 2023-05-04 at 13.22.10.png", "2023-05-04T13:22:10"),
        ("Screenshot from 2023-05-04 13-22-10.png", "2023-05-04T13:22:10"),
        ("2019-05-04 13.22.10.jpg", "2019-05-04T13:22:10"),
        ("WhatsApp Image 2021-03-04 at 10.11.12.jpeg", "2021-03-04T10:11:12"),
        ("20190504132210.jpg", "2019-05-04T13:22:10"),
        ("DSC_0001.JPG", nil),
        ("IMG_1234.jpg", nil),
        ("photo_99999999.jpg", nil),
        ("1556976130.jpg", nil),
        ("20191332_101010.jpg", nil),
        ("2019/05/04/x.jpg", nil),
    ])
    func parse(name: String, expected: String?) {
        #expect(FileNameDate.parse(Array(name.utf8))?.description == expected)
    }
}

@Suite("Asset ids")
struct AssetIDTests {
    @Test func shape() {
        var seen = Set<AssetID>()
        var previous: AssetID?
        for i in 0..<2000 {
            let id = AssetID.random(milliseconds: 1_764_000_000_000 + Int64(i))
            // Later ids sort after earlier ones (the index on ids grows at its end).
            if let previous { #expect(previous < id) }
            previous = id
            #expect(id.rawValue.count == 22)
            #expect(id.rawValue.hasPrefix("a_"))
            #expect(!id.rawValue.contains(" "))
            #expect(AssetID(rawValue: id.rawValue) == id)
            seen.insert(id)
        }
        #expect(seen.count == 2000)
        #expect(AssetID.random(milliseconds: 5) != AssetID.random(milliseconds: 5))
        #expect(AssetID(rawValue: "-a_aaaaaaaaaaaaaaaaaaaa") == nil)
        #expect(AssetID(rawValue: "a_AAAAAAAAAAAAAAAAAAAA") == nil)
    }

    @Test("Ids of one instant counted up from one noise value: distinct, ascending, sharing all but the last digits; the noise wraps within its 55 bits")
    func counted() {
        let base: UInt64 = 0x12_3456_789A_BCDE
        let ids = (0..<100).map { AssetID(milliseconds: 1_764_000_000_000, noise: base + UInt64($0)) }
        #expect(Set(ids).count == 100 && ids == ids.sorted())
        #expect(ids.allSatisfy { $0.rawValue.prefix(19) == ids[0].rawValue.prefix(19) })
        let top = AssetID(milliseconds: 9, noise: (1 << 55) - 1)
        #expect(AssetID(milliseconds: 9, noise: 1 << 55) < top && AssetID(rawValue: top.rawValue) == top)
    }
}

@Suite("Content fingerprint")
struct FingerprintTests {
    @Test func sensitivity() {
        let a = [UInt8](repeating: 7, count: 1000)
        var b = a
        b[999] = 8
        let fa = ContentFingerprint.compute(size: 1000, head: a, tail: [])
        #expect(fa == ContentFingerprint.compute(size: 1000, head: a, tail: []))
        #expect(fa != ContentFingerprint.compute(size: 1000, head: b, tail: []))
        #expect(fa != ContentFingerprint.compute(size: 1001, head: a, tail: []))
        #expect(ContentFingerprint.tailRange(size: 1000).isEmpty)
        #expect(ContentFingerprint.tailRange(size: 100_000) == 65_536..<100_000)
        #expect(ContentFingerprint.tailRange(size: 1_000_000) == (1_000_000 - 65_536)..<1_000_000)
    }
}

@Suite("Paths are bytes")
struct PathBytesTests {
    @Test func nfcAndNfdDiffer() {
        let nfc = PathBytes("/lib/Cr\u{E9}mieux.tiff")
        let nfd = PathBytes("/lib/Cre\u{301}mieux.tiff")
        #expect(nfc != nfd)  // Swift's String would call them equal
        #expect(nfc.string == "/lib/Crémieux.tiff")
        let invalid = PathBytes([0x2F, 0x61, 0xFF, 0x2E, 0x6A, 0x70, 0x67])
        #expect(!invalid.isValidUTF8)
        #expect(PathBytes("/a/b").isWithin(PathBytes("/a")))
        #expect(!PathBytes("/ab").isWithin(PathBytes("/a")))
        #expect(PathBytes("/a/b/c.jpg").parent == PathBytes("/a/b"))
    }
}

@Suite("A stored capture time's order key")
struct LocalDateTimeOrderKeyTests {
    func key(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { LocalDateTime.orderKey(isoBytes: $0) }
    }

    @Test("Keys order as the texts do, milliseconds or not")
    func ordersAsText() throws {
        let texts = ["1826-01-01T00:00:00", "2020-03-14T10:22:33", "2020-03-14T10:22:33.000", "2020-03-14T10:22:33.001",
                     "2020-03-14T10:22:33.999", "2020-03-14T10:22:34", "2020-12-31T23:59:59.5x0", "2199-12-31T23:59:59.999",
                     "2020-03-14 10:22:33", "2020-3-14T10:22:33", ""]
        let keyed = try texts.filter { key($0) != nil }.map { ($0, try #require(key($0))) }
        #expect(keyed.count == 7)
        for (a, ka) in keyed {
            for (b, kb) in keyed { #expect((ka < kb) == (a < b), "\(a) \(b)") }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let t = LocalDateTime(year: Int.random(in: 1826...2199, using: &rng), month: Int.random(in: 1...12, using: &rng),
                                  day: Int.random(in: 1...28, using: &rng), hour: Int.random(in: 0...23, using: &rng),
                                  minute: Int.random(in: 0...59, using: &rng), second: Int.random(in: 0...59, using: &rng),
                                  millisecond: Bool.random(using: &rng) ? Int.random(in: 0...999, using: &rng) : nil)!
            let u = LocalDateTime(year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute,
                                  second: t.second, millisecond: Bool.random(using: &rng) ? Int.random(in: 0...999, using: &rng) : nil)!
            #expect((key(t.description)! < key(u.description)!) == (t.description < u.description), "\(t) \(u)")
        }
    }
}
