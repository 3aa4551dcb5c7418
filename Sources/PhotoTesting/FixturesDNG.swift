import Foundation

/// A linear DNG, as a camera or a converter writes one, made here (no RAW sample set is packaged
/// in Debian): 16-bit linear RGB "sensor" data (LinearRaw, PhotometricInterpretation 34892) in a
/// SubIFD, ColorMatrix1 set to XYZ → linear sRGB so that the camera's colours are sRGB's, an
/// Orientation, and optionally a JPEG preview as IFD0's image (NewSubfileType 1), which LibRaw
/// finds as the file's thumbnail. LibRaw takes no RAW under 22 pixels a side.
public struct DNGFixture: Sendable {
    /// A JPEG preview and its size.
    public struct Preview: Sendable {
        public var jpeg: [UInt8]
        public var width: Int, height: Int
        public init(jpeg: [UInt8], width: Int, height: Int) {
            self.jpeg = jpeg
            self.width = width
            self.height = height
        }
    }

    public var width: Int, height: Int
    /// 8-bit sRGB pixels, rows packed (linearised with gamma 2.2 into the sensor data).
    public var rgb: [UInt8]
    public var orientation: Int
    public var preview: Preview?

    public init(width: Int, height: Int, rgb: [UInt8], orientation: Int = 1, preview: Preview? = nil) {
        self.width = width
        self.height = height
        self.rgb = rgb
        self.orientation = orientation
        self.preview = preview
    }

    public func bytes() -> [UInt8] {
        var linear = [UInt8]()
        linear.reserveCapacity(rgb.count * 2)
        for v in rgb {
            let l = Int((pow(Double(v) / 255, 2.2) * 65535).rounded())
            linear += [UInt8(l & 0xFF), UInt8(l >> 8)]
        }
        let xyzToSRGB = [32406, -15372, -4986, -9689, 18758, 415, 557, -2040, 10570]
        var ifd0: [TIFFBuilder.Entry] = [
            .long(254, [preview == nil ? 0 : 1]),
            .ascii(271, "photod"), .ascii(272, "Test DNG"), .short(274, [orientation]),
            .byte(50706, [1, 4, 0, 0]), .byte(50707, [1, 1, 0, 0]), .ascii(50708, "photod Test DNG"),
            .srational(50721, xyzToSRGB.map { ($0, 10000) }), .short(50778, [21]),
            .subIFD(330),
        ]
        if let preview {
            ifd0 += [.long(256, [preview.width]), .long(257, [preview.height]), .short(258, [8, 8, 8]), .short(259, [7]),
                     .short(262, [6]), .blob(273, 0), .short(277, [3]), .long(278, [preview.height]), .long(279, [preview.jpeg.count]),
                     .short(284, [1])]
        }
        let raw: [TIFFBuilder.Entry] = [
            .long(254, [0]), .long(256, [width]), .long(257, [height]), .short(258, [16, 16, 16]),
            .short(259, [1]), .short(262, [34892]), .blob(273, 1), .short(277, [3]), .long(278, [height]),
            .long(279, [linear.count]), .short(284, [1]),
        ]
        return TIFFBuilder.build(ifd0: ifd0, sub: raw, blobs: [preview?.jpeg ?? [], linear])
    }
}

/// A little-endian classic TIFF of two IFDs (IFD0 and one SubIFD), values out of line where
/// they do not fit, and blobs (strips) after them.
public enum TIFFBuilder {
    /// One IFD entry: tag, TIFF type, count and the value's little-endian bytes.
    public struct Entry: Sendable {
        public var tag: Int, type: Int, count: Int, bytes: [UInt8]
        /// A StripOffsets-like LONG pointing at blob `blob`, or at the SubIFD.
        public var blob: Int? = nil, isSubIFD = false

        /// `v`'s low `n` bytes, little-endian.
        public static func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        /// BYTE values.
        public static func byte(_ tag: Int, _ v: [Int]) -> Entry { Entry(tag: tag, type: 1, count: v.count, bytes: v.map { UInt8($0) }) }
        /// SHORT values.
        public static func short(_ tag: Int, _ v: [Int]) -> Entry { Entry(tag: tag, type: 3, count: v.count, bytes: v.flatMap { le($0, 2) }) }
        /// LONG values.
        public static func long(_ tag: Int, _ v: [Int]) -> Entry { Entry(tag: tag, type: 4, count: v.count, bytes: v.flatMap { le($0, 4) }) }
        /// An ASCII string (NUL added).
        public static func ascii(_ tag: Int, _ s: String) -> Entry { Entry(tag: tag, type: 2, count: s.utf8.count + 1, bytes: Array(s.utf8) + [0]) }
        /// SRATIONAL values (numerator, denominator).
        public static func srational(_ tag: Int, _ v: [(Int, Int)]) -> Entry {
            Entry(tag: tag, type: 10, count: v.count, bytes: v.flatMap { le($0.0, 4) + le($0.1, 4) })
        }
        /// A LONG offset of blob `index` (StripOffsets).
        public static func blob(_ tag: Int, _ index: Int) -> Entry { Entry(tag: tag, type: 4, count: 1, bytes: [0, 0, 0, 0], blob: index) }
        /// A LONG offset of the SubIFD (SubIFDs).
        public static func subIFD(_ tag: Int) -> Entry { Entry(tag: tag, type: 4, count: 1, bytes: [0, 0, 0, 0], isSubIFD: true) }
    }

    /// The file: header, IFD0, the SubIFD, out-of-line values, then the blobs.
    public static func build(ifd0: [Entry], sub: [Entry], blobs: [[UInt8]]) -> [UInt8] {
        let a = ifd0.sorted { $0.tag < $1.tag }, b = sub.sorted { $0.tag < $1.tag }
        func size(_ e: [Entry]) -> Int { 2 + 12 * e.count + 4 }
        let ifd0At = 8, subAt = ifd0At + size(a)
        var dataAt = subAt + size(b)
        // Out-of-line values, then blobs, each at an even offset.
        var values: [[UInt8]] = []
        var valueAt: [Int] = []
        for e in a + b where e.bytes.count > 4 {
            valueAt.append(dataAt)
            values.append(e.bytes)
            dataAt += e.bytes.count + (e.bytes.count & 1)
        }
        var blobAt: [Int] = []
        for blob in blobs {
            blobAt.append(dataAt)
            dataAt += blob.count + (blob.count & 1)
        }
        var out: [UInt8] = [0x49, 0x49, 0x2A, 0] + Entry.le(ifd0At, 4)
        var v = 0
        for entries in [a, b] {
            out += Entry.le(entries.count, 2)
            for e in entries {
                out += Entry.le(e.tag, 2) + Entry.le(e.type, 2) + Entry.le(e.count, 4)
                if let blob = e.blob {
                    out += Entry.le(blobAt[blob], 4)
                } else if e.isSubIFD {
                    out += Entry.le(subAt, 4)
                } else if e.bytes.count > 4 {
                    out += Entry.le(valueAt[v], 4)
                    v += 1
                } else {
                    out += e.bytes + [UInt8](repeating: 0, count: 4 - e.bytes.count)
                }
            }
            out += [0, 0, 0, 0]
        }
        for value in values { out += value + (value.count & 1 == 1 ? [0] : []) }
        for blob in blobs { out += blob + (blob.count & 1 == 1 ? [0] : []) }
        return out
    }
}
