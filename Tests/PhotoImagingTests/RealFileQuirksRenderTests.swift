internal import CTurboJPEG
import Foundation
import PhotoImaging
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Rendering what real files carry: stray bytes between JPEG segments (rendered, as libjpeg
/// and every viewer do), valid JPEGs libjpeg refuses (`undecodable`, not `corrupt`), the
/// orientation from XMP and from a PNG's late `eXIf`, and HEIF `irot`/`imir` shown exactly as
/// the metadata's orientation says.
@Suite struct RealFileQuirksRenderTests {
    let renderer = ImageRenderer()
    static let whole = PixelSize(width: 4096, height: 4096)

    func render(_ bytes: [UInt8], _ target: PixelSize = whole) throws(ImageError) -> RenderedImage {
        try renderer.render(bytes: bytes, targetSize: target, contentMode: .fit)
    }

    // MARK: Stray bytes

    @Test("A JPEG with stray bytes before a marker renders (TurboJPEG's warning is not fatal), the same as without",
          arguments: [0xDB, 0xC0, 0xC4, 0xDA] as [UInt8])
    func strayBytesRender(marker: UInt8) throws {
        let pattern = Fixtures.pattern(width: 96, height: 64)
        let clean = try Fixtures.jpeg(pattern, orientation: 6)
        let stray = JPEGEdit.insertingStrayBytes(clean, before: marker)
        let expected = try render(clean)
        let image = try render(stray)
        #expect(image.size == PixelSize(width: 64, height: 96))  // turned by its EXIF orientation
        #expect(image.pixels == expected.pixels)
        // At a reduced DCT scale too.
        #expect(try render(stray, PixelSize(width: 16, height: 16)).pixels == (try render(clean, PixelSize(width: 16, height: 16))).pixels)
    }

    @Test func strayBytesBeforeTheExifBlockKeepItsThumbnail() throws {
        let thumb = try Fixtures.pattern(width: 32, height: 24).encodeJPEG(quality: 80).bytes
        let withThumb = try Fixtures.jpeg(Fixtures.pattern(width: 96, height: 64), orientation: 1, thumbnail: thumb)
        // A JFIF segment first, then two stray bytes, then the EXIF block.
        let jfif = JPEGEdit.insertingSegment(withThumb, marker: 0xE0, payload: Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
        let stray = JPEGEdit.insertingStrayBytes(jfif, before: 0xE1)
        let found = try #require(EmbeddedThumbnail.extract(bytes: stray))
        #expect(found.storedSize == PixelSize(width: 32, height: 24))
        #expect(try render(stray).size == PixelSize(width: 96, height: 64))
    }

    // MARK: Valid, but no decoder here renders it

    @Test("A JPEG whose height waits for a DNL segment is undecodable (libjpeg refuses it), not corrupt")
    func dnlIsUndecodable() throws {
        let dnl = JPEGEdit.deferringHeightToDNL(try Fixtures.pattern(width: 96, height: 64).encodeJPEG(quality: 90).bytes)
        // libjpeg-turbo itself refuses it: the reason this is no decoder's for now.
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var w: Int32 = 0, h: Int32 = 0, s: Int32 = 0, c: Int32 = 0
        let rc = dnl.withUnsafeBufferPointer { tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &w, &h, &s, &c) }
        #expect(rc != 0 && tjGetErrorCode(handle) != Int32(TJERR_WARNING.rawValue), "libjpeg decoded a DNL JPEG: time to render it")
        let error = try #require(throws: ImageError.self) { try render(dnl) }
        #expect(error.code == "undecodable", "\(error)")
        #expect(error.description.contains("DNL"), "\(error)")
        // Its metadata is still valid: the width, and the height from the DNL segment.
        var source = MemorySource(dnl)
        let meta = try MetadataReader().read(&source, fileName: Array("dnl.jpg".utf8))
        #expect(meta.pixelWidth == 96 && meta.pixelHeight == 64)
    }

    @Test("Lossless, hierarchical and 12-bit JPEGs are undecodable", arguments: [
        ("lossless SOF3", 0xC3 as UInt8, 8 as UInt8), ("hierarchical SOF5", 0xC5, 8), ("12-bit", 0xC1, 12),
    ])
    func otherUndecodableJPEGs(name: String, marker: UInt8, precision: UInt8) throws {
        var jpeg = try Fixtures.pattern(width: 96, height: 64).encodeJPEG(quality: 90).bytes
        let sof = try #require(JPEGEdit.offset(of: 0xC0, in: jpeg))
        jpeg[sof + 1] = marker
        jpeg[sof + 4] = precision
        let error = try #require(throws: ImageError.self) { try render(jpeg) }
        #expect(error.code == "undecodable", "\(name): \(error)")
    }

    // MARK: Orientation from XMP, and from a PNG's eXIf after its image data

    static let xmpPrefix = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]

    /// A PNG with `chunk` placed last, after the image data (before IEND).
    static func pngWithLateChunk(_ png: [UInt8], _ chunk: [UInt8]) -> [UInt8] {
        Array(png.dropLast(12)) + chunk + Array(png.suffix(12))
    }

    @Test("XMP tiff:Orientation turns JPEG and PNG files that carry no EXIF orientation")
    func xmpOrientationRenders() throws {
        let pattern = Fixtures.pattern(width: 96, height: 64)
        let expected = Fixtures.displayed(pattern, .right)
        let packet = XMPFixture.packet(orientation: 6)
        let png = Self.pngWithLateChunk(try pattern.encodePNG().bytes,
                                        PNGFixture.chunk("iTXt", Array("XML:com.adobe.xmp".utf8) + [0, 0, 0, 0, 0] + Array(packet.utf8)))
        let fromPNG = try render(png)
        #expect(fromPNG.size == expected.size && fromPNG.pixels == expected.pixels)
        let jpeg = JPEGEdit.insertingSegment(try pattern.encodeJPEG(quality: 95).bytes, marker: 0xE1, payload: Self.xmpPrefix + Array(packet.utf8))
        let fromJPEG = try render(jpeg)
        #expect(fromJPEG.size == expected.size)
        guard fromJPEG.size == expected.size else { return }
        #expect(Fixtures.meanDifference(fromJPEG, expected) < 3)
    }

    @Test("A PNG's eXIf after its image data (ImageMagick's place for it) turns it")
    func lateExifRenders() throws {
        let pattern = Fixtures.pattern(width: 96, height: 64)
        let png = Self.pngWithLateChunk(try pattern.encodePNG().bytes, PNGFixture.chunk("eXIf", ExifFixture(orientation: 8).bytes()))
        let image = try render(png)
        let expected = Fixtures.displayed(pattern, .left)
        #expect(image.size == expected.size && image.pixels == expected.pixels)
    }

    // MARK: HEIF irot/imir

    /// What a client that turns the stored pixels by the index's `orientation` sees, and what
    /// the renderer shows (libheif applying `irot`/`imir`), are the same image.
    @Test("A HEIF is shown as its stored pixels turned by the orientation the metadata reports", arguments: 1...8)
    func heifOrientationAgrees(_ o: Int) throws {
        let fixture = HEIFFixture(width: 64, height: 48, thumbnail: nil, orientation: o, exifOrientation: o == 6 ? 1 : 6)
        let heic = try fixture.bytes()
        var source = MemorySource(heic)
        let meta = try MetadataReader().read(&source, fileName: Array("x.heic".utf8))
        let stored = try HEIFFixture.storedImage(heic)
        #expect(meta.pixelWidth == stored.width && meta.pixelHeight == stored.height)
        let turned = Fixtures.displayed(RenderedImage(size: PixelSize(width: stored.width, height: stored.height), channels: 3, pixels: stored.rgb),
                                        Orientation(exif: meta.orientation))
        let shown = try render(heic)
        #expect(shown.size == turned.size, "orientation \(o): shown \(shown.size), turned \(turned.size)")
        guard shown.size == turned.size else { return }
        #expect(Fixtures.meanDifference(shown, turned) < 1, "orientation \(o) read as \(String(describing: meta.orientation))")
        // The stored image is the fixture's pattern as given (the quadrants' colours), so the
        // orientation read is not merely consistent but the one the file was written with.
        #expect(meta.orientation == o)
        #expect(stored.width == 64 && stored.height == 48)
        for (x, y) in [(8, 8), (56, 8), (8, 40), (56, 40)] {
            let at = (y * stored.width + x) * 3
            #expect(zip(stored.rgb[at..<(at + 3)], fixture.pixel(x: x, y: y)).allSatisfy { abs(Int($0) - Int($1)) < 24 },
                    "orientation \(o) at \(x),\(y)")
        }
    }
}
