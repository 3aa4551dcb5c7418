internal import CHeif
internal import CImaging
internal import CTurboJPEG
internal import CWebP

/// JPEG through TurboJPEG, decoded at the smallest DCT scale (1/8 … 1) still at least the
/// size the request needs.
///
/// Damaged files: a JPEG without an end-of-image marker after its scan is `corrupt`
/// (truncated) before anything is decoded, and so is one whose entropy-coded data is too
/// short to hold the claimed size (every block of a Huffman-coded JPEG costs at least one bit):
/// nothing is allocated for a size the file only claims. A fatal decoder error is `corrupt`.
/// A decoder *warning* on a complete file (stray bytes between segments, a bad Huffman code in
/// one segment), from the header or the data, is recoverable: the image is returned, as
/// browsers and viewers show it. A valid JPEG of a kind libjpeg-turbo does not decode (a
/// height deferred to DNL, lossless, hierarchical, 12-bit) is `undecodable`.
enum JPEGDecoder {
    static let flags = Int32(TJFLAG_LIMITSCANS)

    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        guard let handle = tjInitDecompress() else { throw .corrupt("cannot initialise the JPEG decoder") }
        defer { tjDestroy(handle) }
        let structure = JPEGStructure(data, findEnd: true)
        let jpeg = data.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // Pass the bytes up to the first image's end only (drops MPF second images, trailers).
        let length = UInt(structure.end ?? data.count)
        // The frame header's claim first: refuse over the limit before the decoder sees it.
        if structure.width > 0, structure.height > 0 { try request.checkLimit(PixelSize(width: structure.width, height: structure.height)) }
        if let reason = structure.undecodableReason { throw .undecodable("JPEG: \(reason)") }
        guard let scan = structure.scanStart else { throw .corrupt("the JPEG ends before its image data") }
        guard let end = structure.end else { throw .corrupt("the JPEG is truncated (no end-of-image marker after its image data)") }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, length, &width, &height, &subsampling, &colorspace) == 0 || isWarning(handle),
              width > 0, height > 0 else {
            throw .corrupt("JPEG header: \(message(handle))")
        }
        let stored = PixelSize(width: Int(width), height: Int(height))
        try request.checkLimit(stored)
        if structure.isHuffman, (end - scan) * 8 < structure.minimumBlocks {
            throw .corrupt("the JPEG's image data (\(end - scan) bytes) is too short for the claimed \(stored)")
        }

        let (output, crop) = request.stored(stored, orientation)
        let scaled = scaledSize(stored, need: PixelSize(width: Int((Double(stored.width) * Double(output.width) / crop.width - 1e-6).rounded(.up)),
                                                        height: Int((Double(stored.height) * Double(output.height) / crop.height - 1e-6).rounded(.up))))
        let cmyk = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        let decodedChannels = cmyk ? 4 : 3
        let stride = scaled.width * decodedChannels
        var decoded = [UInt8](repeating: 0, count: stride * scaled.height)
        let format = cmyk ? TJPF_CMYK : TJPF_RGB
        let rc = decoded.withUnsafeMutableBufferPointer { buffer in
            tjDecompress2(handle, jpeg, length, buffer.baseAddress, Int32(scaled.width), Int32(stride), Int32(scaled.height),
                          Int32(format.rawValue), flags)
        }
        if rc != 0, !isWarning(handle) {
            throw .corrupt("JPEG data: \(message(handle))")
        }
        if cmyk { cmykToRGB(&decoded, pixels: scaled.width * scaled.height) }
        let sx = Double(scaled.width) / Double(stored.width), sy = Double(scaled.height) / Double(stored.height)
        let result = decoded.withUnsafeBytes { p in
            Result { () throws(ImageError) -> RenderedImage in
                try Resample.image(p.baseAddress!, size: scaled, channels: 3, stride: scaled.width * 3, crop: crop.scaled(sx, sy),
                                   output: output)
            }
        }
        return try result.get().oriented(orientation)
    }

    /// The smallest TurboJPEG scaling (at most 1) whose output is at least `need`.
    static func scaledSize(_ size: PixelSize, need: PixelSize) -> PixelSize {
        var count: Int32 = 0
        var best = size
        guard let factors = tjGetScalingFactors(&count) else { return size }
        for i in 0..<Int(count) {
            let f = factors[i]
            guard f.num > 0, f.denom > 0, f.num <= f.denom else { continue }
            let w = (size.width * Int(f.num) + Int(f.denom) - 1) / Int(f.denom)
            let h = (size.height * Int(f.num) + Int(f.denom) - 1) / Int(f.denom)
            if w >= need.width, h >= need.height, w * h < best.width * best.height { best = PixelSize(width: w, height: h) }
        }
        return best
    }

    /// Adobe CMYK/YCCK as libjpeg delivers it (inverted): R = C·K/255. In place, packing
    /// 4-byte pixels into 3-byte ones at the front of the buffer.
    static func cmykToRGB(_ buffer: inout [UInt8], pixels: Int) {
        buffer.withUnsafeMutableBufferPointer { b in
            for i in 0..<pixels {
                let c = UInt32(b[4 * i]), m = UInt32(b[4 * i + 1]), y = UInt32(b[4 * i + 2]), k = UInt32(b[4 * i + 3])
                b[3 * i] = UInt8((c * k + 127) / 255)
                b[3 * i + 1] = UInt8((m * k + 127) / 255)
                b[3 * i + 2] = UInt8((y * k + 127) / 255)
            }
        }
    }

    /// Whether the handle's last failure was only a warning (TurboJPEG reports libjpeg's
    /// warnings as failures; without `TJFLAG_STOPONWARNING` the work was done regardless).
    static func isWarning(_ handle: tjhandle) -> Bool { tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) }

    static func message(_ handle: tjhandle) -> String {
        guard let s = tjGetErrorStr2(handle) else { return "unknown error" }
        return String(cString: s)
    }
}

/// PNG through libpng, row by row into the resampler (the whole image only for Adam7
/// interlacing). A truncated file, a bad CRC in a critical chunk or a broken deflate stream is
/// `corrupt`; a file whose image data cannot hold its claimed size is refused before decoding.
enum PNGDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        var info = photo_png_info()
        var error = [CChar](repeating: 0, count: 256)
        guard let png = photo_png_open(data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count, &info, &error, 256) else {
            throw .corrupt("PNG: \(string(error))")
        }
        defer { photo_png_close(png) }
        let stored = PixelSize(width: Int(info.width), height: Int(info.height))
        try request.checkLimit(stored)
        let (output, crop) = request.stored(stored, orientation)
        let image = try Resample.streaming(size: stored, channels: Int(info.channels), crop: crop, output: output) { r in
            photo_png_decode(png, r, &error, 256) == 0 ? nil : "PNG: \(string(error))"
        }
        return image.oriented(orientation)
    }

    static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// WebP through libwebp, which crops and scales while decoding (`use_cropping`,
/// `use_scaling`): the output is produced at its final size directly. Animated WebP is
/// `undecodable` (it needs the demuxer; a later addition).
enum WebPDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        let bytes = data.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw .corrupt("cannot initialise the WebP decoder") }
        let status = WebPGetFeatures(bytes, data.count, &config.input)
        guard status == VP8_STATUS_OK else { throw .corrupt("WebP header: \(describe(status))") }
        if config.input.has_animation != 0 { throw .undecodable("an animated WebP (its frames need libwebp's demuxer, not linked)") }
        let stored = PixelSize(width: Int(config.input.width), height: Int(config.input.height))
        try request.checkLimit(stored)
        let channels = config.input.has_alpha != 0 ? 4 : 3
        let (output, crop) = request.stored(stored, orientation)
        let left = min(max(0, Int(crop.x.rounded())), stored.width - 1)
        let top = min(max(0, Int(crop.y.rounded())), stored.height - 1)
        let cw = min(max(1, Int(crop.width.rounded())), stored.width - left)
        let ch = min(max(1, Int(crop.height.rounded())), stored.height - top)
        if left != 0 || top != 0 || cw != stored.width || ch != stored.height {
            config.options.use_cropping = 1
            config.options.crop_left = Int32(left)
            config.options.crop_top = Int32(top)
            config.options.crop_width = Int32(cw)
            config.options.crop_height = Int32(ch)
        }
        if output.width != cw || output.height != ch {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(output.width)
            config.options.scaled_height = Int32(output.height)
        }
        config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        let count = output.width * output.height * channels
        var decodeStatus = VP8_STATUS_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            config.output.u.RGBA.rgba = buffer.baseAddress
            config.output.u.RGBA.stride = Int32(output.width * channels)
            config.output.u.RGBA.size = count
            decodeStatus = WebPDecode(bytes, data.count, &config)
            WebPFreeDecBuffer(&config.output)
            initialized = decodeStatus == VP8_STATUS_OK ? count : 0
        }
        guard decodeStatus == VP8_STATUS_OK else { throw .corrupt("WebP data: \(describe(decodeStatus))") }
        return RenderedImage(size: output, channels: channels, pixels: pixels).oriented(orientation)
    }

    static func describe(_ status: VP8StatusCode) -> String {
        switch status {
        case VP8_STATUS_OUT_OF_MEMORY: return "out of memory"
        case VP8_STATUS_INVALID_PARAM: return "invalid parameter"
        case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error"
        case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature"
        case VP8_STATUS_SUSPENDED: return "suspended"
        case VP8_STATUS_USER_ABORT: return "aborted"
        case VP8_STATUS_NOT_ENOUGH_DATA: return "the file is truncated (not enough data)"
        default: return "status \(status.rawValue)"
        }
    }
}

/// HEIC, HEIF and AVIF through libheif. libheif applies the `irot`/`imir` transformations
/// while decoding, so the result is already displayed upright and no EXIF orientation is
/// applied. Tiles are decoded on the calling thread (the daemon's worker pool is the
/// parallelism).
enum HEIFDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request) throws(ImageError) -> RenderedImage {
        try start()
        defer { heif_deinit() }
        guard let context = heif_context_alloc() else { throw .corrupt("cannot initialise the HEIF decoder") }
        defer { heif_context_free(context) }
        heif_context_set_max_decoding_threads(context, 0)
        try check(heif_context_read_from_memory_without_copy(context, data.baseAddress, data.count, nil), "HEIF container")
        var handle: OpaquePointer?
        try check(heif_context_get_primary_image_handle(context, &handle), "HEIF primary image")
        guard let handle else { throw .corrupt("HEIF: no primary image") }
        defer { heif_image_handle_release(handle) }
        return try decode(handle, request)
    }

    /// Decodes an image item (the primary image or a thumbnail) and scales it for `request`.
    static func decode(_ handle: OpaquePointer, _ request: Request) throws(ImageError) -> RenderedImage {
        let claimed = PixelSize(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        try request.checkLimit(claimed)
        let alpha = heif_image_handle_has_alpha_channel(handle) != 0
        var image: OpaquePointer?
        try check(heif_decode_image(handle, &image, heif_colorspace_RGB, alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, nil),
                  "HEIF image data")
        guard let image else { throw .corrupt("HEIF: the decoder returned no image") }
        defer { heif_image_release(image) }
        let size = PixelSize(width: Int(heif_image_get_width(image, heif_channel_interleaved)),
                             height: Int(heif_image_get_height(image, heif_channel_interleaved)))
        var stride: Int32 = 0
        guard size.width > 0, size.height > 0, size.pixelCount <= request.pixelLimit,
              let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
              Int(stride) >= size.width * (alpha ? 4 : 3) else { throw .corrupt("HEIF: the decoder returned no usable pixels") }
        let (output, crop) = request.stored(size, .up)
        return try Resample.image(UnsafeRawPointer(plane), size: size, channels: alpha ? 4 : 3, stride: Int(stride), crop: crop,
                                  output: output)
    }

    /// Opens libheif (at the first HEIF file: `Sources/CHeif/heif.c`) and counts a user of it
    /// (`heif_init`, matched by a `heif_deinit`); without libheif, `undecodable` saying why.
    static func start() throws(ImageError) {
        if let failure = photod_heif_failure() { throw .undecodable(String(cString: failure)) }
        _ = heif_init(nil)
    }

    static func check(_ error: heif_error, _ what: String) throws(ImageError) {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
        if error.code == heif_error_Unsupported_feature || error.code == heif_error_Unsupported_filetype {
            throw .undecodable("\(what): \(message)")
        }
        throw .corrupt("\(what): \(message)")
    }
}
