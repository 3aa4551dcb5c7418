import PhotoWire
import Testing

@Suite("JSON-RPC params")
struct RPCParamsTests {
    /// The message of the error `body` throws for `params`, or "ok".
    static func message(_ params: JSONValue?, _ body: (RPCParams) throws(RPCError) -> Void) -> String {
        do {
            try body(try RPCParams(params))
            return "ok"
        } catch {
            #expect(error.code == -32602)
            #expect(error.name == "invalidParams")
            #expect(error.message == "invalid params: " + (error.detail ?? ""))
            return error.message
        }
    }

    @Test func paramsMustBeAnObjectOrAbsent() throws {
        #expect(try RPCParams(nil).members.isEmpty)
        #expect(try RPCParams(.null).members.isEmpty)
        #expect(try RPCParams(["a": 1]).members == ["a": 1])
        #expect(Self.message([1, 2]) { _ throws(RPCError) in }
                == "invalid params: params must be an object with named members, not array")
    }

    static let integerCases: [(JSONValue, String)] = [
        (["limit": 10], "ok"),
        (["limit": 10.0], "ok"),
        (["limit": "ten"], #"invalid params: 'limit' must be an integer between 1 and 1000 (got "ten")"#),
        (["limit": 0], "invalid params: 'limit' must be an integer between 1 and 1000 (got 0)"),
        (["limit": 1001], "invalid params: 'limit' must be an integer between 1 and 1000 (got 1001)"),
        (["limit": 2.5], "invalid params: 'limit' must be an integer between 1 and 1000 (got 2.5)"),
        (["limit": true], "invalid params: 'limit' must be an integer between 1 and 1000 (got true)"),
        (["limit": 1e300], "invalid params: 'limit' must be an integer between 1 and 1000 (got 1e+300)"),
        (["limit": nil], "ok"),
        ([:], "ok"),
    ]

    @Test("integers", arguments: integerCases)
    func integers(_ params: JSONValue, _ expected: String) {
        #expect(Self.message(params) { p throws(RPCError) in
            _ = try p.int("limit", default: 100, in: 1...1000)
        } == expected)
    }

    @Test func integerValuesAndDefaults() throws {
        let p = try RPCParams(["a": 5, "b": 7.0, "n": nil])
        #expect(try p.int("a") == 5)
        #expect(try p.int("b") == 7)
        #expect(try p.int("n", default: 3) == 3)
        #expect(try p.optionalInt("n") == nil)
        #expect(try p.optionalInt("missing") == nil)
        #expect(Self.message(["a": 1]) { p throws(RPCError) in _ = try p.int("since") } == "invalid params: 'since' is required")
        #expect(Self.message(["a": nil]) { p throws(RPCError) in _ = try p.int("a") } == "invalid params: 'a' is required")
        #expect(Self.message(["o": -1]) { p throws(RPCError) in _ = try p.int("o", in: 0...Int.max) }
                == "invalid params: 'o' must be a non-negative integer (got -1)")
        #expect(Self.message(["o": 1]) { p throws(RPCError) in _ = try p.int("o", in: 5...Int.max) }
                == "invalid params: 'o' must be an integer of at least 5 (got 1)")
        #expect(Self.message(["o": 9]) { p throws(RPCError) in _ = try p.int("o", in: Int.min...5) }
                == "invalid params: 'o' must be an integer of at most 5 (got 9)")
        #expect(Self.message(["o": "x"]) { p throws(RPCError) in _ = try p.optionalInt("o") }
                == #"invalid params: 'o' must be an integer (got "x")"#)
    }

    @Test func theErrorNamesTheParameter() throws {
        do {
            _ = try RPCParams(["limit": "x"]).int("limit")
            Issue.record("accepted")
        } catch {
            #expect(error.data?["param"] == "limit")
        }
    }

    @Test func stringsBooleansDoubles() throws {
        let p = try RPCParams(["s": "x", "b": false, "d": 1, "e": 2.5])
        #expect(try p.string("s") == "x")
        #expect(try p.string("t", default: "y") == "y")
        #expect(try p.optionalString("t") == nil)
        #expect(try p.bool("b") == false)
        #expect(try p.bool("c", default: true) == true)
        #expect(try p.optionalBool("c") == nil)
        #expect(try p.double("d") == 1.0)
        #expect(try p.double("e", in: 0...3) == 2.5)
        #expect(try p.optionalDouble("z") == nil)
        #expect(Self.message(["s": 5]) { p throws(RPCError) in _ = try p.string("s") }
                == "invalid params: 's' must be a string (got 5)")
        #expect(Self.message(["b": "yes"]) { p throws(RPCError) in _ = try p.bool("b") }
                == #"invalid params: 'b' must be true or false (got "yes")"#)
        #expect(Self.message(["d": "1"]) { p throws(RPCError) in _ = try p.double("d") }
                == #"invalid params: 'd' must be a number (got "1")"#)
        #expect(Self.message(["d": 100]) { p throws(RPCError) in _ = try p.double("d", in: -90...90) }
                == "invalid params: 'd' must be a number between -90.0 and 90.0 (got 100)")
    }

    @Test func choices() throws {
        let p = try RPCParams(["mediaType": "video"])
        #expect(try p.string("mediaType", oneOf: ["image", "video"]) == "video")
        #expect(try p.string("sort", oneOf: ["asc", "desc"], default: "asc") == "asc")
        #expect(Self.message(["mediaType": "sound"]) { p throws(RPCError) in
            _ = try p.optionalString("mediaType", oneOf: ["image", "video"])
        } == #"invalid params: 'mediaType' must be one of "image", "video" (got "sound")"#)
    }

    @Test func arraysAndObjects() throws {
        let p = try RPCParams(["ids": ["a", "b"], "f": ["x": 1], "l": [1]])
        #expect(try p.stringArray("ids") == ["a", "b"])
        #expect(try p.stringArray("none", default: []) == [])
        #expect(try p.optionalStringArray("none") == nil)
        #expect(try p.object("f") == ["x": 1])
        #expect(try p.optionalObject("none") == nil)
        #expect(try p.optionalArray("l") == [1])
        #expect(Self.message(["ids": "a"]) { p throws(RPCError) in _ = try p.stringArray("ids") }
                == #"invalid params: 'ids' must be an array of strings (got "a")"#)
        #expect(Self.message(["ids": ["a", "b", 3]]) { p throws(RPCError) in _ = try p.stringArray("ids") }
                == "invalid params: 'ids[2]' must be a string (got 3)")
        #expect(Self.message(["ids": ["a", "b", "c"]]) { p throws(RPCError) in _ = try p.stringArray("ids", maxCount: 2) }
                == "invalid params: 'ids' must have at most 2 elements (got 3)")
        #expect(Self.message(["f": [1]]) { p throws(RPCError) in _ = try p.object("f") }
                == "invalid params: 'f' must be an object (got [1])")
        #expect(Self.message([:]) { p throws(RPCError) in _ = try p.object("f") } == "invalid params: 'f' is required")
        #expect(Self.message(["l": 1]) { p throws(RPCError) in _ = try p.optionalArray("l") }
                == "invalid params: 'l' must be an array (got 1)")
    }

    @Test func longValuesAreCutInMessages() {
        let long = String(repeating: "x", count: 10_000)
        let message = Self.message(["s": .string(long)]) { p throws(RPCError) in _ = try p.int("s") }
        #expect(message.count < 120)
        #expect(message.hasSuffix("…)"))
    }

    @Test func unknownKeys() throws {
        #expect(Self.message(["limit": 1, "offset": 0]) { p throws(RPCError) in
            try p.rejectUnknownKeys(allowed: ["limit", "offset"])
        } == "ok")
        #expect(Self.message(["limt": 1]) { p throws(RPCError) in
            try p.rejectUnknownKeys(allowed: ["offset", "limit"])
        } == "invalid params: unknown parameter 'limt' (expected one of: 'limit', 'offset')")
        #expect(Self.message(["x": 1]) { p throws(RPCError) in try p.rejectUnknownKeys(allowed: []) }
                == "invalid params: unknown parameter 'x' (this method takes none)")
    }
}
