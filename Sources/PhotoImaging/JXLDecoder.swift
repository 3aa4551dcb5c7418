internal import CJXL

/// JPEG XL (a bare codestream or the ISO BMFF container) through libjxl: the first frame, in
/// 8-bit RGB or RGBA, turned by the codestream's own orientation — which the format makes the
/// authority, so an EXIF orientation inside the file is never applied on top (as for HEIF).
///
/// Limits: the size from the header against the pixel limit before any frame is decoded; the
/// CPU deadline between 64 KiB pieces of input (libjxl decodes what it has before asking for
/// more); one thread (no parallel runner).
enum JXLDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request) throws(ImageError) -> RenderedImage {
        let deadline = request.deadline()
        var error = [CChar](repeating: 0, count: 256)
        var info = photo_jxl_info()
        var jxl: OpaquePointer?
        let rc = photo_jxl_open(data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count, deadline.limit, &jxl, &info,
                                &error, error.count)
        guard rc == Int32(PHOTO_JXL_OK), let jxl else { throw failure(rc, error, deadline) }
        defer { photo_jxl_close(jxl) }
        let size = PixelSize(width: Int(info.width), height: Int(info.height))
        try request.checkLimit(size)
        var pixels: UnsafePointer<UInt8>?
        let status = photo_jxl_decode(jxl, &pixels, &error, error.count)
        guard status == Int32(PHOTO_JXL_OK), let pixels else { throw failure(status, error, deadline) }
        let channels = Int(info.channels)
        let (output, crop) = request.stored(size, .up)
        return try Resample.image(UnsafeRawPointer(pixels), size: size, channels: channels, stride: size.width * channels, crop: crop,
                                  output: output)
    }

    static func failure(_ rc: Int32, _ error: [CChar], _ deadline: CPUDeadline) -> ImageError {
        rc == Int32(PHOTO_JXL_TIMEOUT) ? deadline.error("JPEG XL") : .corrupt("JPEG XL: \(PNGDecoder.string(error))")
    }
}
