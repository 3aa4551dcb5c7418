import PhotoWire
import Testing

/// Hostile input must never trap: every outcome is a value or a typed error. These tests
/// pass when they finish.
@Suite("Fuzz")
struct FuzzTests {
    static let seeds: [[UInt8]] = [
        #"{"jsonrpc":"2.0","id":1,"method":"assets.fetch","params":{"limit":100,"offset":0,"predicate":"mediaType == \"image\"","sort":["-localDateTime"]}}"#,
        #"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"n"}]"#,
        #"{"jsonrpc":"2.0","id":"x","method":"changes.subscribe","params":{"since":4811}}"#,
        #"{"a":[1.5e-3,-0,true,false,null,"\u00e9\ud83d\ude00\n"],"b":{"c":{}}}"#,
    ].map { Array($0.utf8) }

    /// Feeds `line` to everything that reads client input.
    static func exercise(_ line: [UInt8]) {
        switch RPCMessage.decode(line) {
        case .request(let request):
            if let params = try? RPCParams(request.params) {
                _ = try? params.int("limit", default: 100, in: 1...1000)
                _ = try? params.stringArray("sort", default: [])
                _ = try? params.rejectUnknownKeys(allowed: ["limit"])
            }
            _ = RPCResponse.success(id: request.id ?? 0, result: request.params ?? nil).encodedLine()
        case .batch(let members):
            #expect(!members.isEmpty)
        case .invalid(let response):
            let encoded = response.encodedLine()
            #expect(encoded.filter { $0 == 0x0A }.count == 1)
        }
        _ = try? RPCMessage.decodeServerMessage(line)
        if let value = try? JSONValue.parse(line) {
            // Whatever parses re-serializes to something that parses to the same value.
            #expect((try? JSONValue.parse(value.serialized())) == value)
        }
    }

    @Test(arguments: 0..<4)
    func randomBytes(_ seed: UInt64) {
        var rng = SplitMix64(seed: 1000 + seed)
        let alphabet = Array(#"{}[]:,"\ 0123456789.eE+-truefalsn/u"#.utf8)
        for _ in 0..<2_000 {
            let length = Int.random(in: 0..<64, using: &rng)
            let line: [UInt8] = (0..<length).map { _ in
                // Half structural characters, half anything, so the parser gets past byte 0.
                Bool.random(using: &rng) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
            }
            Self.exercise(line)
        }
    }

    @Test(arguments: 0..<4)
    func mutatedRequests(_ seed: UInt64) {
        var rng = SplitMix64(seed: 2000 + seed)
        for _ in 0..<2_500 {
            var line = Self.seeds.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let position = Int.random(in: 0...line.count, using: &rng)
                switch Int.random(in: 0..<6, using: &rng) {
                case 0 where position < line.count:
                    line[position] = UInt8.random(in: 0...255, using: &rng)
                case 1 where position < line.count:
                    line[position] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                case 2 where position < line.count:
                    line.remove(at: position)
                case 3:
                    line.insert(Array(#"[{"}]\,:0"#.utf8).randomElement(using: &rng)!, at: position)
                case 4:
                    line = Array(line[..<position])  // truncated
                default:
                    let start = Int.random(in: 0...position, using: &rng)
                    line.insert(contentsOf: line[start..<position], at: position)  // duplicated span
                }
            }
            Self.exercise(line)
        }
    }

    @Test func deepAndWideDocuments() {
        let shapes: [String] = [
            String(repeating: "[", count: 1 << 20),
            String(repeating: "{\"a\":", count: 100_000),
            String(repeating: "[{}", count: 100_000),
            "[" + String(repeating: "1,", count: 300_000) + "1]",
            "\"" + String(repeating: "\\u0041", count: 100_000) + "\"",
            "\"" + String(repeating: "\\uD83D", count: 100_000) + "\"",
            String(repeating: "9", count: 1 << 20),
        ]
        for shape in shapes { Self.exercise(Array(shape.utf8)) }
    }

    @Test(arguments: 0..<2)
    func framerWithRandomChunks(_ seed: UInt64) {
        var rng = SplitMix64(seed: 3000 + seed)
        var framer = LineFramer(maxLineBytes: 200)
        var lines = 0
        for _ in 0..<3_000 {
            let chunk: [UInt8] = (0..<Int.random(in: 0..<300, using: &rng)).map { _ in
                Int.random(in: 0..<40, using: &rng) == 0 ? 0x0A : UInt8.random(in: 0...255, using: &rng)
            }
            for event in framer.append(chunk) {
                switch event {
                case .line(let line):
                    #expect(!line.contains(0x0A) && line.count <= 200)
                    lines += 1
                    Self.exercise(line)
                case .tooLong(let dropped):
                    #expect(dropped > 200)
                }
            }
            #expect(framer.bufferedByteCount <= 200)
        }
        #expect(lines > 0)
    }
}
