import PhotoModel
import PhotoWire

/// A reply from photod that does not have the shape its method promises: a member missing, or
/// of the wrong type, or a value that does not parse. Extra members are never an error (newer
/// daemons add them).
public struct MalformedReply: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the reply, as a path: `assets[3].pixelWidth`.
    public var path: String
    /// What was expected there: `"an integer"`, `"a date-time YYYY-MM-DDTHH:MM:SS[.mmm]"`.
    public var expected: String
    /// What was found: a JSON type name (`"string"`), `"nothing"`, or the offending text.
    public var found: String

    /// A complaint about the value at `path`.
    public init(path: String, expected: String, found: String) {
        self.path = path
        self.expected = expected
        self.found = found
    }

    /// `'assets[3].pixelWidth' must be an integer or null (got string)`.
    public var description: String { "'\(path)' must be \(expected) (got \(found))" }
}

/// Reads the members of one reply object, each read naming its path when it fails.
/// Optional members may be absent or `null`; required ones must be present and not `null`.
struct Fields {
    let object: JSONObject
    let path: String

    /// The object at `path`, or `MalformedReply` when `value` is not an object.
    init(_ value: JSONValue, at path: String) throws(MalformedReply) {
        guard case .object(let object) = value else { throw MalformedReply(path: path, expected: "an object", found: value.typeName) }
        self.object = object
        self.path = path
    }

    func at(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    private func required(_ key: String, _ expected: String) throws(MalformedReply) -> JSONValue {
        switch object[key] {
        case nil: throw MalformedReply(path: at(key), expected: expected, found: "nothing")
        case .null?: throw MalformedReply(path: at(key), expected: expected, found: "null")
        case let value?: return value
        }
    }

    /// The member, nil when absent or `null`.
    private func optional(_ key: String) -> JSONValue? {
        switch object[key] {
        case nil, .null?: return nil
        case let value?: return value
        }
    }

    private func mismatch(_ key: String, _ expected: String, _ value: JSONValue) -> MalformedReply {
        MalformedReply(path: at(key), expected: expected, found: value.typeName)
    }

    func string(_ key: String) throws(MalformedReply) -> String {
        let value = try required(key, "a string")
        guard let s = value.stringValue else { throw mismatch(key, "a string", value) }
        return s
    }

    func optionalString(_ key: String) throws(MalformedReply) -> String? {
        guard let value = optional(key) else { return nil }
        guard let s = value.stringValue else { throw mismatch(key, "a string or null", value) }
        return s
    }

    func int(_ key: String) throws(MalformedReply) -> Int64 {
        let value = try required(key, "an integer")
        guard let i = value.int64Value else { throw mismatch(key, "an integer", value) }
        return i
    }

    func optionalInt(_ key: String) throws(MalformedReply) -> Int64? {
        guard let value = optional(key) else { return nil }
        guard let i = value.int64Value else { throw mismatch(key, "an integer or null", value) }
        return i
    }

    func count(_ key: String) throws(MalformedReply) -> Int {
        let i = try int(key)
        guard i >= 0, let n = Int(exactly: i) else { throw MalformedReply(path: at(key), expected: "a count (≥ 0)", found: String(i)) }
        return n
    }

    func optionalDouble(_ key: String) throws(MalformedReply) -> Double? {
        guard let value = optional(key) else { return nil }
        guard let d = value.doubleValue else { throw mismatch(key, "a number or null", value) }
        return d
    }

    func bool(_ key: String) throws(MalformedReply) -> Bool {
        let value = try required(key, "true or false")
        guard let b = value.boolValue else { throw mismatch(key, "true or false", value) }
        return b
    }

    func optionalBool(_ key: String) throws(MalformedReply) -> Bool? {
        guard let value = optional(key) else { return nil }
        guard let b = value.boolValue else { throw mismatch(key, "true, false or null", value) }
        return b
    }

    /// The elements of an array member, each with its path (`key[i]`).
    func array(_ key: String) throws(MalformedReply) -> [(value: JSONValue, path: String)] {
        let value = try required(key, "an array")
        guard let items = value.arrayValue else { throw mismatch(key, "an array", value) }
        return items.enumerated().map { ($0.element, "\(at(key))[\($0.offset)]") }
    }

    func strings(_ key: String) throws(MalformedReply) -> [String] {
        var out: [String] = []
        for (value, path) in try array(key) {
            guard let s = value.stringValue else { throw MalformedReply(path: path, expected: "a string", found: value.typeName) }
            out.append(s)
        }
        return out
    }

    /// An array of strings that may be absent or null (from a daemon before it): empty then.
    func optionalStrings(_ key: String) throws(MalformedReply) -> [String] {
        guard let value = optional(key), value != .null else { return [] }
        return try strings(key)
    }

    /// Each element of an array member decoded by `decode`.
    func objects<T>(_ key: String, _ decode: (JSONValue, String) throws(MalformedReply) -> T) throws(MalformedReply) -> [T] {
        var out: [T] = []
        for (value, path) in try array(key) { out.append(try decode(value, path)) }
        return out
    }

    /// A nested object member.
    func fields(_ key: String) throws(MalformedReply) -> Fields {
        try Fields(try required(key, "an object"), at: at(key))
    }

    /// A nested object member that may be absent or null.
    func optionalFields(_ key: String) throws(MalformedReply) -> Fields? {
        guard let value = optional(key), value != .null else { return nil }
        return try Fields(value, at: at(key))
    }

    /// A path: `key` (UTF-8 text) or, when present, `keyBytes` (base64 of the raw bytes).
    func path(_ key: String) throws(MalformedReply) -> PathBytes {
        if let encoded = try optionalString(key + "Bytes") {
            guard let bytes = Base64.decode(encoded) else {
                throw MalformedReply(path: at(key + "Bytes"), expected: "base64", found: "\"\(encoded.prefix(40))\"")
            }
            return PathBytes(bytes)
        }
        return PathBytes(try string(key))
    }

    func optionalPath(_ key: String) throws(MalformedReply) -> PathBytes? {
        guard optional(key) != nil || optional(key + "Bytes") != nil else { return nil }
        return try path(key)
    }

    /// A capture-clock date-time, `YYYY-MM-DDTHH:MM:SS[.mmm]`.
    func localDateTime(_ key: String) throws(MalformedReply) -> LocalDateTime {
        let text = try string(key)
        guard let t = LocalDateTime(iso: text) else {
            throw MalformedReply(path: at(key), expected: "a date-time YYYY-MM-DDTHH:MM:SS[.mmm]", found: "\"\(text.prefix(40))\"")
        }
        return t
    }

    func optionalLocalDateTime(_ key: String) throws(MalformedReply) -> LocalDateTime? {
        guard optional(key) != nil else { return nil }
        return try localDateTime(key)
    }

    /// A UTC time, `YYYY-MM-DDTHH:MM:SS.mmmZ`, as Unix milliseconds.
    func utcMilliseconds(_ key: String) throws(MalformedReply) -> Int64 {
        let text = try string(key)
        guard text.hasSuffix("Z"), let t = LocalDateTime(iso: String(text.dropLast())) else {
            throw MalformedReply(path: at(key), expected: "a UTC time YYYY-MM-DDTHH:MM:SS.mmmZ", found: "\"\(text.prefix(40))\"")
        }
        return t.unixSeconds(offsetSeconds: 0) * 1000 + Int64(t.millisecond ?? 0)
    }

    func optionalOffset(_ key: String) throws(MalformedReply) -> UTCOffset? {
        guard let text = try optionalString(key) else { return nil }
        guard let offset = UTCOffset(parsing: text) else {
            throw MalformedReply(path: at(key), expected: "a UTC offset like +02:00", found: "\"\(text.prefix(40))\"")
        }
        return offset
    }
}

/// RFC 4648 base64 decoding, for `pathBytes`.
enum Base64 {
    /// The bytes, or nil when `text` is not canonical padded base64.
    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            var n: UInt32 = 0
            var padding = 0
            for j in 0..<4 {
                let c = chars[i + j]
                let v: UInt32
                switch c {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
                case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
                case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
                case UInt8(ascii: "+"): v = 62
                case UInt8(ascii: "/"): v = 63
                case UInt8(ascii: "=") where i + 4 == chars.count && j >= 2: v = 0; padding += 1
                default: return nil
                }
                // Data after padding ("a=b=") is not base64.
                if padding > 0 && c != UInt8(ascii: "=") { return nil }
                n = n << 6 | v
            }
            out.append(UInt8(n >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}
