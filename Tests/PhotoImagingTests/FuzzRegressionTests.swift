import PhotoImaging
import PhotoTesting
import Testing

/// Inputs the `image` fuzz target (`scripts/fuzz --target image`) found, each kept with the
/// behaviour its fix gives.
@Suite struct FuzzRegressionTests {
    let renderer = ImageRenderer(pixelLimit: 4_000_000)
    let target = PixelSize(width: 160, height: 120)

    /// A PNG with `chunks` inserted between IHDR and the image data.
    static func png(inserting chunks: [UInt8]) throws -> (plain: [UInt8], spliced: [UInt8]) {
        let plain = try Fixtures.pattern(width: 9, height: 7).encodePNG().bytes
        let afterHeader = 8 + 12 + 13  // signature, IHDR
        return (plain, Array(plain[..<afterHeader]) + chunks + plain[afterHeader...])
    }

    /// Fuzzer finding (out-of-memory, malloc of 1.2 GB): a 269-byte PNG whose chunk after IHDR
    /// claims 1,229,278,788 bytes of iTXt. libpng 1.6.39 reads a text chunk whole into a buffer
    /// of its claimed length, and does not hold it to `png_set_chunk_malloc_max`, so it
    /// allocated 1.2 GB before finding the file truncated. The decoder now skips the ancillary
    /// chunks it has no use for unread (in small pieces); the file is still corrupt. The
    /// outcome is the same either way (Linux hands out the 1.2 GB lazily), so the allocation
    /// itself is checked where it can be seen: the input is kept in
    /// scripts/fuzz-targets/regressions/image/ and replayed under the fuzzer's 256 MB malloc
    /// limit at every `scripts/fuzz` run.
    @Test func pngChunkClaimingMoreThanTheFileIsCorrupt() throws {
        let header = [0x49, 0x45, 0x4E, 0x44] + Array("iTXt".utf8)  // length 0x49454E44
        let (_, file) = try Self.png(inserting: header + [UInt8](repeating: 0xFF, count: 64))
        for mode in ContentMode.allCases {
            let error = try #require(throws: ImageError.self) {
                try renderer.render(bytes: file, targetSize: target, contentMode: mode)
            }
            guard case .corrupt(let reason) = error else { Issue.record("\(error)"); continue }
            #expect(reason.contains("truncated"))
        }
    }

    /// The other side of that fix: skipped chunks (text, ICC, gamma, EXIF; large or damaged)
    /// change nothing in the pixels.
    @Test func pngAncillaryChunksAreSkippedWithoutChangingPixels() throws {
        let text = PNGFixture.chunk("tEXt", Array("Comment".utf8) + [0] + [UInt8](repeating: 0x61, count: 1 << 20))
        let iccp = PNGFixture.chunk("iCCP", Array("icc".utf8) + [0, 0] + [UInt8](repeating: 0x13, count: 300))  // not deflate
        let gamma = PNGFixture.chunk("gAMA", [0, 0, 0x27, 0x10])  // 0.1: would darken if applied
        let exif = PNGFixture.chunk("eXIf", [0x4D, 0x4D, 0, 0x2A])  // truncated TIFF
        let (plain, file) = try Self.png(inserting: text + iccp + gamma + exif)
        let size = PixelSize(width: 9, height: 7)
        let expected = try renderer.render(bytes: plain, targetSize: size, contentMode: .fit)
        let got = try renderer.render(bytes: file, targetSize: size, contentMode: .fit)
        #expect(got == expected)
    }
}
