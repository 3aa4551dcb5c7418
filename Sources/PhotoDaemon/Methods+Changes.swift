import PhotoModel
import PhotoStore
import PhotoWire

/// The change methods: the journal's tokens, change sets since a token, subscriptions.
extension Methods {
    /// `changes.currentToken` → `{"token": N}`: the newest change token.
    func currentToken(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let bounds = try feed.journalBounds()
        return .object(["token": .int(bounds.current), "oldestToken": .int(bounds.floor)])
    }

    /// `changes.since` `{"since": N, "limit"?, "collection"? | "mediaType"?}` →
    /// `{"token": N, "changes": [...], "more": bool}`: the change sets after `since`, oldest
    /// first; `token` is the last one examined (pass it as `since` for the next page).
    func changesSince(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["since", "limit", "collection", "mediaType"])
        let since = Int64(try p.int("since", in: 0...Int.max))
        let limit = try p.int("limit", default: WireLimits.maxPageSize, in: 1...WireLimits.maxPageSize)
        let filter = try Self.changeFilter(p)
        let (token, changes, more) = try feed.changes(since: since, filter: filter, limit: limit)
        return .object(["token": .int(token), "changes": .array(changes.map(WireMapping.changeSet)), "more": .bool(more)])
    }

    /// `changes.subscribe` `{"since"?: N, "collection"? | "mediaType"?}` → `{"token": N}` (the
    /// current token); then `changes` notifications, one change set each, from `since` on (or
    /// from now), in token order, without gaps.
    func subscribe(_ p: RPCParams, _ client: ClientContext) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["since", "collection", "mediaType"])
        let since = try p.optionalInt("since", in: 0...Int.max).map { Int64($0) }
        let filter = try Self.changeFilter(p)
        let token = try feed.subscribe(client: client.id, since: since, filter: filter)
        return .object(["token": .int(token)])
    }

    /// `changes.unsubscribe` → `{"subscribed": false, "wasSubscribed": bool}`.
    func unsubscribe(_ p: RPCParams, _ client: ClientContext) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let was = feed.unsubscribe(client: client.id)
        return .object(["subscribed": .bool(false), "wasSubscribed": .bool(was)])
    }

    static func changeFilter(_ p: RPCParams) throws(RPCError) -> ChangeFeed.Filter {
        var filter = ChangeFeed.Filter()
        filter.collection = try p.optionalString("collection")
        if let type = try p.optionalString("mediaType", oneOf: MediaType.allCases.map(\.rawValue)) {
            filter.mediaType = MediaType(rawValue: type)
        }
        if filter.collection != nil && filter.mediaType != nil {
            throw .invalidParams("give 'collection' or 'mediaType', not both", param: "mediaType")
        }
        return filter
    }
}
