import Foundation
import PhotoImaging
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// GIF (giflib, the first frame) and BMP (every header version, read here) render as
/// ImageMagick decodes them; damaged files fail with their reason.
@Suite struct GIFBMPRenderTests {
    static let hasConvert = MadeFormats.convert != nil

    static let variants: [FormatVariant] = [
        FormatVariant(name: "GIF", options: [], output: "GIF:$OUT"),
        FormatVariant(name: "GIF interlaced", options: ["-interlace", "GIF"], output: "GIF:$OUT"),
        FormatVariant(name: "GIF87a", options: [], output: "GIF87:$OUT"),
        FormatVariant(name: "BMP2 (OS/2 1.x core header)", options: [], output: "BMP2:$OUT"),
        FormatVariant(name: "BMP3 24-bit", options: [], output: "BMP3:$OUT"),
        FormatVariant(name: "BMP3 8-bit palette", options: ["-type", "Palette"], output: "BMP3:$OUT"),
        FormatVariant(name: "BMP3 4-bit palette", options: ["-type", "Palette", "-colors", "8"], output: "BMP3:$OUT"),
        FormatVariant(name: "BMP3 1-bit", options: ["-monochrome"], output: "BMP3:$OUT"),
        FormatVariant(name: "BMP3 RLE8", options: ["-type", "Palette", "-compress", "RLE"], output: "BMP3:$OUT"),
        FormatVariant(name: "BMP5 24-bit", options: [], output: "BMP:$OUT"),
        FormatVariant(name: "BMP5 RGB565 bit fields", options: ["-define", "bmp:subtype=RGB565"], output: "BMP:$OUT", tolerance: 3),
        FormatVariant(name: "BMP5 RGB555", options: ["-define", "bmp:subtype=RGB555"], output: "BMP:$OUT", tolerance: 3),
        FormatVariant(name: "BMP5 ARGB8888", options: ["-alpha", "on", "-define", "bmp:subtype=ARGB8888"], output: "BMP:$OUT", alpha: true),
        // ImageMagick widens 4-bit samples by a shift (0xF -> 240), photod scales them (0xF -> 255).
        FormatVariant(name: "BMP5 ARGB4444", options: ["-alpha", "on", "-define", "bmp:subtype=ARGB4444"], output: "BMP:$OUT", alpha: true,
                tolerance: 16),
    ]

    /// A 64×48 pattern (transparent left half for the alpha variants) in each variant equals
    /// ImageMagick's decode of the file, at full and at half size.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed (scripts/install-deps --tests)"), arguments: variants)
    func rendersAsImageMagickDecodes(_ variant: FormatVariant) throws {
        let made = try MadeFormats("gifbmp")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48, alpha: variant.alpha))
        let file = try made.make([source] + variant.options + [variant.output], output: "v")
        let reference = try made.reference(file, alpha: variant.alpha)
        let renderer = ImageRenderer()
        let full = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(full.size == PixelSize(width: 64, height: 48))
        #expect(full.hasAlpha == variant.alpha)
        if variant.alpha {
            // Colours where the pattern is opaque (a transparent pixel's colour means nothing);
            // alpha everywhere.
            var worst = 0, colour = 0, opaque = 0
            for i in 0..<(64 * 48) {
                worst = max(worst, abs(Int(full.pixels[4 * i + 3]) - Int(reference.pixels[4 * i + 3])))
                guard reference.pixels[4 * i + 3] >= 240 else { continue }
                opaque += 1
                for k in 0..<3 { colour += abs(Int(full.pixels[4 * i + k]) - Int(reference.pixels[4 * i + k])) }
            }
            #expect(worst <= 16, "alpha differs by \(worst)")
            #expect(opaque == 64 * 48 / 2)
            #expect(Double(colour) / Double(3 * opaque) <= variant.tolerance, "\(variant): colours differ")
        } else {
            #expect(Fixtures.meanDifference(full, reference) <= variant.tolerance, "\(variant): \(Fixtures.meanDifference(full, reference))")
        }
        let half = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 32, height: 32), contentMode: .fit)
        #expect(half.size == PixelSize(width: 32, height: 24))
        if !variant.alpha {
            #expect(Fixtures.meanDifference(half, Fixtures.shrink(reference, by: 2)) <= variant.tolerance + 1)
        }
    }

    /// An animated GIF shows its first frame; a transparent colour is transparent.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"))
    func animatedGIFShowsItsFirstFrame() throws {
        let made = try MadeFormats("gif-anim")
        defer { made.remove() }
        let pattern = Fixtures.pattern(width: 64, height: 48)
        let first = try made.source(pattern, name: "first.pam")
        let second = try made.source(Fixtures.displayed(pattern, .down), name: "second.pam")
        let file = try made.make(["-delay", "10", first, second, "-loop", "0", "$OUT"], output: "anim.gif")
        #expect(try ImageRenderer().probe(path: PathBytes(file)).format == .gif)
        let out = try ImageRenderer().render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(Fixtures.meanDifference(out, pattern) < 0.5)
        #expect(Fixtures.meanDifference(out, Fixtures.displayed(pattern, .down)) > 50)

        let transparent = try made.make([first, "-transparent", "rgb(30,40,210)", "$OUT"], output: "t.gif")
        let t = try ImageRenderer().render(path: PathBytes(transparent), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(t.hasAlpha)
        // Bottom-left (blue) is transparent, top-right (green) opaque.
        #expect(t.pixels[(40 * 64 + 8) * 4 + 3] == 0)
        #expect(t.pixels[(8 * 64 + 40) * 4 + 3] == 255)
        #expect(Array(t.pixels[((8 * 64 + 40) * 4)..<((8 * 64 + 40) * 4 + 3)]) == [30, 200, 40])
    }

    /// A first frame smaller than the logical screen sits at its offset on a transparent canvas.
    @Test func gifFrameOnItsScreen() throws {
        // GIF89a, screen 4x3, global table of 2 colours (black, red); an 2x1 frame at (1, 1) of
        // red pixels. LZW, code size 2: clear (4), 1, 1, end (5).
        var gif: [UInt8] = Array("GIF89a".utf8) + [4, 0, 3, 0, 0x80, 0, 0] + [0, 0, 0, 255, 0, 0]
        gif += [0x2C, 1, 0, 1, 0, 2, 0, 1, 0, 0]
        gif += [2, 2, 0x4C, 0x0A, 0, 0x3B]
        let out = try ImageRenderer().render(bytes: gif, targetSize: PixelSize(width: 4, height: 3), contentMode: .fit)
        #expect(out.size == PixelSize(width: 4, height: 3))
        #expect(out.channels == 4)
        let alpha = (0..<12).map { out.pixels[4 * $0 + 3] }
        #expect(alpha == [0, 0, 0, 0, 0, 255, 255, 0, 0, 0, 0, 0])
        #expect(Array(out.pixels[20..<23]) == [255, 0, 0])
    }

    /// Hand-made BMPs ImageMagick does not write: an OS/2 2.x 16-byte header, RLE4 with a delta,
    /// a top-down 32-bit BI_RGB with alpha in its fourth bytes, a PNG inside.
    @Test func headersImageMagickDoesNotWrite() throws {
        let renderer = ImageRenderer()
        let target = PixelSize(width: 8, height: 8)
        // OS/2 2.x, 2x2, 24-bit, bottom-up: bottom row blue, white; top row red, green.
        let pixels: [UInt8] = [255, 0, 0, 255, 255, 255, 0, 0, 0, 0, 255, 0, 255, 0, 0, 0]
        let os2 = bmp(dib: le32(16) + le32(2) + le32(2) + le16(1) + le16(24), palette: [], pixels: pixels)
        let a = try renderer.render(bytes: os2, targetSize: target, contentMode: .fit)
        #expect(a.pixels == [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])
        // The same header cut at 24 bytes (OS/2 2.x allows any length from 16 to 64): indexed too.
        let os2Long = bmp(dib: le32(24) + le32(2) + le32(2) + le16(1) + le16(24) + le32(0) + le32(0), palette: [], pixels: pixels)
        #expect(try renderer.render(bytes: os2Long, targetSize: target, contentMode: .fit).pixels == a.pixels)
        let dir = try TemporaryDirectory("bmp-os2")
        defer { dir.remove() }
        let probed = try renderer.probe(path: try dir.write("os2.bmp", os2Long))
        #expect(probed.format == .bmp)
        #expect(probed.storedSize == PixelSize(width: 2, height: 2))
        // RLE4, 4x2, palette black/red/green: bottom row "run of 4 alternating red, green", then
        // end of line; top row: delta (1, 0), then 3 literal pixels green, red, green (padded to
        // 16 bits), end of bitmap.
        let palette: [UInt8] = [0, 0, 0, 0, 0, 0, 255, 0, 0, 255, 0, 0]
        let rle: [UInt8] = [4, 0x12, 0, 0, 0, 2, 1, 0, 0, 3, 0x21, 0x20, 0, 1]
        let rle4 = bmp(dib: info(width: 4, height: 2, bits: 4, compression: 2, colors: 3), palette: palette, pixels: rle)
        let b = try renderer.render(bytes: rle4, targetSize: target, contentMode: .fit)
        #expect(b.pixels == [0, 0, 0, 0, 255, 0, 255, 0, 0, 0, 255, 0,
                             255, 0, 0, 0, 255, 0, 255, 0, 0, 0, 255, 0])
        // Top-down 32-bit BI_RGB, 2x1, BGRA: half-transparent red, opaque blue.
        let rgba = bmp(dib: info(width: 2, height: -1, bits: 32, compression: 0, colors: 0), palette: [], pixels: [0, 0, 255, 128, 255, 0, 0, 255])
        let c = try renderer.render(bytes: rgba, targetSize: target, contentMode: .fit)
        #expect(c.channels == 4)
        #expect(c.pixels == [255, 0, 0, 128, 0, 0, 255, 255])
        // The same with all fourth bytes 0: opaque.
        let rgbx = bmp(dib: info(width: 2, height: -1, bits: 32, compression: 0, colors: 0), palette: [], pixels: [0, 0, 255, 0, 255, 0, 0, 0])
        #expect(try renderer.render(bytes: rgbx, targetSize: target, contentMode: .fit).pixels == [255, 0, 0, 0, 0, 255])
        // BI_PNG: the PNG decoder draws it.
        let png = try Fixtures.pattern(width: 8, height: 6).encodePNG().bytes
        let inner = bmp(dib: info(width: 8, height: 6, bits: 0, compression: 5, colors: 0), palette: [], pixels: png)
        #expect(Fixtures.meanDifference(try renderer.render(bytes: inner, targetSize: target, contentMode: .fit),
                                        Fixtures.pattern(width: 8, height: 6)) == 0)
    }

    /// Damaged BMPs and GIFs fail with a reason; a huge claimed size is refused before decoding.
    @Test func damagedFilesFailWithAReason() throws {
        let renderer = ImageRenderer()
        let target = PixelSize(width: 8, height: 8)
        let short = bmp(dib: info(width: 100, height: 100, bits: 24, compression: 0, colors: 0), palette: [], pixels: [1, 2, 3])
        #expect(throws: ImageError.corrupt("BMP: the pixel data is cut short (3 bytes of 30000)")) {
            try renderer.render(bytes: short, targetSize: target, contentMode: .fit)
        }
        let huge = bmp(dib: info(width: 100_000, height: 100_000, bits: 24, compression: 0, colors: 0), palette: [], pixels: [1, 2, 3])
        #expect(throws: ImageError.tooLarge(width: 100_000, height: 100_000, limit: renderer.pixelLimit)) {
            try renderer.render(bytes: huge, targetSize: target, contentMode: .fit)
        }
        let rleCut = bmp(dib: info(width: 4, height: 2, bits: 8, compression: 1, colors: 2), palette: [0, 0, 0, 0, 255, 255, 255, 0],
                         pixels: [4, 1, 0])
        #expect(throws: ImageError.corrupt("BMP: the RLE data is cut short")) { try renderer.render(bytes: rleCut, targetSize: target, contentMode: .fit) }
        // An OS/2 2.x 64-byte header with its Huffman 1D compression.
        let huffman = bmp(dib: le32(64) + le32(2) + le32(2) + le16(1) + le16(1) + le32(3) + [UInt8](repeating: 0, count: 44), palette: [],
                          pixels: [0, 0, 0, 0])
        #expect(throws: ImageError.undecodable("BMP: OS/2 compression 3 (Huffman 1D)")) {
            try renderer.render(bytes: huffman, targetSize: target, contentMode: .fit)
        }
        // A GIF header and screen, then the trailer: no frame.
        let empty: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0, 0x3B]
        #expect(throws: ImageError.corrupt("GIF: the GIF holds no frame")) { try renderer.render(bytes: empty, targetSize: target, contentMode: .fit) }
        // A 65535x65535 screen: over the limit before any pixel is decoded.
        var bigGIF: [UInt8] = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0, 0] + [0, 0, 0, 255, 0, 0]
        bigGIF += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0, 0x3B]
        #expect(throws: ImageError.tooLarge(width: 65535, height: 65535, limit: renderer.pixelLimit)) {
            try renderer.render(bytes: bigGIF, targetSize: target, contentMode: .fit)
        }
    }

    /// Fuzzer finding (`image-bmp`, a trap): a bit-field mask with holes (0xF0F0F0F0) made a
    /// channel's value carry the bits above its lowest run, and scaling it to 8 bits overflowed.
    /// A channel is now its mask's lowest run of ones alone. The input is replayed from
    /// scripts/fuzz-targets/regressions/image-bmp/ at every `scripts/fuzz` run.
    @Test func bitFieldMaskWithHoles() throws {
        // V3 header (56 bytes, masks inside), 2x1, 32-bit BI_BITFIELDS: red 0xF0F0F0F0.
        let dib = le32(56) + le32(2) + le32(1) + le16(1) + le16(32) + le32(3) + le32(8) + le32(0) + le32(0) + le32(0) + le32(0)
            + le32(0xF0F0_F0F0) + le32(0x0000_FF00) + le32(0x0000_00FF) + le32(0)
        let file = bmp(dib: dib, palette: [], pixels: [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x10])
        let out = try ImageRenderer().render(bytes: file, targetSize: PixelSize(width: 8, height: 8), contentMode: .fit)
        // Pixel 0xFFFFFFFF: red's run 0xF0 is full; pixel 0x10000000: red's run is empty.
        #expect(out.pixels == [255, 255, 255, 0, 0, 0])
    }

    /// Every BMP header version is indexed as a BMP with its size, the corpus's 30-byte one too.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed"), arguments: ["BMP2:", "BMP3:", "BMP:"])
    func bmpIsIndexed(_ coder: String) throws {
        let made = try MadeFormats("bmp-index")
        defer { made.remove() }
        for (w, h) in [(1, 1), (3, 2), (64, 48)] {
            let file = try made.make(["-size", "\(w)x\(h)", "xc:red", coder + "$OUT"], output: "i.bmp")
            let info = try ImageRenderer().probe(path: PathBytes(file))
            #expect(info.format == .bmp, "\(coder) \(w)x\(h)")
            #expect(info.storedSize == PixelSize(width: w, height: h), "\(coder) \(w)x\(h)")
            let out = try ImageRenderer().render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
            #expect(Array(out.pixels.prefix(3)) == [255, 0, 0], "\(coder) \(w)x\(h)")
        }
    }

    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }

    /// A 40-byte BITMAPINFOHEADER.
    func info(width: Int, height: Int, bits: Int, compression: Int, colors: Int) -> [UInt8] {
        le32(40) + le32(width) + le32(height) + le16(1) + le16(bits) + le32(compression) + le32(0) + le32(2835) + le32(2835)
            + le32(colors) + le32(0)
    }

    /// A BMP: file header, `dib`, palette, pixels.
    func bmp(dib: [UInt8], palette: [UInt8], pixels: [UInt8]) -> [UInt8] {
        let offset = 14 + dib.count + palette.count
        return Array("BM".utf8) + le32(offset + pixels.count) + le32(0) + le32(offset) + dib + palette + pixels
    }
}
