import Foundation
import PhotoImaging
import PhotoModel
import PhotoTesting

/// Generated fixtures and comparisons for the imaging tests.
enum Fixtures {
    /// An asymmetric test pattern: four quadrants of different colours (red top-left, green
    /// top-right, blue bottom-left, white bottom-right) and a black bar along the top edge of
    /// the left half, so every one of the eight orientations looks different.
    static func pattern(width: Int, height: Int, alpha: Bool = false) -> RenderedImage {
        let c = alpha ? 4 : 3
        var p = [UInt8](repeating: 0, count: width * height * c)
        for y in 0..<height {
            for x in 0..<width {
                var rgb: (UInt8, UInt8, UInt8)
                switch (x < width / 2, y < height / 2) {
                case (true, true): rgb = (220, 30, 30)
                case (false, true): rgb = (30, 200, 40)
                case (true, false): rgb = (30, 40, 210)
                case (false, false): rgb = (240, 240, 240)
                }
                if y < height / 8, x < width / 2 { rgb = (0, 0, 0) }
                let i = (y * width + x) * c
                p[i] = rgb.0; p[i + 1] = rgb.1; p[i + 2] = rgb.2
                if alpha { p[i + 3] = x < width / 2 ? 0 : 255 }
            }
        }
        return RenderedImage(size: PixelSize(width: width, height: height), channels: c, pixels: p)
    }

    /// A JPEG of `image` (TurboJPEG, quality 95) with an APP1 EXIF block carrying `orientation`
    /// and, optionally, an IFD1 thumbnail.
    static func jpeg(_ image: RenderedImage, orientation: Int? = nil, thumbnail: [UInt8]? = nil) throws -> [UInt8] {
        let plain = try image.encodeJPEG(quality: 95).bytes
        guard orientation != nil || thumbnail != nil else { return plain }
        let tiff = exifBlock(orientation: orientation ?? 1, thumbnail: thumbnail)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let n = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(n >> 8), UInt8(n & 0xFF)] + payload + plain[2...]
    }

    /// A little-endian TIFF block: IFD0 with the orientation, then (when given) IFD1 with
    /// JPEGInterchangeFormat/Length pointing at the thumbnail's bytes after it.
    static func exifBlock(orientation: Int, thumbnail: [UInt8]?) -> [UInt8] {
        var b: [UInt8] = [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0]
        func u16(_ v: Int) { b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) { b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        // IFD0 at 8: one entry (12 bytes) + next-IFD pointer.
        u16(1)
        u16(0x0112); u16(3); u32(1); u16(orientation); u16(0)
        let ifd1 = 8 + 2 + 12 + 4
        u32(thumbnail == nil ? 0 : ifd1)
        if let thumbnail {
            let data = ifd1 + 2 + 2 * 12 + 4
            u16(2)
            u16(0x0201); u16(4); u32(1); u32(data)
            u16(0x0202); u16(4); u32(1); u32(thumbnail.count)
            u32(0)
            b += thumbnail
        }
        return b
    }

    /// The pattern as a viewer shows a file stored like `image` with the EXIF orientation.
    static func displayed(_ image: RenderedImage, _ orientation: Orientation) -> RenderedImage {
        let w = image.size.width, h = image.size.height, c = image.channels
        let out = orientation.displayed(image.size)
        var p = [UInt8](repeating: 0, count: image.pixels.count)
        for y in 0..<out.height {
            for x in 0..<out.width {
                // Inverse of the transform, written independently of the renderer's table.
                let (sx, sy): (Int, Int)
                switch orientation {
                case .up: (sx, sy) = (x, y)
                case .upMirrored: (sx, sy) = (w - 1 - x, y)
                case .down: (sx, sy) = (w - 1 - x, h - 1 - y)
                case .downMirrored: (sx, sy) = (x, h - 1 - y)
                case .leftMirrored: (sx, sy) = (y, x)
                case .right: (sx, sy) = (y, h - 1 - x)
                case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                case .left: (sx, sy) = (w - 1 - y, x)
                }
                for k in 0..<c { p[(y * out.width + x) * c + k] = image.pixels[(sy * w + sx) * c + k] }
            }
        }
        return RenderedImage(size: out, channels: c, pixels: p)
    }

    /// Box-averages `image` down by an integer factor.
    static func shrink(_ image: RenderedImage, by f: Int) -> RenderedImage {
        let w = image.size.width / f, h = image.size.height / f, c = image.channels
        var p = [UInt8](repeating: 0, count: w * h * c)
        for y in 0..<h {
            for x in 0..<w {
                for k in 0..<c {
                    var s = 0
                    for dy in 0..<f { for dx in 0..<f { s += Int(image.pixels[((y * f + dy) * image.size.width + x * f + dx) * c + k]) } }
                    p[(y * w + x) * c + k] = UInt8((s + f * f / 2) / (f * f))
                }
            }
        }
        return RenderedImage(size: PixelSize(width: w, height: h), channels: c, pixels: p)
    }

    /// Mean absolute difference per sample (0–255) of two images of one size, RGB only.
    static func meanDifference(_ a: RenderedImage, _ b: RenderedImage) -> Double {
        precondition(a.size == b.size)
        var total = 0
        for i in 0..<(a.size.width * a.size.height) {
            for k in 0..<3 { total += abs(Int(a.pixels[i * a.channels + k]) - Int(b.pixels[i * b.channels + k])) }
        }
        return Double(total) / Double(a.size.width * a.size.height * 3)
    }
}

/// The shared corpus and the reference tools.
enum Reference {
    static let corpus: URL? = TestPaths.corpus

    /// The path of an executable on PATH, or nil.
    static func tool(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Runs a tool to completion; its exit status.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
