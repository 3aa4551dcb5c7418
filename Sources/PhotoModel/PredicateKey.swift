/// The keys a predicate can test: a fixed catalogue, each with one value type and the operators
/// that make sense for it. Names are case-sensitive (as on the wire); `docs/PREDICATES.md`
/// has the table.
public enum PredicateKey: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case mediaType, subtypes, localDateTime, localDate, pixelWidth, pixelHeight, isFavorite, isHidden, make, model,
         path, latitude, longitude, duration, addedDate, keywords, frameRate, bitRate, videoCodec, audioCodec,
         city, region, country, countryCode, location

    /// What a key's values are.
    public enum ValueType: Sendable, Hashable {
        /// `"image"` or `"video"`.
        case mediaType
        /// A set of `AssetSubtype` names.
        case subtypes
        /// `"YYYY-MM-DDTHH:MM:SS[.fff]"` or `"YYYY-MM-DD"` (midnight), on the capture clock.
        case localDateTime
        /// `"YYYY-MM-DD"`, the calendar day on the capture clock.
        case localDate
        /// `"YYYY-MM-DDTHH:MM:SS[.fff]Z"` or `"YYYY-MM-DD"` (midnight UTC).
        case instant
        case integer
        /// A number (integer or decimal).
        case real
        case boolean
        /// Text compared case-insensitively for ASCII letters.
        case text
        /// Path bytes, compared byte for byte.
        case path
        /// A set of keywords, members compared case-insensitively for ASCII letters.
        case keywords
        /// The asset's coordinates, tested against an area (`WITHIN`, `NEAR`).
        case location
    }

    public var description: String { rawValue }

    /// The key's value type.
    public var valueType: ValueType {
        switch self {
        case .mediaType: return .mediaType
        case .subtypes: return .subtypes
        case .localDateTime: return .localDateTime
        case .localDate: return .localDate
        case .addedDate: return .instant
        case .pixelWidth, .pixelHeight, .bitRate: return .integer
        case .latitude, .longitude, .duration, .frameRate: return .real
        case .isFavorite, .isHidden: return .boolean
        case .make, .model, .videoCodec, .audioCodec, .city, .region, .country, .countryCode: return .text
        case .path: return .path
        case .keywords: return .keywords
        case .location: return .location
        }
    }

    /// Whether an asset may lack the value (the key then takes `== null` and `!= null`).
    public var isNullable: Bool {
        switch self {
        case .pixelWidth, .pixelHeight, .make, .model, .latitude, .longitude, .duration, .frameRate, .bitRate, .videoCodec,
             .audioCodec, .city, .region, .country, .countryCode: return true
        default: return false
        }
    }

    /// The operators the key takes, in the order error messages list them.
    public var operators: [PredicateOperator] {
        switch valueType {
        case .mediaType: return [.equal, .notEqual, .isIn]
        case .subtypes: return [.contains, .equal, .notEqual]
        case .localDateTime, .localDate, .instant, .integer, .real:
            return [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .isIn, .between]
        case .boolean: return [.equal, .notEqual]
        case .text, .path: return [.equal, .notEqual, .isIn, .contains, .beginsWith]
        case .keywords: return [.contains, .isIn]
        case .location: return [.within, .near]
        }
    }

    /// What a value of the key looks like, for error messages.
    var expectedValue: String {
        switch valueType {
        case .mediaType: return "one of \"image\", \"video\" for 'mediaType'"
        case .subtypes: return "a subtype (one of \(Self.subtypeNames)) for 'subtypes'"
        case .localDateTime: return "a local date-time \"YYYY-MM-DDTHH:MM:SS[.fff]\" or date \"YYYY-MM-DD\" for 'localDateTime'"
        case .localDate: return "a date \"YYYY-MM-DD\" for 'localDate'"
        case .instant: return "a UTC time \"YYYY-MM-DDTHH:MM:SS[.fff]Z\" or date \"YYYY-MM-DD\" for 'addedDate'"
        case .integer: return "an integer for '\(rawValue)'"
        case .real: return "a number for '\(rawValue)'"
        case .boolean: return "true or false for '\(rawValue)'"
        case .text, .path, .keywords: return "a string for '\(rawValue)'"
        case .location: return "{south, west, north, east} after WITHIN or {latitude, longitude, kilometres} after NEAR, in degrees and km"
        }
    }

    static let subtypeNames = AssetSubtype.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")

    /// Every key, for the unknown-key message.
    static let allNames = allCases.map(\.rawValue).joined(separator: ", ")
}

/// A literal as written, before the key's type gives it meaning.
enum PredicateLiteral {
    case string([UInt8])
    /// The digits as written; `isInteger` when there is no fraction or exponent.
    case number(String, isInteger: Bool)
    case boolean(Bool)
    case null
    case list([PredicateLiteralToken])
}

/// A literal with where it starts and how an error names it.
struct PredicateLiteralToken {
    var literal: PredicateLiteral
    var position: Int
    /// `the string "photo"`, `the number 1.5`, `'true'`, `a list`.
    var found: String
}

extension PredicateKey {
    /// The typed value of `token` for this key used with `op`; an error at the literal when it
    /// does not fit. A list is only accepted where `subtypes` takes a set (`==`, `!=`); lists
    /// after IN are converted element by element.
    func value(of token: PredicateLiteralToken, for op: PredicateOperator) throws(AssetPredicateError) -> PredicateValue {
        func mismatch(_ expected: String? = nil, code: AssetPredicateError.Code = .typeMismatch) -> AssetPredicateError {
            AssetPredicateError(code: code, position: token.position, expected: expected ?? expectedValue, found: token.found)
        }
        func text() throws(AssetPredicateError) -> String {
            guard case .string(let b) = token.literal else { throw mismatch() }
            guard let s = String(validating: b, as: UTF8.self) else {
                throw mismatch("UTF-8 text for '\(rawValue)' (\\x escapes that are not UTF-8 only match paths)",
                               code: .invalidValue)
            }
            return s
        }
        if case .null = token.literal {
            guard isNullable else { throw mismatch(expectedValue + " (it is never null)") }
            guard op == .equal || op == .notEqual else {
                throw mismatch(expectedValue + " (null only after == and !=)")
            }
            return .null
        }
        if valueType == .location { return try area(token, for: op) }
        if case .list = token.literal, !(valueType == .subtypes && op != .contains) { throw mismatch() }
        switch valueType {
        case .mediaType:
            guard let t = MediaType(rawValue: try text()) else { throw mismatch(code: .invalidValue) }
            return .mediaType(t)
        case .subtypes:
            if op == .contains {
                guard let s = AssetSubtype(rawValue: try text()) else { throw mismatch(code: .invalidValue) }
                return .subtype(s)
            }
            guard case .list(let items) = token.literal else {
                throw mismatch("a set of subtypes like {\"raw\", \"live\"} (or {}) for 'subtypes'")
            }
            var set: Set<AssetSubtype> = []
            for item in items {
                guard case .subtype(let s) = try value(of: item, for: .contains) else { continue }
                set.insert(s)
            }
            return .subtypes(set)
        case .localDateTime:
            guard let t = PredicateDates.localDateTime(Array(try text().utf8)) else { throw mismatch(code: .invalidValue) }
            return .localDateTime(t)
        case .localDate:
            guard let t = PredicateDates.date(Array(try text().utf8)) else { throw mismatch(code: .invalidValue) }
            return .localDate(day: CivilTime.daysFromCivil(year: t.year, month: t.month, day: t.day))
        case .instant:
            guard let ms = PredicateDates.utcMilliseconds(Array(try text().utf8)) else { throw mismatch(code: .invalidValue) }
            return .instant(milliseconds: ms)
        case .integer:
            guard case .number(let digits, let isInteger) = token.literal, isInteger else { throw mismatch() }
            guard let v = Int64(digits) else {
                throw mismatch("an integer between \(Int64.min) and \(Int64.max) for '\(rawValue)'", code: .invalidValue)
            }
            return .integer(v)
        case .real:
            guard case .number(let digits, _) = token.literal else { throw mismatch() }
            guard let v = Double(digits), v.isFinite else {
                throw mismatch("a finite number for '\(rawValue)'", code: .invalidValue)
            }
            return .real(v)
        case .boolean:
            guard case .boolean(let b) = token.literal else { throw mismatch() }
            return .boolean(b)
        case .text, .keywords:
            return .text(try text())
        case .path:
            guard case .string(let b) = token.literal else { throw mismatch() }
            return .bytes(b)
        case .location:
            return try area(token, for: op)
        }
    }

    /// A box (`WITHIN`: south, west, north, east) or a circle (`NEAR`: latitude, longitude,
    /// kilometres) from a list of numbers: latitudes in -90...90 (south ≤ north), longitudes in
    /// -180...180 (a box whose west is east of its east crosses the antimeridian), a distance
    /// above 0 and at most half the Earth's circumference.
    private func area(_ token: PredicateLiteralToken, for op: PredicateOperator) throws(AssetPredicateError) -> PredicateValue {
        let expected = op == .within ? "{south, west, north, east} in degrees for 'location WITHIN'"
                                     : "{latitude, longitude, kilometres} for 'location NEAR'"
        func fail(_ found: String? = nil, code: AssetPredicateError.Code = .typeMismatch) -> AssetPredicateError {
            AssetPredicateError(code: code, position: token.position, expected: expected, found: found ?? token.found)
        }
        guard case .list(let items) = token.literal, items.count == (op == .within ? 4 : 3) else { throw fail() }
        var numbers: [Double] = []
        for item in items {
            guard case .number(let digits, _) = item.literal, let v = Double(digits), v.isFinite else {
                throw AssetPredicateError(code: .typeMismatch, position: item.position, expected: expected, found: item.found)
            }
            numbers.append(v)
        }
        let latitudeOK = { (v: Double) in (-90...90).contains(v) }, longitudeOK = { (v: Double) in (-180...180).contains(v) }
        if op == .within {
            let (s, w, n, e) = (numbers[0], numbers[1], numbers[2], numbers[3])
            guard latitudeOK(s), latitudeOK(n), s <= n, longitudeOK(w), longitudeOK(e) else {
                throw fail("a box with latitudes outside -90...90, south above north or longitudes outside -180...180", code: .invalidValue)
            }
            return .box(south: s, west: w, north: n, east: e)
        }
        guard latitudeOK(numbers[0]), longitudeOK(numbers[1]), numbers[2] > 0, numbers[2] <= 20_016 else {
            throw fail("a point outside -90...90, -180...180 or a distance not in 0 < km ≤ 20016", code: .invalidValue)
        }
        return .circle(latitude: numbers[0], longitude: numbers[1], kilometres: numbers[2])
    }
}

/// The date forms of the language, parsed from UTF-8 bytes.
enum PredicateDates {
    /// `YYYY-MM-DD`.
    static func date(_ b: [UInt8]) -> PredicateDateTime? {
        guard b.count == 10 else { return nil }
        return prefix(b, time: false)
    }

    /// `YYYY-MM-DDTHH:MM:SS`, `YYYY-MM-DDTHH:MM:SS.fff` or `YYYY-MM-DD` (midnight).
    static func localDateTime(_ b: [UInt8]) -> PredicateDateTime? {
        switch b.count {
        case 10: return prefix(b, time: false)
        case 19: return prefix(b, time: true)
        case 23:
            guard b[19] == UInt8(ascii: "."), let ms = Digits.value(b, 20, 3), var t = prefix(b, time: true) else { return nil }
            t.millisecond = ms
            return t
        default: return nil
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, `YYYY-MM-DDTHH:MM:SS.fffZ` or `YYYY-MM-DD` (midnight UTC), as Unix
    /// milliseconds. Only UTC: a time without `Z` is refused rather than guessed at.
    static func utcMilliseconds(_ b: [UInt8]) -> Int64? {
        let t: PredicateDateTime?
        if b.count == 10 {
            t = prefix(b, time: false)
        } else {
            guard b.count == 20 || b.count == 24, b.last == UInt8(ascii: "Z") else { return nil }
            t = localDateTime(Array(b.dropLast()))
        }
        guard let t else { return nil }
        let days = Int64(CivilTime.daysFromCivil(year: t.year, month: t.month, day: t.day))
        return days * 86_400_000 + Int64((t.hour * 3600 + t.minute * 60 + t.second) * 1000 + t.millisecond)
    }

    /// The date, and with `time` the `THH:MM:SS` after it, of the first 10 or 19 bytes.
    private static func prefix(_ b: [UInt8], time: Bool) -> PredicateDateTime? {
        guard b.count >= (time ? 19 : 10), b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let y = Digits.value(b, 0, 4), let mo = Digits.value(b, 5, 2), let d = Digits.value(b, 8, 2)
        else { return nil }
        guard time else { return PredicateDateTime(year: y, month: mo, day: d) }
        guard b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let h = Digits.value(b, 11, 2), let mi = Digits.value(b, 14, 2), let s = Digits.value(b, 17, 2)
        else { return nil }
        return PredicateDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }
}
