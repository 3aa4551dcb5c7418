import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Magic-byte sniffing for every format photod indexes and the common things it must refuse,
/// with tiny hand-made headers. The extension never decides: most cases use a neutral name.
@Suite struct SniffingTests {
    struct Media: Sendable, CustomStringConvertible {
        let name: String
        let bytes: [UInt8]
        let format: MediaFormat
        let size: (Int, Int)?
        var description: String { name }
    }

    static let exif = ExifFixture(make: "Canon", model: "EOS", orientation: 1, dateTimeOriginal: "2020:01:02 03:04:05")

    static func tiff(_ extra: [TIFFFixture.Field] = [], make: String? = nil) -> [UInt8] {
        var ifd0: [TIFFFixture.Field] = [.init(0x0100, .long([40])), .init(0x0101, .short([30]))]
        if let make { ifd0.append(.init(0x010F, .ascii(make))) }
        return TIFFFixture(ifd0: ifd0 + extra).bytes()
    }

    /// A RAW-like TIFF: IFD0 describes a small preview (NewSubfileType 1) and points to a
    /// SubIFD with the full-size sensor image (NewSubfileType 0).
    static func rawTIFF(make: String) -> [UInt8] {
        func ifd0(_ sub: UInt32) -> [UInt8] {
            TIFFFixture(ifd0: [.init(0x00FE, .long([1])), .init(0x0100, .long([160])), .init(0x0101, .long([120])),
                               .init(0x010F, .ascii(make)), .init(0x014A, .long([sub]))]).bytes()
        }
        let sub = UInt32(ifd0(0).count)
        // The SubIFD holds no out-of-line values, so the bytes written for offset 8 are valid anywhere.
        let subIFD = TIFFFixture(ifd0: [.init(0x00FE, .long([0])), .init(0x0100, .long([6000])), .init(0x0101, .long([4000]))])
            .bytes().dropFirst(8)
        return ifd0(sub) + subIFD
    }

    static let media: [Media] = {
        var m: [Media] = []
        func add(_ name: String, _ bytes: [UInt8], _ format: MediaFormat, _ size: (Int, Int)?) {
            m.append(Media(name: name, bytes: bytes, format: format, size: size))
        }
        add("jpeg", JPEGFixture.make(width: 64, height: 48), .jpeg, (64, 48))
        add("jpeg with exif", JPEGFixture.make(width: 64, height: 48, exif: exif), .jpeg, (64, 48))
        add("mpo", JPEGFixture(width: 64, height: 48, exif: exif, multiPicture: true).bytes(), .mpo, (64, 48))
        add("tiff", tiff(), .tiff, (40, 30))
        add("dng", tiff([.init(0xC612, .byte([1, 4, 0, 0]))]), .dng, (40, 30))
        var cr2 = TIFFFixture(ifd0: [.init(0x0100, .long([40])), .init(0x0101, .long([30]))], padding: 8).bytes()
        cr2.replaceSubrange(8..<12, with: [0x43, 0x52, 2, 0])
        add("cr2", cr2, .cr2, (40, 30))
        add("nef by extension.nef", tiff(make: "NIKON CORPORATION"), .nef, (40, 30))
        add("nef by maker", rawTIFF(make: "NIKON"), .nef, (6000, 4000))
        add("arw.ARW", tiff(make: "SONY"), .arw, (40, 30))
        add("pef.pef", tiff(make: "PENTAX"), .pef, (40, 30))
        add("srw.srw", tiff(make: "SAMSUNG"), .srw, (40, 30))
        var orf = tiff()
        orf.replaceSubrange(0..<4, with: Array("IIRO".utf8))
        add("orf", orf, .orf, (40, 30))
        var rw2 = TIFFFixture(ifd0: [.init(0x0002, .short([5200])), .init(0x0003, .short([3900]))]).bytes()
        rw2.replaceSubrange(0..<4, with: [0x49, 0x49, 0x55, 0])
        add("rw2", rw2, .rw2, (5200, 3900))
        add("png", PNGFixture(width: 20, height: 10).bytes(), .png, (20, 10))
        add("apng", PNGFixture(width: 20, height: 10, animated: true).bytes(), .apng, (20, 10))
        let mng = [0x8A, 0x4D, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + PNGFixture.chunk("MHDR", Build.be32(30) + Build.be32(20)
            + [UInt8](repeating: 0, count: 20)) + PNGFixture.chunk("MEND", [])
        add("mng", mng, .mng, (30, 20))
        add("gif", Build.ascii("GIF89a") + Build.le16(300) + Build.le16(200) + [0, 0, 0, 0x3B], .gif, (300, 200))
        add("bmp top-down", Build.ascii("BM") + Build.le32(70) + Build.le32(0) + Build.le32(54) + Build.le32(40)
            + Build.le32(7) + Build.le32(Int(UInt32(bitPattern: -5))) + Build.le16(1)
            + Build.le16(24) + [UInt8](repeating: 0, count: 40), .bmp, (7, 5))
        add("ico 256", [0, 0, 1, 0, 1, 0] + [0, 0, 0, 0] + Build.le16(1) + Build.le16(32) + Build.le32(40) + Build.le32(22)
            + [UInt8](repeating: 0, count: 40), .ico, (256, 256))
        add("webp lossy", Build.riff("WEBP", Build.chunk("VP8 ", [0x30, 0x01, 0, 0x9D, 0x01, 0x2A] + Build.le16(640)
            + Build.le16(480) + [0, 0])), .webp, (640, 480))
        let vp8l = [0x2F] + Build.le32((99 & 0x3FFF) | (49 << 14))
        add("webp lossless", Build.riff("WEBP", Build.chunk("VP8L", vp8l + [0, 0, 0])), .webp, (100, 50))
        add("webp extended", Build.riff("WEBP", Build.chunk("VP8X", [0, 0, 0, 0] + [0x1F, 0x03, 0] + [0xDF, 0x01, 0])),
            .webp, (800, 480))
        add("heic", Build.heif(width: 4032, height: 3024, exif: nil), .heic, (4032, 3024))
        add("avif", Build.heif(brand: "avif", width: 1200, height: 800, exif: nil), .avif, (1200, 800))
        add("heif", Build.heif(brand: "mif1", width: 64, height: 64, exif: nil), .heif, (64, 64))
        let jp2 = [0, 0, 0, 12] + Build.ascii("jP  ") + [0x0D, 0x0A, 0x87, 0x0A] + Build.box("ftyp", Build.ascii("jp2 ") + Build.be32(0))
            + Build.box("jp2h", Build.box("ihdr", Build.be32(300) + Build.be32(400) + [0, 3, 7, 7, 0, 0]))
        add("jpeg 2000", jp2, .jpeg2000, (400, 300))
        add("j2k codestream", [0xFF, 0x4F, 0xFF, 0x51] + Build.be16(41) + Build.be16(0) + Build.be32(330) + Build.be32(220)
            + Build.be32(10) + Build.be32(20) + [UInt8](repeating: 0, count: 20), .jpeg2000, (320, 200))
        // SizeHeader, bits LSB first: small=1, ysize_div8-1 = 31 (256), ratio 1 (1:1) -> 0x7F 0x00.
        add("jxl codestream", [0xFF, 0x0A, 0x7F, 0x00, 0, 0], .jpegXL, (256, 256))
        let jxlBox = [0, 0, 0, 12] + Build.ascii("JXL ") + [0x0D, 0x0A, 0x87, 0x0A] + Build.box("ftyp", Build.ascii("jxl ") + Build.be32(0))
            + Build.box("jxlc", [0xFF, 0x0A, 0x7F, 0x00, 0, 0])
        add("jxl container", jxlBox, .jpegXL, (256, 256))
        add("bpg", [0x42, 0x50, 0x47, 0xFB, 0x00, 0x00, 0x83, 0x20, 0x40], .bpg, (416, 64))
        add("mp4", MP4Fixture(width: 1280, height: 720).bytes(), .mp4, (1280, 720))
        add("mov", MP4Fixture(majorBrand: "qt  ", compatibleBrands: ["qt  "], width: 640, height: 360).bytes(), .mov, (640, 360))
        add("3gp", MP4Fixture(majorBrand: "3gp5", compatibleBrands: ["3gp5"], width: 176, height: 144).bytes(), .threeGP, (176, 144))
        add("3g2", MP4Fixture(majorBrand: "3g2a", compatibleBrands: ["3g2a"], width: 176, height: 144).bytes(), .threeG2, (176, 144))
        add("m4v", MP4Fixture(majorBrand: "M4V ", compatibleBrands: ["M4V "], width: 320, height: 240).bytes(), .m4v, (320, 240))
        let cmt1 = ExifFixture(make: "Canon", model: "EOS R5").bytes()
        let crawEntry = Build.be32(8 + 8 + 16 + 4 + 16) + Build.ascii("CRAW") + [0, 0, 0, 0, 0, 0, 0, 1]
            + [UInt8](repeating: 0, count: 16) + Build.be16(8192) + Build.be16(5464) + [UInt8](repeating: 0, count: 16)
        let cr3 = Build.box("ftyp", Build.ascii("crx ") + Build.be32(1) + Build.ascii("crx isom"))
            + Build.box("moov", Build.box("uuid", [0x85, 0xC0, 0xB6, 0x87, 0x82, 0x0F, 0x11, 0xE0, 0x81, 0x11, 0xF4, 0xCE, 0x46,
                                                   0x2B, 0x6A, 0x48] + Build.box("CMT1", cmt1))
                + Build.box("trak", Build.box("mdia", Build.box("minf", Build.box("stbl", Build.fullBox("stsd", Build.be32(1) + crawEntry))))))
        add("cr3", cr3, .cr3, (8192, 5464))
        add("mkv", Build.matroska(docType: "matroska", trackType: 1, width: 704, height: 576), .matroska, (704, 576))
        add("webm", Build.matroska(docType: "webm", trackType: 1, width: 8, height: 8), .webm, (8, 8))
        add("avi", Build.avi(width: 320, height: 240, frames: 10, microsecondsPerFrame: 40000, idit: nil), .avi, (320, 240))
        add("flv", Build.flv(width: 640, height: 360, duration: 2.5), .flv, (640, 360))
        add("wmv", Build.asf(video: true, width: 320, height: 240, playDuration100ns: 40_000_000), .asf, (320, 240))
        var raf = Build.ascii("FUJIFILMCCD-RAW 0201FF383501") + Build.ascii("X-T3").padded(32) + [UInt8](repeating: 0, count: 24)
        let jpeg = JPEGFixture.make(width: 160, height: 120, exif: ExifFixture(make: "FUJIFILM", model: "X-T3"))
        let cfa = Build.be32(1) + Build.be16(0x100) + Build.be16(4) + Build.be16(4160) + Build.be16(6240)
        let jpegAt = 108
        raf += Build.be32(jpegAt) + Build.be32(jpeg.count) + Build.be32(jpegAt + jpeg.count) + Build.be32(cfa.count)
            + Build.be32(0) + Build.be32(0)
        raf += [UInt8](repeating: 0, count: jpegAt - raf.count) + jpeg + cfa
        add("raf", raf, .raf, (6240, 4160))
        return m
    }()

    @Test(arguments: media)
    func recognisesMedia(_ c: Media) throws {
        // A misleading extension must not matter: only NEF/ARW/PEF/SRW cases carry a real one.
        let name = c.name.contains(".") ? c.name : "photo.txt"
        let meta = try Build.read(c.bytes, name: name)
        #expect(meta.format == c.format)
        if let (w, h) = c.size {
            #expect(meta.pixelWidth == w && meta.pixelHeight == h, "\(c.name): \(String(describing: meta.pixelWidth))x\(String(describing: meta.pixelHeight))")
        }
    }

    struct NotMedia: Sendable, CustomStringConvertible {
        let name: String
        let bytes: [UInt8]
        let code: MetadataError.Code
        let kind: String?
        var description: String { name }
    }

    static let notMedia: [NotMedia] = [
        NotMedia(name: "empty", bytes: [], code: .emptyFile, kind: nil),
        NotMedia(name: "text", bytes: Build.ascii("hello, this is not a photo\nsecond line\n"), code: .notMedia, kind: "text"),
        NotMedia(name: "pdf", bytes: Build.ascii("%PDF-1.4\n1 0 obj\n"), code: .notMedia, kind: "pdf"),
        NotMedia(name: "svg", bytes: Build.ascii("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>"),
                 code: .notMedia, kind: "svg"),
        NotMedia(name: "mp3 id3", bytes: Build.ascii("ID3") + [3, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0, count: 10),
                 code: .notMedia, kind: "audio"),
        NotMedia(name: "mp3 frame", bytes: [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 60), code: .notMedia, kind: "audio"),
        NotMedia(name: "wav", bytes: Build.riff("WAVE", Build.chunk("fmt ", [UInt8](repeating: 1, count: 16))), code: .notMedia, kind: "audio"),
        NotMedia(name: "flac", bytes: Build.ascii("fLaC") + [0, 0, 0, 34], code: .notMedia, kind: "audio"),
        NotMedia(name: "ogg", bytes: Build.ascii("OggS") + [0, 2] + [UInt8](repeating: 0, count: 22) + [1, 0x1E, 1] + Build.ascii("vorbis"),
                 code: .notMedia, kind: "audio"),
        NotMedia(name: "m4a", bytes: MP4Fixture(majorBrand: "M4A ", compatibleBrands: ["M4A ", "isom"], handler: "soun").bytes(),
                 code: .notMedia, kind: "audio"),
        NotMedia(name: "mp4 audio only", bytes: MP4Fixture(handler: "soun").bytes(), code: .notMedia, kind: "audio"),
        NotMedia(name: "mka", bytes: Build.matroska(docType: "matroska", trackType: 2), code: .notMedia, kind: "audio"),
        NotMedia(name: "wma", bytes: Build.asf(video: false, playDuration100ns: 10_000_000), code: .notMedia, kind: "audio"),
        NotMedia(name: "zip", bytes: Build.ascii("PK") + [3, 4, 20, 0] + [UInt8](repeating: 0, count: 24), code: .notMedia, kind: "zip"),
        NotMedia(name: "gzip", bytes: [0x1F, 0x8B, 8, 0] + [UInt8](repeating: 0, count: 16), code: .notMedia, kind: "archive"),
        NotMedia(name: "unknown binary", bytes: [0x00, 0x01, 0x02, 0xFE, 0x00, 0x99, 0x42, 0x00], code: .notMedia, kind: "unknown"),
        NotMedia(name: "psd cut after its header", bytes: Build.ascii("8BPS") + [0, 1] + [UInt8](repeating: 0, count: 20), code: .truncated, kind: nil),
        NotMedia(name: "8BPS of an unknown version", bytes: Build.ascii("8BPS") + [0, 7] + [UInt8](repeating: 0, count: 20), code: .notMedia, kind: "unknown"),
    ]

    @Test(arguments: notMedia)
    func refusesNonMedia(_ c: NotMedia) {
        let error = Build.error(c.bytes, name: "photo.jpg")
        #expect(error?.code == c.code, "\(c.name): \(String(describing: error))")
        if let kind = c.kind { #expect(error?.detectedKind == kind, "\(c.name)") }
        #expect(error?.message.isEmpty == false)
    }

    @Test func damagedMediaThatYieldsNothingIsAnError() {
        // A JPEG cut right after its SOI, and a PNG with a signature only.
        #expect(Build.error([0xFF, 0xD8, 0xFF])?.code == .truncated)
        #expect(Build.error([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])?.code == .truncated)
        // An MP4 whose mdat runs past the end of the file and holds the moov we never see.
        let cut = Array(MP4Fixture(mediaDataBytes: 100_000, mediaDataFirst: true).bytes().prefix(4096))
        #expect(Build.error(cut)?.code == .truncated)
    }
}

extension Array where Element == UInt8 {
    func padded(_ n: Int) -> [UInt8] { self + [UInt8](repeating: 0, count: Swift.max(0, n - count)) }
}
