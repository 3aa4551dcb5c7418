import PhotoWire
import Testing

/// The error code of an invalid outcome, and the id it answers.
private func failure(_ incoming: RPCIncoming) -> (id: RPCID?, code: Int)? {
    guard case .invalid(.failure(let id, let error)) = incoming else { return nil }
    return (id, error.code)
}

@Suite("JSON-RPC messages")
struct RPCMessageTests {
    static let validRequests: [(String, RPCRequest)] = [
        (#"{"jsonrpc":"2.0","id":1,"method":"library.status"}"#, RPCRequest(id: 1, method: "library.status")),
        (#"{"jsonrpc":"2.0","id":"a7","method":"m","params":{"limit":10}}"#,
         RPCRequest(id: "a7", method: "m", params: ["limit": 10])),
        (#"{"method":"m","params":[1,2],"id":-5,"jsonrpc":"2.0"}"#,
         RPCRequest(id: -5, method: "m", params: [1, 2])),
        (#"{"jsonrpc":"2.0","method":"notify"}"#, RPCRequest(id: nil, method: "notify")),
        (#"{"jsonrpc":"2.0","method":"m","params":{},"extra":true,"id":0}"#,
         RPCRequest(id: 0, method: "m", params: [:])),
        (#"{"jsonrpc":"2.0","method":"","id":""}"#, RPCRequest(id: "", method: "")),
        (#" {"jsonrpc":"2.0","method":"rpc.hello","id":9223372036854775807} "#,
         RPCRequest(id: .int(.max), method: "rpc.hello")),
    ]

    @Test("decodes valid requests", arguments: validRequests)
    func decodesValid(_ line: String, _ expected: RPCRequest) {
        #expect(RPCMessage.decode(bytes(line)) == .request(expected))
    }

    static let invalidRequests: [(String, RPCID?, Int)] = [
        // Not JSON: -32700, id null.
        (#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#, nil, -32700),
        (#"[{"jsonrpc":"2.0","method":"sum"},{"jsonrpc":"2.0","method"]"#, nil, -32700),
        ("", nil, -32700),
        ("{", nil, -32700),
        // Not a request object or batch.
        ("1", nil, -32600),
        (#""x""#, nil, -32600),
        ("null", nil, -32600),
        ("true", nil, -32600),
        ("[]", nil, -32600),
        // A bad request object: its id when the id is valid.
        (#"{"id":1,"method":"m"}"#, 1, -32600),
        (#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, 1, -32600),
        (#"{"jsonrpc":2.0,"id":"x","method":"m"}"#, "x", -32600),
        (#"{"jsonrpc":"2.0","id":1}"#, 1, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":5}"#, 1, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":null}"#, 1, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}"#, 1, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":"m","params":5}"#, 1, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#, 1, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":"m","params":true}"#, 1, -32600),
        // A bad id: id null.
        (#"{"jsonrpc":"2.0","id":null,"method":"m"}"#, nil, -32600),
        (#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#, nil, -32600),
        (#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#, nil, -32600),
        (#"{"jsonrpc":"2.0","id":true,"method":"m"}"#, nil, -32600),
        (#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#, nil, -32600),
        (#"{"jsonrpc":"2.0","id":{},"method":"m"}"#, nil, -32600),
        // An invalid would-be notification is still answered.
        (#"{"jsonrpc":"2.0","method":1}"#, nil, -32600),
        (#"{"foo":"boo"}"#, nil, -32600),
    ]

    @Test("answers invalid requests", arguments: invalidRequests)
    func answersInvalid(_ line: String, _ id: RPCID?, _ code: Int) throws {
        let outcome = try #require(failure(RPCMessage.decode(bytes(line))))
        #expect(outcome.id == id)
        #expect(outcome.code == code)
    }

    @Test func parseErrorCarriesTheOffset() throws {
        guard case .invalid(.failure(nil, let error)) = RPCMessage.decode(bytes(#"{"a":1,}"#)) else {
            Issue.record("not a parse error")
            return
        }
        #expect(error.code == -32700)
        #expect(error.message == "parse error: expected a string key at byte 7")
        #expect(error.data == ["name": "parseError", "detail": "expected a string key at byte 7", "offset": 7])
    }

    @Test func deepJSONIsAParseError() throws {
        let deep = String(repeating: "[", count: 100_000)
        let outcome = try #require(failure(RPCMessage.decode(bytes(deep))))
        #expect(outcome.code == -32700)
    }

    @Test func specificationBatchExample() {
        let line = #"""
        [{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},
         {"jsonrpc":"2.0","method":"notify_hello","params":[7]},
         {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"2"},
         {"foo":"boo"},
         {"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},
         {"jsonrpc":"2.0","method":"get_data","id":"9"}]
        """#
        guard case .batch(let members) = RPCMessage.decode(bytes(line)) else {
            Issue.record("not a batch")
            return
        }
        #expect(members.count == 6)
        #expect(members[0] == .request(RPCRequest(id: "1", method: "sum", params: [1, 2, 4])))
        #expect(members[1] == .request(RPCRequest(id: nil, method: "notify_hello", params: [7])))
        guard case .invalid(.failure(nil, let error)) = members[3] else {
            Issue.record("member 3 should be invalid")
            return
        }
        #expect(error.code == -32600)
        #expect(members[5] == .request(RPCRequest(id: "9", method: "get_data")))
    }

    @Test func batchOfNonObjectsGetsAnErrorEach() {
        guard case .batch(let members) = RPCMessage.decode(bytes("[1,2,3]")) else {
            Issue.record("not a batch")
            return
        }
        #expect(members.count == 3)
        for member in members {
            guard case .invalid(.failure(nil, let error)) = member else {
                Issue.record("member should be invalid")
                continue
            }
            #expect(error.code == -32600)
            #expect(error.detail == "a batch member must be a request object, not an integer")
        }
    }

    @Test func singleElementBatchIsABatch() {
        let line = #"[{"jsonrpc":"2.0","method":"m","id":1}]"#
        #expect(RPCMessage.decode(bytes(line)) == .batch([.request(RPCRequest(id: 1, method: "m"))]))
    }

    @Test func allNotificationBatchGetsNoResponse() {
        let line = #"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#
        guard case .batch(let members) = RPCMessage.decode(bytes(line)) else {
            Issue.record("not a batch")
            return
        }
        let responses: [RPCResponse] = members.compactMap { member in
            switch member {
            case .request(let request): request.id.map { .success(id: $0, result: nil) }
            case .invalid(let response): response
            }
        }
        #expect(responses.isEmpty)
        #expect(RPCResponse.batchLine(responses) == nil)
        #expect(RPCResponse.batchLine(joiningLines: []) == nil)
    }

    @Test func oversizedBatchIsRejectedAsAWhole() throws {
        let member = #"{"jsonrpc":"2.0","method":"m"}"#
        let line = "[" + Array(repeating: member, count: 101).joined(separator: ",") + "]"
        let outcome = try #require(failure(RPCMessage.decode(bytes(line))))
        #expect(outcome.code == -32600)
        let fits = "[" + Array(repeating: member, count: 100).joined(separator: ",") + "]"
        guard case .batch(let members) = RPCMessage.decode(bytes(fits)) else {
            Issue.record("not a batch")
            return
        }
        #expect(members.count == 100)
        #expect(failure(RPCMessage.decode(bytes(fits), maxBatchCount: 10))?.code == -32600)
    }

    @Test func duplicateMembersCountByTheLastOccurrence() {
        let line = #"{"jsonrpc":"2.0","method":"a","method":"b","id":1}"#
        #expect(RPCMessage.decode(bytes(line)) == .request(RPCRequest(id: 1, method: "b")))
    }

    // MARK: Encoding

    @Test func encodesResponsesExactly() {
        #expect(RPCResponse.success(id: 1, result: ["a": 1]).encodedLine().text
                == #"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"# + "\n")
        #expect(RPCResponse.success(id: "x\"y", result: nil).encodedLine().text
                == #"{"jsonrpc":"2.0","id":"x\"y","result":null}"# + "\n")
        #expect(RPCResponse.failure(id: "a", error: .methodNotFound("foo")).encodedLine().text
                == #"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"method not found: no method named 'foo'","data":{"name":"methodNotFound","detail":"no method named 'foo'","method":"foo"}}}"# + "\n")
        #expect(RPCResponse.failure(id: nil, error: .invalidRequest("an empty batch")).encodedLine().text
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: an empty batch","data":{"name":"invalidRequest","detail":"an empty batch"}}}"# + "\n")
        #expect(RPCResponse.failure(id: 3, error: .tokenExpired(currentToken: 4811, detail: "token 12 expired")).encodedLine().text
                == #"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"tokenExpired","data":{"name":"tokenExpired","detail":"token 12 expired","currentToken":4811}}}"# + "\n")
        #expect(RPCResponse.failure(id: 1, error: RPCError(code: 7, message: "m")).encodedLine().text
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":7,"message":"m"}}"# + "\n")
    }

    @Test func encodesNotificationsAndRequests() {
        #expect(RPCNotification(method: "changes", params: ["token": 5]).encodedLine().text
                == #"{"jsonrpc":"2.0","method":"changes","params":{"token":5}}"# + "\n")
        #expect(RPCNotification(method: "ping").encodedLine().text == #"{"jsonrpc":"2.0","method":"ping"}"# + "\n")
        #expect(RPCRequest(id: 2, method: "assets.fetch", params: ["limit": 1]).encodedLine().text
                == #"{"jsonrpc":"2.0","id":2,"method":"assets.fetch","params":{"limit":1}}"# + "\n")
        #expect(RPCRequest(id: nil, method: "n").encodedLine().text == #"{"jsonrpc":"2.0","method":"n"}"# + "\n")
    }

    @Test func encodedLinesHaveExactlyOneNewline() {
        var generator = RandomJSON(seed: 42)
        for index in 0..<200 {
            let value = generator.value()
            let lines = [
                RPCResponse.success(id: .int(Int64(index)), result: value).encodedLine(),
                RPCResponse.failure(id: "x", error: .invalidParams(value.jsonString)).encodedLine(),
                RPCNotification(method: "changes\n", params: [value]).encodedLine(),
                RPCRequest(id: "i\n", method: "m", params: [value]).encodedLine(),
            ]
            for line in lines {
                #expect(line.filter { $0 == 0x0A }.count == 1)
                #expect(line.last == 0x0A)
            }
        }
    }

    @Test func streamedSuccessLineMatchesTheTreeEncoding() {
        let records: [JSONValue] = [["id": "a_1", "w": 10], ["id": "a_2", "w": 20.5]]
        var buffer = bytes("earlier\n")
        RPCResponse.writeSuccessLine(id: 7, into: &buffer) { writer in
            writer.beginObject()
            writer.field("token", 12)
            writer.key("assets")
            writer.beginArray()
            for record in records { writer.value(record) }
            writer.endArray()
            writer.endObject()
        }
        let expected = RPCResponse.success(id: 7, result: ["token": 12, "assets": .array(records)]).encodedLine()
        #expect(buffer == bytes("earlier\n") + expected)
    }

    struct Stop: Error {}

    @Test func streamedSuccessLineRestoresTheBufferOnThrow() {
        var buffer = bytes("keep")
        #expect(throws: Stop.self) {
            try RPCResponse.writeSuccessLine(id: 1, into: &buffer) { writer throws(Stop) in
                writer.beginArray()
                writer.value(1)
                throw Stop()
            }
        }
        #expect(buffer == bytes("keep"))
        #expect(throws: Stop.self) {
            try RPCNotification.writeLine(method: "changes", into: &buffer) { _ throws(Stop) in throw Stop() }
        }
        #expect(buffer == bytes("keep"))
    }

    @Test func streamedNotificationLineMatchesTheTreeEncoding() {
        var buffer: [UInt8] = []
        RPCNotification.writeLine(method: "changes", into: &buffer) { writer in
            writer.beginObject()
            writer.field("token", 5)
            writer.endObject()
        }
        #expect(buffer == RPCNotification(method: "changes", params: ["token": 5]).encodedLine())
    }

    @Test func batchLines() {
        let responses: [RPCResponse] = [.success(id: 1, result: 2), .failure(id: nil, error: .invalidRequest("x"))]
        let line = RPCResponse.batchLine(responses)
        #expect(line?.text == "[" + responses.map { $0.encodedLine().dropLast().text }.joined(separator: ",") + "]\n")
        #expect(RPCResponse.batchLine(joiningLines: responses.map { $0.encodedLine() }) == line)
    }

    // MARK: Errors

    @Test(arguments: RPCErrorCode.all)
    func everyCodeHasANameAndFollowsTheShape(_ code: RPCErrorCode) throws {
        let name = try #require(code.name)
        let error = RPCError(code, detail: "d")
        #expect(error.code == code.rawValue)
        #expect(error.name == name)
        #expect(error.detail == "d")
        if code.isStandard {
            #expect(error.message.hasSuffix(": d"))
        } else {
            #expect(error.message == name)
        }
    }

    @Test func constructorsUseTheirCodes() {
        let errors: [(RPCError, Int, String)] = [
            (.parseError("x"), -32700, "parseError"),
            (.invalidRequest("x"), -32600, "invalidRequest"),
            (.methodNotFound("x"), -32601, "methodNotFound"),
            (.invalidParams("x"), -32602, "invalidParams"),
            (.internalError("x"), -32603, "internalError"),
            (.tokenExpired(currentToken: 1), -32001, "tokenExpired"),
            (.unavailable("x"), -32002, "unavailable"),
            (.permissionDenied("x"), -32003, "permissionDenied"),
            (.notFound("x", extra: ["ids": ["a_1"]]), -32004, "notFound"),
            (.overloaded("x"), -32005, "overloaded"),
            (.unsupported("x"), -32006, "unsupported"),
        ]
        for (error, code, name) in errors {
            #expect(error.code == code)
            #expect(error.name == name)
            #expect(error.detail != nil)
            #expect(RPCErrorCode(rawValue: code).name == name)
        }
        #expect(RPCError.lineTooLong(2_000_000).message
                == "invalid request: a request line of 2000000 bytes exceeds the limit of 1048576 bytes")
        #expect(RPCError.lineTooLong(20, limit: 10).data?["limit"] == 10)
        #expect(RPCError.tokenExpired(currentToken: 9).data?["currentToken"] == 9)
        #expect(RPCError.notFound("x", extra: ["ids": ["a_1"]]).data?["ids"] == ["a_1"])
        #expect(RPCError.invalidParams("x", param: "limit").data?["param"] == "limit")
        #expect(RPCErrorCode(rawValue: 12).name == nil)
        #expect(RPCError.overloaded("queue full").description == "-32005 overloaded")
    }

    // MARK: Client side

    @Test func clientDecodesWhatTheServerEncodes() throws {
        let responses: [RPCResponse] = [
            .success(id: 1, result: ["a": [1, 2]]),
            .success(id: "s", result: nil),
            .failure(id: nil, error: .parseError("bad", offset: 3)),
            .failure(id: 4, error: .tokenExpired(currentToken: 99)),
        ]
        for response in responses {
            #expect(try RPCMessage.decodeServerMessage(response.encodedLine()) == .response(response))
        }
        let batch = try #require(RPCResponse.batchLine(responses))
        #expect(try RPCMessage.decodeServerMessage(batch) == .batch(responses))
        let notification = RPCNotification(method: "changes", params: ["token": 3])
        #expect(try RPCMessage.decodeServerMessage(notification.encodedLine()) == .notification(notification))
    }

    static let badServerLines: [(String, Int)] = [
        ("nope", -32700),
        ("[]", -32600),
        ("5", -32600),
        (#"{"id":1,"result":1}"#, -32600),
        (#"{"jsonrpc":"2.0","id":1}"#, -32600),
        (#"{"jsonrpc":"2.0","id":null,"result":1}"#, -32600),
        (#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#, -32600),
        (#"{"jsonrpc":"2.0","id":[],"result":1}"#, -32600),
        (#"{"jsonrpc":"2.0","method":5}"#, -32600),
        (#"[{"jsonrpc":"2.0","method":"changes"}]"#, -32600),
    ]

    @Test("client rejects malformed server lines", arguments: badServerLines)
    func clientRejects(_ line: String, _ code: Int) {
        do {
            _ = try RPCMessage.decodeServerMessage(bytes(line))
            Issue.record("accepted \(line)")
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }

    @Test func requestsRoundTripThroughTheServerDecoder() {
        var generator = RandomJSON(seed: 9)
        for index in 0..<200 {
            let params: JSONValue = index % 2 == 0 ? ["v": generator.value()] : [generator.value()]
            let id: RPCID? = index % 3 == 0 ? nil : (index % 3 == 1 ? .int(Int64(index)) : .string(generator.string()))
            let request = RPCRequest(id: id, method: generator.string(), params: params)
            #expect(RPCMessage.decode(request.encodedLine().dropLast()) == .request(request))
        }
    }
}
