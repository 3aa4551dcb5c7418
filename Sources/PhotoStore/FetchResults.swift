import PhotoModel

/// The results of recent fetches: for a query in a scope, every selected asset's pk in the
/// query's order. A client pages through a result, or asks for it again, far more often than it
/// asks a new one: with the result kept, its next page, a deep offset and its total cost a page
/// instead of a pass over the library.
///
/// A result is only good for the index as it was read. It is stamped with the change token of
/// its read (every change to an asset is journaled) and the writer's *generation*, which every
/// write moves twice: to an odd value as it begins (dropping every result), to the next even one
/// after it ends. A result is made and taken only at an even generation that the reader saw
/// before its read began and that has not moved since, so writes that are not journaled (tests,
/// tools editing tables) never leave a stale result behind either.
///
/// Bounded: at most `maxResults` results and `maxPKs` pks in all (4 MB), whatever the library's
/// size; a larger result is answered, not kept.
struct FetchResults: Sendable {
    struct Key: Hashable, Sendable {
        var scope: AssetScope
        var query: AssetQuery
    }

    /// Where a result was read: the writer's generation before the read, the change token in it.
    struct Stamp: Hashable, Sendable {
        var generation: Int
        var token: Int64
    }

    static let maxResults = 16
    static let maxPKs = 1 << 20

    private(set) var generation = 0
    /// Newest first.
    private var entries: [(key: Key, stamp: Stamp, pks: [UInt32])] = []

    /// Whether results may be made or taken by a reader that saw `generation` before its read.
    func isCurrent(_ generation: Int) -> Bool { generation == self.generation && generation % 2 == 0 }

    /// The kept result of `key`, if it was read where `stamp` says.
    func result(_ key: Key, at stamp: Stamp) -> [UInt32]? {
        guard isCurrent(stamp.generation) else { return nil }
        return entries.first { $0.key == key && $0.stamp == stamp }?.pks
    }

    /// Keeps `pks` as `key`'s result read at `stamp`: nothing when a write began since, or when
    /// the pks do not fit. Drops the oldest results beyond the bounds.
    mutating func keep(_ key: Key, at stamp: Stamp, pks: [UInt32]) {
        guard isCurrent(stamp.generation), pks.count <= Self.maxPKs else { return }
        // Results at an older token are never asked for again once a newer one is read.
        if entries.contains(where: { $0.stamp.token > stamp.token }) { return }
        entries.removeAll { $0.key == key || $0.stamp != stamp }
        entries.insert((key, stamp, pks), at: 0)
        var held = entries.reduce(0) { $0 + $1.pks.count }
        while entries.count > Self.maxResults || held > Self.maxPKs {
            held -= entries.removeLast().pks.count
        }
    }

    /// A write begins: every result is dropped, none is made or taken until it ends.
    mutating func writeBegins() {
        generation += 1
        entries.removeAll()
    }

    mutating func writeEnded() { generation += 1 }

}

/// A whole result's pks as they are read: 4 bytes each while every one fits in 32 bits (always,
/// but in a database whose rowids passed 2^32: then 8, and the result is not kept).
struct PKList {
    private(set) var compact: [UInt32] = []
    private(set) var wide: [Int64]?

    mutating func append(_ pk: Int64) {
        if wide == nil, let small = UInt32(exactly: pk) {
            compact.append(small)
            return
        }
        if wide == nil {
            wide = compact.map(Int64.init)
            compact = []
        }
        wide?.append(pk)
    }
}
