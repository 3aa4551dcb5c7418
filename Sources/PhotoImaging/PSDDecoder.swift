internal import CImaging

/// A Photoshop document's merged image, read here (no Debian library decodes PSD alone): the
/// image data section at the end of a PSD (version 1) or PSB (2), which Photoshop writes as the
/// composite of every layer ("Maximize Compatibility"). Layers are not composed. The section
/// follows the header, the colour mode data, the image resources and the layer and mask
/// information (each skipped by its length), and holds every channel's plane in turn, each row
/// raw or PackBits (RLE) — a byte count per row of every channel first (2 bytes each in a PSD,
/// 4 in a PSB).
///
/// Supported: 8- and 16-bit samples (16-bit taken by their high byte) in grey (and duotone, whose
/// data is grey), indexed (the colour mode data's 256-entry table), RGB and CMYK (Photoshop
/// stores ink inverted: 255 is none); extra channels (alpha, spot colours) are left out, so the
/// image is opaque. 1-bit bitmaps, 32-bit samples, Lab and multichannel documents, and ZIP
/// compression are `undecodable`; a section cut short or RLE rows that overrun are `corrupt`.
/// Limits: the size against the pixel limit before anything is decoded; the CPU deadline every
/// 64 rows.
enum PSDDecoder {
    static func render(_ data: UnsafeRawBufferPointer, _ request: Request, _ orientation: Orientation) throws(ImageError) -> RenderedImage {
        let header = try Header(data)
        try request.checkLimit(header.size)
        let planes = try Planes(data, header)
        let deadline = request.deadline()
        let (output, crop) = request.stored(header.size, orientation)
        var timedOut = false
        var failure: String?
        let image: RenderedImage
        do {
            image = try Resample.streaming(size: header.size, channels: 3, crop: crop, output: output) { r in
                let width = header.size.width
                let sampleBytes = header.depth / 8
                var samples = [[UInt8]](repeating: [UInt8](repeating: 0, count: width * sampleBytes), count: header.colorChannels)
                var row = [UInt8](repeating: 0, count: width * 3)
                for y in 0..<header.size.height {
                    if y & 63 == 63, deadline.expired {
                        timedOut = true
                        return "timeout"
                    }
                    for c in 0..<header.colorChannels {
                        if let problem = planes.row(channel: c, y, data, into: &samples[c]) {
                            failure = problem
                            return problem
                        }
                    }
                    header.convert(samples, into: &row)
                    row.withUnsafeBufferPointer { photo_resampler_push_row(r, $0.baseAddress) }
                }
                return nil
            }
        } catch {
            if timedOut { throw deadline.error("PSD") }
            if let failure { throw .corrupt("PSD: \(failure)") }
            throw error
        }
        return image.oriented(orientation)
    }

    enum Mode: Equatable { case grey, indexed, rgb, cmyk }

    /// What the header and the colour mode data say, checked.
    struct Header {
        var size: PixelSize
        var channels: Int
        var depth: Int
        var mode: Mode
        /// A PSB (version 2): 8-byte section lengths in places, 4-byte RLE counts.
        var large: Bool
        /// The offset of the image resources section's length.
        var resourcesAt: Int
        /// The indexed mode's table: 256 reds, 256 greens, 256 blues.
        var palette: [UInt8] = []

        /// The channels the colour is made of (the rest are alpha and spot channels).
        var colorChannels: Int {
            switch mode {
            case .grey, .indexed: return 1
            case .rgb: return 3
            case .cmyk: return 4
            }
        }

        init(_ d: UnsafeRawBufferPointer) throws(ImageError) {
            guard d.count >= 26, d[0] == 0x38, d[1] == 0x42, d[2] == 0x50, d[3] == 0x53 else {
                throw .corrupt("PSD: no Photoshop header")
            }
            let version = be(d, 4, 2)
            guard version == 1 || version == 2 else { throw .corrupt("PSD: unknown version \(version)") }
            large = version == 2
            channels = be(d, 12, 2)
            let height = be(d, 14, 4), width = be(d, 18, 4)
            depth = be(d, 22, 2)
            let rawMode = be(d, 24, 2)
            guard (1...56).contains(channels) else { throw .corrupt("PSD: \(channels) channels (1 to 56 are allowed)") }
            guard width > 0, height > 0 else { throw .corrupt("PSD: the header gives an empty size \(width)x\(height)") }
            size = PixelSize(width: width, height: height)
            switch rawMode {
            case 1, 8: mode = .grey  // grey; duotone, whose image data is grey
            case 2: mode = .indexed
            case 3: mode = .rgb
            case 4: mode = .cmyk
            case 0: throw .undecodable("PSD: 1-bit bitmap documents are not rendered")
            case 7: throw .undecodable("PSD: multichannel documents are not rendered")
            case 9: throw .undecodable("PSD: Lab documents are not rendered")
            default: throw .corrupt("PSD: unknown colour mode \(rawMode)")
            }
            guard depth == 8 || depth == 16 else {
                throw depth == 1 || depth == 32 ? .undecodable("PSD: \(depth)-bit samples are not rendered")
                    : .corrupt("PSD: unknown bit depth \(depth)")
            }
            let modeDataLength = try Self.length(d, at: 26, bytes: 4)
            resourcesAt = 30 + modeDataLength
            guard resourcesAt <= d.count else { throw .corrupt("PSD: the colour mode data runs past the end of the file") }
            if mode == .indexed {
                guard modeDataLength >= 768 else { throw .corrupt("PSD: an indexed document without its colour table") }
                palette = Array(UnsafeRawBufferPointer(rebasing: d[30..<(30 + 768)]))
            }
            guard channels >= colorChannels else {
                throw .corrupt("PSD: \(channels) channels, fewer than its colour mode needs (\(colorChannels))")
            }
        }

        /// A big-endian section length at `at` (`bytes` long), checked to fit the buffer.
        static func length(_ d: UnsafeRawBufferPointer, at: Int, bytes: Int) throws(ImageError) -> Int {
            guard at >= 0, at <= d.count - bytes else { throw .corrupt("PSD: the file ends inside its sections' lengths") }
            var v: UInt64 = 0
            for i in 0..<bytes { v = v << 8 | UInt64(d[at + i]) }
            guard v <= UInt64(d.count) else { throw .corrupt("PSD: a section claims \(v) bytes, more than the file holds") }
            return Int(v)
        }

        /// One row's colour channels (samples as stored) as RGB.
        func convert(_ samples: [[UInt8]], into out: inout [UInt8]) {
            let step = depth / 8  // 16-bit: the high (first) byte
            out.withUnsafeMutableBufferPointer { o in
                switch mode {
                case .grey:
                    samples[0].withUnsafeBufferPointer { g in
                        for x in 0..<size.width {
                            let v = g[x * step]
                            o[x * 3] = v; o[x * 3 + 1] = v; o[x * 3 + 2] = v
                        }
                    }
                case .indexed:
                    samples[0].withUnsafeBufferPointer { g in
                        for x in 0..<size.width {
                            let i = Int(g[x * step])
                            o[x * 3] = palette[i]; o[x * 3 + 1] = palette[256 + i]; o[x * 3 + 2] = palette[512 + i]
                        }
                    }
                case .rgb:
                    for x in 0..<size.width {
                        o[x * 3] = samples[0][x * step]; o[x * 3 + 1] = samples[1][x * step]; o[x * 3 + 2] = samples[2][x * step]
                    }
                case .cmyk:
                    // Stored inverted (255 - ink): red = (1 - cyan)(1 - black), and so on.
                    for x in 0..<size.width {
                        let k = UInt32(samples[3][x * step])
                        for c in 0..<3 { o[x * 3 + c] = UInt8((UInt32(samples[c][x * step]) * k + 127) / 255) }
                    }
                }
            }
        }
    }

    /// Where each row of each channel is in the image data section.
    struct Planes {
        let header: Header
        let rowBytes: Int
        let rle: Bool
        /// Raw: where the data begins. RLE: every row's start, then its byte count, channel by
        /// channel (only the colour channels').
        let base: Int
        var starts: [Int] = []
        var counts: [Int] = []

        init(_ d: UnsafeRawBufferPointer, _ header: Header) throws(ImageError) {
            self.header = header
            let (width, height) = (header.size.width, header.size.height)
            let (rowBytes, overflow) = width.multipliedReportingOverflow(by: header.depth / 8)
            guard !overflow else { throw .corrupt("PSD: rows too long") }
            self.rowBytes = rowBytes
            let resources = try Header.length(d, at: header.resourcesAt, bytes: 4)
            let layersAt = header.resourcesAt + 4 + resources
            let layerLengthBytes = header.large ? 8 : 4
            let layers = try Header.length(d, at: layersAt, bytes: layerLengthBytes)
            let imageAt = layersAt + layerLengthBytes + layers
            guard imageAt <= d.count - 2 else { throw .corrupt("PSD: the file has no merged image (it ends after the layers)") }
            let compression = Int(d[imageAt]) << 8 | Int(d[imageAt + 1])
            switch compression {
            case 0:
                rle = false
                base = imageAt + 2
                let needed = rowBytes.multipliedReportingOverflow(by: height).partialValue
                    .multipliedReportingOverflow(by: header.colorChannels)
                guard !needed.overflow, needed.partialValue <= d.count - base else {
                    throw .corrupt("PSD: the merged image is cut short (\(d.count - base) bytes of \(needed.partialValue))")
                }
            case 1:
                rle = true
                let countBytes = header.large ? 4 : 2
                let rows = height * header.channels
                let table = imageAt + 2
                guard rows.multipliedReportingOverflow(by: countBytes).partialValue <= d.count - table else {
                    throw .corrupt("PSD: the merged image's row lengths are cut short")
                }
                base = table + rows * countBytes
                let colorRows = height * header.colorChannels
                starts.reserveCapacity(colorRows)
                counts.reserveCapacity(colorRows)
                var at = base
                for i in 0..<colorRows {
                    var n = 0
                    for k in 0..<countBytes { n = n << 8 | Int(d[table + i * countBytes + k]) }
                    starts.append(at)
                    counts.append(n)
                    at += n
                }
                guard at <= d.count else { throw .corrupt("PSD: the merged image is cut short (its rows need \(at - base) bytes)") }
            case 2, 3:
                throw .undecodable("PSD: a ZIP-compressed merged image is not rendered")
            default:
                throw .corrupt("PSD: unknown compression \(compression)")
            }
        }

        /// Reads row `y` of channel `c` into `out` (rowBytes long); a message when it is damaged.
        func row(channel c: Int, _ y: Int, _ d: UnsafeRawBufferPointer, into out: inout [UInt8]) -> String? {
            let index = c * header.size.height + y
            guard rle else {
                let at = base + index * rowBytes
                out.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: d[at..<(at + rowBytes)])) }
                return nil
            }
            return PackBits.decode(UnsafeRawBufferPointer(rebasing: d[starts[index]..<(starts[index] + counts[index])]), into: &out)
                ? nil : "row \(y) of channel \(c) does not decode to \(rowBytes) bytes"
        }
    }

    static func be(_ d: UnsafeRawBufferPointer, _ at: Int, _ bytes: Int) -> Int {
        var v = 0
        for i in 0..<bytes { v = v << 8 | Int(d[at + i]) }
        return v
    }
}

/// PackBits (Apple's RLE, as TIFF and Photoshop use it): a header byte n, then n + 1 literal
/// bytes (n 0...127) or one byte repeated 1 - n times (n -127...-1); -128 is a no-op.
enum PackBits {
    /// Decodes `src` into `out`, which it fills exactly; false when the codes run past either
    /// end or fall short of filling it.
    static func decode(_ src: UnsafeRawBufferPointer, into out: inout [UInt8]) -> Bool {
        out.withUnsafeMutableBufferPointer { o in
            var i = 0, n = 0
            while i < src.count, n < o.count {
                let h = Int(Int8(bitPattern: src[i]))
                i += 1
                if h >= 0 {
                    let run = h + 1
                    guard i + run <= src.count, n + run <= o.count else { return false }
                    for k in 0..<run { o[n + k] = src[i + k] }
                    i += run
                    n += run
                } else if h != -128 {
                    let run = 1 - h
                    guard i < src.count, n + run <= o.count else { return false }
                    let v = src[i]
                    i += 1
                    for k in 0..<run { o[n + k] = v }
                    n += run
                }
            }
            return n == o.count
        }
    }
}
