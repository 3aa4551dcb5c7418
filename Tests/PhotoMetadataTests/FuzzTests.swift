import Foundation
import PhotoMetadata
import PhotoTesting
import Testing

/// Deterministic mutation fuzzing: thousands of damaged variants of well-formed files (byte
/// flips, lying sizes, truncations) must each yield a result or an error, never a trap, a
/// hang or a huge read. Runs in the debug build, where arithmetic overflow traps.
@Suite struct FuzzTests {
    typealias Generator = SplitMix64

    struct Seed: Sendable, CustomStringConvertible {
        let name: String
        let bytes: [UInt8]
        var description: String { name }
    }

    static let seeds: [Seed] = {
        let exif = ExifTests.full
        var list = [
            Seed(name: "jpeg", bytes: JPEGFixture(width: 64, height: 48, exif: exif, xmp: XMPFixture.packet(createDate: "2020-01-01T00:00:00", rating: 2, keywords: ["a"]), scanBytes: 32).bytes()),
            Seed(name: "jpeg big-endian", bytes: JPEGFixture(width: 64, height: 48, exif: { var e = exif; e.byteOrder = .big; return e }(), scanBytes: 16).bytes()),
            Seed(name: "png", bytes: PNGFixture(width: 8, height: 8, exif: exif, exifAfterImageData: true, xmp: XMPFixture.packet(rating: 1)).bytes()),
            Seed(name: "tiff", bytes: exif.tiff.bytes()),
            Seed(name: "heic", bytes: Build.heif(width: 64, height: 64, exif: exif.bytes())),
            Seed(name: "mp4", bytes: MP4Fixture(rotation: 90, creationTime: 1_500_000_000, appleKeys: ["com.apple.quicktime.creationdate": "2019-07-24T11:25:40+0300", "com.apple.quicktime.location.ISO6709": "+32.0929+034.8620/"], location: "+1.0+2.0/").bytes()),
            Seed(name: "mov mdat first", bytes: MP4Fixture(majorBrand: "qt  ", mediaDataBytes: 200, mediaDataFirst: true).bytes()),
            Seed(name: "webp", bytes: Build.riff("WEBP", Build.chunk("VP8X", [8, 0, 0, 0, 7, 0, 0, 7, 0, 0]) + Build.chunk("EXIF", exif.app1Payload()) + Build.chunk("XMP ", Array(XMPFixture.packet(rating: 3).utf8)))),
            Seed(name: "mkv", bytes: Build.matroska(docType: "webm", trackType: 1, width: 8, height: 8, durationMs: 1000, dateUTCNanos: 1_000_000_000)),
            Seed(name: "avi", bytes: Build.avi(width: 8, height: 8, frames: 3, microsecondsPerFrame: 40000, idit: "MON MAR 10 15:04:43 2003")),
            Seed(name: "flv", bytes: Build.flv(width: 8, height: 8, duration: 1)),
            Seed(name: "asf", bytes: Build.asf(video: true, width: 8, height: 8, playDuration100ns: 10_000_000)),
        ]
        list += SniffingTests.media.filter { ["cr3", "raf", "nef by maker", "jxl container", "jpeg 2000", "rw2", "bpg", "ico 256", "bmp top-down", "mng"].contains($0.name) }
            .map { Seed(name: $0.name, bytes: $0.bytes) }
        list += [Seed(name: "crw", bytes: CameraRAWTests.crw(rotation: 90)), Seed(name: "mrw", bytes: CameraRAWTests.mrwBytes),
                 Seed(name: "x3f", bytes: CameraRAWTests.x3fBytes)]
        return list
    }()

    @Test(arguments: seeds)
    func mutationsNeverTrap(_ seed: Seed) {
        // A stable seed per case (String.hashValue is randomised per process).
        var rng = Generator(state: seed.name.utf8.reduce(UInt64(seed.bytes.count)) { $0 &* 31 &+ UInt64($1) })
        // PHOTOD_FUZZ_ITERATIONS raises the count for a long local run.
        let iterations = Int(ProcessInfo.processInfo.environment["PHOTOD_FUZZ_ITERATIONS"] ?? "") ?? 400
        let interesting: [[UInt8]] = [[0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 0], [0x7F, 0xFF, 0xFF, 0xFF], [0x80, 0, 0, 0], [0, 0, 0, 1],
                                      [0xFF, 0xFF, 0xFF, 0xF0], [0, 0, 0, 8], [1]]
        for _ in 0..<iterations {
            var b = seed.bytes
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                guard !b.isEmpty else { break }
                let at = Int.random(in: 0..<b.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: b[at] = UInt8.random(in: 0...255, using: &rng)
                case 1:
                    let v = interesting.randomElement(using: &rng)!
                    for (k, x) in v.enumerated() where at + k < b.count { b[at + k] = x }
                case 2: b = Array(b.prefix(at))
                default: b[at] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                }
            }
            var source = CountingSource(MemorySource(b))
            _ = try? MetadataReader().read(&source, fileName: Array("fuzz.bin".utf8))
            // Bounded reads: never much more than the (small) file itself.
            #expect(source.bytesRead <= max(b.count, 1) * 4 + 65536, "\(seed.name): read \(source.bytesRead) of \(b.count)")
        }
    }
}
