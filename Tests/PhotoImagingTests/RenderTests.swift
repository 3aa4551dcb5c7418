import PhotoImaging
import PhotoModel
import PhotoTesting
import Testing

/// Rendering generated fixtures: orientation 1–8, fit/fill sizes, no upscaling, alpha, the
/// pixel limit, damaged input.
@Suite struct RenderTests {
    let renderer = ImageRenderer()

    /// A 128×96 pattern stored with each orientation, rendered at half size, equals the
    /// pattern turned as EXIF says (mean pixel difference under 6 of 255).
    @Test(arguments: Orientation.allCases)
    func appliesEXIFOrientation(_ o: Orientation) throws {
        let stored = Fixtures.pattern(width: 128, height: 96)
        let file = try Fixtures.jpeg(stored, orientation: o.rawValue)
        let displayedSize = o.displayed(stored.size)
        let out = try renderer.render(bytes: file, targetSize: PixelSize(width: displayedSize.width / 2, height: displayedSize.height / 2),
                                      contentMode: .fit)
        let expected = Fixtures.shrink(Fixtures.displayed(stored, o), by: 2)
        #expect(out.size == expected.size)
        let d = Fixtures.meanDifference(out, expected)
        #expect(d < 6, "orientation \(o.rawValue): mean difference \(d)")
        // And it differs clearly from every other orientation's expectation of the same size.
        for other in Orientation.allCases where other != o && other.swapsAxes == o.swapsAxes {
            let wrong = Fixtures.shrink(Fixtures.displayed(stored, other), by: 2)
            #expect(Fixtures.meanDifference(out, wrong) > 20, "orientation \(o.rawValue) looks like \(other.rawValue)")
        }
    }

    /// The hint overrides the file's orientation (the index already knows it).
    @Test func orientationHintWins() throws {
        let stored = Fixtures.pattern(width: 64, height: 48)
        let file = try Fixtures.jpeg(stored, orientation: 6)
        let out = try renderer.render(bytes: file, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit, orientation: .up)
        #expect(out.size == PixelSize(width: 64, height: 48))
    }

    struct SizeCase: Sendable, CustomStringConvertible {
        let image: (Int, Int), orientation: Int, target: (Int, Int), mode: ContentMode, output: (Int, Int)
        var description: String { "\(image) o\(orientation) -> \(target) \(mode)" }
    }

    static let sizeCases: [SizeCase] = [
        SizeCase(image: (300, 200), orientation: 1, target: (100, 100), mode: .fit, output: (100, 67)),
        SizeCase(image: (300, 200), orientation: 1, target: (100, 100), mode: .fill, output: (100, 100)),
        SizeCase(image: (200, 300), orientation: 1, target: (100, 100), mode: .fit, output: (67, 100)),
        SizeCase(image: (200, 300), orientation: 1, target: (120, 40), mode: .fill, output: (120, 40)),
        SizeCase(image: (240, 240), orientation: 1, target: (100, 50), mode: .fit, output: (50, 50)),
        SizeCase(image: (240, 240), orientation: 1, target: (100, 50), mode: .fill, output: (100, 50)),
        // Computed on the displayed dimensions: a landscape file turned by 6 is portrait.
        SizeCase(image: (300, 200), orientation: 6, target: (100, 100), mode: .fit, output: (67, 100)),
        SizeCase(image: (300, 200), orientation: 8, target: (50, 100), mode: .fill, output: (50, 100)),
        // Never upscaled.
        SizeCase(image: (300, 200), orientation: 1, target: (1000, 1000), mode: .fit, output: (300, 200)),
        SizeCase(image: (300, 200), orientation: 1, target: (1000, 1000), mode: .fill, output: (200, 200)),
        SizeCase(image: (300, 200), orientation: 6, target: (1000, 1000), mode: .fit, output: (200, 300)),
        // Exactly the image's size: a copy.
        SizeCase(image: (300, 200), orientation: 1, target: (300, 200), mode: .fill, output: (300, 200)),
    ]

    @Test(arguments: sizeCases)
    func fitAndFillSizes(_ c: SizeCase) throws {
        let file = try Fixtures.jpeg(Fixtures.pattern(width: c.image.0, height: c.image.1), orientation: c.orientation)
        let out = try renderer.render(bytes: file, targetSize: PixelSize(width: c.target.0, height: c.target.1), contentMode: c.mode)
        #expect(out.size == PixelSize(width: c.output.0, height: c.output.1))
        #expect(out.channels == 3)
    }

    /// Fill crops the centre: the quadrant boundary stays in the middle of the output.
    @Test func fillCropsTheCentre() throws {
        let file = try Fixtures.jpeg(Fixtures.pattern(width: 400, height: 200))
        let out = try renderer.render(bytes: file, targetSize: PixelSize(width: 100, height: 100), contentMode: .fill)
        #expect(out.pixel(x: 25, y: 75)[2] > 150)  // blue, bottom-left
        #expect(out.pixel(x: 75, y: 75)[0] > 200 && out.pixel(x: 75, y: 75)[2] > 200)  // white, bottom-right
    }

    @Test func pngKeepsAlpha() throws {
        let source = Fixtures.pattern(width: 120, height: 80, alpha: true)
        let png = try source.encodePNG()
        #expect(png.fileExtension == "png")
        let out = try renderer.render(bytes: png.bytes, targetSize: PixelSize(width: 60, height: 60), contentMode: .fit)
        #expect(out.size == PixelSize(width: 60, height: 40) && out.channels == 4)
        #expect(out.pixel(x: 5, y: 30)[3] == 0)
        #expect(out.pixel(x: 55, y: 30)[3] == 255)
        #expect(out.pixel(x: 55, y: 5) == [30, 200, 40, 255])
        // The cache format follows: PNG with transparency, JPEG without.
        #expect(try out.encoded().format == .png)
        let opaque = try renderer.render(bytes: try Fixtures.pattern(width: 40, height: 40).encodePNG().bytes,
                                         targetSize: PixelSize(width: 20, height: 20), contentMode: .fit)
        #expect(opaque.channels == 3)
        #expect(try opaque.encoded().format == .jpeg)
    }

    @Test func pngAtFullSizeIsExact() throws {
        let source = Fixtures.pattern(width: 33, height: 17, alpha: true)
        let out = try renderer.render(bytes: try source.encodePNG().bytes, targetSize: PixelSize(width: 100, height: 100), contentMode: .fit)
        // Identical, except that fully transparent pixels have no colour (premultiplied averaging).
        var expected = source.pixels
        for i in stride(from: 0, to: expected.count, by: 4) where expected[i + 3] == 0 { expected[i] = 0; expected[i + 1] = 0; expected[i + 2] = 0 }
        #expect(out.size == source.size && out.pixels == expected)
    }

    @Test func refusesImagesOverThePixelLimit() throws {
        let file = try Fixtures.jpeg(Fixtures.pattern(width: 300, height: 200))
        let small = ImageRenderer(pixelLimit: 10_000)
        #expect(throws: ImageError.tooLarge(width: 300, height: 200, limit: 10_000)) {
            try small.render(bytes: file, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        }
        let png = try Fixtures.pattern(width: 300, height: 200).encodePNG().bytes
        #expect(throws: ImageError.tooLarge(width: 300, height: 200, limit: 10_000)) {
            try small.render(bytes: png, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        }
        // A header claiming 60000×60000 (3.6 gigapixels) with no image behind it.
        let claim = JPEGFixture.make(width: 60000, height: 60000)
        #expect(throws: ImageError.tooLarge(width: 60000, height: 60000, limit: 100_000_000)) {
            try renderer.render(bytes: claim, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        }
        #expect(ImageError.tooLarge(width: 60000, height: 60000, limit: 100_000_000).description.contains("over the limit"))
    }

    /// A header claiming 9000×9000 under the limit, with 256 bytes of data: refused before
    /// any allocation for the claimed size.
    @Test func refusesSizesTheDataCannotHold() throws {
        let claim = JPEGFixture.make(width: 9000, height: 9000)
        let error = try #require(throws: ImageError.self) {
            try renderer.render(bytes: claim, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        }
        guard case .corrupt(let reason) = error else { Issue.record("\(error)"); return }
        #expect(reason.contains("too short"))
    }

    @Test func truncatedAndGarbageInputAreErrors() throws {
        let jpeg = try Fixtures.jpeg(Fixtures.pattern(width: 200, height: 150))
        let png = try Fixtures.pattern(width: 200, height: 150).encodePNG().bytes
        let target = PixelSize(width: 64, height: 64)
        for cut in [2, 3, 20, jpeg.count / 3, jpeg.count / 2, jpeg.count - 3] {
            #expect(throws: ImageError.self, "JPEG cut at \(cut)") {
                try renderer.render(bytes: Array(jpeg[..<cut]), targetSize: target, contentMode: .fit)
            }
        }
        for cut in [8, 30, png.count / 2, png.count - 13] {
            #expect(throws: ImageError.self, "PNG cut at \(cut)") {
                try renderer.render(bytes: Array(png[..<cut]), targetSize: target, contentMode: .fit)
            }
        }
        #expect(throws: ImageError.corrupt("the file is empty (0 bytes)")) {
            try renderer.render(bytes: [], targetSize: target, contentMode: .fit)
        }
        let garbage = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) }
        let error = try #require(throws: ImageError.self) { try renderer.render(bytes: garbage, targetSize: target, contentMode: .fit) }
        #expect(error.code == "unsupported" || error.code == "corrupt")
        #expect(throws: ImageError.invalidRequest("the target size 0x10 is not between 1x1 and 65536x65536")) {
            try renderer.render(bytes: jpeg, targetSize: PixelSize(width: 0, height: 10), contentMode: .fit)
        }
    }

    @Test func videosAreUnsupported() throws {
        let mp4 = MP4Fixture().bytes()
        #expect(throws: ImageError.unsupported("video")) {
            try renderer.render(bytes: mp4, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
        }
    }

    /// Random byte flips and cuts of valid JPEG and PNG files: an image or an error, never a
    /// crash (a quick, deterministic stand-in for the fuzzer).
    @Test func mutatedFilesNeverCrash() throws {
        var rng = SplitMix64(seed: 7)
        let seeds = [try Fixtures.jpeg(Fixtures.pattern(width: 96, height: 64), orientation: 6),
                     try Fixtures.pattern(width: 64, height: 48, alpha: true).encodePNG().bytes]
        var images = 0, errors = 0
        for i in 0..<400 {
            var bytes = seeds[i % seeds.count]
            let flips = 1 + Int(rng.next() % 8)
            for _ in 0..<flips {
                let at = Int(rng.next() % UInt64(bytes.count))
                bytes[at] = UInt8(truncatingIfNeeded: rng.next())
            }
            if rng.next() % 4 == 0 { bytes = Array(bytes[..<Int(rng.next() % UInt64(bytes.count))]) }
            do {
                let out = try renderer.render(bytes: bytes, targetSize: PixelSize(width: 32, height: 32), contentMode: i % 2 == 0 ? .fit : .fill)
                #expect(out.size.width <= 32 && out.size.height <= 32 && out.size.width > 0)
                images += 1
            } catch {
                errors += 1
            }
        }
        #expect(images + errors == 400)
    }
}
