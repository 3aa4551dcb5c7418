/// A size in pixels.
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    /// Columns.
    public var width: Int
    /// Rows.
    public var height: Int

    /// A size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `width × height` as a number of pixels (saturating).
    public var pixelCount: Int { width.multipliedReportingOverflow(by: height).overflow ? .max : width * height }

    /// The same size with width and height exchanged.
    public var transposed: PixelSize { PixelSize(width: height, height: width) }

    /// `WxH`.
    public var description: String { "\(width)x\(height)" }
}

/// How an image is fitted to a requested size (PhotoKit's `PHImageContentMode`).
public enum ContentMode: String, Sendable, Hashable, CaseIterable {
    /// The largest size with the image's aspect ratio that fits inside the target
    /// (`aspectFit`): the whole image, one side equal to the target's.
    case fit
    /// Scaled to cover the target and centre-cropped to exactly the target (`aspectFill`).
    case fill
}

/// An EXIF orientation (tag 0x0112): how the stored pixels are turned to be displayed.
public enum Orientation: Int, Sendable, Hashable, CaseIterable {
    /// As stored.
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Turned 180°.
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored along the main diagonal (transpose).
    case leftMirrored = 5
    /// Turned 90° clockwise to display.
    case right = 6
    /// Mirrored along the anti-diagonal (transverse).
    case rightMirrored = 7
    /// Turned 90° counter-clockwise to display.
    case left = 8

    /// The orientation for an EXIF value; 1 (`up`) for a missing or out-of-range value, as
    /// every viewer does.
    public init(exif value: Int?) {
        self = value.flatMap(Orientation.init(rawValue:)) ?? .up
    }

    /// Whether the displayed image has width and height exchanged (5–8).
    public var swapsAxes: Bool { rawValue >= 5 }

    /// The displayed size of a stored size.
    public func displayed(_ stored: PixelSize) -> PixelSize { swapsAxes ? stored.transposed : stored }

    /// The stored pixel (column, row) shown at displayed pixel (x, y), for a stored image of
    /// `width × height` (stored dimensions).
    @inline(__always)
    func storedPixel(x: Int, y: Int, width: Int, height: Int) -> (Int, Int) {
        switch self {
        case .up: return (x, y)
        case .upMirrored: return (width - 1 - x, y)
        case .down: return (width - 1 - x, height - 1 - y)
        case .downMirrored: return (x, height - 1 - y)
        case .leftMirrored: return (y, x)
        case .right: return (y, height - 1 - x)
        case .rightMirrored: return (width - 1 - y, height - 1 - x)
        case .left: return (width - 1 - y, x)
        }
    }

    /// The stored rectangle shown as the displayed rectangle `r` of an image whose stored
    /// size is `stored`.
    func storedRect(_ r: Rect, stored: PixelSize) -> Rect {
        let w = Double(stored.width), h = Double(stored.height)
        switch self {
        case .up: return r
        case .upMirrored: return Rect(x: w - r.x - r.width, y: r.y, width: r.width, height: r.height)
        case .down: return Rect(x: w - r.x - r.width, y: h - r.y - r.height, width: r.width, height: r.height)
        case .downMirrored: return Rect(x: r.x, y: h - r.y - r.height, width: r.width, height: r.height)
        case .leftMirrored: return Rect(x: r.y, y: r.x, width: r.height, height: r.width)
        case .right: return Rect(x: r.y, y: h - r.x - r.width, width: r.height, height: r.width)
        case .rightMirrored: return Rect(x: w - r.y - r.height, y: h - r.x - r.width, width: r.height, height: r.width)
        case .left: return Rect(x: w - r.y - r.height, y: r.x, width: r.height, height: r.width)
        }
    }
}

/// A rectangle in (fractional) pixel coordinates.
struct Rect: Sendable, Hashable {
    var x: Double
    var y: Double
    var width: Double
    var height: Double

    /// The rectangle in an image scaled by (sx, sy).
    func scaled(_ sx: Double, _ sy: Double) -> Rect { Rect(x: x * sx, y: y * sy, width: width * sx, height: height * sy) }

    /// Clamped into `0..<size` on both axes (float rounding after scaling).
    func clamped(to size: PixelSize) -> Rect {
        let w = Double(size.width), h = Double(size.height)
        let x0 = min(max(0, x), w), y0 = min(max(0, y), h)
        return Rect(x: x0, y: y0, width: max(min(width, w - x0), 0), height: max(min(height, h - y0), 0))
    }
}

/// What to make of an image of a displayed size for a request: the output size and the part
/// of the displayed image it shows. Pure; the renderer maps it to stored coordinates.
///
/// Never upscales: `fit` on an image inside the target returns the image's own size; `fill`
/// whose cover scale would exceed 1 returns the largest centred crop with the target's aspect
/// ratio at the image's own resolution (so a 300×200 image asked for 512×512 gives 200×200).
struct RenderPlan: Sendable, Hashable {
    /// The output size, displayed orientation.
    var output: PixelSize
    /// The shown part of the displayed image, in its full-resolution pixels.
    var crop: Rect

    init(displayed: PixelSize, target: PixelSize, mode: ContentMode) {
        let dw = Double(displayed.width), dh = Double(displayed.height)
        let tw = Double(target.width), th = Double(target.height)
        switch mode {
        case .fit:
            let s = min(tw / dw, th / dh, 1)
            if s >= 1 {
                output = displayed
            } else {
                output = PixelSize(width: min(target.width, max(1, Int((dw * s).rounded()))),
                                   height: min(target.height, max(1, Int((dh * s).rounded()))))
            }
            crop = Rect(x: 0, y: 0, width: dw, height: dh)
        case .fill:
            let s = max(tw / dw, th / dh)
            if s <= 1 {
                output = target
                let cw = min(dw, tw / s), ch = min(dh, th / s)
                crop = Rect(x: (dw - cw) / 2, y: (dh - ch) / 2, width: cw, height: ch)
            } else {
                // No upscaling: the target's aspect ratio at scale 1, on whole pixels.
                let ratio = tw / th
                var cw = dw, ch = dh
                if dw / dh > ratio { cw = dh * ratio } else { ch = dw / ratio }
                let w = min(displayed.width, max(1, Int(cw.rounded())))
                let h = min(displayed.height, max(1, Int(ch.rounded())))
                output = PixelSize(width: w, height: h)
                crop = Rect(x: Double((displayed.width - w) / 2), y: Double((displayed.height - h) / 2),
                            width: Double(w), height: Double(h))
            }
        }
    }
}
