internal import CImaging
internal import CTurboJPEG

/// Decoded, scaled pixels in display orientation: 8-bit RGB (3 channels) or RGBA (4, straight
/// alpha), rows packed top to bottom.
public struct RenderedImage: Sendable, Hashable {
    /// The size in pixels.
    public let size: PixelSize
    /// 3 (RGB) or 4 (RGBA).
    public let channels: Int
    /// `size.width * size.height * channels` bytes.
    public let pixels: [UInt8]

    /// An image over `pixels` (`width * height * channels` bytes, 3 or 4 channels).
    public init(size: PixelSize, channels: Int, pixels: [UInt8]) {
        precondition(channels == 3 || channels == 4, "RenderedImage holds RGB or RGBA")
        precondition(pixels.count == size.width * size.height * channels, "pixel buffer does not match the size")
        self.size = size
        self.channels = channels
        self.pixels = pixels
    }

    /// Whether the image has an alpha channel (the source had one).
    public var hasAlpha: Bool { channels == 4 }

    /// Whether some pixel is not fully opaque.
    public var hasTransparency: Bool {
        guard channels == 4 else { return false }
        return pixels.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count {
                if p[i] != 255 { return true }
                i += 4
            }
            return false
        }
    }

    /// The pixel at (x, y) as an array of `channels` samples (tests, diagnostics).
    public func pixel(x: Int, y: Int) -> [UInt8] {
        let i = (y * size.width + x) * channels
        return Array(pixels[i..<(i + channels)])
    }

    /// The image turned from stored to displayed orientation.
    func oriented(_ orientation: Orientation) -> RenderedImage {
        if orientation == .up { return self }
        let w = size.width, h = size.height, c = channels
        let out = orientation.displayed(size)
        let ow = out.width
        let result = [UInt8](unsafeUninitializedCapacity: pixels.count) { dst, initialized in
            pixels.withUnsafeBufferPointer { src in
                for y in 0..<out.height {
                    var d = y * ow * c
                    for x in 0..<ow {
                        let (sx, sy) = orientation.storedPixel(x: x, y: y, width: w, height: h)
                        let s = (sy * w + sx) * c
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                        if c == 4 { dst[d + 3] = src[s + 3] }
                        d += c
                    }
                }
            }
            initialized = pixels.count
        }
        return RenderedImage(size: out, channels: c, pixels: result)
    }

    /// JPEG through TurboJPEG (4:2:0 chroma, baseline). Alpha, if any, is dropped: call it for
    /// opaque images, or use `encoded()`, which picks PNG when there is transparency.
    public func encodeJPEG(quality: Int = 85) throws(ImageError) -> EncodedImage {
        guard let handle = tjInitCompress() else { throw .corrupt("cannot initialise the JPEG encoder") }
        defer { tjDestroy(handle) }
        var out: UnsafeMutablePointer<UInt8>?
        var outSize: UInt = 0
        let format = channels == 4 ? TJPF_RGBX : TJPF_RGB
        let rc = pixels.withUnsafeBufferPointer { p in
            tjCompress2(handle, p.baseAddress, Int32(size.width), 0, Int32(size.height), Int32(format.rawValue), &out, &outSize,
                        Int32(TJSAMP_420.rawValue), Int32(min(100, max(1, quality))), 0)
        }
        defer { if let out { tjFree(out) } }
        guard rc == 0, let out else { throw .corrupt("JPEG encoding failed: \(String(cString: tjGetErrorStr2(handle)))") }
        let bytes = Array(UnsafeBufferPointer(start: out, count: Int(outSize)))
        return EncodedImage(bytes: bytes, format: .jpeg, size: size)
    }

    /// PNG through libpng's simplified API (`png_image_write_to_memory`), keeping alpha.
    public func encodePNG() throws(ImageError) -> EncodedImage {
        var out: UnsafeMutablePointer<UInt8>?
        var outSize = 0
        let rc = pixels.withUnsafeBufferPointer { p in
            photo_png_encode(p.baseAddress, UInt32(size.width), UInt32(size.height), UInt32(channels), &out, &outSize)
        }
        defer { photo_free(out) }
        guard rc == 0, let out else { throw .corrupt("PNG encoding failed") }
        return EncodedImage(bytes: Array(UnsafeBufferPointer(start: out, count: outSize)), format: .png, size: size)
    }

    /// The format a cache should store: JPEG for opaque images (small, fast), PNG when some
    /// pixel is transparent (lossless, keeps alpha).
    public func encoded(jpegQuality: Int = 85) throws(ImageError) -> EncodedImage {
        hasTransparency ? try encodePNG() : try encodeJPEG(quality: jpegQuality)
    }
}

/// An encoded image, ready to be written to the cache.
public struct EncodedImage: Sendable, Hashable {
    /// The output formats.
    public enum Format: String, Sendable, Hashable {
        case jpeg, png

        /// The file extension, without the dot.
        public var fileExtension: String { self == .jpeg ? "jpg" : "png" }
        /// The MIME type.
        public var mimeType: String { self == .jpeg ? "image/jpeg" : "image/png" }
    }

    /// The file's bytes.
    public let bytes: [UInt8]
    /// JPEG or PNG.
    public let format: Format
    /// The pixel size.
    public let size: PixelSize

    /// The file extension, without the dot (`jpg`, `png`).
    public var fileExtension: String { format.fileExtension }

    public init(bytes: [UInt8], format: Format, size: PixelSize) {
        self.bytes = bytes
        self.format = format
        self.size = size
    }
}
