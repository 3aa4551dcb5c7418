/// What a person types in a search box, as photod reads it: words and "quoted phrases", every
/// one required; the last word, unless a space follows it, matches as a prefix (as one types:
/// `lisb` finds Lisbon). Case and diacritics are folded by the index (`sao paulo` finds São
/// Paulo). Nothing in the text is an operator: the index is given each term quoted, so FTS5's
/// syntax (`AND`, `NEAR(`, `*`, `^`, `column:`) is only ever text to find.
public struct SearchQuery: Sendable, Hashable {
    /// One thing to find.
    public struct Term: Sendable, Hashable {
        public var text: String
        /// Words in quotes, in that order.
        public var isPhrase: Bool
        /// Matches words that begin with it.
        public var isPrefix: Bool

        /// The term as an FTS5 query: a quoted string (quotes doubled), with `*` when a prefix.
        public var ftsMatch: String {
            "\"" + text.replacing("\"", with: "\"\"") + "\"" + (isPrefix ? " *" : "")
        }
    }

    public var terms: [Term]

    /// The longest query, in UTF-8 bytes.
    public static let maxLength = 1024
    /// The most terms.
    public static let maxTerms = 32

    /// Why a query cannot be searched, and where (a scalar offset).
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var position: Int
        public var message: String
        public var description: String { "\(message) at \(position)" }
    }

    /// Parses `text`; an unbalanced quote, a query of nothing to find or one too long is an error.
    public static func parse(_ text: String) throws(ParseError) -> SearchQuery {
        guard text.utf8.count <= maxLength else {
            throw ParseError(position: 0, message: "a query of at most \(maxLength) bytes")
        }
        var terms: [Term] = []
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c.properties.isWhitespace { i += 1; continue }
            if c == "\"" {
                let open = i
                i += 1
                var phrase = ""
                while i < scalars.count, scalars[i] != "\"" {
                    phrase.unicodeScalars.append(scalars[i])
                    i += 1
                }
                guard i < scalars.count else {
                    throw ParseError(position: open, message: "a closing '\"' for the quote that opens")
                }
                i += 1
                if hasWordCharacter(phrase) { terms.append(Term(text: phrase, isPhrase: true, isPrefix: false)) }
                continue
            }
            var word = ""
            while i < scalars.count, !scalars[i].properties.isWhitespace, scalars[i] != "\"" {
                word.unicodeScalars.append(scalars[i])
                i += 1
            }
            // A word of punctuation alone finds nothing the index holds: it is left out.
            if hasWordCharacter(word) {
                terms.append(Term(text: word, isPhrase: false, isPrefix: i == scalars.count))
            }
        }
        guard !terms.isEmpty else { throw ParseError(position: 0, message: "a word to search for") }
        guard terms.count <= maxTerms else { throw ParseError(position: 0, message: "at most \(maxTerms) words") }
        return SearchQuery(terms: terms)
    }

    /// The FTS5 query: each term a quoted string (quotes doubled), prefix terms with `*`, all
    /// of them required.
    public var ftsMatch: String { terms.map(\.ftsMatch).joined(separator: " ") }

    /// Whether every term is among the words of `text` (ASCII case folded, other letters as
    /// they are): what the index does, for short fixed titles that are not in it (the smart
    /// albums').
    public func matches(_ text: String) -> Bool {
        let words = Self.words(text)
        return terms.allSatisfy { term in
            let wanted = Self.words(term.text)
            guard !wanted.isEmpty, wanted.count <= words.count else { return false }
            return (0...(words.count - wanted.count)).contains { start in
                wanted.indices.allSatisfy { i in
                    let word = words[start + i]
                    return term.isPrefix && i == wanted.count - 1 ? word.hasPrefix(wanted[i]) : word == wanted[i]
                }
            }
        }
    }

    private static func words(_ text: String) -> [String] {
        text.unicodeScalars.split { !($0.properties.isAlphabetic || $0.properties.numericType != nil) }
            .map { Keywords.folded(String(String.UnicodeScalarView($0))) }
    }

    private static func hasWordCharacter(_ s: String) -> Bool {
        s.unicodeScalars.contains { $0.properties.isAlphabetic || $0.properties.numericType != nil }
    }
}
