import PhotoBridge
import Testing

@Suite struct RawJSONTests {
    func member(_ key: String, _ text: String) -> String? {
        RawJSON.member(key, in: Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("A top-level member's bytes exactly, whatever is nested before it")
    func members() {
        let line = #"{"jsonrpc":"2.0","method":"changes","params":{"token":12,"assets":{"inserted":["a_1"],"x":"}\"{"}},"z":[1,{"a":2}]}"#
        #expect(member("method", line) == #""changes""#)
        #expect(member("params", line) == #"{"token":12,"assets":{"inserted":["a_1"],"x":"}\"{"}}"#)
        #expect(member("z", line) == #"[1,{"a":2}]"#)
        #expect(member("token", member("params", line)!) == "12")
        #expect(member("jsonrpc", " { \"jsonrpc\" : \"2.0\" } ") == #""2.0""#)
    }

    @Test("Escapes, numbers, whitespace and empty containers")
    func edges() {
        #expect(member("b", #"{"a":"ends in \\","b":1}"#) == "1")
        #expect(member("b", #"{"a":"\"quoted\" \u00e9","b":"x"}"#) == #""x""#)
        #expect(member("n", #"{"n":-12.5e-3}"#) == "-12.5e-3")
        #expect(member("n", "{ \"m\" : 1 ,\n \"n\"\t:\t[ ] }") == "[ ]")
        #expect(member("e", #"{"e":{}}"#) == "{}")
        #expect(member("t", #"{"t":true,"f":false,"z":null}"#) == "true")
        #expect(member("z", #"{"t":true,"f":false,"z":null}"#) == "null")
    }

    @Test("Nested keys are not top-level ones; a missing key, a non-object or a cut line give nil")
    func absent() {
        #expect(member("token", #"{"params":{"token":1}}"#) == nil)
        #expect(member("a", #"{"b":1}"#) == nil)
        #expect(member("a", "[1,2]") == nil)
        #expect(member("b", #"{"a":"unterminated"#) == nil)
        #expect(member("b", #"{"a":{"x":1"#) == nil)
        #expect(member("a", "") == nil)
    }
}

@Suite struct BridgeOptionsTests {
    @Test("Names are one subject token: letters, digits, - and _")
    func names() {
        #expect(BridgeOptions.isValidName("home-nas_2"))
        for bad in ["", "a.b", "a*", ">", "a b", String(repeating: "x", count: 65)] { #expect(!BridgeOptions.isValidName(bad)) }
        #expect(BridgeOptions.isValidName(BridgeOptions.hostName()))
    }

    @Test("The command line: defaults, the contract's options, usage errors")
    func parse() throws {
        let o = try BridgeOptions.parse(["--socket", "/run/p.sock", "--nats", "nats://a:4222,nats://b:4222", "--name", "box",
                                         "--stream", "S", "--creds", "/c", "--tls-ca", "/ca", "--replicas", "3"], environment: [:])
        #expect(o.sockets.map(\.string) == ["/run/p.sock"])
        #expect(o.servers == "nats://a:4222,nats://b:4222" && o.name == "box" && o.stream == "S" && o.replicas == 3)
        #expect(o.changesSubject == "photod.box.changes" && o.resyncSubject == "photod.box.resync")
        #expect(o.credentials == "/c" && o.caFile == "/ca")
        let d = try BridgeOptions.parse([], environment: [:])
        #expect(d.servers == "nats://127.0.0.1:4222" && d.stream == "PHOTOD" && !d.sockets.isEmpty)
        for bad in [["--name", "a.b"], ["--nats", "http://x"], ["--replicas", "9"], ["--what"], ["--name"]] {
            #expect(throws: BridgeOptions.ParseOutcome.self) { try BridgeOptions.parse(bad, environment: [:]) }
        }
    }
}
