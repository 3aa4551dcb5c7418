internal import CImaging
internal import CTIFF

/// TIFF through libtiff's RGBA interface: the first page of a multi-page file; strips or tiles;
/// 1- to 16-bit grey, palette, RGB, CMYK (InkSet CMYK) and YCbCr; LZW, Deflate, JPEG, PackBits
/// and the other codecs Debian's libtiff carries; classic TIFF and BigTIFF. The page is
/// decoded one band of rows at a time (a strip, or a row of tiles) into the resampler, so
/// memory is one band plus the output; the rows below the crop are not decoded.
///
/// Limits: the page's size against the pixel limit before any pixel is decoded; libtiff's own
/// allocations capped by the pixel limit (no strip a header only claims); the request's CPU
/// deadline between bands. A damaged file is `corrupt` with libtiff's first error; a valid
/// page the RGBA interface cannot show (floating-point samples, an unknown photometric
/// interpretation) is `undecodable` with libtiff's reason. The Orientation tag is applied by
/// the renderer (it is the file's orientation), not by libtiff.
enum TIFFDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        let deadline = request.deadline()
        var error = [CChar](repeating: 0, count: 256)
        var info = photo_tiff_info()
        var tiff: OpaquePointer?
        // At most 8 bytes a pixel (16-bit RGBA) of the largest image admitted, and never below
        // 64 MiB (libtiff's own tables and small files' strips).
        let maxAlloc = UInt64(max(64 << 20, request.pixelLimit.multipliedReportingOverflow(by: 8).partialValue))
        let rc = photo_tiff_open(data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count, maxAlloc, &tiff, &info,
                                 &error, error.count)
        guard rc == Int32(PHOTO_TIFF_OK), let tiff else {
            let message = "TIFF: \(PNGDecoder.string(error))"
            throw rc == Int32(PHOTO_TIFF_UNDECODABLE) ? .undecodable(message) : .corrupt(message)
        }
        defer { photo_tiff_close(tiff) }
        let stored = PixelSize(width: Int(info.width), height: Int(info.height))
        try request.checkLimit(stored)
        let channels = Int(info.channels)
        let band = Int(info.band_rows)
        let (output, crop) = request.stored(stored, orientation)
        // The last row the crop reaches (the resampler ignores rows past it).
        let lastRow = min(stored.height, Int((crop.y + crop.height).rounded(.up)) + 1)
        var timedOut = false
        let image: RenderedImage
        do {
            image = try Resample.streaming(size: stored, channels: channels, crop: crop, output: output) { r in
                let stride = stored.width * channels
                var rows = [UInt8](repeating: 0, count: stride * band)
                var row = 0
                while row < lastRow {
                    let n = min(band, stored.height - row)
                    let status = rows.withUnsafeMutableBufferPointer { b in
                        photo_tiff_read_band(tiff, UInt32(row), UInt32(n), b.baseAddress, &error, error.count)
                    }
                    guard status == Int32(PHOTO_TIFF_OK) else { return "TIFF: \(PNGDecoder.string(error))" }
                    rows.withUnsafeBufferPointer { photo_resampler_push_rows(r, $0.baseAddress, stride, UInt32(n)) }
                    row += n
                    if row < lastRow, deadline.expired {
                        timedOut = true
                        return "timeout"
                    }
                }
                return nil
            }
        } catch {
            if timedOut { throw deadline.error("TIFF") }
            throw error
        }
        return image.oriented(orientation)
    }
}
