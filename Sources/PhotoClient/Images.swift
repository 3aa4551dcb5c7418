import PhotoModel
import PhotoSystem
import PhotoWire

/// An image photod rendered into its cache: clients read the file at `path` directly.
public struct PhotoImage: Sendable, Hashable {
    public var assetID: String
    /// The absolute path of the image file (`.jpg`, or `.png` for images with transparency).
    public var path: PathBytes
    public var width: Int
    public var height: Int
    /// `jpeg` or `png`.
    public var format: String
    /// A quickly available stand-in (the embedded EXIF thumbnail, another cached size), not the
    /// image asked for.
    public var isDegraded: Bool
}

/// How an image fits the target size.
public enum ImageContentMode: String, Sendable, CaseIterable {
    /// The largest image of the asset's proportions inside the target size.
    case fit
    /// Covers the target size, cropped to exactly it.
    case fill
}

/// When photod answers an image request.
public enum ImageDeliveryMode: String, Sendable, CaseIterable {
    /// A degraded image first (when one is at hand), then the final one.
    case opportunistic
    /// Only the final image.
    case highQuality
    /// One answer, as soon as possible: degraded if that is quicker.
    case fast
}

extension PhotoLibrary {
    /// Renders an asset at `width`×`height` (from the cache when it is there) and returns the
    /// image file. With `.opportunistic`, `degraded` is called first with a stand-in when one is
    /// at hand. Videos throw `unsupported`; damaged files and images over photod's pixel limit
    /// throw `imageFailed`.
    public func requestImage(for assetID: String, width: Int, height: Int, contentMode: ImageContentMode = .fit,
                             deliveryMode: ImageDeliveryMode = .highQuality,
                             degraded: ((PhotoImage) -> Void)? = nil) throws(ClientError) -> PhotoImage {
        let params: JSONObject = ["id": .string(assetID), "targetSize": .array([.int(Int64(width)), .int(Int64(height))]),
                                  "contentMode": .string(contentMode.rawValue), "deliveryMode": .string(deliveryMode.rawValue)]
        let value = try call("images.request", params, retry: true) { notification, id in
            guard notification.method == "images.degraded", let p = notification.params,
                  p["requestID"].flatMap(RPCID.init(json:)) == id else { return false }
            if let image = try? Self.image(p) { degraded?(image) }
            return true
        }
        do throws(MalformedReply) {
            return try Self.image(value)
        } catch {
            throw .malformedReply(method: "images.request", error)
        }
    }

    /// Asks photod to render these assets at this size in the background (idle priority), so
    /// that requesting them later is a cache hit. Returns how many were queued, how many were
    /// cached already, and the ids skipped (unknown, videos, unreadable files).
    public func startCachingImages(for ids: [String], width: Int, height: Int, contentMode: ImageContentMode = .fit)
        throws(ClientError) -> (queued: Int, cached: Int, skipped: [String]) {
        try call("images.startCaching", ["ids": .array(ids.map { .string($0) }),
                                         "targetSize": .array([.int(Int64(width)), .int(Int64(height))]),
                                         "contentMode": .string(contentMode.rawValue)]) { f throws(MalformedReply) in
            (Int(try f.int("queued")), Int(try f.int("cached")), try f.strings("skipped"))
        }
    }

    /// Stops this connection's pre-caching of these assets (all when nil); returns how many
    /// renders were dropped. Renders someone waits for go on.
    @discardableResult
    public func stopCachingImages(for ids: [String]? = nil) throws(ClientError) -> Int {
        var params: JSONObject = [:]
        if let ids { params["ids"] = .array(ids.map { .string($0) }) }
        return try call("images.stopCaching", params) { f throws(MalformedReply) in Int(try f.int("stopped")) }
    }

    static func image(_ value: JSONValue) throws(MalformedReply) -> PhotoImage {
        let f = try Fields(value, at: "")
        return PhotoImage(assetID: try f.string("asset"), path: PathBytes(try f.string("path")), width: Int(try f.int("width")),
                          height: Int(try f.int("height")), format: try f.string("format"), isDegraded: try f.bool("isDegraded"))
    }
}
