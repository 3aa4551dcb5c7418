/// A 64-bit fingerprint of a file's content: its size, its first 64 KiB and its last 64 KiB.
/// Cheap (two reads at most, one for small files), and enough to recognise the same file
/// after a copy across file systems, where the inode changes.
public enum ContentFingerprint {
    /// How many bytes of each end are hashed.
    public static let span = 64 << 10

    /// The byte range of the tail to hash for a file of `size` bytes (empty when the head
    /// already covers the whole file).
    public static func tailRange(size: Int64) -> Range<Int64> {
        let start = max(Int64(span), size - Int64(span))
        return start < size ? start..<size : size..<size
    }

    /// The fingerprint of a file of `size` bytes whose head is `head` (at most `span` bytes)
    /// and whose tail (per `tailRange`) is `tail`.
    public static func compute(size: Int64, head: some Collection<UInt8>, tail: some Collection<UInt8>) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: size)
        h = mix(h, head.prefix(span))
        h = mix(h ^ 0xA076_1D64_78BD_642F, tail)
        return finalize(h)
    }

    @inline(__always)
    static func mix(_ seed: UInt64, _ bytes: some Collection<UInt8>) -> UInt64 {
        var h = seed
        var word: UInt64 = 0
        var shift: UInt64 = 0
        for b in bytes {
            word |= UInt64(b) << shift
            shift += 8
            if shift == 64 {
                h = (h ^ word) &* 0x100_0000_01B3 &+ 0x5851_F42D_4C95_7F2D
                h ^= h >> 31
                word = 0
                shift = 0
            }
        }
        if shift > 0 { h = (h ^ word ^ shift) &* 0x100_0000_01B3; h ^= h >> 29 }
        return h
    }

    @inline(__always)
    static func finalize(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
