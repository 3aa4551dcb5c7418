// Fuzz target: the image renderer on untrusted files (sniffing, the TurboJPEG, libpng, libwebp,
// libheif, libtiff, giflib, LibRaw, OpenJPEG and libjxl decoders and the BMP and PSD readers as we drive
// them, the resampler, orientation, JPEG/PNG encoding of the result), the embedded EXIF
// thumbnail (finding, decoding, caching it), a HEIF file's thumbnail item and a RAW's embedded
// preview. (The image-<format> targets run this harness on one format's seeds.)
//
// Input: one option byte, then the file. The option byte picks the request, so that one seed
// reaches every path: bit 0 the content mode, bits 1-2 the target size, bits 3-6 the
// orientation (0 and 9-15: the file's own, 1-8: the index's value passed in), bit 7 whether the
// thumbnail gets that orientation too or reads its own.
// (`ImageRenderer.probe` reads a path only, through MetadataReader: the metadata target's.)
// Any result or thrown ImageError is fine; a trap, a sanitizer report, a hang, a huge
// allocation, or a result larger than the target (or not matching its own size) is a bug.
import PhotoImaging

/// Small enough that a claimed size cannot make one input slow, large enough for photos.
let renderer = ImageRenderer(pixelLimit: 4_000_000)
/// A square, a sliver (the resampler's one-pixel spans), a thumbnail, and a size most inputs
/// are under (no scaling: the plain copy path).
let targets = [PixelSize(width: 1, height: 1), PixelSize(width: 3, height: 200), PixelSize(width: 160, height: 120),
               PixelSize(width: 4096, height: 4096)]

func check(_ image: RenderedImage, within target: PixelSize) {
    guard image.size.width >= 1, image.size.height >= 1, image.size.width <= target.width, image.size.height <= target.height else {
        fatalError("rendered \(image.size) for a target of \(target)")
    }
    _ = try? image.encoded()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let option = Int(data[0])
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let mode: ContentMode = option & 1 == 0 ? .fit : .fill
    let target = targets[(option >> 1) & 3]
    let orientation = Orientation(rawValue: (option >> 3) & 15)
    if let image = try? renderer.render(bytes: bytes, targetSize: target, contentMode: mode, orientation: orientation) {
        check(image, within: target)
    }
    if let thumbnail = EmbeddedThumbnail.extract(bytes: bytes, orientation: option & 0x80 == 0 ? nil : orientation) {
        if let image = try? thumbnail.decode() { check(image, within: thumbnail.size) }
        _ = try? thumbnail.encodedForCache()
    }
    if let image = (try? RAWPreview.render(bytes: bytes, renderer: renderer)) ?? nil {
        check(image, within: PixelSize(width: 1024, height: 1024))
    }
    if let image = (try? HEIFThumbnail.render(bytes: bytes)) ?? nil {
        // Any shape up to the thumbnail limit (4 MP), never empty.
        guard image.size.width >= 1, image.size.height >= 1, image.size.width * image.size.height <= 1 << 22 else {
            fatalError("a HEIF thumbnail of \(image.size)")
        }
        _ = try? image.encoded()
    }
    return 0
}
