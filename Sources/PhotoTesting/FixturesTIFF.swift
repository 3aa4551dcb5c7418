/// The byte order of a hand-built TIFF/EXIF structure.
public enum FixtureByteOrder: Sendable, Hashable {
    /// `II`, Intel, least significant byte first.
    case little
    /// `MM`, Motorola, most significant byte first.
    case big
}

/// A TIFF field value as a fixture writes it (encoded in the structure's byte order).
public enum TIFFValue: Sendable, Hashable {
    /// ASCII, NUL-terminated by the builder.
    case ascii(String)
    /// BYTE values.
    case byte([UInt8])
    /// UNDEFINED bytes.
    case undefined([UInt8])
    /// SHORT values.
    case short([UInt16])
    /// LONG values.
    case long([UInt32])
    /// RATIONAL values as numerator/denominator pairs.
    case rational([UInt32])
    /// SRATIONAL values as numerator/denominator pairs.
    case srational([Int32])
    /// An entry written verbatim: its type, count and the 4-byte value field (an offset that may
    /// lie, a wrong type); for building broken structures.
    case raw(type: UInt16, count: UInt32, field: UInt32)
}

/// A hand-built TIFF structure: IFD0, optional ExifIFD, GPS IFD and IFD1, laid out in that
/// order after optional padding. Pointer entries (0x8769, 0x8825) are added by the builder.
/// `bytes()` is a pure function, so tests and generators can make thousands of variants.
public struct TIFFFixture: Sendable, Hashable {
    /// One IFD entry.
    public struct Field: Sendable, Hashable {
        /// The tag number.
        public var tag: UInt16
        /// The typed value.
        public var value: TIFFValue
        /// A field with a tag and value.
        public init(_ tag: UInt16, _ value: TIFFValue) {
            self.tag = tag
            self.value = value
        }
    }

    /// The structure's byte order.
    public var byteOrder: FixtureByteOrder
    /// IFD0's fields (pointers to the other IFDs are added by `bytes()`).
    public var ifd0: [Field]
    /// The ExifIFD's fields; `nil` for no ExifIFD (and no pointer to it).
    public var exif: [Field]?
    /// The GPS IFD's fields; `nil` for no GPS IFD.
    public var gps: [Field]?
    /// IFD1's fields (a thumbnail's description); `nil` for none.
    public var ifd1: [Field]?
    /// Zero bytes between the 8-byte header and IFD0, standing for image data a writer put
    /// first (libtiff); more than 64 KiB puts the IFDs beyond libexif's reach.
    public var padding: Int
    /// Whether entries are sorted by tag (TIFF requires it; set false to build a careless writer's IFD).
    public var sortEntries: Bool

    /// A structure with the given IFDs.
    public init(byteOrder: FixtureByteOrder = .little, ifd0: [Field] = [], exif: [Field]? = nil, gps: [Field]? = nil,
                ifd1: [Field]? = nil, padding: Int = 0, sortEntries: Bool = true) {
        self.byteOrder = byteOrder
        self.ifd0 = ifd0
        self.exif = exif
        self.gps = gps
        self.ifd1 = ifd1
        self.padding = padding
        self.sortEntries = sortEntries
    }

    /// The TIFF structure, starting with the byte-order mark (`II*\0` or `MM\0*`).
    public func bytes() -> [UInt8] {
        var w = TIFFWriter(byteOrder: byteOrder)
        w.bytes += byteOrder == .little ? [0x49, 0x49, 0x2A, 0x00] : [0x4D, 0x4D, 0x00, 0x2A]
        let ifd0At = 8 + padding
        w.u32(UInt32(ifd0At))
        w.bytes += [UInt8](repeating: 0, count: padding)

        var main = ifd0
        // Placeholders for the pointers; their values are patched once the offsets are known.
        if exif != nil { main.append(Field(0x8769, .long([0]))) }
        if gps != nil { main.append(Field(0x8825, .long([0]))) }
        let ifd0Size = TIFFWriter.size(of: main)
        let exifAt = ifd0At + ifd0Size
        let gpsAt = exifAt + (exif.map { TIFFWriter.size(of: $0) } ?? 0)
        let ifd1At = gpsAt + (gps.map { TIFFWriter.size(of: $0) } ?? 0)
        main = main.map { f in
            if f.tag == 0x8769, case .long([0]) = f.value { return Field(0x8769, .long([UInt32(exifAt)])) }
            if f.tag == 0x8825, case .long([0]) = f.value { return Field(0x8825, .long([UInt32(gpsAt)])) }
            return f
        }
        w.ifd(main, at: ifd0At, next: ifd1 == nil ? 0 : UInt32(ifd1At), sort: sortEntries)
        if let exif { w.ifd(exif, at: exifAt, next: 0, sort: sortEntries) }
        if let gps { w.ifd(gps, at: gpsAt, next: 0, sort: sortEntries) }
        if let ifd1 { w.ifd(ifd1, at: ifd1At, next: 0, sort: sortEntries) }
        return w.bytes
    }
}

/// Encodes TIFF IFDs: the entry table, then the values that do not fit in 4 bytes.
struct TIFFWriter {
    let byteOrder: FixtureByteOrder
    var bytes: [UInt8] = []

    init(byteOrder: FixtureByteOrder) { self.byteOrder = byteOrder }

    mutating func u16(_ v: UInt16) {
        if byteOrder == .little { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] } else { bytes += [UInt8(v >> 8), UInt8(v & 0xFF)] }
    }

    mutating func u32(_ v: UInt32) {
        if byteOrder == .little { bytes += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        else { bytes += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    }

    /// Type, count and encoded value bytes of a field.
    func encode(_ value: TIFFValue) -> (type: UInt16, count: UInt32, data: [UInt8]) {
        var w = TIFFWriter(byteOrder: byteOrder)
        switch value {
        case .ascii(let s):
            return (2, UInt32(s.utf8.count + 1), Array(s.utf8) + [0])
        case .byte(let b): return (1, UInt32(b.count), b)
        case .undefined(let b): return (7, UInt32(b.count), b)
        case .short(let v): v.forEach { w.u16($0) }; return (3, UInt32(v.count), w.bytes)
        case .long(let v): v.forEach { w.u32($0) }; return (4, UInt32(v.count), w.bytes)
        case .rational(let v): v.forEach { w.u32($0) }; return (5, UInt32(v.count / 2), w.bytes)
        case .srational(let v): v.forEach { w.u32(UInt32(bitPattern: $0)) }; return (10, UInt32(v.count / 2), w.bytes)
        case .raw(let type, let count, _): return (type, count, [])
        }
    }

    static func size(of fields: [TIFFFixture.Field]) -> Int {
        let w = TIFFWriter(byteOrder: .little)
        var n = 2 + 12 * fields.count + 4
        for f in fields {
            if case .raw = f.value { continue }
            let d = w.encode(f.value).data
            if d.count > 4 { n += d.count + (d.count & 1) }
        }
        return n
    }

    mutating func ifd(_ fields: [TIFFFixture.Field], at offset: Int, next: UInt32, sort: Bool) {
        precondition(bytes.count == offset, "IFD layout out of step")
        let list = sort ? fields.sorted { $0.tag < $1.tag } : fields
        u16(UInt16(list.count))
        var dataAt = offset + 2 + 12 * list.count + 4
        var tail: [UInt8] = []
        for f in list {
            u16(f.tag)
            if case .raw(let type, let count, let field) = f.value {
                u16(type); u32(count); u32(field)
                continue
            }
            let (type, count, data) = encode(f.value)
            u16(type)
            u32(count)
            if data.count <= 4 {
                bytes += data + [UInt8](repeating: 0, count: 4 - data.count)
            } else {
                u32(UInt32(dataAt))
                tail += data
                if data.count & 1 == 1 { tail.append(0) }
                dataAt += data.count + (data.count & 1)
            }
        }
        u32(next)
        bytes += tail
    }
}
