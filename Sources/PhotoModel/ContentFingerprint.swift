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

    /// Thirty-two bytes a round in four independent lanes, so the multiplies overlap (this runs
    /// over up to 128 KiB of every file indexed; one lane was a fifth of a reader's time).
    static func mix(_ seed: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var a = seed, b = seed ^ 0x9E37_79B9_7F4A_7C15, c = seed &+ 0x632B_E59B_D9B4_E019, d = ~seed
        let rounds = bytes.count / 32
        for r in 0..<rounds {
            let o = r * 32
            a = lane(a, bytes.loadUnaligned(fromByteOffset: o, as: UInt64.self))
            b = lane(b, bytes.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self))
            c = lane(c, bytes.loadUnaligned(fromByteOffset: o + 16, as: UInt64.self))
            d = lane(d, bytes.loadUnaligned(fromByteOffset: o + 24, as: UInt64.self))
        }
        var h = a ^ (b &* 3) ^ (c &* 5) ^ (d &* 7)
        var i = rounds * 32
        while i + 8 <= bytes.count {
            h = lane(h, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        var last = UInt64(bytes.count & 31)
        while i < bytes.count {
            last = last << 8 | UInt64(bytes[i])
            i += 1
        }
        h = (h ^ last) &* 0x100_0000_01B3
        return h ^ (h >> 29)
    }

    @inline(__always)
    static func lane(_ h: UInt64, _ word: UInt64) -> UInt64 {
        let x = (h ^ UInt64(littleEndian: word)) &* 0x9FB2_1C65_1E98_DF25
        return x ^ (x >> 28)
    }

    static func finalize(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
