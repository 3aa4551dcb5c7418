import CVideo
import PhotoModel
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// What a video's container and streams say, read by FFmpeg's libavformat (no frame decoded).
public struct VideoStreamInfo: Sendable, Hashable {
    /// FFmpeg's codec name of the video stream: `h264`, `hevc`, `vp9`, `av1`, `mpeg4`, `mjpeg`…
    public var videoCodec: String
    /// The audio stream's codec name, nil when there is none.
    public var audioCodec: String?
    /// The container as FFmpeg names its demuxer (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `avi`).
    public var container: String
    /// The coded size, before the display matrix turns it.
    public var width: Int
    public var height: Int
    /// Clockwise quarter turns, in degrees, that show the frame upright (0, 90, 180, 270).
    public var rotation: Int
    /// The display matrix as an EXIF orientation (1–8: its rotation and mirroring).
    public var orientation: Int
    /// Nominal frames per second.
    public var frameRate: Double?
    public var duration: Double?
    /// Bits per second, the container's or else the video stream's.
    public var bitRate: Int64?
    /// Android's `com.android.capture.fps`: the rate a slow-motion or time-lapse clip was recorded at.
    public var captureFrameRate: Double?
    /// ITU-T H.273 transfer characteristic (16 PQ, 18 HLG) and bits per sample of the video.
    public var colorTransfer: Int
    public var bitsPerSample: Int
    /// Whether the file carries a cover picture (MP4 `covr`, a Matroska image attachment).
    public var hasCoverArt: Bool
}

/// A video FFmpeg could not read, with its reason.
public struct VideoProbeError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var description: String { message }
}

public enum VideoProbe {
    /// Reads `path`'s streams, giving up after `timeoutMilliseconds` of wall time.
    public static func probe(_ path: PathBytes, timeoutMilliseconds: Int64 = 5_000) throws(VideoProbeError) -> VideoStreamInfo {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path, flags: O_NOFOLLOW | O_NONBLOCK)
        } catch {
            throw VideoProbeError(code: -error.errno, message: "cannot open: \(error.message)")
        }
        defer { fd.close() }
        let size: Int64
        do { size = try fd.stat().size } catch { throw VideoProbeError(code: -error.errno, message: "cannot stat: \(error.message)") }
        return try probe(descriptor: fd, size: size, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Reads the streams of the open file `descriptor` (`size` bytes; read with `pread`, its
    /// offset untouched).
    public static func probe(descriptor: FileDescriptor, size: Int64,
                             timeoutMilliseconds: Int64 = 5_000) throws(VideoProbeError) -> VideoStreamInfo {
        var input = photo_video_input(fd: descriptor.rawValue, data: nil, size: size)
        return try probe(&input, timeoutMilliseconds)
    }

    /// Reads the streams of a video in memory (tests, fuzzing).
    public static func probe(bytes: [UInt8], timeoutMilliseconds: Int64 = 5_000) throws(VideoProbeError) -> VideoStreamInfo {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(VideoProbeError) -> VideoStreamInfo in
                var input = photo_video_input(fd: -1, data: buffer.baseAddress, size: Int64(buffer.count))
                return try probe(&input, timeoutMilliseconds)
            }
        }
        return try result.get()
    }

    private static func probe(_ input: inout photo_video_input, _ timeout: Int64) throws(VideoProbeError) -> VideoStreamInfo {
        var info = photo_video_info()
        var error = [CChar](repeating: 0, count: 256)
        let rc = photo_video_probe(&input, timeout, &info, &error, error.count)
        guard rc == 0 else { throw VideoProbeError(code: rc, message: message(error)) }
        let audio = text(&info.audio_codec)
        return VideoStreamInfo(
            videoCodec: text(&info.video_codec), audioCodec: audio.isEmpty ? nil : audio, container: text(&info.container),
            width: Int(info.width), height: Int(info.height), rotation: Int(info.rotation), orientation: Int(info.orientation),
            frameRate: info.frame_rate > 0 ? info.frame_rate : nil, duration: info.duration > 0 ? info.duration : nil,
            bitRate: info.bit_rate > 0 ? info.bit_rate : nil, captureFrameRate: info.capture_fps > 0 ? info.capture_fps : nil,
            colorTransfer: Int(info.color_transfer), bitsPerSample: Int(info.bits_per_sample), hasCoverArt: info.has_cover_art != 0)
    }

    /// A NUL-terminated message from C.
    public static func message(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A NUL-terminated C array imported as a tuple, as a String.
    private static func text<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
