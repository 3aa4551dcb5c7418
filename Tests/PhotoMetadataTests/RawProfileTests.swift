import Foundation
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// ImageMagick's raw profiles in PNG text chunks (`Raw profile type exif`, `xmp`, `iptc`,
/// `8bim`: hex in `tEXt`, `zTXt` or `iTXt`), read as exiftool and Pillow read them.
@Suite struct RawProfileTests {
    static let exif = ExifFixture(make: "Canon", model: "EOS", orientation: 6, dateTimeOriginal: "2020:01:02 03:04:05",
                                  gps: GPSFixture(latitude: 52.52, longitude: 13.405))

    /// ImageMagick's raw profile text: `\nTYPE\n`, the count right-aligned in 8, then hex in
    /// lines of 72 digits.
    static func rawProfile(_ type: String, _ bytes: [UInt8]) -> [UInt8] {
        var text = "\n\(type)\n" + String(repeating: " ", count: max(0, 8 - String(bytes.count).count)) + "\(bytes.count)\n"
        for (i, b) in bytes.enumerated() {
            text += String(format: "%02x", b)
            if i % 36 == 35 { text += "\n" }
        }
        return Array((text + "\n").utf8)
    }

    /// A zlib stream of stored (uncompressed) deflate blocks: what any inflater reads.
    static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var rest = bytes[...]
        repeat {
            let block = rest.prefix(65_535)
            rest = rest.dropFirst(block.count)
            let n = UInt16(block.count)
            out += [rest.isEmpty ? 1 : 0, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8(~n >> 8)] + block
        } while !rest.isEmpty
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        let adler = b << 16 | a
        return out + [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
    }

    enum Kind: String, CaseIterable, Sendable { case tEXt, zTXt, iTXt, iTXtCompressed }

    static func textChunk(_ kind: Kind, keyword: String, _ text: [UInt8]) -> [UInt8] {
        let key = Array(keyword.utf8) + [0]
        switch kind {
        case .tEXt: return PNGFixture.chunk("tEXt", key + text)
        case .zTXt: return PNGFixture.chunk("zTXt", key + [0] + zlibStored(text))
        case .iTXt: return PNGFixture.chunk("iTXt", key + [0, 0] + Array("en".utf8) + [0, 0] + text)
        case .iTXtCompressed: return PNGFixture.chunk("iTXt", key + [1, 0, 0, 0] + zlibStored(text))
        }
    }

    /// A PNG: IHDR, `before` chunks, IDAT, `after` chunks, IEND.
    static func png(before: [[UInt8]] = [], after: [[UInt8]] = []) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += PNGFixture.chunk("IHDR", Build.be32(640) + Build.be32(480) + [8, 2, 0, 0, 0])
        for c in before { out += c }
        out += PNGFixture.chunk("IDAT", [UInt8](repeating: 0x55, count: 16))
        for c in after { out += c }
        return out + PNGFixture.chunk("IEND", [])
    }

    static func resolve(_ m: MediaMetadata) -> CaptureDate {
        CaptureDate.resolve(m.dates, fileName: Array("x.png".utf8), mtimeNanoseconds: 0, zone: FixedZone.utc)
    }

    @Test("EXIF in a raw profile gives orientation, date and GPS, in every text chunk kind, before or after the image data",
          arguments: Kind.allCases, [false, true])
    func exifProfile(kind: Kind, afterImageData: Bool) throws {
        let chunk = Self.textChunk(kind, keyword: "Raw profile type exif", Self.rawProfile("exif", Array("Exif\0\0".utf8) + Self.exif.bytes()))
        let m = try Build.read(afterImageData ? Self.png(after: [chunk]) : Self.png(before: [chunk]), name: "x.png")
        #expect(m.orientation == 6 && m.make == "Canon", "\(m.warnings)")
        #expect(Self.resolve(m).source == .exifOriginal && Self.resolve(m).local.description == "2020-01-02T03:04:05")
        #expect(m.latitude.map { abs($0 - 52.52) < 1e-6 } == true && m.longitude.map { abs($0 - 13.405) < 1e-6 } == true)
    }

    @Test func anAPP1ProfileWithoutTheExifPrefixIsReadToo() throws {
        let chunk = Self.textChunk(.zTXt, keyword: "Raw profile type APP1", Self.rawProfile("APP1", Self.exif.bytes()))
        #expect(try Build.read(Self.png(before: [chunk]), name: "x.png").orientation == 6)
    }

    @Test func theEXIfChunkWinsOverARawProfileWhereverItIs() throws {
        let raw = Self.textChunk(.tEXt, keyword: "Raw profile type exif", Self.rawProfile("exif", ExifFixture(orientation: 3).bytes()))
        let m = try Build.read(Self.png(before: [raw], after: [PNGFixture.chunk("eXIf", Self.exif.bytes())]), name: "x.png")
        #expect(m.orientation == 6)
    }

    @Test("XMP and IPTC-IIM in raw profiles: XMP's date, and the IPTC time's offset for it", arguments: ["iptc", "8bim"])
    func xmpAndIPTCProfiles(iptcType: String) throws {
        let xmp = Array(XMPFixture.packet(dateTimeOriginal: "2021-07-08T09:10:11", orientation: 8).utf8)
        let iptc = IPTCFixture(dateCreated: "20210708", timeCreated: "091011+0930")
        let iptcBytes = iptcType == "iptc" ? iptc.record() : Array(iptc.app13Payload().dropFirst("Photoshop 3.0\0".utf8.count))
        let m = try Build.read(Self.png(before: [Self.textChunk(.zTXt, keyword: "Raw profile type xmp", Self.rawProfile("xmp", xmp)),
                                                 Self.textChunk(.tEXt, keyword: "Raw profile type \(iptcType)",
                                                                Self.rawProfile(iptcType, iptcBytes))]), name: "x.png")
        #expect(m.orientation == 8)
        let date = Self.resolve(m)
        #expect(date.source == .xmp && date.local.description == "2021-07-08T09:10:11")
        #expect(date.offset?.description == "+09:30")
    }

    @Test("Damaged profiles give a warning, never a crash, and the rest of the file is read", arguments: [
        Array("\nexif\n     100\nzz".utf8), Array("\nexif\n       0\n".utf8), Array("no header".utf8), [],
    ])
    func damaged(text: [UInt8]) throws {
        let m = try Build.read(Self.png(before: [Self.textChunk(.tEXt, keyword: "Raw profile type exif", text),
                                                 PNGFixture.chunk("zTXt", Array("Raw profile type xmp".utf8) + [0, 0, 1, 2, 3])]),
                               name: "x.png")
        #expect(m.pixelWidth == 640 && m.orientation == nil)
        #expect(m.warnings.contains { $0.contains("holds no readable profile") }, "\(m.warnings)")
    }

    @Test("A PNG ImageMagick converted from a JPEG with XMP and IPTC is read like exiftool reads it",
          .enabled(if: Self.convert != nil, "ImageMagick's convert is not installed"))
    func imageMagick() throws {
        let dir = try TemporaryDirectory("raw-profiles")
        defer { dir.remove() }
        let xmp = XMPFixture.packet(dateTimeOriginal: "2021-07-08T09:10:11")
        let jpeg = try dir.write("in.jpg", JPEGFixture(width: 32, height: 16, exif: ExifFixture(make: "Canon", orientation: 6), xmp: xmp,
                                                       leadingSegments: [.init(marker: 0xED, payload: IPTCFixture(
                                                           dateCreated: "20210708", timeCreated: "091011-0400").app13Payload())]).bytes())
        let out = dir("out.png")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.convert))
        process.arguments = [jpeg.string, out.string]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let png = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out.string)))
        #expect(png.count > 0)
        let m = try Build.read(png, name: "out.png")
        #expect(m.format == .png && m.orientation == 6, "\(m.warnings)")
        let date = Self.resolve(m)
        #expect(date.source == .xmp && date.local.description == "2021-07-08T09:10:11")
        #expect(date.offset?.description == "-04:00")
    }

    static let convert: String? = ["/usr/bin/convert", "/usr/local/bin/convert"].first { FileManager.default.isExecutableFile(atPath: $0) }
}
