/// Still-image formats whose size sits in a fixed header: GIF, BMP, ICO, BPG, JPEG 2000 and
/// JPEG XL. Each reads only the header bytes it needs.
enum Stills {
    /// GIF: the logical screen size.
    static func gif(_ h: ByteView, _ meta: inout MediaMetadata) {
        guard h.count >= 10 else { meta.warnings.append("GIF header is cut off"); return }
        setSize(&meta, h.le16(6), h.le16(8))
    }

    /// GIF: how many frames (image descriptors) there are, counting up to `atLeast` (the walk
    /// stops there). The blocks are walked by their lengths in windows of the file; a first
    /// frame's data larger than `gifWalkLimit` ends the walk (then a NETSCAPE2.0 or ANIMEXTS1.0
    /// looping extension before it counts as animation, which is what it announces).
    static func gifFrames(_ input: inout Input, atLeast: Int) throws(MetadataError) -> Int {
        var window = try input.view(at: 0, upTo: min(Limits.maxRead, gifWalkLimit))
        var base: Int64 = 0
        var pos: Int64 = 13
        var frames = 0, looping = false
        // The byte at `at` of the file, the window moved forward when needed; nil at the end.
        func byte(_ at: Int64) throws(MetadataError) -> UInt8? {
            if at - base >= Int64(window.count) {
                guard at < Int64(gifWalkLimit), at < input.size else { return nil }
                base = at
                window = try input.view(at: at, upTo: min(Limits.maxRead, gifWalkLimit - Int(at)))
                if window.count == 0 { return nil }
            }
            return window[Int(at - base)]
        }
        // Skips a chain of sub-blocks starting at `pos`; false when it runs off the end.
        func skipSubBlocks() throws(MetadataError) -> Bool {
            while let n = try byte(pos) {
                pos += 1
                if n == 0 { return true }
                pos += Int64(n)
            }
            return false
        }
        guard let flags = try byte(10) else { return 0 }
        if flags & 0x80 != 0 { pos += 3 << (Int64(flags & 7) + 1) }
        while frames < atLeast, let introducer = try byte(pos) {
            switch introducer {
            case 0x2C:  // image descriptor: 9 bytes, a local colour table, the LZW code size, data
                frames += 1
                guard frames < atLeast else { return frames }
                guard let packed = try byte(pos + 9) else { return looping ? max(frames, atLeast) : frames }
                pos += 10
                if packed & 0x80 != 0 { pos += 3 << (Int64(packed & 7) + 1) }
                pos += 1
                guard try skipSubBlocks() else { return looping ? max(frames, atLeast) : frames }
            case 0x21:  // extension: a label, then sub-blocks
                if try byte(pos + 1) == 0xFF, try byte(pos + 2) == 11, let id = try input.view(at: pos + 3, count: 11),
                   id.matches("NETSCAPE2.0") || id.matches("ANIMEXTS1.0") {
                    looping = true
                }
                pos += 2
                guard try skipSubBlocks() else { return looping ? max(frames, atLeast) : frames }
            default:  // the trailer (0x3B) or damage
                return frames
            }
        }
        return frames
    }

    /// Bytes of a GIF walked for its frames, at most.
    static let gifWalkLimit = 16 << 20

    /// BMP: the DIB header's width and height (a negative height means top-down rows).
    static func bmp(_ h: ByteView, _ meta: inout MediaMetadata) {
        let dib = h.le32(14)
        if dib == 12 {
            guard h.count >= 22 else { meta.warnings.append("BMP header is cut off"); return }
            setSize(&meta, h.le16(18), h.le16(20))
        } else {
            guard h.count >= 26 else { meta.warnings.append("BMP header is cut off"); return }
            let w = Int(Int32(bitPattern: h.le32(18)))
            let hh = Int(Int32(bitPattern: h.le32(22)))
            setSize(&meta, abs(w), abs(hh))
        }
    }

    /// ICO: the largest of the icon directory's images (a stored 0 means 256).
    static func ico(_ h: ByteView, _ meta: inout MediaMetadata) {
        let n = min(h.le16(4), 256)
        var best = (0, 0)
        for i in 0..<n {
            let e = 6 + 16 * i
            guard h.has(e, 16) else { break }
            let w = h[e] == 0 ? 256 : Int(h[e]), hh = h[e + 1] == 0 ? 256 : Int(h[e + 1])
            if w * hh > best.0 * best.1 { best = (w, hh) }
        }
        if best.0 > 0 { setSize(&meta, best.0, best.1) }
    }

    /// BPG: two ue7 numbers after the format bytes.
    static func bpg(_ h: ByteView, _ meta: inout MediaMetadata) {
        var i = 6
        func ue7() -> Int? {
            var v = 0
            for _ in 0..<5 {
                guard i < h.count else { return nil }
                let b = h[i]; i += 1
                v = v << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { return v }
            }
            return nil
        }
        guard let w = ue7(), let hh = ue7() else { meta.warnings.append("BPG header is cut off"); return }
        setSize(&meta, w, hh)
    }

    /// A JPEG 2000 codestream's SIZ segment: image size minus the image offset.
    static func j2kCodestream(_ h: ByteView, _ meta: inout MediaMetadata) {
        guard h.count >= 6 + 16 + 2 else { meta.warnings.append("JPEG 2000 codestream is cut off"); return }
        let x = Int(h.be32(8)), y = Int(h.be32(12)), x0 = Int(h.be32(16)), y0 = Int(h.be32(20))
        setSize(&meta, x - x0, y - y0)
    }

    /// A JPEG XL codestream's SizeHeader (a bit-packed structure after `FF 0A`).
    static func jxlCodestream(_ v: ByteView, _ meta: inout MediaMetadata) {
        var r = BitReader(v, start: 2)
        guard let small = r.bits(1) else { return }
        var height = 0, width = 0
        func u32() -> Int? {
            guard let sel = r.bits(2) else { return nil }
            let widths = [9, 13, 18, 30]
            return r.bits(widths[sel])
        }
        if small == 1 {
            guard let y = r.bits(5) else { return }
            height = (y + 1) * 8
        } else {
            guard let y = u32() else { return }
            height = y + 1
        }
        guard let ratio = r.bits(3) else { return }
        if ratio == 0 {
            if small == 1 {
                guard let x = r.bits(5) else { return }
                width = (x + 1) * 8
            } else {
                guard let x = u32() else { return }
                width = x + 1
            }
        } else {
            let ratios = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)]
            let (num, den) = ratios[ratio - 1]
            width = height * num / den
        }
        setSize(&meta, width, height)
    }

    static func setSize(_ meta: inout MediaMetadata, _ w: Int, _ h: Int) {
        guard w > 0, h > 0 else { return }
        meta.pixelWidth = w
        meta.pixelHeight = h
    }
}

/// Reads bits least-significant first (JPEG XL's order).
struct BitReader {
    let view: ByteView
    var bit: Int

    init(_ view: ByteView, start: Int) {
        self.view = view
        self.bit = start * 8
    }

    mutating func bits(_ n: Int) -> Int? {
        var v = 0
        for k in 0..<n {
            let byte = bit >> 3
            guard byte < view.count else { return nil }
            v |= Int(view[byte] >> UInt8(bit & 7) & 1) << k
            bit += 1
        }
        return v
    }
}
