import Foundation
import PhotoImaging
import PhotoModel
import PhotoTesting

/// One way of writing a fixture: convert's options, the output (`$OUT` is the file, with a coder
/// prefix such as `TIFF64:`), whether it has alpha, and the mean difference per sample allowed
/// against the reference decode (lossy codecs and colour conversions decode a little differently).
struct FormatVariant: Sendable, CustomStringConvertible {
    let name: String
    let options: [String]
    var output = "$OUT"
    var alpha = false
    var tolerance = 0.5
    var description: String { name }
}

/// Fixtures of the formats photod decodes with libtiff, giflib, LibRaw and its own BMP reader,
/// made by ImageMagick from a pattern, and ImageMagick's own decode of each file as the
/// reference the renders are compared with.
struct MadeFormats {
    static let convert = Reference.tool("convert")
    let dir: TemporaryDirectory
    let convert: String

    init(_ label: String) throws {
        dir = try TemporaryDirectory(label)
        convert = try Self.convert.orThrow("ImageMagick's convert is not installed")
    }

    /// Writes `image` as a binary PAM (RGB or RGB_ALPHA), which convert reads losslessly.
    func source(_ image: RenderedImage, name: String = "source.pam") throws -> String {
        let tuple = image.channels == 4 ? "RGB_ALPHA" : "RGB"
        let header = "P7\nWIDTH \(image.size.width)\nHEIGHT \(image.size.height)\nDEPTH \(image.channels)\nMAXVAL 255\nTUPLTYPE \(tuple)\nENDHDR\n"
        return try dir.write(name, Array(header.utf8) + image.pixels).string
    }

    /// Runs convert with `arguments`; the path of `output` in the directory.
    func make(_ arguments: [String], output: String) throws -> String {
        let path = dir(output).string
        let status = try Reference.run(convert, arguments.map { $0.replacingOccurrences(of: "$OUT", with: path) })
        guard status == 0 else { throw Failure("convert \(arguments.joined(separator: " ")) exited \(status)") }
        return path
    }

    /// ImageMagick's decode of `file` (its first frame or page), as 8-bit RGB or RGBA.
    func reference(_ file: String, alpha: Bool = false, autoOrient: Bool = false) throws -> RenderedImage {
        let out = dir("reference-\(UInt32.random(in: 0 ... .max)).pam").string
        var arguments = [file + "[0]"]
        if autoOrient { arguments.append("-auto-orient") }
        arguments += ["-depth", "8"]
        arguments += alpha ? ["-alpha", "on", "PAM:" + out] : ["-alpha", "off", "-colorspace", "sRGB", "-type", "TrueColor", "PAM:" + out]
        guard try Reference.run(convert, arguments) == 0 else { throw Failure("convert cannot decode \(file)") }
        return try Self.readPAM([UInt8](Data(contentsOf: URL(fileURLWithPath: out))))
    }

    func remove() { dir.remove() }

    /// A little-endian classic TIFF of one uncompressed strip: `entries` (tag, type, value;
    /// count 1, inline), then StripOffsets and StripByteCounts pointing at `data`.
    static func tiff(_ entries: [(tag: Int, type: Int, value: Int)], data: [UInt8]) -> [UInt8] {
        var b: [UInt8] = [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0]
        func u16(_ v: Int) { b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) { u16(v & 0xFFFF); u16(v >> 16 & 0xFFFF) }
        let all = (entries + [(273, 4, 0), (279, 4, data.count)]).sorted { $0.tag < $1.tag }
        let dataAt = 8 + 2 + 12 * all.count + 4
        u16(all.count)
        for e in all {
            u16(e.tag); u16(e.type); u32(1)
            let v = e.tag == 273 ? dataAt : e.value
            if e.type == 3 { u16(v); u16(0) } else { u32(v) }
        }
        u32(0)
        return b + data
    }

    /// A PAM (P7) of 8-bit samples, 3 or 4 of them (grey is widened to RGB).
    static func readPAM(_ bytes: [UInt8]) throws -> RenderedImage {
        guard let end = bytes.firstRange(of: Array("ENDHDR\n".utf8)) else { throw Failure("not a PAM") }
        var fields: [String: String] = [:]
        for line in String(decoding: bytes[..<end.lowerBound], as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let w = fields["WIDTH"].flatMap({ Int($0) }), let h = fields["HEIGHT"].flatMap({ Int($0) }),
              let depth = fields["DEPTH"].flatMap({ Int($0) }), fields["MAXVAL"] == "255" else { throw Failure("PAM header \(fields)") }
        let data = Array(bytes[end.upperBound...])
        guard data.count >= w * h * depth else { throw Failure("PAM data is short") }
        let channels = depth == 2 || depth == 4 ? 4 : 3
        var p = [UInt8](repeating: 0, count: w * h * channels)
        for i in 0..<(w * h) {
            let s = Array(data[(i * depth)..<(i * depth + depth)])
            let rgb = depth <= 2 ? [s[0], s[0], s[0]] : [s[0], s[1], s[2]]
            for k in 0..<3 { p[i * channels + k] = rgb[k] }
            if channels == 4 { p[i * channels + 3] = s[depth - 1] }
        }
        return RenderedImage(size: PixelSize(width: w, height: h), channels: channels, pixels: p)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }
}

extension Optional {
    func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw MadeFormats.Failure(message) }
        return self
    }
}
