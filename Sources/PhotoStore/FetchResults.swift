import PhotoModel

/// The results of recent fetches: for a query in a scope, how many assets it selects, or every
/// selected asset's pk in the query's order. A client pages through a result, or asks for it
/// again, far more often than it asks a new one: with the result kept, its next page, a deep
/// offset and its total cost a page instead of a pass over the library.
///
/// A result is only good for the index as it was read, and a change token names that: every
/// change to an asset or to a collection's members is journaled in the transaction that makes
/// it (the promise subscribers rely on too). So a result is stamped with the token of its read
/// and taken only by a read at the same token. Writes that bypass the journal (tests and tools
/// editing tables) call `invalidate()`, which moves the *generation*: a result being read across
/// it is not kept.
///
/// A text search (`assets.search` without a predicate or a sort) is kept as the first of its
/// assets in order, with its total: the next page, or the same page again, costs a page while
/// it falls in them, instead of a pass over every match of every word.
///
/// Bounded: at most `maxResults` results and `maxPKs` pks in all (4 MB), whatever the library's
/// size; a larger result is answered, not kept. The fetches' results at the newest token survive
/// a clean stop (`encoded`, `decoded`): the first fetches after a start that ask what clients
/// asked before it cost a page. Searches are kept while photod runs.
struct FetchResults: Sendable {
    struct Key: Hashable, Sendable {
        var scope: AssetScope
        var query: AssetQuery
        /// The words of a search; nil for a fetch.
        var search: SearchQuery? = nil
    }

    /// Where a result was read: the generation before the read, the change token in it.
    struct Stamp: Hashable, Sendable {
        var generation: Int
        var token: Int64
    }

    /// What is kept of a result: its total (after its first page), every pk in order, or (a
    /// search's) its total and its first pks in order.
    enum Held: Hashable, Sendable {
        case total(Int)
        case pks([UInt32])
        case first([UInt32], total: Int)

        var count: Int {
            switch self {
            case .total(let n): return n
            case .pks(let pks): return pks.count
            case .first(_, let total): return total
            }
        }

        var pkCount: Int {
            switch self {
            case .total: return 0
            case .pks(let pks), .first(let pks, _): return pks.count
            }
        }
    }

    static let maxResults = 16
    static let maxPKs = 1 << 20

    private(set) var generation = 0
    /// Newest first.
    private var entries: [(key: Key, stamp: Stamp, held: Held)] = []

    /// How many results are kept.
    var count: Int { entries.count }

    /// What is kept of `key`'s result, if it was read where `stamp` says.
    func held(_ key: Key, at stamp: Stamp) -> Held? {
        guard stamp.generation == generation else { return nil }
        return entries.first { $0.key == key && $0.stamp == stamp }?.held
    }

    /// Keeps what a read at `stamp` found of `key`'s result: nothing when the generation moved
    /// since, when a newer token's results are kept, or when the pks do not fit. A total does
    /// not replace the pks. Drops the oldest results beyond the bounds.
    mutating func keep(_ key: Key, at stamp: Stamp, _ held: Held) {
        guard stamp.generation == generation, held.pkCount <= Self.maxPKs,
              !entries.contains(where: { $0.stamp.token > stamp.token }) else { return }
        if case .total = held, case .pks? = self.held(key, at: stamp) { return }
        entries.removeAll { $0.key == key || $0.stamp != stamp }
        entries.insert((key, stamp, held), at: 0)
        var pks = entries.reduce(0) { $0 + $1.held.pkCount }
        while entries.count > Self.maxResults || pks > Self.maxPKs {
            pks -= entries.removeLast().held.pkCount
        }
    }

    /// Drops every result, and any being read now (a write that bypassed the journal).
    mutating func invalidate() {
        generation += 1
        entries.removeAll()
    }

    // MARK: Across a clean stop

    static let magic = Array("photod-fetch-results 1\n".utf8)

    /// The results at `token` as bytes: the magic line, the token, then per result its scope,
    /// query (canonical texts), and total or pks; integers little-endian.
    func encoded(token: Int64) -> [UInt8] {
        var out = ByteWriter(Self.magic)
        let kept = entries.filter { $0.stamp == Stamp(generation: generation, token: token) && $0.key.search == nil }
        out.int64(token)
        out.int64(Int64(kept.count))
        for e in kept {
            out.text(Self.text(e.key.scope))
            out.text(e.key.query.predicate?.description ?? "")
            out.text(e.key.query.sort.description)
            out.int64((e.key.query.includeHidden ? 1 : 0) | (e.key.query.includeAllBurstAssets ? 2 : 0))
            switch e.held {
            case .total(let n):
                out.int64(0)
                out.int64(Int64(n))
            case .pks(let pks):
                out.int64(1)
                out.int64(Int64(pks.count))
                for pk in pks { out.int64(Int64(pk), bytes: 4) }
            case .first:
                preconditionFailure("searches are not kept across a stop")
            }
        }
        return out.bytes
    }

    /// Results `encoded` at `token`, kept as read at it; nil for anything else (another token,
    /// another format, damaged).
    static func decoded(_ bytes: [UInt8], token: Int64) -> FetchResults? {
        var r = ByteReader(bytes)
        guard r.take(magic.count) == magic[...], r.int64() == token, let count = r.int64(), count <= maxResults else { return nil }
        var results = FetchResults()
        var decodedEntries: [(key: Key, stamp: Stamp, held: Held)] = []
        for _ in 0..<count {
            guard let scopeText = r.text(), let scope = scope(scopeText), let predicateText = r.text(), let sortText = r.text(),
                  let flags = r.int64(), let kind = r.int64(), let n = r.int64(), n >= 0, kind == 0 || n <= maxPKs,
                  let sort = try? AssetSort.parse(sortText)
            else { return nil }
            var query = AssetQuery(sort: sort, includeHidden: flags & 1 != 0, includeAllBurstAssets: flags & 2 != 0)
            if !predicateText.isEmpty {
                guard let predicate = try? AssetPredicate.parse(predicateText) else { return nil }
                query.predicate = predicate
            }
            let held: Held
            switch kind {
            case 0: held = .total(Int(n))
            case 1:
                var pks: [UInt32] = []
                pks.reserveCapacity(Int(n))
                for _ in 0..<n {
                    guard let pk = r.int64(bytes: 4) else { return nil }
                    pks.append(UInt32(pk))
                }
                held = .pks(pks)
            default: return nil
            }
            decodedEntries.append((Key(scope: scope, query: query), Stamp(generation: 0, token: token), held))
        }
        guard r.isAtEnd else { return nil }
        results.entries = decodedEntries
        return results
    }

    static func text(_ scope: AssetScope) -> String {
        switch scope {
        case .library: return "library"
        case .moment(let day): return "moment:\(day)"
        case .folderAlbum(let id): return "folder:" + id
        case .smartAlbum(let album): return "smart:" + album.kind.rawValue
        case .userAlbum(let id): return "user:" + id
        case .burst(let identifier): return "burst:" + identifier
        case .place(let id): return "place:" + id
        }
    }

    static func scope(_ text: String) -> AssetScope? {
        if text == "library" { return .library }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let value = String(text[text.index(after: colon)...])
        switch text[..<colon] {
        case "moment": return Int(value).map { .moment(day: $0) }
        case "folder": return .folderAlbum(id: value)
        case "smart": return SmartAlbum.Kind(rawValue: value).map { .smartAlbum(SmartAlbums.album($0)) }
        case "user": return .userAlbum(id: value)
        case "burst": return .burst(identifier: value)
        case "place": return .place(id: value)
        default: return nil
        }
    }
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

/// Little-endian integers and length-prefixed UTF-8 texts, appended.
private struct ByteWriter {
    var bytes: [UInt8]

    init(_ start: [UInt8]) { bytes = start }

    mutating func int64(_ v: Int64, bytes n: Int = 8) {
        for i in 0..<n { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * i))) }
    }

    mutating func text(_ s: String) {
        int64(Int64(s.utf8.count))
        bytes.append(contentsOf: s.utf8)
    }
}

/// What `ByteWriter` wrote, read back; nil past the end.
private struct ByteReader {
    let bytes: [UInt8]
    var at = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { at == bytes.count }

    mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, n <= bytes.count - at else { return nil }
        defer { at += n }
        return bytes[at..<(at + n)]
    }

    mutating func int64(bytes n: Int = 8) -> Int64? {
        guard let b = take(n) else { return nil }
        var v: UInt64 = 0
        for (i, byte) in b.enumerated() { v |= UInt64(byte) << (8 * UInt64(i)) }
        return Int64(bitPattern: v)
    }

    mutating func text() -> String? {
        guard let n = int64(), n <= Int64(bytes.count - at), let b = take(Int(n)) else { return nil }
        return String(validating: b, as: UTF8.self)
    }
}
