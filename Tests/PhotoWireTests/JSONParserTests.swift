import PhotoWire
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    static let accepted: [(String, JSONValue)] = [
        ("[]", []),
        (" {} ", [:]),
        ("\t\n\r [1]\n", [1]),
        ("0", 0),
        ("-0", 0),
        ("-1", -1),
        ("9223372036854775807", .int(.max)),
        ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .double(0x1p63)),
        ("-9223372036854775809", .double(-0x1p63)),
        ("1.5", 1.5),
        ("1e2", 100.0),
        ("1E+2", 100.0),
        ("1e-2", 0.01),
        ("-0.0", .double(-0.0)),
        ("0.1", 0.1),
        ("1e-400", 0.0),
        ("123.456e-789", 0.0),
        ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        ("true", true),
        ("false", false),
        ("null", nil),
        (#""""#, ""),
        (#""a\/b""#, "a/b"),
        (#""\b\f\n\r\t\"\\""#, "\u{8}\u{C}\n\r\t\"\\"),
        (#""\u0000""#, "\u{0}"),
        (#""\u00e9\u00E9""#, "éé"),
        (#""\uD83D\uDE00""#, "😀"),
        (#""x\ud83d\ude00y""#, "x😀y"),
        (#""\u2028""#, "\u{2028}"),
        ("\"é😀\u{7F}\"", "é😀\u{7F}"),
        (#"{"a" : [1, {"b":null}] , "c":"d"}"#, ["a": [1, ["b": nil]], "c": "d"]),
        (#"[[[]],{},[{}]]"#, [[[]], [:], [[:]]]),
        (#"{"a":1,"a":2}"#, .object(JSONObject([("a", 1), ("a", 2)]))),
    ]

    @Test("accepts valid JSON", arguments: accepted)
    func accepts(_ input: String, _ expected: JSONValue) throws {
        let value = try JSONValue.parse(input)
        #expect(value == expected)
        // The same through every entry point.
        #expect(try JSONValue.parse(bytes(input)) == expected)
        #expect(try JSONValue.parse(bytes(input)[...]) == expected)
        #expect(try JSONValue.parse(input.utf8) == expected)
    }

    @Test func negativeZeroDoubleKeepsItsSign() throws {
        let value = try JSONValue.parse("-0.0")
        #expect(value.doubleValue?.sign == .minus)
    }

    @Test func duplicateKeysLastWinsOnLookup() throws {
        let value = try JSONValue.parse(#"{"a":1,"b":true,"a":2}"#)
        #expect(value["a"] == 2)
        #expect(value.objectValue?.count == 3)
        #expect(value.objectValue?.keys == ["a", "b", "a"])
    }

    static let rejected: [(String, JSONParseError.Code, Int)] = [
        ("", .unexpectedEnd, 0),
        ("  ", .unexpectedEnd, 2),
        ("[1,]", .syntax, 3),
        ("[1 2]", .syntax, 3),
        ("[,1]", .syntax, 1),
        ("[1,,2]", .syntax, 3),
        (#"{"a":1,}"#, .syntax, 7),
        (#"{"a" 1}"#, .syntax, 5),
        (#"{"a":1 "b":2}"#, .syntax, 7),
        ("{a:1}", .syntax, 1),
        ("{'a':1}", .syntax, 1),
        ("'a'", .syntax, 0),
        ("01", .syntax, 0),
        ("-01", .syntax, 0),
        ("[01]", .syntax, 1),
        ("1.", .unexpectedEnd, 2),
        ("1.e3", .syntax, 2),
        (".5", .syntax, 0),
        ("+1", .syntax, 0),
        ("-", .unexpectedEnd, 1),
        ("- 1", .syntax, 1),
        ("1e", .unexpectedEnd, 2),
        ("1e+", .unexpectedEnd, 3),
        ("0x10", .trailingData, 1),
        ("NaN", .syntax, 0),
        ("Infinity", .syntax, 0),
        ("-Infinity", .syntax, 1),
        ("1e400", .numberOutOfRange, 0),
        ("[-1e400]", .numberOutOfRange, 1),
        ("tru", .unexpectedEnd, 3),
        ("trUe", .syntax, 0),
        ("nul", .unexpectedEnd, 3),
        ("[1] x", .trailingData, 4),
        ("[1]]", .trailingData, 3),
        ("1 2", .trailingData, 2),
        ("// c\n1", .syntax, 0),
        ("/* */ 1", .syntax, 0),
        ("[1,2", .unexpectedEnd, 4),
        (#"{"a":1"#, .unexpectedEnd, 6),
        (#"{"a""#, .unexpectedEnd, 4),
        ("{", .unexpectedEnd, 1),
        ("[", .unexpectedEnd, 1),
        ("]", .syntax, 0),
        (#""abc"#, .unexpectedEnd, 0),
        (#""\""#, .unexpectedEnd, 0),
        ("\"a\nb\"", .invalidString, 2),
        ("\"\t\"", .invalidString, 1),
        ("\"\u{0}\"", .invalidString, 1),
        ("\"\u{1F}\"", .invalidString, 1),
        (#""\x""#, .invalidString, 1),
        (#""\u12""#, .invalidString, 1),
        (#""\u12G4""#, .invalidString, 1),
        (#""\uD83D""#, .invalidString, 1),
        (#""\uDE00""#, .invalidString, 1),
        (#""ab\uD83Dx""#, .invalidString, 3),
        (#""\uD83D\u0041""#, .invalidString, 1),
        (#""\uD83D\uD83D""#, .invalidString, 1),
        ("\u{FEFF}[]", .syntax, 0),
        ("é", .syntax, 0),
    ]

    @Test("rejects invalid JSON with a code and an offset", arguments: rejected)
    func rejects(_ input: String, _ code: JSONParseError.Code, _ offset: Int) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(input) }
        do {
            _ = try JSONValue.parse(input)
        } catch {
            #expect(error.code == code, "\(error)")
            #expect(error.offset == offset, "\(error)")
            #expect(error.description == "\(error.message) at byte \(error.offset)")
        }
    }

    @Test func errorMessagesReadWell() {
        func message(_ input: String) -> String {
            do {
                _ = try JSONValue.parse(input)
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(message(#"{"a":1,"b":2 "c":3}"#) == "expected ',' or '}' at byte 13")
        #expect(message("[1,]") == "expected a value at byte 3")
        #expect(message("[1") == "unexpected end of input, expected ',' or ']' at byte 2")
        #expect(message("01") == "leading zeros are not allowed at byte 0")
        #expect(message("\"a\u{1}\"") == "control character U+0001 must be escaped in a string at byte 2")
        #expect(message(#""\uDE00""#) == #"lone surrogate \uDE00 in a string at byte 1"#)
        #expect(message("1e999") == "number out of range at byte 0")
        #expect(message("[] []") == "unexpected data after the JSON value at byte 3")
    }

    static let invalidUTF8: [[UInt8]] = [
        [0x22, 0xFF, 0x22],                    // never valid
        [0x22, 0x80, 0x22],                    // lone continuation byte
        [0x22, 0xC0, 0x80, 0x22],              // overlong NUL
        [0x22, 0xC1, 0xBF, 0x22],              // overlong
        [0x22, 0xE0, 0x80, 0x80, 0x22],        // overlong 3-byte
        [0x22, 0xF0, 0x80, 0x80, 0x80, 0x22],  // overlong 4-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],        // encoded surrogate U+D800
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],  // invalid lead
        [0x22, 0xE2, 0x82, 0x22],              // truncated sequence
        [0x22, 0xC3, 0x28, 0x22],              // bad continuation
        [0x22, 0xE2, 0x82],                    // truncated at the end of input
        [0x22, 0x5C, 0x6E, 0xC3, 0x22],        // after an escape
    ]

    @Test("rejects invalid UTF-8 inside strings", arguments: invalidUTF8)
    func rejectsInvalidUTF8(_ input: [UInt8]) {
        do {
            _ = try JSONValue.parse(input)
            Issue.record("accepted \(input)")
        } catch {
            #expect(error.code == .invalidUTF8, "\(error)")
        }
    }

    @Test func acceptsEveryValidUTF8Length() throws {
        let text = "aé€😀\u{10FFFF}\u{E000}\u{D7FF}"
        #expect(try JSONValue.parse("\"\(text)\"") == .string(text))
        #expect(try JSONValue.parse("\"\\n\(text)\"") == .string("\n" + text))
    }

    @Test func rawControlAndBadBytesAreFoundAtEveryPosition() {
        // The string scan skips eight plain bytes at a time; a bad byte at any position,
        // around word boundaries, must still be caught at its exact offset.
        for length in 1...24 {
            for position in 0..<length {
                for (bad, code) in [(UInt8(0x0A), JSONParseError.Code.invalidString), (0x01, .invalidString),
                                    (0x1F, .invalidString), (0xFF, .invalidUTF8), (0x80, .invalidUTF8)] {
                    var input = [UInt8](repeating: UInt8(ascii: "a"), count: length + 2)
                    input[0] = 0x22
                    input[length + 1] = 0x22
                    input[position + 1] = bad
                    #expect(throws: JSONParseError.self) { try JSONValue.parse(input) }
                    do {
                        _ = try JSONValue.parse(input)
                    } catch {
                        #expect(error.code == code && error.offset == position + 1, "\(error)")
                    }
                }
            }
        }
    }

    @Test func nonASCIIOutsideStringsIsASyntaxError() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x5B, 0xC3, 0xA9, 0x5D]) }
    }

    // MARK: Limits

    @Test(arguments: [1, 2, 63, 64])
    func depthWithinTheLimitIsAccepted(_ depth: Int) throws {
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        _ = try JSONValue.parse(arrays)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        _ = try JSONValue.parse(objects)
    }

    @Test(arguments: [65, 100, 1000])
    func depthBeyondTheLimitIsRejected(_ depth: Int) {
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(throws: JSONParseError(.limitExceeded, "nesting deeper than 64 levels", at: 64)) {
            try JSONValue.parse(arrays)
        }
        let mixed = String(repeating: #"[{"a":"#, count: depth)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(mixed) }
    }

    @Test func aMegabyteOfOpenBracketsIsRejectedQuickly() {
        let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(throws: JSONParseError.self) { try JSONValue.parse(hostile) }
        }
        #expect(elapsed < .seconds(1))
    }

    @Test func unboundedDepthStillDoesNotRecurse() {
        // The parser keeps open containers on the heap: even with the depth limit lifted, a
        // megabyte of brackets is an error, not a stack overflow.
        let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        #expect(throws: JSONParseError.self) {
            try JSONValue.parse(hostile, limits: JSONLimits(maxDepth: .max))
        }
    }

    @Test func stringLengthLimit() throws {
        let limits = JSONLimits(maxStringBytes: 4)
        #expect(try JSONValue.parse(#""abcd""#, limits: limits) == "abcd")
        #expect(try JSONValue.parse(#""ab\nc""#, limits: limits) == "ab\nc")
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#""abcde""#, limits: limits) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#""ab\ncd""#, limits: limits) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"abcde":1}"#, limits: limits) }
    }

    @Test func numberLengthLimit() throws {
        let limits = JSONLimits(maxNumberBytes: 5)
        #expect(try JSONValue.parse("12345", limits: limits) == 12345)
        #expect(throws: JSONParseError.self) { try JSONValue.parse("123456", limits: limits) }
        let longDigits = String(repeating: "1", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(longDigits) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("0." + longDigits) }
    }

    @Test func valueCountLimit() throws {
        let limits = JSONLimits(maxValues: 4)
        #expect(try JSONValue.parse("[1,2,3]", limits: limits) == [1, 2, 3])
        #expect(throws: JSONParseError.self) { try JSONValue.parse("[1,2,3,4]", limits: limits) }
    }

    @Test func largeDocumentsParse() throws {
        let count = 50_000
        let text = "[" + (0..<count).map { #"{"i":\#($0),"s":"v\#($0)"}"# }.joined(separator: ",") + "]"
        let value = try JSONValue.parse(text)
        #expect(value.arrayValue?.count == count)
        #expect(value[count - 1]?["s"] == .string("v\(count - 1)"))
    }

    // MARK: Accessors

    @Test func accessors() throws {
        let value = try JSONValue.parse(#"{"s":"x","i":3,"d":2.0,"f":2.5,"b":true,"a":[1],"o":{},"n":null,"big":1e300}"#)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["i"]?.intValue == 3)
        #expect(value["d"]?.intValue == 2)
        #expect(value["f"]?.intValue == nil)
        #expect(value["big"]?.intValue == nil)
        #expect(value["f"]?.doubleValue == 2.5)
        #expect(value["i"]?.doubleValue == 3.0)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["a"]?[0] == 1)
        #expect(value["a"]?[1] == nil)
        #expect(value["a"]?[-1] == nil)
        #expect(value["o"]?.objectValue == JSONObject())
        #expect(value["n"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["s"]?["x"] == nil)
        #expect(value["s"]?.intValue == nil)
    }

    @Test func objectMutation() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = 3
        object["c"] = 4
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["a"] == 3)
        object["b"] = nil
        #expect(object.keys == ["a", "c"])
        #expect(object.map(\.key) == ["a", "c"])
        #expect(object.contains("c"))
        #expect(!object.contains("b"))
        var duplicated = JSONObject([("k", 1), ("x", 0), ("k", 2)])
        duplicated["k"] = 5
        #expect(duplicated.values == [1, 0, 5])
        duplicated.removeAll("k")
        #expect(duplicated == ["x": 0])
    }
}
