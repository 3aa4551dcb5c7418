import PhotoWire

/// SplitMix64: a tiny seeded generator, so every "random" test is reproducible from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random JSON trees that exercise the serializer's and parser's corners: control
/// characters, quotes, backslashes, astral scalars, extreme integers, arbitrary finite
/// doubles, duplicate keys, empty containers.
struct RandomJSON {
    var rng: SplitMix64
    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func value(depth: Int = 0) -> JSONValue {
        let leafOnly = depth >= 5
        switch Int.random(in: 0..<(leafOnly ? 6 : 9), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(integer())
        case 3: return .double(double())
        case 4, 5: return .string(string())
        case 6: return .array((0..<Int.random(in: 0..<6, using: &rng)).map { _ in value(depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0..<6, using: &rng) {
                // A small key alphabet makes duplicate keys common.
                let key = Int.random(in: 0..<4, using: &rng) == 0 ? ["a", "b", "id"].randomElement(using: &rng)! : string()
                object.append(key, value(depth: depth + 1))
            }
            return .object(object)
        }
    }

    mutating func integer() -> Int64 {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return [Int64.min, Int64.max, 0, -1, 1, Int64.min + 1].randomElement(using: &rng)!
        case 1: return Int64.random(in: -1000...1000, using: &rng)
        default: return Int64(bitPattern: rng.next())
        }
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return [0.0, -0.0, 0.1, 1e-5, 1e16, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude,
                        -Double.leastNormalMagnitude, 9_007_199_254_740_992.0, 123456.0].randomElement(using: &rng)!
        case 1: return Double(Int.random(in: -100_000...100_000, using: &rng)) / 8
        default:
            while true {
                let d = Double(bitPattern: rng.next())
                if d.isFinite { return d }
            }
        }
    }

    mutating func string() -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0..<12, using: &rng) {
            let scalar: Unicode.Scalar
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: scalar = Unicode.Scalar(UInt8.random(in: 0..<0x20, using: &rng))
            case 1: scalar = ["\"", "\\", "/", "\u{7F}", "\u{2028}", "\u{FEFF}"].randomElement(using: &rng)!
            case 2: scalar = Unicode.Scalar(UInt32.random(in: 0x80...0xD7FF, using: &rng))!
            case 3: scalar = Unicode.Scalar(UInt32.random(in: 0x10000...0x10FFFF, using: &rng))!
            default: scalar = Unicode.Scalar(UInt8.random(in: 0x20..<0x7F, using: &rng))
            }
            scalars.append(scalar)
        }
        return String(scalars)
    }
}

extension Array where Element == UInt8 {
    /// The bytes as text, for readable expectations.
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// `s`'s UTF-8 bytes.
func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
