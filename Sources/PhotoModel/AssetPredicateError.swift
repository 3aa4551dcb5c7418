/// Why a fetch predicate or sort string was refused: where, what the parser expected there,
/// and what it found. The daemon answers `invalid params` with it, so a client (or a person
/// typing into `photoctl`) can point at the spot; the message always reads
/// `expected <expected> at <position>, found <found>`.
public struct AssetPredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of mistake it is, for callers that branch (the message is for people). Public
    /// codes can grow without breaking callers.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The text does not follow the grammar (a missing value, an unclosed string or parenthesis).
        public static let syntax = Code(rawValue: "syntax")
        /// A name that is not one of the keys (the message lists them).
        public static let unknownKey = Code(rawValue: "unknownKey")
        /// An operator the key does not take (`isFavorite < true`, `path < "a"`).
        public static let unsupportedOperator = Code(rawValue: "unsupportedOperator")
        /// A value of the wrong type for the key (`pixelWidth == "wide"`).
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// A value of the right type that the key does not accept (`mediaType == "photo"`, a 31st of February).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// The text is too long, too deeply nested, or a list too long (`PredicateLimits`).
        public static let limitExceeded = Code(rawValue: "limitExceeded")
        public var description: String { rawValue }
    }

    /// What kind of mistake.
    public var code: Code
    /// A 0-based offset into the text, in Unicode scalars (code points); the text's scalar
    /// count when the problem is the end of the input.
    public var position: Int
    /// What would have been valid there (`a value after '=='`).
    public var expected: String
    /// What was there instead (`end of input`, `'='`, `the string "photo"`).
    public var found: String

    /// An error at `position`.
    public init(code: Code, position: Int, expected: String, found: String) {
        self.code = code
        self.position = position
        self.expected = expected
        self.found = found
    }

    /// `expected a value after '==' at 14, found end of input`.
    public var message: String { "expected \(expected) at \(position), found \(found)" }

    public var description: String { message }
}
