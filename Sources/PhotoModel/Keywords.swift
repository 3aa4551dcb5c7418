/// Keyword matching. Keywords are compared ignoring the case of ASCII letters only — what
/// SQLite's NOCASE and `lower()` do without ICU, so that the store's indexes, the predicate
/// `keywords CONTAINS "beach"` and the merging of a file's keywords with taggers' agree.
public enum Keywords {
    /// ASCII letters in lower case, every other scalar unchanged.
    public static func folded(_ text: String) -> String { SubtypeRules.asciiLowercased(text) }

    /// Whether two keywords are the same keyword.
    public static func same(_ a: String, _ b: String) -> Bool { folded(a) == folded(b) }

    /// Keywords as the store keeps them: one per line (a line break inside one becomes a space;
    /// empty ones are dropped); `nil` for none.
    public static func encode(_ keywords: [String]) -> String? {
        let clean = keywords.map { String($0.map { $0 == "\n" ? " " : $0 }) }.filter { !$0.isEmpty }
        return clean.isEmpty ? nil : clean.joined(separator: "\n")
    }

    /// The keywords of a stored text.
    public static func decode(_ text: String?) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}
