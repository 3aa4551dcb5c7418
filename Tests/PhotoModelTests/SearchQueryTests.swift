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
}
