/// The keys a fetch can sort by. Every sort ends with path then id (in the direction of the
/// first key), so the order is total and pages never overlap or skip; missing values (an asset
/// without pixel size, make or location) come last in either direction.
public enum AssetSortKey: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case localDateTime, addedDate, pixelWidth, pixelHeight, duration, make, model, path, mediaType, latitude, longitude,
         isFavorite

    public var description: String { rawValue }

    /// Whether an asset may lack the value (such assets sort last).
    public var isNullable: Bool {
        switch self {
        case .pixelWidth, .pixelHeight, .duration, .make, .model, .latitude, .longitude: return true
        case .localDateTime, .addedDate, .path, .mediaType, .isFavorite: return false
        }
    }

    static let allNames = allCases.map(\.rawValue).joined(separator: ", ")
}

/// One sort key with its direction (the wire's `{key, ascending}`).
public struct AssetSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    public var key: AssetSortKey
    public var ascending: Bool

    public init(_ key: AssetSortKey, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// `key`, or `-key` when descending.
    public var description: String { (ascending ? "" : "-") + key.rawValue }
}

/// A fetch's order: sort keys, most significant first. Empty means the collection's own order
/// (capture time for the library, moments and folders; a smart album's; a user album's
/// positions).
public struct AssetSort: Sendable, Hashable, CustomStringConvertible {
    /// The keys, most significant first, each key at most once.
    public private(set) var descriptors: [AssetSortDescriptor]

    /// An order from descriptors; a repeated key adds nothing, so only its first use counts.
    public init(_ descriptors: [AssetSortDescriptor] = []) {
        var seen: Set<AssetSortKey> = []
        self.descriptors = descriptors.filter { seen.insert($0.key).inserted }
    }

    /// Whether the collection's own order applies.
    public var isEmpty: Bool { descriptors.isEmpty }

    /// The string form: keys separated by commas, `-` before a key for descending
    /// (`"localDateTime,-pixelWidth"`).
    public var description: String { descriptors.map(\.description).joined(separator: ",") }

    /// Parses the string form: comma-separated keys, each with an optional `-` (descending) or
    /// `+` (ascending, the default), spaces allowed around them. An empty string is the
    /// collection's own order. A key given twice is an error (it cannot mean anything); so is an
    /// unknown one, with the list of sortable keys. Positions are Unicode-scalar offsets.
    public static func parse(_ text: String) throws(AssetPredicateError) -> AssetSort {
        try PredicateParser.checkLength(text, what: "a sort")
        let s = Array(text.unicodeScalars)
        func isSpace(_ u: Unicode.Scalar) -> Bool { u == " " || u == "\t" || u == "\n" || u == "\r" }
        func isLetter(_ u: Unicode.Scalar) -> Bool { (u >= "a" && u <= "z") || (u >= "A" && u <= "Z") }
        func found(_ i: Int, _ end: Int? = nil) -> String {
            guard i < s.count else { return "end of input" }
            return "'" + String(String.UnicodeScalarView(s[i..<min(end ?? i + 1, i + 40)])) + "'"
        }
        var i = 0
        while i < s.count, isSpace(s[i]) { i += 1 }
        if i == s.count { return AssetSort() }
        var result: [AssetSortDescriptor] = []
        var after = ""
        while true {
            while i < s.count, isSpace(s[i]) { i += 1 }
            var ascending = true
            if i < s.count, s[i] == "-" || s[i] == "+" {
                ascending = s[i] == "+"
                i += 1
            }
            let start = i
            while i < s.count, isLetter(s[i]) { i += 1 }
            guard start < i else {
                throw AssetPredicateError(code: .syntax, position: start,
                                     expected: "a sort key\(after) (one of \(AssetSortKey.allNames))", found: found(start))
            }
            let name = String(String.UnicodeScalarView(s[start..<i]))
            guard let key = AssetSortKey(rawValue: name) else {
                throw AssetPredicateError(code: .unknownKey, position: start,
                                     expected: "a sort key (one of \(AssetSortKey.allNames))", found: found(start, i))
            }
            guard !result.contains(where: { $0.key == key }) else {
                throw AssetPredicateError(code: .invalidValue, position: start, expected: "each sort key at most once",
                                     found: "'\(name)' again")
            }
            result.append(AssetSortDescriptor(key, ascending: ascending))
            while i < s.count, isSpace(s[i]) { i += 1 }
            if i == s.count { return AssetSort(result) }
            guard s[i] == "," else {
                throw AssetPredicateError(code: .syntax, position: i, expected: "',' or end of input after '\(name)'", found: found(i))
            }
            after = " after ','"
            i += 1
        }
    }
}
