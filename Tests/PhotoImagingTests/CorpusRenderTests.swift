import Foundation
import PhotoImaging
import PhotoModel
import Testing

/// The shared corpus: every JPEG, PNG, WebP, HEIC/HEIF, TIFF, GIF, BMP, JPEG 2000 and JPEG XL renders at 512×512 fit and fill
/// within one pixel of the size exiftool's oracle implies; a few are compared with ImageMagick's
/// renders; every deliberately broken file gives an error or an image, never a crash.
@Suite struct CorpusRenderTests {
    /// Files of the corpus that no decoder can render (vips and ImageMagick fail on them too).
    static let knownUndecodable: [String: String] = [
        "mathiasbynens-small/png-truncated.png": "truncated",
        "mathiasbynens-small/webp.webp": "a 26-byte stub",
        "exiftool/t/images/QuickTime.heic": "a 623-byte stub without image data",
        "mathiasbynens-small/gif.gif": "a 14-byte GIF of a screen and no frame",
    ]

    struct Entry: Sendable, CustomStringConvertible {
        let file: String
        /// Displayed size per the oracle (nil when it has none).
        let width: Int?, height: Int?
        var description: String { file }
    }

    static let entries: [Entry] = {
        guard let corpus = Reference.corpus,
              let data = try? Data(contentsOf: corpus.appendingPathComponent("real/oracle.json")),
              let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
        var out: [Entry] = []
        for e in list {
            guard let file = e["SourceFile"] as? String else { continue }
            let ext = (file as NSString).pathExtension.lowercased()
            guard ["jpg", "jpeg", "png", "webp", "heic", "heif", "tif", "tiff", "gif", "bmp", "jp2", "jxl"].contains(ext) else { continue }
            let type = e["File:FileType"] as? String ?? ""
            var w = (e["File:ImageWidth"] ?? e["PNG:ImageWidth"] ?? e["RIFF:ImageWidth"] ?? e["GIF:ImageWidth"]
                     ?? e["EXIF:ImageWidth"] ?? e["Jpeg2000:ImageWidth"]) as? Int
            var h = (e["File:ImageHeight"] ?? e["PNG:ImageHeight"] ?? e["RIFF:ImageHeight"] ?? e["GIF:ImageHeight"]
                     ?? e["EXIF:ImageHeight"] ?? e["Jpeg2000:ImageHeight"]) as? Int
            let swap: Bool
            if type == "HEIC" {
                let r = e["QuickTime:Rotation"] as? Int ?? 0
                swap = r == 90 || r == 270
            } else {
                swap = (e["EXIF:Orientation"] as? Int ?? 1) >= 5
            }
            if swap { (w, h) = (h, w) }
            out.append(Entry(file: file, width: w, height: h))
        }
        return out.sorted { $0.file < $1.file }
    }()

    @Test(.enabled(if: Reference.corpus != nil, "the shared corpus was not found (set PHOTOD_CORPUS)"))
    func corpusIsPresent() {
        #expect(Self.entries.count >= 100)
    }

    @Test(.enabled(if: Reference.corpus != nil, "the shared corpus was not found"), arguments: entries)
    func rendersAtTheRequestedSize(_ entry: Entry) throws {
        let corpus = try #require(Reference.corpus)
        let path = PathBytes(corpus.appendingPathComponent("real").appendingPathComponent(entry.file).path)
        let renderer = ImageRenderer()
        let target = PixelSize(width: 512, height: 512)
        for mode in ContentMode.allCases {
            let image: RenderedImage
            do {
                image = try renderer.render(path: path, targetSize: target, contentMode: mode)
            } catch {
                #expect(Self.knownUndecodable[entry.file] != nil, "\(entry.file) \(mode): \(error)")
                return
            }
            #expect(Self.knownUndecodable[entry.file] == nil, "\(entry.file) renders though listed as undecodable")
            guard let w = entry.width, let h = entry.height, w > 0, h > 0 else { continue }
            let dw = Double(w), dh = Double(h)
            let expected: (Double, Double)
            switch mode {
            case .fit:
                let s = min(512 / dw, 512 / dh, 1)
                expected = (dw * s, dh * s)
            case .fill:
                let s = max(512 / dw, 512 / dh)
                expected = s <= 1 ? (512, 512) : (min(dw, dh), min(dw, dh))
            }
            #expect(abs(Double(image.size.width) - expected.0) <= 1 && abs(Double(image.size.height) - expected.1) <= 1,
                    "\(entry.file) \(mode): \(image.size), expected about \(expected)")
        }
    }

    /// Ours against `convert FILE -auto-orient -thumbnail 256x256` (all eight orientations, a
    /// portrait, an alpha PNG, a WebP and a HEIC turned by `irot`), by mean absolute pixel
    /// difference.
    @Test(.enabled(if: Reference.corpus != nil, "the shared corpus was not found"),
          .enabled(if: Reference.tool("convert") != nil, "ImageMagick's convert is not installed"), arguments: [
        "ianare-exif-samples/jpg/orientation/landscape_1.jpg", "ianare-exif-samples/jpg/orientation/landscape_2.jpg",
        "ianare-exif-samples/jpg/orientation/landscape_3.jpg", "ianare-exif-samples/jpg/orientation/landscape_4.jpg",
        "ianare-exif-samples/jpg/orientation/landscape_5.jpg", "ianare-exif-samples/jpg/orientation/landscape_6.jpg",
        "ianare-exif-samples/jpg/orientation/landscape_7.jpg", "ianare-exif-samples/jpg/orientation/landscape_8.jpg",
        "ianare-exif-samples/jpg/orientation/portrait_6.jpg", "immich-test-assets/metadata/faces/portrait-orientation-6.jpg",
        "immich-test-assets/formats/png/density_plot.png", "metadata-extractor-images/webp/HTC Desire.webp",
        "ianare-exif-samples/heic/mobile/iphone_13_pro_max.HEIC",
        "ianare-exif-samples/tiff/Tless0.tiff", "ianare-exif-samples/tiff/Picoawards.tiff",
    ])
    func matchesImageMagick(_ file: String) throws {
        let corpus = try #require(Reference.corpus)
        let convert = try #require(Reference.tool("convert"))
        let source = corpus.appendingPathComponent("real").appendingPathComponent(file).path
        let reference = FileManager.default.temporaryDirectory.appendingPathComponent("photod-ref-\(getpid())-\(abs(file.hashValue)).png").path
        defer { try? FileManager.default.removeItem(atPath: reference) }
        #expect(try Reference.run(convert, [source, "-auto-orient", "-thumbnail", "256x256", "-strip", reference]) == 0)
        let renderer = ImageRenderer()
        let ours = try renderer.render(path: PathBytes(source), targetSize: PixelSize(width: 256, height: 256), contentMode: .fit)
        let theirs = try renderer.render(path: PathBytes(reference), targetSize: PixelSize(width: 4096, height: 4096), contentMode: .fit)
        #expect(ours.size == theirs.size, "\(file): \(ours.size) vs ImageMagick \(theirs.size)")
        guard ours.size == theirs.size else { return }
        let d = Fixtures.meanDifference(ours, theirs)
        print("\(file): mean difference to ImageMagick \(d)")
        #expect(d < 8, "\(file): mean difference \(d)")
    }

    /// `broken/`: every file gives an error or a valid image; the huge claim is refused.
    @Test(.enabled(if: Reference.corpus != nil, "the shared corpus was not found"))
    func brokenFilesNeverCrash() throws {
        let corpus = try #require(Reference.corpus)
        let dir = corpus.appendingPathComponent("broken")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".json") && !$0.hasSuffix(".md") }.sorted()
        #expect(files.count >= 10)
        let renderer = ImageRenderer()
        for file in files {
            let path = PathBytes(dir.appendingPathComponent(file).path)
            for mode in ContentMode.allCases {
                do {
                    let image = try renderer.render(path: path, targetSize: PixelSize(width: 256, height: 256), contentMode: mode)
                    #expect(image.size.width >= 1 && image.size.width <= 256 && image.size.height <= 256, "\(file)")
                } catch {
                    print("\(file): \(error)")
                    if file == "huge-dimensions.jpg" { #expect(error.code == "tooLarge", "\(error)") }
                    if file.hasPrefix("truncated-") && file.hasSuffix(".jpg") { #expect(error.code == "corrupt") }
                    if file.hasSuffix(".mp4") { #expect(error == .unsupported("video") || error.code == "corrupt", "\(file): \(error)") }
                }
                _ = try? EmbeddedThumbnail.extract(path: path)?.decode()
            }
        }
    }
}
