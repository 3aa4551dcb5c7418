import PhotoWire
import Testing

@Suite("JSON serializer")
struct JSONSerializerTests {
    static let strings: [(String, String)] = [
        ("", #""""#),
        ("plain", #""plain""#),
        ("a\nb", #""a\nb""#),
        ("\r\n\t\u{8}\u{C}", #""\r\n\t\b\f""#),
        ("\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#),
        ("\"", #""\"""#),
        ("\\", #""\\""#),
        ("a/b", #""a/b""#),
        ("é😀", "\"é😀\""),
        ("\u{7F}\u{2028}\u{FEFF}", "\"\u{7F}\u{2028}\u{FEFF}\""),
        ("x\"y\\z\nw", #""x\"y\\z\nw""#),
    ]

    @Test("escapes strings", arguments: strings)
    func escapes(_ string: String, _ expected: String) throws {
        #expect(JSONValue.string(string).jsonString == expected)
        #expect(try JSONValue.parse(expected) == .string(string))
    }

    @Test func escapesAtEveryPosition() throws {
        // The escape scan skips eight clean bytes at a time; put each special byte at every
        // position around word boundaries, among ASCII and multi-byte UTF-8.
        let specials: [(Character, String)] = [("\n", #"\n"#), ("\"", #"\""#), ("\\", #"\\"#),
                                               ("\u{1}", #"\u0001"#), ("\u{1F}", #"\u001f"#)]
        for filler in ["a", "é"] {
            for length in 1...24 {
                for position in 0..<length {
                    for (special, escaped) in specials {
                        var characters = Array(repeating: Character(filler), count: length)
                        characters[position] = special
                        let string = String(characters)
                        let expected = "\"" + String(characters[..<position]) + escaped
                            + String(characters[(position + 1)...]) + "\""
                        #expect(JSONValue.string(string).jsonString == expected)
                        #expect(try JSONValue.parse(expected) == .string(string))
                    }
                }
            }
        }
        // Bytes that look special to a careless word test: 0x20, 0x21, 0x5B, 0x5D, 0x7F, 0x80+.
        let clean = " !#[]~\u{7F}\u{80}\u{A2}\u{5C5C}\u{2222}"
        #expect(JSONValue.string(clean).jsonString == "\"" + clean + "\"")
    }

    static let numbers: [(JSONValue, String)] = [
        (0, "0"),
        (-7, "-7"),
        (.int(.max), "9223372036854775807"),
        (.int(.min), "-9223372036854775808"),
        (5.0, "5.0"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (1e-5, "1e-05"),
        (1e16, "1e+16"),
        (1.5e300, "1.5e+300"),
        (-0.0, "-0.0"),
        (123456.0, "123456.0"),
        (9_007_199_254_740_992.0, "9007199254740992.0"),
        (-9_007_199_254_740_991.0, "-9007199254740991.0"),
        (.double(.leastNonzeroMagnitude), "5e-324"),
        (0.30000000000000004, "0.30000000000000004"),
        (.double(.infinity), "null"),
        (.double(-.infinity), "null"),
        (.double(.nan), "null"),
    ]

    @Test("writes numbers", arguments: numbers)
    func writesNumbers(_ value: JSONValue, _ expected: String) {
        #expect(value.jsonString == expected)
    }

    @Test func integralDoublesMatchSwiftsDescription() {
        // The serializer's fast path for integral doubles must agree with Double.description.
        var rng = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            let magnitude = Double(Int64.random(in: 0..<(1 << 53), using: &rng))
            let value = Bool.random(using: &rng) ? magnitude : -magnitude
            let scaled = (value / Double(1 << Int.random(in: 0..<53, using: &rng))).rounded()
            for d in [value, scaled] where d != 0 {
                #expect(JSONValue.double(d).jsonString == d.description)
            }
        }
    }

    @Test func compositesKeepOrder() {
        let value: JSONValue = ["z": 1, "a": [true, nil, "x"], "m": [:], "e": []]
        #expect(value.jsonString == #"{"z":1,"a":[true,null,"x"],"m":{},"e":[]}"#)
        #expect(value.description == value.jsonString)
        var buffer = bytes("prefix:")
        value.write(into: &buffer)
        #expect(buffer.text == #"prefix:{"z":1,"a":[true,null,"x"],"m":{},"e":[]}"#)
    }

    @Test(arguments: 0..<8)
    func roundTripsRandomTrees(_ seed: UInt64) throws {
        var generator = RandomJSON(seed: seed)
        for _ in 0..<300 {
            let value = generator.value()
            let serialized = value.serialized()
            #expect(!serialized.contains(0x0A), "raw newline in \(serialized.text)")
            #expect(!serialized.contains(0x0D))
            let parsed = try JSONValue.parse(serialized)
            #expect(parsed == value)
            #expect(parsed.serialized() == serialized)
        }
    }

    // MARK: JSONWriter

    /// Writes `value` through the writer's API, the way daemon code would.
    static func write(_ value: JSONValue, with writer: inout JSONWriter) {
        switch value {
        case .null: writer.nullValue()
        case .bool(let b): writer.value(b)
        case .int(let i): writer.value(i)
        case .double(let d): writer.value(d)
        case .string(let s): writer.value(s)
        case .array(let elements):
            writer.beginArray()
            for element in elements { write(element, with: &writer) }
            writer.endArray()
        case .object(let object):
            writer.beginObject()
            for (key, member) in object {
                writer.key(key)
                write(member, with: &writer)
            }
            writer.endObject()
        }
    }

    @Test(arguments: 0..<4)
    func writerProducesIdenticalBytes(_ seed: UInt64) {
        var generator = RandomJSON(seed: 100 + seed)
        var writer = JSONWriter(reservingCapacity: 256)
        for _ in 0..<300 {
            let value = generator.value()
            writer.reset()
            Self.write(value, with: &writer)
            #expect(writer.bytes == value.serialized())
        }
    }

    @Test func writerFieldsAndOptionals() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("id", "a_x")
        writer.field("w", 4032)
        writer.field("t", Int64(-1))
        writer.field("lat", 52.5)
        writer.field("fav", true)
        writer.field("offset", nil as String?)
        writer.field("lon", nil as Double?)
        writer.field("n", nil as Int?)
        writer.field("h", nil as Bool?)
        writer.field("tags", ["a", "b"])
        writer.field("raw", ["k": [1, 2]] as JSONValue)
        writer.key("cached")
        writer.rawValue(bytes(#"{"x":1}"#))
        writer.key("list")
        writer.beginArray()
        writer.beginObject()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.value(Optional("s"))
        writer.value(Optional(1.5))
        writer.endArray()
        writer.endObject()
        let expected: JSONValue = [
            "id": "a_x", "w": 4032, "t": -1, "lat": 52.5, "fav": true, "offset": nil, "lon": nil,
            "n": nil, "h": nil, "tags": ["a", "b"], "raw": ["k": [1, 2]], "cached": ["x": 1],
            "list": [[:], [], "s", 1.5],
        ]
        #expect(writer.bytes.text == expected.jsonString)
    }

    @Test func writerAppendsToAnExistingBuffer() {
        var writer = JSONWriter(appendingTo: bytes("x"))
        writer.beginArray()
        writer.value(1)
        writer.value(2)
        writer.endArray()
        #expect(writer.bytes.text == "x[1,2]")
    }
}
