/// A JSON-RPC 2.0 error code, with the symbolic name photod gives it.
///
/// | code   | name               | meaning |
/// |--------|--------------------|---------|
/// | -32700 | `parseError`       | the line is not JSON |
/// | -32600 | `invalidRequest`   | JSON, but not a valid request (or an empty or oversized batch, or a line over the length limit) |
/// | -32601 | `methodNotFound`   | no such method (`data.method` names it) |
/// | -32602 | `invalidParams`    | wrong, missing or unknown parameters (`data.param` names the parameter when there is one) |
/// | -32603 | `internalError`    | a bug or an unexpected failure in the daemon |
/// | -32001 | `tokenExpired`     | the change token is older than the journal keeps; refetch (`data.currentToken`) |
/// | -32002 | `unavailable`      | cannot be served right now: a write met a full disk or a busy database |
/// | -32003 | `permissionDenied` | the caller may not write (checked by peer credentials) |
/// | -32004 | `notFound`         | an asset, album or other object named in the request does not exist |
/// | -32005 | `overloaded`       | too many clients, or a batch whose responses exceed the budget |
/// | -32006 | `unsupported`      | reserved: a valid request this daemon does not support |
/// | -32007 | `cancelled`        | the request was cancelled before it was answered |
/// | -32008 | `imageFailed`      | the asset's file could not be made into an image |
/// | -32010 | `conflict`         | the file on disk is not the one photod indexed or trashed: the trash leaves it |
public struct RPCErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The numeric code on the wire.
    public let rawValue: Int
    /// A code with this number (known or not).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// -32700: the line is not JSON.
    public static let parseError = RPCErrorCode(rawValue: -32700)
    /// -32600: JSON, but not a valid request.
    public static let invalidRequest = RPCErrorCode(rawValue: -32600)
    /// -32601: no such method.
    public static let methodNotFound = RPCErrorCode(rawValue: -32601)
    /// -32602: wrong, missing or unknown parameters.
    public static let invalidParams = RPCErrorCode(rawValue: -32602)
    /// -32603: a bug or an unexpected failure in the daemon.
    public static let internalError = RPCErrorCode(rawValue: -32603)
    /// -32001: the change token is older than the journal keeps; `data.currentToken` says
    /// where to resume after a refetch.
    public static let tokenExpired = RPCErrorCode(rawValue: -32001)
    /// -32002: cannot be served right now (a write met a full disk or a busy database).
    public static let unavailable = RPCErrorCode(rawValue: -32002)
    /// -32003: the caller may not do this (writes need a writer's credentials).
    public static let permissionDenied = RPCErrorCode(rawValue: -32003)
    /// -32004: an object named in the request does not exist.
    public static let notFound = RPCErrorCode(rawValue: -32004)
    /// -32005: too many clients, or a batch whose responses exceed the budget.
    public static let overloaded = RPCErrorCode(rawValue: -32005)
    /// -32006: a valid request the daemon does not support (an image of a video).
    public static let unsupported = RPCErrorCode(rawValue: -32006)
    /// -32007: the request was cancelled (`images.cancel`) before it was answered.
    public static let cancelled = RPCErrorCode(rawValue: -32007)
    /// -32008: the asset's file could not be made into an image: damaged, unreadable, or over
    /// the pixel limit (`data.reason`: `corrupt`, `unreadable`, `tooLarge`).
    public static let imageFailed = RPCErrorCode(rawValue: -32008)
    /// -32010: the file on disk is not the one photod indexed or trashed (changed, replaced,
    /// gone): the trash will not touch it (`data.refused` says which and why).
    public static let conflict = RPCErrorCode(rawValue: -32010)

    /// Every code photod sends, in the order of the table above.
    public static let all: [RPCErrorCode] = [
        .parseError, .invalidRequest, .methodNotFound, .invalidParams, .internalError,
        .tokenExpired, .unavailable, .permissionDenied, .notFound, .overloaded, .unsupported, .cancelled, .imageFailed,
        .conflict,
    ]

    /// The symbolic name (`"tokenExpired"`), or nil for a code photod does not define.
    public var name: String? {
        switch rawValue {
        case -32700: "parseError"
        case -32600: "invalidRequest"
        case -32601: "methodNotFound"
        case -32602: "invalidParams"
        case -32603: "internalError"
        case -32001: "tokenExpired"
        case -32002: "unavailable"
        case -32003: "permissionDenied"
        case -32004: "notFound"
        case -32005: "overloaded"
        case -32006: "unsupported"
        case -32007: "cancelled"
        case -32008: "imageFailed"
        case -32010: "conflict"
        default: nil
        }
    }

    /// Whether this is one of JSON-RPC's own codes (-32768 … -32000 minus the range the
    /// specification leaves to servers), whose `message` is a human phrase rather than the
    /// symbolic name.
    public var isStandard: Bool { rawValue <= -32600 && rawValue >= -32768 }

    /// The human phrase that starts a standard code's message (`"invalid params"`).
    var phrase: String {
        switch rawValue {
        case -32700: "parse error"
        case -32600: "invalid request"
        case -32601: "method not found"
        case -32602: "invalid params"
        case -32603: "internal error"
        default: name ?? "error \(rawValue)"
        }
    }

    /// The name, or the number for an unknown code.
    public var description: String { name ?? String(rawValue) }
}

/// A JSON-RPC 2.0 error object: what a failed request answers, and what request handlers
/// throw.
///
/// **Shape.** Every error photod sends has `data.name` (the symbolic name from
/// ``RPCErrorCode``) and `data.detail` (the specific problem, for humans), plus members
/// particular to the code (`currentToken`, `method`, `param`, `offset`).
/// - JSON-RPC's standard codes carry a human message, `"<phrase>: <detail>"`:
///   `{"code":-32602,"message":"invalid params: 'limit' must be an integer between 1 and
///   1000 (got \"ten\")","data":{"name":"invalidParams","detail":"'limit' must be …","param":"limit"}}`.
/// - photod's own codes carry exactly the symbolic name as the message, so scripts can
///   match on it: `{"code":-32001,"message":"tokenExpired","data":{"name":"tokenExpired",
///   "detail":"…","currentToken":4811}}`.
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The numeric code.
    public var code: Int
    /// A short description: a human phrase for standard codes, the symbolic name for
    /// photod's own.
    public var message: String
    /// Structured details (an object with `name` and `detail` for every error photod makes).
    public var data: JSONValue?

    /// An error exactly as given — for errors read off the wire.
    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// An error of a known code in photod's shape: the message and `data` (with `name`,
    /// `detail` and then `extra`'s members) follow the rules in the type's documentation.
    public init(_ code: RPCErrorCode, detail: String, extra: JSONObject = [:]) {
        let name = code.name ?? String(code.rawValue)
        var data = JSONObject(minimumCapacity: 2 + extra.count)
        data.append("name", .string(name))
        data.append("detail", .string(detail))
        for (key, value) in extra { data[key] = value }
        self.init(code: code.rawValue,
                  message: code.isStandard ? "\(code.phrase): \(detail)" : name,
                  data: .object(data))
    }

    /// The code as an ``RPCErrorCode``.
    public var errorCode: RPCErrorCode { RPCErrorCode(rawValue: code) }
    /// `data.name`, when present.
    public var name: String? { data?["name"]?.stringValue }
    /// `data.detail`, when present.
    public var detail: String? { data?["detail"]?.stringValue }

    /// `-32602 invalid params: …`, for logs.
    public var description: String { "\(code) \(message)" }

    // MARK: JSON-RPC's codes

    /// -32700: the line is not JSON; `detail` says where (`data.offset` holds the byte
    /// offset when known).
    public static func parseError(_ detail: String, offset: Int? = nil) -> RPCError {
        RPCError(.parseError, detail: detail, extra: offset.map { ["offset": .int(Int64($0))] } ?? [:])
    }

    /// -32700 for a ``JSONParseError``, with its offset in `data.offset`.
    public static func parseError(_ error: JSONParseError) -> RPCError {
        parseError(error.description, offset: error.offset)
    }

    /// -32600: JSON, but not a valid request.
    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(.invalidRequest, detail: detail)
    }

    /// -32600 for a request line longer than the limit (the framer's
    /// ``FramerEvent/tooLong(droppedBytes:)``), answered with id `null` since the request
    /// was never read; `data.limit` holds the limit.
    public static func lineTooLong(_ length: Int, limit: Int = WireLimits.maxLineBytes) -> RPCError {
        RPCError(.invalidRequest, detail: "a request line of \(length) bytes exceeds the limit of \(limit) bytes",
                 extra: ["limit": .int(Int64(limit))])
    }

    /// -32601: no method named `method` (`data.method`).
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(.methodNotFound, detail: "no method named '\(method)'", extra: ["method": .string(method)])
    }

    /// -32602: the parameters are wrong; `param` (in `data.param`) names the one at fault.
    public static func invalidParams(_ detail: String, param: String? = nil) -> RPCError {
        RPCError(.invalidParams, detail: detail, extra: param.map { ["param": .string($0)] } ?? [:])
    }

    /// -32603: a bug or an unexpected failure in the daemon.
    public static func internalError(_ detail: String) -> RPCError {
        RPCError(.internalError, detail: detail)
    }

    // MARK: photod's codes

    /// -32001: `since` is older than the journal keeps; refetch, then resume from
    /// `currentToken` (in `data.currentToken`).
    public static func tokenExpired(currentToken: Int64,
                                    detail: String = "the token is older than the change journal keeps; refetch and resume from currentToken")
        -> RPCError {
        RPCError(.tokenExpired, detail: detail, extra: ["currentToken": .int(currentToken)])
    }

    /// -32002: cannot be served right now (a write met a full disk or a busy database).
    public static func unavailable(_ detail: String) -> RPCError {
        RPCError(.unavailable, detail: detail)
    }

    /// -32003: the caller may not do this.
    public static func permissionDenied(_ detail: String) -> RPCError {
        RPCError(.permissionDenied, detail: detail)
    }

    /// -32004: an object named in the request does not exist; `extra` can name it (for
    /// example `["ids": [...]]`).
    public static func notFound(_ detail: String, extra: JSONObject = [:]) -> RPCError {
        RPCError(.notFound, detail: detail, extra: extra)
    }

    /// -32005: too many clients, or a batch whose responses exceed the budget.
    public static func overloaded(_ detail: String) -> RPCError {
        RPCError(.overloaded, detail: detail)
    }

    /// -32006: a valid request the daemon does not support.
    public static func unsupported(_ detail: String) -> RPCError {
        RPCError(.unsupported, detail: detail)
    }

    /// -32007: cancelled before it was answered.
    public static func cancelled(_ detail: String) -> RPCError {
        RPCError(.cancelled, detail: detail)
    }

    /// -32008: the image could not be made; `reason` is `corrupt`, `unreadable` or `tooLarge`.
    public static func imageFailed(_ detail: String, reason: String) -> RPCError {
        RPCError(.imageFailed, detail: detail, extra: ["reason": .string(reason)])
    }
}

extension RPCError {
    /// The error object's JSON: `{"code":…,"message":…,"data":…}` (`data` omitted when nil).
    public var json: JSONValue {
        var object: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { object.append("data", data) }
        return .object(object)
    }

    /// Reads an error object off the wire; nil when `json` is not one (`code` an integer,
    /// `message` a string).
    public init?(json: JSONValue) {
        guard let code = json["code"]?.intValue, let message = json["message"]?.stringValue else { return nil }
        self.init(code: code, message: message, data: json["data"])
    }
}
