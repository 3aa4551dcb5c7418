import PhotoWire

/// One sort key and its direction (PhotoKit's `NSSortDescriptor` on a fetch).
public struct FetchSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The key: `localDateTime`, `addedDate`, `pixelWidth`, `pixelHeight`, `duration`, `make`,
    /// `model`, `path`, `mediaType`, `latitude`, `longitude` or `isFavorite`
    /// (docs/PREDICATES.md). The daemon rejects others with `invalidParams`.
    public var key: String
    /// Smallest first when true. Missing values sort last either way.
    public var ascending: Bool

    /// Sorts by `key`, ascending unless told otherwise.
    public init(_ key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// `key` or `-key`, as the daemon's sort strings write it.
    public var description: String { (ascending ? "" : "-") + key }
}

/// What an asset fetch asks for besides its scope (PhotoKit's `PHFetchOptions`).
public struct FetchOptions: Sendable, Hashable {
    /// Only assets it matches (the predicate language of docs/PREDICATES.md:
    /// `isFavorite == true AND mediaType == "video"`); nil for all of them.
    public var predicate: String?
    /// The order; empty for the scope's own (capture time; a smart or user album's).
    public var sortDescriptors: [FetchSortDescriptor]
    /// Whether hidden assets are included.
    public var includeHidden: Bool
    /// Whether every member of a burst is included (PhotoKit's `includeAllBurstAssets`); by
    /// default a burst is its representative alone, except in the burst's own collection.
    public var includeAllBurstAssets: Bool
    /// At most this many assets (the first ones in order); nil or 0 for all (up to the daemon's
    /// cap of 1,000,000 ids a fetch).
    public var fetchLimit: Int?

    /// Options with these values; the defaults fetch every visible asset in capture order.
    public init(predicate: String? = nil, sortDescriptors: [FetchSortDescriptor] = [], includeHidden: Bool = false,
                includeAllBurstAssets: Bool = false, fetchLimit: Int? = nil) {
        self.includeAllBurstAssets = includeAllBurstAssets
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.includeHidden = includeHidden
        self.fetchLimit = fetchLimit
    }

    /// The query parameters every asset fetch method takes (`predicate`, `sort`,
    /// `includeHidden`, `includeAllBurstAssets`); the limit is the caller's to place.
    var queryParams: JSONObject {
        var p = JSONObject()
        if let predicate { p["predicate"] = .string(predicate) }
        if !sortDescriptors.isEmpty {
            p["sort"] = .array(sortDescriptors.map { .object(["key": .string($0.key), "ascending": .bool($0.ascending)]) })
        }
        if includeHidden { p["includeHidden"] = .bool(true) }
        if includeAllBurstAssets { p["includeAllBurstAssets"] = .bool(true) }
        return p
    }
}

/// What a fetch result reflects, so that it can be fetched again: a scope (the library or one
/// collection) and the options.
public struct FetchRequest: Sendable, Hashable {
    /// The collection (moment, folder, smart or user album) whose assets are fetched; nil for
    /// the whole library.
    public var collectionID: String?
    /// The predicate, order, hidden assets and limit.
    public var options: FetchOptions

    /// A request for `collectionID`'s assets (the library's when nil) with `options`.
    public init(collectionID: String? = nil, options: FetchOptions = FetchOptions()) {
        self.collectionID = collectionID
        self.options = options
    }

    /// The parameters of `assets.fetchIDs`, `assets.fetch` and `collections.assets`, without
    /// paging.
    var params: JSONObject {
        var p = options.queryParams
        if let collectionID { p["id"] = .string(collectionID) }
        return p
    }
}
