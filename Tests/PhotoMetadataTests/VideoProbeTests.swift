import Foundation
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Videos made by `ffmpeg` (Debian's, installed by `scripts/install-deps --tests`) in each codec
/// and container photod reads, read back by `VideoProbe` (libavformat).
@Suite("Video streams read by libavformat", .serialized)
struct VideoProbeTests {
    static let ffmpeg = VideoFixtures.ffmpeg

    /// Makes a clip of `seconds` of a test pattern (and a tone when `audio` names its codec).
    static func make(_ dir: TemporaryDirectory, _ name: String, video: [String], size: String = "320x240", rate: Int = 30,
                     seconds: Double = 1.5, audio: String? = nil, extra: [String] = []) throws -> PathBytes {
        try VideoFixtures.make(dir(name), video: video, size: size, rate: rate, seconds: seconds, audio: audio, extra: extra)
    }

    struct Clip: Sendable, CustomTestStringConvertible {
        var name: String
        var video: [String]
        var codec: String
        var container: String
        var audio: String?
        var testDescription: String { name }
    }

    static let clips: [Clip] = [
        Clip(name: "h264.mp4", video: ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"], codec: "h264", container: "mov", audio: "aac"),
        Clip(name: "hevc.mov", video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none", "-tag:v", "hvc1"], codec: "hevc", container: "mov"),
        Clip(name: "h264.3gp", video: ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"], codec: "h264", container: "mov", audio: "aac"),
        Clip(name: "vp9.webm", video: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"], codec: "vp9", container: "matroska", audio: "libopus"),
        Clip(name: "vp8.mkv", video: ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"], codec: "vp8", container: "matroska"),
        Clip(name: "av1.mkv", video: ["-c:v", "libsvtav1", "-preset", "12"], codec: "av1", container: "matroska"),
        Clip(name: "mpeg4.avi", video: ["-c:v", "mpeg4"], codec: "mpeg4", container: "avi"),
        Clip(name: "mjpeg.avi", video: ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p"], codec: "mjpeg", container: "avi"),
        Clip(name: "h264.m2ts", video: ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"], codec: "h264", container: "mpegts", audio: "ac3"),
        Clip(name: "mpeg1.mpg", video: ["-c:v", "mpeg1video"], codec: "mpeg1video", container: "mpeg", audio: "mp2"),
    ]

    @Test("Each codec and container: codec names, size, frame rate, duration, bit rate, audio", .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"),
          arguments: clips)
    func codecs(_ clip: Clip) throws {
        let dir = try TemporaryDirectory("video-probe")
        defer { dir.remove() }
        let path = try Self.make(dir, clip.name, video: clip.video, audio: clip.audio)
        let info = try VideoProbe.probe(path)
        #expect(info.videoCodec == clip.codec)
        #expect(info.container.hasPrefix(clip.container), "\(info.container)")
        #expect(info.width == 320 && info.height == 240)
        #expect(abs((info.frameRate ?? 0) - 30) < 0.01, "\(String(describing: info.frameRate))")
        #expect(abs((info.duration ?? 0) - 1.5) < 0.2, "\(String(describing: info.duration))")
        #expect((info.bitRate ?? 0) > 0)
        #expect(info.audioCodec == clip.audio.map { $0 == "libopus" ? "opus" : $0 })
        #expect(info.rotation == 0 && !info.hasCoverArt)
        // An 8-bit stream's headers may not give its depth (it is read without decoding).
        #expect(info.bitsPerSample == 8 || info.bitsPerSample == 0, "\(info.bitsPerSample)")
    }

    @Test("A phone's rotated clip, a 240 fps one, Android's capture rate, cover art, 10-bit HLG", .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func phoneClips() throws {
        let dir = try TemporaryDirectory("video-probe-phone")
        defer { dir.remove() }
        let h264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        // ffmpeg 5.1 no longer writes a `rotate` tag as a display matrix: the track header's
        // matrix is written here as a phone writes it (a portrait clip: 90° clockwise).
        let plain = try Self.make(dir, "plain.mp4", video: h264)
        for degrees in [90, 180, 270] {
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain.string)))
            try VideoFixtures.setMatrix(&bytes, degrees: degrees)
            try dir.write("rot\(degrees).mp4", bytes)
            #expect(try VideoProbe.probe(PathBytes(dir("rot\(degrees).mp4").string)).rotation == degrees, "\(degrees)°")
        }
        let fast = try Self.make(dir, "slomo.mp4", video: h264, rate: 240, seconds: 0.5)
        #expect(abs((try VideoProbe.probe(fast).frameRate ?? 0) - 240) < 0.01)
        let android = try Self.make(dir, "android.mp4", video: h264, extra: ["-metadata", "com.android.capture.fps=120.0", "-movflags", "use_metadata_tags"])
        #expect(try VideoProbe.probe(android).captureFrameRate == 120)
        let cover = try Self.make(dir, "cover.png", video: ["-frames:v", "1"], seconds: 0.04)
        let withCover = dir("cover.mp4").string
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-i", cover.string, "-t", "1", "-map", "0:v", "-map", "1:v",
                         "-c:v:0", "libx264", "-preset", "ultrafast", "-pix_fmt:v:0", "yuv420p", "-c:v:1", "png",
                         "-disposition:v:1", "attached_pic", "-an", withCover])
        #expect(try VideoProbe.probe(PathBytes(withCover)).hasCoverArt)
        #expect(try !VideoProbe.probe(plain).hasCoverArt)
        let hlg = try Self.make(dir, "hlg.mkv", video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none",
                                                        "-pix_fmt", "yuv420p10le", "-color_trc", "arib-std-b67",
                                                        "-color_primaries", "bt2020", "-colorspace", "bt2020nc"])
        let info = try VideoProbe.probe(hlg)
        #expect(info.colorTransfer == 18 && info.bitsPerSample == 10, "\(info)")
    }

    @Test("Not a video, an empty file, a truncated one, a missing one: an error with the reason, never a crash", .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func badFiles() throws {
        let dir = try TemporaryDirectory("video-probe-bad")
        defer { dir.remove() }
        try dir.write("text.mp4", Array("not a video at all".utf8))
        try dir.write("empty.mov", [])
        let good = try Self.make(dir, "good.mp4", video: ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good.string))
        try dir.write("truncated.mp4", Array(bytes.prefix(bytes.count / 3)))
        for name in ["text.mp4", "empty.mov", "missing.mkv"] {
            #expect(throws: VideoProbeError.self, "\(name)") { try VideoProbe.probe(PathBytes(dir(name).string)) }
        }
        do {
            // A moov atom at the end, cut off: the container cannot be read.
            _ = try VideoProbe.probe(PathBytes(dir("truncated.mp4").string))
        } catch {
            #expect(!error.message.isEmpty)
        }
    }

    static let ffprobe = VideoFixtures.ffprobe

    /// The corpus's videos, as `ffprobe` reads their first video stream: codec and rotation
    /// (nil: no video stream it can read).
    static func reference(_ path: String) throws -> (codec: String, rotation: Int)? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.ffprobe!)
        p.arguments = ["-v", "quiet", "-select_streams", "v:0", "-show_entries", "stream=codec_name:stream_side_data=rotation",
                       "-of", "csv=p=0", path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == "," || $0.isNewline }).map(String.init)
        guard let codec = fields.first, !codec.isEmpty else { return nil }
        let ccw = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
        return (codec, ((-ccw % 360) + 360) % 360)
    }

    @Test("The corpus's videos: the codec and rotation ffprobe reads, or an error where it finds no video stream",
          .enabled(if: ffprobe != nil && TestPaths.corpus != nil, "ffprobe or the shared corpus is missing"))
    func corpus() throws {
        let root = TestPaths.corpus!.appendingPathComponent("real")
        let extensions: Set<String> = ["mp4", "mov", "3gp", "m4v", "mkv", "webm", "avi"]
        var seen = 0
        for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
        where extensions.contains(url.pathExtension.lowercased()) {
            seen += 1
            let expected = try Self.reference(url.path)
            let got = Result { () throws(VideoProbeError) in try VideoProbe.probe(PathBytes(url.path)) }
            switch (expected, got) {
            case (let e?, .success(let info)):
                #expect(info.videoCodec == e.codec && info.rotation == e.rotation, "\(url.lastPathComponent): \(info)")
            case (nil, .failure(let error)):
                #expect(!error.message.isEmpty)
            case (let e, let g):
                Issue.record("\(url.lastPathComponent): ffprobe \(String(describing: e)), photod \(g)")
            }
        }
        print("corpus videos probed: \(seen)")
        #expect(seen >= 10)
    }
}
