internal import COpenJPEG

/// JPEG 2000 (a JP2 file or a raw J2K codestream) through OpenJPEG, decoded at the smallest
/// resolution level that still covers the request (each level halves the size: a thumbnail of
/// a large scan decodes a fraction of it); grey, RGB, sYCC and CMYK, with alpha; any precision
/// scaled to 8 bits; subsampled components by their nearest sample. The EXIF orientation the
/// index holds is applied, as for JPEG.
///
/// Limits: the image area against the pixel limit before decoding; the CPU deadline each time
/// OpenJPEG reads a piece of the codestream (64 KiB; it reads as it decodes tile parts).
enum JPEG2000Decoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        let deadline = request.deadline()
        var error = [CChar](repeating: 0, count: 256)
        var info = photo_jp2_info()
        var jp2: OpaquePointer?
        let rc = photo_jp2_open(data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count, deadline.limit, &jp2, &info,
                                &error, error.count)
        guard rc == Int32(PHOTO_JP2_OK), let jp2 else { throw failure(rc, error, deadline) }
        defer { photo_jp2_close(jp2) }
        let full = PixelSize(width: Int(info.width), height: Int(info.height))
        try request.checkLimit(full)
        let (output, crop) = request.stored(full, orientation)
        // The full-resolution pixels the output needs across the whole image.
        let need = PixelSize(width: Int((Double(full.width) * Double(output.width) / crop.width - 1e-6).rounded(.up)),
                             height: Int((Double(full.height) * Double(output.height) / crop.height - 1e-6).rounded(.up)))
        var pixels: UnsafePointer<UInt8>?
        var width: UInt32 = 0, height: UInt32 = 0, channels: UInt32 = 0
        let status = photo_jp2_decode(jp2, UInt32(clamping: need.width), UInt32(clamping: need.height), &pixels, &width, &height,
                                      &channels, &error, error.count)
        guard status == Int32(PHOTO_JP2_OK), let pixels else { throw failure(status, error, deadline) }
        let decoded = PixelSize(width: Int(width), height: Int(height))
        let sx = Double(decoded.width) / Double(full.width), sy = Double(decoded.height) / Double(full.height)
        return try Resample.image(UnsafeRawPointer(pixels), size: decoded, channels: Int(channels), stride: decoded.width * Int(channels),
                                  crop: crop.scaled(sx, sy), output: output).oriented(orientation)
    }

    static func failure(_ rc: Int32, _ error: [CChar], _ deadline: CPUDeadline) -> ImageError {
        switch Int(rc) {
        case PHOTO_JP2_TIMEOUT: return deadline.error("JPEG 2000")
        case PHOTO_JP2_UNDECODABLE: return .undecodable("JPEG 2000: \(PNGDecoder.string(error))")
        default: return .corrupt("JPEG 2000: \(PNGDecoder.string(error))")
        }
    }
}
