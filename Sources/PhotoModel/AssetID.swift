/// A stable, opaque asset identifier: `a_` and 20 characters of lower-case base32 (100
/// random bits). Never derived from the path or the content, so it survives renames, moves
/// and edits; never starts with `-` and holds no whitespace, so it is safe as a command-line
/// argument.
public struct AssetID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init?(rawValue: String) {
        let b = Array(rawValue.utf8)
        guard b.count == 22, b[0] == UInt8(ascii: "a"), b[1] == UInt8(ascii: "_"),
              b[2...].allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        self.rawValue = rawValue
    }

    static let alphabet: [UInt8] = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// A fresh random id.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> AssetID {
        var bits = (UInt64.random(in: .min ... .max, using: &generator),
                    UInt64.random(in: .min ... .max, using: &generator))
        var chars: [UInt8] = Array("a_".utf8)
        chars.reserveCapacity(22)
        for _ in 0..<20 {
            chars.append(alphabet[Int(bits.0 & 31)])
            bits.0 = (bits.0 >> 5) | (bits.1 << 59)
            bits.1 >>= 5
        }
        return AssetID(uncheckedRawValue: String(decoding: chars, as: UTF8.self))
    }

    /// A fresh random id from the system's generator.
    public static func random() -> AssetID {
        var g = SystemRandomNumberGenerator()
        return random(using: &g)
    }

    init(uncheckedRawValue: String) { rawValue = uncheckedRawValue }

    public var description: String { rawValue }
    public static func < (a: AssetID, b: AssetID) -> Bool { a.rawValue < b.rawValue }
}
