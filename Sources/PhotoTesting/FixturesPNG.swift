/// A PNG as a metadata reader sees it: signature, IHDR, optional `acTL` (APNG), optional
/// `eXIf` (before or after the image data), optional `iTXt` XMP, IDAT filler and IEND, with
/// correct CRCs.
public struct PNGFixture: Sendable, Hashable {
    /// The IHDR width.
    public var width: Int
    /// The IHDR height.
    public var height: Int
    /// An `eXIf` chunk (a bare TIFF structure), when set.
    public var exif: ExifFixture?
    /// Puts `eXIf` after IDAT, as some writers do.
    public var exifAfterImageData: Bool
    /// An `iTXt` `XML:com.adobe.xmp` packet, when set.
    public var xmp: String?
    /// Adds an `acTL` chunk before IDAT (an animated PNG).
    public var animated: Bool
    /// Bytes of IDAT filler.
    public var imageDataBytes: Int

    /// A PNG fixture.
    public init(width: Int, height: Int, exif: ExifFixture? = nil, exifAfterImageData: Bool = false, xmp: String? = nil,
                animated: Bool = false, imageDataBytes: Int = 64) {
        self.width = width
        self.height = height
        self.exif = exif
        self.exifAfterImageData = exifAfterImageData
        self.xmp = xmp
        self.animated = animated
        self.imageDataBytes = imageDataBytes
    }

    /// The file's bytes.
    public func bytes() -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) { out += PNGFixture.chunk(type, data) }
        chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
        if animated { chunk("acTL", be32(2) + be32(0)) }
        if let exif, !exifAfterImageData { chunk("eXIf", exif.bytes()) }
        if let xmp { chunk("iTXt", Array("XML:com.adobe.xmp".utf8) + [0, 0, 0, 0, 0] + Array(xmp.utf8)) }
        chunk("IDAT", [UInt8](repeating: 0x55, count: imageDataBytes))
        if let exif, exifAfterImageData { chunk("eXIf", exif.bytes()) }
        chunk("IEND", [])
        return out
    }

    /// One chunk: length, type, data, CRC-32 of type and data.
    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return be32(data.count) + typeBytes + data + be32(Int(CRC32.checksum(typeBytes + data)))
    }
}

/// Big-endian 32-bit bytes.
func be32(_ v: Int) -> [UInt8] {
    [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
}

/// CRC-32 (ISO 3309, as PNG uses it).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
