import Foundation
import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

/// One asset as stored, read back with plain SQL: what the reference evaluator below runs
/// predicates on, so that SQL and Swift see the same data.
struct StoredAsset {
    var id: AssetID
    var path: [UInt8]
    var directory: [UInt8]
    var mediaType: MediaType
    var subtypes: Set<AssetSubtype>
    var localText: String
    var local: LocalDateTime
    var day: Int
    var width: Int?
    var height: Int?
    var favorite: Bool
    var hidden: Bool
    var deletedAt: Int64?
    var make: String?
    var model: String?
    var latitude: Double?
    var longitude: Double?
    var duration: Double?
    var frameRate: Double?
    var bitRate: Int64?
    var videoCodec: String?
    var audioCodec: String?
    var addedAt: Int64
    var fileKeywords: [String]
    var taggerKeywords: [String]
}

/// The semantics `docs/PREDICATES.md` gives, written plainly in Swift: the model the compiled
/// SQL must agree with.
enum Reference {
    static func lower(_ s: String) -> [UInt8] { s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 } }

    static func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard hay.count >= needle.count else { return false }
        for i in 0...(hay.count - needle.count) where hay[i..<(i + needle.count)].elementsEqual(needle) { return true }
        return false
    }

    static func matches(_ p: AssetPredicate, _ a: StoredAsset) -> Bool {
        switch p {
        case .and(let ps): return ps.allSatisfy { matches($0, a) }
        case .or(let ps): return ps.contains { matches($0, a) }
        case .not(let q): return !matches(q, a)
        case .comparison(let c): return matches(c, a)
        }
    }

    /// Two-valued: a missing value fails everything but `== null`; `!=` is `NOT ==`.
    static func relate<T: Comparable>(_ lhs: T?, _ op: PredicateComparison.Operation, _ typed: (PredicateValue) -> T) -> Bool {
        switch op {
        case .compare(.equal, .null): return lhs == nil
        case .compare(.notEqual, .null): return lhs != nil
        case .compare(.notEqual, let v): return !(lhs.map { $0 == typed(v) } ?? false)
        case .compare(let r, let v):
            guard let lhs else { return false }
            let rhs = typed(v)
            switch r {
            case .equal: return lhs == rhs
            case .less: return lhs < rhs
            case .lessOrEqual: return lhs <= rhs
            case .greater: return lhs > rhs
            case .greaterOrEqual: return lhs >= rhs
            case .notEqual: return lhs != rhs
            }
        case .isIn(let vs):
            guard let lhs else { return false }
            return vs.contains { typed($0) == lhs }
        case .between(let lo, let hi):
            guard let lhs else { return false }
            return typed(lo) <= lhs && lhs <= typed(hi)
        case .contains, .beginsWith, .within, .near: preconditionFailure()
        }
    }

    /// Great-circle km, as the store's SQL computes it.
    static func kilometres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let (p1, p2) = (lat1 * .pi / 180, lat2 * .pi / 180)
        let (dp, dl) = (p2 - p1, (lon2 - lon1) * .pi / 180)
        let h = pow(sin(dp / 2), 2) + cos(p1) * cos(p2) * pow(sin(dl / 2), 2)
        return 2 * 6371.0088 * asin(min(1, h.squareRoot()))
    }

    static func matches(_ c: PredicateComparison, _ a: StoredAsset) -> Bool {
        switch c.key {
        case .location:
            guard let lat = a.latitude, let lon = a.longitude else { return false }
            switch c.operation {
            case .within(.box(let s, let w, let n, let e)):
                return lat >= s && lat <= n && (w <= e ? (lon >= w && lon <= e) : (lon >= w || lon <= e))
            case .near(.circle(let plat, let plon, let km)):
                return kilometres(plat, plon, lat, lon) <= km * (1 + 1e-12)
            default: preconditionFailure()
            }
        case .mediaType:
            return relate(a.mediaType.rawValue, c.operation) { v in
                guard case .mediaType(let t) = v else { preconditionFailure() }
                return t.rawValue
            }
        case .subtypes:
            switch c.operation {
            case .contains(.subtype(let s)): return a.subtypes.contains(s)
            case .compare(.equal, .subtypes(let set)): return a.subtypes == set
            case .compare(.notEqual, .subtypes(let set)): return a.subtypes != set
            default: preconditionFailure()
            }
        case .localDateTime:
            return relate(PredicateDateTime(a.local), c.operation) { v in
                guard case .localDateTime(let t) = v else { preconditionFailure() }
                return t
            }
        case .localDate:
            return relate(a.local.dayNumber, c.operation) { v in
                guard case .localDate(let d) = v else { preconditionFailure() }
                return d
            }
        case .addedDate:
            return relate(a.addedAt, c.operation) { v in
                guard case .instant(let ms) = v else { preconditionFailure() }
                return ms
            }
        case .pixelWidth, .pixelHeight:
            return relate((c.key == .pixelWidth ? a.width : a.height).map(Int64.init), c.operation) { v in
                guard case .integer(let i) = v else { preconditionFailure() }
                return i
            }
        case .latitude, .longitude, .duration, .frameRate:
            let lhs = c.key == .latitude ? a.latitude : c.key == .longitude ? a.longitude : c.key == .duration ? a.duration : a.frameRate
            return relate(lhs, c.operation) { v in
                guard case .real(let d) = v else { preconditionFailure() }
                return d
            }
        case .isFavorite, .isHidden:
            return relate((c.key == .isFavorite ? a.favorite : a.hidden) ? 1 : 0, c.operation) { v in
                guard case .boolean(let b) = v else { preconditionFailure() }
                return b ? 1 : 0
            }
        case .bitRate:
            return relate(a.bitRate, c.operation) { v in
                guard case .integer(let i) = v else { preconditionFailure() }
                return i
            }
        case .make, .model, .videoCodec, .audioCodec, .city, .region, .country, .countryCode:
            // The fixture's database has no gazetteer and its files name no place: every place key is missing.
            let lhs: String? = switch c.key {
            case .make: a.make
            case .model: a.model
            case .videoCodec: a.videoCodec
            case .audioCodec: a.audioCodec
            default: nil
            }
            func text(_ v: PredicateValue) -> String {
                guard case .text(let s) = v else { preconditionFailure() }
                return s
            }
            switch c.operation {
            case .contains(let v): return lhs.map { contains(lower($0), lower(text(v))) } ?? false
            case .beginsWith(let v): return lhs.map { lower($0).starts(with: lower(text(v))) } ?? false
            default: return relate(lhs.map { lower($0).lexicographicallyPrecedesKey }, c.operation) { lower(text($0)).lexicographicallyPrecedesKey }
            }
        case .path:
            func bytes(_ v: PredicateValue) -> [UInt8] {
                guard case .bytes(let b) = v else { preconditionFailure() }
                return b
            }
            switch c.operation {
            case .contains(let v): return contains(a.path, bytes(v))
            case .beginsWith(let v): return a.path.starts(with: bytes(v))
            default: return relate(a.path.lexicographicallyPrecedesKey, c.operation) { bytes($0).lexicographicallyPrecedesKey }
            }
        case .keywords:
            let words: [PredicateValue]
            switch c.operation {
            case .contains(let v): words = [v]
            case .isIn(let vs): words = vs
            default: preconditionFailure()
            }
            let have = Set((a.fileKeywords + a.taggerKeywords).map(lower))
            return words.contains { v in
                guard case .text(let s) = v else { preconditionFailure() }
                return have.contains(lower(s))
            }
        }
    }
}

/// Byte strings ordered as SQLite orders BLOBs (memcmp, then length).
struct ByteKey: Comparable {
    var bytes: [UInt8]
    static func < (a: ByteKey, b: ByteKey) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}

extension Array where Element == UInt8 {
    var lexicographicallyPrecedesKey: ByteKey { ByteKey(bytes: self) }
}

/// A small library with every value shape the language distinguishes: ties in capture time
/// with and without milliseconds, NULLs, mixed-case makes, LIKE metacharacters, paths that are
/// not UTF-8, keywords from files and taggers, hidden, favorite and deleted assets, a user album.
struct QueryFixture {
    static let now: Int64 = 1_800_000_000_000
    static let day: Int64 = 86_400_000
    static let directories: [[UInt8]] = [
        Array("/lib/2019".utf8), Array("/lib/2020/trip".utf8), Array("/lib/café".utf8),
        Array("/lib/raw".utf8) + [0xFF, 0xFE], Array("/lib/a%_b\\".utf8),
    ]
    static let dates = ["2019-05-04T13:22:10", "2019-05-04T13:22:11", "2019-05-04T23:59:59", "2019-05-05T00:00:00",
                        "2020-02-29T12:00:00", "1999-12-31T23:59:59"]
    static let milliseconds = ["", ".000", ".001", ".054", ".999"]
    static let makes: [String?] = [nil, "Canon", "canon", "CANON", "NIKON CORPORATION", "Nikon", "Ünïcode Ltd", "100%_sure\\",
                                   "'); DROP TABLE assets; --", "Apple"]
    static let models: [String?] = [nil, "EOS R5", "eos r", "iPhone 12", "D850", "x_y%z"]
    static let sizes: [Int?] = [nil, 0, 1, 640, 4000, 6000]
    static let latitudes: [Double?] = [nil, -33.5, 0, 48.8566, 151.25]
    static let longitudes: [Double?] = [nil, 151.25, -0.0, 2.3522]
    static let durations: [Double?] = [nil, 0.5, 3, 60]
    static let frameRates: [Double?] = [nil, 23.976, 30, 120, 240]
    static let bitRates: [Int64?] = [nil, 0, 64_000, 12_000_000]
    static let videoCodecs: [String?] = [nil, "h264", "hevc", "HEVC", "vp9", "av1", "mpeg4"]
    static let audioCodecs: [String?] = [nil, "aac", "opus", "pcm_s16le"]
    static let added: [Int64] = [0, 1, 1000, 5 * day, 40 * day, 400 * day].map { now - $0 }
    static let fileKeywords = ["beach", "Sea", "sand", "Paris", "100%", "a_b", "Ärger"]
    static let taggerKeywords = ["BEACH", "dog", "Cat", "paris", "ärger"]

    let dir: TemporaryDirectory
    let db: Database
    var assets: [StoredAsset] = []
    /// Album id to path, of every directory.
    var folderAlbums: [String: [UInt8]] = [:]
    /// Days with a moment row.
    var momentDays: Set<Int> = []
    /// The user album's members and positions.
    var userAlbum: [AssetID: Int] = [:]

    init(seed: UInt64, count: Int = 120) throws {
        dir = try TemporaryDirectory("asset-query")
        db = try Database(path: dir("q.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        var g = SplitMix64(seed: seed)
        var files: [FileOutcome] = []
        var extras: [(path: [UInt8], subtypes: Int64, favorite: Bool, hidden: Bool, added: Int64, taggers: [String])] = []
        for i in 0..<count {
            let type: MediaType = Int.random(in: 0..<4, using: &g) == 0 ? .video : .image
            var name = Array((type == .video ? "VID_\(i).MP4" : "IMG_\(i).JPG").utf8)
            if i % 7 == 3 { name.insert(0x80, at: 1) }  // a name that is not UTF-8
            let directory = Self.directories.randomElement(using: &g)!
            let date = Self.dates.randomElement(using: &g)! + Self.milliseconds.randomElement(using: &g)!
            let keywords = Self.fileKeywords.filter { _ in Int.random(in: 0..<4, using: &g) == 0 }
            let meta = MediaFields(
                mediaType: type, format: type == .video ? "mp4" : "jpeg",
                captureDate: CaptureDate(local: LocalDateTime(iso: date)!, offset: nil, source: .exifOriginal),
                pixelWidth: Self.sizes.randomElement(using: &g)!, pixelHeight: Self.sizes.randomElement(using: &g)!,
                latitude: Self.latitudes.randomElement(using: &g)!, longitude: Self.longitudes.randomElement(using: &g)!,
                make: Self.makes.randomElement(using: &g)!, model: Self.models.randomElement(using: &g)!,
                duration: Self.durations.randomElement(using: &g)!, frameRate: Self.frameRates.randomElement(using: &g)!,
                videoCodec: Self.videoCodecs.randomElement(using: &g)!, audioCodec: Self.audioCodecs.randomElement(using: &g)!,
                bitRate: Self.bitRates.randomElement(using: &g)!, keywords: keywords)
            files.append(FileOutcome(directory: PathBytes(directory), name: name,
                                     identity: FileIdentity(fsid: 7, inode: UInt64(i + 1), size: 1000, mtimeNanoseconds: 99),
                                     fingerprint: UInt64(i + 1) &* 0x9E37_79B9_7F4A_7C15, kind: .media(meta), isSoleNewMember: true))
            let subtypes = AssetSubtype.allCases.filter { _ in Int.random(in: 0..<4, using: &g) == 0 }
            extras.append((PathBytes(directory).appending(name).bytes, AssetColumns.mask(Set(subtypes)),
                           Int.random(in: 0..<3, using: &g) == 0, Int.random(in: 0..<6, using: &g) == 0,
                           Self.added.randomElement(using: &g)!,
                           Self.taggerKeywords.filter { _ in Int.random(in: 0..<5, using: &g) == 0 }))
        }
        _ = try db.write { try $0.apply(Make.batch(files), now: Self.now) }
        // User state and taggers' keywords, as their writers (not yet built) would leave them.
        _ = try db.write { w in
            let update = try w.connection.statement(
                "UPDATE assets SET subtypes = ?2, is_favorite = ?3, is_hidden = ?4, added_at = ?5 WHERE path = ?1")
            let tag = try w.connection.statement(
                "INSERT INTO asset_keywords (asset_id, source, keyword) SELECT id, 'tagger', ?2 FROM assets WHERE path = ?1")
            for e in extras {
                update.bind(e.path, at: 1)
                update.bind(e.subtypes, at: 2)
                update.bind(e.favorite ? 1 : 0, at: 3)
                update.bind(e.hidden ? 1 : 0, at: 4)
                update.bind(e.added, at: 5)
                try update.run()
                for k in e.taggers {
                    tag.bind(e.path, at: 1)
                    tag.bind(k, at: 2)
                    try tag.run()
                }
            }
        }
        // Some files go away: their assets move to Recently Deleted, at different times.
        for (k, i) in stride(from: 5, to: count, by: 11).enumerated() {
            var b = WriteBatch()
            b.removedFiles = [(files[i].directory, files[i].name)]
            _ = try db.write { try $0.apply(b, now: Self.now - Int64(k % 3) * 1000) }
        }
        try reload()
        // A user album with visible, hidden and deleted members in a scrambled order.
        var members = assets.map(\.id).shuffled(using: &g).prefix(40)
        if let hidden = assets.first(where: { $0.hidden && $0.deletedAt == nil }) { members.append(hidden.id) }
        if let deleted = assets.first(where: { $0.deletedAt != nil }) { members.append(deleted.id) }
        var positions: [AssetID: Int] = [:]
        for (position, id) in Set(members).sorted().shuffled(using: &g).enumerated() { positions[id] = position * 10 }
        userAlbum = positions
        _ = try db.write { w in
            try w.connection.execute("INSERT INTO user_albums (id, title, created_at, updated_at) VALUES ('u_trip', 'Trip', 0, 0)")
            let add = try w.connection.statement(
                "INSERT INTO user_album_assets (album_id, asset_id, position, added_at) VALUES ('u_trip', ?1, ?2, 0)")
            for (id, position) in positions {
                add.bind(id.rawValue, at: 1)
                add.bind(position, at: 2)
                try add.run()
            }
        }
    }

    /// Reads every asset row back, with its taggers' keywords and its directory.
    mutating func reload() throws {
        let (rows, albums, days) = try db.read { r -> ([StoredAsset], [String: [UInt8]], Set<Int>) in
            var taggers: [String: [String]] = [:]
            let k = try r.connection.statement("SELECT asset_id, keyword FROM asset_keywords")
            while try k.step() { taggers[k.string(0), default: []].append(k.string(1)) }
            let s = try r.connection.statement("""
                SELECT a.id, a.path, d.path, a.media_type, a.subtypes, a.local_datetime, a.day, a.pixel_width, a.pixel_height,
                       a.is_favorite, a.is_hidden, a.deleted_at, a.make, a.model, a.latitude, a.longitude, a.duration,
                       a.added_at, a.keywords, a.frame_rate, a.bit_rate, a.video_codec, a.audio_codec
                FROM assets a LEFT JOIN directories d ON d.id = a.directory_id
                """)
            var rows: [StoredAsset] = []
            while try s.step() {
                rows.append(StoredAsset(
                    id: AssetID(rawValue: s.string(0))!, path: s.bytes(1), directory: s.bytes(2),
                    mediaType: MediaType(rawValue: s.string(3))!, subtypes: AssetColumns.subtypes(s.int64(4)),
                    localText: s.string(5), local: LocalDateTime(iso: s.string(5))!, day: s.int(6),
                    width: s.optionalInt(7), height: s.optionalInt(8), favorite: s.int(9) != 0, hidden: s.int(10) != 0,
                    deletedAt: s.isNull(11) ? nil : s.int64(11), make: s.optionalString(12), model: s.optionalString(13),
                    latitude: s.optionalDouble(14), longitude: s.optionalDouble(15), duration: s.optionalDouble(16),
                    frameRate: s.optionalDouble(19), bitRate: s.optionalInt64(20), videoCodec: s.optionalString(21),
                    audioCodec: s.optionalString(22), addedAt: s.int64(17),
                    fileKeywords: s.optionalString(18).map { $0.split(separator: "\n").map(String.init) } ?? [],
                    taggerKeywords: taggers[s.string(0)] ?? []))
            }
            var albums: [String: [UInt8]] = [:]
            let d = try r.connection.statement("SELECT album_id, path FROM directories")
            while try d.step() { albums[d.string(0)] = d.bytes(1) }
            var days: Set<Int> = []
            let m = try r.connection.statement("SELECT day FROM moments")
            while try m.step() { days.insert(m.int(0)) }
            return (rows, albums, days)
        }
        assets = rows
        folderAlbums = albums
        momentDays = days
    }

    /// The ids `query` selects in `scope`, in order, by the reference semantics; `nil` for a
    /// collection that does not exist.
    func expected(_ query: AssetQuery, in scope: AssetScope) -> [AssetID]? {
        let visible: (StoredAsset) -> Bool = { $0.deletedAt == nil && (query.includeHidden || !$0.hidden) }
        var member: (StoredAsset) -> Bool
        var order: [(StoredAsset, StoredAsset) -> Int]
        let capture: [(StoredAsset, StoredAsset) -> Int] = [
            { Self.compare($0.localText, $1.localText) }, { Self.compare(ByteKey(bytes: $0.path), ByteKey(bytes: $1.path)) },
            { Self.compare($0.id, $1.id) },
        ]
        order = capture
        switch scope {
        case .library: member = visible
        case .moment(let day):
            guard momentDays.contains(day) else { return nil }
            member = { $0.day == day && visible($0) }
        case .folderAlbum(let id):
            guard let path = folderAlbums[id] else { return nil }
            member = { $0.directory == path && visible($0) }
        case .place:
            // The fixture names no place: every place id is unknown.
            return nil
        case .smartAlbum(let album):
            member = { a in
                let relax = query.includeHidden && album.kind != .hidden && album.kind != .recentlyDeleted
                let facts = SmartAlbumFacts(mediaType: a.mediaType, subtypes: a.subtypes, isFavorite: a.favorite,
                                            isHidden: relax ? false : a.hidden, deletedAt: a.deletedAt, addedAt: a.addedAt)
                return SmartAlbums.contains(album.kind, facts, now: Self.now)
            }
            switch album.order {
            case .captureTime: break
            case .addedNewestFirst:
                order = [{ Self.compare($1.addedAt, $0.addedAt) }, { Self.compare($1.localText, $0.localText) }] + capture.dropFirst()
            case .deletedNewestFirst:
                order = [{ Self.compare($1.deletedAt ?? 0, $0.deletedAt ?? 0) }] + capture.dropFirst()
            }
        case .burst:
            return nil  // the fixture has no bursts (CollectionsEndToEndTests.bursts has)
        case .userAlbum(let id):
            guard id == "u_trip" else { return nil }
            member = { userAlbum[$0.id] != nil && visible($0) }
            order = [{ Self.compare(userAlbum[$0.id]!, userAlbum[$1.id]!) }] + capture.dropFirst()
        }
        if !query.sort.isEmpty { order = Self.order(query.sort) }
        let p = query.predicate
        return assets.filter { a in member(a) && (p.map { Reference.matches($0, a) } ?? true) }
            .sorted { a, b in
                for c in order {
                    let r = c(a, b)
                    if r != 0 { return r < 0 }
                }
                return false
            }
            .map(\.id)
    }

    static func compare<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a == b ? 0 : 1 }

    /// Missing values last in either direction.
    static func compare<T: Comparable>(_ a: T?, _ b: T?, ascending: Bool) -> Int {
        switch (a, b) {
        case (nil, nil): return 0
        case (nil, _): return 1
        case (_, nil): return -1
        case (let x?, let y?): return ascending ? compare(x, y) : compare(y, x)
        }
    }

    static func order(_ sort: AssetSort) -> [(StoredAsset, StoredAsset) -> Int] {
        var order: [(StoredAsset, StoredAsset) -> Int] = sort.descriptors.map { d in
            let up = d.ascending
            switch d.key {
            case .localDateTime: return { compare($0.localText, $1.localText, ascending: up) }
            case .addedDate: return { compare($0.addedAt, $1.addedAt, ascending: up) }
            case .pixelWidth: return { compare($0.width, $1.width, ascending: up) }
            case .pixelHeight: return { compare($0.height, $1.height, ascending: up) }
            case .duration: return { compare($0.duration, $1.duration, ascending: up) }
            case .make: return { compare($0.make.map { ByteKey(bytes: Reference.lower($0)) }, $1.make.map { ByteKey(bytes: Reference.lower($0)) }, ascending: up) }
            case .model: return { compare($0.model.map { ByteKey(bytes: Reference.lower($0)) }, $1.model.map { ByteKey(bytes: Reference.lower($0)) }, ascending: up) }
            case .path: return { compare(ByteKey(bytes: $0.path), ByteKey(bytes: $1.path), ascending: up) }
            case .mediaType: return { compare($0.mediaType.rawValue, $1.mediaType.rawValue, ascending: up) }
            case .latitude: return { compare($0.latitude, $1.latitude, ascending: up) }
            case .longitude: return { compare($0.longitude, $1.longitude, ascending: up) }
            case .isFavorite: return { compare($0.favorite ? 1 : 0, $1.favorite ? 1 : 0, ascending: up) }
            }
        }
        let up = sort.descriptors[0].ascending
        if !sort.descriptors.contains(where: { $0.key == .path }) {
            order.append { compare(ByteKey(bytes: $0.path), ByteKey(bytes: $1.path), ascending: up) }
        }
        order.append { compare($0.id, $1.id, ascending: up) }
        return order
    }

    /// Runs the query through the store: every id, and a page with its total — read whole (a
    /// reader that keeps no results), then twice through the pool's reader: its first page made
    /// or taken from what `assetIDs` kept, the second from the kept result. All must agree.
    func run(_ query: AssetQuery, in scope: AssetScope, limit: Int = 1000, offset: Int = 0) throws
        -> (ids: [AssetID]?, page: [AssetID]?, total: Int?) {
        try db.read { reader in
            var results: [(ids: [AssetID]?, page: [AssetID]?, total: Int?)] = []
            for r in [IndexReader(reader.db), reader, reader] {
                let ids = try r.assetIDs(query, in: scope, now: Self.now)
                let page = try r.consistent { () throws(StoreError) in try r.assets(query, in: scope, limit: limit, offset: offset, now: Self.now) }
                results.append((ids, page?.assets.map(\.id), page?.total))
            }
            #expect(results.allSatisfy { $0.ids == results[0].ids && $0.page == results[0].page && $0.total == results[0].total },
                    "kept and fresh results disagree on \(query) in \(scope)")
            return results[0]
        }
    }
}

/// Random predicates from the grammar, with values drawn from the fixture's own (and their
/// near misses), so that most comparisons match some assets and miss others.
struct PredicateGenerator {
    var g: SplitMix64
    let assets: [StoredAsset]
    /// Every key and operator generated, to check the coverage.
    var seen: Set<String> = []

    static let texts = QueryFixture.makes.compactMap { $0 } + QueryFixture.models.compactMap { $0 }
        + ["an", "AN", "on", "eos", "%", "_", "\\", "", "Ü", "ü", "R", "'); DROP", "nope", "canon%", "x_y"]
    static let keywords = QueryFixture.fileKeywords + QueryFixture.taggerKeywords
        + ["SEA", "ÄRGER", "", "a\nb", "nope", "%", "_", "beach\nsea"]

    mutating func pick<T>(_ xs: [T]) -> T { xs.randomElement(using: &g)! }
    mutating func chance(_ n: Int) -> Bool { Int.random(in: 0..<n, using: &g) == 0 }

    mutating func predicate(depth: Int) -> AssetPredicate {
        if depth == 0 || chance(3) { return .comparison(comparison()) }
        switch Int.random(in: 0..<5, using: &g) {
        case 0: return .not(predicate(depth: depth - 1))
        case 1, 2: return .and((0..<Int.random(in: 2...3, using: &g)).map { _ in predicate(depth: depth - 1) })
        default: return .or((0..<Int.random(in: 2...3, using: &g)).map { _ in predicate(depth: depth - 1) })
        }
    }

    mutating func comparison() -> PredicateComparison {
        let key = pick(PredicateKey.allCases)
        let op = pick(key.operators)
        seen.insert("\(key) \(op)")
        let operation: PredicateComparison.Operation
        switch op {
        case .isIn: operation = .isIn((0..<Int.random(in: 0...4, using: &g)).map { _ in value(key, op) })
        case .contains: operation = .contains(value(key, op))
        case .beginsWith: operation = .beginsWith(value(key, op))
        case .between: operation = .between(value(key, op), value(key, op))
        case .within: operation = .within(value(key, op))
        case .near: operation = .near(value(key, op))
        default:
            let r = PredicateRelation(rawValue: op.rawValue)!
            if key.isNullable, op == .equal || op == .notEqual, chance(5) {
                operation = .compare(r, .null)
            } else {
                operation = .compare(r, value(key, op))
            }
        }
        return PredicateComparison(key: key, operation: operation)
    }

    mutating func value(_ key: PredicateKey, _ op: PredicateOperator) -> PredicateValue {
        let a = pick(assets)
        switch key {
        case .mediaType: return .mediaType(pick(MediaType.allCases))
        case .subtypes:
            if op == .contains { return .subtype(pick(AssetSubtype.allCases)) }
            return .subtypes(chance(2) ? a.subtypes : Set(AssetSubtype.allCases.filter { _ in chance(3) }))
        case .localDateTime:
            var t = PredicateDateTime(a.local)
            switch Int.random(in: 0..<5, using: &g) {
            case 0: t.millisecond = 0
            case 1: t.millisecond = min(999, t.millisecond + 1)
            case 2: t.second = max(0, t.second - 1)
            case 3: (t.hour, t.minute, t.second, t.millisecond) = (0, 0, 0, 0)
            default: break
            }
            return .localDateTime(t)
        case .localDate: return .localDate(day: a.local.dayNumber + Int.random(in: -1...1, using: &g))
        case .addedDate:
            if chance(4) { return .instant(milliseconds: a.addedAt / QueryFixture.day * QueryFixture.day) }
            return .instant(milliseconds: a.addedAt + pick([0, 0, 1, -1, 1000]))
        case .pixelWidth, .pixelHeight: return .integer(pick([-1, 0, 1, 640, 641, 4000, 6000, 9999]))
        case .bitRate: return .integer(pick([-1, 0, 64_000, 64_001, 12_000_000]))
        case .latitude, .longitude, .duration, .frameRate:
            return .real(pick([-100, -33.5, 0, 1e-5, 0.5, 2.3522, 3, 23.976, 48.8566, 60, 100, 151.25]))
        case .isFavorite, .isHidden: return .boolean(chance(2))
        case .make, .model: return .text(pick(Self.texts))
        case .videoCodec, .audioCodec: return .text(pick(["h264", "HEVC", "hev", "aac", "Opus", "pcm", "", "%"]))
        case .city, .region, .country, .countryCode: return .text(pick(["Lisbon", "PT", "", "%"]))
        case .location:
            // Areas around the fixture's coordinates, and across the antimeridian.
            // (The fixture holds some coordinates off the globe: those areas are about the edges.)
            let lat = min(90, max(-90, a.latitude ?? pick([-33.5, 0, 48.8566])))
            let lon = min(180, max(-180, a.longitude ?? pick([151.25, 2.3522, 179.9])))
            if op == .near { return .circle(latitude: lat, longitude: lon, kilometres: pick([0.001, 1, 50, 500, 5000])) }
            let d = pick([0.0001, 0.5, 5, 30])
            let w = lon - d < -180 ? lon - d + 360 : lon - d, e = lon + d > 180 ? lon + d - 360 : lon + d
            return .box(south: max(-90, lat - d), west: w, north: min(90, lat + d), east: e)
        case .keywords: return .text(pick(Self.keywords))
        case .path:
            var p = a.path
            switch op {
            case .beginsWith: p = Array(p.prefix(Int.random(in: 0...p.count, using: &g)))
            case .contains:
                let start = Int.random(in: 0...p.count, using: &g)
                p = Array(p[start..<min(p.count, start + Int.random(in: 0...6, using: &g))])
            default: if chance(4) { p += [0x78] }
            }
            return .bytes(p)
        }
    }
}

@Suite("Fetch queries: predicates and sorts compiled to SQL, scopes, paging", .serialized)
struct AssetQueryTests {
    static func scopes(_ f: QueryFixture, _ g: inout SplitMix64) -> AssetScope {
        switch Int.random(in: 0..<9, using: &g) {
        case 0, 1: return .library
        case 2: return .moment(day: f.momentDays.randomElement(using: &g) ?? 0)
        case 3: return .moment(day: 1)
        case 4: return .folderAlbum(id: f.folderAlbums.keys.sorted().randomElement(using: &g)!)
        case 5: return Int.random(in: 0..<4, using: &g) == 0 ? .folderAlbum(id: "f_nope") : .userAlbum(id: "u_trip")
        case 6: return .userAlbum(id: Int.random(in: 0..<4, using: &g) == 0 ? "u_nope" : "u_trip")
        default: return .smartAlbum(SmartAlbums.all.randomElement(using: &g)!)
        }
    }

    static func sort(_ g: inout SplitMix64) -> AssetSort {
        guard Int.random(in: 0..<2, using: &g) == 0 else { return AssetSort() }
        return AssetSort((0..<Int.random(in: 1...3, using: &g)).map { _ in
            AssetSortDescriptor(AssetSortKey.allCases.randomElement(using: &g)!, ascending: Bool.random(using: &g))
        })
    }

    @Test("Model check: random predicates, scopes and sorts give the reference's ids, pages and totals")
    func modelCheck() throws {
        var f = try QueryFixture(seed: 11)
        defer { f.dir.remove() }
        try f.reload()
        #expect(f.assets.count == 120)
        #expect(f.assets.contains { $0.deletedAt != nil } && f.assets.contains { $0.hidden })
        var gen = PredicateGenerator(g: SplitMix64(seed: 99), assets: f.assets)
        var g = SplitMix64(seed: 7)
        var nonEmpty = 0
        var partial = 0
        for round in 0..<400 {
            let tree = gen.predicate(depth: 3)
            let predicate = try AssetPredicate.parse(tree.description)
            #expect(predicate == tree, "\(tree)")
            let query = AssetQuery(predicate: predicate, sort: Self.sort(&g), includeHidden: Bool.random(using: &g))
            let scope = Self.scopes(f, &g)
            let expected = f.expected(query, in: scope)
            let limit = Int.random(in: 1...10, using: &g)
            let offset = Int.random(in: 0...8, using: &g)
            let got = try f.run(query, in: scope, limit: limit, offset: offset)
            #expect(got.ids == expected, "round \(round): \(predicate) in \(scope), sort \(query.sort), hidden \(query.includeHidden)")
            #expect(got.total == expected?.count, "round \(round): \(predicate)")
            #expect(got.page == expected.map { Array($0.dropFirst(offset).prefix(limit)) }, "round \(round): \(predicate)")
            if let e = expected, !e.isEmpty { nonEmpty += 1 }
            if let e = expected, !e.isEmpty, e.count < f.assets.count / 3 { partial += 1 }
        }
        // The generator must reach every key with every operator it takes, and most queries
        // must select something without selecting everything.
        let all = Set(PredicateKey.allCases.flatMap { k in k.operators.map { "\(k) \($0)" } })
        #expect(gen.seen == all, "missing \(all.subtracting(gen.seen).sorted())")
        #expect(nonEmpty > 150 && partial > 80, "\(nonEmpty) non-empty, \(partial) partial")
    }

    @Test("Every sort key in both directions; ties broken by path then id")
    func sorts() throws {
        let f = try QueryFixture(seed: 12)
        defer { f.dir.remove() }
        for key in AssetSortKey.allCases {
            for ascending in [true, false] {
                for scope in [AssetScope.library, .userAlbum(id: "u_trip"), .smartAlbum(SmartAlbums.album(.recentlyAdded))] {
                    let query = AssetQuery(sort: AssetSort([AssetSortDescriptor(key, ascending: ascending)]), includeHidden: true)
                    let got = try f.run(query, in: scope)
                    #expect(got.ids == f.expected(query, in: scope), "\(key) \(ascending) in \(scope)")
                }
            }
        }
        // Two keys; and the scopes' own orders.
        let two = AssetQuery(sort: try AssetSort.parse("localDateTime,-pixelWidth"))
        #expect(try f.run(two, in: .library).ids == f.expected(two, in: .library))
        for scope in SmartAlbums.all.map(AssetScope.smartAlbum) + [.userAlbum(id: "u_trip"), .library] {
            #expect(try f.run(AssetQuery(), in: scope).ids == f.expected(AssetQuery(), in: scope), "\(scope)")
        }
        // The order is total: equal capture times are ordered by path bytes, then id.
        let ids = try #require(try f.run(AssetQuery(sort: try AssetSort.parse("isFavorite")), in: .library).ids)
        #expect(Set(ids).count == ids.count)
    }

    @Test("Paging: pages of any size concatenate to the full list; totals stay the same")
    func paging() throws {
        let f = try QueryFixture(seed: 13)
        defer { f.dir.remove() }
        let query = AssetQuery(predicate: try AssetPredicate.parse(#"mediaType == "image" OR make CONTAINS "can""#),
                               sort: try AssetSort.parse("-make,localDateTime"))
        let all = try #require(try f.run(query, in: .library).ids)
        #expect(all == f.expected(query, in: .library))
        for size in [1, 7, 50] {
            var pages: [AssetID] = []
            var offset = 0
            while true {
                let page = try #require(try f.db.read { try $0.assets(query, limit: size, offset: offset, now: QueryFixture.now) })
                #expect(page.total == all.count)
                pages += page.assets.map(\.id)
                if page.assets.count < size { break }
                offset += size
            }
            #expect(pages == all)
        }
        // Limits outside the range give empty or whole pages, never SQLite's "no limit" for -1.
        #expect(try f.run(query, in: .library, limit: 0).page == [])
        #expect(try f.run(query, in: .library, limit: -1).page == [])
        #expect(try f.run(query, in: .library, limit: 5, offset: -3).page == Array(all.prefix(5)))
        // Full assets come with their resources and decoded fields.
        let first = try #require(try f.db.read { try $0.assets(query, limit: 1, offset: 0, now: QueryFixture.now) }?.assets.first)
        #expect(first.resources.map(\.role) == [.primary])
        #expect(first.resources.first?.path == first.path)
    }

    @Test("Injection attempts are values that match only what equals them")
    func injection() throws {
        let f = try QueryFixture(seed: 14)
        defer { f.dir.remove() }
        let attempt = "'); DROP TABLE assets; --"
        let matching = f.assets.filter { $0.make == attempt && $0.deletedAt == nil && !$0.hidden }.map(\.id)
        #expect(!matching.isEmpty)
        for text in [#"make == "'); DROP TABLE assets; --""#, #"make == '\'); DROP TABLE assets; --'"#] {
            let query = AssetQuery(predicate: try AssetPredicate.parse(text))
            #expect(try Set(#require(try f.run(query, in: .library).ids)) == Set(matching))
        }
        for text in [#"path CONTAINS "'); DROP TABLE assets; --""#, #"keywords CONTAINS "'); DROP TABLE assets; --""#,
                     #"model == "\" OR 1=1 --""#, #"make IN {"x'); DELETE FROM assets; --", "?1"}"#,
                     #"keywords IN {"') OR 1=1 --"}"#, #"path BEGINSWITH "%""#, #"make BEGINSWITH "%""#, #"model CONTAINS "y_%""#] {
            let query = AssetQuery(predicate: try AssetPredicate.parse(text), includeHidden: true)
            #expect(try f.run(query, in: .library).ids == [], "\(text)")
        }
        #expect(try f.db.read { try $0.connection.scalar("SELECT count(*) FROM assets").int64 } == 120)
        // LIKE metacharacters are literal: `100%_sure\` is matched by its own characters only.
        let literal = AssetQuery(predicate: try AssetPredicate.parse(#"make CONTAINS "0%_S""#), includeHidden: true)
        #expect(try f.run(literal, in: .library).ids == f.expected(literal, in: .library))
        #expect(f.expected(literal, in: .library)?.isEmpty == false)
    }

    @Test("Paths are bytes: names that are not UTF-8 match by their bytes, case-sensitively")
    func pathBytes() throws {
        let f = try QueryFixture(seed: 15)
        defer { f.dir.remove() }
        let raw = f.assets.filter { $0.path.starts(with: Array("/lib/raw".utf8) + [0xFF, 0xFE]) && $0.deletedAt == nil && !$0.hidden }
        #expect(!raw.isEmpty)
        let query = AssetQuery(predicate: try AssetPredicate.parse(#"path BEGINSWITH "/lib/raw\xFF\xFE/""#))
        let got = try #require(try f.db.read { try $0.assets(query, limit: 1000, offset: 0, now: QueryFixture.now) })
        #expect(Set(got.assets.map(\.id)) == Set(raw.map(\.id)))
        #expect(got.assets.allSatisfy { !$0.path.isValidUTF8 })
        // A byte 0x80 in names; the prefix of all-0xFF bytes has no upper bound.
        for text in [#"path CONTAINS "\x80""#, #"path BEGINSWITH "/lib/raw\xFF""#, #"path BEGINSWITH "\xFF""#,
                     #"path CONTAINS "/LIB""#, #"path BEGINSWITH "/lib/caf\u{e9}""#, #"path == "/lib/2019""#] {
            let q = AssetQuery(predicate: try AssetPredicate.parse(text), includeHidden: true)
            #expect(try f.run(q, in: .library).ids == f.expected(q, in: .library), "\(text)")
        }
        #expect(PredicateSQL.upperBound([0x61, 0xFF, 0xFF]) == [0x62])
        #expect(PredicateSQL.upperBound([0xFF]) == nil)
        #expect(PredicateSQL.upperBound([]) == nil)
    }

    @Test("Hidden and deleted assets per scope; missing collections are nil")
    func visibility() throws {
        let f = try QueryFixture(seed: 16)
        defer { f.dir.remove() }
        let hidden = Set(f.assets.filter { $0.hidden && $0.deletedAt == nil }.map(\.id))
        let deleted = Set(f.assets.filter { $0.deletedAt != nil }.map(\.id))
        #expect(!hidden.isEmpty && !deleted.isEmpty)
        for includeHidden in [false, true] {
            let q = AssetQuery(includeHidden: includeHidden)
            let scopes: [AssetScope] = [.library, .userAlbum(id: "u_trip"), .moment(day: f.momentDays.first!),
                                        .folderAlbum(id: f.folderAlbums.keys.sorted().first!)]
                + SmartAlbums.all.map(AssetScope.smartAlbum)
            for scope in scopes {
                let got = try #require(try f.run(q, in: scope).ids, "\(scope)")
                #expect(got == f.expected(q, in: scope), "\(scope)")
                #expect(try f.run(q, in: scope).total == got.count)
                let isDeletedAlbum = scope == .smartAlbum(SmartAlbums.album(.recentlyDeleted))
                let isHiddenAlbum = scope == .smartAlbum(SmartAlbums.album(.hidden))
                #expect(got.allSatisfy { deleted.contains($0) == isDeletedAlbum }, "\(scope)")
                if !includeHidden && !isHiddenAlbum { #expect(!got.contains { hidden.contains($0) }, "\(scope)") }
                if isHiddenAlbum { #expect(Set(got) == hidden) }
            }
            // A predicate on isHidden sees hidden assets only when they are included.
            let hiddenOnly = AssetQuery(predicate: try AssetPredicate.parse("isHidden == true"), includeHidden: includeHidden)
            #expect(try Set(#require(try f.run(hiddenOnly, in: .library).ids)) == (includeHidden ? hidden : []))
        }
        // Hidden favorites appear in Favorites only when hidden assets are included.
        let favorites = AssetScope.smartAlbum(SmartAlbums.album(.favorites))
        let hiddenFavorites = Set(f.assets.filter { $0.hidden && $0.favorite && $0.deletedAt == nil }.map(\.id))
        #expect(!hiddenFavorites.isEmpty)
        #expect(try Set(#require(try f.run(AssetQuery(includeHidden: true), in: favorites).ids)).isSuperset(of: hiddenFavorites))
        #expect(try Set(#require(try f.run(AssetQuery(), in: favorites).ids)).isDisjoint(with: hiddenFavorites))
        // The user album holds a hidden and a deleted member.
        #expect(f.userAlbum.keys.contains { deleted.contains($0) } && f.userAlbum.keys.contains { hidden.contains($0) })
        for scope in [AssetScope.folderAlbum(id: "f_nope"), .userAlbum(id: "u_nope"), .moment(day: 3)] {
            let got = try f.run(AssetQuery(), in: scope)
            #expect(got.ids == nil && got.page == nil && got.total == nil, "\(scope)")
        }
    }

    @Test("The existing fetches and the new one agree when there is no predicate")
    func existingFetches() throws {
        let f = try QueryFixture(seed: 17)
        defer { f.dir.remove() }
        let now = QueryFixture.now
        try f.db.read { r in
            let old = try r.assets(limit: 30, offset: 5)
            let new = try #require(try r.assets(AssetQuery(), limit: 30, offset: 5, now: now))
            #expect(new.assets == old)
            #expect(new.total == (try r.visibleAssetCount()))
            let all = try #require(try r.assets(AssetQuery(includeHidden: true), limit: 1000, offset: 0, now: now))
            #expect(all.total == all.assets.count)
            #expect(new.total == (try r.connection.scalar("SELECT count(*) FROM assets WHERE is_hidden = 0 AND deleted_at IS NULL").int64).map(Int.init))
            var refs = SmartAlbums.all.map(CollectionRef.smartAlbum)
            refs += f.momentDays.sorted().map { CollectionRef.moment(day: $0) }
            refs += f.folderAlbums.keys.sorted().map { CollectionRef.folderAlbum(id: $0) }
            for ref in refs {
                let old = try #require(try r.assets(in: ref, limit: 1000, offset: 0, now: now))
                let new = try #require(try r.assets(AssetQuery(), in: AssetScope(ref), limit: 1000, offset: 0, now: now))
                #expect(new.assets == old.assets, "\(ref)")
                #expect(new.total == old.total, "\(ref)")
            }
        }
    }

    /// Texts at the nesting and length limits in the shapes that deepen SQLite's parser stack.
    static func deepTexts() -> [String] {
        let d = PredicateLimits.maxDepth
        let leaf = #"keywords CONTAINS "beach""#
        var texts: [String] = []
        // Right-nested groups, alternating AND and OR, 32 deep.
        var s = leaf
        for i in 0..<d { s = leaf + (i % 2 == 0 ? " AND (" : " OR (") + s + ")" }
        texts.append(s)
        // Left-nested.
        s = leaf
        for i in 0..<d { s = "(" + s + (i % 2 == 0 ? " AND " : " OR ") + leaf + ")" }
        texts.append(s)
        // NOT and parentheses alternating.
        s = #"make CONTAINS "a""#
        for _ in 0..<(d / 2) { s = #"NOT (make CONTAINS "a" OR "# + s + ")" }
        texts.append(s)
        // A full binary tree of alternating AND/OR as large as the length allows.
        func full(_ depth: Int, _ and: Bool) -> String {
            guard depth > 0 else { return "pixelWidth>1" }
            return "(" + full(depth - 1, !and) + (and ? " AND " : " OR ") + full(depth - 1, !and) + ")"
        }
        var depth = 1
        while full(depth + 1, true).utf8.count <= PredicateLimits.maxLength { depth += 1 }
        texts.append(full(depth, true))
        // The same with the heaviest leaves.
        func fullKeywords(_ depth: Int, _ and: Bool) -> String {
            guard depth > 0 else { return #"NOT keywords IN {"a"}"# }
            return "(" + fullKeywords(depth - 1, !and) + (and ? " AND " : " OR ") + fullKeywords(depth - 1, !and) + ")"
        }
        depth = 1
        while fullKeywords(depth + 1, true).utf8.count <= PredicateLimits.maxLength { depth += 1 }
        texts.append(fullKeywords(depth, true))
        // The longest OR chain of short leaves, and a full list.
        var chain = "isFavorite==true"
        while chain.utf8.count + 20 <= PredicateLimits.maxLength { chain += " OR isHidden==true" }
        texts.append(chain)
        texts.append("pixelWidth IN {" + (0..<PredicateLimits.maxListCount).map(String.init).joined(separator: ",") + "}")
        return texts
    }

    @Test("Predicates at the limits compile to SQL that SQLite parses and that agrees with the reference")
    func deepPredicates() throws {
        let f = try QueryFixture(seed: 18)
        defer { f.dir.remove() }
        var texts = Self.deepTexts()
        // Random trees as deep as allowed.
        var gen = PredicateGenerator(g: SplitMix64(seed: 5), assets: f.assets)
        while texts.count < 120 {
            let text = gen.predicate(depth: 12).description
            if text.utf8.count <= PredicateLimits.maxLength, (try? AssetPredicate.parse(text)) != nil { texts.append(text) }
        }
        for text in texts {
            let predicate = try AssetPredicate.parse(text)
            for scope in [AssetScope.library, .userAlbum(id: "u_trip")] {
                let query = AssetQuery(predicate: predicate, sort: try AssetSort.parse("-make"), includeHidden: true)
                let got = try f.run(query, in: scope)
                #expect(got.ids == f.expected(query, in: scope), "\(text.prefix(200))")
            }
        }
    }

    @Test("Query plans: a predicate page on the capture order walks the assets_order index, sorting only assets of the same time")
    func queryPlan() throws {
        let f = try QueryFixture(seed: 19)
        defer { f.dir.remove() }
        func plan(_ predicate: String, _ sort: String, _ scope: AssetScope = .library) throws -> [String] {
            let query = AssetQuery(predicate: predicate.isEmpty ? nil : try AssetPredicate.parse(predicate), sort: try AssetSort.parse(sort))
            return try f.db.read { r in
                let p = try #require(try r.plan(query, in: scope, now: QueryFixture.now))
                let s = try r.connection.transientStatement("EXPLAIN QUERY PLAN " + p.pageSQL)
                var details: [String] = []
                while try s.step() { details.append(s.string(3)) }
                return details
            }
        }
        for sort in ["", "localDateTime", "-localDateTime"] {
            let details = try plan(#"mediaType == "image" AND pixelWidth >= 1000"#, sort)
            #expect(details.contains { $0.contains("USING INDEX assets_order") }, "\(details)")
            #expect(!details.contains { $0.contains("TEMP B-TREE") && !$0.contains("RIGHT PART OF ORDER BY") }, "\(details)")
        }
        let range = try plan(#"localDateTime >= "2019-05-04" AND make CONTAINS "can""#, "-localDateTime")
        #expect(range.contains { $0.contains("assets_order (local_datetime>?)") }, "\(range)")
        let day = try plan(#"localDate == "2019-05-04""#, "")
        #expect(day.contains { $0.contains("assets_order (local_datetime>? AND local_datetime<?)") }, "\(day)")
        for scope in [AssetScope.moment(day: try #require(MomentGrouping.day(ofLocalDate: "2019-05-04")))] {
            let moment = try plan("", "", scope)
            #expect(moment.contains { $0.contains("assets_order (local_datetime>? AND local_datetime<?)") }, "\(moment)")
            #expect(!moment.contains { $0.contains("TEMP B-TREE") && !$0.contains("RIGHT PART OF ORDER BY") }, "\(moment)")
        }
        let raw = try plan(#"subtypes CONTAINS "raw" AND isFavorite == true"#, "")
        print("plan of a sparse subtype:", raw)
        let keywords = try plan(#"keywords CONTAINS "beach""#, "-localDateTime")
        #expect(keywords.contains { $0.contains("asset_keywords_keyword") }, "\(keywords)")
    }
}
