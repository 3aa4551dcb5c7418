import CLinux
import PhotoModel

/// One bit per catalog record.
struct Bitmap: Sendable {
    private(set) var words: [UInt64]
    let count: Int

    init(count: Int, filled: Bool) {
        self.count = count
        words = [UInt64](repeating: filled ? ~0 : 0, count: (count + 63) / 64)
        if filled { clearTail() }
    }

    init(words: [UInt64], count: Int) {
        self.words = words
        self.count = count
    }

    subscript(i: Int) -> Bool { words[i >> 6] & (1 << UInt64(i & 63)) != 0 }

    mutating func insert(_ i: Int) { words[i >> 6] |= 1 << UInt64(i & 63) }

    mutating func formIntersection(_ other: Bitmap) {
        for k in words.indices { words[k] &= other.words[k] }
    }

    mutating func formUnion(_ other: Bitmap) {
        for k in words.indices { words[k] |= other.words[k] }
    }

    mutating func invert() {
        for k in words.indices { words[k] = ~words[k] }
        clearTail()
    }

    /// How many bits are set.
    var cardinality: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    private mutating func clearTail() {
        let extra = words.count * 64 - count
        if extra > 0, !words.isEmpty { words[words.count - 1] &= ~0 >> UInt64(extra) }
    }
}

/// A predicate evaluated on a catalog snapshot, with exactly the semantics of its SQL
/// compilation (`PredicateSQL`, documented in docs/PREDICATES.md): each comparison is
/// two-valued — a missing value fails every comparison except `== null`, and `!=` is `NOT ==` —
/// text compares ignoring ASCII case, paths byte for byte, `localDateTime` by its milliseconds.
/// The tests hold the two to the same answers.
///
/// It runs a column at a time: each comparison is one tight pass over the records into a
/// bitmap (no call or reference count per record), and AND, OR and NOT combine bitmaps word by
/// word.
enum CatalogPredicate {
    /// The records `predicate` selects (all of them without one).
    static func evaluate(_ predicate: AssetPredicate?, _ snapshot: CatalogSnapshot) -> Bitmap {
        guard let predicate else { return Bitmap(count: snapshot.count, filled: true) }
        return evaluate(predicate, snapshot)
    }

    static func evaluate(_ p: AssetPredicate, _ snapshot: CatalogSnapshot) -> Bitmap {
        switch p {
        case .not(let q):
            var b = evaluate(q, snapshot)
            b.invert()
            return b
        case .and(let ps):
            var b = Bitmap(count: snapshot.count, filled: true)
            for q in ps { b.formIntersection(evaluate(q, snapshot)) }
            return b
        case .or(let ps):
            var b = Bitmap(count: snapshot.count, filled: false)
            for q in ps { b.formUnion(evaluate(q, snapshot)) }
            return b
        case .comparison(let c):
            return comparison(c, snapshot)
        }
    }

    /// The records whose value in `column` passes `test`: one pass, a word of bits at a time.
    @inline(__always)
    static func scan<T>(_ column: CatalogColumn<T>, _ test: (T) -> Bool) -> Bitmap {
        let n = column.count
        var words = [UInt64](repeating: 0, count: (n + 63) / 64)
        column.withUnsafeBufferPointer { c in
            words.withUnsafeMutableBufferPointer { w in
                var i = 0, k = 0
                while i < n {
                    let end = min(i + 64, n)
                    var word: UInt64 = 0
                    var bit: UInt64 = 1
                    while i < end {
                        if test(c[i]) { word |= bit }
                        bit &<<= 1
                        i += 1
                    }
                    w[k] = word
                    k += 1
                }
            }
        }
        return Bitmap(words: words, count: n)
    }

    /// No record.
    static func none(_ s: CatalogSnapshot) -> Bitmap { Bitmap(count: s.count, filled: false) }

    /// Every record.
    static func all(_ s: CatalogSnapshot) -> Bitmap { Bitmap(count: s.count, filled: true) }

    /// One comparison.
    static func comparison(_ c: PredicateComparison, _ s: CatalogSnapshot) -> Bitmap {
        let col = s.columns
        switch c.key {
        case .mediaType:
            let video = CatalogColumns.Flags.video
            return compare(c.operation, s, col.flags, { Int64($0 & video != 0 ? 1 : 0) }) { v -> Int64? in
                guard case .mediaType(let t) = v else { return nil }
                return t == .video ? 1 : 0
            }
        case .subtypes:
            switch c.operation {
            case .contains(.subtype(let st)):
                let bit = AssetColumns.bit(st)
                return scan(col.subtypes) { $0 & bit != 0 }
            case .compare(.equal, .subtypes(let set)):
                let mask = AssetColumns.mask(set)
                return scan(col.subtypes) { $0 == mask }
            case .compare(.notEqual, .subtypes(let set)):
                let mask = AssetColumns.mask(set)
                return scan(col.subtypes) { $0 != mask }
            default: return none(s)
            }
        case .localDateTime:
            return compare(c.operation, s, col.time, { $0 }) { v -> Int64? in
                guard case .localDateTime(let t) = v else { return nil }
                return CatalogSnapshot.milliseconds(year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute,
                                                    second: t.second, millisecond: t.millisecond)
            }
        case .localDate:
            return compare(c.operation, s, col.day, { Int64($0) }) { v -> Int64? in
                guard case .localDate(let day) = v else { return nil }
                return Int64(day)
            }
        case .addedDate:
            return compare(c.operation, s, col.added, { $0 }) { v -> Int64? in
                guard case .instant(let ms) = v else { return nil }
                return ms
            }
        case .pixelWidth:
            return compareOptional(c.operation, s, col.width, { $0 == CatalogColumns.noInteger ? nil : $0 }, integer)
        case .pixelHeight:
            return compareOptional(c.operation, s, col.height, { $0 == CatalogColumns.noInteger ? nil : $0 }, integer)
        case .latitude:
            return compareOptional(c.operation, s, col.latitude, { $0.isNaN ? nil : $0 }, real)
        case .longitude:
            return compareOptional(c.operation, s, col.longitude, { $0.isNaN ? nil : $0 }, real)
        case .duration:
            return compareOptional(c.operation, s, col.duration, { $0.isNaN ? nil : $0 }, real)
        case .frameRate:
            return compareOptional(c.operation, s, col.frameRate, { $0.isNaN ? nil : $0 }, real)
        case .bitRate:
            return compareOptional(c.operation, s, col.bitRate, { $0 == CatalogColumns.noInteger ? nil : $0 }, integer)
        case .isFavorite, .isHidden:
            guard case .compare(let r, .boolean(let b)) = c.operation else { return none(s) }
            let wanted = (r == .equal) == b
            let flag = c.key == .isFavorite ? CatalogColumns.Flags.favorite : CatalogColumns.Flags.hidden
            return scan(col.flags) { ($0 & flag != 0) == wanted }
        case .make, .model, .videoCodec, .audioCodec:
            return text(c, s)
        case .path:
            return path(c.operation, s)
        case .keywords:
            var words: [String] = []
            switch c.operation {
            case .contains(.text(let w)): words = [w]
            case .isIn(let vs):
                for v in vs { if case .text(let w) = v { words.append(w) } }
            default: return none(s)
            }
            let wanted = Set(words.map(Keywords.folded))
            guard !wanted.isEmpty else { return none(s) }
            return s.keywords.records(withAny: wanted)
        }
    }

    static func integer(_ v: PredicateValue) -> Int64? {
        if case .integer(let i) = v { return i }
        return nil
    }

    static func real(_ v: PredicateValue) -> Double? {
        switch v {
        case .real(let d): return d
        case .integer(let i): return Double(i)
        default: return nil
        }
    }

    /// A comparison on a value every record has (`field` reads it from the column's element).
    @inline(__always)
    static func compare<T, V: Comparable>(_ op: PredicateComparison.Operation, _ s: CatalogSnapshot, _ column: CatalogColumn<T>,
                                          _ field: (T) -> V, _ value: (PredicateValue) -> V?) -> Bitmap {
        switch op {
        case .compare(.equal, .null): return none(s)
        case .compare(.notEqual, .null): return all(s)
        case .compare(let r, let v):
            guard let x = value(v) else { return none(s) }
            switch r {
            case .equal: return scan(column) { field($0) == x }
            case .notEqual: return scan(column) { field($0) != x }
            case .less: return scan(column) { field($0) < x }
            case .lessOrEqual: return scan(column) { field($0) <= x }
            case .greater: return scan(column) { field($0) > x }
            case .greaterOrEqual: return scan(column) { field($0) >= x }
            }
        case .isIn(let vs):
            let set = vs.compactMap(value)
            return scan(column) { set.contains(field($0)) }
        case .between(let lo, let hi):
            guard let a = value(lo), let b = value(hi) else { return none(s) }
            return scan(column) { a <= field($0) && field($0) <= b }
        case .contains, .beginsWith:
            return none(s)
        }
    }

    /// A comparison on a value a record may lack: nil fails all but `== null` (and passes `!=`).
    @inline(__always)
    static func compareOptional<T, V: Comparable>(_ op: PredicateComparison.Operation, _ s: CatalogSnapshot, _ column: CatalogColumn<T>,
                                                  _ field: (T) -> V?, _ value: (PredicateValue) -> V?) -> Bitmap {
        switch op {
        case .compare(.equal, .null): return scan(column) { field($0) == nil }
        case .compare(.notEqual, .null): return scan(column) { field($0) != nil }
        case .compare(let r, let v):
            guard let x = value(v) else { return none(s) }
            switch r {
            case .equal: return scan(column) { field($0) == x }
            case .notEqual: return scan(column) { field($0) != x }
            case .less: return scan(column) { field($0).map { $0 < x } ?? false }
            case .lessOrEqual: return scan(column) { field($0).map { $0 <= x } ?? false }
            case .greater: return scan(column) { field($0).map { $0 > x } ?? false }
            case .greaterOrEqual: return scan(column) { field($0).map { $0 >= x } ?? false }
            }
        case .isIn(let vs):
            let set = vs.compactMap(value)
            return scan(column) { field($0).map { set.contains($0) } ?? false }
        case .between(let lo, let hi):
            guard let a = value(lo), let b = value(hi) else { return none(s) }
            return scan(column) { field($0).map { a <= $0 && $0 <= b } ?? false }
        case .contains, .beginsWith:
            return none(s)
        }
    }

    /// `make` and `model`: the comparison is decided once per distinct value, then looked up.
    static func text(_ c: PredicateComparison, _ s: CatalogSnapshot) -> Bitmap {
        let column = switch c.key {
        case .make: s.columns.make
        case .videoCodec: s.columns.videoCodec
        case .audioCodec: s.columns.audioCodec
        default: s.columns.model
        }
        var missingPasses = false
        let matches: (String) -> Bool
        switch c.operation {
        case .compare(.equal, .null):
            return scan(column) { $0 < 0 }
        case .compare(.notEqual, .null):
            return scan(column) { $0 >= 0 }
        case .compare(.equal, .text(let t)):
            let f = Keywords.folded(t)
            matches = { $0 == f }
        case .compare(.notEqual, .text(let t)):
            // NOT (present AND equal): a missing value passes.
            let f = Keywords.folded(t)
            matches = { $0 != f }
            missingPasses = true
        case .isIn(let vs):
            let set = Set(vs.compactMap { v -> String? in
                if case .text(let t) = v { return Keywords.folded(t) }
                return nil
            })
            matches = { set.contains($0) }
        case .contains(.text(let t)):
            let needle = Array(Keywords.folded(t).utf8)
            matches = { Self.contains(Array($0.utf8), needle) }
        case .beginsWith(.text(let t)):
            let prefix = Array(Keywords.folded(t).utf8)
            matches = { Array($0.utf8).starts(with: prefix) }
        default:
            return none(s)
        }
        // Per interned value, and one more slot (index -1 + 1 = 0) for a missing one.
        let table = [missingPasses] + s.strings.map(matches)
        return table.withUnsafeBufferPointer { t in scan(column) { t[Int($0) + 1] } }
    }

    /// `path`: bytes, compared as they are.
    static func path(_ op: PredicateComparison.Operation, _ s: CatalogSnapshot) -> Bitmap {
        func bytes(_ v: PredicateValue) -> [UInt8]? {
            if case .bytes(let b) = v { return b }
            return nil
        }
        let paths = s.paths
        switch op {
        case .compare(.equal, let v):
            guard let b = bytes(v) else { return none(s) }
            return paths.scan { $0.elementsEqual(b) }
        case .compare(.notEqual, let v):
            guard let b = bytes(v) else { return none(s) }
            return paths.scan { !$0.elementsEqual(b) }
        case .isIn(let vs):
            let set = Set(vs.compactMap(bytes))
            return paths.scan { set.contains(Array($0)) }
        case .contains(let v):
            guard let b = bytes(v) else { return none(s) }
            return paths.containing(b)
        case .beginsWith(let v):
            guard let b = bytes(v) else { return none(s) }
            return paths.scan { $0.starts(with: b) }
        default:
            return none(s)
        }
    }

    /// Whether `needle` occurs in `haystack` (an empty needle always does, as with `instr`).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBufferPointer { h in needle.withUnsafeBufferPointer { n in contains(h, n) } }
    }

    static func contains(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !n.isEmpty else { return true }
        guard h.count >= n.count, let hb = h.baseAddress, let nb = n.baseAddress else { return false }
        return photo_memcontains(hb, h.count, nb, n.count) != 0
    }
}
