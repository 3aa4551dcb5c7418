import PhotoSystem
import PhotoWire

/// A method's implementation: params in, result out, or an `RPCError`.
typealias MethodHandler = @Sendable (RPCParams, ClientContext) throws(RPCError) -> JSONValue

/// A method that answers later (an image render): it gets the request's id and sees to it that
/// exactly one response with that id goes out on the client's connection — unless it throws,
/// and the dispatcher answers with the error at once.
typealias DeferredHandler = @Sendable (RPCParams, ClientContext, RPCID) throws(RPCError) -> Void

/// Decodes request lines, dispatches them to the method table, and encodes the responses
/// (batches included). Every failure is a JSON-RPC error for that request; the connection
/// stays usable.
struct RPCDispatcher: LineHandler {
    let methods: [String: MethodHandler]
    /// Checks of the caller that run before a method's parameters are decoded (the write
    /// methods' access check): a caller who may not write learns nothing about its parameters.
    var admission: [String: @Sendable (ClientContext) throws(RPCError) -> Void] = [:]
    /// Methods answered later. Not allowed in a batch (whose answers go out together) nor as
    /// a notification (which could never get its answer).
    var deferred: [String: DeferredHandler] = [:]
    /// Counts the lines answered (the daemon rests when it stops growing).
    var requests: RequestCounter?
    let logger: Logger

    func handle(line: [UInt8], client: ClientContext) -> [UInt8] {
        requests?.add()
        switch RPCMessage.decode(line) {
        case .request(let request):
            if let handler = deferred[request.method] {
                guard let id = request.id else { return [] }
                do {
                    try handler(try RPCParams(request.params), client, id)
                    return []
                } catch {
                    return RPCResponse.failure(id: id, error: error).encodedLine()
                }
            }
            return answer(request, client: client).map { $0.encodedLine() } ?? []
        case .batch(let members):
            // Members are answered one at a time within a byte budget: a small batch of large
            // fetches must not make the daemon build hundreds of megabytes at once.
            var lines: [[UInt8]] = []
            var bytes = 0
            for member in members {
                let response: RPCResponse?
                switch member {
                case .request(let request) where deferred[request.method] != nil:
                    response = request.id.map {
                        .failure(id: $0, error: .invalidRequest("\(request.method) is answered when its work is done: "
                                                                + "send it alone, not in a batch"))
                    }
                case .request(let request):
                    if bytes > ServerLimits.maxBatchResponseBytes {
                        response = request.id.map {
                            .failure(id: $0, error: .overloaded("the batch's responses exceed \(ServerLimits.maxBatchResponseBytes) bytes; "
                                                                + "send this request again, alone or in a smaller batch"))
                        }
                    } else {
                        response = answer(request, client: client)
                    }
                case .invalid(let invalid):
                    response = invalid
                }
                if let response {
                    let line = response.encodedLine()
                    bytes += line.count
                    lines.append(line)
                }
            }
            return RPCResponse.batchLine(joiningLines: lines) ?? []
        case .invalid(let response):
            return response.encodedLine()
        }
    }

    func lineTooLong(droppedBytes: Int, client: ClientContext) -> [UInt8] {
        RPCResponse.failure(id: nil, error: .lineTooLong(droppedBytes)).encodedLine()
    }

    func tooManyClients() -> [UInt8] {
        RPCResponse.failure(id: nil, error: RPCError(.overloaded, detail: "too many clients are connected; try again later"))
            .encodedLine()
    }

    /// Runs one request; `nil` for a notification (which gets no response, even on error).
    private func answer(_ request: RPCRequest, client: ClientContext) -> RPCResponse? {
        let outcome: Result<JSONValue, RPCError>
        if let method = methods[request.method] {
            do {
                try admission[request.method]?(client)
                let params = try RPCParams(request.params)
                outcome = .success(try method(params, client))
            } catch {
                outcome = .failure(error)
            }
        } else {
            outcome = .failure(.methodNotFound(request.method))
        }
        if case .failure(let error) = outcome, error.code == RPCErrorCode.internalError.rawValue {
            logger.error("request '\(request.method)' failed: \(error.detail ?? error.message)",
                         [("client.pid", String(client.pid))])
        }
        guard let id = request.id else { return nil }
        switch outcome {
        case .success(let result): return .success(id: id, result: result)
        case .failure(let error): return .failure(id: id, error: error)
        }
    }
}
