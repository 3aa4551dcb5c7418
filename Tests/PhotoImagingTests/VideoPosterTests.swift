import Foundation
import PhotoImaging
import PhotoModel
import PhotoTesting
import Testing

/// Poster frames of videos `ffmpeg` makes, compared with `ffmpeg`'s own frame at the same time
/// and size (its accurate seek, its autorotation, area scaling).
@Suite("Video posters", .serialized)
struct VideoPosterTests {
    static let ffmpeg = VideoFixtures.ffmpeg
    static let renderer = ImageRenderer()

    struct Clip: Sendable, CustomTestStringConvertible {
        var name: String
        var video: [String]
        var testDescription: String { name }
    }

    static let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]

    /// Keyframes every 15 frames (0.5 s) where the encoder takes `-g`.
    static let clips: [Clip] = [
        Clip(name: "h264.mp4", video: x264 + ["-g", "15"]),
        Clip(name: "hevc.mov", video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none:keyint=15:min-keyint=15", "-tag:v", "hvc1"]),
        Clip(name: "h264.3gp", video: x264 + ["-g", "15"]),
        Clip(name: "vp9.webm", video: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", "15"]),
        Clip(name: "vp8.mkv", video: ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-g", "15"]),
        Clip(name: "av1.mkv", video: ["-c:v", "libsvtav1", "-preset", "12", "-g", "15"]),
        Clip(name: "mpeg4.avi", video: ["-c:v", "mpeg4", "-g", "15", "-q:v", "3"]),
        Clip(name: "mjpeg.avi", video: ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p", "-q:v", "3"]),
        Clip(name: "h264.m2ts", video: x264 + ["-g", "15"]),
        Clip(name: "mpeg1.mpg", video: ["-c:v", "mpeg1video", "-g", "15", "-q:v", "3"]),
        Clip(name: "mpeg2.vob", video: ["-c:v", "mpeg2video", "-g", "15", "-q:v", "3"]),
    ]

    /// The poster and ffmpeg's frame at its time (plus `offset`) and size: mean absolute
    /// difference per sample. The two convert YUV to RGB differently (here with full chroma
    /// interpolation, there area scaling of each plane): 3–7 on a sharp test pattern. A wrong
    /// frame, turn or colour matrix gives far more.
    static func difference(_ path: PathBytes, _ poster: VideoPoster, offset: Double = 0, fromStart: Bool = false) throws -> Double {
        let size = poster.image.size
        let reference = try VideoFixtures.frame(path, at: poster.time + offset, width: size.width, height: size.height, fromStart: fromStart)
        try #require(reference.count == size.width * size.height * 3, "ffmpeg gave \(reference.count) bytes")
        return Fixtures.meanDifference(poster.image, RenderedImage(size: size, channels: 3, pixels: reference))
    }

    @Test("Each codec and container: the first keyframe after 10 % of a short clip, as ffmpeg decodes it",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"), arguments: clips)
    func codecs(_ clip: Clip) throws {
        let dir = try TemporaryDirectory("poster-codecs")
        defer { dir.remove() }
        let path = try VideoFixtures.make(dir(clip.name), video: clip.video, seconds: 3, pattern: "testsrc2")
        let poster = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 160, height: 160), contentMode: .fit)
        #expect(poster.image.size == PixelSize(width: 160, height: 120))
        #expect(abs(poster.target - 0.3) < 0.01, "\(poster.target)")
        #expect(poster.time >= poster.target - 0.001 && poster.time <= 0.5 + 0.001, "\(poster.time)")
        #expect(poster.isKeyframe && !poster.isCoverArt)
        let d = try Self.difference(path, poster)
        #expect(d < 8, "mean difference \(d) from ffmpeg's frame at \(poster.time) s")
    }

    /// A transport stream is sought by time stamps, not to keyframes: in a clip with one IDR
    /// frame (x264's default interval, 250 frames) the seek to 10 % leaves nothing decodable, and
    /// the poster is decoded again from the first byte.
    @Test("A transport stream with one IDR frame: the frame at 10 %, decoded from the first byte",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"), arguments: ["one-idr.ts", "one-idr.m2ts"])
    func transportStreamFromTheStart(_ name: String) throws {
        let dir = try TemporaryDirectory("poster-ts")
        defer { dir.remove() }
        let path = try VideoFixtures.make(dir(name), video: Self.x264, seconds: 3, pattern: "testsrc2")
        let poster = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 160, height: 160), contentMode: .fit)
        #expect(poster.image.size == PixelSize(width: 160, height: 120))
        #expect(abs(poster.target - 0.3) < 0.01, "\(poster.target)")
        #expect(poster.time >= poster.target - 0.001 && poster.time <= poster.target + 0.05, "\(poster.time)")
        let d = try Self.difference(path, poster, fromStart: true)
        #expect(d < 8, "mean difference \(d) from ffmpeg's frame at \(poster.time) s")
    }

    @Test("A phone's rotated and mirrored clips come out upright, as ffmpeg turns them",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func rotation() throws {
        let dir = try TemporaryDirectory("poster-rotation")
        defer { dir.remove() }
        let plain = try VideoFixtures.make(dir("plain.mp4"), video: Self.x264, seconds: 2, pattern: "testsrc")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain.string)))
        for (degrees, mirrored) in [(90, false), (180, false), (270, false), (90, true), (0, true)] {
            var turned = bytes
            try VideoFixtures.setMatrix(&turned, degrees: degrees, mirrored: mirrored)
            let path = try dir.write("rot\(degrees)\(mirrored ? "m" : "").mp4", turned)
            let poster = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 200, height: 200), contentMode: .fit)
            let portrait = degrees == 90 || degrees == 270
            #expect(poster.image.size == (portrait ? PixelSize(width: 150, height: 200) : PixelSize(width: 200, height: 150)),
                    "\(degrees)° \(mirrored): \(poster.image.size)")
            let d = try Self.difference(path, poster)
            #expect(d < 8, "\(degrees)° mirrored \(mirrored): mean difference \(d)")
        }
    }

    @Test("The poster time: a keyframe at 1 s, the next keyframe when there is none at 1 s, the frame at 10 % when no keyframe follows, frame 0 under 1 s",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func posterTime() throws {
        let dir = try TemporaryDirectory("poster-time")
        defer { dir.remove() }
        let fixedGOP = ["-sc_threshold", "0"]
        let cases: [(name: String, seconds: Double, gop: Int, expected: Double, key: Bool)] = [
            ("every-second.mp4", 12, 30, 1.0, true),
            ("long-gop.mp4", 12, 300, 10.0, true),   // keyframes at 0 and 10 s
            ("one-keyframe.mp4", 5, 1000, 0.5, false),  // none after 10 %: the frame at 0.5 s
            ("short.mp4", 0.5, 30, 0, true),
        ]
        for c in cases {
            let path = try VideoFixtures.make(dir(c.name), video: Self.x264 + ["-g", String(c.gop), "-keyint_min", String(c.gop)] + fixedGOP,
                                              seconds: c.seconds, pattern: "testsrc")
            let poster = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 160, height: 120), contentMode: .fill)
            #expect(abs(poster.time - c.expected) < 0.001, "\(c.name): \(poster.time)")
            #expect(poster.isKeyframe == c.key, "\(c.name)")
            let d = try Self.difference(path, poster)
            #expect(d < 8, "\(c.name): mean difference \(d)")
            // The very frame: the next one (its counter, its gradient) is further from it.
            let next = try Self.difference(path, poster, offset: 1.0 / 30)
            #expect(d < next, "\(c.name): \(d) at its time, \(next) a frame later")
        }
    }

    @Test("Anamorphic video (DV's 720×480 at 16:9, a DVD's 720×576 at 4:3) is shown at its display aspect",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func anamorphic() throws {
        let dir = try TemporaryDirectory("poster-sar")
        defer { dir.remove() }
        for (name, size, sar, expected) in [("dv.mp4", "720x480", "32/27", PixelSize(width: 427, height: 240)),
                                            ("dvd.mkv", "720x576", "16/15", PixelSize(width: 320, height: 240)),
                                            ("square.mp4", "720x480", "1/1", PixelSize(width: 360, height: 240))] {
            let path = try VideoFixtures.make(dir(name), video: Self.x264 + ["-vf", "setsar=\(sar)"], size: size, seconds: 1,
                                              pattern: "testsrc2")
            let poster = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 480, height: 240), contentMode: .fit)
            #expect(poster.image.size == expected, "\(name): \(poster.image.size)")
            let d = try Self.difference(path, poster)
            #expect(d < 8, "\(name): mean difference \(d)")
        }
    }

    @Test("Fit and fill as for photos, never upscaled",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func sizes() throws {
        let dir = try TemporaryDirectory("poster-sizes")
        defer { dir.remove() }
        let path = try VideoFixtures.make(dir("small.mp4"), video: Self.x264, size: "160x120", seconds: 1)
        let big = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 1024, height: 1024), contentMode: .fit)
        #expect(big.image.size == PixelSize(width: 160, height: 120))
        let square = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 100, height: 100), contentMode: .fill)
        #expect(square.image.size == PixelSize(width: 100, height: 100))
        let wide = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 500, height: 100), contentMode: .fill)
        #expect(wide.image.size == PixelSize(width: 160, height: 32))
        #expect(throws: ImageError.self) {
            try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 0, height: 10), contentMode: .fit)
        }
    }

    @Test("Bounded: over the pixel limit, past the CPU limit, no video, damaged data: a reason, never a crash",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func bounded() throws {
        let dir = try TemporaryDirectory("poster-bounded")
        defer { dir.remove() }
        let path = try VideoFixtures.make(dir("hd.mp4"), video: Self.x264 + ["-g", "1000"], size: "1920x1080", seconds: 4,
                                          pattern: "testsrc2")
        let small = ImageRenderer(pixelLimit: 1_000_000)
        #expect(throws: ImageError.tooLarge(width: 1920, height: 1080, limit: 1_000_000)) {
            try small.renderPoster(path: path, targetSize: PixelSize(width: 100, height: 100), contentMode: .fit)
        }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path.string)))
        // Decoding 12 frames of 1080p from the keyframe takes far more than 1 ms of CPU.
        do {
            _ = try Self.renderer.renderPoster(bytes: bytes, targetSize: PixelSize(width: 100, height: 100), contentMode: .fit,
                                               cpuLimitMilliseconds: 1)
            Issue.record("a 1 ms CPU limit was not enforced")
        } catch {
            #expect(error.code == "timeout", "\(error)")
        }
        let audio = dir("audio.m4a")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "sine", "-t", "1", "-c:a", "aac", audio.string])
        let inputs: [(String, [UInt8])] = [
            ("empty", []), ("text", Array("not a video".utf8)), ("truncated", Array(bytes.prefix(bytes.count / 2))),
            ("head only", Array(bytes.prefix(4096))),
            ("noise", (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) }),
            ("audio only", [UInt8](try Data(contentsOf: URL(fileURLWithPath: audio.string)))),
        ]
        for (name, input) in inputs {
            do {
                let poster = try Self.renderer.renderPoster(bytes: input, targetSize: PixelSize(width: 64, height: 64), contentMode: .fit)
                // A truncated file may still hold its poster frame.
                #expect(name == "truncated", "\(name) gave a \(poster.image.size) poster")
            } catch {
                #expect(["corrupt", "undecodable"].contains(error.code), "\(name): \(error)")
                #expect("\(error)".contains("video: "), "\(name): \(error)")
            }
        }
    }

    @Test("Cover art: read as the stand-in, not taken for the poster",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func coverArt() throws {
        let dir = try TemporaryDirectory("poster-cover")
        defer { dir.remove() }
        let cover = dir("cover.png")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=64x64", "-frames:v", "1", cover.string])
        let path = dir("cover.mp4")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-i", cover.string, "-t", "2", "-map", "0:v",
                                  "-map", "1:v", "-c:v:0", "libx264", "-preset", "ultrafast", "-pix_fmt:v:0", "yuv420p", "-c:v:1", "png",
                                  "-disposition:v:1", "attached_pic", "-an", path.string])
        let art = try #require(Self.renderer.renderCoverArt(path: path, targetSize: PixelSize(width: 32, height: 32), contentMode: .fit))
        #expect(art.size == PixelSize(width: 32, height: 32))
        #expect(art.pixel(x: 16, y: 16) == [255, 0, 0] || art.pixel(x: 16, y: 16)[0] > 240, "\(art.pixel(x: 16, y: 16))")
        let poster = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 160, height: 160), contentMode: .fit)
        #expect(!poster.isCoverArt && poster.image.size == PixelSize(width: 160, height: 120))
        #expect(try Self.difference(path, poster) < 8)
        let plain = try VideoFixtures.make(dir("plain.mp4"), video: Self.x264)
        #expect(Self.renderer.renderCoverArt(path: plain, targetSize: PixelSize(width: 32, height: 32), contentMode: .fit) == nil)
    }

    @Test("The corpus's videos: a poster wherever ffmpeg decodes a frame, else a reason",
          .enabled(if: ffmpeg != nil && TestPaths.corpus != nil, "ffmpeg or the shared corpus is missing"))
    func corpus() throws {
        let root = TestPaths.corpus!.appendingPathComponent("real")
        let extensions: Set<String> = ["mp4", "mov", "3gp", "m4v", "mkv", "webm", "avi", "wmv", "flv", "mts"]
        var posters = 0, failures: [String] = []
        for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
        where extensions.contains(url.pathExtension.lowercased()) {
            let path = PathBytes(url.path)
            let ffmpegFrame = (try? VideoFixtures.ffmpeg(["-i", url.path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
                .map { !$0.isEmpty } ?? false
            do {
                let poster = try Self.renderer.renderPoster(path: path, targetSize: PixelSize(width: 256, height: 256), contentMode: .fit)
                posters += 1
                if !poster.isCoverArt {
                    let d = try Self.difference(path, poster)
                    #expect(d < 8, "\(url.lastPathComponent): mean difference \(d) at \(poster.time) s")
                }
            } catch {
                #expect(!ffmpegFrame, "\(url.lastPathComponent): ffmpeg decodes a frame, photod says \(error)")
                failures.append("\(url.lastPathComponent): \(error)")
            }
        }
        print("corpus video posters: \(posters); without one:\n  " + failures.joined(separator: "\n  "))
        #expect(posters >= 5)
    }
}
