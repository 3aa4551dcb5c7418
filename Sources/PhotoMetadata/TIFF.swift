/// Where TIFF bytes come from: an EXIF block in memory, or a TIFF file read at its offsets
/// (libtiff often writes IFD0 at the end of a large file, past any header read).
protocol TIFFStore {
    /// The length of the TIFF structure (offsets at or past it are invalid).
    var length: Int { get }
    /// `count` bytes at a TIFF offset, or `nil` when they are not all inside the structure.
    mutating func view(_ offset: Int, _ count: Int) throws(MetadataError) -> ByteView?
}

/// A TIFF structure held in memory (JPEG APP1, PNG `eXIf`, WebP `EXIF`, a HEIF `Exif` item).
struct MemoryTIFF: TIFFStore {
    let block: ByteView
    var length: Int { block.count }
    func view(_ offset: Int, _ count: Int) -> ByteView? {
        block.has(offset, count) ? block.slice(offset, count) : nil
    }
}

/// A TIFF file (or RAW) whose header sits at `base` in the input; reads go to the file.
struct FileTIFF: TIFFStore {
    var input: Input
    let base: Int64
    /// A classic TIFF's offsets are 32-bit; a BigTIFF's reach the whole file.
    var length: Int { Int(input.size - base) }
    mutating func view(_ offset: Int, _ count: Int) throws(MetadataError) -> ByteView? {
        guard offset >= 0, count >= 0, offset <= length, count <= length - offset else { return nil }
        return try input.view(at: base + Int64(offset), count: count)
    }
}

/// One IFD entry kept for decoding: its tag, TIFF type, count, and value bytes in the
/// structure's byte order.
struct TIFFEntry: Sendable {
    var tag: UInt16
    var type: UInt16
    var count: UInt32
    /// A view of the value bytes where they lie (no copy).
    var value: ByteView
}

/// Which IFD an entry or a walk belongs to.
enum IFDKind: Sendable { case ifd0, exif, gps, image }

/// The size in bytes of one value of a TIFF type, or `nil` for a type TIFF does not define.
@inline(__always)
func tiffTypeSize(_ type: Int) -> Int? {
    switch type {
    case 1, 2, 6, 7: return 1
    case 3, 8: return 2
    case 4, 9, 11, 13: return 4
    case 5, 10, 12: return 8
    default: return nil
    }
}

/// The tags photod reads, per IFD. Everything else in an IFD is skipped without copying.
enum ExifTags {
    static let make: UInt16 = 0x010F, model: UInt16 = 0x0110, orientation: UInt16 = 0x0112
    static let software: UInt16 = 0x0131, dateTime: UInt16 = 0x0132
    static let exifPointer: UInt16 = 0x8769, gpsPointer: UInt16 = 0x8825, subIFDs: UInt16 = 0x014A
    static let newSubfileType: UInt16 = 0x00FE, imageWidth: UInt16 = 0x0100, imageLength: UInt16 = 0x0101
    static let xmp: UInt16 = 0x02BC, dngVersion: UInt16 = 0xC612
    static let dateTimeOriginal: UInt16 = 0x9003, dateTimeDigitized: UInt16 = 0x9004
    static let offsetTime: UInt16 = 0x9010, offsetTimeOriginal: UInt16 = 0x9011, offsetTimeDigitized: UInt16 = 0x9012
    static let subSecTime: UInt16 = 0x9290, subSecTimeOriginal: UInt16 = 0x9291, subSecTimeDigitized: UInt16 = 0x9292
    static let userComment: UInt16 = 0x9286, makerNote: UInt16 = 0x927C, lensModel: UInt16 = 0xA434
    static let gpsLatitudeRef: UInt16 = 1, gpsLatitude: UInt16 = 2, gpsLongitudeRef: UInt16 = 3, gpsLongitude: UInt16 = 4
    static let gpsAltitudeRef: UInt16 = 5, gpsAltitude: UInt16 = 6, gpsTimeStamp: UInt16 = 7, gpsDateStamp: UInt16 = 0x1D
    /// Panasonic RW2 sensor size and the image's borders on it (IFD0 of a RW2, which has no
    /// ImageWidth): 0x02 width, 0x03 height, 0x04 top, 0x05 left, 0x06 bottom, 0x07 right.
    static let rw2Sensor: ClosedRange<UInt16> = 0x0002...0x0007
    /// EXIF PixelXDimension and PixelYDimension.
    static let pixelXDimension: UInt16 = 0xA002, pixelYDimension: UInt16 = 0xA003

    @inline(__always) static func wantedInIFD0(_ tag: UInt16) -> Bool {
        tag == make || tag == model || tag == orientation || tag == software || tag == dateTime
    }

    @inline(__always) static func wantedInExif(_ tag: UInt16) -> Bool {
        switch tag {
        case dateTimeOriginal, dateTimeDigitized, offsetTime, offsetTimeOriginal, offsetTimeDigitized,
             subSecTime, subSecTimeOriginal, subSecTimeDigitized, userComment, lensModel: return true
        default: return false
        }
    }

    @inline(__always) static func wantedInGPS(_ tag: UInt16) -> Bool {
        (tag >= 1 && tag <= 7) || tag == gpsDateStamp
    }
}

/// An image described by an IFD of a TIFF file: the main image, a preview, or a RAW's sensor data.
struct TIFFImage: Sendable, Hashable {
    var width: Int
    var height: Int
    /// NewSubfileType: 0 for a full-resolution image, 1 for a reduced one; `nil` when absent.
    var subfileType: Int?
}

/// What a bounded walk of a TIFF structure found: the entries photod decodes, the images a
/// TIFF file describes, where the maker note and XMP sit, and the problems met (warnings).
struct TIFFLayout: Sendable {
    var littleEndian: Bool
    /// The TIFF magic (42 for TIFF, 43 for BigTIFF, 0x4F52/0x5352 for ORF, 0x55 for RW2).
    var magic: Int
    var ifd0: [TIFFEntry] = []
    var exif: [TIFFEntry] = []
    var gps: [TIFFEntry] = []
    var images: [TIFFImage] = []
    var makerNote: (offset: Int, count: Int)?
    var xmp: (offset: Int, count: Int)?
    var hasDNGVersion = false
    /// RW2 IFD0's sensor width, height and image borders (top, left, bottom, right), 0 when absent.
    var rw2Sensor = [Int](repeating: 0, count: 6)
    /// The ExifIFD's PixelXDimension and PixelYDimension, when both are there.
    var exifPixel = (width: 0, height: 0)

    /// A RW2's image size: its borders' span on the sensor, else the sensor's size.
    var rw2ImageSize: (width: Int, height: Int)? {
        let s = rw2Sensor
        if s[4] > s[2], s[5] > s[3], s[1] == 0 || s[4] <= s[1], s[0] == 0 || s[5] <= s[0] { return (s[5] - s[3], s[4] - s[2]) }
        return s[0] > 0 && s[1] > 0 ? (s[0], s[1]) : nil
    }

    var exifPixelSize: (width: Int, height: Int)? { exifPixel.width > 0 && exifPixel.height > 0 ? exifPixel : nil }
    var warnings: [String] = []

    var isEmpty: Bool { ifd0.isEmpty && exif.isEmpty && gps.isEmpty }

    mutating func problem(_ text: String) {
        if warnings.count < 16 { warnings.append(text) }
    }

    /// The entries kept for an IFD, in the order the walk met them.
    func entries(_ kind: IFDKind) -> [TIFFEntry] {
        switch kind {
        case .ifd0, .image: return ifd0
        case .exif: return exif
        case .gps: return gps
        }
    }
}

/// What to walk.
enum TIFFWalkMode {
    /// An EXIF block: IFD0, its ExifIFD and GPS IFD. IFD1 (the thumbnail) is not read.
    case exif
    /// A TIFF or TIFF-based RAW file: also the IFD chain and SubIFDs, for the image sizes.
    case imageFile
    /// A block whose first IFD is itself an ExifIFD or GPS IFD (CR3 `CMT2`/`CMT4`).
    case single(IFDKind)
}

/// A bounded, loop-safe TIFF IFD walker: every offset is checked against the structure,
/// each IFD is visited once, the number of IFDs and entries is capped, and only the values
/// of wanted tags are copied.
///
/// BigTIFF (magic 43) is walked by the same code with its wider fields: a 16-byte header with
/// a 64-bit first offset, 64-bit entry counts, 20-byte entries whose count and value are 64
/// bits, and 8-byte inline values. The entries it keeps are ordinary TIFF types.
struct TIFFWalker<Store: TIFFStore> {
    var store: Store
    var layout: TIFFLayout
    private var visited: [Int] = []
    private let little: Bool
    /// BigTIFF's field widths.
    private let big: Bool
    /// An entry's size; where its count and value start; the size of an inline value and of
    /// an IFD's entry count.
    private var entrySize: Int { big ? 20 : 12 }
    private var valueField: Int { big ? 12 : 8 }
    private var inlineSize: Int { big ? 8 : 4 }
    private var countSize: Int { big ? 8 : 2 }

    /// Reads the header; `nil` when it is not a TIFF header.
    init?(store: Store) throws(MetadataError) {
        var s = store
        guard let h = try s.view(0, 8) else { return nil }
        let little: Bool
        if h[0] == 0x49, h[1] == 0x49 { little = true } else if h[0] == 0x4D, h[1] == 0x4D { little = false } else { return nil }
        let magic = little ? h.le16(2) : h.be16(2)
        guard magic == 42 || magic == 43 || magic == 0x4F52 || magic == 0x5352 || magic == 0x55 else { return nil }
        // BigTIFF: the offsets' byte size (8), then 0.
        if magic == 43, (little ? h.le16(4) : h.be16(4)) != 8 || (little ? h.le16(6) : h.be16(6)) != 0 { return nil }
        self.store = s
        self.little = little
        self.big = magic == 43
        self.layout = TIFFLayout(littleEndian: little, magic: magic)
    }

    @inline(__always) private func u16(_ v: ByteView, _ i: Int) -> Int { little ? v.le16(i) : v.be16(i) }
    @inline(__always) private func u32(_ v: ByteView, _ i: Int) -> Int { Int(little ? v.le32(i) : v.be32(i)) }
    /// A 64-bit value; one of 2^62 or more reads as 2^62: outside any structure, and far
    /// enough below `Int.max` that an offset plus a value's size cannot overflow.
    @inline(__always) private func u64(_ v: ByteView, _ i: Int) -> Int {
        let low = little ? v.le32(i) : v.be32(i + 4), high = little ? v.le32(i + 4) : v.be32(i)
        return high >= 0x4000_0000 ? 1 << 62 : Int(high) << 32 | Int(low)
    }
    /// An offset or count field: 32 bits, or 64 in BigTIFF.
    @inline(__always) private func word(_ v: ByteView, _ i: Int) -> Int { big ? u64(v, i) : u32(v, i) }

    /// Walks the structure and returns what it found.
    mutating func walk(_ mode: TIFFWalkMode) throws(MetadataError) -> TIFFLayout {
        guard let h = try store.view(0, big ? 16 : 8) else { return layout }
        let first = big ? u64(h, 8) : u32(h, 4)
        switch mode {
        case .exif:
            let r = try readIFD(first, .ifd0, imageFile: false)
            if let e = r.exif { _ = try readIFD(e, .exif, imageFile: false) }
            if let g = r.gps { _ = try readIFD(g, .gps, imageFile: false) }
        case .imageFile:
            var offset = first
            var chain = 0
            var subIFDs: [Int] = []
            var exifAt: Int?, gpsAt: Int?
            while offset != 0, chain < 8 {
                let r = try readIFD(offset, chain == 0 ? .ifd0 : .image, imageFile: true)
                if chain == 0 { exifAt = r.exif; gpsAt = r.gps }
                subIFDs += r.subIFDs
                guard let next = r.next else { break }
                offset = next
                chain += 1
            }
            // SubIFDs (RAW sensor data, previews) and their own SubIFDs, one level down.
            var k = 0
            while k < subIFDs.count, k < 16 {
                let r = try readIFD(subIFDs[k], .image, imageFile: true)
                if subIFDs.count < 16 { subIFDs += r.subIFDs.prefix(16 - subIFDs.count) }
                k += 1
            }
            if let e = exifAt { _ = try readIFD(e, .exif, imageFile: true) }
            if let g = gpsAt { _ = try readIFD(g, .gps, imageFile: true) }
        case .single(let kind):
            _ = try readIFD(first, kind, imageFile: false)
        }
        return layout
    }

    private struct IFDResult {
        var exif: Int?
        var gps: Int?
        var subIFDs: [Int] = []
        var next: Int?
    }

    /// Reads one IFD; returns the pointers it holds. Problems become warnings; nothing here
    /// throws except an I/O error.
    private mutating func readIFD(_ offset: Int, _ kind: IFDKind, imageFile: Bool) throws(MetadataError) -> IFDResult {
        var result = IFDResult()
        guard offset >= 8, offset < store.length else {
            layout.problem("IFD offset \(offset) is outside the TIFF structure")
            return result
        }
        guard !visited.contains(offset) else {
            layout.problem("IFD at \(offset) is referenced twice (loop), not followed")
            return result
        }
        guard visited.count < Limits.maxIFDs else {
            layout.problem("too many IFDs, stopped")
            return result
        }
        visited.append(offset)
        guard let countView = try store.view(offset, countSize) else {
            layout.problem("IFD at \(offset) is cut off")
            return result
        }
        var n = big ? u64(countView, 0) : u16(countView, 0)
        let available = (store.length - offset - countSize) / entrySize
        if n > available {
            layout.problem("IFD at \(offset) claims \(n) entries, \(available) fit")
            n = available
        }
        if n > Limits.maxIFDEntries {
            layout.problem("IFD at \(offset) claims \(n) entries")
            n = Limits.maxIFDEntries
        }
        let tableAt = offset + countSize
        guard n > 0, let table = try store.view(tableAt, entrySize * n) else { return result }
        if let nextView = try store.view(tableAt + entrySize * n, inlineSize) {
            let next = word(nextView, 0)
            if next != 0 { result.next = next }
        }
        var width: Int?, height: Int?, subfile: Int?
        for i in 0..<n {
            let e = entrySize * i
            let tag = UInt16(u16(table, e))
            let type = u16(table, e + 2)
            let count = word(table, e + 4)
            // The value field: an inline value, or the offset of the value.
            let vf = e + valueField
            // BigTIFF's 64-bit types: only as an image size or SubIFD offsets (LONG8, IFD8).
            if big, type == 16 || type == 18, count >= 1 {
                if imageFile, kind != .exif, kind != .gps, count == 1 {
                    if tag == ExifTags.imageWidth { width = u64(table, vf) }
                    if tag == ExifTags.imageLength { height = u64(table, vf) }
                    if tag == ExifTags.subIFDs { result.subIFDs.append(u64(table, vf)) }
                }
                if kind == .ifd0, count == 1, tag == ExifTags.exifPointer { result.exif = u64(table, vf) }
                if kind == .ifd0, count == 1, tag == ExifTags.gpsPointer { result.gps = u64(table, vf) }
                continue
            }
            guard count <= Int(UInt32.max), let size = tiffTypeSize(type) else {
                // An entry of no TIFF type is skipped; only a problem when it is a pointer we follow.
                if tag == ExifTags.exifPointer || tag == ExifTags.gpsPointer { layout.problem("tag 0x\(hex(tag)) has invalid type \(type)") }
                continue
            }
            let byteCount = count * size   // count < 2^32, size <= 8: no overflow in Int64
            let inline = byteCount <= inlineSize
            let valueOffset = inline ? -1 : word(table, vf)

            // Sub-IFD pointers.
            if kind == .ifd0 && (tag == ExifTags.exifPointer || tag == ExifTags.gpsPointer) {
                guard type == 4 || type == 13 || type == 3, count >= 1 else {
                    layout.problem("IFD0 0x\(hex(tag)) (type \(type), count \(count)) is not an offset; ignored")
                    continue
                }
                let target = type == 3 ? u16(table, vf) : u32(table, vf)
                guard target >= 8, target < store.length else {
                    layout.problem("IFD0 0x\(hex(tag)) points outside the structure (\(target)); ignored")
                    continue
                }
                if tag == ExifTags.exifPointer { result.exif = target } else { result.gps = target }
                continue
            }
            // A thumbnail or interoperability pointer past the data: damage worth a warning (libexif
            // 0.6.24 abandoned the rest of the IFD at one; the walk goes on).
            if (tag == 0x0201 || tag == 0x0202 || tag == 0xA005) && (type == 4 || type == 3) && count >= 1 {
                let v = type == 3 ? u16(table, vf) : u32(table, vf)
                if v >= store.length { layout.problem("tag 0x\(hex(tag)) points outside the structure (\(v))") }
            }
            if imageFile && tag == ExifTags.subIFDs && (type == 4 || type == 13) {
                let k = min(count, 16)
                if inline {
                    for j in 0..<min(k, inlineSize / 4) { result.subIFDs.append(u32(table, vf + 4 * j)) }
                } else if let v = try store.view(valueOffset, 4 * k) {
                    for j in 0..<k { result.subIFDs.append(u32(v, 4 * j)) }
                }
                continue
            }
            if imageFile && kind != .exif && kind != .gps {
                switch tag {
                case ExifTags.imageWidth: width = type == 3 ? u16(table, vf) : u32(table, vf); continue
                case ExifTags.imageLength: height = type == 3 ? u16(table, vf) : u32(table, vf); continue
                case ExifTags.newSubfileType: subfile = u32(table, vf); continue
                case ExifTags.dngVersion: if kind == .ifd0 { layout.hasDNGVersion = true }; continue
                case ExifTags.xmp:
                    if kind == .ifd0, !inline, byteCount <= Limits.maxRead, valueOffset + byteCount <= store.length {
                        layout.xmp = (valueOffset, byteCount)
                    }
                    continue
                case ExifTags.rw2Sensor where layout.magic == 0x55 && kind == .ifd0 && type == 3:
                    layout.rw2Sensor[Int(tag) - 2] = u16(table, vf); continue
                default: break
                }
            }
            if kind == .exif, tag == ExifTags.pixelXDimension || tag == ExifTags.pixelYDimension, type == 3 || type == 4, count >= 1 {
                let v = type == 3 ? u16(table, vf) : u32(table, vf)
                if tag == ExifTags.pixelXDimension { layout.exifPixel.width = v } else { layout.exifPixel.height = v }
                continue
            }
            if kind == .exif && tag == ExifTags.makerNote {
                if !inline, valueOffset + byteCount <= store.length { layout.makerNote = (valueOffset, byteCount) }
                continue
            }

            let wanted: Bool
            var target = kind
            switch kind {
            case .ifd0:
                if ExifTags.wantedInIFD0(tag) { wanted = true }
                // Some writers put EXIF dates in IFD0; they are read as the ExifIFD's.
                else if ExifTags.wantedInExif(tag) { wanted = true; target = .exif }
                else { wanted = false }
            case .image: wanted = false
            case .exif: wanted = ExifTags.wantedInExif(tag)
            case .gps: wanted = ExifTags.wantedInGPS(tag)
            }
            guard wanted else { continue }
            guard byteCount <= 65536 else {
                layout.problem("tag 0x\(hex(tag)) claims \(byteCount) bytes; ignored")
                continue
            }
            let value: ByteView
            if inline {
                value = table.slice(vf, byteCount)
            } else if let v = try store.view(valueOffset, byteCount) {
                value = v
            } else {
                layout.problem("value of tag 0x\(hex(tag)) lies outside the structure; ignored")
                continue
            }
            let entry = TIFFEntry(tag: tag, type: UInt16(type), count: UInt32(count), value: value)
            switch target {
            case .ifd0, .image: layout.ifd0.append(entry)
            case .exif:
                if !layout.exif.contains(where: { $0.tag == tag }) { layout.exif.append(entry) }
            case .gps: layout.gps.append(entry)
            }
        }
        if imageFile, kind == .ifd0 || kind == .image, let w = width, let h = height, w > 0, h > 0 {
            layout.images.append(TIFFImage(width: w, height: h, subfileType: subfile))
        }
        return result
    }
}

@inline(__always)
func hex(_ v: UInt16) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - s.count)) + s
}
