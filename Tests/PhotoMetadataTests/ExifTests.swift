import CExif
import Foundation
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// EXIF: the fields, GPS signs and references, orientation range, the EXIF block in each
/// container, and each known limit of libexif 0.6.24 (which photod used until 2026-12-06: the
/// limits are why it walked the structure itself, and the oracle in `LibExifOracleTests` is held
/// to blocks within them) with photod reading the same files.
@Suite struct ExifTests {
    static let full = ExifFixture(
        make: "Canon\0 ", model: "  EOS 80D ", lensModel: "EF-S18-135mm", software: "Firmware 1.0", orientation: 6,
        dateTimeOriginal: "2019:05:04 13:22:10", subSecTimeOriginal: "054", offsetTimeOriginal: "+02:00",
        dateTimeDigitized: "2019:05:04 13:22:11", subSecTimeDigitized: "5", offsetTimeDigitized: "+02:00",
        dateTime: "2020:01:01 10:00:00", offsetTime: "-05:00", userComment: "Screenshot",
        pixelDimensions: (9999, 9999),
        gps: GPSFixture(latitude: -33.8688, longitude: 151.2093, altitude: -12.5, dateStamp: "2019:05:04",
                        timeStamp: (11, 22, 10)))

    /// libexif's view of a block: how many entries it loaded into IFD0, ExifIFD and GPS.
    static func libexifCounts(_ block: [UInt8]) -> (ifd0: Int, exif: Int, gps: Int) {
        guard let data = exif_data_new() else { return (0, 0, 0) }
        defer { exif_data_unref(data) }
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        block.withUnsafeBufferPointer { exif_data_load_data(data, $0.baseAddress, UInt32($0.count)) }
        let ifd = data.pointee.ifd
        return (Int(ifd.0!.pointee.count), Int(ifd.2!.pointee.count), Int(ifd.3!.pointee.count))
    }

    static func expectFull(_ m: MediaMetadata, _ context: String = "") {
        #expect(m.make == "Canon", "\(context)")
        #expect(m.model == "EOS 80D", "\(context)")
        #expect(m.lensModel == "EF-S18-135mm", "\(context)")
        #expect(m.software == "Firmware 1.0", "\(context)")
        #expect(m.userComment == "Screenshot", "\(context)")
        // A HEIF file's orientation is its irot/imir (none here), never its EXIF tag.
        #expect(m.orientation == ([.heic, .heif, .avif].contains(m.format) ? 1 : 6), "\(context)")
        #expect(m.dates.exifOriginal == Timestamp(local: LocalDateTime(year: 2019, month: 5, day: 4, hour: 13, minute: 22, second: 10,
                                                                          millisecond: 54)!, offset: UTCOffset(seconds: 7200)), "\(context)")
        #expect(m.dates.exifDigitized?.local.millisecond == 500, "\(context)")
        #expect(m.dates.exifDigitized?.offset == UTCOffset(seconds: 7200), "\(context)")
        #expect(m.dates.exifModified == Timestamp(local: LocalDateTime(year: 2020, month: 1, day: 1, hour: 10)!,
                                                  offset: UTCOffset(seconds: -18000)), "\(context)")
        #expect(m.dates.gpsUTC == LocalDateTime(year: 2019, month: 5, day: 4, hour: 11, minute: 22, second: 10), "\(context)")
        #expect(abs((m.latitude ?? 0) - -33.8688) < 1e-6, "\(context)")
        #expect(abs((m.longitude ?? 0) - 151.2093) < 1e-6, "\(context)")
        #expect(m.altitude == -12.5, "\(context)")
    }

    @Test(arguments: [FixtureByteOrder.little, .big])
    func readsEveryFieldInBothByteOrders(_ order: FixtureByteOrder) throws {
        var exif = Self.full
        exif.byteOrder = order
        let m = try Build.read(JPEGFixture.make(width: 640, height: 480, exif: exif))
        Self.expectFull(m, "\(order)")
        // The size is the frame's, never the stale PixelXDimension.
        #expect(m.pixelWidth == 640 && m.pixelHeight == 480)
    }

    // MARK: EXIF block location in each container

    struct Located: Sendable, CustomStringConvertible {
        let name: String
        let bytes: [UInt8]
        var description: String { name }
    }

    static let containers: [Located] = {
        let exif = full
        var list: [Located] = [
            Located(name: "JPEG APP1", bytes: JPEGFixture.make(width: 8, height: 8, exif: exif)),
            Located(name: "JPEG APP1 after three APP6 segments",
                    bytes: JPEGFixture(width: 8, height: 8, exif: exif,
                                       leadingSegments: Array(repeating: .init(marker: 0xE6, payload: Array("QVALUE\0".utf8) + [1, 2, 3]), count: 3)).bytes()),
            Located(name: "PNG eXIf before IDAT", bytes: PNGFixture(width: 8, height: 8, exif: exif).bytes()),
            Located(name: "PNG eXIf after IDAT", bytes: PNGFixture(width: 8, height: 8, exif: exif, exifAfterImageData: true).bytes()),
            Located(name: "WebP EXIF chunk", bytes: Build.riff("WEBP", Build.chunk("VP8X", [8, 0, 0, 0, 7, 0, 0, 7, 0, 0])
                + Build.chunk("VP8 ", [0x30, 0x01, 0, 0x9D, 0x01, 0x2A, 8, 0, 8, 0]) + Build.chunk("EXIF", exif.app1Payload()))),
            Located(name: "WebP EXIF chunk without prefix", bytes: Build.riff("WEBP", Build.chunk("VP8 ", [0x30, 0x01, 0, 0x9D, 0x01, 0x2A, 8, 0, 8, 0])
                + Build.chunk("EXIF", exif.bytes()))),
            Located(name: "HEIC Exif item", bytes: Build.heif(width: 8, height: 8, exif: exif.bytes())),
            Located(name: "AVIF Exif item", bytes: Build.heif(brand: "avif", width: 8, height: 8, exif: exif.bytes())),
        ]
        // A TIFF file is itself the block.
        var tiff = exif.tiff
        tiff.ifd0 += [.init(0x0100, .long([8])), .init(0x0101, .long([8]))]
        list.append(Located(name: "TIFF file", bytes: tiff.bytes()))
        tiff.byteOrder = .big
        list.append(Located(name: "TIFF file, big-endian", bytes: tiff.bytes()))
        let jxl = [0, 0, 0, 12] + Build.ascii("JXL ") + [0x0D, 0x0A, 0x87, 0x0A] + Build.box("jxlc", [0xFF, 0x0A, 0x7F, 0x00])
            + Build.box("Exif", Build.be32(0) + exif.bytes())
        list.append(Located(name: "JPEG XL Exif box", bytes: jxl))
        return list
    }()

    @Test(arguments: containers)
    func locatesTheBlock(_ c: Located) throws {
        Self.expectFull(try Build.read(c.bytes), c.name)
    }

    // MARK: libexif 0.6.24 limits, each shown on libexif itself and then on photod

    /// Limit 1: libexif needs `Exif\0\0` before raw TIFF data (PNG eXIf and TIFF files have none).
    @Test func limitRawTIFFNeedsPrefix() throws {
        let raw = Self.full.bytes()
        #expect(Self.libexifCounts(raw).ifd0 == 0, "libexif was expected to refuse a bare TIFF structure")
        #expect(Self.libexifCounts(Self.full.app1Payload()).ifd0 > 0)
        Self.expectFull(try Build.read(PNGFixture(width: 8, height: 8, exif: Self.full).bytes()))
    }

    /// Limit 2: libexif ignores IFDs beyond about 64 KiB; libtiff often writes IFD0 after the image data.
    @Test func limitIFDsBeyond64KiB() throws {
        var tiff = Self.full.tiff
        tiff.padding = 100_000
        tiff.ifd0 += [.init(0x0100, .long([8])), .init(0x0101, .long([8]))]
        let file = tiff.bytes()
        #expect(Self.libexifCounts(Array("Exif\0\0".utf8) + file).ifd0 == 0, "libexif was expected to miss IFD0 at 100,008")
        let m = try Build.read(file, name: "scan.tif")
        Self.expectFull(m)
        #expect(m.format == .tiff && m.pixelWidth == 8)
    }

    /// Limit 3: one IFD0 entry of a pointer type with an offset past the data (here
    /// JPEGInterchangeFormat) makes libexif abandon the rest of IFD0, and with it the ExifIFD
    /// and GPS pointers that sort after it.
    @Test func limitOneBadEntryDropsTheRestOfIFD0() throws {
        var exif = Self.full
        exif.extraIFD0 = [.init(0x0201, .raw(type: 4, count: 1, field: 0x00FF_FFFF))]
        let counts = Self.libexifCounts(exif.app1Payload())
        #expect(counts.exif == 0 && counts.gps == 0, "libexif was expected to drop the ExifIFD and GPS IFD: \(counts)")
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
        Self.expectFull(m)
    }

    /// Limit 4: GPS values stored as SRATIONAL (signs in the values); decoding as RATIONAL
    /// would turn -33.87 into about 4.29e9 degrees.
    @Test func limitSignedRationalGPS() throws {
        let gps = GPSFixture(latitude: -33.8688, longitude: -70.6483, altitude: -4.25, signedRationals: true)
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: ExifFixture(gps: gps)))
        #expect(abs((m.latitude ?? 0) + 33.8688) < 1e-6)
        #expect(abs((m.longitude ?? 0) + 70.6483) < 1e-6)
        #expect(m.altitude == -4.25)
        // The same with references that agree with the signs.
        var withRefs = gps
        withRefs.latitudeRef = "S"
        withRefs.longitudeRef = "W"
        let m2 = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: ExifFixture(gps: withRefs)))
        #expect(abs((m2.latitude ?? 0) + 33.8688) < 1e-6 && abs((m2.longitude ?? 0) + 70.6483) < 1e-6)
    }

    /// libexif's JPEG loader (used by `exif_data_new_from_file`) stops at an APP6 segment.
    @Test func libexifFileLoaderStopsAtAPP6() throws {
        let bytes = JPEGFixture(width: 8, height: 8, exif: Self.full,
                                leadingSegments: [.init(marker: 0xE6, payload: Array("QVALUE\0".utf8) + [1, 2, 3])]).bytes()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("app6-\(UUID().uuidString).jpg")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let data = exif_data_new_from_file(url.path)
        let loaded = data.map { Int($0.pointee.ifd.0!.pointee.count) } ?? 0
        if let data { exif_data_unref(data) }
        #expect(loaded == 0, "libexif's loader was expected to give up at APP6")
        Self.expectFull(try Build.read(bytes))
    }

    // MARK: GPS references and values

    struct GPSCase: Sendable, CustomStringConvertible {
        let name: String
        let gps: GPSFixture
        let expected: (Double, Double)?
        var description: String { name }
    }

    static let gpsCases: [GPSCase] = [
        GPSCase(name: "north east", gps: GPSFixture(latitude: 52.52, longitude: 13.405), expected: (52.52, 13.405)),
        GPSCase(name: "south west", gps: GPSFixture(latitude: -0.3713, longitude: -78.4678), expected: (-0.3713, -78.4678)),
        GPSCase(name: "(0, 0) is a position", gps: GPSFixture(latitude: 0, longitude: 0), expected: (0, 0)),
        GPSCase(name: "refs without values", gps: GPSFixture(latitudeRef: "N", longitudeRef: "E"), expected: nil),
        GPSCase(name: "latitude without reference", gps: GPSFixture(latitude: 10, longitude: 20, latitudeRef: ""), expected: nil),
        GPSCase(name: "latitude only", gps: GPSFixture(latitude: 10), expected: nil),
        GPSCase(name: "invalid reference letter", gps: GPSFixture(latitude: 10, longitude: 20, latitudeRef: "X"), expected: nil),
    ]

    @Test(arguments: gpsCases)
    func gpsSignsAndReferences(_ c: GPSCase) throws {
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: ExifFixture(gps: c.gps)))
        if let (lat, lon) = c.expected {
            #expect(abs((m.latitude ?? .nan) - lat) < 1e-6 && abs((m.longitude ?? .nan) - lon) < 1e-6)
        } else {
            #expect(m.latitude == nil && m.longitude == nil)
        }
    }

    @Test func altitudeReference() throws {
        let above = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: ExifFixture(gps: GPSFixture(altitude: 634))))
        #expect(above.altitude == 634)
        let below = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: ExifFixture(gps: GPSFixture(altitude: -3.98))))
        #expect(below.altitude == -3.98)
    }

    // MARK: Orientation and dates

    @Test(arguments: [(0, nil), (1, 1), (3, 3), (6, 6), (8, 8), (9, nil), (65535, nil)] as [(Int, Int?)])
    func orientationRange(_ stored: Int, _ expected: Int?) throws {
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: ExifFixture(make: "X", orientation: stored)))
        #expect(m.orientation == expected)
    }

    @Test func blankAndZeroDatesAreNoDates() throws {
        let exif = ExifFixture(dateTimeOriginal: "0000:00:00 00:00:00", dateTimeDigitized: "    :  :     :  :  ", dateTime: "")
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
        #expect(m.dates.exifOriginal == nil && m.dates.exifDigitized == nil && m.dates.exifModified == nil)
    }

    @Test func dateTimeOriginalMisplacedInIFD0IsRead() throws {
        // Some writers put the EXIF dates in IFD0, where libexif would not look for them.
        let exif = ExifFixture(make: "X", extraIFD0: [.init(0x9003, .ascii("2018:07:06 05:04:03"))])
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
        #expect(m.dates.exifOriginal?.local == LocalDateTime(year: 2018, month: 7, day: 6, hour: 5, minute: 4, second: 3))
    }

    @Test func gpsTimeGivesTheOffset() throws {
        let exif = ExifFixture(dateTimeOriginal: "2019:05:04 22:30:00",
                               gps: GPSFixture(latitude: 35.68, longitude: 139.65, dateStamp: "2019:05:04", timeStamp: (13, 30, 2)))
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
        let resolved = CaptureDate.resolve(m.dates, fileName: [], mtimeNanoseconds: 0, zone: FixedZone.utc)
        #expect(resolved.offset == UTCOffset(seconds: 9 * 3600))
        #expect(resolved.source == .exifOriginal)
    }

    // MARK: Broken structures

    @Test func loopsAndLyingPointersTerminate() throws {
        // ExifIFD pointing back at IFD0, GPS pointing past the end, IFD1 linking back to IFD0.
        let tiff = TIFFFixture(ifd0: [.init(0x010F, .ascii("Loop")), .init(0x8769, .raw(type: 4, count: 1, field: 8)),
                                      .init(0x8825, .raw(type: 4, count: 1, field: 0x7FFF_FFFF))],
                               ifd1: [.init(0x0103, .short([6]))])
        var bytes = tiff.bytes()
        // Patch IFD1's next-IFD link to IFD0 (the last 4 bytes).
        bytes.replaceSubrange((bytes.count - 4)..<bytes.count, with: [8, 0, 0, 0])
        let m = try Build.read(JPEGFixture(width: 8, height: 8, leadingSegments: [.init(marker: 0xE1, payload: Array("Exif\0\0".utf8) + bytes)]).bytes())
        #expect(m.make == "Loop")
        #expect(m.dates.exifOriginal == nil && m.latitude == nil)
        #expect(!m.warnings.isEmpty)
    }

    @Test func hugeCountsAreNotAllocated() throws {
        // An entry claiming 2^32-1 rationals, and an IFD claiming 65535 entries in a tiny block.
        var exif = ExifFixture(make: "Big")
        exif.extraExif = [.init(0x9286, .raw(type: 5, count: 0xFFFF_FFFF, field: 16))]
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
        #expect(m.make == "Big" && m.userComment == nil)
        let lying = Array("Exif\0\0".utf8) + [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 24)
        let m2 = try Build.read(JPEGFixture(width: 8, height: 8, leadingSegments: [.init(marker: 0xE1, payload: lying)]).bytes())
        #expect(m2.pixelWidth == 8 && m2.make == nil)
    }

    @Test func appleContentIdentifierFromTheMakerNote() throws {
        // "Apple iOS\0" + version + "MM", then a big-endian IFD at 14 whose offsets count from the note's start.
        var note = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8)
        let id = "8A3B2C1D-0000-4E5F-9A8B-1C2D3E4F5A6B"
        note += Build.be16(1) + Build.be16(0x11) + Build.be16(2) + Build.be32(id.utf8.count + 1) + Build.be32(14 + 2 + 12 + 4)
        note += Build.be32(0) + Array(id.utf8) + [0]
        let exif = ExifFixture(byteOrder: .big, make: "Apple", extraExif: [.init(0x927C, .undefined(note))])
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
        #expect(m.contentIdentifier == id)
    }
}
