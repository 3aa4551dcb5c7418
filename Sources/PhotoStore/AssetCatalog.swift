import CLinux
import PhotoModel
import PhotoSystem

/// An in-memory copy of what fetch predicates and sorts read, for every asset: library fetches
/// with a predicate or a sort are answered from it in a few milliseconds on 100,000 assets,
/// where SQLite would scan and sort the whole table for each page.
///
/// It is a cache of the database, never a source of truth. Each `CatalogSnapshot` reflects
/// one change token; a reader brings it up to the token of its own read transaction by
/// re-reading the assets that the change journal names after the snapshot's token (every
/// change to an asset is journaled: that is the journal's promise to clients too), or by
/// reading everything again when that is cheaper, the journal no longer reaches back, or the
/// database was rebuilt. The page's rows are then read in that same transaction, so a page, its
/// total and its token always agree.
final class AssetCatalog: Sendable {
    private let latest = Locked<CatalogSnapshot?>(nil)

    init() {}

    /// Drops the snapshot: the next fetch reads everything again (for writes that bypass the
    /// journal: tests and maintenance tools).
    func invalidate() { latest.withLock { $0 = nil } }

    /// The snapshot at `reader`'s token, refreshed if needed; call inside a read transaction.
    func snapshot(_ reader: IndexReader) throws(StoreError) -> CatalogSnapshot {
        let bounds = try reader.journalBounds()
        let held = latest.withLock { $0 }
        if let held, held.token == bounds.current { return held }
        // A snapshot newer than this transaction (another reader's) cannot be taken back:
        // this reader builds its own and does not keep it.
        let fresh: CatalogSnapshot
        if let held, held.token < bounds.current, held.token >= bounds.floor,
           let refreshed = try CatalogSnapshot.refreshed(held, reader: reader, to: bounds.current) {
            fresh = refreshed
        } else {
            fresh = try CatalogSnapshot.build(reader, token: bounds.current)
        }
        // Keep the newest (another reader may have stored a newer one meanwhile).
        latest.withLock { if $0 == nil || $0!.token <= fresh.token { $0 = fresh } }
        return fresh
    }
}

/// One asset as predicates and sorts see it: plain data (no references), so that copying the
/// array for a new snapshot is a memory copy. Its id, path and keywords are in the snapshot's
/// parallel arrays. Text compared without regard to ASCII case (make, model) is interned folded.
struct CatalogRecord: Sendable {
    var pk: Int64
    /// `local_datetime` as milliseconds on the capture clock since 0000-01-01.
    var time: Int64
    /// Whether `local_datetime` is written with milliseconds (`…SS.fff`): in the stored text's
    /// order, `…SS` comes before `…SS.000`.
    var timeHasMillis: Bool
    var day: Int32
    var added: Int64
    var width: Int64?
    var height: Int64?
    var latitude: Double?
    var longitude: Double?
    var duration: Double?
    /// Index into the snapshot's `strings`, -1 for none.
    var make: Int32
    var model: Int32
    var subtypes: Int64
    var isVideo: Bool
    var isFavorite: Bool
    var isHidden: Bool
    var isDeleted: Bool
}

/// A record read from the database with the parts kept apart.
struct CatalogRow {
    var record: CatalogRecord
    var id: String
    var path: [UInt8]
    /// The file's keywords and the taggers', folded, without repeats.
    var keywords: [String]
}

/// The records column by column: a predicate reads only the columns it tests (a pass over
/// one column of 100,000 records touches 800 KB, not the 14 MB of whole records). Missing
/// integers are `Int64.min`, missing reals NaN (SQLite stores neither).
struct CatalogColumns: Sendable {
    static let noInteger = Int64.min

    var pk: [Int64] = []
    var time: [Int64] = []
    var timeHasMillis: [Bool] = []
    var day: [Int32] = []
    var added: [Int64] = []
    var width: [Int64] = []
    var height: [Int64] = []
    var latitude: [Double] = []
    var longitude: [Double] = []
    var duration: [Double] = []
    var make: [Int32] = []
    var model: [Int32] = []
    var subtypes: [Int64] = []
    /// `Flags` bits.
    var flags: [UInt8] = []

    enum Flags {
        static let video: UInt8 = 1
        static let favorite: UInt8 = 2
        static let hidden: UInt8 = 4
        static let deleted: UInt8 = 8
    }

    var count: Int { pk.count }

    init() {}

    mutating func reserve(_ n: Int) {
        pk.reserveCapacity(n); time.reserveCapacity(n); timeHasMillis.reserveCapacity(n); day.reserveCapacity(n)
        added.reserveCapacity(n); width.reserveCapacity(n); height.reserveCapacity(n); latitude.reserveCapacity(n)
        longitude.reserveCapacity(n); duration.reserveCapacity(n); make.reserveCapacity(n); model.reserveCapacity(n)
        subtypes.reserveCapacity(n); flags.reserveCapacity(n)
    }

    mutating func append(_ r: CatalogRecord) {
        pk.append(r.pk); time.append(r.time); timeHasMillis.append(r.timeHasMillis); day.append(r.day); added.append(r.added)
        width.append(r.width ?? Self.noInteger); height.append(r.height ?? Self.noInteger)
        latitude.append(r.latitude ?? .nan); longitude.append(r.longitude ?? .nan); duration.append(r.duration ?? .nan)
        make.append(r.make); model.append(r.model); subtypes.append(r.subtypes); flags.append(Self.flags(r))
    }

    static func flags(_ r: CatalogRecord) -> UInt8 {
        (r.isVideo ? Flags.video : 0) | (r.isFavorite ? Flags.favorite : 0) | (r.isHidden ? Flags.hidden : 0)
            | (r.isDeleted ? Flags.deleted : 0)
    }

    subscript(i: Int) -> CatalogRecord {
        get {
            func int(_ v: Int64) -> Int64? { v == Self.noInteger ? nil : v }
            func real(_ v: Double) -> Double? { v.isNaN ? nil : v }
            let f = flags[i]
            return CatalogRecord(pk: pk[i], time: time[i], timeHasMillis: timeHasMillis[i], day: day[i], added: added[i],
                                 width: int(width[i]), height: int(height[i]), latitude: real(latitude[i]),
                                 longitude: real(longitude[i]), duration: real(duration[i]), make: make[i], model: model[i],
                                 subtypes: subtypes[i], isVideo: f & Flags.video != 0, isFavorite: f & Flags.favorite != 0,
                                 isHidden: f & Flags.hidden != 0, isDeleted: f & Flags.deleted != 0)
        }
        set {
            // Column by column, only where the value differs: the columns a change does not
            // touch stay shared with the snapshot they were copied from.
            func put<T: Equatable>(_ column: inout [T], _ value: T) { if column[i] != value { column[i] = value } }
            put(&pk, newValue.pk); put(&time, newValue.time); put(&timeHasMillis, newValue.timeHasMillis)
            put(&day, newValue.day); put(&added, newValue.added)
            put(&width, newValue.width ?? Self.noInteger); put(&height, newValue.height ?? Self.noInteger)
            func putReal(_ column: inout [Double], _ value: Double?) {
                let v = value ?? .nan
                if !(column[i] == v || (column[i].isNaN && v.isNaN)) { column[i] = v }
            }
            putReal(&latitude, newValue.latitude); putReal(&longitude, newValue.longitude); putReal(&duration, newValue.duration)
            put(&make, newValue.make); put(&model, newValue.model); put(&subtypes, newValue.subtypes)
            put(&flags, Self.flags(newValue))
        }
    }
}

/// A byte string per record in one buffer (no object per string): the paths, over which a
/// predicate runs through contiguous memory, and the ids.
struct ByteTable: Sendable {
    private(set) var bytes: [UInt8] = []
    /// Where each path starts; one more entry for the end of the last.
    private(set) var starts: [Int] = [0]

    init() {}


    var count: Int { starts.count - 1 }

    mutating func append(_ path: some Collection<UInt8>) {
        bytes.append(contentsOf: path)
        starts.append(bytes.count)
    }

    subscript(i: Int) -> [UInt8] { Array(bytes[starts[i]..<starts[i + 1]]) }

    /// Entry `i`'s bytes, in place.
    func slice(_ i: Int) -> ArraySlice<UInt8> { bytes[starts[i]..<starts[i + 1]] }

    /// Entry `i` as text (ids are ASCII).
    func string(_ i: Int) -> String { String(decoding: bytes[starts[i]..<starts[i + 1]], as: UTF8.self) }

    /// Whether entry `i` sorts before `other`, byte for byte.
    func precedes(_ i: Int, _ other: some Collection<UInt8>) -> Bool {
        bytes[starts[i]..<starts[i + 1]].lexicographicallyPrecedes(other)
    }

    mutating func reserve(entries: Int, bytes total: Int) {
        starts.reserveCapacity(entries + 1)
        bytes.reserveCapacity(total)
    }

    /// Whether paths `i` and `j` are the same bytes.
    func same(_ i: Int, _ j: Int) -> Bool { bytes[starts[i]..<starts[i + 1]].elementsEqual(bytes[starts[j]..<starts[j + 1]]) }

    /// Whether path `i` is `other`.
    func equals(_ i: Int, _ other: [UInt8]) -> Bool { bytes[starts[i]..<starts[i + 1]].elementsEqual(other) }

    /// The records whose path holds `needle`: one search through the whole buffer, an
    /// occurrence counting for the path it starts in when it ends there too.
    func containing(_ needle: [UInt8]) -> Bitmap {
        guard !needle.isEmpty else { return Bitmap(count: count, filled: true) }
        var words = [UInt64](repeating: 0, count: (count + 63) / 64)
        bytes.withUnsafeBufferPointer { b in
            needle.withUnsafeBufferPointer { n in
                guard let base = b.baseAddress, let nb = n.baseAddress else { return }
                var cursor = 0
                var record = 0
                while cursor < b.count {
                    let found = photo_memfind(base + cursor, b.count - cursor, nb, n.count)
                    if found < 0 { break }
                    let at = cursor + Int(found)
                    // The path the occurrence starts in (paths are in buffer order).
                    var lo = record, hi = count - 1
                    while lo < hi {
                        let mid = (lo + hi + 1) / 2
                        if starts[mid] <= at { lo = mid } else { hi = mid - 1 }
                    }
                    record = lo
                    if at + n.count <= starts[record + 1] {
                        words[record >> 6] |= 1 << UInt64(record & 63)
                        cursor = starts[record + 1]  // this path is decided
                    } else {
                        cursor = at + 1
                    }
                }
            }
        }
        return Bitmap(words: words, count: count)
    }

    /// The records whose path passes `test`, given each path's bytes.
    func scan(_ test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bitmap {
        var words = [UInt64](repeating: 0, count: (count + 63) / 64)
        bytes.withUnsafeBufferPointer { b in
            starts.withUnsafeBufferPointer { s in
                words.withUnsafeMutableBufferPointer { w in
                    guard let base = b.baseAddress ?? UnsafePointer(bitPattern: 1) else { return }
                    for i in 0..<(s.count - 1) where test(UnsafeBufferPointer(start: base + s[i], count: s[i + 1] - s[i])) {
                        w[i >> 6] |= 1 << UInt64(i & 63)
                    }
                }
            }
        }
        return Bitmap(words: words, count: count)
    }
}

/// The catalog at one change token: immutable, shared by every reader.
final class CatalogSnapshot: Sendable {
    let token: Int64
    /// Every asset (Recently Deleted too), in (path, id) order: a record's index is its place
    /// in the tie-breaking order of every sort. `ids`, `paths` and `keywords` run in parallel.
    let columns: CatalogColumns
    let ids: ByteTable
    let paths: ByteTable
    let keywords: [[String]]
    /// Per record: the index of the first record with the same path (for `path` as a sort key:
    /// equal paths tie).
    let pathRank: [Int32]
    /// Folded make and model values.
    let strings: [String]
    /// Per string: its rank in the sorted `strings`.
    let stringRank: [Int32]
    let stringIndex: [String: Int32]
    /// The records in id order, to find one by id (made on first use; kept by snapshots with
    /// the same positions).
    private let byID = Locked<[Int32]?>(nil)
    /// Per sort key, the records in ascending order (made on first use).
    private let orders = Locked<[AssetSortKey: [Int32]]>([:])
    /// Per sort key, the dense rank of each record's value (made on first use).
    private let valueRankCache = Locked<[AssetSortKey: [Int32]]>([:])
    /// Recent results: the record indexes a query selects, in its order.
    private let results = Locked<[(AssetQuery, [Int32])]>([])
    /// Results kept per snapshot, at most, and the record indexes they may hold together
    /// (8 MB; the newest result is kept whatever its size): without the second bound, 16 results
    /// of a million-asset library could hold 64 MB.
    static let cachedResults = 16
    static let cachedIndexes = 2 << 20

    init(token: Int64, columns: CatalogColumns, ids: ByteTable, paths: ByteTable, keywords: [[String]], pathRank: [Int32]? = nil,
         strings: [String], stringIndex: [String: Int32], stringRank: [Int32]? = nil, byID: [Int32]? = nil,
         orders: [AssetSortKey: [Int32]] = [:]) {
        self.token = token
        self.columns = columns
        self.ids = ids
        self.paths = paths
        self.keywords = keywords
        if let pathRank {
            self.pathRank = pathRank
        } else {
            var rank = [Int32](repeating: 0, count: paths.count)
            for i in 0..<paths.count where i > 0 { rank[i] = paths.same(i, i - 1) ? rank[i - 1] : Int32(i) }
            self.pathRank = rank
        }
        self.strings = strings
        self.stringIndex = stringIndex
        if let stringRank, stringRank.count == strings.count {
            self.stringRank = stringRank
        } else {
            var ranks = [Int32](repeating: 0, count: strings.count)
            let bytes = strings.map { Array($0.utf8) }
            for (r, i) in strings.indices.sorted(by: { bytes[$0].lexicographicallyPrecedes(bytes[$1]) }).enumerated() {
                ranks[i] = Int32(r)
            }
            self.stringRank = ranks
        }
        self.byID.withLock { $0 = byID }
        self.orders.withLock { $0 = orders }
    }

    /// How many records (assets) it holds.
    var count: Int { ids.count }

    /// Record index by id.
    func index(of id: String) -> Int32? {
        let order = idOrder
        let key = Array(id.utf8)
        var lo = 0, hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ids.precedes(Int(order[mid]), key) { lo = mid + 1 } else { hi = mid }
        }
        guard lo < order.count, ids.equals(Int(order[lo]), key) else { return nil }
        return order[lo]
    }

    /// The records in id order, made if needed.
    private var idOrder: [Int32] {
        if let order = byID.withLock({ $0 }) { return order }
        let table = ids
        let order = (0..<Int32(count)).sorted { a, b in table.precedes(Int(a), table.slice(Int(b))) }
        byID.withLock { $0 = order }
        return order
    }

    // MARK: Building

    /// The columns a record is read from (the table aliased `a`).
    static let columns = """
        a.pk, a.id, a.path, a.local_datetime, a.day, a.added_at, a.pixel_width, a.pixel_height, a.latitude, a.longitude,
        a.duration, a.make, a.model, a.subtypes, a.media_type, a.is_favorite, a.is_hidden, a.deleted_at IS NOT NULL, a.keywords
        """

    /// Interns folded make and model values while records are read.
    struct Interner {
        var strings: [String] = []
        var index: [String: Int32] = [:]

        mutating func intern(_ text: String?) -> Int32 {
            guard let text else { return -1 }
            let folded = Keywords.folded(text)
            if let i = index[folded] { return i }
            let i = Int32(strings.count)
            strings.append(folded)
            index[folded] = i
            return i
        }
    }

    /// A row selected with `columns`; nil when a value is not in the form the store writes.
    static func row(_ s: Statement, _ interner: inout Interner) -> CatalogRow? {
        guard let (time, millis) = parseLocal(s.bytes(3)) else { return nil }
        let record = CatalogRecord(
            pk: s.int64(0), time: time, timeHasMillis: millis, day: Int32(truncatingIfNeeded: s.int64(4)),
            added: s.int64(5), width: s.isNull(6) ? nil : s.int64(6), height: s.isNull(7) ? nil : s.int64(7),
            latitude: s.optionalDouble(8), longitude: s.optionalDouble(9), duration: s.optionalDouble(10),
            make: interner.intern(s.optionalString(11)), model: interner.intern(s.optionalString(12)), subtypes: s.int64(13),
            isVideo: s.string(14) == MediaType.video.rawValue, isFavorite: s.int(15) != 0, isHidden: s.int(16) != 0,
            isDeleted: s.int(17) != 0)
        return CatalogRow(record: record, id: s.string(1), path: s.bytes(2), keywords: folded(Keywords.decode(s.optionalString(18)), []))
    }

    /// `YYYY-MM-DDTHH:MM:SS` or `YYYY-MM-DDTHH:MM:SS.fff` as milliseconds since 0000-01-01 on the
    /// same clock, and whether the milliseconds were written.
    static func parseLocal(_ b: [UInt8]) -> (Int64, Bool)? {
        guard b.count == 19 || (b.count == 23 && b[19] == UInt8(ascii: ".")),
              b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"),
              b[16] == UInt8(ascii: ":")
        else { return nil }
        func digits(_ at: Int, _ n: Int) -> Int? {
            var v = 0
            for i in at..<(at + n) {
                let d = Int(b[i]) - 48
                guard (0...9).contains(d) else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard let y = digits(0, 4), let mo = digits(5, 2), let d = digits(8, 2), let h = digits(11, 2), let mi = digits(14, 2),
              let s = digits(17, 2), (1...12).contains(mo), (1...31).contains(d)
        else { return nil }
        let ms = b.count == 23 ? digits(20, 3) : 0
        guard let ms else { return nil }
        return (milliseconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms), b.count == 23)
    }

    static func milliseconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int) -> Int64 {
        let days = Int64(CivilTime.daysFromCivil(year: year, month: month, day: day) - CivilTime.daysFromCivil(year: 0, month: 1, day: 1))
        return ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60_000 + Int64(second * 1000 + millisecond)
    }

    /// Keywords folded, without repeats, in their first order.
    static func folded(_ words: [String], _ more: [String]) -> [String] {
        var out: [String] = []
        for w in words + more {
            let f = Keywords.folded(w)
            if !out.contains(f) { out.append(f) }
        }
        return out
    }

    /// Collects records in (path, id) order into columns and byte tables.
    struct Builder {
        var columns = CatalogColumns()
        var ids = ByteTable()
        var paths = ByteTable()
        var keywords: [[String]] = []

        init(capacity: Int) {
            columns.reserve(capacity)
            ids.reserve(entries: capacity, bytes: capacity * 22)
            paths.reserve(entries: capacity, bytes: capacity * 64)
            keywords.reserveCapacity(capacity)
        }

        mutating func append(_ record: CatalogRecord, id: some Collection<UInt8>, path: some Collection<UInt8>, keywords k: [String]) {
            columns.append(record)
            ids.append(id)
            paths.append(path)
            keywords.append(k)
        }

        func snapshot(token: Int64, interner: Interner) -> CatalogSnapshot {
            CatalogSnapshot(token: token, columns: columns, ids: ids, paths: paths, keywords: keywords, strings: interner.strings,
                            stringIndex: interner.index)
        }
    }

    /// Reads every asset, in (path, id) order, straight into columns.
    static func build(_ reader: IndexReader, token: Int64) throws(StoreError) -> CatalogSnapshot {
        var interner = Interner()
        let tagged = try taggerKeywords(reader, ids: nil)
        let total = try reader.db.scalar("SELECT count(*) FROM assets").int64 ?? 0
        var builder = Builder(capacity: Int(total))
        let s = try reader.db.statement("SELECT \(columns) FROM assets a ORDER BY a.path, a.id")
        defer { s.reset() }
        while try s.step() {
            guard let r = row(s, &interner) else { throw StoreError.undecodable(table: "assets", key: s.string(1)) }
            let words = tagged[r.id].map { folded(r.keywords, $0) } ?? r.keywords
            builder.append(r.record, id: r.id.utf8, path: r.path, keywords: words)
        }
        return builder.snapshot(token: token, interner: interner)
    }

    /// The taggers' keywords by asset id (of `ids`, a JSON array, or of every asset).
    static func taggerKeywords(_ reader: IndexReader, ids: String?) throws(StoreError) -> [String: [String]] {
        var tagged: [String: [String]] = [:]
        let k = try reader.db.statement(ids == nil ? "SELECT asset_id, keyword FROM asset_keywords"
            : "SELECT asset_id, keyword FROM asset_keywords WHERE asset_id IN (SELECT value FROM json_each(:ids))")
        defer { k.reset() }
        if let ids { k.bind(":ids", to: ids) }
        while try k.step() { tagged[k.string(0), default: []].append(k.string(1)) }
        return tagged
    }

    /// `held` brought up to `token` by re-reading the assets the journal names after its token;
    /// nil when reading everything is the better way (many changes).
    static func refreshed(_ held: CatalogSnapshot, reader: IndexReader, to token: Int64) throws(StoreError) -> CatalogSnapshot? {
        var changed = Set<String>()
        var after = held.token
        while after < token {
            let page = try reader.changes(after: after, limit: 500)
            guard let last = page.last else { break }
            for c in page {
                for id in c.inserted + c.updated + c.deleted { changed.insert(id.rawValue) }
            }
            if changed.count > max(1_000, held.count / 5) { return nil }
            after = last.token ?? after
        }
        var interner = Interner(strings: held.strings, index: held.stringIndex)
        var fresh: [CatalogRow] = []
        if !changed.isEmpty {
            let list = IndexWriter.jsonArray(Array(changed))
            let s = try reader.db.statement("SELECT \(columns) FROM assets a WHERE a.id IN (SELECT value FROM json_each(:ids))")
            defer { s.reset() }
            s.bind(":ids", to: list)
            while try s.step() {
                guard let r = row(s, &interner) else { return nil }
                fresh.append(r)
            }
            let tagged = try taggerKeywords(reader, ids: list)
            for i in fresh.indices {
                if let more = tagged[fresh[i].id] { fresh[i].keywords = folded(fresh[i].keywords, more) }
            }
        }
        if let inPlace = held.updatedInPlace(fresh, changed: changed, token: token, interner: interner) { return inPlace }
        fresh.sort(by: precedes)
        // Merge the kept records (in order) with the re-read ones (sorted).
        var builder = Builder(capacity: held.count + fresh.count)
        var j = 0
        for i in 0..<held.count where !changed.contains(held.ids.string(i)) {
            let path = held.paths[i]
            let id = held.ids[i]
            while j < fresh.count, fresh[j].path.lexicographicallyPrecedes(path)
                    || (fresh[j].path == path && Array(fresh[j].id.utf8).lexicographicallyPrecedes(id)) {
                builder.append(fresh[j].record, id: fresh[j].id.utf8, path: fresh[j].path, keywords: fresh[j].keywords)
                j += 1
            }
            builder.append(held.columns[i], id: id, path: path, keywords: held.keywords[i])
        }
        for row in fresh[j...] { builder.append(row.record, id: row.id.utf8, path: row.path, keywords: row.keywords) }
        return builder.snapshot(token: token, interner: interner)
    }

    /// When every changed asset is still there at its path (favorites, hidden, keywords,
    /// re-read metadata): the new snapshot keeps every position, the path ranks and the index by
    /// id, and repairs each sort order by moving only the changed records. Nil otherwise.
    private func updatedInPlace(_ fresh: [CatalogRow], changed: Set<String>, token: Int64, interner: Interner) -> CatalogSnapshot? {
        // Some were purged, or so many changed that re-sorting beats repairing each order.
        guard fresh.count == changed.count, fresh.count <= 64 else { return nil }
        var positions: [(Int, CatalogRow)] = []
        for row in fresh {
            guard let i = index(of: row.id), paths.equals(Int(i), row.path) else { return nil }
            positions.append((Int(i), row))
        }
        var columns = self.columns
        var keywords = self.keywords
        for (i, row) in positions {
            columns[i] = row.record
            if keywords[i] != row.keywords { keywords[i] = row.keywords }
        }
        let next = CatalogSnapshot(token: token, columns: columns, ids: ids, paths: paths, keywords: keywords, pathRank: pathRank,
                                   strings: interner.strings, stringIndex: interner.index,
                                   stringRank: interner.strings.count == strings.count ? stringRank : nil, byID: idOrder)
        // The orders this snapshot had made, with the changed records put back in their places.
        let moved = positions.map { Int32($0.0) }.sorted()
        var isMoved = [Bool](repeating: false, count: count)
        for i in moved { isMoved[Int(i)] = true }
        for (key, order) in orders.withLock({ $0 }) {
            var kept = order.filter { !isMoved[Int($0)] }
            for i in moved {
                var lo = 0, hi = kept.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if next.ascendingPrecedes(kept[mid], i, key) { lo = mid + 1 } else { hi = mid }
                }
                kept.insert(i, at: lo)
            }
            next.orders.withLock { $0[key] = kept }
        }
        return next
    }

    /// The (path, id) order: bytes, then id bytes (as SQLite's `ORDER BY a.path, a.id`).
    static func precedes(_ a: CatalogRow, _ b: CatalogRow) -> Bool {
        if a.path != b.path { return a.path.lexicographicallyPrecedes(b.path) }
        return Array(a.id.utf8).lexicographicallyPrecedes(Array(b.id.utf8))
    }

    // MARK: Queries

    /// The record indexes `query` selects from the library (Recently Deleted never; hidden
    /// assets with `includeHidden`), in its order (capture time when it has no sort).
    func select(_ query: AssetQuery) -> [Int32] {
        if let hit = results.withLock({ $0.first { $0.0 == query }?.1 }) { return hit }
        let includeHidden = query.includeHidden
        let sort = query.sort.descriptors
        let first = sort.first ?? AssetSortDescriptor(.localDateTime)
        // A column at a time into a bitmap; then the key's order picks the matches.
        var selected = CatalogPredicate.evaluate(query.predicate, self)
        let hiding = CatalogColumns.Flags.deleted | (includeHidden ? 0 : CatalogColumns.Flags.hidden)
        selected.formIntersection(CatalogPredicate.scan(columns.flags) { $0 & hiding == 0 })
        let count = selected.cardinality
        var out: [Int32] = []
        out.reserveCapacity(count)
        if count > 0 {
            let order = ascending(first.key)
            if first.ascending {
                for i in order where selected[Int(i)] { out.append(i) }
            } else {
                // Descending: the non-null part reversed, then the null part reversed (missing
                // values stay last; ties go by path and id descending, as the first key does).
                let nulls = nullStart(order, first.key)
                for i in order[..<nulls].reversed() where selected[Int(i)] { out.append(i) }
                for i in order[nulls...].reversed() where selected[Int(i)] { out.append(i) }
            }
        }
        if sort.count > 1 { sortByTheRest(&out, sort) }
        results.withLock { Self.keep((query, out), in: &$0) }
        return out
    }

    /// Puts a result first in `cache` and drops the oldest beyond `count` results or
    /// `indexes` record indexes in all (never the one just put).
    static func keep(_ result: (AssetQuery, [Int32]), in cache: inout [(AssetQuery, [Int32])],
                     count: Int = cachedResults, indexes: Int = cachedIndexes) {
        cache.insert(result, at: 0)
        var held = cache.reduce(0) { $0 + $1.1.count }
        while cache.count > 1, cache.count > count || held > indexes {
            held -= cache.removeLast().1.count
        }
    }

    /// Where the records without a value for `key` start in its ascending order.
    private func nullStart(_ order: [Int32], _ key: AssetSortKey) -> Int {
        guard key.isNullable else { return order.count }
        var lo = 0, hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sortValue(Int(order[mid]), key) == nil { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// Within runs that tie on the first key, orders by the other keys (then path and id in the
    /// first key's direction, which the run's order already is).
    private func sortByTheRest(_ out: inout [Int32], _ sort: [AssetSortDescriptor]) {
        let first = valueRanks(sort[0].key)
        let rest = sort.dropFirst().map { (ranks: valueRanks($0.key), ascending: $0.ascending) }
        var start = 0
        while start < out.count {
            var end = start + 1
            while end < out.count, first[Int(out[start])] == first[Int(out[end])] { end += 1 }
            if end - start > 1 {
                // Stable: equal on every key keeps the tie-breaking order of the run.
                let run = out[start..<end].enumerated().sorted { a, b in
                    for key in rest {
                        let x = key.ranks[Int(a.element)], y = key.ranks[Int(b.element)]
                        if x == y { continue }
                        if x == Int32.max || y == Int32.max { return y == Int32.max }  // missing values last
                        return (x < y) == key.ascending
                    }
                    return a.offset < b.offset
                }
                for (k, item) in run.enumerated() { out[start + k] = item.element }
            }
            start = end
        }
    }

    /// Per record, the rank of its value for `key` among the distinct values (equal values,
    /// equal ranks), `Int32.max` when it has none; made on first use from the key's order.
    func valueRanks(_ key: AssetSortKey) -> [Int32] {
        if let ranks = valueRankCache.withLock({ $0[key] }) { return ranks }
        var ranks = [Int32](repeating: Int32.max, count: count)
        var rank: Int32 = -1
        var previous: SortValue?
        for i in ascending(key) {
            guard let v = sortValue(Int(i), key) else { break }  // the rest have none
            if previous != v {
                rank += 1
                previous = v
            }
            ranks[Int(i)] = rank
        }
        valueRankCache.withLock { $0[key] = ranks }
        return ranks
    }

    /// The records in ascending order of `key` (missing values last; ties by path and id).
    func ascending(_ key: AssetSortKey) -> [Int32] {
        if let order = orders.withLock({ $0[key] }) { return order }
        let keys = (0..<count).map { sortValue($0, key) }
        var order = (0..<Int32(count)).map { $0 }
        order.sort { a, b in Self.precedes(keys[Int(a)], a, keys[Int(b)], b) }
        orders.withLock { $0[key] = order }
        return order
    }

    /// Whether record `a` comes before record `b` in the ascending order of `key`.
    func ascendingPrecedes(_ a: Int32, _ b: Int32, _ key: AssetSortKey) -> Bool {
        Self.precedes(sortValue(Int(a), key), a, sortValue(Int(b), key), b)
    }

    /// Values ascending, missing ones last, ties by record index.
    static func precedes(_ x: SortValue?, _ a: Int32, _ y: SortValue?, _ b: Int32) -> Bool {
        switch (x, y) {
        case (nil, nil): return a < b
        case (nil, _): return false
        case (_, nil): return true
        case (let x?, let y?): return x != y ? x < y : a < b
        }
    }

    /// A record's value for `key` as an order-preserving number (nil when it has none).
    func sortValue(_ i: Int, _ key: AssetSortKey) -> SortValue? {
        func int(_ v: Int64) -> SortValue? { v == CatalogColumns.noInteger ? nil : .int(v) }
        func real(_ v: Double) -> SortValue? { v.isNaN ? nil : .real(v) }
        func text(_ m: Int32) -> SortValue? { m < 0 ? nil : .int(Int64(stringRank[Int(m)])) }
        switch key {
        case .localDateTime: return .int(columns.time[i] * 2 + (columns.timeHasMillis[i] ? 1 : 0))
        case .addedDate: return .int(columns.added[i])
        case .pixelWidth: return int(columns.width[i])
        case .pixelHeight: return int(columns.height[i])
        case .duration: return real(columns.duration[i])
        case .latitude: return real(columns.latitude[i])
        case .longitude: return real(columns.longitude[i])
        case .make: return text(columns.make[i])
        case .model: return text(columns.model[i])
        case .path: return .int(Int64(pathRank[i]))
        case .mediaType: return .int(columns.flags[i] & CatalogColumns.Flags.video != 0 ? 1 : 0)
        case .isFavorite: return .int(columns.flags[i] & CatalogColumns.Flags.favorite != 0 ? 1 : 0)
        }
    }
}

/// A sort value: integers and reals never meet in one key.
enum SortValue: Comparable, Sendable {
    case int(Int64)
    case real(Double)

    static func < (a: SortValue, b: SortValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y
        case (.real(let x), .real(let y)): return x < y
        case (.int(let x), .real(let y)): return Double(x) < y
        case (.real(let x), .int(let y)): return x < Double(y)
        }
    }
}
