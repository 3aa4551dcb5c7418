// Fuzz target: a video's poster on untrusted files — libavformat's demuxers as we drive them
// (through the in-memory AVIO reader), the probe of the headers, the seek, libavcodec's decoders
// with one thread, the pixel limit, the CPU limit, libswscale, the resampler and orientation,
// the cover picture (a video with no decodable frame) — and VideoProbe.
//
// Input: one option byte, then the file. Bit 0 picks the content mode, bits 1-2 the target size.
// Any result or thrown error is fine; a trap, a sanitizer report, a hang past libFuzzer's 2 s,
// a huge allocation, or a poster larger than the target is a bug. The CPU limit is 1 s here (the
// daemon's is 5 s), so that a slow decode is a refused input, not a timeout.
import PhotoImaging
import PhotoMetadata

/// Small enough that a claimed size cannot make one input slow.
let renderer = ImageRenderer(pixelLimit: 4_000_000)
let targets = [PixelSize(width: 1, height: 1), PixelSize(width: 3, height: 200), PixelSize(width: 160, height: 120),
               PixelSize(width: 4096, height: 4096)]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let option = Int(data[0])
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let target = targets[(option >> 1) & 3]
    _ = try? VideoProbe.probe(bytes: bytes, timeoutMilliseconds: 1_000)
    if let poster = try? renderer.renderPoster(bytes: bytes, targetSize: target, contentMode: option & 1 == 0 ? .fit : .fill,
                                               cpuLimitMilliseconds: 1_000) {
        let s = poster.image.size
        guard s.width >= 1, s.height >= 1, s.width <= target.width, s.height <= target.height else {
            fatalError("a poster of \(s) for a target of \(target)")
        }
        guard poster.time.isFinite, poster.target.isFinite else { fatalError("a poster at \(poster.time) for \(poster.target)") }
        _ = try? poster.image.encoded()
    }
    return 0
}
