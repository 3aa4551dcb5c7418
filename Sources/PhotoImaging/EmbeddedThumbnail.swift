internal import CTurboJPEG
import PhotoModel
import PhotoSystem

/// The JPEG thumbnail a camera embeds in a photo's EXIF block (IFD1, tags 0x0201/0x0202):
/// PhotoKit's degraded image. Found by walking the JPEG's segments in the file's first bytes
/// (never reading or decoding the main image), and decoded only when asked.
///
/// Cameras store the thumbnail in the main image's stored orientation, so it is displayed
/// with the same EXIF orientation (`decode()` applies it).
public struct EmbeddedThumbnail: Sendable, Hashable {
    /// The thumbnail's JPEG bytes, as stored.
    public let jpeg: [UInt8]
    /// Its pixel size as stored (from its frame header).
    public let storedSize: PixelSize
    /// The main image's EXIF orientation, which the thumbnail shares.
    public let orientation: Orientation

    /// The size as displayed (after the orientation).
    public var size: PixelSize { orientation.displayed(storedSize) }

    /// How much of a file is read to find the EXIF block (APP1 is at most 64 KiB, after at
    /// most a few small segments).
    static let headBytes = 192 << 10

    /// The embedded thumbnail of the JPEG at `path`, or `nil` when it has none (or the file is
    /// not a JPEG). Reads the file's first 192 KiB only.
    ///
    /// - Parameter orientation: the main image's orientation when the caller knows it; `nil`
    ///   takes it from the EXIF block.
    /// - Parameter accept: checks the file as opened (its `fstat`), e.g. that it is the version
    ///   the caller knows; refused, the result is `nil`.
    public static func extract(path: PathBytes, orientation: Orientation? = nil,
                               accept: (FileStat) -> Bool = { _ in true }) throws(ImageError) -> EmbeddedThumbnail? {
        guard let head = try FileBytes.read(path, limit: .max, head: headBytes, accept: accept) else { return nil }
        return extract(bytes: head, orientation: orientation)
    }

    /// The embedded thumbnail in the (head of the) JPEG `bytes`, or `nil`.
    public static func extract(bytes: [UInt8], orientation: Orientation? = nil) -> EmbeddedThumbnail? {
        bytes.withUnsafeBytes { data -> EmbeddedThumbnail? in
            let structure = JPEGStructure(data, findEnd: false)
            guard let exif = structure.exif else { return nil }
            let tiff = UnsafeRawBufferPointer(rebasing: data[exif])
            guard let range = ExifThumbnailLocator.locate(tiff) else { return nil }
            let jpeg = Array(UnsafeRawBufferPointer(rebasing: tiff[range]))
            let frame = jpeg.withUnsafeBytes { JPEGStructure($0, findEnd: false) }
            guard frame.width > 0, frame.height > 0, frame.width <= 1 << 14, frame.height <= 1 << 14 else { return nil }
            let o = orientation ?? Orientation(exif: ExifThumbnailLocator.orientation(tiff))
            return EmbeddedThumbnail(jpeg: jpeg, storedSize: PixelSize(width: frame.width, height: frame.height), orientation: o)
        }
    }

    /// The thumbnail decoded and turned upright. A damaged thumbnail is `.corrupt`.
    public func decode() throws(ImageError) -> RenderedImage {
        try ImageRenderer(pixelLimit: 1 << 22).render(bytes: jpeg, targetSize: size, contentMode: .fit, orientation: orientation)
    }

    /// The bytes to cache: the stored JPEG itself when it needs no turning (no decoding at
    /// all), else decoded, turned and re-encoded.
    public func encodedForCache(quality: Int = 85) throws(ImageError) -> EncodedImage {
        if orientation == .up {
            // Validate the header before handing out bytes as an image.
            guard let handle = tjInitDecompress() else { throw .corrupt("cannot initialise the JPEG decoder") }
            defer { tjDestroy(handle) }
            var w: Int32 = 0, h: Int32 = 0, s: Int32 = 0, c: Int32 = 0
            let rc = jpeg.withUnsafeBufferPointer { tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &w, &h, &s, &c) }
            // A warning (stray bytes) is no damage: viewers show such a JPEG.
            guard rc == 0 || JPEGDecoder.isWarning(handle), w > 0, h > 0 else { throw .corrupt("the embedded thumbnail's header is damaged") }
            return EncodedImage(bytes: jpeg, format: .jpeg, size: storedSize)
        }
        return try decode().encodeJPEG(quality: quality)
    }
}

extension ExifThumbnailLocator {
    /// The orientation tag (0x0112) of IFD0, when present.
    static func orientation(_ tiff: UnsafeRawBufferPointer) -> Int? {
        let n = tiff.count
        guard n >= 8 else { return nil }
        let little: Bool
        if tiff[0] == 0x49, tiff[1] == 0x49 { little = true } else if tiff[0] == 0x4D, tiff[1] == 0x4D { little = false } else { return nil }
        func u16(_ i: Int) -> Int { little ? Int(tiff[i]) | Int(tiff[i + 1]) << 8 : Int(tiff[i]) << 8 | Int(tiff[i + 1]) }
        let ifd0 = little ? Int(tiff[4]) | Int(tiff[5]) << 8 | Int(tiff[6]) << 16 | Int(tiff[7]) << 24
            : Int(tiff[4]) << 24 | Int(tiff[5]) << 16 | Int(tiff[6]) << 8 | Int(tiff[7])
        guard ifd0 >= 8, ifd0 + 2 <= n else { return nil }
        let count = u16(ifd0)
        guard count <= 512, ifd0 + 2 + 12 * count <= n else { return nil }
        for i in 0..<count {
            let e = ifd0 + 2 + 12 * i
            if u16(e) == 0x0112, u16(e + 2) == 3 { return u16(e + 8) }
        }
        return nil
    }
}
