import Foundation
import PhotoImaging
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// RAW through LibRaw, on DNGs made here and on a real camera's CR2 (the one RAW Debian packages,
/// in rawtran-doc): the embedded preview when it covers the request, else the sensor data
/// developed — at half size when that is enough — in the RAW's orientation; damaged and slow
/// files fail with a reason.
@Suite struct RAWRenderTests {
    /// A linear DNG (PhotoTesting's `DNGFixture`) of `sensor`, with a JPEG of `preview` as its
    /// embedded preview when given.
    static func dng(preview: RenderedImage?, sensor: RenderedImage, orientation: Int) throws -> [UInt8] {
        let jpeg = try preview.map { DNGFixture.Preview(jpeg: try $0.encodeJPEG(quality: 95).bytes, width: $0.size.width, height: $0.size.height) }
        return DNGFixture(width: sensor.size.width, height: sensor.size.height, rgb: sensor.pixels, orientation: orientation, preview: jpeg).bytes()
    }

    static let pattern = Fixtures.pattern(width: 128, height: 96)
    /// The sensor data differs from the preview (turned 180°), so a render tells which was drawn.
    static let sensor = Fixtures.displayed(pattern, .down)

    /// A preview that covers the request is drawn (not the sensor data), turned by the RAW's
    /// orientation; the index's orientation, when given, wins.
    @Test(arguments: [1, 3, 6, 8])
    func drawsThePreviewWhenItCovers(_ orientation: Int) throws {
        let file = try Self.dng(preview: Fixtures.shrink(Self.pattern, by: 2), sensor: Self.sensor, orientation: orientation)
        let o = try #require(Orientation(rawValue: orientation))
        let dir = try TemporaryDirectory("dng")
        defer { dir.remove() }
        let path = try dir.write("p.dng", file)
        let info = try ImageRenderer().probe(path: path)
        #expect(info.format == .dng)
        #expect(info.orientation == o)
        let out = try ImageRenderer().render(path: path, targetSize: PixelSize(width: 32, height: 32), contentMode: .fit)
        let expected = Fixtures.displayed(Fixtures.shrink(Self.pattern, by: 4), o)
        #expect(out.size == expected.size)
        guard out.size == expected.size else { return }
        #expect(Fixtures.meanDifference(out, expected) < 8, "orientation \(orientation)")
        #expect(Fixtures.meanDifference(out, Fixtures.displayed(Fixtures.shrink(Self.sensor, by: 4), o)) > 40)
        let hinted = try ImageRenderer().render(path: path, targetSize: PixelSize(width: 32, height: 32), contentMode: .fit, orientation: .up)
        #expect(hinted.size == PixelSize(width: 32, height: 24))
    }

    /// A request the preview does not cover develops the sensor data: at full size for a full
    /// size request, at half size for half; the colours of the sensor's quadrants come through.
    @Test(arguments: [(1, 256, PixelSize(width: 128, height: 96)), (6, 256, PixelSize(width: 96, height: 128)),
                      (1, 64, PixelSize(width: 64, height: 48)), (8, 64, PixelSize(width: 48, height: 64))])
    func developsTheSensorData(_ orientation: Int, _ side: Int, _ size: PixelSize) throws {
        // A preview far too small for either request.
        let file = try Self.dng(preview: Fixtures.shrink(Self.pattern, by: 8), sensor: Self.sensor, orientation: orientation)
        let o = try #require(Orientation(rawValue: orientation))
        let out = try ImageRenderer().render(bytes: file, targetSize: PixelSize(width: side, height: side), contentMode: .fit)
        #expect(out.size == size)
        guard out.size == size else { return }
        let expected = Fixtures.displayed(Fixtures.shrink(Self.sensor, by: 128 / (o.swapsAxes ? size.height : size.width)), o)
        // The quadrants' dominant colours (the sensor's red, green, blue, white), sampled at their centres.
        for (fx, fy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
            let x = Int(Double(size.width) * fx), y = Int(Double(size.height) * fy)
            let i = (y * size.width + x) * 3
            let ours = Array(out.pixels[i..<(i + 3)]), theirs = Array(expected.pixels[i..<(i + 3)])
            if theirs.allSatisfy({ $0 > 200 }) {
                #expect(ours.allSatisfy { $0 > 150 }, "white at (\(x), \(y)): \(ours)")
            } else {
                #expect(ours.firstIndex(of: ours.max()!) == theirs.firstIndex(of: theirs.max()!), "at (\(x), \(y)): \(ours) vs \(theirs)")
            }
        }
    }

    /// The preview alone (the daemon's stand-in while a RAW is developed): at most 1024×1024, in
    /// the RAW's orientation; nil without a preview, or for a file that is not a RAW.
    @Test func previewAsAStandIn() throws {
        let file = try Self.dng(preview: Fixtures.shrink(Self.pattern, by: 2), sensor: Self.sensor, orientation: 6)
        let preview = try #require(try RAWPreview.render(bytes: file))
        #expect(preview.size == PixelSize(width: 48, height: 64))
        #expect(Fixtures.meanDifference(preview, Fixtures.displayed(Fixtures.shrink(Self.pattern, by: 2), .right)) < 8)
        #expect(try RAWPreview.render(bytes: file, orientation: .up)?.size == PixelSize(width: 64, height: 48))
        #expect(try RAWPreview.render(bytes: try Self.dng(preview: nil, sensor: Self.sensor, orientation: 1)) == nil)
        #expect(try RAWPreview.render(bytes: try Fixtures.jpeg(Self.pattern)) == nil)
    }

    /// A DNG without any preview is developed too.
    @Test func developsWithoutAPreview() throws {
        let file = try Self.dng(preview: nil, sensor: Self.sensor, orientation: 1)
        let out = try ImageRenderer().render(bytes: file, targetSize: PixelSize(width: 32, height: 32), contentMode: .fill)
        #expect(out.size == PixelSize(width: 32, height: 32))
    }

    /// A Canon EOS 30D's CR2 (3504×2336, a 1728×1152 preview JPEG in IFD0): a small request
    /// draws the camera's preview, a larger one develops the sensor data at half size; both show
    /// the same landscape (blue sky above dark forest), so neither is the other's garbage.
    @Test(.enabled(if: TestPaths.cameraCR2 != nil, "needs the EOS 30D CR2 of Debian's rawtran-doc: scripts/install-deps --tests"))
    func realCanonCR2() throws {
        let path = PathBytes(try #require(TestPaths.cameraCR2).path)
        let info = try ImageRenderer().probe(path: path)
        #expect(info.format == .cr2)
        let preview = try ImageRenderer().render(path: path, targetSize: PixelSize(width: 432, height: 432), contentMode: .fit)
        #expect(preview.size == PixelSize(width: 432, height: 288))
        let developed = try ImageRenderer().render(path: path, targetSize: PixelSize(width: 1752, height: 1752), contentMode: .fit)
        #expect(developed.size == PixelSize(width: 1752, height: 1168))
        guard preview.size == PixelSize(width: 432, height: 288), developed.size == PixelSize(width: 1752, height: 1168) else { return }
        // 1752 / 4 = 438 columns: compare the 432 the preview has.
        let small = Fixtures.shrink(developed, by: 4)
        let cropped = RenderedImage(size: preview.size, channels: 3, pixels: (0..<288).flatMap { y in
            small.pixels[(y * small.size.width * 3)..<(y * small.size.width * 3 + 432 * 3)]
        })
        #expect(Fixtures.meanDifference(preview, cropped) < 40)
        for image in [preview, cropped] {
            func pixel(_ fx: Double, _ fy: Double) -> (r: Int, g: Int, b: Int) {
                let i = (Int(Double(image.size.height) * fy) * image.size.width + Int(Double(image.size.width) * fx)) * 3
                return (Int(image.pixels[i]), Int(image.pixels[i + 1]), Int(image.pixels[i + 2]))
            }
            let sky = pixel(0.7, 0.05), forest = pixel(0.5, 0.8)
            #expect(sky.b > sky.r && sky.b > 120, "the sky is blue: \(sky)")
            #expect(forest.r + forest.g + forest.b < sky.r + sky.g + sky.b, "the forest is darker than the sky")
        }
    }

    /// Damaged RAWs fail with a reason (or draw what they hold), never crash; a slow develop
    /// stops at the CPU limit.
    @Test func damagedAndSlowFiles() throws {
        let renderer = ImageRenderer()
        let target = PixelSize(width: 256, height: 256)
        let file = try Self.dng(preview: nil, sensor: Self.sensor, orientation: 1)
        // The sensor data cut in half: LibRaw's error, or an image; never a crash.
        _ = try? renderer.render(bytes: Array(file.prefix(file.count / 2)), targetSize: target, contentMode: .fit)
        // Every 13th byte flipped past the header.
        var garbled = file
        for i in stride(from: 64, to: garbled.count, by: 13) { garbled[i] ^= 0xA5 }
        _ = try? renderer.render(bytes: garbled, targetSize: target, contentMode: .fit)
        // A DNG whose sensor claims 100000x100000: refused (LibRaw knows no such camera) before
        // anything is allocated for it.
        let claimed = TIFFBuilder.build(ifd0: [.byte(50706, [1, 4, 0, 0]), .ascii(271, "photod"), .ascii(272, "Test DNG"), .subIFD(330)],
                                        sub: [.long(254, [0]), .long(256, [100_000]), .long(257, [100_000]), .short(258, [16, 16, 16]),
                                              .short(259, [1]), .short(262, [34892]), .blob(273, 0), .short(277, [3]),
                                              .long(278, [100_000]), .long(279, [1 << 30])],
                                        blobs: [[UInt8](repeating: 0, count: 64)])
        #expect(throws: ImageError.self) { try renderer.render(bytes: claimed, targetSize: target, contentMode: .fit) }
        // Over the renderer's pixel limit: refused before unpacking.
        #expect(throws: ImageError.tooLarge(width: 128, height: 96, limit: 10_000)) {
            try ImageRenderer(pixelLimit: 10_000).render(bytes: file, targetSize: target, contentMode: .fit)
        }
        // Not a RAW LibRaw knows: undecodable, with LibRaw's reason.
        let unknown = TIFFBuilder.build(ifd0: [.byte(50706, [1, 4, 0, 0]), .long(256, [8]), .long(257, [8])], sub: [], blobs: [])
        do {
            _ = try renderer.render(bytes: unknown, targetSize: target, contentMode: .fit)
            Issue.record("a DNG without image data rendered")
        } catch {
            #expect(error.code == "undecodable" || error.code == "corrupt", "\(error)")
            #expect(error.description.contains("RAW: "), "\(error)")
        }
        // A large sensor with a 1 ms CPU limit: stopped.
        let big = try Self.dng(preview: nil, sensor: Fixtures.pattern(width: 1024, height: 768), orientation: 1)
        do {
            _ = try ImageRenderer(cpuLimitMilliseconds: 1).render(bytes: big, targetSize: PixelSize(width: 1024, height: 1024), contentMode: .fit)
            Issue.record("a 1024x768 develop finished within 1 ms of CPU")
        } catch {
            #expect(error.code == "timeout", "\(error)")
        }
    }
}
