/// A JSON value (RFC 8259), as photod's wire protocol carries it.
///
/// Numbers keep the distinction the protocol cares about: a literal integer that fits
/// `Int64` is `.int`, every other number is `.double`. Equality is structural and therefore
/// distinguishes `.int(1)` from `.double(1)`; use ``intValue`` or ``doubleValue`` to compare
/// numerically. A `.double` is expected to be finite: the parser never produces NaN or
/// infinity, and the serializer writes a non-finite double as `null`.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer that fits `Int64`.
    case int(Int64)
    /// Any other number (with a fraction or an exponent, or outside `Int64`'s range).
    case double(Double)
    /// A string (any Unicode text; the wire form is UTF-8).
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, with its members in insertion order.
    case object(JSONObject)
}

// MARK: - Convenience initializers

extension JSONValue {
    /// An integer value.
    public init(_ value: Int) { self = .int(Int64(value)) }
    /// A floating-point value (`null` on the wire when not finite).
    public init(_ value: Double) { self = .double(value) }
    /// A string value.
    public init(_ value: String) { self = .string(value) }
    /// A boolean value.
    public init(_ value: Bool) { self = .bool(value) }
    /// An array of strings.
    public init(_ strings: [String]) { self = .array(strings.map { .string($0) }) }
    /// `value` wrapped, or `null` when it is nil: the daemon's optional fields (`utcOffset`,
    /// `latitude`, …) are present and `null` rather than absent.
    public init(_ value: JSONValue?) { self = value ?? .null }
}

// MARK: - Accessors

extension JSONValue {
    /// The member `key` of an object (the last one when the key is duplicated); nil when
    /// this is not an object or has no such member.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index` of an array; nil when this is not an array or the index is
    /// out of bounds (never traps, so it is safe on client input).
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, when this is an integer or a double with an integral value in `Int64`'s
    /// range (`2.0` is 2; `2.5` and `1e300` are nil) — clients in languages without an
    /// integer type send `2.0`.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            // Not `Int64(exactly:)`: it calls libm's `trunc`, and PhotoWire links no C
            // library (a client executable with only PhotoWire would fail to link).
            guard d >= -0x1p63, d < 0x1p63 else { return nil }  // false for NaN too
            let i = Int64(d)
            return Double(i) == d ? i : nil
        default: return nil
        }
    }

    /// ``int64Value`` as an `Int` (the same width on the 64-bit platforms photod runs on).
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    /// The number as a `Double`, when this is a number of either kind (a large `.int` is
    /// rounded to the nearest double).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The object, when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type's name (`"null"`, `"boolean"`, `"integer"`, `"number"`, `"string"`,
    /// `"array"`, `"object"`), for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral {
    /// `nil` is `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// `true` / `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An integer literal is `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A floating-point literal is `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string literal is `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array literal is `.array`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// A dictionary literal is `.object`, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject(minimumCapacity: elements.count)
        for (key, value) in elements { object.append(key, value) }
        self = .object(object)
    }
}

// MARK: - JSONObject

/// A JSON object that keeps its members in insertion order, so that what the daemon writes
/// reads in a stable, documented order (`id` first, …).
///
/// Stored as two parallel arrays: the objects photod handles are small (an asset record has
/// about 20 members, request params a handful), where a linear scan beats hashing and keeps
/// serialization a straight walk.
///
/// **Duplicate keys.** RFC 8259 leaves them undefined. The parser keeps every member as
/// sent (nothing is silently lost, and parsing stays linear on hostile input); a lookup
/// returns the **last** member with the key, as most JSON implementations do. Assigning
/// through the subscript replaces that last member. Equality compares the members in order,
/// duplicates included.
public struct JSONObject: Sendable, Hashable {
    /// The keys, in insertion order (duplicates included).
    public private(set) var keys: [String]
    /// The values, parallel to ``keys``.
    public private(set) var values: [JSONValue]

    /// An empty object.
    public init() {
        keys = []
        values = []
    }

    /// An empty object with room for `minimumCapacity` members.
    public init(minimumCapacity: Int) {
        keys = []
        values = []
        keys.reserveCapacity(minimumCapacity)
        values.reserveCapacity(minimumCapacity)
    }

    /// An object from parallel arrays (the parser's fast path); a length mismatch is a bug.
    init(keys: [String], values: [JSONValue]) {
        precondition(keys.count == values.count, "JSONObject: keys and values differ in length")
        self.keys = keys
        self.values = values
    }

    /// An object with these members, in this order.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        self.init()
        for (key, value) in members { append(key, value) }
    }

    /// The number of members (duplicates included).
    public var count: Int { keys.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { keys.isEmpty }

    /// The index of the last member named `key`.
    func lastIndex(of key: String) -> Int? {
        keys.lastIndex(of: key)
    }

    /// The value of the last member named `key`. Setting a value replaces that member (or
    /// appends one); setting nil removes every member named `key`.
    public subscript(key: String) -> JSONValue? {
        get { lastIndex(of: key).map { values[$0] } }
        set {
            if let newValue {
                if let i = lastIndex(of: key) { values[i] = newValue } else { append(key, newValue) }
            } else {
                removeAll(key)
            }
        }
    }

    /// Whether a member named `key` exists.
    public func contains(_ key: String) -> Bool { lastIndex(of: key) != nil }

    /// Appends a member without looking for an existing one — the builder's fast path. The
    /// caller keeps keys unique.
    public mutating func append(_ key: String, _ value: JSONValue) {
        keys.append(key)
        values.append(value)
    }

    /// Removes every member named `key`.
    public mutating func removeAll(_ key: String) {
        var i = 0
        while i < keys.count {
            if keys[i] == key {
                keys.remove(at: i)
                values.remove(at: i)
            } else {
                i += 1
            }
        }
    }

    /// Reserves room for `minimumCapacity` members.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        keys.reserveCapacity(minimumCapacity)
        values.reserveCapacity(minimumCapacity)
    }
}

extension JSONObject: RandomAccessCollection {
    /// A member: its key and value.
    public typealias Element = (key: String, value: JSONValue)
    /// Members are indexed by position.
    public typealias Index = Int
    /// The position of the first member.
    public var startIndex: Int { 0 }
    /// The position past the last member.
    public var endIndex: Int { keys.count }
    /// The member at `position`.
    public subscript(position: Int) -> Element { (keys[position], values[position]) }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A dictionary literal keeps its order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { append(key, value) }
    }
}
