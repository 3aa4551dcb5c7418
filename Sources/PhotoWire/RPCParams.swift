/// Typed access to a request's named parameters that fails with precise -32602 errors:
/// `invalid params: 'limit' must be an integer between 1 and 1000 (got "ten")`.
///
/// Rules, the same for every method:
/// - Parameters are named: `params` must be an object or absent (absent reads as `{}`);
///   positional (array) params are refused.
/// - A member whose value is `null` counts as absent: an optional getter returns nil, a
///   getter with a default returns the default, a required getter reports it missing.
/// - Integers may be sent as doubles with an integral value (`2.0`), for clients whose
///   language has only doubles.
/// - Call ``rejectUnknownKeys(allowed:)`` so that a misspelt parameter (`limt`) is an error
///   rather than silently ignored.
public struct RPCParams: Sendable, Hashable {
    /// The parameters' members.
    public let members: JSONObject

    /// The named parameters of a request, from its `params`.
    public init(_ params: JSONValue?) throws(RPCError) {
        switch params {
        case nil, .null?: members = JSONObject()
        case .object(let object)?: members = object
        case let other?:
            throw .invalidParams("params must be an object with named members, not \(Self.describe(other, as: "type"))")
        }
    }

    /// Parameters with these members.
    public init(members: JSONObject) { self.members = members }

    /// The value of `key`, with `null` read as absent.
    public subscript(key: String) -> JSONValue? {
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    /// Whether `key` is present and not `null`.
    public func contains(_ key: String) -> Bool { self[key] != nil }

    // MARK: Errors

    /// The error for parameter `key` whose value is `value` when it should be `expectation`
    /// (`"an integer between 1 and 1000"`).
    public static func mismatch(_ key: String, _ expectation: String, got value: JSONValue) -> RPCError {
        .invalidParams("'\(key)' must be \(expectation) (got \(describe(value, as: "value")))", param: key)
    }

    /// The error for a required parameter that is missing.
    public static func missing(_ key: String) -> RPCError {
        .invalidParams("'\(key)' is required", param: key)
    }

    /// How a wrong value is quoted in a message: its compact JSON, cut at 40 characters so a
    /// hostile megabyte never ends up in an error message (or a log).
    static func describe(_ value: JSONValue, as what: String) -> String {
        if what == "type" { return value.typeName }
        let json = value.jsonString
        return json.count > 40 ? String(json.prefix(40)) + "…" : json
    }

    static func integerExpectation(_ range: ClosedRange<Int>?) -> String {
        guard let range else { return "an integer" }
        switch (range.lowerBound, range.upperBound) {
        case (Int.min, Int.max): return "an integer"
        case (0, Int.max): return "a non-negative integer"
        case (let low, Int.max): return "an integer of at least \(low)"
        case (Int.min, let high): return "an integer of at most \(high)"
        case (let low, let high): return "an integer between \(low) and \(high)"
        }
    }

    // MARK: Integers

    /// The integer `key`, or `default` when absent; an error when absent without a default,
    /// not an integer, or outside `range`.
    public func int(_ key: String, default defaultValue: Int? = nil,
                    in range: ClosedRange<Int>? = nil) throws(RPCError) -> Int {
        if let value = try optionalInt(key, in: range) { return value }
        if let defaultValue { return defaultValue }
        throw Self.missing(key)
    }

    /// The integer `key`, or nil when absent; an error when not an integer or outside `range`.
    public func optionalInt(_ key: String, in range: ClosedRange<Int>? = nil) throws(RPCError) -> Int? {
        guard let value = self[key] else { return nil }
        guard let int = value.intValue, range?.contains(int) ?? true else {
            throw Self.mismatch(key, Self.integerExpectation(range), got: value)
        }
        return int
    }

    // MARK: Doubles

    /// The number `key`, or `default` when absent; an error when absent without a default,
    /// not a number, or outside `range`.
    public func double(_ key: String, default defaultValue: Double? = nil,
                       in range: ClosedRange<Double>? = nil) throws(RPCError) -> Double {
        if let value = try optionalDouble(key, in: range) { return value }
        if let defaultValue { return defaultValue }
        throw Self.missing(key)
    }

    /// The number `key`, or nil when absent; an error when not a number or outside `range`.
    public func optionalDouble(_ key: String, in range: ClosedRange<Double>? = nil) throws(RPCError) -> Double? {
        guard let value = self[key] else { return nil }
        guard let double = value.doubleValue, range?.contains(double) ?? true else {
            let expectation = range.map { "a number between \($0.lowerBound) and \($0.upperBound)" } ?? "a number"
            throw Self.mismatch(key, expectation, got: value)
        }
        return double
    }

    // MARK: Strings

    /// The string `key`, or `default` when absent; an error when absent without a default or
    /// not a string.
    public func string(_ key: String, default defaultValue: String? = nil) throws(RPCError) -> String {
        if let value = try optionalString(key) { return value }
        if let defaultValue { return defaultValue }
        throw Self.missing(key)
    }

    /// The string `key`, or nil when absent; an error when not a string.
    public func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let value = self[key] else { return nil }
        guard case .string(let string) = value else { throw Self.mismatch(key, "a string", got: value) }
        return string
    }

    /// The string `key`, which must be one of `choices`, or `default` when absent:
    /// `'mediaType' must be one of "image", "video" (got "sound")`.
    public func string(_ key: String, oneOf choices: [String], default defaultValue: String? = nil) throws(RPCError) -> String {
        if let value = try optionalString(key, oneOf: choices) { return value }
        if let defaultValue { return defaultValue }
        throw Self.missing(key)
    }

    /// The string `key`, which must be one of `choices`, or nil when absent.
    public func optionalString(_ key: String, oneOf choices: [String]) throws(RPCError) -> String? {
        guard let value = self[key] else { return nil }
        guard case .string(let string) = value, choices.contains(string) else {
            let list = choices.map { JSONValue.string($0).jsonString }.joined(separator: ", ")
            throw Self.mismatch(key, "one of \(list)", got: value)
        }
        return string
    }

    // MARK: Booleans

    /// The boolean `key`, or `default` when absent; an error when absent without a default
    /// or not `true`/`false`.
    public func bool(_ key: String, default defaultValue: Bool? = nil) throws(RPCError) -> Bool {
        if let value = try optionalBool(key) { return value }
        if let defaultValue { return defaultValue }
        throw Self.missing(key)
    }

    /// The boolean `key`, or nil when absent; an error when not `true`/`false`.
    public func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        guard let value = self[key] else { return nil }
        guard case .bool(let bool) = value else { throw Self.mismatch(key, "true or false", got: value) }
        return bool
    }

    // MARK: Arrays and objects

    /// The array of strings `key`, or `default` when absent; an error when absent without a
    /// default, not an array of strings (naming the first bad element, `'ids[3]'`), or
    /// longer than `maxCount`.
    public func stringArray(_ key: String, default defaultValue: [String]? = nil,
                            maxCount: Int? = nil) throws(RPCError) -> [String] {
        if let value = try optionalStringArray(key, maxCount: maxCount) { return value }
        if let defaultValue { return defaultValue }
        throw Self.missing(key)
    }

    /// The array of strings `key`, or nil when absent.
    public func optionalStringArray(_ key: String, maxCount: Int? = nil) throws(RPCError) -> [String]? {
        guard let value = self[key] else { return nil }
        guard case .array(let elements) = value else { throw Self.mismatch(key, "an array of strings", got: value) }
        if let maxCount, elements.count > maxCount {
            throw .invalidParams("'\(key)' must have at most \(maxCount) elements (got \(elements.count))", param: key)
        }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let string) = element else {
                throw .invalidParams("'\(key)[\(index)]' must be a string (got \(Self.describe(element, as: "value")))",
                                     param: key)
            }
            strings.append(string)
        }
        return strings
    }

    /// The array `key`, or nil when absent; an error when not an array.
    public func optionalArray(_ key: String) throws(RPCError) -> [JSONValue]? {
        guard let value = self[key] else { return nil }
        guard case .array(let elements) = value else { throw Self.mismatch(key, "an array", got: value) }
        return elements
    }

    /// The object `key`; an error when absent or not an object.
    public func object(_ key: String) throws(RPCError) -> JSONObject {
        if let value = try optionalObject(key) { return value }
        throw Self.missing(key)
    }

    /// The object `key`, or nil when absent; an error when not an object.
    public func optionalObject(_ key: String) throws(RPCError) -> JSONObject? {
        guard let value = self[key] else { return nil }
        guard case .object(let object) = value else { throw Self.mismatch(key, "an object", got: value) }
        return object
    }

    // MARK: Unknown keys

    /// An error naming the first member not in `allowed`:
    /// `unknown parameter 'limt' (expected one of: 'limit', 'offset')`.
    public func rejectUnknownKeys(allowed: Set<String>) throws(RPCError) {
        for key in members.keys where !allowed.contains(key) {
            let list = allowed.sorted().map { "'\($0)'" }.joined(separator: ", ")
            let shown = key.count > 40 ? String(key.prefix(40)) + "…" : key
            throw .invalidParams(allowed.isEmpty ? "unknown parameter '\(shown)' (this method takes none)"
                                                 : "unknown parameter '\(shown)' (expected one of: \(list))",
                                 param: shown)
        }
    }
}
