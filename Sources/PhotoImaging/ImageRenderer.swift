internal import CImaging
import PhotoMetadata
import PhotoModel

/// Renders photos at a requested size: sniffs the format from the content, reads the header
/// and refuses images over `pixelLimit` before decoding anything, decodes at the smallest
/// size the request needs (TurboJPEG's DCT-domain scaling, libwebp's decode-time scaling,
/// PNG row by row, libheif), resamples with an area-averaging filter to the exact size, and
/// applies the orientation once.
///
/// Orientation: the file's orientation (1–8: EXIF, else XMP `tiff:Orientation`) is applied to
/// JPEG, PNG and WebP, and `fit`/`fill` are computed on the displayed (oriented) dimensions.
/// HEIC/HEIF/AVIF are displayed as libheif decodes them: it applies the container's
/// `irot`/`imir` itself, so the EXIF orientation inside them is never applied on top (the
/// metadata reader reports `irot`/`imir` as their orientation: the same result). JPEG XL
/// likewise: libjxl applies the codestream's orientation, the format's authority.
///
/// Formats and their decoders: JPEG (TurboJPEG), PNG (libpng), WebP (libwebp), HEIF (libheif),
/// TIFF (`TIFFDecoder`, libtiff), GIF (`GIFDecoder`, giflib), BMP (`BMPDecoder`, read here),
/// camera RAW (`RAWDecoder`, LibRaw), JPEG 2000 (`JPEG2000Decoder`, OpenJPEG), JPEG XL
/// (`JXLDecoder`, libjxl). The last six obey `cpuLimitMilliseconds` besides the pixel limit.
///
/// Sizes: see `RenderPlan` — `fit` is the largest size with the image's aspect ratio inside
/// the target; `fill` covers the target and is centre-cropped to it. Neither upscales: an
/// image smaller than the target comes back at its own resolution (`fit`: whole; `fill`: the
/// largest centred crop with the target's aspect ratio).
///
/// The renderer is a value holding only its limits; every call creates and frees its own
/// decoder handles, so one value can serve any number of threads.
public struct ImageRenderer: Sendable {
    /// Images whose header claims more pixels than this are refused with `.tooLarge`.
    public var pixelLimit: Int
    /// Files bigger than this are refused with `.fileTooLarge` (a file is read whole).
    public var fileSizeLimit: Int64
    /// CPU time one decode of a TIFF, GIF or RAW may take (checked between its steps: a band
    /// of rows, LibRaw's stages); past it the render fails with `.timedOut`.
    public var cpuLimitMilliseconds: Int64

    /// The default CPU limit of one still decode: a video poster's (`posterCPULimitMilliseconds`).
    public static let decodeCPULimitMilliseconds: Int64 = 5_000

    /// A renderer. The defaults admit every camera and phone photo (a 100-megapixel medium
    /// format frame) and refuse decompression bombs.
    public init(pixelLimit: Int = 100_000_000, fileSizeLimit: Int64 = 512 << 20,
                cpuLimitMilliseconds: Int64 = ImageRenderer.decodeCPULimitMilliseconds) {
        self.pixelLimit = pixelLimit
        self.fileSizeLimit = fileSizeLimit
        self.cpuLimitMilliseconds = cpuLimitMilliseconds
    }

    /// Renders the file at `path` (see the type's documentation).
    ///
    /// - Parameter orientation: the orientation when the caller knows it (the index stores
    ///   it); `nil` reads it from the file. Ignored for HEIF/AVIF.
    /// - Throws: `.unsupported` (videos: `"video"`), `.tooLarge`, `.fileTooLarge`,
    ///   `.corrupt`, `.undecodable` (a valid image of a kind no decoder here renders),
    ///   `.unreadable`, `.invalidRequest` (an empty target), `.timedOut` (a TIFF, GIF or RAW
    ///   decode past `cpuLimitMilliseconds`).
    public func render(path: PathBytes, targetSize: PixelSize, contentMode: ContentMode,
                       orientation: Orientation? = nil) throws(ImageError) -> RenderedImage {
        try validate(targetSize)
        let bytes = try FileBytes.read(path, limit: fileSizeLimit)
        return try render(bytes: bytes, targetSize: targetSize, contentMode: contentMode, orientation: orientation)
    }

    /// Renders an image held in memory (tests, fuzzing); as `render(path:...)`.
    public func render(bytes: [UInt8], targetSize: PixelSize, contentMode: ContentMode,
                       orientation: Orientation? = nil) throws(ImageError) -> RenderedImage {
        try validate(targetSize)
        let (codec, fileOrientation, rawOrientation) = try Self.identify(bytes)
        let request = Request(target: targetSize, mode: contentMode, pixelLimit: pixelLimit,
                              cpuLimitMilliseconds: cpuLimitMilliseconds)
        let result = bytes.withUnsafeBytes { (data: UnsafeRawBufferPointer) -> Result<RenderedImage, ImageError> in
            Result { () throws(ImageError) -> RenderedImage in
                switch codec {
                case .jpeg: return try JPEGDecoder.render(data, request, orientation ?? fileOrientation)
                case .png: return try PNGDecoder.render(data, request, orientation ?? fileOrientation)
                case .webp: return try WebPDecoder.render(data, request, orientation ?? fileOrientation)
                case .heif: return try HEIFDecoder.render(data, request)
                case .tiff: return try TIFFDecoder.render(data, request, orientation ?? fileOrientation)
                case .gif: return try GIFDecoder.render(data, request, orientation ?? fileOrientation)
                case .bmp: return try BMPDecoder.render(data, request, orientation ?? fileOrientation)
                case .psd: return try PSDDecoder.render(data, request, orientation ?? fileOrientation)
                case .raw: return try RAWDecoder.render(data, request, orientation ?? rawOrientation)
                case .jpeg2000: return try JPEG2000Decoder.render(data, request, orientation ?? fileOrientation)
                case .jpegXL: return try JXLDecoder.render(data, request)
                }
            }
        }
        return try result.get()
    }

    /// The format, stored size and orientation of the file at `path`, from its headers only.
    public func probe(path: PathBytes) throws(ImageError) -> ImageInfo {
        let head = try FileBytes.read(path, limit: fileSizeLimit, head: 1 << 20)
        var source = MemorySource(head)
        let meta: MediaMetadata
        do { meta = try MetadataReader().read(&source, fileName: []) } catch { throw Self.map(error) }
        let size = meta.pixelWidth.flatMap { w in meta.pixelHeight.map { PixelSize(width: w, height: $0) } }
        return ImageInfo(format: meta.format, storedSize: size, orientation: Orientation(exif: meta.orientation))
    }

    /// The size a render of an image displayed at `displayed` will have for this target and
    /// mode (see `RenderPlan`); without the image's size, the most it can be: the target.
    public static func outputSize(displayed: PixelSize?, target: PixelSize, mode: ContentMode) -> PixelSize {
        guard let displayed, displayed.width > 0, displayed.height > 0 else { return target }
        return RenderPlan(displayed: displayed, target: target, mode: mode).output
    }

    func validate(_ target: PixelSize) throws(ImageError) {
        guard target.width >= 1, target.height >= 1, target.width <= 1 << 16, target.height <= 1 << 16 else {
            throw .invalidRequest("the target size \(target) is not between 1x1 and 65536x65536")
        }
    }

    /// The decoders.
    enum Codec { case jpeg, png, webp, heif, tiff, gif, bmp, psd, raw, jpeg2000, jpegXL }

    /// Sniffs the content with the metadata reader (which also finds the EXIF orientation)
    /// and picks the decoder; everything else is `.unsupported`. For a RAW, the orientation
    /// only when its metadata gives one (else LibRaw's is used).
    static func identify(_ bytes: [UInt8]) throws(ImageError) -> (Codec, Orientation, raw: Orientation?) {
        guard !bytes.isEmpty else { throw .corrupt("the file is empty (0 bytes)") }
        var source = MemorySource(bytes)
        let meta: MediaMetadata
        do { meta = try MetadataReader().read(&source, fileName: []) } catch { throw map(error) }
        let orientation = Orientation(exif: meta.orientation)
        if meta.format.isRaw { return (.raw, orientation, meta.orientation.map { Orientation(exif: $0) }) }
        switch meta.format {
        case .jpeg, .mpo: return (.jpeg, orientation, nil)
        case .png, .apng: return (.png, orientation, nil)
        case .webp: return (.webp, orientation, nil)
        case .heic, .heif, .avif: return (.heif, .up, nil)  // libheif applies irot/imir
        case .tiff: return (.tiff, orientation, nil)
        case .gif: return (.gif, orientation, nil)
        case .bmp: return (.bmp, orientation, nil)
        case .psd: return (.psd, orientation, nil)
        case .jpeg2000: return (.jpeg2000, orientation, nil)
        case .jpegXL: return (.jpegXL, .up, nil)  // libjxl applies the codestream's orientation
        default:
            if meta.mediaType == .video { throw .unsupported("video") }
            throw .unsupported("\(meta.format.rawValue.uppercased()) image")
        }
    }

    static func map(_ error: MetadataError) -> ImageError {
        switch error.code {
        case .notMedia: return .unsupported(error.detectedKind.map { "\($0) (\(error.message))" } ?? error.message)
        case .unsupported: return .unsupported(error.message)
        case .unreadable: return .unreadable(errno: 0, error.message)
        default: return .corrupt(error.message)
        }
    }
}

/// What a file's headers say, without decoding.
public struct ImageInfo: Sendable, Hashable {
    /// The format sniffed from the content.
    public var format: MediaFormat
    /// The pixel size as stored, when the header gives it.
    public var storedSize: PixelSize?
    /// How the stored image is turned to be displayed (for HEIF/AVIF, their `irot`/`imir`,
    /// which libheif applies while decoding).
    public var orientation: Orientation
    /// The size as displayed.
    public var displayedSize: PixelSize? { storedSize.map(orientation.displayed) }
}

/// A render request as the decoders see it.
struct Request {
    var target: PixelSize
    var mode: ContentMode
    var pixelLimit: Int
    /// CPU time a decode that works in steps may take (TIFF, GIF, RAW; see `CPUDeadline`).
    var cpuLimitMilliseconds: Int64 = ImageRenderer.decodeCPULimitMilliseconds

    /// The deadline of a decode starting now.
    func deadline() -> CPUDeadline { CPUDeadline(milliseconds: cpuLimitMilliseconds) }

    func checkLimit(_ size: PixelSize) throws(ImageError) {
        guard size.width > 0, size.height > 0 else { throw .corrupt("the header gives an empty size \(size)") }
        if size.pixelCount > pixelLimit { throw .tooLarge(width: size.width, height: size.height, limit: pixelLimit) }
    }

    /// The plan in stored coordinates: output size and crop of the full-resolution image.
    func stored(_ stored: PixelSize, _ orientation: Orientation) -> (output: PixelSize, crop: Rect) {
        let plan = RenderPlan(displayed: orientation.displayed(stored), target: target, mode: mode)
        let output = orientation.swapsAxes ? plan.output.transposed : plan.output
        return (output, orientation.storedRect(plan.crop, stored: stored).clamped(to: stored))
    }
}

/// Resampling decoded pixels (a whole buffer) into the output.
enum Resample {
    /// The crop of a decoded `size` image (rows `stride` bytes apart) scaled to `output`.
    static func image(_ pixels: UnsafeRawPointer, size: PixelSize, channels: Int, stride: Int, crop: Rect,
                      output: PixelSize) throws(ImageError) -> RenderedImage {
        let c = crop.clamped(to: size)
        // Whole pixels at scale 1: a plain copy (no half-pixel blur from float crop edges).
        if output.width == Int(c.width.rounded()), output.height == Int(c.height.rounded()) {
            let x0 = min(Int(c.x.rounded()), size.width - output.width), y0 = min(Int(c.y.rounded()), size.height - output.height)
            let rowBytes = output.width * channels
            let out = [UInt8](unsafeUninitializedCapacity: rowBytes * output.height) { dst, initialized in
                for y in 0..<output.height {
                    let src = pixels + (y0 + y) * stride + x0 * channels
                    UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(dst)[(y * rowBytes)..<((y + 1) * rowBytes)])
                        .copyMemory(from: UnsafeRawBufferPointer(start: src, count: rowBytes))
                }
                initialized = rowBytes * output.height
            }
            return RenderedImage(size: output, channels: channels, pixels: out)
        }
        return try streaming(size: size, channels: channels, crop: c, output: output) { r in
            photo_resampler_push_rows(r, pixels.assumingMemoryBound(to: UInt8.self), stride, UInt32(size.height))
            return nil
        }
    }

    /// Runs `feed` with a resampler into a new output buffer; `feed` returns an error message
    /// when its decoder failed.
    static func streaming(size: PixelSize, channels: Int, crop: Rect, output: PixelSize,
                          feed: (OpaquePointer) -> String?) throws(ImageError) -> RenderedImage {
        let count = output.width * output.height * channels
        var failure: String?
        let out = [UInt8](unsafeUninitializedCapacity: count) { dst, initialized in
            initialized = 0
            guard let r = photo_resampler_create(UInt32(size.width), UInt32(size.height), UInt32(channels),
                                                 crop.x, crop.y, crop.width, crop.height,
                                                 UInt32(output.width), UInt32(output.height), dst.baseAddress) else {
                failure = "cannot resample \(size) to \(output)"
                return
            }
            defer { photo_resampler_destroy(r) }
            if let message = feed(r) {
                failure = message
                return
            }
            let rows = photo_resampler_finish(r)
            guard rows == UInt32(output.height) else {
                failure = "the decoder delivered too few rows (\(rows) of \(output.height) output rows)"
                return
            }
            initialized = count
        }
        if let failure { throw .corrupt(failure) }
        return RenderedImage(size: output, channels: channels, pixels: out)
    }
}
