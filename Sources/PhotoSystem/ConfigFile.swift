/// The configuration files of photod and photod-nats (`/etc/photod/photod.conf`,
/// `/etc/photod/photod-nats.conf`, read with `--config FILE`): one `key = value` per line, the
/// keys being the program's long option names without `--` (each program lists its `keys`).
///
/// ```
/// # comments start with '#', blank lines are ignored
/// library = /srv/photos
/// library = "/srv/Family Photos"     # quoted: "..." (with \" and \\) or '...' (literal)
/// timezone = Europe/Berlin
/// ```
///
/// The file only turns into arguments (`["--library", "/srv/photos", ...]`): the program's option
/// parser validates the values exactly as it does on the command line, so the two cannot drift apart.
/// The syntax is checked here, with the line number: a line without `=`, an unknown key, a
/// missing value, a bad quote, a key given twice that is not repeatable.
///
/// Values: surrounding blanks are dropped and inner ones kept (`library = /srv/My Photos` works
/// unquoted). A `#` after a blank starts a comment, a `#` inside a word does not
/// (`/srv/photos/#2`). Quote a value that starts or ends with a blank, contains ` #`, or starts
/// with a quote.
public enum ConfigFile {
    /// A key the file may set, and whether it may be given more than once.
    public struct Key: Sendable, Hashable {
        public let name: String
        public let repeatable: Bool

        public init(name: String, repeatable: Bool = false) {
            self.name = name
            self.repeatable = repeatable
        }

        /// The option it stands for (`--library`).
        public var option: String { "--" + name }
    }

    /// One setting, with the line it came from (for messages about its value).
    public struct Entry: Sendable, Equatable {
        public let key: String
        public let value: String
        /// 1-based.
        public let line: Int

        public init(key: String, value: String, line: Int) {
            self.key = key
            self.value = value
            self.line = line
        }

        /// The arguments it stands for: `["--key", "value"]`.
        public var arguments: [String] { ["--" + key, value] }
    }

    /// A syntax error, with the 1-based line it is on.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Code: Sendable, Equatable {
            case missingEquals, missingKey, unknownKey, missingValue, badQuote, repeatedKey, invalidCharacter
        }

        public let code: Code
        public let line: Int
        public let message: String

        /// `line 3: unknown key 'libary' (did you mean 'library'?)`
        public var description: String { "line \(line): \(message)" }
    }

    /// The file as arguments, in the file's order: `["--library", "/srv/photos", ...]`.
    public static func parse(text: String, keys: [Key]) throws(ParseError) -> [String] {
        try entries(text: text, keys: keys).flatMap(\.arguments)
    }

    /// The file's settings, in order.
    public static func entries(text: String, keys: [Key]) throws(ParseError) -> [Entry] {
        var entries: [Entry] = []
        var firstLine: [String: Int] = [:]
        // Split on "\n" only, so that a stray "\r" (a file saved on Windows) is a blank to trim,
        // not a second line break that would shift every line number after it.
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, scalars) in lines.enumerated() {
            let number = index + 1
            var line = Substring(String(String.UnicodeScalarView(scalars)))
            if number == 1, line.first == "\u{FEFF}" { line = line.dropFirst() }  // a byte-order mark
            line = trimmed(line)
            if line.isEmpty || line.first == "#" { continue }
            func fail(_ code: ParseError.Code, _ message: String) -> ParseError {
                ParseError(code: code, line: number, message: message)
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw fail(.missingEquals, "expected 'key = value', got '\(line)'")
            }
            let name = String(trimmed(line[..<equals]))
            guard !name.isEmpty else { throw fail(.missingKey, "a value without a key") }
            guard let key = keys.first(where: { $0.name == name }) else {
                throw fail(.unknownKey, unknownKeyMessage(name, keys))
            }
            let value = try parseValue(line[line.index(after: equals)...], key: name, line: number)
            guard !value.isEmpty else { throw fail(.missingValue, "'\(name)' needs a value") }
            if value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
                throw fail(.invalidCharacter, "the value of '\(name)' contains a control character")
            }
            if !key.repeatable, let first = firstLine[name] {
                let repeatable = keys.filter(\.repeatable).map { "'\($0.name)'" }
                throw fail(.repeatedKey, "'\(name)' is given twice (first on line \(first))"
                           + (repeatable.isEmpty ? "" : "; only \(repeatable.joined(separator: ", ")) may repeat"))
            }
            firstLine[name] = firstLine[name] ?? number
            entries.append(Entry(key: name, value: value, line: number))
        }
        return entries
    }

    /// The value after `=`: bare (trimmed, up to a ` #` comment) or quoted.
    private static func parseValue(_ raw: Substring, key: String, line: Int) throws(ParseError) -> String {
        let text = trimmed(raw)
        func fail(_ message: String) -> ParseError { ParseError(code: .badQuote, line: line, message: message) }
        guard let quote = text.first, quote == "\"" || quote == "'" else {
            // A comment starts at a '#' that follows a blank (the leading blanks are gone, so a
            // value that is only a comment, "key = # x", is empty).
            if text.first == "#" { return "" }
            var end = text.endIndex
            var previous: Character = "x"
            for i in text.indices {
                if text[i] == "#", previous == " " || previous == "\t" { end = i; break }
                previous = text[i]
            }
            return String(trimmed(text[..<end]))
        }
        var value = ""
        var i = text.index(after: text.startIndex)
        var closed = false
        while i < text.endIndex {
            let c = text[i]
            i = text.index(after: i)
            if c == quote { closed = true; break }
            if c == "\\", quote == "\"" {
                guard i < text.endIndex else { break }
                let escaped = text[i]
                guard escaped == "\"" || escaped == "\\" else {
                    throw fail("unknown escape '\\\(escaped)' in the value of '\(key)' (only \\\" and \\\\; or use '...')")
                }
                value.append(escaped)
                i = text.index(after: i)
                continue
            }
            value.append(c)
        }
        guard closed else { throw fail("the value of '\(key)' has no closing \(quote)") }
        let rest = trimmed(text[i...])
        guard rest.isEmpty || rest.first == "#" else {
            throw fail("unexpected '\(rest)' after the quoted value of '\(key)'")
        }
        return value
    }

    private static func unknownKeyMessage(_ name: String, _ keys: [Key]) -> String {
        if name.hasPrefix("-") {
            let bare = String(name.drop(while: { $0 == "-" }))
            if keys.contains(where: { $0.name == bare }) { return "unknown key '\(name)': write it without dashes, '\(bare)'" }
        }
        let nearest = keys.map { (key: $0.name, distance: editDistance(name, $0.name)) }.min { $0.distance < $1.distance }
        if let nearest, nearest.distance <= 2 {
            return "unknown key '\(name)' (did you mean '\(nearest.key)'?)"
        }
        return "unknown key '\(name)'; the keys are " + keys.map(\.name).joined(separator: ", ")
    }

    /// Levenshtein distance, for "did you mean" (the names are short).
    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in 1...b.count {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = text.firstIndex(where: { !blank($0) }) else { return text[text.endIndex...] }
        let end = text.lastIndex(where: { !blank($0) })!
        return text[start...end]
    }
}
