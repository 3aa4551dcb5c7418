import Foundation
@testable import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// MPEG transport streams as `ffmpeg` writes them (188-byte `.ts` packets, 192-byte `.m2ts`
/// ones), with AVCHD's recording date inserted as a camcorder writes it (`MDPM` user data in
/// the H.264 stream's SEI, which ffmpeg's `h264_metadata` filter can insert); and MPEG-1 system
/// and MPEG-2 program streams (`.mpg`, `.vob`, a camcorder's `.mod`).
@Suite("MPEG transport and program streams", .serialized)
struct MPEGStreamsTests {
    static let ffmpeg = VideoFixtures.ffmpeg
    static let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
    static let avchdUUID = "17ee8c60-f84d-11d9-8cd6-0800200c9a66"

    static func bytes(_ path: PathBytes) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path.string)))
    }

    struct Clip: Sendable, CustomTestStringConvertible {
        var name: String
        var video: [String]
        var audio: String?
        /// A transport stream's packet size; 0 for a program stream.
        var packet: Int
        var extra: [String] = []
        var testDescription: String { name }
    }

    static let clips: [Clip] = [
        Clip(name: "h264.ts", video: x264, audio: "aac", packet: 188),
        Clip(name: "h264.m2ts", video: x264, audio: "ac3", packet: 192),
        Clip(name: "mpeg2.ts", video: ["-c:v", "mpeg2video"], packet: 188),
        Clip(name: "hevc.mts", video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none"], packet: 192,
             extra: ["-mpegts_m2ts_mode", "1"]),
        Clip(name: "mpeg1.mpg", video: ["-c:v", "mpeg1video"], audio: "mp2", packet: 0),
        Clip(name: "dvd.vob", video: ["-c:v", "mpeg2video"], audio: "ac3", packet: 0),
        Clip(name: "camcorder.MOD", video: ["-c:v", "mpeg2video"], packet: 0, extra: ["-f", "dvd"]),
    ]

    @Test("A stream of each kind: a video of format m2ts (transport) or mpeg (program) with its duration, whole or cut short",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"), arguments: clips)
    func eachKind(_ clip: Clip) throws {
        let dir = try TemporaryDirectory("mpeg-streams")
        defer { dir.remove() }
        // ffmpeg's muxer writes 192-byte packets (its m2ts mode) for a name ending .m2ts, or when told.
        let path = try VideoFixtures.make(dir(clip.name), video: clip.video, rate: 25, seconds: 2, audio: clip.audio, extra: clip.extra)
        let file = try Self.bytes(path)
        let format: MediaFormat = clip.packet > 0 ? .m2ts : .mpeg
        if clip.packet > 0 { #expect(MPEGTS.layout(ByteView(file))?.size == clip.packet) }
        let m = try Build.read(file, name: clip.name)
        #expect(m.format == format && m.mediaType == .video)
        #expect(abs((m.duration ?? 0) - 2) < 0.001, "\(String(describing: m.duration))")
        #expect(m.dates == DateCandidates() && m.make == nil)
        // Cut mid-packet: the duration to the last whole packet's time stamp.
        let cut = try Build.read(Array(file.prefix(file.count * 2 / 5 + 7)), name: clip.name)
        #expect(cut.format == format)
        #expect((cut.duration ?? 0) > 0.1 && (cut.duration ?? 0) < 1.5, "\(String(describing: cut.duration))")
    }

    @Test("AVCHD's recording date and zone from the MDPM user data; the zone byte's sign, half hour and daylight saving time",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"),
          arguments: [(0x02, 3600), (0x62, 0), (0x23, -5400), (0x4A, 6 * 3600)] as [(UInt8, Int)])
    func recordingDate(_ zone: UInt8, _ offset: Int) throws {
        let dir = try TemporaryDirectory("mpegts-mdpm")
        defer { dir.remove() }
        // Two entries: 0x18 (zone, year, month) and 0x19 (day, hour, minute, second), in BCD.
        let mdpm: [UInt8] = Array("MDPM".utf8) + [2, 0x18, zone, 0x20, 0x19, 0x07, 0x19, 0x14, 0x13, 0x30, 0x05]
        let data = String(decoding: mdpm, as: UTF8.self)
        let path = try VideoFixtures.make(dir("00001.MTS"), video: Self.x264 + ["-bsf:v", "h264_metadata=sei_user_data=\(Self.avchdUUID)+\(data)"],
                                          rate: 25, seconds: 1, extra: ["-mpegts_m2ts_mode", "1"])
        let m = try Build.read(try Self.bytes(path), name: "00001.MTS")
        #expect(m.dates.quickTimeLocal == Timestamp(local: LocalDateTime(year: 2019, month: 7, day: 14, hour: 13, minute: 30, second: 5)!,
                                                    offset: UTCOffset(seconds: offset)))
        let date = CaptureDate.resolve(m.dates, fileName: Array("00001.MTS".utf8), mtimeNanoseconds: 0, zone: FixedZone.utc)
        #expect(date.local == LocalDateTime(year: 2019, month: 7, day: 14, hour: 13, minute: 30, second: 5)!)
        #expect(date.offset == UTCOffset(seconds: offset))
    }

    @Test("MDPM entries: the make by its code, a date that is not BCD ignored, entries out of order stop the list")
    func mdpmEntries() {
        var m = MediaMetadata(format: .m2ts)
        MPEGTS.apply([0xE0: [0x10, 0x11, 0x31, 0x01], 0x18: [0x02, 0x20, 0x0A, 0x12], 0x19: [0x31, 0x23, 0x16, 0x24]], to: &m)
        #expect(m.make == "Canon")
        #expect(m.dates.quickTimeLocal == nil, "0x0A is not a BCD digit pair")
        MPEGTS.apply([0xE0: [0x01, 0x08, 0, 0], 0x18: [0x02, 0x20, 0x08, 0x12], 0x19: [0x31, 0x23, 0x16, 0x24]], to: &m)
        #expect(m.make == "Sony")
        #expect(m.dates.quickTimeLocal == Timestamp(local: LocalDateTime(year: 2008, month: 12, day: 31, hour: 23, minute: 16, second: 24)!,
                                                    offset: UTCOffset(seconds: 3600)))
        let uuid: [UInt8] = [0x17, 0xEE, 0x8C, 0x60, 0xF8, 0x4D, 0x11, 0xD9, 0x8C, 0xD6, 0x08, 0x00, 0x20, 0x0C, 0x9A, 0x66]
        // Emulation prevention (00 00 03) undone inside the entries; the second entry out of order ends the list.
        let stream = [0, 0, 1, 6, 5, 40] + uuid + Array("MDPM".utf8) + [3, 0x18, 0x00, 0x00, 0x03, 0x01, 0x02, 0x13, 0, 0, 0, 0, 0x70, 1, 2, 3, 4]
        let entries = MPEGTS.mdpm(in: stream)
        #expect(entries?[0x18] == [0x00, 0x00, 0x01, 0x02])
        #expect(entries?[0x13] == nil && entries?.count == 1)
    }

    @Test("A stream of audio alone is not media; packets without tables or time stamps are a damaged video, never a crash",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func notVideo() throws {
        let dir = try TemporaryDirectory("mpegts-audio")
        defer { dir.remove() }
        let audio = dir("radio.ts")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440", "-t", "1", "-c:a", "aac", audio.string])
        #expect(Build.error(try Self.bytes(audio))?.code == .notMedia)
        let mp2 = dir("voice.mpg")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440", "-t", "1", "-c:a", "mp2", "-f", "mpeg", mp2.string])
        #expect(Build.error(try Self.bytes(mp2))?.code == .notMedia)
        // Sync bytes every 188 bytes around noise: a transport stream by its signature, nothing in it.
        var rng = SplitMix64(state: 7)
        var noise = (0..<(188 * 40)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for p in stride(from: 0, to: noise.count, by: 188) { noise[p] = 0x47 }
        let error = Build.error(noise)
        #expect(error?.code == .corrupt || error?.code == .truncated, "\(String(describing: error))")
    }
}
