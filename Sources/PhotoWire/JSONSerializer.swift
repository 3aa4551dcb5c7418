// Serialization: compact JSON on one line. Every function appends to a caller-owned
// `[UInt8]`, so the daemon can reuse one buffer per connection and never builds
// intermediate Strings on the hot path (a page of 1,000 asset records).

extension JSONValue {
    /// The compact JSON text of this value, as UTF-8 bytes. It never contains a raw newline
    /// (so it fits the protocol's one-message-per-line framing): strings escape `"`, `\` and
    /// every control character (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00XX`); other Unicode
    /// stays UTF-8 and `/` is not escaped. Object members keep their order. Integers are
    /// exact; doubles use the shortest form that reads back to the same value (`0.1`, `5.0`,
    /// `1e-05`, `1e+16`), and a non-finite double, which JSON cannot express, is `null`.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return bytes
    }

    /// Appends ``serialized()`` to `buffer`.
    public func write(into buffer: inout [UInt8]) {
        switch self {
        case .null: JSONEncoding.appendASCII("null", to: &buffer)
        case .bool(let b): JSONEncoding.appendASCII(b ? "true" : "false", to: &buffer)
        case .int(let i): JSONEncoding.appendInt(i, to: &buffer)
        case .double(let d): JSONEncoding.appendDouble(d, to: &buffer)
        case .string(let s): JSONEncoding.appendString(s, to: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                element.write(into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let object):
            buffer.append(UInt8(ascii: "{"))
            for index in 0..<object.count {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                JSONEncoding.appendString(object.keys[index], to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                object.values[index].write(into: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    /// ``serialized()`` as a String.
    public var jsonString: String { String(decoding: serialized(), as: UTF8.self) }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text (``jsonString``).
    public var description: String { jsonString }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text of the object.
    public var description: String { JSONValue.object(self).jsonString }
}

/// The primitive encoders shared by ``JSONValue`` and ``JSONWriter``, so that both produce
/// identical bytes.
enum JSONEncoding {
    static func appendASCII(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    static func appendString(_ string: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { appendEscaped($0, to: &buffer) }
        if done == nil {
            // Bridged or otherwise non-contiguous strings: make a native copy.
            var copy = string
            copy.withUTF8 { appendEscaped($0, to: &buffer) }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Appends UTF-8 text escaped for a JSON string body: runs of bytes that need no escape
    /// are copied in one go.
    static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        var runStart = 0
        var index = 0
        guard let base = utf8.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        while index < utf8.count {
            // Skip eight clean bytes at a time: most strings (ids, paths, names) need no
            // escape at all, and then the whole string is copied in one go below.
            if index + 8 <= utf8.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if !needsEscape(word) {
                    index += 8
                    continue
                }
            }
            let byte = utf8[index]
            // Bytes >= 0x20 other than `"` and `\` stand for themselves (multi-byte UTF-8
            // sequences consist of bytes >= 0x80, so a 0x0A is always a real newline).
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            if runStart < index { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            buffer.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer.append(byte)
            case 0x0A: buffer.append(UInt8(ascii: "n"))
            case 0x0D: buffer.append(UInt8(ascii: "r"))
            case 0x09: buffer.append(UInt8(ascii: "t"))
            case 0x08: buffer.append(UInt8(ascii: "b"))
            case 0x0C: buffer.append(UInt8(ascii: "f"))
            default:
                let hexDigits: StaticString = "0123456789abcdef"
                hexDigits.withUTF8Buffer { hex in
                    buffer.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                               hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            index += 1
            runStart = index
        }
        if runStart < utf8.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }

    /// Whether any of the eight bytes is a control character, `"` or `\` (SWAR: the
    /// high bit of a byte of `x - 0x01…` is set where that byte of `x` was zero, or, for
    /// `hasLess`, below the bound; any false positive only sends the word to the byte loop).
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let controls = (word &- ones &* 0x20) & ~word
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let found = controls | ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
        return found & highs != 0
    }

    static func appendInt(_ value: Int64, to buffer: inout [UInt8]) {
        var magnitude = value.magnitude
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        if magnitude < 10 {
            buffer.append(UInt8(ascii: "0") + UInt8(magnitude))
            return
        }
        // Digits are produced backwards into a small stack buffer, then copied once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            while magnitude > 0 {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Below 2^53 Swift's shortest round-trip description of an integral double is its
    /// integer digits and `.0`; writing those directly skips a String allocation for the
    /// common case (pixel sizes, durations, file sizes as doubles).
    static let integralFastPathLimit = 9_007_199_254_740_992.0

    static func appendDouble(_ value: Double, to buffer: inout [UInt8]) {
        guard value.isFinite else {
            appendASCII("null", to: &buffer)
            return
        }
        // `Double(Int64(value)) == value` tests integrality without libm's `trunc`.
        if value.magnitude < integralFastPathLimit, Double(Int64(value)) == value {
            if value == 0 && value.sign == .minus { buffer.append(UInt8(ascii: "-")) }
            appendInt(Int64(value), to: &buffer)
            appendASCII(".0", to: &buffer)
        } else {
            // Swift's description is the shortest round-trip form and always valid JSON
            // for finite values (`1e-05`, `1.5e+300`): digits, `.`, `e`, a signed exponent.
            buffer.append(contentsOf: value.description.utf8)
        }
    }
}

/// Writes JSON straight into a byte buffer, without building a ``JSONValue`` tree first —
/// for the daemon's hot paths (pages of asset records). The output is byte-for-byte what
/// ``JSONValue/serialized()`` produces for the same structure.
///
/// Commas are inserted automatically. The writer trusts its caller for the rest: inside an
/// object, call ``key(_:)`` before each value (or use the `field` methods), and balance
/// every `begin` with its `end`.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.field("id", "a_abc")
/// writer.field("pixelWidth", 4032)
/// writer.key("subtypes"); writer.beginArray(); writer.value("live"); writer.endArray()
/// writer.endObject()
/// // writer.bytes == Array(#"{"id":"a_abc","pixelWidth":4032,"subtypes":["live"]}"#.utf8)
/// ```
public struct JSONWriter: Sendable {
    /// The bytes written so far (plus whatever the buffer held when the writer was made).
    public var bytes: [UInt8]
    /// Open containers; at depth 0 values are top-level and get no comma.
    private var depth = 0

    /// A writer with an empty buffer of at least `capacity` bytes.
    public init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// A writer that appends to `buffer` — hand in a buffer kept from earlier writes to
    /// reuse its capacity.
    public init(appendingTo buffer: [UInt8]) {
        bytes = buffer
    }

    /// Empties the buffer, keeping its capacity, and forgets any open containers.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        depth = 0
    }

    /// A comma, unless this is the first thing in a container (the previous byte opens it or
    /// is a key's colon) or at the top level. No complete value ends in `[`, `{` or `:`, so
    /// the last byte tells.
    private mutating func separate() {
        guard depth > 0, let last = bytes.last else { return }
        if last != UInt8(ascii: "[") && last != UInt8(ascii: "{") && last != UInt8(ascii: ":") {
            bytes.append(UInt8(ascii: ","))
        }
    }

    /// Opens an object (as a value).
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        depth += 1
    }

    /// Closes the innermost object.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        depth -= 1
    }

    /// Opens an array (as a value).
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        depth += 1
    }

    /// Closes the innermost array.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        depth -= 1
    }

    /// Writes a member's key and colon; the next value is the member's value.
    public mutating func key(_ key: String) {
        separate()
        JSONEncoding.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a string value.
    public mutating func value(_ value: String) {
        separate()
        JSONEncoding.appendString(value, to: &bytes)
    }

    /// Writes an integer value.
    public mutating func value(_ value: Int) {
        separate()
        JSONEncoding.appendInt(Int64(value), to: &bytes)
    }

    /// Writes an integer value.
    public mutating func value(_ value: Int64) {
        separate()
        JSONEncoding.appendInt(value, to: &bytes)
    }

    /// Writes a double value (`null` when not finite).
    public mutating func value(_ value: Double) {
        separate()
        JSONEncoding.appendDouble(value, to: &bytes)
    }

    /// Writes `true` or `false`.
    public mutating func value(_ value: Bool) {
        separate()
        JSONEncoding.appendASCII(value ? "true" : "false", to: &bytes)
    }

    /// Writes a whole value tree.
    public mutating func value(_ value: JSONValue) {
        separate()
        value.write(into: &bytes)
    }

    /// Writes a string value, or `null` when nil.
    public mutating func value(_ value: String?) {
        if let value { self.value(value) } else { nullValue() }
    }

    /// Writes an integer value, or `null` when nil.
    public mutating func value(_ value: Int?) {
        if let value { self.value(value) } else { nullValue() }
    }

    /// Writes an integer value, or `null` when nil.
    public mutating func value(_ value: Int64?) {
        if let value { self.value(value) } else { nullValue() }
    }

    /// Writes a double value, or `null` when nil (or not finite).
    public mutating func value(_ value: Double?) {
        if let value { self.value(value) } else { nullValue() }
    }

    /// Writes a boolean value, or `null` when nil.
    public mutating func value(_ value: Bool?) {
        if let value { self.value(value) } else { nullValue() }
    }

    /// Writes `null`.
    public mutating func nullValue() {
        separate()
        JSONEncoding.appendASCII("null", to: &bytes)
    }

    /// Writes an already-encoded JSON value verbatim (for example a cached record). The
    /// caller guarantees `json` is one complete, compact JSON value with no raw newline.
    public mutating func rawValue(_ json: some Sequence<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// Writes a member with a string value.
    public mutating func field(_ key: String, _ value: String) { self.key(key); self.value(value) }
    /// Writes a member with an integer value.
    public mutating func field(_ key: String, _ value: Int) { self.key(key); self.value(value) }
    /// Writes a member with an integer value.
    public mutating func field(_ key: String, _ value: Int64) { self.key(key); self.value(value) }
    /// Writes a member with a double value.
    public mutating func field(_ key: String, _ value: Double) { self.key(key); self.value(value) }
    /// Writes a member with a boolean value.
    public mutating func field(_ key: String, _ value: Bool) { self.key(key); self.value(value) }
    /// Writes a member with a value tree.
    public mutating func field(_ key: String, _ value: JSONValue) { self.key(key); self.value(value) }
    /// Writes a member with a string value or `null`.
    public mutating func field(_ key: String, _ value: String?) { self.key(key); self.value(value) }
    /// Writes a member with an integer value or `null`.
    public mutating func field(_ key: String, _ value: Int?) { self.key(key); self.value(value) }
    /// Writes a member with an integer value or `null`.
    public mutating func field(_ key: String, _ value: Int64?) { self.key(key); self.value(value) }
    /// Writes a member with a double value or `null`.
    public mutating func field(_ key: String, _ value: Double?) { self.key(key); self.value(value) }
    /// Writes a member with a boolean value or `null`.
    public mutating func field(_ key: String, _ value: Bool?) { self.key(key); self.value(value) }
    /// Writes a member whose value is an array of strings.
    public mutating func field(_ key: String, _ strings: [String]) {
        self.key(key)
        beginArray()
        for string in strings { value(string) }
        endArray()
    }
}
