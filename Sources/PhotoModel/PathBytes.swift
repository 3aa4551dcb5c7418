/// A file-system path as the kernel sees it: bytes, not a Swift `String` (whose equality
/// merges NFC and NFD spellings and which cannot hold names that are not UTF-8).
public struct PathBytes: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    public init(stringLiteral value: String) { self.init(value) }

    /// The UTF-8 reading of the path (invalid sequences become U+FFFD).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether the bytes are valid UTF-8 (when not, the wire adds `pathBytes`).
    public var isValidUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    public var description: String { string }

    /// Hashes the bytes in one call (an array hashes element by element: one `Hasher.combine`
    /// per byte, which showed in profiles of the watcher and the writer).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (a: PathBytes, b: PathBytes) -> Bool { a.bytes == b.bytes }

    /// The path with `name` appended after a `/`.
    public func appending(_ name: [UInt8]) -> PathBytes {
        var b = bytes
        if b.last != UInt8(ascii: "/") { b.append(UInt8(ascii: "/")) }
        b.append(contentsOf: name)
        return PathBytes(b)
    }

    public func appending(_ name: String) -> PathBytes { appending(Array(name.utf8)) }

    /// The last component.
    public var lastComponent: [UInt8] {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return bytes }
        return Array(bytes[(slash + 1)...])
    }

    /// Everything before the last `/` (`/` for a top-level entry).
    public var parent: PathBytes {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return PathBytes(".") }
        return slash == 0 ? PathBytes("/") : PathBytes(Array(bytes[..<slash]))
    }

    /// Whether this path is `other` or lies below it.
    public func isWithin(_ other: PathBytes) -> Bool {
        if bytes == other.bytes { return true }
        let prefix = other.bytes.last == UInt8(ascii: "/") ? other.bytes : other.bytes + [UInt8(ascii: "/")]
        return bytes.starts(with: prefix)
    }

    /// Byte order, the order SQLite's BLOB comparison uses.
    public static func < (a: PathBytes, b: PathBytes) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    public func withCString<R, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        try Self.withCString(bytes, body)
    }

    /// Runs `body` with a NUL-terminated copy of `bytes`.
    public static func withCString<R, E: Error>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        var c = bytes
        c.append(0)
        return try c.withUnsafeBufferPointer { (p: UnsafeBufferPointer<UInt8>) throws(E) -> R in
            try p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: c.count) { (q: UnsafePointer<CChar>) throws(E) -> R in
                try body(q)
            }
        }
    }
}
