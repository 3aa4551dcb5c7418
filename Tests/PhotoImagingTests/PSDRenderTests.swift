import Foundation
import PhotoImaging
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Photoshop documents: the merged image renders as ImageMagick decodes it (8- and 16-bit,
/// grey, indexed, RGB, CMYK, raw and RLE, PSD and PSB); what is not rendered says why.
@Suite struct PSDRenderTests {
    static let hasConvert = MadeFormats.convert != nil

    static let variants: [FormatVariant] = [
        FormatVariant(name: "PSD 8-bit RGB RLE", options: ["-depth", "8", "-compress", "RLE"], output: "PSD:$OUT"),
        FormatVariant(name: "PSD 8-bit RGB raw", options: ["-depth", "8", "-compress", "None"], output: "PSD:$OUT"),
        FormatVariant(name: "PSD 16-bit RGB raw", options: ["-depth", "16", "-compress", "None"], output: "PSD:$OUT", tolerance: 1),
        FormatVariant(name: "PSD 16-bit RGB RLE", options: ["-depth", "16", "-compress", "RLE"], output: "PSD:$OUT", tolerance: 1),
        FormatVariant(name: "PSD grey RLE", options: ["-colorspace", "Gray", "-depth", "8", "-compress", "RLE"], output: "PSD:$OUT"),
        FormatVariant(name: "PSD CMYK RLE", options: ["-colorspace", "CMYK", "-depth", "8", "-compress", "RLE"], output: "PSD:$OUT",
                      tolerance: 2),
        FormatVariant(name: "PSB 8-bit RGB RLE", options: ["-depth", "8", "-compress", "RLE"], output: "PSB:$OUT"),
    ]

    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed (scripts/install-deps --tests)"), arguments: variants)
    func rendersAsImageMagickDecodes(_ variant: FormatVariant) throws {
        let made = try MadeFormats("psd")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48, alpha: false))
        let file = try made.make([source] + variant.options + [variant.output], output: "v")
        let reference = try made.reference(file)
        let renderer = ImageRenderer()
        let info = try renderer.probe(path: PathBytes(file))
        #expect(info.format == .psd && info.storedSize == PixelSize(width: 64, height: 48))
        let full = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(full.size == PixelSize(width: 64, height: 48) && !full.hasAlpha)
        #expect(Fixtures.meanDifference(full, reference) <= variant.tolerance, "\(variant): \(Fixtures.meanDifference(full, reference))")
        let half = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 32, height: 32), contentMode: .fit)
        #expect(half.size == PixelSize(width: 32, height: 24))
        #expect(Fixtures.meanDifference(half, Fixtures.shrink(reference, by: 2)) <= variant.tolerance + 1)
    }

    /// A PSD built here: header, colour mode data, no resources, no layers, the merged image.
    static func psd(width: Int, height: Int, channels: Int = 3, depth: Int = 8, mode: Int = 3, modeData: [UInt8] = [],
                    compression: Int = 0, image: [UInt8]) -> [UInt8] {
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(v >> (8 * (n - 1 - $0)) & 0xFF) } }
        return Array("8BPS".utf8) + be(1, 2) + [0, 0, 0, 0, 0, 0] + be(channels, 2) + be(height, 4) + be(width, 4) + be(depth, 2)
            + be(mode, 2) + be(modeData.count, 4) + modeData + be(0, 4) + be(0, 4) + be(compression, 2) + image
    }

    @Test func packBitsRowsOfEveryChannel() throws {
        // 4x2 RGB, RLE: red rows are a run of 4 x 0xFF; green a literal; blue a run of 0.
        let red: [UInt8] = [0xFD, 0xFF], green: [UInt8] = [3, 0, 85, 170, 255], blue: [UInt8] = [0xFD, 0]
        let counts = [red, red, green, green, blue, blue].flatMap { [UInt8(0), UInt8($0.count)] }
        let file = Self.psd(width: 4, height: 2, compression: 1, image: counts + red + red + green + green + blue + blue)
        let out = try ImageRenderer().render(bytes: file, targetSize: PixelSize(width: 4, height: 2), contentMode: .fit)
        #expect(out.pixels == [255, 0, 0, 255, 85, 0, 255, 170, 0, 255, 255, 0, 255, 0, 0, 255, 85, 0, 255, 170, 0, 255, 255, 0])
    }

    /// ImageMagick 6.9 writes indexed PSDs it cannot read back: this one is built here.
    @Test func indexedColoursComeFromTheColourModeData() throws {
        var table = [UInt8](repeating: 0, count: 768)
        table[1] = 10; table[256 + 1] = 20; table[512 + 1] = 30  // entry 1
        table[255] = 200; table[256 + 255] = 100; table[512 + 255] = 50  // entry 255
        let file = Self.psd(width: 2, height: 1, channels: 1, mode: 2, modeData: table, image: [1, 255])
        let out = try ImageRenderer().render(bytes: file, targetSize: PixelSize(width: 2, height: 1), contentMode: .fit)
        #expect(out.pixels == [10, 20, 30, 200, 100, 50])
    }

    @Test func cmykIsStoredInvertedAndExtraChannelsAreLeftOut() throws {
        // 1x1 CMYK with an alpha channel: no cyan (255), full magenta (0), no yellow, no black.
        let file = Self.psd(width: 1, height: 1, channels: 5, mode: 4, image: [255, 0, 255, 255, 0])
        let out = try ImageRenderer().render(bytes: file, targetSize: PixelSize(width: 1, height: 1), contentMode: .fit)
        #expect(out.pixels == [255, 0, 255] && !out.hasAlpha)
    }

    @Test func damagedAndUnrenderedDocumentsFailWithAReason() throws {
        let renderer = ImageRenderer()
        let target = PixelSize(width: 8, height: 8)
        func render(_ bytes: [UInt8]) throws { _ = try renderer.render(bytes: bytes, targetSize: target, contentMode: .fit) }
        #expect(throws: ImageError.corrupt("PSD: the merged image is cut short (3 bytes of 30000)")) {
            try render(Self.psd(width: 100, height: 100, image: [1, 2, 3]))
        }
        #expect(throws: ImageError.tooLarge(width: 30_000, height: 30_000, limit: renderer.pixelLimit)) {
            try render(Self.psd(width: 30_000, height: 30_000, image: [1, 2, 3]))
        }
        #expect(throws: ImageError.corrupt("PSD: row 0 of channel 0 does not decode to 4 bytes")) {
            try render(Self.psd(width: 4, height: 1, compression: 1, image: [0, 2, 0, 2, 0, 2] + [0xFB, 1, 0xFD, 1, 0xFD, 1]))
        }
        #expect(throws: ImageError.corrupt("PSD: the merged image is cut short (its rows need 600 bytes)")) {
            try render(Self.psd(width: 4, height: 1, compression: 1, image: [0, 200, 0, 200, 0, 200, 1]))
        }
        #expect(throws: ImageError.undecodable("PSD: a ZIP-compressed merged image is not rendered")) {
            try render(Self.psd(width: 4, height: 1, compression: 3, image: [0x78, 0x9C]))
        }
        #expect(throws: ImageError.undecodable("PSD: Lab documents are not rendered")) {
            try render(Self.psd(width: 1, height: 1, mode: 9, image: [0, 0, 0]))
        }
        #expect(throws: ImageError.undecodable("PSD: 32-bit samples are not rendered")) {
            try render(Self.psd(width: 1, height: 1, depth: 32, image: [UInt8](repeating: 0, count: 12)))
        }
        #expect(throws: ImageError.corrupt("PSD: an indexed document without its colour table")) {
            try render(Self.psd(width: 1, height: 1, channels: 1, mode: 2, image: [0]))
        }
        // No merged image at all (the file ends after the layers).
        #expect(throws: ImageError.corrupt("PSD: the file has no merged image (it ends after the layers)")) {
            try render(Array(Self.psd(width: 1, height: 1, image: []).dropLast(2)))
        }
    }
}
