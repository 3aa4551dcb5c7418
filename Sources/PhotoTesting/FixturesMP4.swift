/// A minimal ISO BMFF movie (MP4/MOV): `ftyp`, optional `mdat` before or after `moov`, and
/// `moov` with `mvhd`, one `trak` (`tkhd` with size and rotation matrix, `mdia` with `mdhd`
/// and an `hdlr` of the chosen handler), optional Apple metadata (`meta`/`keys`/`ilst`) and an
/// optional `udta`/`©xyz` location. The media data is zeros.
public struct MP4Fixture: Sendable, Hashable {
    /// The `ftyp` major brand (`isom`, `qt  `, `M4A `, `3gp5`, ...).
    public var majorBrand: String
    /// The `ftyp` compatible brands.
    public var compatibleBrands: [String]
    /// The track handler: `vide` for video, `soun` for audio only; `nil` writes no track.
    public var handler: String?
    /// The track width written in `tkhd`.
    public var width: Int
    /// The track height written in `tkhd`.
    public var height: Int
    /// Track rotation in degrees (0, 90, 180, 270), written as the `tkhd` matrix.
    public var rotation: Int
    /// The `mvhd` creation time in Unix seconds (written as seconds since 1904); `nil` writes 0.
    public var creationTime: Int64?
    /// Units per second of `mvhd` and `mdhd`.
    public var timescale: UInt32
    /// Duration in timescale units.
    public var duration: UInt32
    /// Apple `mdta` keys and their UTF-8 values (`com.apple.quicktime.creationdate`, ...).
    public var appleKeys: [String: String]
    /// An ISO 6709 location for `udta`/`©xyz` (`+37.3349-122.0090+010.000/`).
    public var location: String?
    /// Bytes of media data.
    public var mediaDataBytes: Int64
    /// Writes `mdat` before `moov` (as cameras do), so a reader must seek past it.
    public var mediaDataFirst: Bool

    /// A movie fixture.
    public init(majorBrand: String = "isom", compatibleBrands: [String] = ["isom", "mp42"], handler: String? = "vide",
                width: Int = 1920, height: Int = 1080, rotation: Int = 0, creationTime: Int64? = nil, timescale: UInt32 = 600,
                duration: UInt32 = 600, appleKeys: [String: String] = [:], location: String? = nil,
                mediaDataBytes: Int64 = 64, mediaDataFirst: Bool = false) {
        self.majorBrand = majorBrand
        self.compatibleBrands = compatibleBrands
        self.handler = handler
        self.width = width
        self.height = height
        self.rotation = rotation
        self.creationTime = creationTime
        self.timescale = timescale
        self.duration = duration
        self.appleKeys = appleKeys
        self.location = location
        self.mediaDataBytes = mediaDataBytes
        self.mediaDataFirst = mediaDataFirst
    }

    /// The file as pieces at offsets, with the total size; the gaps are `mdat` payload (zeros).
    /// Write the pieces into a sparse file to test a huge `mdat` without allocating it.
    public func pieces() -> (size: Int64, pieces: [(offset: Int64, bytes: [UInt8])]) {
        let ftyp = box("ftyp", fourCC(majorBrand) + be32(0) + compatibleBrands.flatMap(fourCC))
        let moov = movie()
        let large = mediaDataBytes + 8 > Int64(UInt32.max)
        let mdatHeader: [UInt8] = large
            ? be32(1) + Array("mdat".utf8) + be64(UInt64(mediaDataBytes + 16))
            : be32(Int(mediaDataBytes + 8)) + Array("mdat".utf8)
        let mdatTotal = Int64(mdatHeader.count) + mediaDataBytes
        if mediaDataFirst {
            let moovAt = Int64(ftyp.count) + mdatTotal
            return (moovAt + Int64(moov.count), [(0, ftyp + mdatHeader), (moovAt, moov)])
        }
        let mdatAt = Int64(ftyp.count + moov.count)
        return (mdatAt + mdatTotal, [(0, ftyp + moov + mdatHeader)])
    }

    /// The file's bytes (for modest `mediaDataBytes`).
    public func bytes() -> [UInt8] {
        let (size, pieces) = pieces()
        var out = [UInt8](repeating: 0, count: Int(size))
        for (offset, bytes) in pieces { out.replaceSubrange(Int(offset)..<(Int(offset) + bytes.count), with: bytes) }
        return out
    }

    func movie() -> [UInt8] {
        let created = UInt32(truncatingIfNeeded: (creationTime ?? -2_082_844_800) + 2_082_844_800)
        let unity: [UInt8] = be32(0x0001_0000)
        let identity = unity + be32(0) + be32(0) + be32(0) + unity + be32(0) + be32(0) + be32(0) + be32(0x4000_0000)
        let mvhd = fullBox("mvhd", be32(Int(created)) + be32(Int(created)) + be32(Int(timescale)) + be32(Int(duration))
            + be32(0x0001_0000) + [1, 0] + [UInt8](repeating: 0, count: 10) + identity
            + [UInt8](repeating: 0, count: 24) + be32(2))
        var children = mvhd
        if let handler {
            let (a, b, c, d): (Int32, Int32, Int32, Int32)
            switch rotation {
            case 90: (a, b, c, d) = (0, 0x10000, -0x10000, 0)
            case 180: (a, b, c, d) = (-0x10000, 0, 0, -0x10000)
            case 270: (a, b, c, d) = (0, -0x10000, 0x10000, 0)
            default: (a, b, c, d) = (0x10000, 0, 0, 0x10000)
            }
            let matrix = be32s(a) + be32s(b) + be32(0) + be32s(c) + be32s(d) + be32(0) + be32(0) + be32(0) + be32(0x4000_0000)
            let tkhd = fullBox("tkhd", be32(Int(created)) + be32(Int(created)) + be32(1) + be32(0) + be32(Int(duration))
                + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0] + [0, 0, 0, 0] + matrix
                + be32(width << 16) + be32(height << 16), flags: 3)
            let mdhd = fullBox("mdhd", be32(Int(created)) + be32(Int(created)) + be32(Int(timescale)) + be32(Int(duration)) + [0x55, 0xC4, 0, 0])
            let hdlr = fullBox("hdlr", be32(0) + fourCC(handler) + [UInt8](repeating: 0, count: 12) + Array("Handler".utf8) + [0])
            let mdia = box("mdia", mdhd + hdlr + box("minf", box("stbl", [])))
            children += box("trak", tkhd + mdia)
        }
        if !appleKeys.isEmpty {
            let sorted = appleKeys.sorted { $0.key < $1.key }
            let hdlr = fullBox("hdlr", be32(0) + Array("mdta".utf8) + [UInt8](repeating: 0, count: 12) + [0])
            var keys = be32(0) + be32(sorted.count)
            var items: [UInt8] = []
            for (i, (key, value)) in sorted.enumerated() {
                keys += be32(8 + key.utf8.count) + Array("mdta".utf8) + Array(key.utf8)
                let data = box("data", be32(1) + be32(0) + Array(value.utf8))
                items += be32(8 + data.count) + be32(i + 1) + data
            }
            // QuickTime's `meta` is a plain box (no version and flags).
            children += box("meta", hdlr + box("keys", keys) + box("ilst", items))
        }
        if let location {
            let text = Array(location.utf8)
            children += box("udta", xyzBox(text))
        }
        return box("moov", children)
    }

    func xyzBox(_ text: [UInt8]) -> [UInt8] {
        let payload = [UInt8(text.count >> 8), UInt8(text.count & 0xFF), 0x15, 0xC7] + text
        return be32(8 + payload.count) + [0xA9, 0x78, 0x79, 0x7A] + payload
    }

    func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + fourCC(type) + payload }
    func fullBox(_ type: String, _ payload: [UInt8], flags: Int = 0) -> [UInt8] {
        box(type, [0, UInt8(flags >> 16 & 0xFF), UInt8(flags >> 8 & 0xFF), UInt8(flags & 0xFF)] + payload)
    }
    func fourCC(_ s: String) -> [UInt8] { Array((Array(s.utf8) + [0x20, 0x20, 0x20, 0x20]).prefix(4)) }
    func be32s(_ v: Int32) -> [UInt8] { be32(Int(UInt32(bitPattern: v))) }
    func be64(_ v: UInt64) -> [UInt8] { be32(Int(v >> 32)) + be32(Int(v & 0xFFFF_FFFF)) }
}
