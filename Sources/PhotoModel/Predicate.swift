/// A fetch predicate (`assets.fetch` and `collections.assets`), parsed and type-checked: a tree
/// whose leaves compare one key of the fixed catalogue (`PredicateKey`) with typed values.
///
/// The language is NSPredicate's in spirit, small and strict; `docs/PREDICATES.md` is its
/// reference. A client's text becomes this tree or a `AssetPredicateError` with a position; the store
/// compiles the tree to SQL with bound parameters, so nothing a client writes reaches SQL text.
///
/// The parser builds `and` and `or` with two or more operands (`a AND b AND c` is one node) and
/// drops parentheses that only group; `description` writes the tree back in a canonical form
/// that parses to the same tree.
public indirect enum AssetPredicate: Sendable, Hashable, CustomStringConvertible {
    /// Every operand holds.
    case and([AssetPredicate])
    /// At least one operand holds.
    case or([AssetPredicate])
    /// The operand does not hold.
    case not(AssetPredicate)
    /// One key compared with values.
    case comparison(PredicateComparison)

    /// Parses and type-checks `text`; throws the first problem, with its position.
    public static func parse(_ text: String) throws(AssetPredicateError) -> AssetPredicate {
        var parser = try PredicateParser(text)
        return try parser.parsePredicate()
    }

    /// The canonical text: keywords in upper case, strings in double quotes, dates in their
    /// canonical form, parentheses only where the tree needs them.
    public var description: String {
        switch self {
        case .comparison(let c): return c.description
        case .not(let p):
            switch p {
            case .comparison, .not: return "NOT " + p.description
            case .and, .or: return "NOT (" + p.description + ")"
            }
        case .and(let ps): return ps.map { Self.operand($0, of: "AND") }.joined(separator: " AND ")
        case .or(let ps): return ps.map { Self.operand($0, of: "OR") }.joined(separator: " OR ")
        }
    }

    /// An operand of AND or OR, in parentheses where precedence would not rebuild the same tree:
    /// an OR inside an AND, and an AND or OR inside its own kind (the parser would flatten it).
    private static func operand(_ p: AssetPredicate, of parent: String) -> String {
        switch p {
        case .comparison, .not: return p.description
        case .and: return parent == "OR" ? p.description : "(" + p.description + ")"
        case .or: return "(" + p.description + ")"
        }
    }

    /// How deep the tree is (a comparison is 1): what the store checks its SQL against.
    public var height: Int {
        switch self {
        case .comparison: return 1
        case .not(let p): return 1 + p.height
        case .and(let ps), .or(let ps): return 1 + (ps.map(\.height).max() ?? 0)
        }
    }
}

/// The limits on a predicate, so that a client's text costs bounded time and memory (and no
/// recursion can run deep). Each refusal is a `AssetPredicateError` with code `limitExceeded`.
public enum PredicateLimits {
    /// The longest predicate or sort text, in UTF-8 bytes.
    public static let maxLength = 4096
    /// The deepest nesting: each `(` and each `NOT` opens a level.
    public static let maxDepth = 32
    /// The most values in one `{...}` list.
    public static let maxListCount = 1000
}

/// The operators of the language, as written.
public enum PredicateOperator: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case isIn = "IN"
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case between = "BETWEEN"
    /// `location WITHIN {south, west, north, east}`: in a box of latitudes and longitudes.
    case within = "WITHIN"
    /// `location NEAR {latitude, longitude, kilometres}`: within a distance of a point.
    case near = "NEAR"

    public var description: String { rawValue }

    /// The operator of a relation.
    public init(_ relation: PredicateRelation) {
        switch relation {
        case .equal: self = .equal
        case .notEqual: self = .notEqual
        case .less: self = .less
        case .lessOrEqual: self = .lessOrEqual
        case .greater: self = .greater
        case .greaterOrEqual: self = .greaterOrEqual
        }
    }
}

/// The six relations between a key and one value.
public enum PredicateRelation: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// One leaf of a predicate: a key and what it is compared with. The values have the key's type
/// (the parser checked them): a store compiles them without looking at text again.
public struct PredicateComparison: Sendable, Hashable, CustomStringConvertible {
    /// What the key is compared with.
    public enum Operation: Sendable, Hashable {
        /// `key == v`, `key < v`, ...; `v` is `.null` only with `==` and `!=`.
        case compare(PredicateRelation, PredicateValue)
        /// `key IN {v, ...}` (the list may be empty: nothing matches).
        case isIn([PredicateValue])
        /// `key CONTAINS v`: a substring (text, path) or a member (subtypes, keywords).
        case contains(PredicateValue)
        /// `key BEGINSWITH v`: a prefix (text, path).
        case beginsWith(PredicateValue)
        /// `key BETWEEN low AND high`, both ends included.
        case between(PredicateValue, PredicateValue)
        /// `location WITHIN {south, west, north, east}` (a `.box`).
        case within(PredicateValue)
        /// `location NEAR {latitude, longitude, kilometres}` (a `.circle`).
        case near(PredicateValue)

        /// The operator as written.
        public var `operator`: PredicateOperator {
            switch self {
            case .compare(let r, _): return PredicateOperator(r)
            case .isIn: return .isIn
            case .contains: return .contains
            case .beginsWith: return .beginsWith
            case .between: return .between
            case .within: return .within
            case .near: return .near
            }
        }
    }

    /// The key compared.
    public var key: PredicateKey
    /// How, and with what.
    public var operation: Operation

    /// A comparison (values are trusted to have the key's type: the parser makes them so).
    public init(key: PredicateKey, operation: Operation) {
        self.key = key
        self.operation = operation
    }

    /// `key OP value` in canonical form.
    public var description: String {
        let k = key.rawValue
        switch operation {
        case .compare(let r, let v): return "\(k) \(r.rawValue) \(v)"
        case .isIn(let vs): return "\(k) IN {" + vs.map(\.description).joined(separator: ", ") + "}"
        case .contains(let v): return "\(k) CONTAINS \(v)"
        case .beginsWith(let v): return "\(k) BEGINSWITH \(v)"
        case .between(let lo, let hi): return "\(k) BETWEEN \(lo) AND \(hi)"
        case .within(let v): return "\(k) WITHIN \(v)"
        case .near(let v): return "\(k) NEAR \(v)"
        }
    }
}

/// A typed value in a comparison. Which case a key takes is fixed by `PredicateKey.valueType`.
public enum PredicateValue: Sendable, Hashable, CustomStringConvertible {
    /// A missing value (nullable keys, with `==` and `!=` only).
    case null
    case boolean(Bool)
    case integer(Int64)
    case real(Double)
    /// Text (make, model, keywords): valid UTF-8.
    case text(String)
    /// Path bytes (`\xHH` escapes can name bytes that are not UTF-8).
    case bytes([UInt8])
    case mediaType(MediaType)
    /// One subtype (`subtypes CONTAINS "raw"`).
    case subtype(AssetSubtype)
    /// An exact set of subtypes (`subtypes == {"raw", "live"}`, `subtypes == {}`).
    case subtypes(Set<AssetSubtype>)
    /// A wall-clock time on the capture clock (`localDateTime`).
    case localDateTime(PredicateDateTime)
    /// A calendar day as days since 1970-01-01 (`localDate`; the store's `day` column).
    case localDate(day: Int)
    /// An instant in Unix milliseconds (`addedDate`).
    case instant(milliseconds: Int64)
    /// Latitudes south...north and longitudes west...east (west > east: across the antimeridian).
    case box(south: Double, west: Double, north: Double, east: Double)
    /// Within `kilometres` (great-circle) of a point.
    case circle(latitude: Double, longitude: Double, kilometres: Double)

    /// The value as a literal of the language.
    public var description: String {
        switch self {
        case .null: return "null"
        case .boolean(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .real(let d): return d.description
        case .text(let s): return PredicateText.quote(Array(s.utf8))
        case .bytes(let b): return PredicateText.quote(b)
        case .mediaType(let t): return "\"\(t.rawValue)\""
        case .subtype(let s): return "\"\(s.rawValue)\""
        case .subtypes(let set):
            let names = AssetSubtype.allCases.filter(set.contains).map { "\"\($0.rawValue)\"" }
            return "{" + names.joined(separator: ", ") + "}"
        case .localDateTime(let t): return "\"\(t)\""
        case .localDate(let day):
            let (y, m, d) = CivilTime.civilFromDays(day)
            return "\"" + PredicateText.date(y, m, d) + "\""
        case .instant(let ms): return "\"" + PredicateText.utc(ms) + "\""
        case .box(let s, let w, let n, let e): return "{\(s), \(w), \(n), \(e)}"
        case .circle(let lat, let lon, let km): return "{\(lat), \(lon), \(km)}"
        }
    }
}

/// A wall-clock time written in a predicate (`"2019-05-04T13:22:10.054"`, or a date alone,
/// meaning its midnight). Any year 0000–9999 is accepted, so bounds outside the plausible
/// capture years still compare; a missing millisecond is 0, as in `LocalDateTime`'s order.
public struct PredicateDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// 0–999.
    public var millisecond: Int

    /// A validated time; `nil` when a field is out of range (seconds 0–59: no leap seconds).
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, millisecond: Int = 0) {
        guard (0...9999).contains(year), (1...12).contains(month),
              day >= 1, day <= CivilTime.daysInMonth(year: year, month: month),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second),
              (0...999).contains(millisecond)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.millisecond = millisecond
    }

    /// The time as `LocalDateTime` orders it: a missing millisecond is 0.
    public init(_ t: LocalDateTime) {
        year = t.year
        month = t.month
        day = t.day
        hour = t.hour
        minute = t.minute
        second = t.second
        millisecond = t.millisecond ?? 0
    }

    /// `YYYY-MM-DDTHH:MM:SS`, with `.fff` only when the millisecond is not 0.
    public var description: String { millisecond == 0 ? secondsText : millisecondsText }

    /// `YYYY-MM-DDTHH:MM:SS`: the store's form of a time without sub-seconds.
    public var secondsText: String {
        PredicateText.date(year, month, day) + "T" + PredicateText.pad(hour, 2) + ":" + PredicateText.pad(minute, 2)
            + ":" + PredicateText.pad(second, 2)
    }

    /// `YYYY-MM-DDTHH:MM:SS.fff`, always with milliseconds.
    public var millisecondsText: String { secondsText + "." + PredicateText.pad(millisecond, 3) }

    public static func < (a: PredicateDateTime, b: PredicateDateTime) -> Bool {
        let ka = (a.year, a.month, a.day, a.hour, a.minute, a.second)
        let kb = (b.year, b.month, b.day, b.hour, b.minute, b.second)
        return ka != kb ? ka < kb : a.millisecond < b.millisecond
    }
}

/// Formatting shared by the predicate's canonical text and its documentation.
enum PredicateText {
    static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    static func date(_ y: Int, _ m: Int, _ d: Int) -> String { pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) }

    /// An instant as `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
    static func utc(_ ms: Int64) -> String {
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let rest = Int(ms - days * 86_400_000)
        let (y, m, d) = CivilTime.civilFromDays(Int(days))
        let s = rest / 1000
        let t = date(y, m, d) + "T" + pad(s / 3600, 2) + ":" + pad(s / 60 % 60, 2) + ":" + pad(s % 60, 2)
        return t + (rest % 1000 == 0 ? "" : "." + pad(rest % 1000, 3)) + "Z"
    }

    /// A double-quoted string literal for `bytes`: printable ASCII as is (with `\"` and `\\`),
    /// common controls as `\n` `\r` `\t`, other scalars of valid UTF-8 as themselves, and bytes
    /// that are not UTF-8 as `\xHH`.
    static func quote(_ bytes: [UInt8]) -> String {
        var out = "\""
        func hex(_ b: UInt8) -> String {
            let digits: [Character] = Array("0123456789ABCDEF")
            return "\\x" + String(digits[Int(b >> 4)]) + String(digits[Int(b & 15)])
        }
        func scalar(_ u: Unicode.Scalar) {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F {
                    out += hex(UInt8(u.value))
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        if let text = String(validating: bytes, as: UTF8.self) {
            for u in text.unicodeScalars { scalar(u) }
        } else {
            for b in bytes {
                if b < 0x80 { scalar(Unicode.Scalar(b)) } else { out += hex(b) }
            }
        }
        return out + "\""
    }
}
