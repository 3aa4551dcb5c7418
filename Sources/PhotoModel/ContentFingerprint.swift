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

    /// The fingerprint of a file of `size` bytes whose head is `head` (only its first `span`
    /// bytes count) and whose tail (per `tailRange`) is `tail`.
    public static func compute(size: Int64, head: [UInt8], tail: [UInt8]) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: size)
        head.withUnsafeBytes { h = mix(h, UnsafeRawBufferPointer(rebasing: $0.prefix(span))) }
        tail.withUnsafeBytes { h = mix(h ^ 0xA076_1D64_78BD_642F, $0) }
        return finalize(h)
    }

    /// Eight bytes at a time (this runs over up to 128 KiB of every file indexed).
    static func mix(_ seed: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h = seed
        let words = bytes.count / 8
        for i in 0..<words {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
            h = (h ^ word) &* 0x100_0000_01B3 &+ 0x5851_F42D_4C95_7F2D
            h ^= h >> 31
        }
        var last: UInt64 = UInt64(bytes.count & 7)
        for i in (words * 8)..<bytes.count { last = last << 8 | UInt64(bytes[i]) }
        h = (h ^ last) &* 0x100_0000_01B3
        return h ^ (h >> 29)
    }

    static func finalize(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
