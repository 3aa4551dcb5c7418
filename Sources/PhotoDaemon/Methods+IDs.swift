import PhotoModel
import PhotoStore
import PhotoWire

/// `assets.fetchIDs`: a whole fetch as ids, for clients that diff fetch results (the client
/// library's change details) or load objects lazily.
extension Methods {
    /// The most ids `assets.fetchIDs` answers with (and the largest `limit` it takes). At about
    /// 25 bytes an id, a full answer is some 25 MB: within `WireLimits.maxResponseLineBytes`.
    static let maxFetchIDs = 1_000_000

    /// `assets.fetchIDs` `{"predicate"?, "sort"?, "includeHidden"?, "id"?, "limit"?}` →
    /// `{"ids": [...], "total": N, "token": T}`: the ids of every asset `assets.fetch` (or, with
    /// a collection `id`, `collections.assets`) would page through with the same options, in
    /// the same order, unpaged, from one snapshot whose change token is `token`. `total` counts
    /// every match; `ids` holds the first `limit` of them (at most 1,000,000, ``maxFetchIDs``),
    /// so `ids.count < total` says the answer was cut.
    func fetchIDs(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: Self.queryKeys.union(["id", "limit"]))
        let limit = try p.int("limit", default: Self.maxFetchIDs, in: 1...Self.maxFetchIDs)
        let collection = try p.optionalString("id")
        let scope = try collection.map { id throws(RPCError) in try Self.assetScope(collection: id) } ?? .library
        let query = try Self.assetQuery(p)
        let now = info.now()
        let (found, token) = try snapshot { r in try r.assetIDs(query, in: scope, now: now) }
        guard let ids = found else {
            guard let collection else { throw .internalError("the library scope did not resolve") }
            throw .notFound("no collection '\(collection)'", extra: ["id": .string(collection)])
        }
        var o = JSONObject()
        if let collection { o["id"] = .string(collection) }
        o["ids"] = .array(ids.prefix(limit).map { .string($0.rawValue) })
        o["total"] = .int(Int64(ids.count))
        o["token"] = .int(token)
        return .object(o)
    }

    /// `assets.get` `{"ids": [1–1000 asset ids], "includeHidden"?}` → `{"assets", "missing",
    /// "token"}`: the records of these assets, in the order asked (repeats once), from one
    /// snapshot; `missing` the ids that are not in the library now (unknown, purged, in Recently
    /// Deleted, or hidden without `includeHidden`). PhotoKit's `fetchAssets(withLocalIdentifiers:)`:
    /// what a client that follows change sets reads for the ids a change set names.
    func getAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["ids", "includeHidden"])
        let texts = try p.stringArray("ids", maxCount: WireLimits.maxPageSize)
        guard !texts.isEmpty else { throw .invalidParams("'ids' must name at least one asset", param: "ids") }
        var ids: [AssetID] = []
        var seen = Set<String>()
        for text in texts where seen.insert(text).inserted {
            guard let id = AssetID(rawValue: text) else {
                throw .invalidParams("'\(text)' is not an asset id (they look like a_3ocnwoznuaa7slhsdfeq)", param: "ids")
            }
            ids.append(id)
        }
        let includeHidden = try p.bool("includeHidden", default: false)
        let (found, token) = try snapshot { r in try r.assets(ids: ids, includeHidden: includeHidden) }
        let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var o = JSONObject()
        o["assets"] = .array(ids.compactMap { byID[$0].map { WireMapping.asset($0, offline: offlineRoots) } })
        o["missing"] = .array(ids.filter { byID[$0] == nil }.map { .string($0.rawValue) })
        o["token"] = .int(token)
        return .object(o)
    }

    /// The asset scope of a collection id (a moment, folder album, smart album or user album),
    /// as `collections.assets` resolves it: a collection list is `invalidParams` (it holds
    /// collections, not assets), an id of no known form is `notFound`.
    static func assetScope(collection id: String) throws(RPCError) -> AssetScope {
        if id.hasPrefix("l_") || id.hasPrefix("uf_") {
            throw .invalidParams("'\(id)' is a collection list: it holds collections, not assets (see collectionLists.fetch, userAlbums.fetch)",
                                 param: "id")
        }
        if id.hasPrefix("u_"), id.count > 2 { return .userAlbum(id: id) }
        if id.hasPrefix("b_"), id.count > 2 { return .burst(identifier: String(id.dropFirst(2))) }
        if id.hasPrefix("pl_"), id.count > 3 { return .place(id: id) }
        guard let ref = CollectionRef(id: id) else { throw .notFound("no collection '\(id)'", extra: ["id": .string(id)]) }
        return AssetScope(ref)
    }
}
