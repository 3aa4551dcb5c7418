#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import PhotoModel

/// What a fetch asks for (`assets.fetch`, `collections.assets`): which assets, in what order.
public struct AssetQuery: Sendable, Hashable {
    /// Only assets it matches; `nil` for all of them.
    public var predicate: AssetPredicate?
    /// The order; empty for the scope's own (capture time, a smart album's, a user album's positions).
    public var sort: AssetSort
    /// Whether hidden assets are included (the Hidden smart album always includes them; assets
    /// in Recently Deleted are only ever in that album).
    public var includeHidden: Bool
    /// Whether every member of a burst is included (PhotoKit's `includeAllBurstAssets`); by
    /// default a burst is its representative alone, except in the burst itself (`b_…`).
    public var includeAllBurstAssets: Bool

    public init(predicate: AssetPredicate? = nil, sort: AssetSort = AssetSort(), includeHidden: Bool = false,
                includeAllBurstAssets: Bool = false) {
        self.predicate = predicate
        self.sort = sort
        self.includeHidden = includeHidden
        self.includeAllBurstAssets = includeAllBurstAssets
    }
}

/// Where a fetch looks: the whole library or one collection.
public enum AssetScope: Sendable, Hashable {
    /// Every asset not in Recently Deleted.
    case library
    /// One calendar day on the capture clock (CivilTime day number); exists while it has visible assets.
    case moment(day: Int)
    /// The assets directly in one directory, by the directory's album id.
    case folderAlbum(id: String)
    /// A smart album, with its own rule (and its own order when the query has no sort).
    case smartAlbum(SmartAlbum)
    /// A user album by id, in the album's order when the query has no sort.
    case userAlbum(id: String)
    /// Every member of a burst (Apple's BurstUUID), in capture order; exists while one is not
    /// in Recently Deleted.
    case burst(identifier: String)
    /// The visible assets at a place (`PlaceTree`: a country, region or city), by its id.
    case place(id: String)

    var isBurst: Bool {
        if case .burst = self { return true }
        return false
    }

    /// The scope of a collection reference.
    public init(_ collection: CollectionRef) {
        switch collection {
        case .moment(let day): self = .moment(day: day)
        case .folderAlbum(let id): self = .folderAlbum(id: id)
        case .smartAlbum(let album): self = .smartAlbum(album)
        }
    }
}

/// SQL text with the values bound to its numbered parameters, in order from the first number
/// the caller gave.
public struct SQLFragment: Sendable, Hashable {
    public var sql: String
    public var bindings: [SQLValue]
}

/// Compiles predicates and sorts to SQL on `assets a`. Every value a client wrote is bound as a
/// parameter; the only text spliced into the SQL is the compiler's own (column names, operators,
/// subtype bit masks — constants, so that the partial indexes' conditions match literally).
///
/// Semantics (`docs/PREDICATES.md`): each comparison is two-valued — a missing value (NULL) fails
/// every comparison except `== null`, and `!=` is exactly `NOT ==` — so NOT never meets SQL's
/// third truth value. NOT is pushed down to the comparisons (De Morgan) and each AND/OR puts its
/// most deeply nested operand first: SQLite before 3.46 parses with a fixed 100-entry stack that
/// every parenthesised group to the right of an operator deepens by about three entries, while a
/// group on the left is reduced before the rest is read. With both, any predicate within
/// `PredicateLimits` parses (the tests try the worst shapes).
public enum PredicateSQL {
    /// The condition for `predicate`, its parameters numbered from `firstParameter` (`?N`).
    public static func compile(_ predicate: AssetPredicate, firstParameter: Int) -> SQLFragment {
        var compiler = Compiler(next: firstParameter)
        let sql = compiler.compile(predicate, negated: false)
        return SQLFragment(sql: sql, bindings: compiler.bindings)
    }

    /// The ORDER BY terms of a non-empty sort, ending with the tie-breakers path and pk (see
    /// `AssetColumns.captureOrder`: the path decides), which follow the first key's direction
    /// (so `-localDateTime` is the default order reversed and can walk the `assets_order` index
    /// backwards). Missing values sort last either way.
    public static func orderBy(_ sort: AssetSort) -> String {
        guard let first = sort.descriptors.first else { return AssetColumns.captureOrder }
        var terms = sort.descriptors.map { d in
            column(d.key) + (d.ascending ? "" : " DESC") + (d.key.isNullable ? " NULLS LAST" : "")
        }
        let direction = first.ascending ? "" : " DESC"
        if !sort.descriptors.contains(where: { $0.key == .path }) { terms.append("a.path" + direction) }
        terms.append("a.pk" + direction)
        return terms.joined(separator: ", ")
    }

    static func column(_ key: AssetSortKey) -> String {
        switch key {
        case .localDateTime: return "a.local_datetime"
        case .addedDate: return "a.added_at"
        case .pixelWidth: return "a.pixel_width"
        case .pixelHeight: return "a.pixel_height"
        case .duration: return "a.duration"
        case .make: return "a.make COLLATE NOCASE"
        case .model: return "a.model COLLATE NOCASE"
        case .path: return "a.path"
        case .mediaType: return "a.media_type"
        case .latitude: return "a.latitude"
        case .longitude: return "a.longitude"
        case .isFavorite: return "a.is_favorite"
        }
    }

    static func column(_ key: PredicateKey) -> String {
        switch key {
        case .mediaType: return "a.media_type"
        case .subtypes: return "a.subtypes"
        case .localDateTime: return "a.local_datetime"
        case .localDate: return "a.day"
        case .pixelWidth: return "a.pixel_width"
        case .pixelHeight: return "a.pixel_height"
        case .isFavorite: return "a.is_favorite"
        case .isHidden: return "a.is_hidden"
        case .make: return "a.make"
        case .model: return "a.model"
        case .path: return "a.path"
        case .latitude: return "a.latitude"
        case .longitude: return "a.longitude"
        case .duration: return "a.duration"
        case .addedDate: return "a.added_at"
        case .keywords: return "a.keywords"
        case .frameRate: return "a.frame_rate"
        case .bitRate: return "a.bit_rate"
        case .videoCodec: return "a.video_codec"
        case .audioCodec: return "a.audio_codec"
        // The asset's place (NULL without one, or without that name), one lookup by rowid.
        case .city: return "(SELECT p.city FROM places p WHERE p.id = a.place_id)"
        case .region: return "(SELECT p.region FROM places p WHERE p.id = a.place_id)"
        case .country: return "(SELECT p.country FROM places p WHERE p.id = a.place_id)"
        case .countryCode: return "(SELECT p.country_code FROM places p WHERE p.id = a.place_id)"
        case .location: return "a.latitude"
        }
    }

    /// The latitudes and longitudes within `kilometres` of a point: the whole longitude range
    /// near a pole (the circle holds it), west above east across the antimeridian.
    static func boundingBox(latitude: Double, longitude: Double, kilometres: Double) -> (south: Double, west: Double, north: Double, east: Double) {
        let degrees = kilometres / 6371.0088 * 180 / .pi
        let south = max(-90, latitude - degrees), north = min(90, latitude + degrees)
        guard south > -90, north < 90 else { return (south, -180, north, 180) }
        // The widest longitude span of the circle, at the latitude where it touches its meridians.
        let ratio = sin(degrees * .pi / 180) / cos(latitude * .pi / 180)
        guard ratio < 1 else { return (south, -180, north, 180) }
        let span = asin(ratio) * 180 / .pi
        var west = longitude - span, east = longitude + span
        if west < -180 { west += 360 }
        if east > 180 { east -= 360 }
        return (south, west, north, east)
    }

    /// `text` as a LIKE pattern that matches it literally (with `ESCAPE '\'`).
    static func likeLiteral(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            if c == "\\" || c == "%" || c == "_" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(c)
        }
        return out
    }

    /// The smallest byte string above every string that starts with `prefix`, or `nil` when
    /// there is none (empty, or all 0xFF): the open end of a BEGINSWITH range on BLOBs.
    static func upperBound(_ prefix: [UInt8]) -> [UInt8]? {
        var b = prefix
        while let last = b.last, last == 0xFF { b.removeLast() }
        guard !b.isEmpty else { return nil }
        b[b.count - 1] += 1
        return b
    }

    struct Compiler {
        var next: Int
        var bindings: [SQLValue] = []

        mutating func bind(_ v: SQLValue) -> String {
            bindings.append(v)
            next += 1
            return "?\(next - 1)"
        }

        /// `p`, or its negation: never NULL.
        mutating func compile(_ p: AssetPredicate, negated: Bool) -> String {
            switch p {
            case .not(let q): return compile(q, negated: !negated)
            case .comparison(let c):
                let s = comparison(c)
                return negated ? "NOT " + s : s
            case .and(let ps), .or(let ps):
                var isAnd = false
                if case .and = p { isAnd = true }
                if negated { isAnd.toggle() }
                guard !ps.isEmpty else { return isAnd ? "1" : "0" }
                // Deepest first (stable among equals): see the type's comment.
                let ordered = ps.enumerated().sorted { ($0.element.height, -$0.offset) > ($1.element.height, -$1.offset) }
                let parts = ordered.map { item -> String in
                    let s = compile(item.element, negated: negated)
                    if case .comparison = item.element.withoutNot { return s }
                    return "(" + s + ")"
                }
                return parts.joined(separator: isAnd ? " AND " : " OR ")
            }
        }

        /// A comparison in parentheses (or a single term), never NULL.
        mutating func comparison(_ c: PredicateComparison) -> String {
            let key = c.key
            let col = PredicateSQL.column(key)
            switch key.valueType {
            case .keywords: return keywords(c)
            case .localDateTime: return localDateTime(c)
            case .subtypes:
                switch c.operation {
                case .contains(.subtype(let s)): return "((a.subtypes & \(AssetColumns.bit(s))) != 0)"
                case .compare(.equal, .subtypes(let set)): return "(a.subtypes = \(bind(.integer(AssetColumns.mask(set)))))"
                case .compare(.notEqual, .subtypes(let set)): return "(a.subtypes != \(bind(.integer(AssetColumns.mask(set)))))"
                default: preconditionFailure("unchecked predicate: \(c)")
                }
            case .boolean:
                guard case .compare(let r, .boolean(let b)) = c.operation else { preconditionFailure("unchecked predicate: \(c)") }
                // The partial index `assets_favorites` is on `is_favorite != 0`: the same text.
                return (r == .equal) == b ? "(\(col) != 0)" : "(\(col) = 0)"
            case .localDate: return localDate(c)
            case .location: return location(c)
            case .mediaType, .instant, .integer, .real, .text, .path:
                break
            }
            let isText = key.valueType == .text
            let cmp = isText ? col + " COLLATE NOCASE" : col
            // A nullable column fails every comparison while NULL (and never yields NULL).
            let guardNull = key.isNullable ? "\(col) IS NOT NULL AND " : ""
            switch c.operation {
            case .compare(.equal, .null): return "(\(col) IS NULL)"
            case .compare(.notEqual, .null): return "(\(col) IS NOT NULL)"
            case .compare(.notEqual, let v): return "NOT (\(guardNull)\(cmp) = \(bind(value(v))))"
            case .compare(let r, let v): return "(\(guardNull)\(cmp) \(r == .equal ? "=" : r.rawValue) \(bind(value(v))))"
            case .isIn(let vs):
                guard !vs.isEmpty else { return "(0)" }
                return "(\(guardNull)\(cmp) IN (" + vs.map { bind(value($0)) }.joined(separator: ", ") + "))"
            case .between(let lo, let hi):
                return "(\(guardNull)\(cmp) BETWEEN \(bind(value(lo))) AND \(bind(value(hi))))"
            case .contains(.bytes(let b)):
                return "(instr(a.path, \(bind(.blob(b)))) > 0)"
            case .beginsWith(.bytes(let b)):
                guard !b.isEmpty else { return "(1)" }
                let low = bind(.blob(b))
                guard let upper = PredicateSQL.upperBound(b) else { return "(a.path >= \(low))" }
                return "(a.path >= \(low) AND a.path < \(bind(.blob(upper))))"
            case .contains(.text(let s)):
                return "(\(guardNull)\(col) LIKE \(bind(.text("%" + PredicateSQL.likeLiteral(s) + "%"))) ESCAPE '\\')"
            case .beginsWith(.text(let s)):
                return "(\(guardNull)\(col) LIKE \(bind(.text(PredicateSQL.likeLiteral(s) + "%"))) ESCAPE '\\')"
            case .contains, .beginsWith, .within, .near:
                preconditionFailure("unchecked predicate: \(c)")
            }
        }

        /// `location WITHIN` and `location NEAR`: the coordinates' index (`assets_location`:
        /// latitude, then longitude) finds the assets in a box — one latitude range, its entries'
        /// longitudes in one span or two across the antimeridian — exactly; a circle's are those
        /// of its bounding box within its great-circle distance.
        mutating func location(_ c: PredicateComparison) -> String {
            func inBox(south: Double, west: Double, north: Double, east: Double) -> String {
                let lon = west <= east
                    ? "longitude BETWEEN \(bind(.real(west))) AND \(bind(.real(east)))"
                    : "(longitude >= \(bind(.real(west))) OR longitude <= \(bind(.real(east))))"
                return "a.pk IN (SELECT pk FROM assets INDEXED BY assets_location WHERE latitude IS NOT NULL "
                    + "AND longitude IS NOT NULL AND latitude BETWEEN \(bind(.real(south))) AND \(bind(.real(north))) AND \(lon))"
            }
            switch c.operation {
            case .within(.box(let s, let w, let n, let e)):
                return "(\(inBox(south: s, west: w, north: n, east: e)))"
            case .near(.circle(let lat, let lon, let km)):
                let box = PredicateSQL.boundingBox(latitude: lat, longitude: lon, kilometres: km)
                let candidates = inBox(south: box.south, west: box.west, north: box.north, east: box.east)
                // Haversine with SQLite's math functions: 2R·asin(√(sin²(Δφ/2) + cos φ1 cos φ2 sin²(Δλ/2))).
                let (p1, l1, r) = (bind(.real(lat * .pi / 180)), bind(.real(lon * .pi / 180)), bind(.real(km / 6371.0088)))
                let distance = """
                    2 * asin(min(1, sqrt(pow(sin((radians(a.latitude) - \(p1)) / 2), 2) + cos(\(p1)) * cos(radians(a.latitude)) \
                    * pow(sin((radians(a.longitude) - \(l1)) / 2), 2))))
                    """
                return "(\(candidates) AND a.latitude IS NOT NULL AND \(distance) <= \(r))"
            default: preconditionFailure("unchecked predicate: \(c)")
            }
        }

        /// The stored value for a typed one.
        func value(_ v: PredicateValue) -> SQLValue {
            switch v {
            case .null: return .null
            case .boolean(let b): return .integer(b ? 1 : 0)
            case .integer(let i): return .integer(i)
            case .real(let d): return .real(d)
            case .text(let s): return .text(s)
            case .bytes(let b): return .blob(b)
            case .mediaType(let t): return .text(t.rawValue)
            case .subtype(let s): return .integer(AssetColumns.bit(s))
            case .subtypes(let set): return .integer(AssetColumns.mask(set))
            case .localDateTime(let t): return .text(t.millisecondsText)
            case .localDate(let day): return .integer(Int64(day))
            case .instant(let ms): return .integer(ms)
            case .box, .circle: preconditionFailure("an area is no single value")
            }
        }

        /// `local_datetime` holds `...SS` when the source had no sub-seconds and `...SS.fff` when
        /// it had; both mean millisecond 0 when equal at the seconds, and text order is time order
        /// otherwise. So a time equals the stored text when that is its `...SS` or `...SS.000`
        /// form (millisecond 0) or its `...SS.fff` form; `<` compares with the lowest of these,
        /// `<=` with the highest. Plain text comparisons keep the `assets_order` index usable.
        mutating func localDateTime(_ c: PredicateComparison) -> String {
            func low(_ v: PredicateValue) -> String {
                guard case .localDateTime(let t) = v else { preconditionFailure("unchecked predicate: \(c)") }
                return t.millisecond == 0 ? t.secondsText : t.millisecondsText
            }
            func high(_ v: PredicateValue) -> String {
                guard case .localDateTime(let t) = v else { preconditionFailure("unchecked predicate: \(c)") }
                return t.millisecondsText
            }
            func forms(_ vs: [PredicateValue]) -> [String] {
                var seen: Set<String> = []
                return vs.flatMap { [low($0), high($0)] }.filter { seen.insert($0).inserted }
            }
            switch c.operation {
            case .compare(.equal, let v):
                return "(a.local_datetime IN (" + forms([v]).map { bind(.text($0)) }.joined(separator: ", ") + "))"
            case .compare(.notEqual, let v):
                return "(a.local_datetime NOT IN (" + forms([v]).map { bind(.text($0)) }.joined(separator: ", ") + "))"
            case .compare(.less, let v): return "(a.local_datetime < \(bind(.text(low(v)))))"
            case .compare(.lessOrEqual, let v): return "(a.local_datetime <= \(bind(.text(high(v)))))"
            case .compare(.greater, let v): return "(a.local_datetime > \(bind(.text(high(v)))))"
            case .compare(.greaterOrEqual, let v): return "(a.local_datetime >= \(bind(.text(low(v)))))"
            case .isIn(let vs):
                guard !vs.isEmpty else { return "(0)" }
                return "(a.local_datetime IN (" + forms(vs).map { bind(.text($0)) }.joined(separator: ", ") + "))"
            case .between(let lo, let hi):
                return "(a.local_datetime >= \(bind(.text(low(lo)))) AND a.local_datetime <= \(bind(.text(high(hi)))))"
            case .contains, .beginsWith, .within, .near: preconditionFailure("unchecked predicate: \(c)")
            }
        }

        /// A capture date as a range of `local_datetime` (`MomentGrouping.localDateTimeRange`),
        /// which the `assets_order` index answers; the same as comparing `day`, which is that
        /// text's date.
        mutating func localDate(_ c: PredicateComparison) -> String {
            func range(_ v: PredicateValue) -> (from: String, to: String) {
                guard case .localDate(let day) = v else { preconditionFailure("unchecked predicate: \(c)") }
                return MomentGrouping.localDateTimeRange(day: day)
            }
            func on(_ v: PredicateValue) -> String {
                let r = range(v)
                return "a.local_datetime >= \(bind(.text(r.from))) AND a.local_datetime < \(bind(.text(r.to)))"
            }
            switch c.operation {
            case .compare(.equal, let v): return "(\(on(v)))"
            case .compare(.notEqual, let v): return "NOT (\(on(v)))"
            case .compare(.less, let v): return "(a.local_datetime < \(bind(.text(range(v).from))))"
            case .compare(.lessOrEqual, let v): return "(a.local_datetime < \(bind(.text(range(v).to))))"
            case .compare(.greater, let v): return "(a.local_datetime >= \(bind(.text(range(v).to))))"
            case .compare(.greaterOrEqual, let v): return "(a.local_datetime >= \(bind(.text(range(v).from))))"
            case .isIn(let vs):
                guard !vs.isEmpty else { return "(0)" }
                return "(" + vs.map { "(" + on($0) + ")" }.joined(separator: " OR ") + ")"
            case .between(let lo, let hi):
                return "(a.local_datetime >= \(bind(.text(range(lo).from))) AND a.local_datetime < \(bind(.text(range(hi).to))))"
            case .contains, .beginsWith, .within, .near: preconditionFailure("unchecked predicate: \(c)")
            }
        }

        /// An asset's keywords are its files' (`a.keywords`, one per line) and its taggers'
        /// (`asset_keywords`, NOCASE); a member matches ignoring ASCII case in both. The taggers'
        /// side is one uncorrelated subquery on `asset_keywords_keyword`, built once per query.
        mutating func keywords(_ c: PredicateComparison) -> String {
            let words: [String]
            switch c.operation {
            case .contains(.text(let s)): words = [s]
            case .isIn(let vs):
                words = vs.map { v in
                    guard case .text(let s) = v else { preconditionFailure("unchecked predicate: \(c)") }
                    return s
                }
            default: preconditionFailure("unchecked predicate: \(c)")
            }
            guard !words.isEmpty else { return "(0)" }
            var terms: [String] = []
            // A stored file keyword is never empty and never holds a line break.
            for w in words where !w.isEmpty && !w.unicodeScalars.contains("\n") {
                let needle = bind(.text("\n" + Keywords.folded(w) + "\n"))
                terms.append("instr(char(10) || lower(coalesce(a.keywords, '')) || char(10), \(needle)) > 0")
            }
            let list = words.map { bind(.text($0)) }.joined(separator: ", ")
            terms.append("a.id IN (SELECT k.asset_id FROM asset_keywords k WHERE k.keyword IN (\(list)))")
            return "(" + terms.joined(separator: " OR ") + ")"
        }
    }
}

extension AssetPredicate {
    /// The predicate under any NOTs.
    fileprivate var withoutNot: AssetPredicate {
        if case .not(let p) = self { return p.withoutNot }
        return self
    }
}

/// A query resolved against a scope: the FROM, the WHERE and the default order, with bindings.
struct AssetQueryPlan {
    var from: String
    var condition: String
    var order: String
    var bindings: [SQLValue]
    /// No predicate and no sort: the SQL is one of a few fixed texts, worth the statement cache.
    var isFixed: Bool

    /// The next free parameter number.
    var nextParameter: Int { bindings.count + 1 }

    /// A page of full rows; LIMIT and OFFSET are the two parameters after the bindings.
    var pageSQL: String {
        """
        SELECT \(AssetColumns.select) FROM \(from) WHERE \(condition)
        ORDER BY \(order) LIMIT ?\(nextParameter) OFFSET ?\(nextParameter + 1)
        """
    }

    /// The number of rows the page is cut from.
    var countSQL: String { "SELECT count(*) FROM \(from) WHERE \(condition)" }

    /// Every pk, in order: a whole result.
    var pksSQL: String { "SELECT a.pk FROM \(from) WHERE \(condition) ORDER BY \(sortedOrder)" }

    /// Every pk and id, in order.
    var idsSQL: String { "SELECT a.pk, a.id FROM \(from) WHERE \(condition) ORDER BY \(sortedOrder)" }

    /// The order for a whole result: SQLite sorts what the condition selects. The unary `+`
    /// (no change to the value or its collation) keeps an index on the first key from being
    /// walked instead, which costs a row lookup per asset: twice the time of the sort for a
    /// predicate over 100,000 assets (measured), and more for the whole library.
    var sortedOrder: String { "+" + order }
}

extension Connection {
    /// A statement prepared for one use, not kept in the cache: predicate queries differ in
    /// their text (the shape of the predicate, the length of lists), and caching each would
    /// grow the cache without bound. Finalized when released.
    func transientStatement(_ sql: String) throws(StoreError) -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, 0, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql: sql) }
        return Statement(handle: stmt, connection: self, sql: sql)
    }
}

extension IndexReader {
    /// Visibility when hidden assets are wanted: everything not in Recently Deleted.
    static let notDeleted = "a.deleted_at IS NULL"
    /// Not a burst's member other than its representative.
    static let notBurstExtra = "(a.burst_id IS NULL OR a.represents_burst != 0)"

    /// Resolves the scope; `nil` when the collection does not exist.
    func plan(_ query: AssetQuery, in scope: AssetScope, now: Int64) throws(StoreError) -> AssetQueryPlan? {
        var visibility = query.includeHidden ? Self.notDeleted : Self.visible
        // A burst is its representative alone, but in the burst itself.
        if !query.includeAllBurstAssets, !scope.isBurst { visibility += " AND \(Self.notBurstExtra)" }
        let byCapture = AssetColumns.captureOrder
        var plan: AssetQueryPlan
        switch scope {
        case .library:
            plan = AssetQueryPlan(from: "assets a", condition: visibility, order: byCapture, bindings: [], isFixed: true)
        case .moment(let day):
            guard try db.scalar("SELECT 1 FROM moments WHERE day = ?1", .integer(Int64(day))).int64 != nil else { return nil }
            let range = MomentGrouping.localDateTimeRange(day: day)
            plan = AssetQueryPlan(from: "assets a",
                                  condition: "a.local_datetime >= ?2 AND a.local_datetime < ?3 AND a.day = ?1 AND \(visibility)",
                                  order: byCapture, bindings: [.integer(Int64(day)), .text(range.from), .text(range.to)],
                                  isFixed: true)
        case .folderAlbum(let id):
            guard let dir = try db.scalar("SELECT id FROM directories WHERE album_id = ?1", .text(id)).int64 else { return nil }
            plan = AssetQueryPlan(from: "assets a", condition: "a.directory_id = ?1 AND \(visibility)", order: byCapture,
                                  bindings: [.integer(dir)], isFixed: true)
        case .smartAlbum(let album):
            var (condition, order) = Self.smartAlbumSQL(album, now: now)
            if query.includeHidden, album.kind != .hidden, album.kind != .recentlyDeleted {
                // The album's rule with hidden assets let in: its visibility clause relaxed.
                condition = condition.replacing(Self.visible, with: Self.notDeleted)
            }
            // Recently Deleted and Hidden list every member: a trashed or hidden photo must be
            // found to be restored or shown again.
            if !query.includeAllBurstAssets, album.kind != .recentlyDeleted, album.kind != .hidden {
                condition += " AND \(Self.notBurstExtra)"
            }
            plan = AssetQueryPlan(from: "assets a", condition: condition, order: order, bindings: [], isFixed: true)
        case .burst(let identifier):
            guard try db.scalar("SELECT 1 FROM assets WHERE burst_id = ?1 AND deleted_at IS NULL LIMIT 1", .text(identifier)).int64 != nil
            else { return nil }
            plan = AssetQueryPlan(from: "assets a", condition: "a.burst_id = ?1 AND \(visibility)", order: byCapture,
                                  bindings: [.text(identifier)], isFixed: true)
        case .place(let id):
            let rows = try placeRows(of: id)
            guard !rows.isEmpty else { return nil }
            // The terms of the partial index `assets_place`, so that it is walked.
            plan = AssetQueryPlan(from: "assets a",
                                  condition: "a.place_id IN (SELECT value FROM json_each(?1)) AND a.place_id IS NOT NULL AND \(visibility)",
                                  order: byCapture, bindings: [.text("[" + rows.map(String.init).joined(separator: ",") + "]")],
                                  isFixed: true)
        case .userAlbum(let id):
            guard try db.scalar("SELECT 1 FROM user_albums WHERE id = ?1", .text(id)).int64 != nil else { return nil }
            plan = AssetQueryPlan(from: "assets a JOIN user_album_assets u ON u.asset_id = a.id",
                                  condition: "u.album_id = ?1 AND \(visibility)", order: "u.position, a.path, a.id",
                                  bindings: [.text(id)], isFixed: true)
        }
        if let predicate = query.predicate {
            let fragment = PredicateSQL.compile(predicate, firstParameter: plan.nextParameter)
            // The predicate leftmost: see PredicateSQL on SQLite's parser stack.
            plan.condition = "(\(fragment.sql)) AND \(plan.condition)"
            plan.bindings += fragment.bindings
            plan.isFixed = false
        }
        if !query.sort.isEmpty {
            plan.order = PredicateSQL.orderBy(query.sort)
            plan.isFixed = false
        }
        return plan
    }

    private func statement(_ sql: String, _ plan: AssetQueryPlan) throws(StoreError) -> Statement {
        let s = plan.isFixed ? try db.statement(sql) : try db.transientStatement(sql)
        for (i, v) in plan.bindings.enumerated() { try s.bind(v, at: Int32(i + 1)) }
        return s
    }

    /// Whether a fetch is answered a page at a time — LIMIT and OFFSET on an index walk, the
    /// total from the kept counters or a count — rather than from its whole result: the library
    /// without a predicate near its start, in an order an index walks (capture or added time); a
    /// moment, folder album, burst or user album in its own order (indexed and small); and
    /// Recently Added, whose members move with the clock (its results are never kept).
    static func pagesDirectly(_ query: AssetQuery, in scope: AssetScope, offset: Int) -> Bool {
        if case .smartAlbum(let album) = scope, album.kind == .recentlyAdded { return true }
        guard query.predicate == nil else { return false }
        switch scope {
        case .library:
            guard offset < 10_000 else { return false }
            guard let first = query.sort.descriptors.first else { return true }
            return first.key == .localDateTime || first.key == .addedDate
        case .moment, .folderAlbum, .burst, .userAlbum:
            return query.sort.isEmpty
        case .smartAlbum, .place:
            return false
        }
    }

    /// A page of the assets `query` selects in `scope`, in its order, each with its resources,
    /// and how many there are in all; `nil` when the collection does not exist. Assets in
    /// Recently Deleted are only in that smart album. Run it inside `consistent` for a page and
    /// total from one snapshot.
    ///
    /// What is kept of the query's result (`FetchResults`) decides the work: its pks — the page
    /// is read by pk; nothing, and the first page is asked — the page (LIMIT) and a count, the
    /// total kept; its total, or a later page asked first — the whole result, every selected pk
    /// in order by one statement, kept. So a new query's first page costs what SQL's first page
    /// costs, the pages after it a page. Some fetches always page directly (`pagesDirectly`).
    public func assets(_ query: AssetQuery, in scope: AssetScope = .library, limit: Int, offset: Int,
                       now: Int64) throws(StoreError) -> (assets: [Asset], total: Int)? {
        let generation = results?.withLock { $0.generation }
        return try consistent { () throws(StoreError) -> (assets: [Asset], total: Int)? in
            guard let plan = try plan(query, in: scope, now: now) else { return nil }
            if Self.pagesDirectly(query, in: scope, offset: offset) {
                return (try page(plan, limit: limit, offset: offset), try total(plan, query, scope))
            }
            let key = FetchResults.Key(scope: scope, query: query)
            let stamp = try self.stamp(generation)
            let held = stamp.flatMap { stamp in results?.withLock { $0.held(key, at: stamp) } }
            switch held {
            case .pks(let pks)?:
                return (try assets(pks, limit: limit, offset: offset), pks.count)
            case nil where offset == 0:
                let total = try total(plan, query, scope)
                keep(.total(total), as: key, at: stamp)
                return (try page(plan, limit: limit, offset: offset), total)
            case .total?, .first?, nil:
                let s = try statement(plan.pksSQL, plan)
                defer { s.reset() }
                var pks = PKList()
                while try s.step() { pks.append(s.int64(0)) }
                if let wide = pks.wide { return (try assets(wide, limit: limit, offset: offset), wide.count) }
                keep(.pks(pks.compact), as: key, at: stamp)
                return (try assets(pks.compact, limit: limit, offset: offset), pks.compact.count)
            }
        }
    }

    /// A page of the library's assets that match a text search (`SearchQuery`) and `query`'s
    /// predicate, most relevant first (`SearchSources`: each word scores by the best source it
    /// is found in, the scores add up) then newest, or in `query`'s sort; and how many match in
    /// all. Without a predicate or a sort, `rankedSearch` answers (unless `ranked` is false:
    /// the tests compare the two; `readAtMost` is its tier size read by pk rather than walked
    /// for; `grouped` false never answers a word by its places' and folders' counts, `keeps`
    /// false neither takes nor keeps a result), its first assets in order kept
    /// (`FetchResults`) for the pages after; else SQL joins each term's matches.
    public func search(_ text: SearchQuery, _ query: AssetQuery, limit: Int, offset: Int, now: Int64,
                       ranked: Bool = true, readAtMost: Int = 2_000, grouped: Bool = true,
                       keeps: Bool = true) throws(StoreError) -> (assets: [Asset], total: Int) {
        let generation = keeps ? results?.withLock { $0.generation } : nil
        return try consistent { () throws(StoreError) -> (assets: [Asset], total: Int) in
            if ranked, query.predicate == nil, query.sort.isEmpty {
                let key = FetchResults.Key(scope: .library, query: query, search: text)
                let stamp = try self.stamp(generation)
                let held = stamp.flatMap { stamp in results?.withLock { $0.held(key, at: stamp) } }
                let wanted = max(0, offset) + max(0, limit)
                if case .first(let pks, let total)? = held, wanted <= pks.count || pks.count == total {
                    return (try assets(pks, limit: limit, offset: offset), total)
                }
                // Up to twice what this page needs, and twice what was kept: a client paging on
                // asks again at every doubling, not at every page.
                let (ordered, total) = try rankedSearch(text, query, needed: wanted, wanted: max(2 * wanted, 2 * (held?.pkCount ?? 0)),
                                                        readAtMost: readAtMost, grouped: grouped)
                var pks = PKList()
                ordered.forEach { pks.append($0) }
                if pks.wide == nil { keep(.first(pks.compact, total: total), as: key, at: stamp) }
                return (try assets(ordered, limit: limit, offset: offset), total)
            }
            guard var plan = try plan(query, in: .library, now: now) else { return ([], 0) }
            var matches: [String] = []
            for term in text.terms {
                matches.append(SearchSources.matches(parameter: plan.nextParameter))
                plan.bindings.append(.text(term.ftsMatch))
            }
            let scores = matches.indices.dropFirst().reduce(
                "SELECT t0.pk AS hit, \(matches.indices.map { "t\($0).w" }.joined(separator: " + ")) AS score FROM (\(matches[0])) t0"
            ) { sql, i in sql + " JOIN (\(matches[i])) t\(i) ON t\(i).pk = t0.pk" }
            plan.from = "assets a JOIN (\(scores)) s ON s.hit = a.pk"
            if query.sort.isEmpty { plan.order = "s.score DESC, a.local_datetime DESC, a.pk DESC" }
            plan.isFixed = false
            return (try page(plan, limit: limit, offset: offset), try count(plan))
        }
    }

    /// How many rows the plan selects.
    private func count(_ plan: AssetQueryPlan) throws(StoreError) -> Int {
        let s = try statement(plan.countSQL, plan)
        defer { s.reset() }
        _ = try s.step()
        return s.int(0)
    }

    /// A page by LIMIT and OFFSET on the plan's order.
    private func page(_ plan: AssetQueryPlan, limit: Int, offset: Int) throws(StoreError) -> [Asset] {
        let n = plan.nextParameter
        let s = try statement(plan.pageSQL, plan)
        s.bind(max(0, min(limit, Int(Int32.max))), at: Int32(n))
        s.bind(max(0, offset), at: Int32(n + 1))
        return try attachResources(try AssetColumns.decodeAll(s))
    }

    /// Where this read is, for kept results: the generation seen before the read began and the
    /// change token in it (nil for a reader that keeps none).
    private func stamp(_ generation: Int?) throws(StoreError) -> FetchResults.Stamp? {
        guard let generation else { return nil }
        return FetchResults.Stamp(generation: generation, token: try journalBounds().current)
    }

    /// Keeps what was read of a result, unless its scope moves with the clock (Recently Added).
    private func keep(_ held: FetchResults.Held, as key: FetchResults.Key, at stamp: FetchResults.Stamp?) {
        if case .smartAlbum(let album) = key.scope, album.kind == .recentlyAdded { return }
        guard let stamp else { return }
        results?.withLock { $0.keep(key, at: stamp, held) }
    }

    /// The assets at `offset..<offset + limit` of a whole result, read in this transaction, in
    /// that order.
    func assets(_ pks: some RandomAccessCollection<some BinaryInteger>, limit: Int, offset: Int) throws(StoreError) -> [Asset] {
        let offset = max(0, offset)
        guard offset < pks.count, limit > 0 else { return [] }
        let start = pks.index(pks.startIndex, offsetBy: offset)
        let end = pks.index(start, offsetBy: min(limit, pks.count - offset))
        let page = pks[start..<end].map { Int64($0) }
        let s = try db.statement("SELECT \(AssetColumns.select) FROM assets a WHERE a.pk IN (SELECT value FROM json_each(:pks))")
        s.bind(":pks", to: "[" + page.map(String.init).joined(separator: ",") + "]")
        var byPK: [Int64: (pk: Int64, asset: Asset)] = [:]
        for row in try AssetColumns.decodeAll(s) { byPK[row.pk] = row }
        // The result is of this snapshot: every pk is there.
        let rows = try page.map { pk throws(StoreError) in
            guard let row = byPK[pk] else { throw StoreError(code: .sqlite, message: "a kept fetch result names asset \(pk), which is gone") }
            return row
        }
        return try attachResources(rows)
    }

    /// How many assets the plan selects: the kept counters for the unfiltered library (O(1)),
    /// a count with the page's condition otherwise (and when bursts' other members are left out).
    private func total(_ plan: AssetQueryPlan, _ query: AssetQuery, _ scope: AssetScope) throws(StoreError) -> Int {
        if scope == .library, query.predicate == nil {
            // The kept counters count every member of a burst.
            let countsHold = query.includeAllBurstAssets ? true : !(try hasBurstExtras())
            if countsHold { return query.includeHidden ? try assetCount() : try visibleAssetCount() }
        }
        let s = try statement(plan.countSQL, plan)
        defer { s.reset() }
        _ = try s.step()
        return s.int(0)
    }

    /// Whether some burst has a member besides its representative outside Recently Deleted
    /// (the `assets_burst` index: bursts are few).
    func hasBurstExtras() throws(StoreError) -> Bool {
        try db.scalar("SELECT 1 FROM assets WHERE burst_id IS NOT NULL AND represents_burst = 0 AND deleted_at IS NULL LIMIT 1")
            .int64 != nil
    }

    /// The ids of every asset `query` selects in `scope`, in its order (for change details: a
    /// client diffs them against what it holds); `nil` when the collection does not exist. Reads
    /// two columns per row (no decoding, no resources) and keeps the result's pks, so that the
    /// pages a client then asks of it cost a page.
    public func assetIDs(_ query: AssetQuery, in scope: AssetScope = .library, now: Int64) throws(StoreError) -> [AssetID]? {
        let generation = results?.withLock { $0.generation }
        return try consistent { () throws(StoreError) -> [AssetID]? in
            guard let plan = try plan(query, in: scope, now: now) else { return nil }
            let s = try statement(plan.idsSQL, plan)
            defer { s.reset() }
            var ids: [AssetID] = []
            var pks = PKList()
            while try s.step() {
                guard let id = AssetID(rawValue: s.string(1)) else { throw StoreError.undecodable(table: "assets", key: s.string(1)) }
                pks.append(s.int64(0))
                ids.append(id)
            }
            if pks.wide == nil { keep(.pks(pks.compact), as: FetchResults.Key(scope: scope, query: query), at: try stamp(generation)) }
            return ids
        }
    }
}
