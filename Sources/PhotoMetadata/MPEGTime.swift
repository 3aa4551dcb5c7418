/// The time stamps of MPEG's packetized elementary streams, which transport streams (`MPEGTS`)
/// and program streams (`MPEGPS`) both carry: 33 bits at 90 kHz in five bytes with marker bits,
/// and a clip's duration from its first and latest video time stamps.
enum MPEGTime {
    /// How far into the file a head's walk and a tail's reach (bytes).
    static let reach = 256 * 1024

    /// The latest of a clip's last time stamps (frames are stored in decoding order: the last
    /// stored is not always the last shown), counted from the first of them either way
    /// (reordered frames come before it) and across a wrap of the 33 bits, and the shortest
    /// step between them (a frame).
    static func latest(_ stamps: [Int64]) -> (last: Int64, frame: Int64?)? {
        guard let base = stamps.first else { return nil }
        let mask: Int64 = (1 << 33) - 1, half: Int64 = 1 << 32
        let sorted = stamps.map { (($0 - base + half) & mask) - half }.sorted()
        let frame = zip(sorted, sorted.dropFirst()).map { $1 - $0 }.filter { $0 > 0 }.min()
        return ((base + sorted.last!) & mask, frame)
    }

    /// The duration from the first video time stamp to `end`'s latest, plus a frame; `nil` past a day.
    static func duration(first: Int64, end: (last: Int64, frame: Int64?)?) -> Double? {
        let ticks = ((end?.last ?? first) - first) & ((1 << 33) - 1) + (end?.frame ?? 0)
        return ticks < 90_000 * 86_400 ? Double(ticks) / 90_000 : nil
    }

    /// A PES header's 33-bit time stamp: five bytes with marker bits.
    static func timeStamp(_ p: ByteView, at i: Int) -> Int64 {
        Int64(p[i] >> 1 & 7) << 30 | Int64(p[i + 1]) << 22 | Int64(p[i + 2] >> 1) << 15 | Int64(p[i + 3]) << 7 | Int64(p[i + 4] >> 1)
    }
}
