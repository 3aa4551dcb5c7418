import PhotoWire

/// The ordered asset ids of one fetch, from one snapshot of the index (PhotoKit's
/// `PHFetchResult`).
///
/// A fetch loads every id at once (one `assets.fetchIDs` call: about 25 bytes an asset) and no
/// asset records: load those lazily, a batch at a time, with
/// ``PhotoLibrary/assets(of:in:)``. The ids do not change; ``PhotoLibrary/changeDetails(for:)``
/// answers a newer result and what moved between the two.
public struct FetchResult: Sendable, Hashable, RandomAccessCollection {
    /// The asset ids, in the fetch's order.
    public let ids: [String]
    /// The change token the snapshot reflects: subscribe `since` it to hear of every later change.
    public let token: Int64
    /// How many assets matched; more than `ids.count` when the fetch limit cut the list.
    public let total: Int
    /// What was fetched, to fetch it again.
    public let request: FetchRequest

    /// A result with these ids (for tests and for results kept across runs).
    public init(ids: [String], token: Int64, total: Int? = nil, request: FetchRequest = FetchRequest()) {
        self.ids = ids
        self.token = token
        self.total = total ?? ids.count
        self.request = request
    }

    /// Decodes an `assets.fetchIDs` answer.
    init(_ f: Fields, request: FetchRequest) throws(MalformedReply) {
        ids = try f.strings("ids")
        token = try f.int("token")
        total = try f.count("total")
        self.request = request
    }

    /// The first index.
    public var startIndex: Int { ids.startIndex }
    /// One past the last index.
    public var endIndex: Int { ids.endIndex }
    /// The id at `position`.
    public subscript(position: Int) -> String { ids[position] }

    /// The index of the asset with `id`, or nil when the result does not hold it.
    public func firstIndex(ofID id: String) -> Int? { ids.firstIndex(of: id) }
}
