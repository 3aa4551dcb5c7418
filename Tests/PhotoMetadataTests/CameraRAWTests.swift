import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Camera RAW metadata as the cameras write it: the image's size where each maker keeps it, and
/// the formats that are not TIFF (Canon CRW, Minolta MRW, Sigma X3F), built small here after the
/// layouts of real files (a Canon EOS 30D CR2 from Debian's rawtran-doc, exiftool's samples).
@Suite struct CameraRAWTests {
    /// A CR2: IFD0 describes the 1728×1152 preview JPEG, the sensor data's IFD has no size; the
    /// camera's EXIF PixelX/YDimension is the image's (3504×2336 on an EOS 30D).
    @Test func cr2TakesTheCameraPixelSize() throws {
        var cr2 = TIFFFixture(ifd0: [.init(0x0100, .short([1728])), .init(0x0101, .short([1152])),
                                     .init(0x010F, .ascii("Canon")), .init(0x8769, .long([0]))],
                              exif: [.init(0x9003, .ascii("2009:07:21 13:03:20")), .init(0xA002, .short([3504])),
                                     .init(0xA003, .short([2336]))], padding: 8).bytes()
        cr2.replaceSubrange(8..<12, with: [0x43, 0x52, 2, 0])
        let meta = try Build.read(cr2, name: "IMG_5952.CR2")
        #expect(meta.format == .cr2 && meta.format.isRaw)
        #expect(meta.pixelWidth == 3504 && meta.pixelHeight == 2336)

        // Without the EXIF size, the largest IFD's (as before).
        var bare = TIFFFixture(ifd0: [.init(0x0100, .short([1728])), .init(0x0101, .short([1152]))], padding: 8).bytes()
        bare.replaceSubrange(8..<12, with: [0x43, 0x52, 2, 0])
        let plain = try Build.read(bare, name: "IMG.CR2")
        #expect(plain.pixelWidth == 1728 && plain.pixelHeight == 1152)
    }

    /// The real EOS 30D file (Debian's rawtran-doc), read through a descriptor as the pipeline does.
    @Test(.enabled(if: TestPaths.cameraCR2 != nil, "needs the EOS 30D CR2 of Debian's rawtran-doc: scripts/install-deps --tests"))
    func realCanonCR2() throws {
        let (meta, source) = try Corpus.read(try #require(TestPaths.cameraCR2))
        #expect(meta.format == .cr2 && meta.pixelWidth == 3504 && meta.pixelHeight == 2336)
        #expect(meta.make == "Canon" && meta.model == "Canon EOS 30D" && meta.orientation == 1)
        #expect(meta.dates.exifOriginal?.description == "2009-07-21T13:03:20")
        #expect(source.bytesRead < 256 * 1024, "headers only: \(source.bytesRead) bytes of 7.5 MB")
    }

    /// A JPEG's EXIF PixelXDimension, which editors leave stale, is still never its size.
    @Test func jpegIgnoresTheExifPixelSize() throws {
        let exif = TIFFFixture(ifd0: [.init(0x8769, .long([0]))], exif: [.init(0xA002, .short([4000])), .init(0xA003, .short([3000]))]).bytes()
        let jpeg = JPEGFixture(width: 64, height: 48, leadingSegments: [.init(marker: 0xE1, payload: Build.ascii("Exif") + [0, 0] + exif)]).bytes()
        let meta = try Build.read(jpeg)
        #expect(meta.pixelWidth == 64 && meta.pixelHeight == 48)
    }

    /// A RW2's image is the span of its borders on the sensor (3648×2736 of a 3724×2754 sensor
    /// on a DMC-LX3), else the sensor's size.
    @Test func rw2TakesItsBorders() throws {
        func rw2(_ fields: [TIFFFixture.Field]) -> [UInt8] {
            var b = TIFFFixture(ifd0: fields).bytes()
            b.replaceSubrange(0..<4, with: [0x49, 0x49, 0x55, 0])
            return b
        }
        let sensor: [TIFFFixture.Field] = [.init(0x0002, .short([3724])), .init(0x0003, .short([2754]))]
        let borders: [TIFFFixture.Field] = [.init(0x0004, .short([6])), .init(0x0005, .short([8])), .init(0x0006, .short([2742])),
                                            .init(0x0007, .short([3656]))]
        let cropped = try Build.read(rw2(sensor + borders))
        #expect(cropped.format == .rw2 && cropped.pixelWidth == 3648 && cropped.pixelHeight == 2736)
        let whole = try Build.read(rw2(sensor))
        #expect(whole.pixelWidth == 3724 && whole.pixelHeight == 2754)
        // Borders outside the sensor are ignored.
        let wrong: [TIFFFixture.Field] = [.init(0x0004, .short([6])), .init(0x0005, .short([8])), .init(0x0006, .short([9000])),
                                          .init(0x0007, .short([3656]))]
        let ignored = try Build.read(rw2(sensor + wrong))
        #expect(ignored.pixelWidth == 3724 && ignored.pixelHeight == 2754)
    }

    /// TIFF-based RAW of the rarer makers is RAW by its extension or maker, not a TIFF: LibRaw
    /// renders it, and a Phase One IIQ (whose IFDs hold a 1×1 placeholder) takes the EXIF size.
    @Test(arguments: [("a.IIQ", MediaFormat.iiq), ("a.3fr", .threeFR), ("a.erf", .erf), ("a.kdc", .kdc), ("a.dcr", .dcr),
                      ("a.mos", .mos), ("a.mef", .mef), ("a.rwl", .rwl), ("a.tif", .tiff)])
    func rarerTIFFRaws(_ name: String, _ format: MediaFormat) throws {
        let bytes = TIFFFixture(ifd0: [.init(0x0100, .short([1])), .init(0x0101, .short([1])), .init(0x8769, .long([0]))],
                                exif: [.init(0xA002, .long([7320])), .init(0xA003, .long([5484]))]).bytes()
        let meta = try Build.read(bytes, name: name)
        #expect(meta.format == format)
        #expect(meta.format.isRaw == (format != .tiff))
        if format == .iiq { #expect(meta.pixelWidth == 7320 && meta.pixelHeight == 5484) }
    }

    @Test func hasselbladByMaker() throws {
        let sub = TIFFFixture(ifd0: [.init(0x00FE, .long([0])), .init(0x0100, .long([8272])), .init(0x0101, .long([6200]))]).bytes()
        func ifd0(_ at: UInt32) -> [UInt8] {
            TIFFFixture(ifd0: [.init(0x00FE, .long([1])), .init(0x0100, .long([160])), .init(0x0101, .long([120])),
                               .init(0x010F, .ascii("Hasselblad")), .init(0x014A, .long([at]))]).bytes()
        }
        let meta = try Build.read(ifd0(UInt32(ifd0(0).count)) + sub.dropFirst(8), name: "no-extension")
        #expect(meta.format == .threeFR && meta.pixelWidth == 8272)
    }

    /// A Canon CRW (CIFF): the records sit in heaps whose tables are at their ends; MakeModel,
    /// TimeStamp and ImageInfo (rotation included) are found in sub-heaps.
    static func crw(rotation: Int32, bigEndian: Bool = false) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? Build.be16(v) : Build.le16(v) }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? Build.be32(v) : Build.le32(v) }
        // A heap: its values, then the table (count, 10-byte entries), then the table's offset.
        func heap(_ records: [(tag: Int, value: [UInt8])]) -> [UInt8] {
            var data: [UInt8] = [], table = u16(records.count)
            for r in records {
                table += u16(r.tag) + u32(r.value.count) + u32(data.count)
                data += r.value
            }
            return data + table + u32(data.count)
        }
        let makeModel = Build.ascii("Canon") + [0] + Build.ascii("Canon EOS DIGITAL REBEL") + [0]
        // 2003-11-10 17:39:26 on the camera's clock.
        let timeStamp = u32(1_068_485_966) + u32(0) + u32(0)
        let imageInfo = u32(3072) + u32(2048) + u32(0x3F80_0000) + u32(Int(UInt32(bitPattern: rotation))) + u32(0) + u32(0) + u32(0)
        let props = heap([(0x1810, imageInfo), (0x300B, heap([(0x180E, timeStamp)]))])
        let root = heap([(0x300A, props), (0x080A, makeModel)])
        return (bigEndian ? Build.ascii("MM") : Build.ascii("II")) + u32(26) + Build.ascii("HEAPCCDR") + u32(0x10002) + [UInt8](repeating: 0, count: 8) + root
    }

    @Test func crw() throws {
        for bigEndian in [false, true] {
            let meta = try Build.read(Self.crw(rotation: 90, bigEndian: bigEndian), name: "CRW_0001.txt")
            #expect(meta.format == .crw && meta.format.isRaw && meta.format.mimeType == "image/x-canon-crw")
            #expect(meta.pixelWidth == 3072 && meta.pixelHeight == 2048)
            #expect(meta.make == "Canon" && meta.model == "Canon EOS DIGITAL REBEL")
            #expect(meta.dates.exifOriginal?.description == "2003-11-10T17:39:26")
            #expect(meta.orientation == 6)
        }
        #expect(try Build.read(Self.crw(rotation: 0)).orientation == nil)
        #expect(try Build.read(Self.crw(rotation: 270)).orientation == 8)
    }

    /// A heap table that points outside its heap, or loops, is skipped with a warning.
    @Test func crwDamaged() throws {
        var bytes = Self.crw(rotation: 0)
        let n = bytes.count
        bytes.replaceSubrange(n - 4..<n, with: Build.le32(0x7FFF_FFF0))
        #expect(throws: MetadataError.self) { try Build.read(bytes) }
        // Cut in the middle: what is left is read or refused, never a crash.
        for cut in stride(from: 14, to: Self.crw(rotation: 0).count, by: 7) {
            _ = try? Build.read(Array(Self.crw(rotation: 0).prefix(cut)))
        }
    }

    /// A Minolta MRW: `\0PRD` has the sizes, `\0TTW` a TIFF structure with the camera's EXIF.
    static let mrwBytes: [UInt8] = {
        let ttw = TIFFFixture(byteOrder: .big, ifd0: [.init(0x010F, .ascii("Konica Minolta Camera, Inc.")),
                                                       .init(0x0110, .ascii("DiMAGE A2")), .init(0x0112, .short([8])),
                                                       .init(0x8769, .long([0]))],
                              exif: [.init(0x9003, .ascii("2004:11:18 23:14:58"))]).bytes()
        let prd = Build.ascii("21810002") + Build.be16(2456) + Build.be16(3272) + Build.be16(2448) + Build.be16(3264)
            + [0x0C, 0x0C, 0x59, 0, 0, 1, 0, 4]
        let blocks = [0, 0x50, 0x52, 0x44] + Build.be32(prd.count) + prd + [0, 0x54, 0x54, 0x57] + Build.be32(ttw.count) + ttw
        return [0, 0x4D, 0x52, 0x4D] + Build.be32(blocks.count) + blocks + [UInt8](repeating: 0x55, count: 64)
    }()

    @Test func mrw() throws {
        let meta = try Build.read(Self.mrwBytes, name: "PICT0001.MRW")
        #expect(meta.format == .mrw && meta.format.isRaw)
        #expect(meta.pixelWidth == 3264 && meta.pixelHeight == 2448)
        #expect(meta.make == "Konica Minolta Camera, Inc." && meta.model == "DiMAGE A2" && meta.orientation == 8)
        #expect(meta.dates.exifOriginal?.description == "2004-11-18T23:14:58")
    }

    /// A Sigma X3F: the header's columns, rows and rotation; the `PROP` section's TIME and camera.
    static let x3fHeader: [UInt8] = Build.ascii("FOVb") + Build.le32(0x20001) + [UInt8](repeating: 7, count: 16) + Build.le32(0)
        + Build.le32(2268) + Build.le32(1512) + Build.le32(90) + [UInt8](repeating: 0, count: 64)
    static let x3fBytes: [UInt8] = {
        let header = x3fHeader
        let props = [("CAMMANUF", "SIGMA"), ("CAMMODEL", "SIGMA SD10"), ("TIME", "978309395")]
        var chars: [UInt8] = [], pairs: [UInt8] = []
        for (name, value) in props {
            pairs += Build.le32(chars.count / 2)
            chars += name.utf16.flatMap { Build.le16(Int($0)) } + [0, 0]
            pairs += Build.le32(chars.count / 2)
            chars += value.utf16.flatMap { Build.le16(Int($0)) } + [0, 0]
        }
        let section = Build.ascii("SECp") + Build.le32(0x20000) + Build.le32(props.count) + Build.le32(0) + Build.le32(0)
            + Build.le32(chars.count / 2) + pairs + chars
        let directoryAt = header.count + section.count
        return header + section + Build.ascii("SECd") + Build.le32(0x20000) + Build.le32(1)
            + Build.le32(header.count) + Build.le32(section.count) + Build.ascii("PROP") + Build.le32(directoryAt)
    }()

    @Test func x3f() throws {
        let meta = try Build.read(Self.x3fBytes, name: "IMG.X3F")
        #expect(meta.format == .x3f && meta.format.isRaw)
        #expect(meta.pixelWidth == 2268 && meta.pixelHeight == 1512 && meta.orientation == 6)
        #expect(meta.make == "SIGMA" && meta.model == "SIGMA SD10")
        #expect(meta.dates.exifOriginal?.description == "2001-01-01T00:36:35")

        // The header alone (directory missing or damaged) still gives the size.
        let headerOnly = try Build.read(Self.x3fHeader + Build.le32(0x7FFF_0000))
        #expect(headerOnly.format == .x3f && headerOnly.pixelWidth == 2268 && headerOnly.dates.exifOriginal == nil)
    }
}
