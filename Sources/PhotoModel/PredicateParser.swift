/// A token of the predicate language.
struct PredicateToken {
    enum Kind: Equatable {
        case identifier(String)
        case word(PredicateWord)
        case string([UInt8])
        case number(String, isInteger: Bool)
        case relation(PredicateRelation)
        case leftParen, rightParen, leftBrace, rightBrace, comma
        /// Something that is no token (`=`, `&&`, `@`): the parser reports it in its context.
        case invalid(String)
        case end
    }

    var kind: Kind
    /// Offsets in Unicode scalars: `start..<end` is the lexeme.
    var start: Int
    var end: Int
}

/// The reserved words, matched case-insensitively (`AND`, `and`, `And`).
enum PredicateWord: String, CaseIterable {
    case and = "AND", or = "OR", not = "NOT", isIn = "IN", contains = "CONTAINS", beginsWith = "BEGINSWITH",
         between = "BETWEEN", within = "WITHIN", near = "NEAR", `true` = "TRUE", `false` = "FALSE", null = "NULL"

    /// The word for an identifier, ignoring ASCII case.
    init?(identifier: String) {
        var upper = ""
        for u in identifier.unicodeScalars {
            upper.unicodeScalars.append(u.value >= 0x61 && u.value <= 0x7A ? Unicode.Scalar(u.value - 32)! : u)
        }
        self.init(rawValue: upper)
    }
}

/// Splits the text into tokens on demand, so that the first error in reading order is the one
/// reported. Works on Unicode scalars: positions are scalar offsets.
struct PredicateLexer {
    let scalars: [Unicode.Scalar]
    private(set) var index = 0

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    /// The source text of `start..<end`, shortened for messages.
    func lexeme(_ start: Int, _ end: Int) -> String {
        let limit = 40
        var s = String(String.UnicodeScalarView(scalars[start..<min(end, start + limit)]))
        if end - start > limit { s += "…" }
        return s
    }

    /// How an error names `token`.
    func found(_ token: PredicateToken) -> String {
        let text = lexeme(token.start, token.end)
        switch token.kind {
        case .end: return "end of input"
        case .string: return "the string " + text
        case .number: return "the number " + text
        case .invalid(let s):
            switch s {
            case "=": return "'=' (did you mean '=='?)"
            case "&&": return "'&&' (did you mean AND?)"
            case "||": return "'||' (did you mean OR?)"
            case "!": return "'!' (did you mean NOT?)"
            default: return "'\(text)'"
            }
        default: return "'\(text)'"
        }
    }

    private func at(_ i: Int) -> Unicode.Scalar? { i < scalars.count ? scalars[i] : nil }

    private static func isIdentifierStart(_ u: Unicode.Scalar) -> Bool {
        (u >= "a" && u <= "z") || (u >= "A" && u <= "Z") || u == "_"
    }

    private static func isDigit(_ u: Unicode.Scalar?) -> Bool {
        guard let u else { return false }
        return u >= "0" && u <= "9"
    }

    /// The next token; an error only for a malformed string or number (everything else is a
    /// token the parser can name in its own context).
    mutating func next() throws(AssetPredicateError) -> PredicateToken {
        while let u = at(index), u == " " || u == "\t" || u == "\n" || u == "\r" { index += 1 }
        let start = index
        func token(_ kind: PredicateToken.Kind, length: Int) -> PredicateToken {
            index = start + length
            return PredicateToken(kind: kind, start: start, end: index)
        }
        guard let u = at(index) else { return PredicateToken(kind: .end, start: start, end: start) }
        let next = at(index + 1)
        switch u {
        case "(": return token(.leftParen, length: 1)
        case ")": return token(.rightParen, length: 1)
        case "{": return token(.leftBrace, length: 1)
        case "}": return token(.rightBrace, length: 1)
        case ",": return token(.comma, length: 1)
        case "=": return next == "=" ? token(.relation(.equal), length: 2) : token(.invalid("="), length: 1)
        case "!": return next == "=" ? token(.relation(.notEqual), length: 2) : token(.invalid("!"), length: 1)
        case "<": return next == "=" ? token(.relation(.lessOrEqual), length: 2) : token(.relation(.less), length: 1)
        case ">": return next == "=" ? token(.relation(.greaterOrEqual), length: 2) : token(.relation(.greater), length: 1)
        case "&" where next == "&": return token(.invalid("&&"), length: 2)
        case "|" where next == "|": return token(.invalid("||"), length: 2)
        case "\"", "'": return try string(quote: u)
        default: break
        }
        if Self.isDigit(u) || (u == "-" && Self.isDigit(next)) { return try number() }
        if Self.isIdentifierStart(u) {
            var end = index + 1
            while let c = at(end), Self.isIdentifierStart(c) || Self.isDigit(c) { end += 1 }
            let name = String(String.UnicodeScalarView(scalars[index..<end]))
            if let word = PredicateWord(identifier: name) { return token(.word(word), length: end - start) }
            return token(.identifier(name), length: end - start)
        }
        return token(.invalid(String(u)), length: 1)
    }

    /// `-?D+(.D+)?([eE][+-]?D+)?`.
    private mutating func number() throws(AssetPredicateError) -> PredicateToken {
        let start = index
        var i = index
        if at(i) == "-" { i += 1 }
        while Self.isDigit(at(i)) { i += 1 }
        var isInteger = true
        func requireDigits(_ what: String) throws(AssetPredicateError) {
            guard Self.isDigit(at(i)) else {
                let found = at(i) == nil ? "end of input" : "'\(lexeme(i, i + 1))'"
                throw AssetPredicateError(code: .syntax, position: i, expected: what, found: found)
            }
            while Self.isDigit(at(i)) { i += 1 }
        }
        if at(i) == "." {
            isInteger = false
            i += 1
            try requireDigits("a digit after '.' in the number that starts at \(start)")
        }
        if at(i) == "e" || at(i) == "E" {
            isInteger = false
            i += 1
            if at(i) == "+" || at(i) == "-" { i += 1 }
            try requireDigits("a digit in the exponent of the number that starts at \(start)")
        }
        index = i
        return PredicateToken(kind: .number(String(String.UnicodeScalarView(scalars[start..<i])), isInteger: isInteger),
                              start: start, end: i)
    }

    /// A quoted string with backslash escapes: `\\ \" \' \n \r \t`, `\xHH` (one byte, for path
    /// bytes that are not UTF-8) and `\u{H...}` (one scalar). The value is UTF-8 bytes.
    private mutating func string(quote: Unicode.Scalar) throws(AssetPredicateError) -> PredicateToken {
        let start = index
        var i = index + 1
        var bytes: [UInt8] = []
        func append(_ u: Unicode.Scalar) { bytes.append(contentsOf: Array(String(Character(u)).utf8)) }
        func hexValue(_ u: Unicode.Scalar?) -> UInt32? {
            guard let u else { return nil }
            switch u {
            case "0"..."9": return u.value - 0x30
            case "a"..."f": return u.value - 0x61 + 10
            case "A"..."F": return u.value - 0x41 + 10
            default: return nil
            }
        }
        func escapeError(_ at: Int, _ expected: String) -> AssetPredicateError {
            let found = self.at(at) == nil ? "end of input" : "'\(lexeme(at, at + 1))'"
            return AssetPredicateError(code: .syntax, position: at, expected: expected, found: found)
        }
        while true {
            guard let u = at(i) else {
                throw AssetPredicateError(code: .syntax, position: i,
                                     expected: "a closing \(quote == "\"" ? "'\"'" : "\"'\"") for the string that starts at \(start)",
                                     found: "end of input")
            }
            if u == quote { break }
            guard u == "\\" else {
                append(u)
                i += 1
                continue
            }
            switch at(i + 1) {
            case "\\": bytes.append(0x5C); i += 2
            case "\"": bytes.append(0x22); i += 2
            case "'": bytes.append(0x27); i += 2
            case "n": bytes.append(0x0A); i += 2
            case "r": bytes.append(0x0D); i += 2
            case "t": bytes.append(0x09); i += 2
            case "x":
                guard let hi = hexValue(at(i + 2)) else { throw escapeError(i + 2, "two hex digits after '\\x'") }
                guard let lo = hexValue(at(i + 3)) else { throw escapeError(i + 3, "two hex digits after '\\x'") }
                bytes.append(UInt8(hi << 4 | lo))
                i += 4
            case "u":
                guard at(i + 2) == "{" else { throw escapeError(i + 2, "'{' after '\\u'") }
                var j = i + 3
                var value: UInt32 = 0
                while let h = hexValue(at(j)), j - (i + 3) < 6 {
                    value = value << 4 | h
                    j += 1
                }
                guard j > i + 3 else { throw escapeError(j, "1 to 6 hex digits in '\\u{...}'") }
                guard at(j) == "}" else { throw escapeError(j, "'}' to end '\\u{...}'") }
                guard let scalar = Unicode.Scalar(value) else {
                    throw AssetPredicateError(code: .invalidValue, position: i, expected: "a Unicode scalar value in '\\u{...}'",
                                         found: "'\(lexeme(i, j + 1))'")
                }
                append(scalar)
                i = j + 1
            default:
                throw escapeError(i + 1, "an escape after '\\' (one of \\\\ \\\" \\' \\n \\r \\t \\xHH \\u{H...})")
            }
        }
        index = i + 1
        return PredicateToken(kind: .string(bytes), start: start, end: index)
    }
}

/// A recursive-descent parser over the lexer with one token of lookahead. Recursion only
/// follows `(` and `NOT`, each counted against `PredicateLimits.maxDepth`, so no input can run
/// the stack deep.
///
///     predicate  = or EOF
///     or         = and { OR and }
///     and        = unary { AND unary }
///     unary      = NOT unary | "(" or ")" | comparison
///     comparison = key relation value | key IN list | key CONTAINS value
///                | key BEGINSWITH value | key BETWEEN value AND value
struct PredicateParser {
    private var lexer: PredicateLexer
    private var token: PredicateToken
    private var depth = 0
    /// Where each open parenthesis is, for the "close the '('" message.
    private var openParens: [Int] = []

    init(_ text: String) throws(AssetPredicateError) {
        try Self.checkLength(text, what: "a predicate")
        lexer = PredicateLexer(text)
        token = PredicateToken(kind: .end, start: 0, end: 0)
        token = try lexer.next()
    }

    /// Refuses text over `PredicateLimits.maxLength` bytes, at the scalar that crosses it.
    static func checkLength(_ text: String, what: String) throws(AssetPredicateError) {
        let count = text.utf8.count
        guard count > PredicateLimits.maxLength else { return }
        var bytes = 0
        var position = 0
        for u in text.unicodeScalars {
            bytes += UTF8.width(u)
            if bytes > PredicateLimits.maxLength { break }
            position += 1
        }
        throw AssetPredicateError(code: .limitExceeded, position: position,
                             expected: "\(what) of at most \(PredicateLimits.maxLength) bytes", found: "\(count) bytes")
    }

    private mutating func advance() throws(AssetPredicateError) { token = try lexer.next() }

    private func fail(_ expected: String, code: AssetPredicateError.Code = .syntax) -> AssetPredicateError {
        AssetPredicateError(code: code, position: token.start, expected: expected, found: lexer.found(token))
    }

    private func isWord(_ w: PredicateWord) -> Bool { token.kind == .word(w) }

    mutating func parsePredicate() throws(AssetPredicateError) -> AssetPredicate {
        let p = try parseOr(after: nil)
        guard token.kind == .end else { throw fail("AND, OR or end of input") }
        return p
    }

    private mutating func parseOr(after: String?) throws(AssetPredicateError) -> AssetPredicate {
        var items = [try parseAnd(after: after)]
        while isWord(.or) {
            try advance()
            items.append(try parseAnd(after: "OR"))
        }
        return items.count == 1 ? items[0] : .or(items)
    }

    private mutating func parseAnd(after: String?) throws(AssetPredicateError) -> AssetPredicate {
        var items = [try parseUnary(after: after)]
        while isWord(.and) {
            try advance()
            items.append(try parseUnary(after: "AND"))
        }
        return items.count == 1 ? items[0] : .and(items)
    }

    /// Opens one level of nesting, or refuses the one past the limit.
    private mutating func enter() throws(AssetPredicateError) {
        guard depth < PredicateLimits.maxDepth else {
            throw fail("at most \(PredicateLimits.maxDepth) levels of nesting (each '(' and NOT opens one)",
                       code: .limitExceeded)
        }
        depth += 1
    }

    private mutating func parseUnary(after: String?) throws(AssetPredicateError) -> AssetPredicate {
        switch token.kind {
        case .word(.not):
            try enter()
            try advance()
            let p = try parseUnary(after: "NOT")
            depth -= 1
            return .not(p)
        case .leftParen:
            try enter()
            openParens.append(token.start)
            try advance()
            let p = try parseOr(after: "'('")
            guard token.kind == .rightParen else {
                throw fail("AND, OR or ')' to close the '(' that opens at \(openParens.last!)")
            }
            openParens.removeLast()
            try advance()
            depth -= 1
            return p
        case .identifier(let name):
            return .comparison(try parseComparison(name))
        default:
            throw fail("a key, '(' or NOT" + (after.map { " after \($0)" } ?? ""))
        }
    }

    private mutating func parseComparison(_ name: String) throws(AssetPredicateError) -> PredicateComparison {
        guard let key = PredicateKey(rawValue: name) else {
            var expected = "a key (one of \(PredicateKey.allNames))"
            if let close = PredicateKey.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) {
                expected = "a key (keys are case-sensitive: '\(close.rawValue)'; one of \(PredicateKey.allNames))"
            }
            throw fail(expected, code: .unknownKey)
        }
        try advance()
        let operators = key.operators.map(\.rawValue).joined(separator: ", ")
        let op: PredicateOperator
        switch token.kind {
        case .relation(let r): op = PredicateOperator(r)
        case .word(.isIn): op = .isIn
        case .word(.contains): op = .contains
        case .word(.beginsWith): op = .beginsWith
        case .word(.between): op = .between
        case .word(.within): op = .within
        case .word(.near): op = .near
        default: throw fail("an operator after '\(name)' (\(operators))")
        }
        guard key.operators.contains(op) else {
            throw fail("an operator '\(name)' takes (\(operators))", code: .unsupportedOperator)
        }
        try advance()
        switch op {
        case .isIn:
            guard token.kind == .leftBrace else {
                let hint = token.kind == .leftParen ? " (lists are written in braces)" : ""
                throw fail("'{' to start the list after IN" + hint)
            }
            guard case .list(let items) = try parseLiteral(after: "IN").literal else { preconditionFailure() }
            var values: [PredicateValue] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(try key.value(of: item, for: .isIn)) }
            return PredicateComparison(key: key, operation: .isIn(values))
        case .contains:
            return PredicateComparison(key: key, operation: .contains(try key.value(of: parseLiteral(after: "CONTAINS"), for: op)))
        case .beginsWith:
            return PredicateComparison(key: key,
                                       operation: .beginsWith(try key.value(of: parseLiteral(after: "BEGINSWITH"), for: op)))
        case .between:
            let low = try key.value(of: parseLiteral(after: "BETWEEN"), for: op)
            guard isWord(.and) else { throw fail("AND after the lower bound of BETWEEN") }
            try advance()
            let high = try key.value(of: parseLiteral(after: "AND"), for: op)
            return PredicateComparison(key: key, operation: .between(low, high))
        case .within, .near:
            guard token.kind == .leftBrace else { throw fail("'{' to start the list after \(op.rawValue)") }
            let value = try key.value(of: parseLiteral(after: op.rawValue), for: op)
            return PredicateComparison(key: key, operation: op == .within ? .within(value) : .near(value))
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            let relation = PredicateRelation(rawValue: op.rawValue)!
            let value = try key.value(of: parseLiteral(after: "'\(op.rawValue)'"), for: op)
            return PredicateComparison(key: key, operation: .compare(relation, value))
        }
    }

    /// One literal (a list only in braces, of scalar literals).
    private mutating func parseLiteral(after: String) throws(AssetPredicateError) -> PredicateLiteralToken {
        if token.kind == .leftBrace {
            let start = token.start
            try advance()
            var items: [PredicateLiteralToken] = []
            if token.kind != .rightBrace {
                var separator = "'{'"
                while true {
                    if items.count == PredicateLimits.maxListCount {
                        throw fail("at most \(PredicateLimits.maxListCount) values in a list", code: .limitExceeded)
                    }
                    items.append(try parseScalar(after: separator))
                    if token.kind == .rightBrace { break }
                    guard token.kind == .comma else { throw fail("',' or '}' in the list that starts at \(start)") }
                    separator = "','"
                    try advance()
                }
            }
            try advance()
            return PredicateLiteralToken(literal: .list(items), position: start, found: "a list")
        }
        return try parseScalar(after: after)
    }

    private mutating func parseScalar(after: String) throws(AssetPredicateError) -> PredicateLiteralToken {
        let literal: PredicateLiteral
        switch token.kind {
        case .string(let b): literal = .string(b)
        case .number(let digits, let isInteger): literal = .number(digits, isInteger: isInteger)
        case .word(.true): literal = .boolean(true)
        case .word(.false): literal = .boolean(false)
        case .word(.null): literal = .null
        default: throw fail("a value after \(after)")
        }
        let result = PredicateLiteralToken(literal: literal, position: token.start, found: lexer.found(token))
        try advance()
        return result
    }
}
