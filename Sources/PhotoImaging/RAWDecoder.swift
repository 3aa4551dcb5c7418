internal import CImaging
internal import CRaw
import PhotoModel
import PhotoSystem

/// Camera RAW through LibRaw (every format LibRaw 0.20 knows: CR2, CR3, NEF, NRW, ARW, SR2,
/// DNG, ORF, RW2, RAF, PEF, SRW, 3FR, IIQ, RWL, X3F...). Fast first: the preview the camera
/// embedded (LibRaw's pick, the largest it finds) is drawn when it covers the requested size —
/// a JPEG decoded at the smallest DCT scale that covers it, no demosaicing; otherwise the sensor
/// data is developed (camera white balance, sRGB), at half size when that covers the request.
/// Either is turned by the RAW's orientation (the index's, else the file's EXIF, else LibRaw's
/// `flip`): previews are stored as the sensor is.
///
/// Limits: the sensor and developed sizes against the pixel limit before unpacking (unpacking
/// allocates for the sensor); the preview through the JPEG decoder's own checks; the CPU
/// deadline at each of LibRaw's progress stages. A file LibRaw does not know is `undecodable`,
/// a damaged one `corrupt` with LibRaw's reason.
enum RAWDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation?) throws(ImageError) -> RenderedImage {
        try withRAW(data, request) { raw, info, deadline throws(ImageError) in
            let full = PixelSize(width: Int(info.width), height: Int(info.height))
            let orientation = orientation ?? Orientation(exif: Int(info.orientation))
            // What the full image would give; a source giving the same (within a pixel, for a
            // preview of slightly other proportions) covers the request.
            let wanted = request.stored(full, orientation).output
            func covers(_ size: PixelSize) -> Bool {
                let output = request.stored(size, orientation).output
                return output.width >= wanted.width - 1 && output.height >= wanted.height - 1
            }
            if let image = try preview(raw, request, orientation, deadline, if: covers) { return image }

            // Develop: half size when it covers the request (a quarter of the pixels, no demosaicing).
            let half = covers(PixelSize(width: max(1, full.width / 2), height: max(1, full.height / 2)))
            var error = [CChar](repeating: 0, count: 256)
            var pixels: UnsafePointer<UInt8>?
            var width: UInt32 = 0, height: UInt32 = 0
            let developed = photo_raw_develop(raw, half ? 1 : 0, &pixels, &width, &height, &error, error.count)
            guard developed == Int32(PHOTO_RAW_OK), let pixels else { throw failure(developed, error, deadline) }
            let size = PixelSize(width: Int(width), height: Int(height))
            try request.checkLimit(size)
            let (output, crop) = request.stored(size, orientation)
            return try Resample.image(UnsafeRawPointer(pixels), size: size, channels: 3, stride: size.width * 3, crop: crop, output: output)
                .oriented(orientation)
        }
    }

    /// Opens the RAW with LibRaw, checks its sizes against the pixel limit, and runs `body`.
    static func withRAW<R>(_ data: UnsafeRawBufferPointer, _ request: Request,
                           _ body: (OpaquePointer, photo_raw_info, CPUDeadline) throws(ImageError) -> R) throws(ImageError) -> R {
        let deadline = request.deadline()
        var error = [CChar](repeating: 0, count: 256)
        var info = photo_raw_info()
        var raw: OpaquePointer?
        let rc = photo_raw_open(data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count, deadline.limit, &raw, &info,
                                &error, error.count)
        guard rc == Int32(PHOTO_RAW_OK), let raw else { throw failure(rc, error, deadline) }
        defer { photo_raw_close(raw) }
        try request.checkLimit(PixelSize(width: Int(info.width), height: Int(info.height)))
        try request.checkLimit(PixelSize(width: Int(info.raw_width), height: Int(info.raw_height)))
        return try body(raw, info, deadline)
    }

    /// The embedded preview rendered for `request`, when there is one and `usable` takes its
    /// size; nil otherwise (a JPEG preview that does not decode too: the sensor data remains).
    static func preview(_ raw: OpaquePointer, _ request: Request, _ orientation: Orientation, _ deadline: CPUDeadline,
                        if usable: (PixelSize) -> Bool) throws(ImageError) -> RenderedImage? {
        var error = [CChar](repeating: 0, count: 256)
        var preview = photo_raw_preview_image()
        let status = photo_raw_preview(raw, &preview, &error, error.count)
        if status == Int32(PHOTO_RAW_TIMEOUT) { throw deadline.error("RAW") }
        guard status == Int32(PHOTO_RAW_OK), let bytes = preview.data, preview.size > 0 else { return nil }
        if preview.format == 1 {
            let jpeg = UnsafeRawBufferPointer(start: bytes, count: preview.size)
            // The JPEG's own frame size decides (LibRaw's twidth may be 0 for some makers).
            let structure = JPEGStructure(jpeg, findEnd: false)
            let frame = PixelSize(width: structure.width, height: structure.height)
            guard frame.width > 0, frame.height > 0, usable(frame) else { return nil }
            return try? JPEGDecoder.render(jpeg, request, orientation)
        }
        let size = PixelSize(width: Int(preview.width), height: Int(preview.height))
        guard size.width > 0, size.height > 0, usable(size) else { return nil }
        try request.checkLimit(size)
        let (output, crop) = request.stored(size, orientation)
        return try Resample.image(UnsafeRawPointer(bytes), size: size, channels: 3, stride: size.width * 3, crop: crop, output: output)
            .oriented(orientation)
    }

    static func failure(_ rc: Int32, _ error: [CChar], _ deadline: CPUDeadline) -> ImageError {
        let message = "RAW: \(PNGDecoder.string(error))"
        switch Int(rc) {
        case PHOTO_RAW_TIMEOUT: return deadline.error("RAW")
        case PHOTO_RAW_UNSUPPORTED: return .undecodable(message)
        default: return .corrupt(message)
        }
    }
}

/// The preview a camera RAW embeds, decoded as the degraded image of a RAW photo (a stand-in
/// while its sensor data is developed): fit in 1024×1024, in the RAW's orientation.
public enum RAWPreview {
    /// The stand-in's size: enough for a gallery's tile or a first look, quick to decode (a
    /// JPEG preview at a DCT scale).
    static let target = PixelSize(width: 1024, height: 1024)

    /// The preview of the RAW at `path`; nil when the file is not a RAW LibRaw knows, has no
    /// preview, or `accept` refuses it as opened (the caller's file version).
    /// - Parameter orientation: the index's orientation; nil: the file's (LibRaw's).
    public static func render(path: PathBytes, orientation: Orientation? = nil, renderer: ImageRenderer = ImageRenderer(),
                              accept: (FileStat) -> Bool = { _ in true }) throws(ImageError) -> RenderedImage? {
        guard let bytes = try FileBytes.read(path, limit: renderer.fileSizeLimit, accept: accept) else { return nil }
        return try render(bytes: bytes, orientation: orientation, renderer: renderer)
    }

    /// The preview of a RAW held in memory (tests, fuzzing); as `render(path:)`.
    public static func render(bytes: [UInt8], orientation: Orientation? = nil,
                              renderer: ImageRenderer = ImageRenderer()) throws(ImageError) -> RenderedImage? {
        guard !bytes.isEmpty else { return nil }
        let request = Request(target: target, mode: .fit, pixelLimit: renderer.pixelLimit,
                              cpuLimitMilliseconds: renderer.cpuLimitMilliseconds)
        let result = bytes.withUnsafeBytes { data in
            Result { () throws(ImageError) -> RenderedImage? in
                try RAWDecoder.withRAW(data, request) { raw, info, deadline throws(ImageError) in
                    try RAWDecoder.preview(raw, request, orientation ?? Orientation(exif: Int(info.orientation)), deadline) { _ in true }
                }
            }
        }
        do { return try result.get() } catch {
            // Not a RAW LibRaw knows: no preview, not an error of the file's.
            if case .undecodable = error { return nil }
            throw error
        }
    }
}
