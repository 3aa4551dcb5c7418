internal import CGIF

/// GIF through giflib: the first frame (an animated GIF's poster, as browsers show it before
/// playing), drawn on the logical screen — transparent where the frame's transparent colour is
/// or where it does not reach, then scaled like any image. A GIF cut off inside its first frame
/// shows the rows it has, as viewers show it; one with no frame at all is `corrupt`.
///
/// Limits: the canvas against the pixel limit before anything is decoded (a GIF's 16-bit sizes
/// make it at most 4.3 gigapixels); the request's CPU deadline in the blocks before the frame
/// and every 64 rows of it.
enum GIFDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        let deadline = request.deadline()
        var error = [CChar](repeating: 0, count: 256)
        var info = photo_gif_info()
        var gif: OpaquePointer?
        let rc = photo_gif_open(data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count, deadline.limit, &gif, &info,
                                &error, error.count)
        guard rc == Int32(PHOTO_GIF_OK), let gif else { throw failure(rc, error, deadline) }
        defer { photo_gif_close(gif) }
        let canvas = PixelSize(width: Int(info.width), height: Int(info.height))
        try request.checkLimit(canvas)
        let channels = Int(info.channels)
        var pixels = [UInt8](repeating: 0, count: canvas.pixelCount * channels)
        let status = pixels.withUnsafeMutableBufferPointer { photo_gif_decode(gif, $0.baseAddress, deadline.limit, &error, error.count) }
        guard status == Int32(PHOTO_GIF_OK) else { throw failure(status, error, deadline) }
        let (output, crop) = request.stored(canvas, orientation)
        let result = pixels.withUnsafeBytes { p in
            Result { () throws(ImageError) -> RenderedImage in
                try Resample.image(p.baseAddress!, size: canvas, channels: channels, stride: canvas.width * channels, crop: crop,
                                   output: output)
            }
        }
        return try result.get().oriented(orientation)
    }

    static func failure(_ rc: Int32, _ error: [CChar], _ deadline: CPUDeadline) -> ImageError {
        rc == Int32(PHOTO_GIF_TIMEOUT) ? deadline.error("GIF") : .corrupt("GIF: \(PNGDecoder.string(error))")
    }
}
