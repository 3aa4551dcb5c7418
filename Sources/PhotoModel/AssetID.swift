/// A stable, opaque asset identifier: `a_` and 20 characters of lower-case base32 (100 bits:
/// the creation time in milliseconds, then 55 bits of noise: random, counted up from one random
/// value for the ids one write job makes). Never derived from the path or the
/// content, so it survives renames, moves and edits; never starts with `-` and holds no
/// whitespace, so it is safe as a command-line argument.
///
/// The time prefix (and an alphabet in ASCII order) makes new ids sort after older ones, so the
/// index on ids grows at its end instead of touching a random page per insert — the largest
/// single cost of a bulk index before. Nothing may rely on it: ids are opaque.
public struct AssetID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init?(rawValue: String) {
        let b = Array(rawValue.utf8)
        guard b.count == 22, b[0] == UInt8(ascii: "a"), b[1] == UInt8(ascii: "_"),
              b[2...].allSatisfy(Self.isDigit) else { return nil }
        self.rawValue = rawValue
    }

    /// The same from UTF-8 bytes read in place (a database column): checked, then one string made.
    public init?(utf8 b: UnsafeBufferPointer<UInt8>) {
        guard b.count == 22, b[0] == UInt8(ascii: "a"), b[1] == UInt8(ascii: "_"),
              b[2...].allSatisfy(Self.isDigit) else { return nil }
        rawValue = String(decoding: b, as: UTF8.self)
    }

    /// Whether `c` is one of `alphabet`'s digits (`2`–`7`, `a`–`z`).
    @inline(__always) static func isDigit(_ c: UInt8) -> Bool {
        (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c)
    }

    /// Base32 digits in ASCII order, so that string order is numeric order.
    static let alphabet: [UInt8] = Array("234567abcdefghijklmnopqrstuvwxyz".utf8)

    /// A fresh id for the instant `milliseconds` (Unix time; 45 bits last until the year 3084).
    public static func random<G: RandomNumberGenerator>(milliseconds: Int64, using generator: inout G) -> AssetID {
        AssetID(milliseconds: milliseconds, noise: UInt64.random(in: .min ... .max, using: &generator) >> 9)
    }

    /// The id of the instant `milliseconds` with `noise`'s low 55 bits. A writer that makes many
    /// ids at one instant takes one random value and counts up from it: still unique (two
    /// instants' ranges meet with odds of a few in 2^55), and the ids of a job share all but
    /// their last digits, which the journal stores once.
    public init(milliseconds: Int64, noise: UInt64) {
        let time = UInt64(clamping: max(0, milliseconds)) & ((1 << 45) - 1)
        let noise = noise & ((1 << 55) - 1)
        // 100 bits, most significant first: 45 of time, 55 of noise.
        var chars: [UInt8] = Array("a_".utf8)
        chars.reserveCapacity(22)
        for digit in 0..<20 {
            let shift = 95 - 5 * digit  // bit offset of this digit's lowest bit
            let value: UInt64
            if shift >= 55 {
                value = time >> UInt64(shift - 55)
            } else if shift + 5 <= 55 {
                value = noise >> UInt64(shift)
            } else {  // straddles the boundary
                value = (time << UInt64(55 - shift)) | (noise >> UInt64(shift))
            }
            chars.append(Self.alphabet[Int(value & 31)])
        }
        rawValue = String(decoding: chars, as: UTF8.self)
    }

    /// A fresh id for the instant `milliseconds` (Unix time, from the caller's clock: this
    /// module does no I/O), from the system's generator.
    public static func random(milliseconds: Int64) -> AssetID {
        var g = SystemRandomNumberGenerator()
        return random(milliseconds: milliseconds, using: &g)
    }

    public var description: String { rawValue }
    public static func < (a: AssetID, b: AssetID) -> Bool { a.rawValue < b.rawValue }
}
