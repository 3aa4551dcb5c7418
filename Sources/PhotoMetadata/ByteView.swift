/// A window onto bytes held in an array, without copying them. Every accessor is bounds
/// checked against the window and returns 0 (or an empty result) outside it, so a parser
/// that miscounts reads zeros instead of trapping on a crafted file; parsers still check
/// lengths explicitly for their logic.
struct ByteView: Sendable {
    let base: [UInt8]
    let start: Int
    let count: Int

    init(_ base: [UInt8], start: Int = 0, count: Int? = nil) {
        let s = min(max(0, start), base.count)
        self.base = base
        self.start = s
        self.count = max(0, min(count ?? (base.count - s), base.count - s))
    }

    static let empty = ByteView([])

    @inline(__always) func has(_ offset: Int, _ length: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= count && length <= count - offset
    }

    @inline(__always) subscript(_ i: Int) -> UInt8 {
        i >= 0 && i < count ? base[start + i] : 0
    }

    @inline(__always) func be16(_ i: Int) -> Int {
        guard has(i, 2) else { return 0 }
        return Int(base[start + i]) << 8 | Int(base[start + i + 1])
    }

    @inline(__always) func le16(_ i: Int) -> Int {
        guard has(i, 2) else { return 0 }
        return Int(base[start + i + 1]) << 8 | Int(base[start + i])
    }

    @inline(__always) func be24(_ i: Int) -> Int {
        guard has(i, 3) else { return 0 }
        let p = start + i
        return Int(base[p]) << 16 | Int(base[p + 1]) << 8 | Int(base[p + 2])
    }

    @inline(__always) func le24(_ i: Int) -> Int {
        guard has(i, 3) else { return 0 }
        let p = start + i
        return Int(base[p + 2]) << 16 | Int(base[p + 1]) << 8 | Int(base[p])
    }

    @inline(__always) func be32(_ i: Int) -> UInt32 {
        guard has(i, 4) else { return 0 }
        let p = start + i
        return UInt32(base[p]) << 24 | UInt32(base[p + 1]) << 16 | UInt32(base[p + 2]) << 8 | UInt32(base[p + 3])
    }

    @inline(__always) func le32(_ i: Int) -> UInt32 {
        guard has(i, 4) else { return 0 }
        let p = start + i
        return UInt32(base[p + 3]) << 24 | UInt32(base[p + 2]) << 16 | UInt32(base[p + 1]) << 8 | UInt32(base[p])
    }

    @inline(__always) func be64(_ i: Int) -> UInt64 {
        UInt64(be32(i)) << 32 | UInt64(be32(i + 4))
    }

    @inline(__always) func le64(_ i: Int) -> UInt64 {
        UInt64(le32(i + 4)) << 32 | UInt64(le32(i))
    }

    /// Whether the bytes at `offset` equal `literal` (ASCII).
    func matches(_ literal: StaticString, at offset: Int = 0) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard has(offset, n) else { return false }
        return literal.withUTF8Buffer { lit in
            for k in 0..<n where base[start + offset + k] != lit[k] { return false }
            return true
        }
    }

    /// Whether the bytes at `offset` equal `bytes`.
    func matches(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
        guard has(offset, bytes.count) else { return false }
        for k in 0..<bytes.count where base[start + offset + k] != bytes[k] { return false }
        return true
    }

    /// The four bytes at `offset` as a big-endian code (box and chunk types).
    @inline(__always) func fourCC(_ i: Int) -> UInt32 { be32(i) }

    /// A sub-window (clamped to this one).
    func slice(_ offset: Int, _ length: Int) -> ByteView {
        let o = min(max(0, offset), count)
        return ByteView(base, start: start + o, count: min(max(0, length), count - o))
    }

    func slice(from offset: Int) -> ByteView { slice(offset, count - offset) }

    /// A copy of a range (clamped).
    func array(_ offset: Int, _ length: Int) -> [UInt8] {
        let v = slice(offset, length)
        return Array(v.base[v.start..<(v.start + v.count)])
    }

    func array() -> [UInt8] { array(0, count) }

    /// Calls `body` with the window's bytes (no copy).
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        base.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
    }

    /// The first index at or after `from` where `needle` occurs, searching at most up to `limit`.
    func find(_ needle: [UInt8], from: Int = 0, limit: Int? = nil) -> Int? {
        let end = min(limit ?? count, count)
        guard let first = needle.first, needle.count <= end else { return nil }
        var i = max(0, from)
        let last = end - needle.count
        while i <= last {
            if base[start + i] == first {
                var k = 1
                while k < needle.count, base[start + i + k] == needle[k] { k += 1 }
                if k == needle.count { return i }
            }
            i += 1
        }
        return nil
    }
}

/// Four-character codes as `UInt32`, for switching over box, chunk and marker types.
@inline(__always)
func fcc(_ s: StaticString) -> UInt32 {
    s.withUTF8Buffer { b in
        var v: UInt32 = 0
        for k in 0..<4 { v = v << 8 | UInt32(k < b.count ? b[k] : 0x20) }
        return v
    }
}

/// Text from metadata bytes: up to the first NUL, trimmed of spaces and NULs, as UTF-8
/// (invalid sequences repaired); `nil` when nothing is left.
func cleanText(_ bytes: some Collection<UInt8>) -> String? {
    var a = Array(bytes.prefix { $0 != 0 })
    while let l = a.last, l == 0x20 || l == 0x09 || l == 0x0A || l == 0x0D { a.removeLast() }
    var s = 0
    while s < a.count, a[s] == 0x20 || a[s] == 0x09 || a[s] == 0x0A || a[s] == 0x0D { s += 1 }
    guard s < a.count else { return nil }
    return String(decoding: a[s...], as: UTF8.self)
}

/// Text in a legacy field that may be UTF-8 or Latin-1 (IPTC-IIM before its character set
/// dataset was common; Windows tools wrote their code page).
enum TextDecoding {
    /// The text, trimmed: UTF-8 when declared or when the bytes are valid UTF-8, else each byte
    /// as its Latin-1 character. Nil when nothing is left.
    static func text(_ bytes: [UInt8], utf8 declared: Bool) -> String? {
        let trimmed = bytes.prefix { $0 != 0 }
        if declared || String(validating: trimmed, as: UTF8.self) != nil { return cleanText(trimmed) }
        var s = ""
        s.unicodeScalars.append(contentsOf: trimmed.map { Unicode.Scalar($0) })
        return cleanText(Array(s.utf8))
    }
}
