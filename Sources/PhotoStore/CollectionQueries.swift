import PhotoModel

/// A folder album: a directory that directly holds visible assets.
public struct FolderAlbum: Sendable, Hashable {
    public var id: String
    public var path: PathBytes
    public var assetCount: Int
    /// The oldest and newest capture times in it.
    public var start: LocalDateTime?
    public var end: LocalDateTime?
    /// The assets that stand for it (`KeyAssets`).
    public var keyAssetIDs: [AssetID]

    public init(id: String, path: PathBytes, assetCount: Int, start: LocalDateTime?, end: LocalDateTime?,
                keyAssetIDs: [AssetID] = []) {
        self.id = id
        self.path = path
        self.assetCount = assetCount
        self.start = start
        self.end = end
        self.keyAssetIDs = keyAssetIDs
    }

    /// The directory's name.
    public var title: String { FolderTree.title(of: path) }
}

/// Which moments a fetch wants (all of them when every field is nil).
public struct MomentFilter: Sendable, Hashable {
    /// First and last day (CivilTime day numbers), inclusive.
    public var firstDay: Int?
    public var lastDay: Int?

    public init(firstDay: Int? = nil, lastDay: Int? = nil) {
        self.firstDay = firstDay
        self.lastDay = lastDay
    }
}

/// A collection whose assets can be listed.
public enum CollectionRef: Sendable, Hashable {
    case moment(day: Int)
    case folderAlbum(id: String)
    case smartAlbum(SmartAlbum)

    /// Parses a collection id (`m_20190504`, `f_...`, `s_favorites`); `nil` for an unknown form.
    public init?(id: String) {
        if let day = MomentGrouping.day(ofMomentID: id) {
            self = .moment(day: day)
        } else if let album = SmartAlbums.album(id: id) {
            self = .smartAlbum(album)
        } else if id.hasPrefix("f_"), id.count > 2 {
            self = .folderAlbum(id: id)
        } else {
            return nil
        }
    }
}

extension IndexReader {
    static let visible = "a.is_hidden = 0 AND a.deleted_at IS NULL"

    /// A `moments` row's start and end (columns 1 and 2; 0 is its day, named if they are not dates).
    private static func momentDates(_ s: Statement) throws(StoreError) -> (start: LocalDateTime, end: LocalDateTime) {
        guard let start = s.withText(1, LocalDateTime.init(isoBytes:)), let end = s.withText(2, LocalDateTime.init(isoBytes:)) else {
            let key = String(s.int(0))
            s.reset()
            throw StoreError.undecodable(table: "moments", key: key)
        }
        return (start, end)
    }

    /// Moments, newest first.
    public func moments(_ filter: MomentFilter = MomentFilter(), limit: Int = Int.max, offset: Int = 0) throws(StoreError) -> [Moment] {
        let s = try db.statement("""
            SELECT day, start_local, end_local, asset_count, photo_count, video_count, latitude, longitude,
                   location_local, location_path, location_asset, title, location_names
            FROM moments WHERE day BETWEEN :firstDay AND :lastDay ORDER BY day DESC LIMIT :limit OFFSET :offset
            """)
        s.bind(":firstDay", to: filter.firstDay ?? Int.min)
        s.bind(":lastDay", to: filter.lastDay ?? Int.max)
        s.bind(":limit", to: min(limit, Int(Int32.max)))
        s.bind(":offset", to: offset)
        var result: [Moment] = []
        while try s.step() {
            let (start, end) = try Self.momentDates(s)
            var location: MomentMemberKey?
            if let l = s.optionalString(8).flatMap(LocalDateTime.init(iso:)), let id = s.optionalString(10).flatMap(AssetID.init(rawValue:)) {
                location = MomentMemberKey(local: l, path: PathBytes(s.bytes(9)), id: id)
            }
            var moment = Moment(day: s.int(0), start: start, end: end, assetCount: s.int(3), photoCount: s.int(4),
                                videoCount: s.int(5), latitude: s.optionalDouble(6), longitude: s.optionalDouble(7),
                                locationMember: location)
            moment.title = s.optionalString(11)
            moment.locationCounts = s.withText(12, MomentPlaces.decode)
            result.append(moment)
        }
        return result
    }

    /// The key assets (`KeyAssets`) of the moments of `days`: one lookup by id each.
    public func momentKeyAssets(days: [Int]) throws(StoreError) -> [Int: [AssetID]] {
        try momentKeys(days: days, newest: false)
    }

    /// The newest assets of the moments of `days`, newest first (what their lists are made of).
    public func momentNewest(days: [Int]) throws(StoreError) -> [Int: [AssetID]] {
        try momentKeys(days: days, newest: true)
    }

    private func momentKeys(days: [Int], newest: Bool) throws(StoreError) -> [Int: [AssetID]] {
        guard !days.isEmpty else { return [:] }
        let s = try db.statement(newest
            ? "SELECT id, newest FROM collection_keys WHERE id IN (SELECT value FROM json_each(:ids))"
            : "SELECT id, key_assets FROM collection_keys WHERE id IN (SELECT value FROM json_each(:ids))")
        s.bind(":ids", to: "[" + days.map { "\"" + MomentGrouping.id(day: $0) + "\"" }.joined(separator: ",") + "]")
        var result: [Int: [AssetID]] = [:]
        while try s.step() {
            guard let day = s.withText(0, { MomentGrouping.day(ofMomentID: String(decoding: $0, as: UTF8.self)) }) else { continue }
            result[day] = newest ? KeyColumns.entryIDs(s, 1) : KeyColumns.ids(s, 1)
        }
        return result
    }

    /// Every year and month list, newest first, built as the moments' rows are read: only the
    /// columns a list needs, each moment's cities decoded in place (`MomentLists.Builder`).
    public func momentLists() throws(StoreError) -> (years: [MomentList], months: [MomentList]) {
        let s = try db.statement("""
            SELECT day, start_local, end_local, asset_count, photo_count, video_count, location_names
            FROM moments ORDER BY day DESC
            """)
        var builder = MomentLists.Builder()
        while try s.step() {
            let (start, end) = try Self.momentDates(s)
            builder.add(MomentLists.Row(day: s.int(0), start: start, end: end, assetCount: s.int(3), photoCount: s.int(4),
                                        videoCount: s.int(5)))
            s.withText(6) { MomentPlaces.forEach($0) { builder.addPlace($0, count: $1) } }
        }
        return builder.finish()
    }

    /// Year and month lists with their key assets: the months' from their moments
    /// (`withKeyAssets`), a year's from its months, newest first (no lookup of its own).
    public func withKeyAssets(years: [MomentList], months: [MomentList]) throws(StoreError) -> (years: [MomentList], months: [MomentList]) {
        let months = try withKeyAssets(months)
        var byYear: [Int: [AssetID]] = [:]
        for month in months where (byYear[month.year]?.count ?? 0) < KeyAssets.limit {  // `months` is newest first
            byYear[month.year, default: []] += month.keyAssetIDs.prefix(KeyAssets.limit - (byYear[month.year]?.count ?? 0))
        }
        let years = years.map { y in
            var y = y
            y.keyAssetIDs = byYear[y.year] ?? []
            return y
        }
        return (years, months)
    }

    /// `lists` with their key assets: the newest of their newest moments (a moment's newest are
    /// kept on its row, so that a list costs the lookups of a moment or two, not a scan).
    public func withKeyAssets(_ lists: [MomentList]) throws(StoreError) -> [MomentList] {
        var lists = lists
        var newest: [Int: [AssetID]] = [:]
        var next = [Int](repeating: 0, count: lists.count)  // each list's next moment
        var open = Array(lists.indices)
        while !open.isEmpty {
            let days = Set(open.compactMap { MomentGrouping.day(ofMomentID: lists[$0].momentIDs[next[$0]]) })
                .filter { newest[$0] == nil }
            for (day, ids) in try momentNewest(days: days.sorted()) { newest[day] = ids }
            open = open.filter { k in
                if let day = MomentGrouping.day(ofMomentID: lists[k].momentIDs[next[k]]) {
                    lists[k].keyAssetIDs += (newest[day] ?? []).prefix(KeyAssets.limit - lists[k].keyAssetIDs.count)
                }
                next[k] += 1
                return lists[k].keyAssetIDs.count < KeyAssets.limit && next[k] < lists[k].momentIDs.count
            }
        }
        return lists
    }

    /// How many moments match.
    public func momentCount(_ filter: MomentFilter = MomentFilter()) throws(StoreError) -> Int {
        let s = try db.statement("SELECT count(*) FROM moments WHERE day BETWEEN :firstDay AND :lastDay")
        defer { s.reset() }
        s.bind(":firstDay", to: filter.firstDay ?? Int.min)
        s.bind(":lastDay", to: filter.lastDay ?? Int.max)
        return try s.step() ? s.int(0) : 0
    }

    /// Folder albums in path order.
    public func folderAlbums(limit: Int = Int.max, offset: Int = 0) throws(StoreError) -> [FolderAlbum] {
        // The dates are kept on the row with the count (migration 005): O(page), not O(assets).
        let s = try db.statement("""
            SELECT d.album_id, d.path, d.asset_count, d.start_local, d.end_local, k.key_assets
            FROM directories d LEFT JOIN collection_keys k ON k.id = d.album_id
            WHERE d.asset_count > 0 ORDER BY d.path LIMIT :limit OFFSET :offset
            """)
        s.bind(":limit", to: min(limit, Int(Int32.max)))
        s.bind(":offset", to: offset)
        var result: [FolderAlbum] = []
        while try s.step() {
            result.append(FolderAlbum(id: s.string(0), path: PathBytes(s.bytes(1)), assetCount: s.int(2),
                                      start: s.optionalString(3).flatMap(LocalDateTime.init(iso:)),
                                      end: s.optionalString(4).flatMap(LocalDateTime.init(iso:)),
                                      keyAssetIDs: KeyColumns.ids(s, 5)))
        }
        return result
    }

    /// How many folder albums there are.
    public func folderAlbumCount() throws(StoreError) -> Int {
        Int(try db.scalar("SELECT count(*) FROM directories WHERE asset_count > 0").int64 ?? 0)
    }

    /// One folder album by id.
    public func folderAlbum(id: String) throws(StoreError) -> FolderAlbum? {
        let s = try db.statement("""
            SELECT d.path, d.asset_count, d.start_local, d.end_local, k.key_assets
            FROM directories d LEFT JOIN collection_keys k ON k.id = d.album_id WHERE d.album_id = :album
            """)
        defer { s.reset() }
        s.bind(":album", to: id)
        guard try s.step() else { return nil }
        return FolderAlbum(id: id, path: PathBytes(s.bytes(0)), assetCount: s.int(1),
                           start: s.optionalString(2).flatMap(LocalDateTime.init(iso:)),
                           end: s.optionalString(3).flatMap(LocalDateTime.init(iso:)),
                           keyAssetIDs: KeyColumns.ids(s, 4))
    }

    /// The albums the folder tree is built from (every directory with visible assets).
    public func folderAlbumInputs() throws(StoreError) -> [FolderAlbumInput] {
        let s = try db.statement("SELECT path, asset_count, album_id, end_local FROM directories WHERE asset_count > 0")
        var result: [FolderAlbumInput] = []
        while try s.step() {
            result.append(FolderAlbumInput(path: PathBytes(s.bytes(0)), assetCount: s.int(1), albumID: s.string(2),
                                           end: s.isNull(3) ? nil : s.withText(3, LocalDateTime.init(isoBytes:))))
        }
        return result
    }

    /// The collection lists of `roots` (`FolderTree.build`), with their key assets: the newest
    /// of the folder albums below, each album's kept in `collection_keys` and read only for the albums
    /// that can still change a list's (a few lookups, not a read of every album).
    public func collectionLists(roots: [PathBytes]) throws(StoreError) -> [CollectionList] {
        let inputs = try folderAlbumInputs()
        let s = try db.statement("SELECT newest FROM collection_keys WHERE id = :id")
        var failure: StoreError?
        let lists = FolderTree.build(roots: roots, albums: inputs) { k in
            s.bind(":id", to: inputs[k].albumID)
            defer { s.reset() }
            do throws(StoreError) {
                return try s.step() ? KeyColumns.entries(s, 0).map(\.key) : []
            } catch {
                failure = error
                return []
            }
        }
        if let failure { throw failure }
        return lists
    }

    static let invisible = "(a.is_hidden != 0 OR a.deleted_at IS NOT NULL)"

    /// The SQL condition for a smart album's members (on `assets a`) and the order of its
    /// assets. The conditions repeat the partial indexes' own (`assets_favorites`, ...), so that
    /// SQLite uses them: a sparse album costs its size, not the library's.
    static func smartAlbumSQL(_ album: SmartAlbum, now: Int64) -> (condition: String, order: String) {
        let byCapture = AssetColumns.captureOrder
        func subtype(_ s: AssetSubtype) -> String { "(a.subtypes & \(AssetColumns.bit(s))) != 0 AND \(visible)" }
        switch album.kind {
        case .allPhotos: return (visible, byCapture)
        case .favorites: return ("a.is_favorite != 0 AND \(visible)", byCapture)
        case .videos: return ("a.media_type = 'video' AND \(visible)", byCapture)
        case .recentlyAdded:
            return ("a.added_at >= \(now - SmartAlbums.recentlyAddedWindowMilliseconds) AND \(visible)",
                    "a.added_at DESC, a.local_datetime DESC, a.path, a.id")
        case .screenshots: return (subtype(.screenshot), byCapture)
        case .panoramas: return (subtype(.panorama), byCapture)
        case .selfies: return (subtype(.selfie), byCapture)
        case .livePhotos: return (subtype(.live), byCapture)
        case .raw: return (subtype(.raw), byCapture)
        case .slomo: return (subtype(.highFrameRate), byCapture)
        case .timelapses: return (subtype(.timelapse), byCapture)
        case .animated: return (subtype(.animated), byCapture)
        case .depthEffect: return (subtype(.depthEffect), byCapture)
        case .bursts: return ("\(subtype(.burst)) AND a.represents_burst != 0", byCapture)
        case .hidden: return ("\(invisible) AND a.is_hidden != 0 AND a.deleted_at IS NULL", byCapture)
        case .recentlyDeleted: return ("\(invisible) AND a.deleted_at IS NOT NULL", "a.deleted_at DESC, a.path, a.id")
        }
    }

    /// Asset counts of every smart album, from the kept counters (`SmartCounters`): O(1) for
    /// each album but Recently Added, which sums its hours and minutes and counts one minute.
    public func smartAlbumCounts(now: Int64) throws(StoreError) -> [String: Int] {
        let kept = try SmartCounters.albums(db)
        var result: [String: Int] = [:]
        for album in SmartAlbums.all {
            result[album.id] = album.kind == .recentlyAdded
                ? try SmartCounters.recentlyAdded(db, now: now) : kept[SmartCounters.album(album.kind)] ?? 0
        }
        return result
    }

    /// The key assets of every smart album (none for Hidden and Recently Deleted), as the
    /// writer keeps them; Recently Added's lose those older than its window at `now`.
    public func smartAlbumKeys(now: Int64) throws(StoreError) -> [String: [AssetID]] {
        let s = try db.statement("SELECT id, newest FROM collection_keys WHERE id >= 's_' AND id < 's`'")
        let recentlyAdded = SmartAlbums.album(.recentlyAdded).id
        var result: [String: [AssetID]] = [:]
        while try s.step() {
            let id = s.string(0)
            var entries = KeyColumns.entries(s, 1)
            if id == recentlyAdded {
                entries.removeAll { $0.addedAt < now - SmartAlbums.recentlyAddedWindowMilliseconds }
            }
            result[id] = entries.map(\.key.id)
        }
        return result
    }

    /// The same counts by counting the assets (the library counters minus the invisible ones,
    /// the partial indexes, the `added_at` index): what the kept ones must equal.
    public func smartAlbumCountsByScan(now: Int64) throws(StoreError) -> [String: Int] {
        func count(_ condition: String) throws(StoreError) -> Int {
            Int(try db.scalar("SELECT count(*) FROM assets a WHERE \(condition)").int64 ?? 0)
        }
        let c = try counts()
        var result: [String: Int] = [:]
        for album in SmartAlbums.all {
            switch album.kind {
            // The counters leave out Recently Deleted already; hidden assets come off here.
            case .allPhotos: result[album.id] = c.assets - (try count("\(Self.invisible) AND a.deleted_at IS NULL"))
            case .videos:
                result[album.id] = c.videos - (try count("\(Self.invisible) AND a.deleted_at IS NULL AND a.media_type = 'video'"))
            default: result[album.id] = try count(Self.smartAlbumSQL(album, now: now).condition)
            }
        }
        return result
    }

    /// The assets of a collection in its order, with their total.
    public func assets(in collection: CollectionRef, limit: Int, offset: Int, now: Int64) throws(StoreError) -> (assets: [Asset], total: Int)? {
        let condition: String
        let order: String
        // The one parameter of a moment's or a folder album's condition, and a moment's range.
        var key: (name: StaticString, value: Int64)?
        var range: (from: String, to: String)?
        switch collection {
        case .moment(let day):
            condition = "a.local_datetime >= :from AND a.local_datetime < :to AND a.day = :day AND \(Self.visible)"
            order = AssetColumns.captureOrder
            key = (":day", Int64(day))
            range = MomentGrouping.localDateTimeRange(day: day)
        case .folderAlbum(let id):
            guard let dir = try db.scalar("SELECT id FROM directories WHERE album_id = ?1", .text(id)).int64 else { return nil }
            condition = "a.directory_id = :directory AND \(Self.visible)"
            order = AssetColumns.captureOrder
            key = (":directory", dir)
        case .smartAlbum(let album):
            (condition, order) = Self.smartAlbumSQL(album, now: now)
        }
        let s = try db.statement("SELECT \(AssetColumns.select) FROM assets a WHERE \(condition) ORDER BY \(order) LIMIT :limit OFFSET :offset")
        s.bind(":limit", to: min(limit, Int(Int32.max)))
        s.bind(":offset", to: offset)
        if let key { s.bind(key.name, to: key.value) }
        if let range { s.bind(":from", to: range.from); s.bind(":to", to: range.to) }
        let rows = try AssetColumns.decodeAll(s)
        let count = try db.statement("SELECT count(*) FROM assets a WHERE \(condition)")
        defer { count.reset() }
        if let key { count.bind(key.name, to: key.value) }
        if let range { count.bind(":from", to: range.from); count.bind(":to", to: range.to) }
        _ = try count.step()
        return (try attachResources(rows), count.int(0))
    }
}
