internal import CVideo
import PhotoMetadata
import PhotoModel
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// A video's poster frame, rendered like a photo (FFmpeg's libavformat, libavcodec and
/// libswscale behind `CVideo`): the first keyframe at or after the poster time — 1 s; 10 % of
/// the duration for clips shorter than 10 s; frame 0 for clips under 1 s — else, when no
/// keyframe follows that time, the frame at it. Turned by the track's display matrix (rotation
/// and mirroring, as `ffmpeg` autorotates), then sized by the same `fit`/`fill` rules as a
/// photo, never upscaled.
///
/// Bounded: one decoder thread; a frame over the pixel limit is refused before it is decoded
/// (from the stream's header) and again when decoded; the decode gives up after `cpuLimit` of
/// its thread's CPU time or `wallLimit` of wall time. A video with no decodable frame that
/// carries a cover picture (MP4 `covr`, a Matroska cover attachment) is shown by that picture.
public struct VideoPoster: Sendable {
    /// The rendered frame.
    public var image: RenderedImage
    /// The frame's time (seconds from the start) and the poster time it was chosen for.
    public var time: Double
    public var target: Double
    /// Whether the frame is a keyframe.
    public var isKeyframe: Bool
    /// Whether the image is the file's cover picture (no frame could be decoded).
    public var isCoverArt: Bool
}

extension ImageRenderer {
    /// CPU time one poster decode may take.
    public static let posterCPULimitMilliseconds: Int64 = 5_000
    /// Wall time one poster decode may take (a file on a slow or stalled disk).
    public static let posterWallLimitMilliseconds: Int64 = 20_000
    /// Cover pictures larger than this are not read.
    static let coverByteLimit: Int64 = 32 << 20

    /// Renders the poster frame of the video at `path` (see `VideoPoster`).
    /// - Throws: `.tooLarge`, `.timedOut`, `.undecodable` (no decoder for its codec, no frame),
    ///   `.corrupt`, `.unreadable`, `.invalidRequest`.
    public func renderPoster(path: PathBytes, targetSize: PixelSize, contentMode: ContentMode) throws(ImageError) -> VideoPoster {
        try withVideo(path) { input throws(ImageError) in
            try poster(&input, Request(target: targetSize, mode: contentMode, pixelLimit: pixelLimit))
        }
    }

    /// Renders the poster of a video in memory (tests, fuzzing).
    public func renderPoster(bytes: [UInt8], targetSize: PixelSize, contentMode: ContentMode,
                             cpuLimitMilliseconds: Int64 = posterCPULimitMilliseconds) throws(ImageError) -> VideoPoster {
        let request = Request(target: targetSize, mode: contentMode, pixelLimit: pixelLimit)
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(ImageError) -> VideoPoster in
                var input = photo_video_input(fd: -1, data: buffer.baseAddress, size: Int64(buffer.count))
                return try poster(&input, request, cpuLimit: cpuLimitMilliseconds)
            }
        }
        return try result.get()
    }

    /// The cover picture a video file carries, rendered at the target size; nil when it has none
    /// (or it cannot be decoded). `accept` is asked about the open file first (the version the
    /// caller means).
    public func renderCoverArt(path: PathBytes, targetSize: PixelSize, contentMode: ContentMode,
                               accept: (FileStat) -> Bool = { _ in true }) -> RenderedImage? {
        try? withVideo(path, accept: accept) { input throws(ImageError) in
            guard let bytes = Self.cover(&input) else { throw .undecodable("no cover picture") }
            return try render(bytes: bytes, targetSize: targetSize, contentMode: contentMode)
        }
    }

    /// Runs `body` over the open file at `path`.
    private func withVideo<R>(_ path: PathBytes, accept: (FileStat) -> Bool = { _ in true },
                              _ body: (inout photo_video_input) throws(ImageError) -> R) throws(ImageError) -> R {
        let fd: FileDescriptor
        let st: FileStat
        do {
            fd = try FileDescriptor.open(path, flags: O_NOFOLLOW | O_NONBLOCK)
        } catch {
            throw .unreadable(errno: error.errno, "cannot open '\(path)': \(error.message)")
        }
        defer { fd.close() }
        do { st = try fd.stat() } catch { throw .unreadable(errno: error.errno, "cannot stat '\(path)': \(error.message)") }
        guard st.isRegularFile else { throw .unreadable(errno: EINVAL, "'\(path)' is not a regular file") }
        guard accept(st) else { throw .unreadable(errno: ESTALE, "'\(path)' changed") }
        var input = photo_video_input(fd: fd.rawValue, data: nil, size: st.size)
        return try body(&input)
    }

    private func poster(_ input: inout photo_video_input, _ request: Request,
                        cpuLimit: Int64 = posterCPULimitMilliseconds) throws(ImageError) -> VideoPoster {
        try validate(request.target)
        var error = [CChar](repeating: 0, count: 256)
        // The coded size and display matrix first (the headers alone, a fraction of a
        // millisecond): they say at what size the frame is needed.
        var info = photo_video_info()
        var need = PixelSize(width: 0, height: 0)
        var orientation = Orientation.up
        if photo_video_probe(&input, Self.posterWallLimitMilliseconds, &info, &error, error.count) == 0,
           info.width > 0, info.height > 0 {
            // In square pixels: an anamorphic stream's width times its pixel aspect ratio.
            let width = info.sar_num > 0 && info.sar_den > 0
                ? max(1, Int((Double(info.width) * Double(info.sar_num) / Double(info.sar_den)).rounded())) : Int(info.width)
            let stored = PixelSize(width: width, height: Int(info.height))
            try request.checkLimit(stored)
            orientation = Orientation(exif: Int(info.orientation))
            let (output, crop) = request.stored(stored, orientation)
            need = PixelSize(width: Int((Double(stored.width) * Double(output.width) / crop.width - 1e-6).rounded(.up)),
                             height: Int((Double(stored.height) * Double(output.height) / crop.height - 1e-6).rounded(.up)))
        }
        var options = photo_poster_options(need_width: Int32(clamping: need.width), need_height: Int32(clamping: need.height),
                                           pixel_limit: Int64(pixelLimit), cpu_ms: cpuLimit,
                                           wall_ms: Self.posterWallLimitMilliseconds)
        var frame = photo_video_frame()
        let rc = photo_video_poster(&input, &options, &frame, &error, error.count)
        guard rc == 0, let pixels = frame.pixels else {
            let failure = Self.posterError(rc, VideoProbe.message(error), frame: frame, limit: pixelLimit)
            // Nothing to show of the stream itself: the file's cover picture, when it has one.
            if [PHOTO_VIDEO_NO_FRAME, PHOTO_VIDEO_NO_STREAM, PHOTO_VIDEO_NO_DECODER].contains(Int(rc)),
               let bytes = Self.cover(&input),
               let image = try? render(bytes: bytes, targetSize: request.target, contentMode: request.mode) {
                return VideoPoster(image: image, time: 0, target: frame.target, isKeyframe: false, isCoverArt: true)
            }
            throw failure
        }
        defer { photo_video_free(pixels) }
        let decoded = PixelSize(width: Int(frame.width), height: Int(frame.height))
        let stored = frame.coded_width > 0 && frame.coded_height > 0
            ? PixelSize(width: Int(frame.coded_width), height: Int(frame.coded_height)) : decoded
        orientation = Orientation(exif: Int(frame.orientation))
        let (output, crop) = request.stored(stored, orientation)
        let sx = Double(decoded.width) / Double(stored.width), sy = Double(decoded.height) / Double(stored.height)
        let image = try Resample.image(UnsafeRawPointer(pixels), size: decoded, channels: 3, stride: decoded.width * 3,
                                       crop: crop.scaled(sx, sy), output: output).oriented(orientation)
        return VideoPoster(image: image, time: frame.time, target: frame.target, isKeyframe: frame.keyframe != 0,
                           isCoverArt: false)
    }

    /// The encoded bytes of the file's cover picture, nil when it has none.
    private static func cover(_ input: inout photo_video_input) -> [UInt8]? {
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        var error = [CChar](repeating: 0, count: 256)
        guard photo_video_cover(&input, posterWallLimitMilliseconds, coverByteLimit, &data, &size, &error, error.count) == 0,
              let data else { return nil }
        defer { photo_video_free(data) }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// The `ImageError` of a failed poster decode.
    static func posterError(_ rc: Int32, _ message: String, frame: photo_video_frame, limit: Int) -> ImageError {
        switch Int(rc) {
        case PHOTO_VIDEO_TOO_LARGE: return .tooLarge(width: Int(frame.width), height: Int(frame.height), limit: limit)
        case PHOTO_VIDEO_TIMEOUT: return .timedOut("video: \(message)")
        case PHOTO_VIDEO_NO_DECODER, PHOTO_VIDEO_NO_STREAM, PHOTO_VIDEO_NO_FRAME, PHOTO_VIDEO_UNAVAILABLE: return .undecodable("video: \(message)")
        default:
            // ENOMEM is FFmpeg's allocation cap refusing what a header claims: a damaged file.
            if rc < 0, -rc < 4096, -rc != ENOMEM { return .unreadable(errno: -rc, "video: \(message)") }
            return .corrupt("video: \(message)")
        }
    }
}
