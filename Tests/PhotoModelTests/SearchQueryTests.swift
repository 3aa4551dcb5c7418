import PhotoModel
import Testing

@Suite struct SearchQueryTests {
    @Test("Words, phrases, the last word a prefix; the FTS5 query quotes every term", arguments: [
        ("lisbon", "\"lisbon\" *"),
        ("lisbon ", "\"lisbon\""),
        ("sao paulo", "\"sao\" \"paulo\" *"),
        ("\"são paulo\" beach", "\"são paulo\" \"beach\" *"),
        ("beach \"são paulo\"", "\"beach\" \"são paulo\""),
        ("NEAR(a b) OR c*", "\"NEAR(a\" \"b)\" \"OR\" \"c*\" *"),
        ("  -- zürich  ", "\"zürich\""),
        ("a:b", "\"a:b\" *"),
    ])
    func parses(text: String, match: String) throws {
        #expect(try SearchQuery.parse(text).ftsMatch == match)
    }

    @Test("Errors: an unbalanced quote at its position, nothing to find, too much", arguments: [
        ("beach \"são paulo", 6),
        ("\"", 0),
        ("", 0),
        ("   ", 0),
        ("-- !! ", 0),
        ("\"--\"", 0),
    ])
    func errors(text: String, position: Int) {
        #expect(throws: SearchQuery.ParseError.self) { _ = try SearchQuery.parse(text) }
        do { _ = try SearchQuery.parse(text) } catch { #expect(error.position == position) }
    }

    @Test func limits() {
        #expect(throws: SearchQuery.ParseError.self) { _ = try SearchQuery.parse(String(repeating: "a", count: 1025)) }
        #expect(throws: SearchQuery.ParseError.self) { _ = try SearchQuery.parse(Array(repeating: "w", count: 33).joined(separator: " ")) }
    }

    @Test("A fixed title matched as the index would: whole words, the last a prefix, phrases in order", arguments: [
        ("fav", "Favorites", true), ("favorites", "Favorites", true), ("favs", "Favorites", false),
        ("recently", "Recently Deleted", true), ("deleted recently ", "Recently Deleted", true),
        ("\"deleted recently\"", "Recently Deleted", false), ("\"recently del\"", "Recently Deleted", false),
        ("live", "Live Photos", true), ("ive", "Live Photos", false), ("slo", "Slo-mo", true), ("slo mo", "Slo-mo", true),
    ])
    func matchesTitles(query: String, title: String, expected: Bool) throws {
        #expect(try SearchQuery.parse(query).matches(title) == expected, "\(query) in \(title)")
    }
}
