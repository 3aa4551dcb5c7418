/// The bounds the JSON parser enforces, so that a hostile line costs bounded time and memory
/// and never exhausts the stack (the parser does not recurse at all; ``maxDepth`` bounds the
/// nesting the rest of the program — serializer, destructor, mappers — will later recurse
/// through).
public struct JSONLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects accepted (`[[1]]` has depth 2).
    public var maxDepth: Int
    /// The longest string (or key) accepted, in UTF-8 bytes after unescaping.
    public var maxStringBytes: Int
    /// The longest number literal accepted, in bytes. RFC 8259 §9 lets a parser limit the
    /// range and precision of numbers; a limit keeps a megabyte of digits away from the
    /// decimal-to-binary conversion.
    public var maxNumberBytes: Int
    /// The most values (of any kind, containers included) in one document.
    public var maxValues: Int

    /// Limits with every bound given.
    public init(maxDepth: Int = 64, maxStringBytes: Int = 1 << 20, maxNumberBytes: Int = 256,
                maxValues: Int = 1 << 20) {
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
        self.maxNumberBytes = maxNumberBytes
        self.maxValues = maxValues
    }

    /// Depth 64, strings up to 1 MiB, numbers up to 256 bytes, up to 1,048,576 values: more
    /// than any valid photod request needs, less than a 1 MiB line could abuse.
    public static let `default` = JSONLimits()
}

/// Why a document is not acceptable JSON, and where: `expected ',' or '}' at byte 17`.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem. A struct rather than an enum so that kinds can be added without
    /// breaking callers that switch over them.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// A code with this name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// A token that cannot appear here (`[1,]`, `01`, `{'a':1}`, a comment, …).
        public static let syntax = Code(rawValue: "syntax")
        /// The input ended inside a value.
        public static let unexpectedEnd = Code(rawValue: "unexpectedEnd")
        /// Something other than whitespace follows the value.
        public static let trailingData = Code(rawValue: "trailingData")
        /// A byte sequence that is not UTF-8 (overlong forms and encoded surrogates included).
        public static let invalidUTF8 = Code(rawValue: "invalidUTF8")
        /// A bad escape, a lone surrogate, or a raw control character in a string.
        public static let invalidString = Code(rawValue: "invalidString")
        /// A number whose value is not a finite double (`1e400`).
        public static let numberOutOfRange = Code(rawValue: "numberOutOfRange")
        /// A ``JSONLimits`` bound was exceeded.
        public static let limitExceeded = Code(rawValue: "limitExceeded")
    }

    /// The kind of problem.
    public let code: Code
    /// The 0-based byte offset in the input where the problem was found.
    public let offset: Int
    /// What was wrong, without the offset (`expected ',' or '}'`).
    public let message: String

    /// An error of this kind at this offset.
    public init(_ code: Code, _ message: String, at offset: Int) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    /// The message with its offset: `expected ',' or '}' at byte 17`.
    public var description: String { "\(message) at byte \(offset)" }
}

extension JSONValue {
    /// Parses one JSON document (RFC 8259, strictly: no comments, trailing commas, NaN,
    /// leading zeros, single quotes, byte-order mark or raw control characters in strings;
    /// UTF-8 validated; whitespace around the value and nothing else after it).
    ///
    /// An integer literal that fits `Int64` becomes `.int`, any other number `.double`; a
    /// number whose value is not a finite double (`1e400`) is rejected with
    /// ``JSONParseError/Code/numberOutOfRange`` rather than turned into infinity, which JSON
    /// cannot write back. Underflow (`1e-400`) gives 0.
    public static func parse(_ bytes: UnsafeRawBufferPointer,
                             limits: JSONLimits = .default) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes.assumingMemoryBound(to: UInt8.self), limits: limits)
        return try parser.parseDocument()
    }

    /// Parses one JSON document from bytes; see the raw-buffer overload.
    public static func parse(_ bytes: [UInt8],
                             limits: JSONLimits = .default) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try parse(raw, limits: limits) }
        }
        return try result.get()
    }

    /// Parses one JSON document from any collection of bytes (contiguous ones without a copy).
    public static func parse(_ bytes: some Collection<UInt8>,
                             limits: JSONLimits = .default) throws(JSONParseError) -> JSONValue {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try parse(UnsafeRawBufferPointer(buffer), limits: limits) }
        }
        if let contiguous { return try contiguous.get() }
        return try parse(Array(bytes), limits: limits)
    }

    /// Parses one JSON document from a string's UTF-8.
    public static func parse(_ text: String,
                             limits: JSONLimits = .default) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try parse(UnsafeRawBufferPointer(buffer), limits: limits) }
        }
        return try result.get()
    }
}

// ASCII bytes the parser dispatches on.
private enum ASCII {
    static let space: UInt8 = 0x20, tab: UInt8 = 0x09, newline: UInt8 = 0x0A, cr: UInt8 = 0x0D
    static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ","), colon = UInt8(ascii: ":")
    static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    static let minus = UInt8(ascii: "-"), plus = UInt8(ascii: "+"), dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")
    static let lowerE = UInt8(ascii: "e"), upperE = UInt8(ascii: "E")
}

/// An iterative parser over a byte buffer. Open containers live on explicit stacks (`frames`,
/// with their pending elements in `values` and `keys`), so nesting depth costs heap, not
/// stack, and each element is moved into its container exactly once.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: JSONLimits
    private var pos = 0
    private var valueCount = 0
    /// Reused for strings with escapes, which cannot be a slice of the input.
    private var scratch: [UInt8] = []

    private enum Frame {
        case array(valueStart: Int)
        case object(valueStart: Int, keyStart: Int)
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if pos < bytes.count {
            throw JSONParseError(.trailingData, "unexpected data after the JSON value", at: pos)
        }
        return value
    }

    // MARK: Structure

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        var frames: [Frame] = []
        var values: [JSONValue] = []
        var keys: [String] = []

        expectingValue: while true {
            // Invariant: whitespace before the value has been skipped.
            guard pos < bytes.count else { throw endError("expected a value") }
            valueCount += 1
            if valueCount > limits.maxValues {
                throw JSONParseError(.limitExceeded, "more than \(limits.maxValues) values", at: pos)
            }
            var value: JSONValue
            switch bytes[pos] {
            case ASCII.openBracket, ASCII.openBrace:
                let isObject = bytes[pos] == ASCII.openBrace
                if frames.count >= limits.maxDepth {
                    throw JSONParseError(.limitExceeded, "nesting deeper than \(limits.maxDepth) levels", at: pos)
                }
                pos += 1
                skipWhitespace()
                if pos < bytes.count, bytes[pos] == (isObject ? ASCII.closeBrace : ASCII.closeBracket) {
                    pos += 1
                    value = isObject ? .object(JSONObject()) : .array([])
                } else if isObject {
                    frames.append(.object(valueStart: values.count, keyStart: keys.count))
                    keys.append(try parseKey())
                    continue expectingValue
                } else {
                    frames.append(.array(valueStart: values.count))
                    continue expectingValue
                }
            case ASCII.quote:
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case ASCII.minus, ASCII.zero...ASCII.nine:
                value = try parseNumber()
            default:
                throw JSONParseError(.syntax, "expected a value", at: pos)
            }

            // A value is complete: hand it to its container, closing containers as we go.
            while let frame = frames.last {
                values.append(value)
                skipWhitespace()
                switch frame {
                case .array(let valueStart):
                    guard pos < bytes.count else { throw endError("expected ',' or ']'") }
                    if bytes[pos] == ASCII.comma {
                        pos += 1
                        skipWhitespace()
                        continue expectingValue
                    }
                    guard bytes[pos] == ASCII.closeBracket else {
                        throw JSONParseError(.syntax, "expected ',' or ']'", at: pos)
                    }
                    pos += 1
                    value = .array(Array(values[valueStart...]))
                    values.removeSubrange(valueStart...)
                case .object(let valueStart, let keyStart):
                    guard pos < bytes.count else { throw endError("expected ',' or '}'") }
                    if bytes[pos] == ASCII.comma {
                        pos += 1
                        skipWhitespace()
                        keys.append(try parseKey())
                        continue expectingValue
                    }
                    guard bytes[pos] == ASCII.closeBrace else {
                        throw JSONParseError(.syntax, "expected ',' or '}'", at: pos)
                    }
                    pos += 1
                    value = .object(JSONObject(keys: Array(keys[keyStart...]), values: Array(values[valueStart...])))
                    keys.removeSubrange(keyStart...)
                    values.removeSubrange(valueStart...)
                }
                frames.removeLast()
            }
            return value
        }
    }

    /// A member's key and its colon, leaving `pos` at the value.
    private mutating func parseKey() throws(JSONParseError) -> String {
        guard pos < bytes.count else { throw endError("expected a string key") }
        guard bytes[pos] == ASCII.quote else {
            throw JSONParseError(.syntax, "expected a string key", at: pos)
        }
        let key = try parseString()
        skipWhitespace()
        guard pos < bytes.count else { throw endError("expected ':'") }
        guard bytes[pos] == ASCII.colon else { throw JSONParseError(.syntax, "expected ':'", at: pos) }
        pos += 1
        skipWhitespace()
        return key
    }

    private mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case ASCII.space, ASCII.newline, ASCII.cr, ASCII.tab: pos += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = pos
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard pos < bytes.count else { throw endError("expected '\(literal)'") }
            guard bytes[pos] == byte else { throw JSONParseError(.syntax, "expected '\(literal)'", at: start) }
            pos += 1
        }
    }

    private func endError(_ expectation: String) -> JSONParseError {
        JSONParseError(.unexpectedEnd, "unexpected end of input, \(expectation)", at: pos)
    }

    // MARK: Strings

    /// A string starting at the opening quote. Strings without escapes — nearly all — are
    /// decoded straight from the input; others are assembled in `scratch`.
    private mutating func parseString() throws(JSONParseError) -> String {
        let open = pos
        pos += 1
        let start = pos
        try skipPlainRun()
        guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, "unterminated string", at: open) }
        if bytes[pos] == ASCII.quote {
            try checkStringLength(pos - start, open: open)
            defer { pos += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        }

        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<pos]))
        while true {
            // At a backslash.
            try appendEscape()
            let runStart = pos
            try skipPlainRun()
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<pos]))
            try checkStringLength(scratch.count, open: open)
            guard pos < bytes.count else {
                throw JSONParseError(.unexpectedEnd, "unterminated string", at: open)
            }
            if bytes[pos] == ASCII.quote {
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            }
        }
    }

    private func checkStringLength(_ length: Int, open: Int) throws(JSONParseError) {
        if length > limits.maxStringBytes {
            throw JSONParseError(.limitExceeded, "string longer than \(limits.maxStringBytes) bytes", at: open)
        }
    }

    /// Advances over bytes that stand for themselves — printable ASCII other than `"` and
    /// `\`, and well-formed UTF-8 — stopping at a quote, a backslash or the end.
    private mutating func skipPlainRun() throws(JSONParseError) {
        let raw = UnsafeRawPointer(bytes.baseAddress)
        while pos < bytes.count {
            // Eight printable ASCII bytes at a time (the serializer's test, plus any byte
            // with its high bit set); anything else goes through the byte-wise checks.
            if let raw, pos + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: pos, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 && !JSONEncoding.needsEscape(word) {
                    pos += 8
                    continue
                }
            }
            let byte = bytes[pos]
            if byte < 0x80 {
                if byte >= 0x20 {
                    if byte == ASCII.quote || byte == ASCII.backslash { return }
                    pos += 1
                } else {
                    let hex = String(byte, radix: 16, uppercase: true)
                    throw JSONParseError(.invalidString,
                                         "control character U+\(hex.count == 1 ? "000" : "00")\(hex) must be escaped in a string",
                                         at: pos)
                }
            } else {
                try skipUTF8Sequence()
            }
        }
    }

    /// Validates one multi-byte UTF-8 sequence at `pos` (RFC 3629 table 3-7: no overlong
    /// forms, no encoded surrogates, nothing above U+10FFFF) and advances past it.
    private mutating func skipUTF8Sequence() throws(JSONParseError) {
        let lead = bytes[pos]
        var trailing = 0
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: trailing = 1
        case 0xE0: trailing = 2; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: trailing = 2
        case 0xED: trailing = 2; high = 0x9F
        case 0xF0: trailing = 3; low = 0x90
        case 0xF1...0xF3: trailing = 3
        case 0xF4: trailing = 3; high = 0x8F
        default: throw JSONParseError(.invalidUTF8, "invalid UTF-8 byte 0x\(String(lead, radix: 16, uppercase: true))", at: pos)
        }
        guard pos + trailing < bytes.count else {
            throw JSONParseError(.invalidUTF8, "truncated UTF-8 sequence", at: pos)
        }
        let second = bytes[pos + 1]
        guard second >= low, second <= high else {
            throw JSONParseError(.invalidUTF8, "invalid UTF-8 sequence", at: pos)
        }
        var i = 2
        while i <= trailing {
            guard bytes[pos + i] & 0xC0 == 0x80 else {
                throw JSONParseError(.invalidUTF8, "invalid UTF-8 sequence", at: pos)
            }
            i += 1
        }
        pos += trailing + 1
    }

    /// Decodes the escape at `pos` (a backslash) into `scratch`.
    private mutating func appendEscape() throws(JSONParseError) {
        let escape = pos
        pos += 1
        guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, "unterminated string", at: escape) }
        let byte = bytes[pos]
        pos += 1
        switch byte {
        case ASCII.quote, ASCII.backslash, ASCII.slash: scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try hexQuad(escape: escape)
            var scalar = UInt32(unit)
            switch unit {
            case 0xD800...0xDBFF:
                guard pos + 1 < bytes.count, bytes[pos] == ASCII.backslash, bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw JSONParseError(.invalidString, "lone surrogate \\u\(hex(unit)) in a string", at: escape)
                }
                let second = pos
                pos += 2
                let low = try hexQuad(escape: second)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError(.invalidString, "lone surrogate \\u\(hex(unit)) in a string", at: escape)
                }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw JSONParseError(.invalidString, "lone surrogate \\u\(hex(unit)) in a string", at: escape)
            default:
                break
            }
            appendUTF8(scalar)
        default:
            throw JSONParseError(.invalidString, "invalid escape in a string", at: escape)
        }
    }

    private func hex(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// The four hex digits after `\u`.
    private mutating func hexQuad(escape: Int) throws(JSONParseError) -> UInt16 {
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, "unterminated string", at: escape) }
            let byte = bytes[pos]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(.invalidString, "invalid \\u escape: expected 4 hex digits", at: escape)
            }
            unit = unit << 4 | UInt16(digit)
            pos += 1
        }
        return unit
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(0xC0 | UInt8(scalar >> 6))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(0xE0 | UInt8(scalar >> 12))
            scratch.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        default:
            scratch.append(0xF0 | UInt8(scalar >> 18))
            scratch.append(0x80 | UInt8((scalar >> 12) & 0x3F))
            scratch.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        }
    }

    // MARK: Numbers

    private func isDigit(at index: Int) -> Bool {
        index < bytes.count && bytes[index] >= ASCII.zero && bytes[index] <= ASCII.nine
    }

    private mutating func skipDigits() {
        while isDigit(at: pos) { pos += 1 }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = pos
        let negative = bytes[pos] == ASCII.minus
        if negative { pos += 1 }
        guard isDigit(at: pos) else { throw digitError("expected a digit") }
        if bytes[pos] == ASCII.zero {
            pos += 1
            if isDigit(at: pos) { throw JSONParseError(.syntax, "leading zeros are not allowed", at: start) }
        } else {
            skipDigits()
        }
        let integerEnd = pos
        var isInteger = true
        if pos < bytes.count, bytes[pos] == ASCII.dot {
            isInteger = false
            pos += 1
            guard isDigit(at: pos) else { throw digitError("expected a digit after '.'") }
            skipDigits()
        }
        if pos < bytes.count, bytes[pos] == ASCII.lowerE || bytes[pos] == ASCII.upperE {
            isInteger = false
            pos += 1
            if pos < bytes.count, bytes[pos] == ASCII.plus || bytes[pos] == ASCII.minus { pos += 1 }
            guard isDigit(at: pos) else { throw digitError("expected a digit in the exponent") }
            skipDigits()
        }
        if pos - start > limits.maxNumberBytes {
            throw JSONParseError(.limitExceeded, "number longer than \(limits.maxNumberBytes) bytes", at: start)
        }

        if isInteger {
            // Accumulate towards the sign so that Int64.min parses; overflow falls back to
            // a double.
            var value: Int64 = 0
            var overflow = false
            for index in (negative ? start + 1 : start)..<integerEnd where !overflow {
                let digit = Int64(bytes[index] - ASCII.zero)
                let (scaled, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = negative ? scaled.subtractingReportingOverflow(digit)
                                          : scaled.addingReportingOverflow(digit)
                overflow = o1 || o2
                value = next
            }
            if !overflow { return .int(value) }
        }
        // The slice has been validated against the JSON grammar, which Double's own
        // (Swift-literal-like) grammar accepts with the same meaning.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            throw JSONParseError(.numberOutOfRange, "number out of range", at: start)
        }
        return .double(double)
    }

    private func digitError(_ message: String) -> JSONParseError {
        pos < bytes.count ? JSONParseError(.syntax, message, at: pos) : endError(message)
    }
}
