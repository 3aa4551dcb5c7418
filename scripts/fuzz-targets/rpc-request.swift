// Fuzz target: one request line as the daemon decodes it (JSON-RPC 2.0 requests, batches,
// invalid ones), the typed parameter accessors its methods use, the response line it would
// write back, and the client's decoding of a server line.
import PhotoWire

func useParams(of request: RPCRequest) {
    guard let params = try? RPCParams(request.params) else { return }
    for key in ["limit", "offset", "token", "id", "predicate", "sort", "ids", "value", "after"] {
        _ = try? params.int(key, default: 0, in: 0...WireLimits.maxPageSize)
        _ = try? params.optionalInt(key)
        _ = try? params.double(key, default: 0, in: -90...90)
        _ = try? params.string(key, oneOf: ["a", "b"], default: "a")
        _ = try? params.optionalString(key)
        _ = try? params.bool(key, default: false)
        _ = try? params.stringArray(key, default: [], maxCount: 10)
        _ = try? params.optionalArray(key)
        _ = try? params.optionalObject(key)
    }
    _ = try? params.rejectUnknownKeys(allowed: ["limit", "sort"])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = Array(UnsafeBufferPointer(start: data, count: size))
    switch RPCMessage.decode(line) {
    case .request(let request):
        useParams(of: request)
        _ = request.encodedLine()
    case .invalid(let response): _ = response.encodedLine()
    case .batch(let members):
        var responses: [RPCResponse] = []
        for member in members {
            switch member {
            case .request(let request): useParams(of: request)
            case .invalid(let response): responses.append(response)
            }
        }
        _ = RPCResponse.batchLine(responses)
    }
    _ = try? RPCMessage.decodeServerMessage(line)
    return 0
}
