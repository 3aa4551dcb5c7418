import Foundation
import PhotoImaging
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// TIFF through libtiff: every layout a scanner, an editor or ImageMagick writes renders as
/// ImageMagick decodes it; BigTIFF is indexed and drawn; damaged, unsupported and slow files
/// fail with their reason.
@Suite struct TIFFRenderTests {
    static let hasConvert = MadeFormats.convert != nil

    static let variants: [FormatVariant] = [
        FormatVariant(name: "uncompressed strips", options: ["-compress", "None"], output: "TIFF:$OUT"),
        FormatVariant(name: "LZW", options: ["-compress", "LZW"], output: "TIFF:$OUT"),
        FormatVariant(name: "Deflate", options: ["-compress", "Zip"], output: "TIFF:$OUT"),
        FormatVariant(name: "PackBits", options: ["-compress", "RLE"], output: "TIFF:$OUT"),
        FormatVariant(name: "JPEG", options: ["-compress", "JPEG", "-quality", "90"], output: "TIFF:$OUT", tolerance: 3),
        FormatVariant(name: "tiles 16x16 LZW", options: ["-compress", "LZW", "-define", "tiff:tile-geometry=16x16"], output: "TIFF:$OUT"),
        FormatVariant(name: "tiles 32x16 JPEG", options: ["-compress", "JPEG", "-define", "tiff:tile-geometry=32x16"], output: "TIFF:$OUT", tolerance: 3),
        FormatVariant(name: "one strip", options: ["-compress", "LZW", "-define", "tiff:rows-per-strip=48"], output: "TIFF:$OUT"),
        FormatVariant(name: "16-bit", options: ["-depth", "16", "-compress", "Zip"], output: "TIFF:$OUT"),
        FormatVariant(name: "CMYK", options: ["-colorspace", "CMYK", "-compress", "LZW"], output: "TIFF:$OUT", tolerance: 2),
        FormatVariant(name: "grey", options: ["-colorspace", "Gray", "-compress", "LZW"], output: "TIFF:$OUT"),
        FormatVariant(name: "16-bit grey", options: ["-colorspace", "Gray", "-depth", "16"], output: "TIFF:$OUT"),
        FormatVariant(name: "bilevel", options: ["-threshold", "50%", "-type", "Bilevel", "-compress", "Group4"], output: "TIFF:$OUT"),
        FormatVariant(name: "palette", options: ["-type", "Palette", "-compress", "LZW"], output: "TIFF:$OUT"),
        FormatVariant(name: "big-endian", options: ["-endian", "MSB", "-compress", "LZW"], output: "TIFF:$OUT"),
        FormatVariant(name: "BigTIFF", options: ["-compress", "LZW"], output: "TIFF64:$OUT"),
        FormatVariant(name: "BigTIFF tiles", options: ["-compress", "Zip", "-define", "tiff:tile-geometry=16x16"], output: "TIFF64:$OUT"),
    ]

    /// Each variant of a 64×48 pattern rendered at its own size equals ImageMagick's decode of
    /// the same file, and at half size is that decode halved.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed (scripts/install-deps --tests)"), arguments: variants)
    func rendersAsImageMagickDecodes(_ variant: FormatVariant) throws {
        let made = try MadeFormats("tiff")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48))
        let file = try made.make([source] + variant.options + [variant.output], output: "v.tif")
        let reference = try made.reference(file)
        let renderer = ImageRenderer()
        let full = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(full.size == PixelSize(width: 64, height: 48))
        #expect(full.channels == 3)
        let d = Fixtures.meanDifference(full, reference)
        #expect(d <= variant.tolerance, "\(variant): mean difference \(d) from ImageMagick's decode")
        let half = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 32, height: 32), contentMode: .fit)
        #expect(half.size == PixelSize(width: 32, height: 24))
        let dh = Fixtures.meanDifference(half, Fixtures.shrink(reference, by: 2))
        #expect(dh <= variant.tolerance + 1, "\(variant) at half size: mean difference \(dh)")
    }

    /// `fill` crops: the bands below the crop are not decoded, and the result equals the same
    /// crop of ImageMagick's decode rendered through the PNG decoder.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"),
          arguments: [["-compress", "LZW", "-define", "tiff:rows-per-strip=5"], ["-compress", "Zip", "-define", "tiff:tile-geometry=16x16"]])
    func fillCropsLikeEveryFormat(_ options: [String]) throws {
        let made = try MadeFormats("tiff-fill")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48))
        let file = try made.make([source] + options + ["$OUT"], output: "f.tif")
        let png = try made.reference(file).encodePNG().bytes
        let renderer = ImageRenderer()
        for target in [PixelSize(width: 16, height: 40), PixelSize(width: 40, height: 10), PixelSize(width: 30, height: 30)] {
            let ours = try renderer.render(path: PathBytes(file), targetSize: target, contentMode: .fill)
            let theirs = try renderer.render(bytes: png, targetSize: target, contentMode: .fill)
            #expect(ours.size == target)
            #expect(Fixtures.meanDifference(ours, theirs) < 0.5, "\(options) \(target)")
        }
    }

    /// A multi-page file shows its first page, not the second.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"))
    func firstPageOfMultiPage() throws {
        let made = try MadeFormats("tiff-pages")
        defer { made.remove() }
        let first = try made.source(Fixtures.pattern(width: 64, height: 48), name: "first.pam")
        let second = try made.source(Fixtures.displayed(Fixtures.pattern(width: 64, height: 48), .down), name: "second.pam")
        let file = try made.make([first, second, "-compress", "LZW", "$OUT"], output: "pages.tif")
        let out = try ImageRenderer().render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(Fixtures.meanDifference(out, Fixtures.pattern(width: 64, height: 48)) < 0.5)
        #expect(Fixtures.meanDifference(out, Fixtures.displayed(Fixtures.pattern(width: 64, height: 48), .down)) > 50)
    }

    /// The Orientation tag is applied once, as ImageMagick's -auto-orient shows it.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"), arguments: ["RightTop", "BottomRight", "LeftBottom"])
    func appliesTheOrientationTag(_ orient: String) throws {
        let made = try MadeFormats("tiff-orient")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48))
        let file = try made.make([source, "-orient", orient, "-compress", "LZW", "$OUT"], output: "o.tif")
        let reference = try made.reference(file, autoOrient: true)
        let out = try ImageRenderer().render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        #expect(out.size == reference.size)
        guard out.size == reference.size else { return }
        #expect(Fixtures.meanDifference(out, reference) < 0.5, "\(orient)")
    }

    /// Alpha (unassociated, half transparent) comes back straight, not premultiplied.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"))
    func keepsAlpha() throws {
        let made = try MadeFormats("tiff-alpha")
        defer { made.remove() }
        var pixels = Fixtures.pattern(width: 64, height: 48, alpha: true).pixels
        for i in 0..<(64 * 48) where pixels[4 * i + 3] == 0 { pixels[4 * i + 3] = 128 }
        let pattern = RenderedImage(size: PixelSize(width: 64, height: 48), channels: 4, pixels: pixels)
        let source = try made.source(pattern)
        let file = try made.make([source, "-compress", "LZW", "$OUT"], output: "a.tif")
        let out = try ImageRenderer().render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(out.channels == 4)
        #expect(out.hasTransparency)
        var worst = 0
        for i in 0..<(64 * 48) {
            for k in 0..<4 { worst = max(worst, abs(Int(out.pixels[4 * i + k]) - Int(pattern.pixels[4 * i + k]))) }
        }
        #expect(worst <= 1, "largest sample difference \(worst)")
    }

    /// BigTIFF is indexed (format, size), which it was not before libtiff drew it.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"))
    func bigTIFFIsIndexed() throws {
        let made = try MadeFormats("bigtiff")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48))
        let file = try made.make([source, "-orient", "RightTop", "-compress", "LZW", "TIFF64:$OUT"], output: "big.tif")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(bytes.prefix(4) == [0x49, 0x49, 0x2B, 0x00], "not a BigTIFF")
        let info = try ImageRenderer().probe(path: PathBytes(file))
        #expect(info.format == .tiff)
        #expect(info.storedSize == PixelSize(width: 64, height: 48))
        #expect(info.orientation == .right)
    }

    /// Damaged files: an error with its reason, never a crash; nothing past the header decoded
    /// for a size only claimed.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"))
    func damagedFilesFailWithAReason() throws {
        let made = try MadeFormats("tiff-bad")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48))
        let file = try made.make([source, "-compress", "LZW", "$OUT"], output: "ok.tif")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let renderer = ImageRenderer()
        let target = PixelSize(width: 64, height: 64)
        // The pixel data garbled: LZW fails (corrupt), or decodes to something (fine); no crash.
        var garbled = bytes
        for i in stride(from: 16, to: min(garbled.count, 9000), by: 7) { garbled[i] ^= 0x5A }
        _ = try? renderer.render(bytes: garbled, targetSize: target, contentMode: .fit)
        // The first IFD pointing past the end.
        var lost = bytes
        lost[4] = 0xFF; lost[5] = 0xFF; lost[6] = 0xFF; lost[7] = 0x7F
        #expect(throws: ImageError.self) { try renderer.render(bytes: lost, targetSize: target, contentMode: .fit) }
        // A header claiming 100000 x 100000: refused by the pixel limit before decoding.
        let huge = try made.make(["-size", "4x4", "xc:red", "-compress", "LZW", "$OUT"], output: "small.tif")
        var claimed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: huge)))
        try rewriteSize(&claimed, width: 100_000, height: 100_000)
        #expect(throws: ImageError.tooLarge(width: 100_000, height: 100_000, limit: renderer.pixelLimit)) {
            try renderer.render(bytes: claimed, targetSize: target, contentMode: .fit)
        }
        // Floating-point samples: valid, but not for libtiff's RGBA interface.
        // (ImageMagick cannot write one with Debian's libtiff: made by hand, 2x2 grey.)
        let float = MadeFormats.tiff([(256, 3, 2), (257, 3, 2), (258, 3, 32), (259, 3, 1), (262, 3, 1), (277, 3, 1), (278, 3, 2),
                                      (339, 3, 3)], data: [UInt8](repeating: 0x3F, count: 16))
        do {
            _ = try renderer.render(bytes: float, targetSize: target, contentMode: .fit)
            Issue.record("a floating-point TIFF rendered")
        } catch {
            guard case .undecodable(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.hasPrefix("TIFF: "))
        }
    }

    /// A decode past the CPU limit stops between bands with `timedOut`.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"))
    func stopsAtTheCPULimit() throws {
        let made = try MadeFormats("tiff-slow")
        defer { made.remove() }
        let file = try made.make(["-size", "2000x2000", "gradient:red-blue", "-compress", "Zip", "-define", "tiff:rows-per-strip=8", "$OUT"],
                                 output: "slow.tif")
        let target = PixelSize(width: 256, height: 256)
        let quick = ImageRenderer(cpuLimitMilliseconds: 1)
        #expect(throws: ImageError.self) { try quick.render(path: PathBytes(file), targetSize: target, contentMode: .fit) }
        do {
            _ = try quick.render(path: PathBytes(file), targetSize: target, contentMode: .fit)
        } catch {
            #expect(error.code == "timeout", "\(error)")
        }
        // The default limit leaves it plenty of time.
        #expect(try ImageRenderer().render(path: PathBytes(file), targetSize: target, contentMode: .fit).size == target)
    }

    /// Sets IFD0's ImageWidth and ImageLength of a little-endian classic TIFF (LONG or SHORT).
    func rewriteSize(_ b: inout [UInt8], width: Int, height: Int) throws {
        guard b.starts(with: [0x49, 0x49, 0x2A, 0x00]) else { throw MadeFormats.Failure("not little-endian TIFF") }
        func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
        let ifd = u32(4)
        for e in 0..<u16(ifd) {
            let at = ifd + 2 + 12 * e
            let tag = u16(at)
            guard tag == 0x100 || tag == 0x101 else { continue }
            let v = tag == 0x100 ? width : height
            b[at + 2] = 4; b[at + 3] = 0
            for k in 0..<4 { b[at + 8 + k] = UInt8(v >> (8 * k) & 0xFF) }
        }
    }
}
