import PhotoImaging
import PhotoModel
import PhotoWire

/// The image methods: `images.request` (answered later, see `RPCDispatcher.deferred`),
/// `images.cancel`, `images.startCaching`, `images.stopCaching`.
struct ImageMethods: Sendable {
    let images: ImageService

    var deferred: [String: DeferredHandler] {
        ["images.request": { p, client, id throws(RPCError) in try request(p, client, id) }]
    }

    var table: [String: MethodHandler] {
        [
            "images.cancel": { p, client throws(RPCError) in try cancel(p, client) },
            "images.startCaching": { p, client throws(RPCError) in try startCaching(p, client) },
            "images.stopCaching": { p, client throws(RPCError) in try stopCaching(p, client) },
        ]
    }

    /// `images.request` `{"id", "targetSize": {"width", "height"} | [w, h], "contentMode"?:
    /// "fit" | "fill", "deliveryMode"?: "opportunistic" | "highQuality" | "fast", "version"?:
    /// "current" | "original"}` → `{"asset", "path", "width", "height", "format", "isDegraded"}`,
    /// after an `images.degraded` notification for `opportunistic` when a degraded image is at hand.
    func request(_ p: RPCParams, _ client: ClientContext, _ requestID: RPCID) throws(RPCError) {
        try p.rejectUnknownKeys(allowed: ["id", "targetSize", "contentMode", "deliveryMode", "version"])
        let id = try Self.assetID(p.string("id"), param: "id")
        let size = try Self.targetSize(p, key: "targetSize")
        let mode = try Self.contentMode(p) ?? .fit
        let delivery = ImageService.Delivery(rawValue: try p.string("deliveryMode", oneOf: ImageService.Delivery.allCases.map(\.rawValue),
                                                                   default: "opportunistic"))!
        // Versions are for edits, which photod does not make yet: both are the file as it is.
        _ = try p.string("version", oneOf: ["current", "original"], default: "current")
        try images.request(asset: id, target: size, mode: mode, delivery: delivery, client: client.id, requestID: requestID)
    }

    /// `images.cancel` `{"requestID"}` → `{"cancelled": bool}`; the cancelled request is
    /// answered first, with `-32007 cancelled`.
    func cancel(_ p: RPCParams, _ client: ClientContext) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["requestID"])
        guard let raw = p["requestID"], let requestID = RPCID(json: raw) else {
            throw p["requestID"] == nil ? RPCParams.missing("requestID")
                : RPCParams.mismatch("requestID", "the id (a string or an integer) of an images.request", got: p["requestID"]!)
        }
        return .object(["cancelled": .bool(images.cancel(client: client.id, requestID: requestID))])
    }

    /// `images.startCaching` `{"ids", "targetSize", "contentMode"?}` → `{"queued", "cached",
    /// "skipped": [ids]}`.
    func startCaching(_ p: RPCParams, _ client: ClientContext) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["ids", "targetSize", "contentMode"])
        let ids = try p.stringArray("ids", maxCount: ImageService.maxCachingIDs).map { text throws(RPCError) in
            try Self.assetID(text, param: "ids")
        }
        let size = try Self.targetSize(p, key: "targetSize")
        let mode = try Self.contentMode(p) ?? .fit
        let (queued, cached, skipped) = try images.startCaching(ids, size: size, mode: mode, client: client.id)
        return .object(["queued": .int(Int64(queued)), "cached": .int(Int64(cached)), "skipped": .array(skipped.map { .string($0) })])
    }

    /// `images.stopCaching` `{"ids"?, "targetSize"?, "contentMode"?}` → `{"stopped": N}`.
    func stopCaching(_ p: RPCParams, _ client: ClientContext) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["ids", "targetSize", "contentMode"])
        let ids = try p.optionalStringArray("ids", maxCount: ImageService.maxCachingIDs)?.map { text throws(RPCError) in
            try Self.assetID(text, param: "ids")
        }
        let size = p.contains("targetSize") ? try Self.targetSize(p, key: "targetSize") : nil
        let stopped = images.stopCaching(ids, size: size, mode: try Self.contentMode(p), client: client.id)
        return .object(["stopped": .int(Int64(stopped))])
    }

    static func assetID(_ text: String, param: String) throws(RPCError) -> AssetID {
        guard let id = AssetID(rawValue: text) else {
            throw .invalidParams("'\(param)': '\(text)' is not an asset id (a_ and 20 base32 digits)", param: param)
        }
        return id
    }

    static func contentMode(_ p: RPCParams) throws(RPCError) -> ContentMode? {
        try p.optionalString("contentMode", oneOf: ContentMode.allCases.map(\.rawValue)).flatMap(ContentMode.init(rawValue:))
    }

    /// `{"width": W, "height": H}` or `[W, H]`, each side 1...16384.
    static func targetSize(_ p: RPCParams, key: String) throws(RPCError) -> PixelSize {
        guard let value = p[key] else { throw RPCParams.missing(key) }
        let expectation = "{\"width\": W, \"height\": H} or [W, H], each an integer 1...\(ImageService.maxSide)"
        let sides: [JSONValue]
        switch value {
        case .object(let o): sides = [o["width"] ?? .null, o["height"] ?? .null]
        case .array(let a) where a.count == 2: sides = a
        default: throw RPCParams.mismatch(key, expectation, got: value)
        }
        guard let w = sides[0].intValue, let h = sides[1].intValue,
              (1...ImageService.maxSide).contains(w), (1...ImageService.maxSide).contains(h) else {
            throw RPCParams.mismatch(key, expectation, got: value)
        }
        return PixelSize(width: w, height: h)
    }
}
