#if canImport(Glibc)
import Glibc
#endif
import PhotoMetadata

/// The layout of a JPEG, found by walking its marker segments (no decoding): the frame header,
/// the EXIF block, and where the entropy-coded data starts and ends. Pure and bounded: every
/// loop advances and stops at the end of the buffer, so any byte string is safe input.
struct JPEGStructure: Sendable, Hashable {
    /// SOFn marker (0xC0 baseline, 0xC2 progressive, 0xC9... arithmetic).
    var frameMarker: UInt8 = 0
    /// Bits per sample (8 in nearly every JPEG; 12 in some medical and scanner files).
    var precision = 0
    /// Frame size as the SOF claims it.
    var width = 0
    var height = 0
    /// Blocks of the component with the fewest (from the sampling factors): every one of
    /// them is coded with at least one bit in a Huffman-coded JPEG.
    var minimumBlocks = 0
    /// The TIFF block of the first APP1 `Exif\0\0` segment (offset, count) in the buffer.
    var exif: Range<Int>?
    /// Offset of the first SOS marker.
    var scanStart: Int?
    /// Offset just past the EOI marker that ends the first image, when present.
    var end: Int?

    /// Whether the frame is Huffman-coded (arithmetic coding can spend under a bit a block).
    var isHuffman: Bool { frameMarker >= 0xC0 && frameMarker <= 0xC7 }

    /// Why libjpeg-turbo (8-bit, as Debian builds it) cannot decode this valid JPEG, or nil
    /// when it can: what makes the file an asset whose image requests fail `undecodable`
    /// rather than a damaged file.
    var undecodableReason: String? {
        guard frameMarker != 0 else { return nil }
        if height == 0, width > 0 {
            return "its frame header leaves the height to a DNL segment after the first scan (ITU T.81), which libjpeg does not support"
        }
        switch frameMarker {
        case 0xC0, 0xC1, 0xC2, 0xC9, 0xCA: break
        case 0xC3, 0xCB: return "it is a lossless JPEG (SOF\(frameMarker - 0xC0)), which libjpeg-turbo 2.1 does not decode"
        default: return "it is a hierarchical JPEG (SOF\(frameMarker - 0xC0)), which libjpeg does not decode"
        }
        if precision != 8 { return "its samples have \(precision) bits, and the decoder here reads 8-bit JPEGs only" }
        return nil
    }

    /// Walks `bytes` (a whole file or its head). With `findEnd`, also scans the entropy-coded
    /// data for the EOI marker (a `memchr`-like pass over the file).
    init(_ bytes: UnsafeRawBufferPointer, findEnd: Bool) {
        let n = bytes.count
        guard n >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        func be16(_ i: Int) -> Int { Int(bytes[i]) << 8 | Int(bytes[i + 1]) }
        var pos = 2
        var sawFrame = false
        while pos + 4 <= n {
            guard bytes[pos] == 0xFF, bytes[pos + 1] != 0x00 else {
                // Stray bytes between segments: skipped to the next marker, as libjpeg does.
                guard let next = JPEGMarkers.next(in: bytes, from: pos) else { return }
                pos = next
                continue
            }
            let marker = bytes[pos + 1]
            if marker == 0xFF { pos += 1; continue }
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { pos += 2; continue }
            if marker == 0xD9 { end = pos + 2; return }
            let length = be16(pos + 2)
            guard length >= 2 else { return }
            let payload = pos + 4
            let payloadEnd = payload + length - 2
            if marker == 0xDA {
                scanStart = pos
                if findEnd { end = Self.findEOI(bytes, from: min(payloadEnd, n)) }
                return
            }
            switch marker {
            case 0xE1 where exif == nil:
                if payloadEnd <= n, length - 2 >= 14, bytes[payload] == 0x45, bytes[payload + 1] == 0x78,
                   bytes[payload + 2] == 0x69, bytes[payload + 3] == 0x66, bytes[payload + 4] == 0, bytes[payload + 5] == 0 {
                    exif = (payload + 6)..<payloadEnd
                }
            case _ where JPEGMarkers.isFrameHeader(marker) && !sawFrame:
                sawFrame = true
                guard payload + 6 <= n else { return }
                frameMarker = marker
                precision = Int(bytes[payload])
                height = be16(payload + 1)
                width = be16(payload + 3)
                let components = Int(bytes[payload + 5])
                guard components > 0, payload + 6 + 3 * components <= n else { return }
                var hMax = 1, vMax = 1
                for c in 0..<components {
                    let s = bytes[payload + 6 + 3 * c + 1]
                    hMax = max(hMax, Int(s >> 4)); vMax = max(vMax, Int(s & 15))
                }
                var fewest = Int.max
                for c in 0..<components {
                    let s = bytes[payload + 6 + 3 * c + 1]
                    let h = max(1, Int(s >> 4)), v = max(1, Int(s & 15))
                    let cw = (width * h + hMax - 1) / hMax, ch = (height * v + vMax - 1) / vMax
                    fewest = min(fewest, ((cw + 7) / 8) * ((ch + 7) / 8))
                }
                minimumBlocks = fewest
            default:
                break
            }
            pos = payloadEnd
        }
    }

    /// The offset just past the first EOI after `from`. Inside entropy-coded data 0xFF is
    /// followed by 0x00 (stuffing) or a marker (RSTn, or DHT/SOS/... between progressive
    /// scans), never by 0xD9 except at the end of the image.
    static func findEOI(_ bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        let n = bytes.count
        guard let base = bytes.baseAddress, from >= 0 else { return nil }
        var i = from
        while i + 1 < n {
            // memchr: about 1 ns a byte faster than a Swift byte loop over a few megabytes.
            guard let hit = memchr(base + i, 0xFF, n - 1 - i) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit))
            if bytes[at + 1] == 0xD9 { return at + 2 }
            i = at + 1
        }
        return nil
    }
}

/// The EXIF block's IFD1 (the thumbnail's IFD): where its JPEG lies inside the TIFF block.
enum ExifThumbnailLocator {
    /// The (offset, length) of the IFD1 JPEG (tags 0x0201/0x0202) in `tiff`, validated to lie
    /// inside it; `nil` when there is none. Bounded: two IFDs, at most 512 entries each.
    static func locate(_ tiff: UnsafeRawBufferPointer) -> Range<Int>? {
        let n = tiff.count
        guard n >= 8 else { return nil }
        let little: Bool
        if tiff[0] == 0x49, tiff[1] == 0x49 { little = true } else if tiff[0] == 0x4D, tiff[1] == 0x4D { little = false } else { return nil }
        func u16(_ i: Int) -> Int { little ? Int(tiff[i]) | Int(tiff[i + 1]) << 8 : Int(tiff[i]) << 8 | Int(tiff[i + 1]) }
        func u32(_ i: Int) -> Int {
            little ? Int(tiff[i]) | Int(tiff[i + 1]) << 8 | Int(tiff[i + 2]) << 16 | Int(tiff[i + 3]) << 24
                : Int(tiff[i]) << 24 | Int(tiff[i + 1]) << 16 | Int(tiff[i + 2]) << 8 | Int(tiff[i + 3])
        }
        let ifd0 = u32(4)
        guard ifd0 >= 8, ifd0 + 2 <= n else { return nil }
        let count0 = u16(ifd0)
        guard count0 <= 512, ifd0 + 2 + 12 * count0 + 4 <= n else { return nil }
        let ifd1 = u32(ifd0 + 2 + 12 * count0)
        guard ifd1 >= 8, ifd1 != ifd0, ifd1 + 2 <= n else { return nil }
        let count1 = u16(ifd1)
        guard count1 <= 512, ifd1 + 2 + 12 * count1 <= n else { return nil }
        var offset: Int?, length: Int?
        for i in 0..<count1 {
            let e = ifd1 + 2 + 12 * i
            let tag = u16(e), type = u16(e + 2)
            let value = type == 3 ? u16(e + 8) : u32(e + 8)
            if tag == 0x0201 { offset = value }
            if tag == 0x0202 { length = value }
        }
        guard let offset, let length, length >= 4, offset >= 8, offset <= n, length <= n - offset else { return nil }
        return offset..<(offset + length)
    }
}
