/// What moments need to know about one asset. The caller passes only assets that count in
/// collections (never hidden or recently deleted ones).
public struct MomentMember: Sendable, Hashable {
    /// The asset.
    public var id: AssetID
    /// The capture time on the capture clock; its calendar day is the moment.
    public var local: LocalDateTime
    /// The primary resource's path, the first tie-break of the display order.
    public var path: PathBytes
    /// Photo or video, for the moment's counts.
    public var mediaType: MediaType
    /// Degrees north, when the asset has a position.
    public var latitude: Double?
    /// Degrees east, when the asset has a position.
    public var longitude: Double?

    /// A member from its fields.
    public init(id: AssetID, local: LocalDateTime, path: PathBytes, mediaType: MediaType,
                latitude: Double? = nil, longitude: Double? = nil) {
        self.id = id
        self.local = local
        self.path = path
        self.mediaType = mediaType
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The member of an asset, taking the capture time's wall time (never its offset).
    public init(_ asset: Asset) {
        self.init(id: asset.id, local: asset.captureDate.local, path: asset.path, mediaType: asset.mediaType,
                  latitude: asset.latitude, longitude: asset.longitude)
    }

    /// The moment's day: the calendar day of the wall time on the capture clock.
    public var day: Int { local.dayNumber }

    /// Whether the member has a usable position (both coordinates, both finite).
    public var isGeotagged: Bool {
        guard let lat = latitude, let lon = longitude else { return false }
        return lat.isFinite && lon.isFinite
    }

    /// The member's place in the display order.
    public var key: MomentMemberKey { MomentMemberKey(local: local, path: path, id: id) }
}

/// A member's position in a moment's display order: oldest first, then path bytes, then id.
///
/// The order on `local` is total: equal wall times sort a time without milliseconds before
/// the same time with them (`10:00:00` < `10:00:00.000`). It is exactly the byte order of
/// `LocalDateTime.description`, so a store that keeps that text, the path as a BLOB and the id
/// as text gets the same order from `ORDER BY local, path, id`.
public struct MomentMemberKey: Sendable, Hashable, Comparable {
    /// The wall time on the capture clock.
    public var local: LocalDateTime
    /// The primary resource's path.
    public var path: PathBytes
    /// The asset.
    public var id: AssetID

    /// A key from its fields.
    public init(local: LocalDateTime, path: PathBytes, id: AssetID) {
        self.local = local
        self.path = path
        self.id = id
    }

    /// Display order: `local` (see above), then path bytes, then id.
    public static func < (a: MomentMemberKey, b: MomentMemberKey) -> Bool {
        if a.local != b.local { return MomentGrouping.precedes(a.local, b.local) }
        if a.path != b.path { return a.path < b.path }
        return a.id < b.id
    }
}

/// The assets captured on one calendar day of the capture clock (PhotoKit's moment).
///
/// Every field is a function of the day's member set alone, so a moment maintained
/// incrementally equals the one computed from scratch, field for field.
public struct Moment: Sendable, Hashable {
    /// `CivilTime` day number (days since 1970-01-01) of the local date.
    public var day: Int
    /// `m_YYYYMMDD`: derived from the day alone, so it survives restarts and full rebuilds.
    public var id: String
    /// `YYYY-MM-DD` (derived from `day` when asked: a list of moments does not pay for it).
    public var localDate: String { MomentGrouping.localDate(day: day) }
    /// The oldest member's wall time.
    public var start: LocalDateTime
    /// The newest member's wall time.
    public var end: LocalDateTime
    /// Members of any type.
    public var assetCount: Int
    /// Members that are images.
    public var photoCount: Int
    /// Members that are videos.
    public var videoCount: Int
    /// The representative location: the position of the oldest geotagged member (in display
    /// order), where the day began. `nil` when no member has one.
    public var latitude: Double?
    /// See `latitude`.
    public var longitude: Double?
    /// Which member gave the location. Kept so that a member added later can be compared
    /// with it without loading the day: persist it with the moment.
    public var locationMember: MomentMemberKey?
    /// `Saturday, 4 May 2019` (English; derived from `day` when asked).
    public var dateTitle: String { MomentGrouping.title(day: day) }
    /// Where its assets were taken (`PlaceTitles.title`): "Lisbon", "Lisbon & Sintra",
    /// "Portugal"; nil when none has a place. Kept by the writer with the moment.
    public var title: String?
    /// The distinct cities of its assets with how many are in each, most first
    /// (`PlaceTitles.locationNames`).
    public var locationCounts: [PlaceCount] = []
    /// Its cities, most assets first.
    public var locationNames: [String] { locationCounts.map(\.name) }

    /// A moment as a store holds it: the derived fields (`id`, `localDate`, `dateTitle`) come
    /// from `day`, so only these need columns (and `title` and `locationNames`, set after).
    public init(day: Int, start: LocalDateTime, end: LocalDateTime, assetCount: Int, photoCount: Int,
                videoCount: Int, latitude: Double? = nil, longitude: Double? = nil,
                locationMember: MomentMemberKey? = nil) {
        self.day = day
        self.id = MomentGrouping.id(day: day)
        self.start = start
        self.end = end
        self.assetCount = assetCount
        self.photoCount = photoCount
        self.videoCount = videoCount
        self.latitude = latitude
        self.longitude = longitude
        self.locationMember = locationMember
    }

    /// An empty moment of `day` that `add` fills: not a valid moment until it has a member.
    init(day: Int, first: MomentMember) {
        self.init(day: day, start: first.local, end: first.local, assetCount: 0, photoCount: 0, videoCount: 0)
    }

    /// The moment with one more member (which must be on its day and not already in it). O(1).
    public func adding(_ member: MomentMember) -> Moment {
        var m = self
        m.add(member)
        return m
    }

    mutating func add(_ member: MomentMember) {
        if MomentGrouping.precedes(member.local, start) { start = member.local }
        if MomentGrouping.precedes(end, member.local) { end = member.local }
        assetCount += 1
        switch member.mediaType {
        case .image: photoCount += 1
        case .video: videoCount += 1
        }
        if member.isGeotagged {
            let key = member.key
            if locationMember.map({ key < $0 }) ?? true {
                locationMember = key
                latitude = member.latitude
                longitude = member.longitude
            }
        }
    }
}

/// A city and how many assets of a group are there.
public struct PlaceCount: Sendable, Hashable {
    public var name: String
    public var count: Int
    public init(name: String, count: Int) {
        self.name = name
        self.count = count
    }
}

/// Grouping assets into moments from scratch, and the fixed formats of moment ids and titles.
public enum MomentGrouping {
    /// Every moment of `members`, newest first.
    public static func group(_ members: [MomentMember]) -> [Moment] {
        var byDay: [Int: Moment] = [:]
        for member in members {
            let day = member.day
            if byDay[day] == nil { byDay[day] = Moment(day: day, first: member) }
            byDay[day]!.add(member)
        }
        return byDay.values.sorted { $0.day > $1.day }
    }

    /// The moment of `day` from its members; `nil` when none. Members of other days are
    /// ignored (the caller's query answered more than asked).
    public static func moment(day: Int, members: [MomentMember]) -> Moment? {
        var moment: Moment?
        for member in members where member.day == day {
            if moment == nil { moment = Moment(day: day, first: member) }
            moment!.add(member)
        }
        return moment
    }

    /// A moment's members in display order: oldest first, ties by path bytes, then id.
    public static func ordered(_ members: [MomentMember]) -> [MomentMember] {
        members.sorted { $0.key < $1.key }
    }

    /// The total order moments use on wall times: chronological, and a time without
    /// milliseconds before the same second with them (the byte order of `description`).
    public static func precedes(_ a: LocalDateTime, _ b: LocalDateTime) -> Bool {
        // Field by field rather than `LocalDateTime.<` twice: this runs for every member a job
        // merges, and tuple comparison is slow in debug builds.
        if a.year != b.year { return a.year < b.year }
        if a.month != b.month { return a.month < b.month }
        if a.day != b.day { return a.day < b.day }
        if a.hour != b.hour { return a.hour < b.hour }
        if a.minute != b.minute { return a.minute < b.minute }
        if a.second != b.second { return a.second < b.second }
        switch (a.millisecond, b.millisecond) {
        case let (x?, y?): return x < y
        case (nil, .some): return true
        default: return false
        }
    }

    /// The stored capture times of one day as a half-open text range: every `local_datetime`
    /// of the day starts with `YYYY-MM-DDT`, so it lies in [`YYYY-MM-DD`, `YYYY-MM-DDU`) — a
    /// range the `assets_order` index answers (no index of its own per day).
    public static func localDateTimeRange(day: Int) -> (from: String, to: String) {
        let date = localDate(day: day)
        return (date, date + "U")
    }

    /// `YYYY-MM-DD` for a day number.
    public static func localDate(day: Int) -> String {
        let (y, m, d) = CivilTime.civilFromDays(day)
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
    }

    /// `m_YYYYMMDD` for a day number, formatted into one small buffer (every moment read
    /// from the store makes its id).
    public static func id(day: Int) -> String {
        let (y, m, d) = CivilTime.civilFromDays(day)
        guard (0...9999).contains(y) else { return "m_" + pad(y, 4) + pad(m, 2) + pad(d, 2) }
        return String(unsafeUninitializedCapacity: 10) { b in
            b[0] = UInt8(ascii: "m"); b[1] = UInt8(ascii: "_")
            var v = y * 10_000 + m * 100 + d
            for k in stride(from: 9, through: 2, by: -1) {
                b[k] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
                v /= 10
            }
            return 10
        }
    }

    /// The day number of a moment id; `nil` when it is not one (wrong shape or no such date).
    public static func day(ofMomentID id: String) -> Int? {
        let b = Array(id.utf8)
        guard b.count == 10, b[0] == UInt8(ascii: "m"), b[1] == UInt8(ascii: "_"),
              let y = Digits.value(b, 2, 4), let m = Digits.value(b, 6, 2), let d = Digits.value(b, 8, 2),
              let date = LocalDateTime(year: y, month: m, day: d)
        else { return nil }
        return date.dayNumber
    }

    /// The day number of a `YYYY-MM-DD` date (a moment's `localDate`); `nil` when invalid.
    public static func day(ofLocalDate text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let y = Digits.value(b, 0, 4), let m = Digits.value(b, 5, 2), let d = Digits.value(b, 8, 2),
              let date = LocalDateTime(year: y, month: m, day: d)
        else { return nil }
        return date.dayNumber
    }

    /// English weekday names, Sunday first (`CivilTime.weekday`'s numbering).
    public static let weekdayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    /// English month names, January first.
    public static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August",
                                    "September", "October", "November", "December"]

    /// `Saturday, 4 May 2019`: the day-month-year order reads the same everywhere English is
    /// used, and needs no locale data (PhotoModel has no Foundation).
    public static func title(day: Int) -> String {
        let (y, m, d) = CivilTime.civilFromDays(day)
        return weekdayNames[CivilTime.weekday(days: day)] + ", " + String(d) + " " + monthNames[m - 1] + " " + String(y)
    }
}

/// What one sort job changes: the old values of the assets it removes or updates, and the
/// new values of the assets it inserts or updates. An update is a removal of its old value and
/// an addition of its new one. The values are `MomentMember`s of assets that count in
/// collections: an asset becoming hidden or trashed is a removal, one coming back an addition.
public struct MomentChange: Sendable, Hashable {
    /// Old values (as the store holds them before the change) of deleted and updated assets.
    public var removed: [MomentMember]
    /// New values of inserted and updated assets.
    public var added: [MomentMember]

    /// A change from old and new values.
    public init(removed: [MomentMember] = [], added: [MomentMember] = []) {
        self.removed = removed
        self.added = added
    }

    /// Whether the change does nothing.
    public var isEmpty: Bool { removed.isEmpty && added.isEmpty }

    /// One change with the net effect of `changes` applied in order: what a job that takes
    /// over the cancelled jobs before it must apply.
    ///
    /// Per asset id, the net change goes from the state before the first change that mentions
    /// it (its first `removed` value, or absent when it was first added) to the state after the
    /// last one (its last `added` value, or absent when it was last removed). So an asset added,
    /// then updated, then deleted within the run nets out to nothing, and one updated twice
    /// becomes one update from its oldest to its newest value. An asset whose net old and new
    /// values are equal is left out. Within one change, `removed` applies before `added`.
    /// Order: ids in the order they first appear, so the result is deterministic.
    public static func merging(_ changes: [MomentChange]) -> MomentChange {
        var before: [AssetID: MomentMember?] = [:]
        var after: [AssetID: MomentMember?] = [:]
        var order: [AssetID] = []
        for change in changes {
            for member in change.removed {
                if before[member.id] == nil {
                    before[member.id] = .some(member)
                    order.append(member.id)
                }
                after[member.id] = .some(nil)
            }
            for member in change.added {
                if before[member.id] == nil {
                    before[member.id] = .some(nil)
                    order.append(member.id)
                }
                after[member.id] = .some(member)
            }
        }
        var net = MomentChange()
        for id in order {
            let old = before[id]!, new = after[id]!
            if old == new { continue }
            if let old { net.removed.append(old) }
            if let new { net.added.append(new) }
        }
        return net
    }

    /// The change without no-op updates (an asset removed and added with the same value, as
    /// a re-read of an unchanged file produces), so that its day is not recomputed for nothing.
    public func withoutNoOps() -> MomentChange {
        var addedByID: [AssetID: MomentMember] = [:]
        for member in added { addedByID[member.id] = member }
        var same = Set<AssetID>()
        for member in removed where addedByID[member.id] == member { same.insert(member.id) }
        if same.isEmpty { return self }
        return MomentChange(removed: removed.filter { !same.contains($0.id) },
                            added: added.filter { !same.contains($0.id) })
    }
}

/// How one job changed the moments: ids, newest first in each list.
public struct MomentDiff: Sendable, Hashable {
    /// Moments that did not exist before.
    public var inserted: [String]
    /// Moments that exist before and after whose record (dates, counts, location) changed.
    public var updated: [String]
    /// Moments that no longer exist (their day has no member left).
    public var deleted: [String]
    /// Moments that exist before and after whose member list changed: a member joined or
    /// left, or moved within the day's order. Clients holding the moment's assets refetch or
    /// diff them. May overlap with `updated`.
    public var contentChanged: [String]

    /// A diff from its lists.
    public init(inserted: [String] = [], updated: [String] = [], deleted: [String] = [], contentChanged: [String] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.contentChanged = contentChanged
    }

    /// Whether no moment changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && contentChanged.isEmpty }
}

/// Incremental maintenance of moments: what one sort job does with its chunk.
public enum MomentMerge {
    /// The days a change touches: every day an old value leaves and every day a new value joins.
    public static func affectedDays(_ change: MomentChange) -> Set<Int> {
        var days = Set<Int>()
        for m in change.removed { days.insert(m.day) }
        for m in change.added { days.insert(m.day) }
        return days
    }

    /// The days whose moment must be recomputed from their members after the change (they
    /// lose a member, or a member changes); every other affected day only gains members.
    public static func daysToRecompute(_ change: MomentChange) -> Set<Int> {
        Set(change.withoutNoOps().removed.map(\.day))
    }

    /// Updates the moments of the days `change` touches.
    ///
    /// - `existing`: the current moments of (at least) the affected days; a day absent from it
    ///   has no moment yet.
    /// - `membersAfter(day)`: the day's members after the change (the caller answers from its
    ///   store, after writing the change's asset rows). Called only for the days that lose a
    ///   member (`daysToRecompute`), once each.
    ///
    /// A day that only gains members is updated from its existing moment and the added members
    /// alone, O(k); so a job costs O(chunk) plus the days it removes from. `change.added` must
    /// not contain assets already counted in `existing` unless their old value is in
    /// `change.removed` (an update is always a removal and an addition).
    ///
    /// Returns the moment of every affected day after the change (`nil`: the day has no moment
    /// any more) and the diff.
    public static func apply(_ change: MomentChange, existing: [Int: Moment],
                             membersAfter: (Int) -> [MomentMember]) -> (moments: [Int: Moment?], diff: MomentDiff) {
        let change = change.withoutNoOps()
        var removedByDay: [Int: [MomentMember]] = [:]
        var addedByDay: [Int: [MomentMember]] = [:]
        for m in change.removed { removedByDay[m.day, default: []].append(m) }
        for m in change.added { addedByDay[m.day, default: []].append(m) }

        var result: [Int: Moment?] = [:]
        var diff = MomentDiff()
        let days = Set(removedByDay.keys).union(addedByDay.keys).sorted(by: >)
        for day in days {
            let old = existing[day]
            let new: Moment?
            if removedByDay[day] != nil {
                new = MomentGrouping.moment(day: day, members: membersAfter(day))
            } else {
                var m = old
                for member in addedByDay[day] ?? [] {
                    if m == nil { m = Moment(day: day, first: member) }
                    m!.add(member)
                }
                new = m
            }
            result[day] = .some(new)
            switch (old, new) {
            case (nil, nil): break
            case (nil, let n?): diff.inserted.append(n.id)
            case (let o?, nil): diff.deleted.append(o.id)
            case (let o?, let n?):
                if o != n { diff.updated.append(n.id) }
                if memberListChanged(removed: removedByDay[day] ?? [], added: addedByDay[day] ?? []) {
                    diff.contentChanged.append(n.id)
                }
            }
        }
        return (result, diff)
    }

    /// Whether the day's ordered member list differs: the keys that left are not exactly the
    /// keys that joined (a GPS-only update keeps the list; a time change within the day does not).
    static func memberListChanged(removed: [MomentMember], added: [MomentMember]) -> Bool {
        guard removed.count == added.count else { return true }
        return removed.map(\.key).sorted() != added.map(\.key).sorted()
    }
}

/// A moment list (PhotoKit's moment `PHCollectionList`): the moments of one year or one month.
public struct MomentList: Sendable, Hashable {
    /// Whether the list spans a year or a month.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// The moments of a calendar year.
        case year
        /// The moments of a calendar month.
        case month
    }

    /// `y_2019` or `mo_2019-05`: derived from the period alone, so stable across rebuilds.
    public var id: String
    /// Year or month.
    public var kind: Kind
    /// `2019` or `May 2019`.
    public var title: String
    /// The calendar year.
    public var year: Int
    /// 1–12 for month lists; `nil` for year lists.
    public var month: Int?
    /// The moments in the period, newest first.
    public var momentIDs: [String]
    /// Members of every moment in the period.
    public var assetCount: Int
    /// Images among them.
    public var photoCount: Int
    /// Videos among them.
    public var videoCount: Int
    /// The oldest moment's start.
    public var start: LocalDateTime
    /// The newest moment's end.
    public var end: LocalDateTime
    /// Its newest visible assets, newest first (`KeyAssets`): set by the store, which keeps
    /// each moment's newest (`IndexReader.withKeyAssets`).
    public var keyAssetIDs: [AssetID] = []
    /// Assets by city over its moments.
    var placeTally: [String: Int] = [:]
    /// Its most frequent cities (three at most), most assets first.
    public var locationNames: [String] {
        placeTally.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(3).map(\.key)
    }

    /// A list begun with its newest moment (`Builder` adds the older ones in turn).
    init(id: String, kind: Kind, title: String, year: Int, month: Int?, first moment: MomentLists.Row, id momentID: String) {
        self.init(id: id, kind: kind, title: title, year: year, month: month, momentIDs: [momentID],
                  assetCount: moment.assetCount, photoCount: moment.photoCount, videoCount: moment.videoCount,
                  start: moment.start, end: moment.end)
    }

    /// Adds an older moment than those in the list (its cities are the caller's to tally).
    mutating func add(_ moment: MomentLists.Row, id momentID: String) {
        momentIDs.append(momentID)
        assetCount += moment.assetCount
        photoCount += moment.photoCount
        videoCount += moment.videoCount
        start = moment.start
    }

    /// A list as a store holds it.
    public init(id: String, kind: Kind, title: String, year: Int, month: Int?, momentIDs: [String],
                assetCount: Int, photoCount: Int, videoCount: Int, start: LocalDateTime, end: LocalDateTime) {
        self.id = id
        self.kind = kind
        self.title = title
        self.year = year
        self.month = month
        self.momentIDs = momentIDs
        self.assetCount = assetCount
        self.photoCount = photoCount
        self.videoCount = videoCount
        self.start = start
        self.end = end
    }
}

/// Moment lists by year and by month. A list is a function of its period's moments: the store
/// builds every list from the moments' rows at each request (`IndexReader.momentLists`), a
/// few thousand rows at 1,000,000 assets.
public enum MomentLists {
    /// Year and month lists of `moments` (any order; the store's newest first costs no sort),
    /// each newest first: the lists equal `yearList` and `monthList` of each period.
    public static func build(_ moments: [Moment]) -> (years: [MomentList], months: [MomentList]) {
        let ordered = zip(moments, moments.dropFirst()).allSatisfy { $0.day > $1.day }
        var builder = Builder()
        for m in ordered ? moments : moments.sorted(by: { $0.day > $1.day }) {
            builder.add(Row(day: m.day, start: m.start, end: m.end, assetCount: m.assetCount, photoCount: m.photoCount,
                            videoCount: m.videoCount))
            for c in m.locationCounts { builder.addPlace(c.name, count: c.count) }
        }
        return builder.finish()
    }

    /// What a list needs of one moment (its cities are added after it, `Builder.addPlace`): a
    /// store reads it from the moment's row without making a `Moment` (`IndexReader.momentLists`).
    public struct Row: Sendable {
        public var day: Int
        public var start: LocalDateTime
        public var end: LocalDateTime
        public var assetCount: Int
        public var photoCount: Int
        public var videoCount: Int

        public init(day: Int, start: LocalDateTime, end: LocalDateTime, assetCount: Int, photoCount: Int, videoCount: Int) {
            self.day = day
            self.start = start
            self.end = end
            self.assetCount = assetCount
            self.photoCount = photoCount
            self.videoCount = videoCount
        }
    }

    /// Year and month lists built in one pass over the moments, newest first, each moment's
    /// date worked out once. A moment's cities are tallied into its month's list only, and a
    /// year's from its months' at `finish`: a city is hashed once a moment, not twice.
    public struct Builder {
        private var years: [MomentList] = []
        private var months: [MomentList] = []

        public init() {}

        /// Adds a moment older than every one added before.
        public mutating func add(_ moment: Row) {
            let (y, mo, _) = CivilTime.civilFromDays(moment.day)
            let id = MomentGrouping.id(day: moment.day)
            if years.last?.year == y {
                years[years.count - 1].add(moment, id: id)
            } else {
                years.append(MomentList(id: yearID(y), kind: .year, title: String(y), year: y, month: nil, first: moment, id: id))
            }
            if let last = months.last, last.year == y, last.month == mo {
                months[months.count - 1].add(moment, id: id)
            } else {
                months.append(MomentList(id: monthID(year: y, month: mo), kind: .month,
                                         title: MomentGrouping.monthNames[mo - 1] + " " + String(y), year: y, month: mo,
                                         first: moment, id: id))
            }
        }

        /// Counts `count` assets of the moment added last in the city `name`.
        public mutating func addPlace(_ name: String, count: Int) {
            months[months.count - 1].placeTally[name, default: 0] += count
        }

        /// The lists, newest first.
        public func finish() -> (years: [MomentList], months: [MomentList]) {
            var years = years
            var y = 0
            for month in months {  // both newest first: a year's months follow one another
                while years[y].year != month.year { y += 1 }
                for (name, count) in month.placeTally { years[y].placeTally[name, default: 0] += count }
            }
            return (years, months)
        }
    }

    /// The list of one year from its moments (moments of other years are ignored); `nil` when
    /// the year has none.
    public static func yearList(year: Int, moments: [Moment]) -> MomentList? {
        list(id: yearID(year), kind: .year, title: String(year), year: year, month: nil,
             moments: moments.filter { CivilTime.civilFromDays($0.day).year == year })
    }

    /// The list of one month from its moments (moments of other months are ignored); `nil`
    /// when the month has none.
    public static func monthList(year: Int, month: Int, moments: [Moment]) -> MomentList? {
        list(id: monthID(year: year, month: month), kind: .month,
             title: MomentGrouping.monthNames[month - 1] + " " + String(year), year: year, month: month,
             moments: moments.filter {
                 let d = CivilTime.civilFromDays($0.day)
                 return d.year == year && d.month == month
             })
    }

    /// `y_YYYY`.
    public static func yearID(_ year: Int) -> String { "y_" + pad(year, 4) }

    /// `mo_YYYY-MM`.
    public static func monthID(year: Int, month: Int) -> String { "mo_" + pad(year, 4) + "-" + pad(month, 2) }

    /// One period's list from its moments (the reference `build` equals).
    static func list(id: String, kind: MomentList.Kind, title: String, year: Int, month: Int?,
                     moments: [Moment]) -> MomentList? {
        let sorted = moments.sorted { $0.day > $1.day }
        guard let newest = sorted.first, let oldest = sorted.last else { return nil }
        var list = MomentList(id: id, kind: kind, title: title, year: year, month: month, momentIDs: sorted.map(\.id),
                              assetCount: 0, photoCount: 0, videoCount: 0, start: oldest.start, end: newest.end)
        for m in sorted {
            list.assetCount += m.assetCount
            list.photoCount += m.photoCount
            list.videoCount += m.videoCount
            for c in m.locationCounts { list.placeTally[c.name, default: 0] += c.count }
        }
        return list
    }
}
