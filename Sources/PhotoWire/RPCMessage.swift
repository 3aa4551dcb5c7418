// JSON-RPC 2.0 (https://www.jsonrpc.org/specification) messages and their one-line
// encodings. The server side decodes requests and encodes responses and notifications; the
// client side (PhotoClient, photoctl) does the reverse with the same types.

/// A request id: a string or an integer. (JSON-RPC also allows fractional numbers, which it
/// discourages, and `null`, which it reserves in practice for error responses; photod
/// rejects both in requests — see `RPCMessage.decode`.)
public enum RPCID: Sendable, Hashable, CustomStringConvertible {
    /// An integer id (`"id": 7`).
    case int(Int64)
    /// A string id (`"id": "a7"`).
    case string(String)

    /// The id as it appears on the wire.
    public var json: JSONValue {
        switch self {
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        }
    }

    /// The id for a JSON value, or nil when the value cannot be an id (only strings and
    /// integers can; `1.0` cannot, because echoing it back as `1` would not match).
    public init?(json: JSONValue) {
        switch json {
        case .int(let i): self = .int(i)
        case .string(let s): self = .string(s)
        default: return nil
        }
    }

    /// `7` or `"a7"`, as on the wire.
    public var description: String { json.jsonString }

    func write(into buffer: inout [UInt8]) {
        switch self {
        case .int(let i): JSONEncoding.appendInt(i, to: &buffer)
        case .string(let s): JSONEncoding.appendString(s, to: &buffer)
        }
    }
}

extension RPCID: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    /// An integer literal is an integer id.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A string literal is a string id.
    public init(stringLiteral value: String) { self = .string(value) }
}

/// A request (or, without an id, a notification) from a client.
public struct RPCRequest: Sendable, Hashable {
    /// The id to answer with; nil for a notification, which gets no response.
    public var id: RPCID?
    /// The method name (`"assets.fetch"`).
    public var method: String
    /// The parameters: an object or an array, or nil when absent.
    public var params: JSONValue?

    /// A request with these parts.
    public init(id: RPCID?, method: String, params: JSONValue? = nil) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// Whether this is a notification (no id, so no response, not even an error).
    public var isNotification: Bool { id == nil }

    /// Appends the request's JSON object (no newline):
    /// `{"jsonrpc":"2.0","id":1,"method":"m","params":{…}}`, without `id` for a notification
    /// and without `params` when nil.
    public func write(into buffer: inout [UInt8]) {
        JSONEncoding.appendASCII(#"{"jsonrpc":"2.0","#, to: &buffer)
        if let id {
            JSONEncoding.appendASCII(#""id":"#, to: &buffer)
            id.write(into: &buffer)
            buffer.append(UInt8(ascii: ","))
        }
        JSONEncoding.appendASCII(#""method":"#, to: &buffer)
        JSONEncoding.appendString(method, to: &buffer)
        if let params {
            JSONEncoding.appendASCII(#","params":"#, to: &buffer)
            params.write(into: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }

    /// The request as one line, terminated by `\n`.
    public func encodedLine() -> [UInt8] {
        var buffer: [UInt8] = []
        write(into: &buffer)
        buffer.append(0x0A)
        return buffer
    }
}

/// A response to one request: its result, or an error.
public enum RPCResponse: Sendable, Hashable {
    /// The request succeeded with `result`.
    case success(id: RPCID, result: JSONValue)
    /// The request failed. `id` is nil (`null` on the wire) when the request's id could not
    /// be determined (a parse error, an invalid request without a valid id).
    case failure(id: RPCID?, error: RPCError)

    /// The id of the request this answers.
    public var id: RPCID? {
        switch self {
        case .success(let id, _): id
        case .failure(let id, _): id
        }
    }

    /// Appends the response's JSON object (no newline):
    /// `{"jsonrpc":"2.0","id":1,"result":…}` or
    /// `{"jsonrpc":"2.0","id":null,"error":{"code":…,"message":…,"data":…}}`.
    public func write(into buffer: inout [UInt8]) {
        JSONEncoding.appendASCII(#"{"jsonrpc":"2.0","id":"#, to: &buffer)
        switch self {
        case .success(let id, let result):
            id.write(into: &buffer)
            JSONEncoding.appendASCII(#","result":"#, to: &buffer)
            result.write(into: &buffer)
        case .failure(let id, let error):
            if let id { id.write(into: &buffer) } else { JSONEncoding.appendASCII("null", to: &buffer) }
            JSONEncoding.appendASCII(#","error":"#, to: &buffer)
            error.json.write(into: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }

    /// The response as one line, terminated by `\n`.
    public func encodedLine() -> [UInt8] {
        var buffer: [UInt8] = []
        write(into: &buffer)
        buffer.append(0x0A)
        return buffer
    }

    /// Appends a success response line (terminated by `\n`) whose result `body` writes
    /// straight into `buffer` with a ``JSONWriter`` — no ``JSONValue`` tree for a page of a
    /// thousand records. `body` must write exactly one value. If `body` throws, `buffer` is
    /// restored to its previous contents and the error is rethrown.
    public static func writeSuccessLine<E: Error>(id: RPCID, into buffer: inout [UInt8],
                                                  result body: (inout JSONWriter) throws(E) -> Void) throws(E) {
        let start = buffer.count
        var writer = JSONWriter()
        // Move the caller's buffer into the writer and back, so it is never copied.
        swap(&writer.bytes, &buffer)
        defer { swap(&writer.bytes, &buffer) }
        JSONEncoding.appendASCII(#"{"jsonrpc":"2.0","id":"#, to: &writer.bytes)
        id.write(into: &writer.bytes)
        JSONEncoding.appendASCII(#","result":"#, to: &writer.bytes)
        do {
            try body(&writer)
        } catch {
            writer.bytes.removeSubrange(start...)
            throw error
        }
        JSONEncoding.appendASCII("}\n", to: &writer.bytes)
    }

    /// The responses to a batch as one line (`[{…},{…}]\n`), or nil when there are none —
    /// a batch of notifications gets no response at all, not an empty array.
    public static func batchLine(_ responses: [RPCResponse]) -> [UInt8]? {
        guard !responses.isEmpty else { return nil }
        var buffer: [UInt8] = [UInt8(ascii: "[")]
        for (index, response) in responses.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            response.write(into: &buffer)
        }
        JSONEncoding.appendASCII("]\n", to: &buffer)
        return buffer
    }

    /// Joins single-response lines (as made by ``encodedLine()`` or
    /// ``writeSuccessLine(id:into:result:)``, each ending in `\n`) into one batch line, or
    /// nil when there are none: the daemon can answer each member of a batch on its usual
    /// path and join the answers at the end.
    public static func batchLine(joiningLines lines: [[UInt8]]) -> [UInt8]? {
        guard !lines.isEmpty else { return nil }
        var buffer: [UInt8] = [UInt8(ascii: "[")]
        buffer.reserveCapacity(lines.reduce(2) { $0 + $1.count })
        for (index, line) in lines.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            let end = line.last == 0x0A ? line.count - 1 : line.count
            buffer.append(contentsOf: line[..<end])
        }
        JSONEncoding.appendASCII("]\n", to: &buffer)
        return buffer
    }
}

/// A notification from the daemon to a client (for example `changes`, whose params are one
/// change set). It has no id and gets no response.
public struct RPCNotification: Sendable, Hashable {
    /// The notification's name (`"changes"`).
    public var method: String
    /// Its parameters: an object or an array, or nil.
    public var params: JSONValue?

    /// A notification with these parts.
    public init(method: String, params: JSONValue? = nil) {
        self.method = method
        self.params = params
    }

    /// Appends `{"jsonrpc":"2.0","method":"changes","params":{…}}` (no newline).
    public func write(into buffer: inout [UInt8]) {
        RPCRequest(id: nil, method: method, params: params).write(into: &buffer)
    }

    /// The notification as one line, terminated by `\n`.
    public func encodedLine() -> [UInt8] {
        var buffer: [UInt8] = []
        write(into: &buffer)
        buffer.append(0x0A)
        return buffer
    }

    /// Appends a notification line (terminated by `\n`) whose params `body` writes straight
    /// into `buffer`; `body` must write exactly one object or array. If `body` throws,
    /// `buffer` is restored and the error rethrown.
    public static func writeLine<E: Error>(method: String, into buffer: inout [UInt8],
                                           params body: (inout JSONWriter) throws(E) -> Void) throws(E) {
        let start = buffer.count
        var writer = JSONWriter()
        swap(&writer.bytes, &buffer)
        defer { swap(&writer.bytes, &buffer) }
        JSONEncoding.appendASCII(#"{"jsonrpc":"2.0","method":"#, to: &writer.bytes)
        JSONEncoding.appendString(method, to: &writer.bytes)
        JSONEncoding.appendASCII(#","params":"#, to: &writer.bytes)
        do {
            try body(&writer)
        } catch {
            writer.bytes.removeSubrange(start...)
            throw error
        }
        JSONEncoding.appendASCII("}\n", to: &writer.bytes)
    }
}

// MARK: - Decoding

/// What one request line from a client amounts to.
public enum RPCIncoming: Sendable, Hashable {
    /// A valid request or notification: dispatch it (and answer unless it is a notification).
    case request(RPCRequest)
    /// A batch (a non-empty array): handle the members in order, collect the responses of
    /// the non-notifications (invalid members already carry theirs), and send them as one
    /// array line with ``RPCResponse/batchLine(_:)``; send nothing if there are none.
    case batch([RPCBatchMember])
    /// Not a valid request at all (not JSON, not an object or array, an empty or oversized
    /// batch, an invalid single request): send this response back and keep the connection.
    case invalid(RPCResponse)
}

/// One member of a batch.
public enum RPCBatchMember: Sendable, Hashable {
    /// A valid request or notification.
    case request(RPCRequest)
    /// An invalid member, with the error response to include in the batch's answer.
    case invalid(RPCResponse)
}

/// What one line from the daemon amounts to, for clients.
public enum RPCServerMessage: Sendable, Hashable {
    /// The response to one request.
    case response(RPCResponse)
    /// The responses to a batch.
    case batch([RPCResponse])
    /// A notification (`changes`).
    case notification(RPCNotification)
}

/// Decoding of JSON-RPC lines, for the daemon (requests) and for clients (responses and
/// notifications).
public enum RPCMessage {
    /// Decodes one request line from a client. Never throws: anything wrong becomes the
    /// error response JSON-RPC prescribes.
    ///
    /// - Not JSON → -32700 with id `null` (`data.offset` is the byte offset).
    /// - Not an object or array, or an empty array → -32600 with id `null`.
    /// - A batch of more than `maxBatchCount` members → one -32600 with id `null`.
    /// - A request object is invalid when `jsonrpc` is not exactly `"2.0"`, `method` is not
    ///   a string, `params` is present but not an object or array (`null` included), or `id`
    ///   is present but not a string or an integer (`null` and fractional numbers are
    ///   refused, which JSON-RPC discourages anyway). The error response carries the
    ///   request's id when that id is valid, else `null` — also for an invalid request
    ///   without an id: it is not a notification, so it is answered.
    /// - Members other than these four are ignored; a duplicated member counts by its last
    ///   occurrence.
    /// - In a batch each member is judged alone; invalid ones get their own error responses.
    public static func decode(_ line: UnsafeRawBufferPointer,
                              limits: JSONLimits = JSONLimits(maxDepth: WireLimits.maxJSONDepth),
                              maxBatchCount: Int = WireLimits.maxBatchCount) -> RPCIncoming {
        let json: JSONValue
        do {
            json = try JSONValue.parse(line, limits: limits)
        } catch {
            return .invalid(.failure(id: nil, error: .parseError(error)))
        }
        return decode(json, maxBatchCount: maxBatchCount)
    }

    /// Decodes one request line from a client; see
    /// the raw-buffer overload.
    public static func decode(_ line: [UInt8],
                              limits: JSONLimits = JSONLimits(maxDepth: WireLimits.maxJSONDepth),
                              maxBatchCount: Int = WireLimits.maxBatchCount) -> RPCIncoming {
        line.withUnsafeBytes { decode($0, limits: limits, maxBatchCount: maxBatchCount) }
    }

    /// Decodes one already-parsed request document; see
    /// the raw-buffer overload.
    public static func decode(_ json: JSONValue, maxBatchCount: Int = WireLimits.maxBatchCount) -> RPCIncoming {
        switch json {
        case .object(let object):
            switch request(from: object) {
            case .request(let request): return .request(request)
            case .invalid(let response): return .invalid(response)
            }
        case .array(let members):
            if members.isEmpty {
                return .invalid(.failure(id: nil, error: .invalidRequest("an empty batch")))
            }
            if members.count > maxBatchCount {
                return .invalid(.failure(id: nil, error: .invalidRequest(
                    "a batch of \(members.count) requests; the limit is \(maxBatchCount)")))
            }
            return .batch(members.map { member in
                guard case .object(let object) = member else {
                    return .invalid(.failure(id: nil, error: .invalidRequest(
                        "a batch member must be a request object, not \(article(member.typeName))")))
                }
                return request(from: object)
            })
        default:
            return .invalid(.failure(id: nil, error: .invalidRequest(
                "a request must be an object or a batch array, not \(article(json.typeName))")))
        }
    }

    private static func article(_ typeName: String) -> String {
        typeName.first.map { "aeiou".contains($0) } == true ? "an \(typeName)" : "a \(typeName)"
    }

    /// A request from its object, or the error response for it.
    private static func request(from object: JSONObject) -> RPCBatchMember {
        var id: RPCID?
        if let idValue = object["id"] {
            guard let valid = RPCID(json: idValue) else {
                return .invalid(.failure(id: nil, error: .invalidRequest(
                    "'id' must be a string or an integer, not \(article(idValue.typeName))")))
            }
            id = valid
        }
        func invalid(_ detail: String) -> RPCBatchMember {
            .invalid(.failure(id: id, error: .invalidRequest(detail)))
        }
        guard let version = object["jsonrpc"] else { return invalid("missing \"jsonrpc\": \"2.0\"") }
        guard version == "2.0" else { return invalid("'jsonrpc' must be \"2.0\"") }
        guard let methodValue = object["method"] else { return invalid("missing 'method'") }
        guard case .string(let method) = methodValue else {
            return invalid("'method' must be a string, not \(article(methodValue.typeName))")
        }
        let params = object["params"]
        if let params {
            switch params {
            case .object, .array: break
            default: return invalid("'params' must be an object or an array, not \(article(params.typeName))")
            }
        }
        return .request(RPCRequest(id: id, method: method, params: params))
    }

    /// Decodes one line from the daemon: a response, a batch of responses, or a
    /// notification. Throws a -32700 ``RPCError`` when the line is not JSON and a -32600
    /// one when it is not a JSON-RPC 2.0 response or notification (`data.detail` says why).
    public static func decodeServerMessage(_ line: [UInt8],
                                           limits: JSONLimits = JSONLimits(maxDepth: 512, maxStringBytes: 1 << 28,
                                                                           maxValues: 1 << 26))
        throws(RPCError) -> RPCServerMessage {
        let json: JSONValue
        do {
            json = try JSONValue.parse(line, limits: limits)
        } catch {
            throw .parseError(error)
        }
        if case .array(let members) = json {
            guard !members.isEmpty else { throw .invalidRequest("an empty batch response") }
            var responses: [RPCResponse] = []
            responses.reserveCapacity(members.count)
            for member in members {
                guard case .response(let response) = try serverMessage(member) else {
                    throw .invalidRequest("a notification inside a batch response")
                }
                responses.append(response)
            }
            return .batch(responses)
        }
        return try serverMessage(json)
    }

    private static func serverMessage(_ json: JSONValue) throws(RPCError) -> RPCServerMessage {
        guard case .object(let object) = json else {
            throw .invalidRequest("a message must be an object, not \(article(json.typeName))")
        }
        guard object["jsonrpc"] == "2.0" else { throw .invalidRequest("missing \"jsonrpc\": \"2.0\"") }
        if let method = object["method"] {
            guard case .string(let name) = method else { throw .invalidRequest("'method' must be a string") }
            return .notification(RPCNotification(method: name, params: object["params"]))
        }
        let idValue = object["id"] ?? .null
        let id = RPCID(json: idValue)
        guard id != nil || idValue.isNull else { throw .invalidRequest("'id' must be a string, an integer or null") }
        if let result = object["result"] {
            guard let id else { throw .invalidRequest("a result with a null id") }
            return .response(.success(id: id, result: result))
        }
        if let errorValue = object["error"] {
            guard let error = RPCError(json: errorValue) else {
                throw .invalidRequest("'error' must be an object with an integer 'code' and a string 'message'")
            }
            return .response(.failure(id: id, error: error))
        }
        throw .invalidRequest("a response needs 'result' or 'error'")
    }
}
