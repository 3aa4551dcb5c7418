import Foundation
import PhotoImaging
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// JPEG 2000 (OpenJPEG) and JPEG XL (libjxl) render as the reference decoders show them
/// (ImageMagick for JPEG 2000, libjxl's own djxl for JPEG XL); damaged files fail with a reason.
@Suite struct JPEG2000JXLRenderTests {
    static let hasConvert = MadeFormats.convert != nil
    static let cjxl = Reference.tool("cjxl"), djxl = Reference.tool("djxl")

    static let jpeg2000: [FormatVariant] = [
        FormatVariant(name: "JP2 lossless", options: ["-define", "jp2:quality=0"], output: "JP2:$OUT"),
        FormatVariant(name: "JP2 lossy", options: ["-quality", "40"], output: "JP2:$OUT", tolerance: 2),
        FormatVariant(name: "J2K codestream", options: [], output: "J2K:$OUT"),
        FormatVariant(name: "JP2 grey", options: ["-colorspace", "Gray"], output: "JP2:$OUT"),
        FormatVariant(name: "JP2 16-bit", options: ["-depth", "16"], output: "JP2:$OUT"),
        FormatVariant(name: "JP2 alpha", options: ["-alpha", "on"], output: "JP2:$OUT", alpha: true),
    ]

    /// Each variant of a 256×192 pattern equals ImageMagick's decode at full size, and at a
    /// quarter (decoded two resolution levels down, whose wavelet low-pass differs from a box
    /// filter at the pattern's edges) is close to that decode shrunk.
    @Test(.enabled(if: hasConvert, "ImageMagick's convert is not installed (scripts/install-deps --tests)"), arguments: jpeg2000)
    func jpeg2000RendersAsImageMagickDecodes(_ variant: FormatVariant) throws {
        let made = try MadeFormats("jp2")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 256, height: 192, alpha: variant.alpha))
        let file = try made.make([source] + variant.options + [variant.output], output: "v")
        let reference = try made.reference(file, alpha: variant.alpha)
        let renderer = ImageRenderer()
        #expect(try renderer.probe(path: PathBytes(file)).format == .jpeg2000)
        let full = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 256, height: 192), contentMode: .fit)
        #expect(full.size == PixelSize(width: 256, height: 192))
        #expect(full.hasAlpha == variant.alpha)
        if !variant.alpha { #expect(Fixtures.meanDifference(full, reference) <= variant.tolerance, "\(Fixtures.meanDifference(full, reference))") }
        let quarter = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        #expect(quarter.size == PixelSize(width: 64, height: 48))
        if !variant.alpha {
            let d = Fixtures.meanDifference(quarter, Fixtures.shrink(reference, by: 4))
            #expect(d <= variant.tolerance + 4, "\(variant) at a quarter: \(d)")
        }
    }

    /// JPEG XL, lossless (exactly the pattern), lossy (as djxl decodes it) and with alpha.
    @Test(.enabled(if: cjxl != nil && djxl != nil && hasConvert, "cjxl/djxl (libjxl-tools) or convert is not installed"),
          arguments: [("lossless", ["-d", "0"], false), ("lossy", ["-d", "1"], false), ("alpha", ["-d", "0"], true)])
    func jxlRendersAsDjxlDecodes(_ name: String, _ options: [String], _ alpha: Bool) throws {
        let made = try MadeFormats("jxl")
        defer { made.remove() }
        let pattern = Fixtures.pattern(width: 64, height: 48, alpha: alpha)
        let png = try made.make([try made.source(pattern), "$OUT"], output: "p.png")
        let file = made.dir("v.jxl").string
        #expect(try Reference.run(try #require(Self.cjxl), [png, file] + options) == 0)
        let decoded = made.dir("d.png").string
        #expect(try Reference.run(try #require(Self.djxl), [file, decoded]) == 0)
        let reference = try made.reference(decoded, alpha: alpha)
        let renderer = ImageRenderer()
        #expect(try renderer.probe(path: PathBytes(file)).format == .jpegXL)
        let out = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 64, height: 48), contentMode: .fit)
        #expect(out.size == PixelSize(width: 64, height: 48))
        #expect(out.hasAlpha == alpha)
        #expect(Fixtures.meanDifference(out, reference) <= 1, "\(name): \(Fixtures.meanDifference(out, reference))")
        if name == "lossless" { #expect(Fixtures.meanDifference(out, pattern) == 0) }
        let half = try renderer.render(path: PathBytes(file), targetSize: PixelSize(width: 32, height: 32), contentMode: .fit)
        #expect(half.size == PixelSize(width: 32, height: 24))
    }

    /// Damaged files fail with a reason; a huge claimed size is refused before decoding.
    /// A 9×7 JP2 the fuzzer found (2026-12-04) whose codestream refuses every resolution factor: OpenJPEG
    /// 2.5.0 keeps a refused factor, so a small target read out of bounds inside the library (SEGV).
    /// Every target size renders it or fails with a reason.
    /// A codestream header of a few bytes naming 50,974 tiles (a fuzzer's find): OpenJPEG would
    /// allocate ~290 MB of tile state while reading it; it is refused with a reason first.
    @Test func tooManyTilesIsRefusedBeforeOpenJPEGReadsIt() throws {
        var header: [UInt8] = [0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x32, 0x00, 0x00]
        for v: UInt32 in [0x0007_0009, 7, 0, 0, 9, 7, 0, 0] { header += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        header += [0x00, 0x04, 0x0F, 0x01, 0x01, 0x0F, 0x01, 0x01, 0x0F, 0x01, 0x01, 0x0F, 0x01, 0x01, 0xFF, 0xD9]
        let renderer = ImageRenderer()
        #expect {
            try renderer.render(bytes: header, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        } throws: { error in
            "\(error)".contains("50974 tiles")
        }
    }

    @Test func refusedResolutionFactorsDoNotCrash() throws {
        let bytes = try #require(Data(base64Encoded: Self.refusedFactors.joined()))
        let renderer = ImageRenderer()
        for target in [PixelSize(width: 1, height: 1), PixelSize(width: 3, height: 200), PixelSize(width: 9, height: 7)] {
            if let image = try? renderer.render(bytes: [UInt8](bytes), targetSize: target, contentMode: .fit) {
                #expect(image.size.width <= target.width && image.size.height <= target.height)
            }
        }
    }

    static let refusedFactors = [
        "AAAADGpQICANCocKAAAAFGZ0eXBqcDIgAAAAAGpwMiAAAABPanAyaAAAABZpaGRyAAAABwAAAAkABA8HAAAAAAAPY29scgEAAAAA",
        "ABAAAAAiY2RlZgAEAAAAAAABAAEAAAACAAIAAAADAAMAAQAAAAACDmpwMmP/T/9RADIAAAAAAAkAAAAHAAAAAAAAAAAAAAAJAAAA",
        "BwAAAAAAAAAAAAQPAQEPAQEPAQEPAQH/UgAMAAAAAQAABAQAAf9cAApAgIiIkIiIkP9kACUAAUNyZWF0ZWQgYnkgT3BlbkpQRUcg",
        "dmVyc2lvbiAyLjUuMP+QAAoAAAAAAY0AAf+T3/iQcAS/+GpRi8kaRN9EZWZhdWx0SQj2o7DLXGP0+9GKVBmlj9/4kHAHbfkbjxtR",
        "ZjcO2JjCz8/8MAwB2FfB/0ACI/8GB0D/YF0ADADoLPwek5UL218bjlSR45cG3Ilf3wlpDiOKlWE7w/8DBE/8SDof+GBICxFkyd4v",
        "tzcQkSBBnw5wLBoYSMJPfwvxVpV2e0hBj8H/QAIn/iQbB/4MEAwAFv2qVOu/D6nRKiAw+wNGZId+ugsRkAxWqYJPgMP/AwjD/wML",
        "QP9gAWAPSWj8D3WODd3FCqKo6eApgA+c7/e1r43CAnODdKSj4WbEeMpTo38HNp6B82WJ4uEC0cP/AwnH/hgtB/4MFguQVx0U4TKu",
        "xjWc+a+8rIGYv5EWlvitJwzD5+xqOEmgHTv0wgIVL+6fAuTNIW1SPuxy97/DgwMKQ/8DCkD/YAGACeP7/Cb8qv9+eIi9KSN0GY+V",
        "0p8TDk0VyP8EgK9X63rrmijPcynrew5Gg+NJxlOPodcWf4D/2Q==",
    ]

    @Test(.enabled(if: hasConvert && cjxl != nil, "convert or cjxl is not installed"))
    func damagedFilesFailWithAReason() throws {
        let made = try MadeFormats("jp2-bad")
        defer { made.remove() }
        let source = try made.source(Fixtures.pattern(width: 64, height: 48))
        let renderer = ImageRenderer()
        let target = PixelSize(width: 32, height: 32)
        for (coder, name) in [("JP2:", "a.jp2"), ("J2K:", "a.j2k")] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try made.make([source, coder + "$OUT"], output: name))))
            // Cut at every 7th length: an error or an image, never a crash.
            for n in stride(from: 4, to: bytes.count, by: 7) {
                _ = try? renderer.render(bytes: Array(bytes.prefix(n)), targetSize: target, contentMode: .fit)
            }
            do {
                _ = try renderer.render(bytes: Array(bytes.prefix(bytes.count / 2)), targetSize: target, contentMode: .fit)
            } catch {
                #expect(error.code == "corrupt", "\(error)")
            }
        }
        // A J2K SIZ claiming 100000 x 100000 in one tile: refused by the pixel limit.
        let j2k = [UInt8](try Data(contentsOf: URL(fileURLWithPath: made.dir("a.j2k").string)))
        var huge = j2k
        // SIZ follows SOC: FF4F FF51 Lsiz(2) Rsiz(2) Xsiz(4) Ysiz(4) XOsiz(4) YOsiz(4) XTsiz(4) YTsiz(4).
        for at in [8, 12, 24, 28] { for k in 0..<4 { huge[at + k] = UInt8(100_000 >> (8 * (3 - k)) & 0xFF) } }
        #expect(throws: ImageError.tooLarge(width: 100_000, height: 100_000, limit: renderer.pixelLimit)) {
            try renderer.render(bytes: huge, targetSize: target, contentMode: .fit)
        }
        let png = try made.make([source, "$OUT"], output: "p.png")
        let jxl = made.dir("a.jxl").string
        #expect(try Reference.run(try #require(Self.cjxl), [png, jxl, "-d", "1"]) == 0)
        let jxlBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: jxl)))
        for n in stride(from: 2, to: jxlBytes.count, by: 3) {
            do {
                _ = try renderer.render(bytes: Array(jxlBytes.prefix(n)), targetSize: target, contentMode: .fit)
            } catch {
                #expect(["corrupt", "unsupported"].contains(error.code), "\(n) bytes: \(error)")
            }
        }
    }
}
