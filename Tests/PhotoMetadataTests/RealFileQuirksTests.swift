import Foundation
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Metadata that real files carry in ways the simple layout does not show: stray bytes between
/// JPEG segments, a height deferred to DNL, an IPTC-IIM capture date, XMP orientation, a PNG's
/// `eXIf` after its image data in many chunks, HEIF `irot`/`imir`. Every fixture is built here
/// by hand (or with libheif's encoder), so none depends on a found file.
@Suite struct RealFileQuirksTests {
    static let jfif = JPEGFixture.Segment(marker: 0xE0, payload: Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
    static let exif = ExifFixture(make: "Canon", model: "EOS", orientation: 6, dateTimeOriginal: "2020:01:02 03:04:05")

    static func resolve(_ m: MediaMetadata, name: String = "x.jpg") -> CaptureDate {
        CaptureDate.resolve(m.dates, fileName: Array(name.utf8), mtimeNanoseconds: 0, zone: FixedZone.utc)
    }

    // MARK: Stray bytes between JPEG segments

    @Test("Stray bytes before a JPEG marker are skipped to the marker, as libjpeg does",
          arguments: [(0xE1, [0x00, 0x7F]), (0xDB, [0x0D, 0x0A]), (0xC0, [0x00, 0x7F]), (0xC0, [0x12, 0xFF, 0x00, 0x34, 0x56]),
                      (0xC4, [0x20]), (0xDA, [0x00, 0x00, 0x00])] as [(UInt8, [UInt8])])
    func strayBytesAreSkipped(marker: UInt8, garbage: [UInt8]) throws {
        // After the JFIF segment, so that the file still starts as a JPEG does (FF D8 FF).
        let fixture = JPEGFixture(width: 640, height: 480, exif: Self.exif, leadingSegments: [Self.jfif])
        let jpeg = JPEGEdit.insertingStrayBytes(fixture.bytes(), before: marker, garbage)
        let m = try Build.read(jpeg)
        #expect(m.pixelWidth == 640 && m.pixelHeight == 480, "\(m)")
        #expect(m.make == "Canon" && m.orientation == 6)
        #expect(Self.resolve(m).source == .exifOriginal)
        #expect(m.warnings.contains { $0.contains("\(garbage.count) stray bytes") }, "\(m.warnings)")
    }

    @Test func garbageThatLeadsToNoMarkerIsStillAnError() {
        // SOI and APP0, then bytes without a single marker: no structure to speak of.
        let app0 = Array(JPEGFixture(width: 8, height: 8).bytes().prefix(20))
        let bytes = app0 + [UInt8](repeating: 0x41, count: 300) + [0xFF, 0x00, 0x41]
        #expect(Build.error(bytes)?.code == .corrupt)
    }

    // MARK: A height deferred to DNL

    @Test("A frame header of height 0 takes its height from the DNL segment after the first scan")
    func heightFromDNL() throws {
        let jpeg = JPEGEdit.deferringHeightToDNL(JPEGFixture(width: 640, height: 480).bytes())
        let m = try Build.read(jpeg)
        #expect(m.format == .jpeg && m.pixelWidth == 640 && m.pixelHeight == 480, "\(m)")
        // Without a DNL segment: the width alone, still an image (not an error).
        let lost = try Build.read(JPEGFixture(width: 640, height: 0).bytes())
        #expect(lost.pixelWidth == 640 && lost.pixelHeight == nil)
        #expect(lost.warnings.contains { $0.contains("DNL") }, "\(lost.warnings)")
    }

    @Test("The DNL segment is found past the file's head, with the scan read in windows, not whole")
    func heightFromDNLFarIntoTheFile() throws {
        let jpeg = JPEGEdit.deferringHeightToDNL(JPEGFixture(width: 3000, height: 2000, exif: Self.exif, scanBytes: 3_000_000).bytes())
        let url = try SourceTests.sparseFile(size: Int64(jpeg.count), pieces: [(0, jpeg)], name: "dnl.jpg")
        defer { try? FileManager.default.removeItem(at: url) }
        let (m, source) = try Corpus.read(url)
        #expect(m.pixelWidth == 3000 && m.pixelHeight == 2000 && m.orientation == 6)
        #expect(source.bytesRead < Int64(jpeg.count) + 65536 * 2)
        // A file of the usual kind never has its scan read.
        let plain = try SourceTests.sparseFile(size: Int64(jpeg.count), pieces: [(0, JPEGFixture(width: 3000, height: 2000, scanBytes: 3_000_000).bytes())],
                                               name: "plain.jpg")
        defer { try? FileManager.default.removeItem(at: plain) }
        #expect(try Corpus.read(plain).1.bytesRead <= 65536)
    }

    // MARK: IPTC-IIM

    static func iptcJPEG(_ iptc: IPTCFixture, exif: ExifFixture? = nil, xmp: String? = nil) -> [UInt8] {
        JPEGFixture(width: 8, height: 8, exif: exif, xmp: xmp,
                    leadingSegments: [.init(marker: 0xED, payload: iptc.app13Payload())]).bytes()
    }

    @Test("IPTC DateCreated + TimeCreated (APP13, resource 0x0404) is a capture date, with its offset", arguments: [
        (IPTCFixture(dateCreated: "20190504", timeCreated: "132210+0900"), "2019-05-04T13:22:10", "+09:00" as String?),
        (IPTCFixture(dateCreated: "20190504", timeCreated: "132210-0530", leadingResource: false), "2019-05-04T13:22:10", "-05:30"),
        (IPTCFixture(dateCreated: "20190504", timeCreated: "132210"), "2019-05-04T13:22:10", nil),
        (IPTCFixture(dateCreated: "20190504"), "2019-05-04T00:00:00", nil),
    ])
    func iptcDate(_ iptc: IPTCFixture, local: String, offset: String?) throws {
        let d = Self.resolve(try Build.read(Self.iptcJPEG(iptc)))
        #expect(d.source.rawValue == "iptc")
        #expect(d.local.description == local)
        #expect(d.offset?.description == offset)
    }

    @Test func iptcWithoutAValidDateGivesNone() throws {
        for iptc in [IPTCFixture(timeCreated: "132210+0900"), IPTCFixture(dateCreated: "2019-13-45"), IPTCFixture(dateCreated: "0000")] {
            #expect(Self.resolve(try Build.read(Self.iptcJPEG(iptc))).source == .fileModified, "\(iptc)")
        }
        // Truncated blocks and datasets: no date, no trap.
        let payload = IPTCFixture(dateCreated: "20190504").app13Payload()
        for cut in stride(from: 14, to: payload.count, by: 3) {
            let jpeg = JPEGFixture(width: 8, height: 8, leadingSegments: [.init(marker: 0xED, payload: Array(payload.prefix(cut)))]).bytes()
            #expect(Self.resolve(try Build.read(jpeg)).source == .fileModified)
        }
    }

    @Test("The capture-date order: DateTimeOriginal, DateTimeDigitized, XMP, IPTC, then EXIF DateTime")
    func captureDateOrder() throws {
        let iptc = IPTCFixture(dateCreated: "20180101", timeCreated: "101010+0100")
        let modified = ExifFixture(dateTime: "2021:06:07 08:09:10")
        // DateTime is the time of the last edit: the IPTC capture date wins over it.
        #expect(Self.resolve(try Build.read(Self.iptcJPEG(iptc, exif: modified))).source.rawValue == "iptc")
        // An XMP capture date wins over both.
        let xmp = XMPFixture.packet(createDate: "2017-02-03T04:05:06+02:00")
        let withXMP = Self.resolve(try Build.read(Self.iptcJPEG(iptc, exif: modified, xmp: xmp)))
        #expect(withXMP.source == .xmp && withXMP.local.description == "2017-02-03T04:05:06")
        #expect(Self.resolve(try Build.read(JPEGFixture(width: 8, height: 8, exif: modified, xmp: xmp).bytes())).source == .xmp)
        // DateTimeOriginal and DateTimeDigitized win over every other.
        var original = modified
        original.dateTimeDigitized = "2016:01:01 00:00:00"
        #expect(Self.resolve(try Build.read(Self.iptcJPEG(iptc, exif: original, xmp: xmp))).source == .exifDigitized)
        original.dateTimeOriginal = "2015:01:01 00:00:00"
        #expect(Self.resolve(try Build.read(Self.iptcJPEG(iptc, exif: original, xmp: xmp))).source == .exifOriginal)
    }

    // MARK: XMP orientation

    static let xmpOriented = XMPFixture.packet(orientation: 6)

    static let xmpOrientationFiles: [(String, [UInt8])] = [
        ("PNG, iTXt", PNGFixture(width: 64, height: 32, xmp: xmpOriented).bytes()),
        ("WebP, XMP chunk", Build.riff("WEBP", Build.chunk("VP8X", [0x04, 0, 0, 0, 63, 0, 0, 31, 0, 0])
            + Build.chunk("VP8 ", [0x30, 0x01, 0, 0x9D, 0x01, 0x2A, 64, 0, 32, 0]) + Build.chunk("XMP ", Array(xmpOriented.utf8)))),
        ("JPEG, XMP without EXIF", JPEGFixture(width: 64, height: 32, xmp: xmpOriented).bytes()),
        ("JPEG, XMP and EXIF without an orientation", JPEGFixture(width: 64, height: 32, exif: ExifFixture(make: "X"), xmp: xmpOriented).bytes()),
        ("JPEG, XMP element form", JPEGFixture(width: 64, height: 32, xmp: XMPFixture.packet(orientation: 6, elements: true)).bytes()),
    ]

    @Test("XMP tiff:Orientation counts when the file has no EXIF orientation", arguments: xmpOrientationFiles.indices)
    func xmpOrientation(_ i: Int) throws {
        let (name, bytes) = Self.xmpOrientationFiles[i]
        #expect(try Build.read(bytes).orientation == 6, "\(name)")
    }

    @Test func exifOrientationWinsOverXMP() throws {
        let jpeg = JPEGFixture(width: 64, height: 32, exif: ExifFixture(orientation: 3), xmp: Self.xmpOriented).bytes()
        #expect(try Build.read(jpeg).orientation == 3)
        // Out of range in XMP: ignored.
        #expect(try Build.read(JPEGFixture(width: 64, height: 32, xmp: XMPFixture.packet(orientation: 9)).bytes()).orientation == nil)
    }

    // MARK: PNG eXIf after the image data

    @Test("A PNG's eXIf after 30,000 image-data chunks is read, each chunk skipped by its length")
    func pngExifAfterManyImageDataChunks() throws {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += PNGFixture.chunk("IHDR", Build.be32(4000) + Build.be32(3000) + [8, 2, 0, 0, 0])
        let idat = PNGFixture.chunk("IDAT", [UInt8](repeating: 0x55, count: 16))
        for _ in 0..<30_000 { png += idat }
        png += PNGFixture.chunk("eXIf", Self.exif.bytes())
        png += PNGFixture.chunk("IEND", [])
        let m = try Build.read(png, name: "many.png")
        #expect(m.pixelWidth == 4000 && m.orientation == 6 && m.make == "Canon", "\(m.warnings)")
        #expect(Self.resolve(m, name: "many.png").source == .exifOriginal)
    }

    // MARK: HEIF irot/imir

    /// libheif's encoder stores the pattern as it is (`ispe` 64×48) and writes `irot`/`imir`
    /// that turn it by the orientation for display. (That turning the stored pixels by the
    /// orientation read gives what libheif shows is the imaging tests' to check.)
    @Test("A HEIF's orientation is its irot/imir (what libheif shows), whatever its EXIF says", arguments: 1...8)
    func heifOrientationFromTransforms(_ o: Int) throws {
        let disagreeing = o == 1 ? 6 : 1
        let heic = try HEIFFixture(width: 64, height: 48, thumbnail: nil, orientation: o, exifOrientation: disagreeing).bytes()
        let m = try Build.read(heic, name: "x.heic")
        #expect(m.format == .heic && m.pixelWidth == 64 && m.pixelHeight == 48, "\(m)")
        #expect(m.orientation == o, "irot/imir for \(o): \(String(describing: m.orientation))")
    }
}
