#if canImport(Glibc)
import Glibc
#endif

/// Finding markers in JPEG bytes the way libjpeg does, for every walker of JPEG segments (the
/// metadata reader here, the renderer's `JPEGStructure`). Pure and bounded by the buffer.
public enum JPEGMarkers {
    /// libjpeg's `next_marker`: the offset of the first 0xFF at or after `from` that begins a
    /// marker — followed by a byte other than 0x00 (a stuffed zero is data) and 0xFF (a fill
    /// byte: the run's last 0xFF is taken) — or nil when the buffer ends first. Bytes skipped on
    /// the way are stray: libjpeg warns ("extraneous bytes before marker") and goes on, and so
    /// do ImageMagick, exiftool and browsers.
    public static func next(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var i = max(0, from)
        let n = bytes.count
        while i + 1 < n {
            // memchr: the search may cross megabytes of entropy-coded data (a DNL after a scan).
            guard let hit = memchr(base + i, 0xFF, n - 1 - i) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit))
            let b = bytes[at + 1]
            if b != 0xFF && b != 0x00 { return at }
            i = at + 1
        }
        return nil
    }

    /// The offset of the marker that ends the entropy-coded data starting at `from` (after a
    /// scan header): the first 0xFF followed by a byte that is neither a stuffed 0x00, a fill
    /// 0xFF nor a restart marker (RST0–7, which sit inside the data); nil when the buffer ends
    /// first.
    public static func endOfEntropyCodedData(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        var i = max(0, from)
        while let at = next(in: bytes, from: i) {
            guard (0xD0...0xD7).contains(bytes[at + 1]) else { return at }
            i = at + 2
        }
        return nil
    }

    /// Whether `marker` (the byte after 0xFF) is a frame header (SOF0–SOF15); DHT (C4), JPG
    /// (C8) and DAC (CC) share the range and are not.
    public static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// DNL, the segment after the first scan that gives the height a frame header left at 0.
    public static let defineNumberOfLines: UInt8 = 0xDC
}
