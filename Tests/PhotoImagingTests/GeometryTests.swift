@testable import PhotoImaging
import Testing

/// `RenderPlan`: output sizes and crops for fit and fill, on landscape, portrait and square
/// images, and the no-upscaling rules.
@Suite struct GeometryTests {
    struct Case: Sendable, CustomStringConvertible {
        let image: (Int, Int), target: (Int, Int), mode: ContentMode, output: (Int, Int)
        var description: String { "\(image) -> \(target) \(mode)" }
    }

    static let cases: [Case] = [
        Case(image: (3000, 2000), target: (256, 256), mode: .fit, output: (256, 171)),
        Case(image: (2000, 3000), target: (256, 256), mode: .fit, output: (171, 256)),
        Case(image: (1000, 1000), target: (256, 256), mode: .fit, output: (256, 256)),
        Case(image: (3000, 2000), target: (512, 100), mode: .fit, output: (150, 100)),
        Case(image: (3000, 2000), target: (256, 256), mode: .fill, output: (256, 256)),
        Case(image: (2000, 3000), target: (300, 100), mode: .fill, output: (300, 100)),
        Case(image: (1000, 1000), target: (256, 128), mode: .fill, output: (256, 128)),
        // No upscaling.
        Case(image: (300, 200), target: (512, 512), mode: .fit, output: (300, 200)),
        Case(image: (300, 200), target: (512, 512), mode: .fill, output: (200, 200)),
        Case(image: (300, 200), target: (1000, 100), mode: .fill, output: (300, 30)),
        Case(image: (1000, 300), target: (512, 512), mode: .fill, output: (300, 300)),
        Case(image: (1, 1), target: (512, 512), mode: .fill, output: (1, 1)),
        Case(image: (10000, 1), target: (256, 256), mode: .fit, output: (256, 1)),
    ]

    @Test(arguments: cases)
    func outputSize(_ c: Case) {
        let plan = RenderPlan(displayed: PixelSize(width: c.image.0, height: c.image.1),
                              target: PixelSize(width: c.target.0, height: c.target.1), mode: c.mode)
        #expect(plan.output == PixelSize(width: c.output.0, height: c.output.1))
        // The crop lies inside the image and has the output's aspect ratio (fill).
        #expect(plan.crop.x >= 0 && plan.crop.y >= 0)
        #expect(plan.crop.x + plan.crop.width <= Double(c.image.0) + 1e-9)
        #expect(plan.crop.y + plan.crop.height <= Double(c.image.1) + 1e-9)
        if c.mode == .fill {
            let ratio = plan.crop.width / plan.crop.height
            let want = Double(plan.output.width) / Double(plan.output.height)
            #expect(abs(ratio - want) / want < 0.02)
        }
    }

    @Test func fillCropIsCentred() {
        let plan = RenderPlan(displayed: PixelSize(width: 3000, height: 2000), target: PixelSize(width: 256, height: 256), mode: .fill)
        #expect(plan.crop.x == 500 && plan.crop.y == 0 && plan.crop.width == 2000 && plan.crop.height == 2000)
    }

    @Test(arguments: Orientation.allCases)
    func storedRectRoundTrips(_ o: Orientation) {
        // A displayed rect maps to a stored rect of the transposed size for 5–8, and the
        // corner pixels agree with storedPixel.
        let stored = PixelSize(width: 40, height: 30)
        let displayed = o.displayed(stored)
        let r = Rect(x: 2, y: 3, width: 5, height: 7)
        let s = o.storedRect(r, stored: stored)
        #expect(s.width == (o.swapsAxes ? 7 : 5) && s.height == (o.swapsAxes ? 5 : 7))
        let (px, py) = o.storedPixel(x: 2, y: 3, width: stored.width, height: stored.height)
        #expect(Double(px) >= s.x && Double(px) < s.x + s.width && Double(py) >= s.y && Double(py) < s.y + s.height)
        #expect(displayed.pixelCount == stored.pixelCount)
    }
}
