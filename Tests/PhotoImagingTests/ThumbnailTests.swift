import Foundation
import PhotoImaging
import PhotoModel
import PhotoTesting
import Testing

/// The EXIF-embedded thumbnail: found in the head without decoding the photo, oriented like it.
@Suite struct ThumbnailTests {
    @Test(arguments: [1, 6, 8])
    func extractsTheIFD1Thumbnail(_ orientation: Int) throws {
        let small = Fixtures.pattern(width: 32, height: 24)
        let thumb = try small.encodeJPEG(quality: 90).bytes
        let file = try Fixtures.jpeg(Fixtures.pattern(width: 320, height: 240), orientation: orientation, thumbnail: thumb)
        let t = try #require(EmbeddedThumbnail.extract(bytes: file))
        #expect(t.jpeg == thumb)
        #expect(t.storedSize == PixelSize(width: 32, height: 24))
        #expect(t.orientation == Orientation(exif: orientation))
        let o = Orientation(exif: orientation)
        #expect(t.size == o.displayed(small.size))
        let image = try t.decode()
        #expect(image.size == t.size)
        #expect(Fixtures.meanDifference(image, Fixtures.displayed(small, o)) < 6)
        let cached = try t.encodedForCache()
        #expect(cached.format == .jpeg && cached.size == t.size)
        if o == .up { #expect(cached.bytes == thumb) }  // handed out as stored, no decoding
    }

    @Test func readsOnlyTheHeadOfTheFile() throws {
        let dir = try TemporaryDirectory("thumb")
        defer { dir.remove() }
        let thumb = try Fixtures.pattern(width: 32, height: 24).encodeJPEG().bytes
        var file = try Fixtures.jpeg(Fixtures.pattern(width: 64, height: 48), orientation: 3, thumbnail: thumb)
        // Pad the scan far past the 192 KiB head: the thumbnail is still found.
        file += [UInt8](repeating: 0, count: 1 << 20)
        let path = try dir.write("a.jpg", file)
        let t = try #require(try EmbeddedThumbnail.extract(path: path))
        #expect(t.size == PixelSize(width: 32, height: 24) && t.orientation == .down)
        // The caller's version check sees the opened file: refused, nothing is read.
        let size = Int64(file.count)
        #expect(try EmbeddedThumbnail.extract(path: path, accept: { $0.size == size }) == t)
        #expect(try EmbeddedThumbnail.extract(path: path, accept: { $0.size != size }) == nil)
    }

    @Test func noThumbnailIsNil() throws {
        #expect(EmbeddedThumbnail.extract(bytes: try Fixtures.jpeg(Fixtures.pattern(width: 64, height: 48), orientation: 1)) == nil)
        #expect(EmbeddedThumbnail.extract(bytes: try Fixtures.pattern(width: 8, height: 8).encodePNG().bytes) == nil)
        #expect(EmbeddedThumbnail.extract(bytes: []) == nil)
        // An IFD1 pointing past the block.
        var tiff = Fixtures.exifBlock(orientation: 1, thumbnail: [0xFF, 0xD8, 0xFF, 0xD9])
        tiff[tiff.count - 4 - 1 - 12] = 0x7F
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let file: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0, UInt8(payload.count + 2)] + payload + [0xFF, 0xD9]
        #expect(EmbeddedThumbnail.extract(bytes: file) == nil)
    }

    /// Camera files of the corpus that carry a thumbnail: each decodes, landscape or portrait
    /// like the photo.
    @Test(.enabled(if: Reference.corpus != nil, "the shared corpus was not found"))
    func corpusThumbnails() throws {
        let corpus = try #require(Reference.corpus)
        let root = corpus.appendingPathComponent("real")
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String }
            .filter { $0.lowercased().hasSuffix(".jpg") }.sorted() ?? []
        var found = 0
        let renderer = ImageRenderer()
        for file in files {
            let path = PathBytes(root.appendingPathComponent(file).path)
            guard let t = try? EmbeddedThumbnail.extract(path: path), let image = try? t.decode() else { continue }
            found += 1
            guard let info = try? renderer.probe(path: path), let displayed = info.displayedSize else { continue }
            // Same orientation class as the photo (thumbnails are 4:3 or 16:9 boxes, sometimes padded).
            if abs(Double(displayed.width) / Double(displayed.height) - 1) > 0.2 {
                #expect((image.size.width > image.size.height) == (displayed.width > displayed.height), "\(file)")
            }
        }
        #expect(found >= 10, "only \(found) corpus JPEGs had a decodable thumbnail")
    }

    /// HEIF files of the corpus: their thumbnail items decode, and each looks like the full
    /// image rendered at its size (the same way up: libheif applies the item's own rotation).
    @Test(.enabled(if: Reference.corpus != nil, "the shared corpus was not found"))
    func corpusHEIFThumbnails() throws {
        let corpus = try #require(Reference.corpus)
        let root = corpus.appendingPathComponent("real")
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String }
            .filter { ["heic", "heif", "avif"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted() ?? []
        var found: [String] = []
        let renderer = ImageRenderer()
        for file in files {
            let path = PathBytes(root.appendingPathComponent(file).path)
            let thumbnail: RenderedImage
            do {
                guard let found = try HEIFThumbnail.render(path: path) else { continue }
                thumbnail = found
            } catch {
                // A damaged thumbnail (exiftool's QuickTime.heic is a header without its data):
                // the photo itself does not decode either.
                #expect(throws: ImageError.self, "\(file): the thumbnail failed (\(error)) but the image renders") {
                    try renderer.render(path: path, targetSize: PixelSize(width: 320, height: 320), contentMode: .fit)
                }
                continue
            }
            found.append("\(file) \(thumbnail.size)")
            if let shown = try renderer.probe(path: path).displayedSize {
                #expect(thumbnail.size.pixelCount * 4 <= shown.pixelCount, "\(file): \(thumbnail.size) is no thumbnail of \(shown)")
            }
            let bytes = try #require(FileManager.default.contents(atPath: path.string))
            #expect(try HEIFThumbnail.render(bytes: Array(bytes)) == thumbnail, "\(file): read from memory, not the same")
            let full = try renderer.render(path: path, targetSize: thumbnail.size, contentMode: .fill)
            #expect(full.size == thumbnail.size, "\(file)")
            guard full.size == thumbnail.size else { continue }
            let difference = Fixtures.meanDifference(full, thumbnail)
            #expect(difference < 12, "\(file): the thumbnail differs from the image by \(difference)/255 on average")
            // Upside down it differs much more: the comparison tells which way up it is.
            let turned = Fixtures.meanDifference(full, Fixtures.displayed(thumbnail, .down))
            #expect(turned > 2 * difference, "\(file): upside down \(turned), as decoded \(difference)")
            print("HEIF thumbnail \(file) \(thumbnail.size): mean difference \(difference), upside down \(turned)")
        }
        print("HEIF thumbnails: \(found)")
        #expect(found.count >= 2, "only \(found.count) corpus HEIF files had a thumbnail")
        // Not HEIF, or no thumbnail: nil, not an error.
        let jpeg = FileManager.default.temporaryDirectory.appendingPathComponent("heif-thumb-\(getpid()).jpg")
        try Data(try Fixtures.jpeg(Fixtures.pattern(width: 64, height: 48))).write(to: jpeg)
        defer { try? FileManager.default.removeItem(at: jpeg) }
        #expect(try HEIFThumbnail.render(path: PathBytes(jpeg.path)) == nil)
    }

    /// A HEIF file's thumbnail item, made here with libheif's encoder (no corpus needed).
    @Test func heifThumbnailItem() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("heif-thumbnail-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func file(_ name: String, _ fixture: HEIFFixture) throws -> PathBytes {
            let url = dir.appendingPathComponent(name)
            try Data(try fixture.bytes()).write(to: url)
            return PathBytes(url.path)
        }
        // The thumbnail, not the image at thumbnail size: 320×240 of a 640×480, the pattern upright.
        let plain = try file("plain.heic", HEIFFixture())
        let thumbnail = try #require(try HEIFThumbnail.render(path: plain))
        #expect(thumbnail.size == PixelSize(width: 320, height: 240))
        #expect(!thumbnail.hasTransparency)
        for (x, y, colour) in [(80, 60, [220, 30, 30]), (240, 60, [30, 200, 40]), (80, 180, [30, 40, 210]), (240, 180, [240, 240, 240])] {
            let p = thumbnail.pixel(x: x, y: y).prefix(3).map(Int.init)
            #expect(zip(p, colour).allSatisfy { abs($0 - $1) < 30 }, "at \(x),\(y): \(p), not \(colour)")
        }
        #expect(try HEIFThumbnail.render(bytes: try HEIFFixture().bytes()) == thumbnail)
        // Transparency is kept.
        let alpha = try #require(try HEIFThumbnail.render(path: try file("alpha.heic", HEIFFixture(alpha: true))))
        #expect(alpha.hasTransparency)
        #expect(alpha.pixel(x: 2, y: 2)[3] < 30 && alpha.pixel(x: 160, y: 120)[3] > 220)
        // A `mif1` main brand (libheif's "maybe") is read too.
        #expect(try HEIFThumbnail.render(path: try file("mif1.heic", HEIFFixture(brand: "mif1")))?.size == thumbnail.size)
        // None: nil; a version the caller did not ask for: nil; not HEIF: nil.
        #expect(try HEIFThumbnail.render(path: try file("none.heic", HEIFFixture(thumbnail: nil))) == nil)
        #expect(try HEIFThumbnail.render(path: plain, accept: { _ in false }) == nil)
        let jpeg = dir.appendingPathComponent("p.jpg")
        try Data(try Fixtures.jpeg(Fixtures.pattern(width: 64, height: 48))).write(to: jpeg)
        #expect(try HEIFThumbnail.render(path: PathBytes(jpeg.path)) == nil)
        // Damaged: an error or nil, never a crash.
        let bytes = try HEIFFixture().bytes()
        let cutFile = dir.appendingPathComponent("cut.heic")
        for cut in stride(from: 16, to: bytes.count, by: max(1, bytes.count / 40)) {
            _ = try? HEIFThumbnail.render(bytes: Array(bytes.prefix(cut)))
            try Data(bytes.prefix(cut)).write(to: cutFile)  // through the descriptor reader too
            _ = try? HEIFThumbnail.render(path: PathBytes(cutFile.path))
        }
    }
}
