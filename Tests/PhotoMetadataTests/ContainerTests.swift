import Foundation
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// JPEG frame headers, XMP, ISO BMFF walking, and the other video containers' dates and durations.
@Suite struct ContainerTests {
    // MARK: JPEG SOF

    /// Every SOFn carries the frame size; DHT (C4), JPG (C8) and DAC (CC) share the range and do not.
    @Test(arguments: [0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF] as [UInt8])
    func everySOFnGivesTheSize(_ marker: UInt8) throws {
        let m = try Build.read(JPEGFixture(width: 4032, height: 3024, frameMarker: marker).bytes())
        #expect(m.pixelWidth == 4032 && m.pixelHeight == 3024)
    }

    @Test func tablesBeforeTheFrameAreNotFrames() throws {
        // A DAC (CC) segment whose bytes would read as a size comes before the real SOF0.
        let dac = JPEGFixture.Segment(marker: 0xCC, payload: [8, 0x11, 0x11, 0x22, 0x22])
        let m = try Build.read(JPEGFixture(width: 100, height: 50, leadingSegments: [dac]).bytes())
        #expect(m.pixelWidth == 100 && m.pixelHeight == 50)
    }

    @Test func fillBytesBetweenSegments() throws {
        var bytes = JPEGFixture.make(width: 10, height: 20)
        bytes.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: 2)
        let m = try Build.read(bytes)
        #expect(m.pixelWidth == 10 && m.pixelHeight == 20)
    }

    @Test func jpegWithoutFrameButWithExifIsIndexedWithoutSize() throws {
        let full = JPEGFixture.make(width: 10, height: 20, exif: ExifFixture(make: "Cut"))
        let dqt = (0..<(full.count - 1)).first { full[$0] == 0xFF && full[$0 + 1] == 0xDB }!
        let cut = Array(full.prefix(dqt + 10))  // ends inside the DQT, before the SOF
        let m = try Build.read(cut)
        #expect(m.make == "Cut" && m.pixelWidth == nil)
        #expect(!m.warnings.isEmpty)
    }

    // MARK: XMP

    struct XMPCase: Sendable, CustomStringConvertible {
        let name: String
        let packet: String
        let date: String?
        var description: String { name }
    }

    static let xmpCases: [XMPCase] = [
        XMPCase(name: "xmp:CreateDate attribute", packet: XMPFixture.packet(createDate: "2017-04-24T17:46:13-07:00"),
                date: "2017-04-24T17:46:13-07:00"),
        XMPCase(name: "element form", packet: XMPFixture.packet(createDate: "2017-04-24T17:46:13Z", elements: true),
                date: "2017-04-24T17:46:13Z"),
        XMPCase(name: "DateTimeOriginal wins over CreateDate",
                packet: XMPFixture.packet(createDate: "2001-01-01T00:00:00", dateTimeOriginal: "2013-07-05T03:18:27.5+02:00"),
                date: "2013-07-05T03:18:27.5+02:00"),
        XMPCase(name: "photoshop:DateCreated over xmp:CreateDate",
                packet: XMPFixture.packet(createDate: "2001-01-01T00:00:00", dateCreated: "2006-10-29"), date: "2006-10-29"),
        XMPCase(name: "no date", packet: XMPFixture.packet(rating: 3), date: nil),
        XMPCase(name: "garbage date", packet: XMPFixture.packet(createDate: "yesterday"), date: nil),
    ]

    @Test(arguments: xmpCases)
    func xmpDates(_ c: XMPCase) throws {
        let m = try Build.read(JPEGFixture(width: 8, height: 8, xmp: c.packet).bytes())
        #expect(m.dates.xmp == c.date.flatMap { Timestamp.iso8601($0) })
    }

    @Test func xmpRatingAndKeywords() throws {
        let packet = XMPFixture.packet(rating: 4, keywords: ["Berlin", "Fish &amp; Chips", "caf&#233;"])
        for bytes in [JPEGFixture(width: 8, height: 8, xmp: packet).bytes(), PNGFixture(width: 8, height: 8, xmp: packet).bytes(),
                      Build.riff("WEBP", Build.chunk("VP8 ", [0x30, 0x01, 0, 0x9D, 0x01, 0x2A, 8, 0, 8, 0]) + Build.chunk("XMP ", Array(packet.utf8)))] {
            let m = try Build.read(bytes)
            #expect(m.rating == 4)
            #expect(m.keywords == ["Berlin", "Fish & Chips", "café"])
        }
        let bad = try Build.read(JPEGFixture(width: 8, height: 8, xmp: XMPFixture.packet(rating: 9)).bytes())
        #expect(bad.rating == nil)
    }

    @Test func xmpInTIFFTag700() throws {
        let packet = Array(XMPFixture.packet(dateTimeOriginal: "2015-06-07T08:09:10").utf8)
        let tiff = TIFFFixture(ifd0: [.init(0x0100, .long([8])), .init(0x0101, .long([8])), .init(0x02BC, .byte(packet))]).bytes()
        let m = try Build.read(tiff)
        #expect(m.dates.xmp?.local == LocalDateTime(year: 2015, month: 6, day: 7, hour: 8, minute: 9, second: 10))
    }

    // MARK: ISO BMFF

    @Test func movieHeaderAndTrack() throws {
        let created: Int64 = 1_487_751_628  // 2017-02-22 08:20:28 UTC
        let m = try Build.read(MP4Fixture(width: 1920, height: 1080, creationTime: created, timescale: 1000, duration: 4967).bytes())
        #expect(m.format == .mp4 && m.mediaType == .video)
        #expect(m.pixelWidth == 1920 && m.pixelHeight == 1080)
        #expect(m.dates.containerUTC == created)
        #expect(abs((m.duration ?? 0) - 4.967) < 1e-9)
        #expect(m.orientation == 1)
    }

    @Test(arguments: [(0, 1), (90, 6), (180, 3), (270, 8)])
    func trackRotation(_ degrees: Int, _ orientation: Int) throws {
        let m = try Build.read(MP4Fixture(width: 568, height: 320, rotation: degrees).bytes())
        #expect(m.orientation == orientation)
        #expect(m.pixelWidth == 568 && m.pixelHeight == 320)  // as stored, before rotation
    }

    @Test func moovAfterMdatIsFoundWithoutReadingMdat() throws {
        let fixture = MP4Fixture(width: 640, height: 480, creationTime: 1_600_000_000, mediaDataBytes: 3_000_000, mediaDataFirst: true)
        var source = CountingSource(MemorySource(fixture.bytes()))
        let m = try MetadataReader().read(&source, fileName: Array("clip.mp4".utf8))
        #expect(m.pixelWidth == 640 && m.dates.containerUTC == 1_600_000_000)
        #expect(source.bytesRead < 100_000, "read \(source.bytesRead) bytes")
    }

    @Test func zeroOrAbsurdCreationTimeIsNoDate() throws {
        #expect(try Build.read(MP4Fixture(creationTime: nil).bytes()).dates.containerUTC == nil)
        // Before 1970 (a camera clock at 1904 + a little).
        #expect(try Build.read(MP4Fixture(creationTime: -2_000_000_000).bytes()).dates.containerUTC == nil)
    }

    @Test func appleKeysAndLocation() throws {
        let keys = ["com.apple.quicktime.creationdate": "2019-07-24T11:25:40+0300",
                    "com.apple.quicktime.location.ISO6709": "+32.0929+034.8620+028.516/",
                    "com.apple.quicktime.make": "Apple", "com.apple.quicktime.model": "iPhone 6",
                    "com.apple.quicktime.content.identifier": "5C1F3D3A-1234"]
        let m = try Build.read(MP4Fixture(majorBrand: "qt  ", compatibleBrands: ["qt  "], appleKeys: keys).bytes())
        #expect(m.format == .mov)
        #expect(m.dates.quickTimeLocal == Timestamp.iso8601("2019-07-24T11:25:40+03:00"))
        #expect(abs((m.latitude ?? 0) - 32.0929) < 1e-9 && abs((m.longitude ?? 0) - 34.862) < 1e-9)
        #expect(m.altitude == 28.516)
        #expect(m.make == "Apple" && m.model == "iPhone 6")
        #expect(m.contentIdentifier == "5C1F3D3A-1234")
    }

    @Test func userDataLocation() throws {
        let m = try Build.read(MP4Fixture(location: "+51.4169-000.0806/").bytes())
        #expect(abs((m.latitude ?? 0) - 51.4169) < 1e-9 && abs((m.longitude ?? 0) + 0.0806) < 1e-9)
        #expect(m.altitude == nil)
    }

    @Test(arguments: [
        ("+37.3349-122.0090+010.000/", 37.3349, -122.009),
        ("-33.8688+151.2093/", -33.8688, 151.2093),
        ("+4024.500-07400.000/", 40.408333333, -74.0),  // degrees and minutes
    ] as [(String, Double, Double)])
    func iso6709(_ text: String, _ lat: Double, _ lon: Double) throws {
        let m = try Build.read(MP4Fixture(location: text).bytes())
        #expect(abs((m.latitude ?? .nan) - lat) < 1e-6 && abs((m.longitude ?? .nan) - lon) < 1e-6)
    }

    @Test func truncatedAndLyingBoxes() throws {
        let good = MP4Fixture(width: 320, height: 240, timescale: 600, duration: 1200).bytes()
        // Cut inside moov: what is there is read, nothing past the end is waited for.
        for cut in stride(from: 40, to: good.count, by: 7) {
            _ = try? Build.read(Array(good.prefix(cut)))
        }
        // A box of size 4 (smaller than its header) ends the walk with a warning.
        var bad = good
        let moov = bad.count - (bad.count - 32)  // ftyp is 32 bytes; moov starts there
        bad.replaceSubrange(moov..<(moov + 4), with: [0, 0, 0, 4])
        let e = Build.error(bad)
        #expect(e?.code == .corrupt || e?.code == .truncated)
        // A 64-bit box size claiming exabytes.
        var huge = Build.box("ftyp", Build.ascii("isom") + Build.be32(0))
        huge += Build.be32(1) + Build.ascii("mdat") + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 64)
        #expect(Build.error(huge)?.code == .truncated)
    }

    @Test func deeplyNestedBoxesAreBounded() throws {
        var inner = Build.box("free", [])
        for _ in 0..<200 { inner = Build.box("trak", inner) }
        let bytes = Build.box("ftyp", Build.ascii("isom") + Build.be32(0)) + Build.box("moov", inner)
        // A stub movie with nothing readable: an error that says why, no crash or stack overflow.
        let error = Build.error(bytes)
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("too deep") == true)
    }

    @Test func heifPrimaryItemSize() throws {
        // The fixture lists a decoy 512x512 ispe first; the primary item is associated with the second.
        let m = try Build.read(Build.heif(width: 2566, height: 3313, exif: nil))
        #expect(m.pixelWidth == 2566 && m.pixelHeight == 3313)
    }

    // MARK: Other containers

    @Test func matroskaDateAndDuration() throws {
        // 2010-02-03 21:17:48 UTC, in nanoseconds since 2001-01-01.
        let m = try Build.read(Build.matroska(docType: "matroska", trackType: 1, width: 704, height: 576, durationMs: 148_608,
                                              dateUTCNanos: (1_265_231_868 - 978_307_200) * 1_000_000_000))
        #expect(m.dates.containerUTC == 1_265_231_868)
        #expect(abs((m.duration ?? 0) - 148.608) < 1e-6)
    }

    @Test func aviDateAndDuration() throws {
        let m = try Build.read(Build.avi(width: 320, height: 240, frames: 100, microsecondsPerFrame: 40_000, idit: "MON MAR 10 15:04:43 2003"))
        #expect(m.dates.containerLocal == LocalDateTime(year: 2003, month: 3, day: 10, hour: 15, minute: 4, second: 43))
        #expect(m.duration == 4.0)
    }

    @Test func flvAndAsf() throws {
        let flv = try Build.read(Build.flv(width: 640, height: 360, duration: 12.5))
        #expect(flv.duration == 12.5)
        // FILETIME of 2005-10-28 17:46:46 UTC; 3.1 s play duration minus a 100 ms preroll.
        let created = UInt64(1_130_521_606 + 11_644_473_600) * 10_000_000
        let asf = try Build.read(Build.asf(video: true, width: 1, height: 1, playDuration100ns: 32_000_000, prerollMs: 100, created: created))
        #expect(asf.dates.containerUTC == 1_130_521_606)
        #expect(abs((asf.duration ?? 0) - 3.1) < 1e-9)
    }
}

/// A source that counts the bytes handed out, to prove what the reader did not read.
struct CountingSource: ByteSource {
    var inner: MemorySource
    var bytesRead = 0
    init(_ inner: MemorySource) { self.inner = inner }
    var size: Int64 { inner.size }
    mutating func read(at offset: Int64, count: Int) throws(MetadataError) -> [UInt8] {
        let b = try inner.read(at: offset, count: count)
        bytesRead += b.count
        return b
    }
}
