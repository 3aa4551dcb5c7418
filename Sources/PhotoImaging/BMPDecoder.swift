internal import CImaging

/// BMP, read here (no Debian library decodes it alone): every header version — OS/2 1.x's
/// 12-byte core header, OS/2 2.x's 16–64-byte one, Windows' 40-byte info header and its 52-,
/// 56-, 108- (V4) and 124-byte (V5) successors; 1-, 2-, 4- and 8-bit palettes, 16-bit 5-5-5,
/// 24-bit, 32-bit; bit-field masks (`BI_BITFIELDS`, `BI_ALPHABITFIELDS`, V3+ headers' alpha
/// mask); RLE8 and RLE4; bottom-up and top-down rows; a JPEG or PNG stored inside (`BI_JPEG`,
/// `BI_PNG`) is drawn by those decoders. A 32-bit `BI_RGB` file whose fourth bytes are all 0 is
/// opaque (most writers leave them 0); otherwise they are its alpha, as browsers take them.
///
/// Every read is checked against the buffer: a header or palette cut short, pixel data too
/// short for the claimed size (beyond a missing last row's padding) or RLE codes that run past
/// it are `corrupt`; a bit depth or compression this reader lacks (OS/2 Huffman, RLE24, 64-bit)
/// is `undecodable`. Limits: the size against the pixel limit before anything is decoded; the
/// CPU deadline every 64 rows. Pixels RLE codes skip over take the colour table's first entry.
enum BMPDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        let header = try Header(data)
        try request.checkLimit(header.size)
        switch header.compression {
        case .jpeg, .png:
            guard header.pixelOffset < data.count else { throw .corrupt("BMP: the embedded image lies past the end of the file") }
            let inner = UnsafeRawBufferPointer(rebasing: data[header.pixelOffset...])
            return header.compression == .jpeg ? try JPEGDecoder.render(inner, request, orientation)
                : try PNGDecoder.render(inner, request, orientation)
        default: break
        }
        let deadline = request.deadline()
        let (output, crop) = request.stored(header.size, orientation)
        let channels = header.hasAlpha ? 4 : 3
        let rows: RowSource
        if header.compression == .rle8 || header.compression == .rle4 {
            rows = .indices(try expandRLE(data, header, deadline))
        } else {
            rows = .stored
            // Each row is padded to 4 bytes; a file may omit the last row's padding.
            let needed = header.rowBytes * header.size.height - (header.rowBytes - (header.size.width * header.bitCount + 7) / 8)
            guard header.pixelOffset <= data.count, data.count - header.pixelOffset >= needed else {
                throw .corrupt("BMP: the pixel data is cut short (\(max(0, data.count - header.pixelOffset)) bytes of \(needed))")
            }
        }
        // A 32-bit BI_RGB file's fourth bytes are alpha only when one is not 0.
        let alphaFromFourthByte = header.bitCount == 32 && header.compression == .rgb && !allFourthBytesZero(data, header)
        let pixelChannels = channels == 4 || alphaFromFourthByte ? 4 : 3
        var timedOut = false
        let image: RenderedImage
        do {
            image = try Resample.streaming(size: header.size, channels: pixelChannels, crop: crop, output: output) { r in
                var row = [UInt8](repeating: 0, count: header.size.width * pixelChannels)
                for y in 0..<header.size.height {
                    if y & 63 == 63, deadline.expired {
                        timedOut = true
                        return "timeout"
                    }
                    // Rows are stored bottom-up unless the height is negative.
                    let stored = header.topDown ? y : header.size.height - 1 - y
                    row.withUnsafeMutableBufferPointer { out in
                        switch rows {
                        case .indices(let indices):
                            indices.withUnsafeBufferPointer { i in
                                let base = stored * header.size.width
                                for x in 0..<header.size.width {
                                    header.palette(Int(i[base + x]), into: out, at: x * pixelChannels, alpha: pixelChannels == 4)
                                }
                            }
                        case .stored:
                            header.decodeRow(data, stored, into: out, channels: pixelChannels, alphaFromFourthByte: alphaFromFourthByte)
                        }
                    }
                    row.withUnsafeBufferPointer { photo_resampler_push_row(r, $0.baseAddress) }
                }
                return nil
            }
        } catch {
            if timedOut { throw deadline.error("BMP") }
            throw error
        }
        return image.oriented(orientation)
    }

    enum RowSource {
        /// Uncompressed rows read from the file.
        case stored
        /// Palette indices of the whole image, rows as stored (RLE expanded).
        case indices([UInt8])
    }

    enum Compression: Equatable { case rgb, rle8, rle4, bitfields, jpeg, png }

    /// What the file and DIB headers say, checked.
    struct Header {
        var size: PixelSize
        var topDown: Bool
        var bitCount: Int
        var compression: Compression
        var pixelOffset: Int
        var rowBytes: Int
        /// RGB triples of the colour table (palette images), missing entries black.
        var colors: [UInt8] = []
        /// Masks of 16- and 32-bit pixels (red, green, blue, alpha; alpha 0: opaque).
        var masks: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)

        var hasAlpha: Bool { (bitCount == 16 || bitCount == 32) && compression != .rgb && masks.3 != 0 }

        init(_ d: UnsafeRawBufferPointer) throws(ImageError) {
            func le16(_ i: Int) -> Int { Int(d[i]) | Int(d[i + 1]) << 8 }
            func le32(_ i: Int) -> UInt32 { UInt32(le16(i)) | UInt32(le16(i + 2)) << 16 }
            guard d.count >= 18, d[0] == 0x42, d[1] == 0x4D else { throw .corrupt("BMP: no BMP header") }
            let dib = Int(le32(14))
            guard d.count >= 14 + min(dib, 40) else { throw .corrupt("BMP: the header is cut short") }
            pixelOffset = Int(le32(10))
            var width: Int, height: Int, colorsUsed = 0, paletteEntry = 4
            var rawCompression: UInt32 = 0
            let os2: Bool
            switch dib {
            case 12:
                width = le16(18); height = le16(20); bitCount = le16(24); paletteEntry = 3
                os2 = true
            case 40, 52, 56, 108, 124:
                width = Int(Int32(bitPattern: le32(18))); height = Int(Int32(bitPattern: le32(22))); bitCount = le16(28)
                rawCompression = le32(30)
                colorsUsed = Int(le32(46))
                os2 = false
            case 16...64:
                // OS/2 2.x: the 40-byte layout cut at any length from 16 bytes (fields absent are 0).
                width = Int(Int32(bitPattern: le32(18))); height = Int(Int32(bitPattern: le32(22))); bitCount = le16(28)
                if dib >= 20 { rawCompression = le32(30) }
                if dib >= 36 { colorsUsed = Int(le32(46)) }
                os2 = true
            default:
                throw .corrupt("BMP: unknown header size \(dib)")
            }
            guard width > 0, height != 0, height != Int(Int32.min) else { throw .corrupt("BMP: the header gives an empty size \(width)x\(height)") }
            topDown = height < 0
            size = PixelSize(width: width, height: abs(height))
            switch (rawCompression, os2) {
            case (0, _): compression = .rgb
            case (1, _): compression = .rle8
            case (2, _): compression = .rle4
            case (3, false), (6, false): compression = .bitfields
            case (4, false): compression = .jpeg
            case (5, false): compression = .png
            default:
                let name = switch (rawCompression, os2) {
                case (3, true): "Huffman 1D"
                case (4, true): "RLE24"
                default: "unknown"
                }
                throw .undecodable("BMP: \(os2 ? "OS/2 " : "")compression \(rawCompression) (\(name))")
            }
            if compression == .jpeg || compression == .png { rowBytes = 0; return }
            guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else { throw .undecodable("BMP: \(bitCount) bits a pixel") }
            if compression == .rle8, bitCount != 8 || topDown { throw .corrupt("BMP: RLE8 needs 8 bits a pixel, bottom-up") }
            if compression == .rle4, bitCount != 4 || topDown { throw .corrupt("BMP: RLE4 needs 4 bits a pixel, bottom-up") }
            if compression == .bitfields, bitCount != 16, bitCount != 32 { throw .corrupt("BMP: bit fields need 16 or 32 bits a pixel") }
            // Width is at most 2^31 and bitCount 32: no overflow.
            rowBytes = (width * bitCount + 31) / 32 * 4
            // Masks: inside V2+ headers, else right after the 40-byte header.
            if bitCount == 16 || bitCount == 32 {
                if compression == .bitfields {
                    let at = dib >= 52 ? 54 : 14 + dib
                    let n = dib >= 56 || rawCompression == 6 ? 4 : 3
                    guard d.count >= at + 4 * n else { throw .corrupt("BMP: the colour masks are cut short") }
                    masks = (le32(at), le32(at + 4), le32(at + 8), n == 4 ? le32(at + 12) : 0)
                } else if bitCount == 16 {
                    masks = (0x7C00, 0x03E0, 0x001F, 0)
                } else {
                    masks = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000)
                }
            }
            if bitCount <= 8 {
                let maxColors = 1 << bitCount
                let count = colorsUsed > 0 && colorsUsed < maxColors ? colorsUsed : maxColors
                let at = 14 + dib + (dib == 40 && compression == .bitfields ? 12 : 0)
                colors = [UInt8](repeating: 0, count: 3 * maxColors)
                for i in 0..<count {
                    let e = at + i * paletteEntry
                    guard e + 3 <= d.count else { break }  // a short table: the rest stays black
                    colors[3 * i] = d[e + 2]; colors[3 * i + 1] = d[e + 1]; colors[3 * i + 2] = d[e]
                }
            }
        }

        /// Writes palette entry `index` at `out[at...]`.
        @inline(__always)
        func palette(_ index: Int, into out: UnsafeMutableBufferPointer<UInt8>, at: Int, alpha: Bool) {
            let i = 3 * index
            out[at] = colors[i]; out[at + 1] = colors[i + 1]; out[at + 2] = colors[i + 2]
            if alpha { out[at + 3] = 255 }
        }

        /// Decodes stored row `y` (checked to lie in the buffer, but for a missing last padding).
        func decodeRow(_ d: UnsafeRawBufferPointer, _ y: Int, into out: UnsafeMutableBufferPointer<UInt8>, channels: Int,
                       alphaFromFourthByte: Bool) {
            let start = pixelOffset + y * rowBytes
            let row = UnsafeRawBufferPointer(rebasing: d[start..<min(d.count, start + rowBytes)])
            let w = size.width
            switch bitCount {
            case 1, 2, 4, 8:
                let perByte = 8 / bitCount, mask = (1 << bitCount) - 1
                for x in 0..<w {
                    let byte = Int(row[x / perByte])
                    let shift = 8 - bitCount * (x % perByte + 1)
                    palette(byte >> shift & mask, into: out, at: x * channels, alpha: channels == 4)
                }
            case 24:
                for x in 0..<w {
                    out[x * channels] = row[3 * x + 2]; out[x * channels + 1] = row[3 * x + 1]; out[x * channels + 2] = row[3 * x]
                    if channels == 4 { out[x * channels + 3] = 255 }
                }
            default:
                let bytes = bitCount / 8
                let fields = [Field(masks.0), Field(masks.1), Field(masks.2), Field(alphaFromFourthByte ? 0xFF00_0000 : masks.3)]
                for x in 0..<w {
                    var v: UInt32 = 0
                    for k in 0..<bytes { v |= UInt32(row[bytes * x + k]) << (8 * k) }
                    for c in 0..<3 { out[x * channels + c] = fields[c].value(v) }
                    if channels == 4 { out[x * channels + 3] = fields[3].mask == 0 ? 255 : fields[3].value(v) }
                }
            }
        }
    }

    /// One colour channel of a bit-field pixel, scaled to 8 bits.
    struct Field {
        let mask: UInt32, shift: UInt32, bits: UInt32
        init(_ mask: UInt32) {
            self.mask = mask
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            // The run of ones above the shift (a mask with holes keeps its lowest run).
            bits = mask == 0 ? 0 : UInt32((~(mask >> shift)).trailingZeroBitCount)
        }
        @inline(__always) func value(_ pixel: UInt32) -> UInt8 {
            guard bits > 0 else { return 0 }
            // The run's bits only: a mask with holes (0x0F0F) must not bring its upper bits.
            let v = (pixel >> shift) & (bits >= 32 ? UInt32.max : (UInt32(1) << bits) - 1)
            if bits >= 8 { return UInt8(truncatingIfNeeded: v >> (bits - 8)) }
            let top = (UInt32(1) << bits) - 1
            return UInt8((v * 255 + top / 2) / top)
        }
    }

    /// Whether every pixel's fourth byte of a 32-bit BI_RGB file is 0 (unused, not alpha).
    static func allFourthBytesZero(_ d: UnsafeRawBufferPointer, _ h: Header) -> Bool {
        for y in 0..<h.size.height {
            let start = h.pixelOffset + y * h.rowBytes
            for x in 0..<h.size.width where start + 4 * x + 3 < d.count && d[start + 4 * x + 3] != 0 { return false }
        }
        return true
    }

    /// Expands RLE8/RLE4 codes into one palette index a pixel (rows as stored, bottom-up);
    /// pixels the codes skip (a delta, an early end of line or bitmap) keep index 0.
    static func expandRLE(_ d: UnsafeRawBufferPointer, _ h: Header, _ deadline: CPUDeadline) throws(ImageError) -> [UInt8] {
        let w = h.size.width, ht = h.size.height
        let four = h.compression == .rle4
        var out = [UInt8](repeating: 0, count: w * ht)
        var x = 0, y = 0, p = h.pixelOffset
        var steps = 0
        func put(_ index: UInt8) {
            if x < w, y < ht { out[y * w + x] = index }
            x += 1
        }
        while true {
            steps += 1
            if steps & 0xFFFF == 0, deadline.expired { throw deadline.error("BMP") }
            guard p + 2 <= d.count else { throw .corrupt("BMP: the RLE data is cut short") }
            let count = Int(d[p]), code = d[p + 1]
            p += 2
            if count > 0 {
                // A run: `count` pixels of one index (RLE4: two alternating nibbles).
                for i in 0..<count { put(four ? (i & 1 == 0 ? code >> 4 : code & 15) : code) }
                continue
            }
            switch code {
            case 0: x = 0; y += 1  // end of line
            case 1: return out     // end of bitmap
            case 2:
                guard p + 2 <= d.count else { throw .corrupt("BMP: the RLE data is cut short") }
                x += Int(d[p]); y += Int(d[p + 1])
                p += 2
            default:
                // Absolute mode: `code` literal pixels, padded to 16 bits.
                let n = Int(code)
                let bytes = four ? (n + 1) / 2 : n
                guard p + bytes <= d.count else { throw .corrupt("BMP: the RLE data is cut short") }
                for i in 0..<n { put(four ? (i & 1 == 0 ? d[p + i / 2] >> 4 : d[p + i / 2] & 15) : d[p + i]) }
                p += bytes + (bytes & 1)
            }
            if y >= ht { return out }
        }
    }
}
