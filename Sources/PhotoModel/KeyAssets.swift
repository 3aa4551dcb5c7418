/// The assets that stand for a collection on its tile (PhotoKit's `fetchKeyAssets(in:)`,
/// AssetsLibrary's `posterImage`): at most `KeyAssets.limit`, never a hidden or deleted asset
/// and never a burst's other members (its representative stands for it, as in a fetch).
///
/// - A moment, a folder album or a user album shows its favorites first (the first three in
///   the capture order), then photos spread over its time span: for each of the slots left,
///   the first photo at or after a target time (1/6, 1/2 and 5/6 of the span for three
///   slots; 1/4 and 3/4 for two; the middle for one), else the last one before it. Videos
///   fill the slots only when the photos run out. The picks come after the favorites, in
///   capture order.
/// - A smart album, a moment list, a collection list or a user folder shows its newest: the
///   last three in the capture order (Recently Added: the three added last).
///
/// The store keeps them with the rows they belong to, written in the job that changes them;
/// these functions are the rules, over arrays (what the store computes with index lookups).
public enum KeyAssets {
    /// Key assets per collection, at most.
    public static let limit = 3

    /// One member a rule may pick: its place in the capture order and what the rules read.
    public struct Candidate: Sendable, Hashable {
        public var key: MomentMemberKey
        public var mediaType: MediaType
        public var isFavorite: Bool

        public init(key: MomentMemberKey, mediaType: MediaType, isFavorite: Bool) {
            self.key = key
            self.mediaType = mediaType
            self.isFavorite = isFavorite
        }
    }

    /// What the spread rule asks of the collection's members: the first member of a type at
    /// or after `time` (or the last one before it), not a favorite, not in `excluding`.
    public struct Lookup: Sendable, Hashable {
        public var time: LocalDateTime
        public var atOrAfter: Bool
        public var mediaType: MediaType
        public var excluding: [AssetID]
    }

    /// The target times of `count` slots over `start ... end`: the middles of `count` equal
    /// parts, in whole seconds of the capture clock.
    public static func targets(start: LocalDateTime, end: LocalDateTime, count: Int) -> [LocalDateTime] {
        guard count > 0 else { return [] }
        let s = start.secondsSinceEpochOnThisClock, span = max(0, end.secondsSinceEpochOnThisClock - s)
        return (0..<count).compactMap { j in
            LocalDateTime(unixSeconds: s + span * Int64(2 * j + 1) / Int64(2 * count), offsetSeconds: 0)
        }
    }

    /// Favorites first, then the spread picks (see the type's documentation). `favorites` are
    /// the collection's first favorites in the capture order; `find` answers a `Lookup`.
    public static func spread<E: Error>(favorites: [MomentMemberKey], start: LocalDateTime, end: LocalDateTime,
                                        find: (Lookup) throws(E) -> MomentMemberKey?) throws(E) -> [AssetID] {
        let keys = Array(favorites.prefix(limit))
        var picks: [MomentMemberKey] = []
        for type in [MediaType.image, .video] {
            let need = limit - keys.count - picks.count
            guard need > 0 else { break }
            var chosen: [MomentMemberKey] = []
            for time in targets(start: start, end: end, count: need) {
                let excluding = chosen.map(\.id)
                var pick = try find(Lookup(time: time, atOrAfter: true, mediaType: type, excluding: excluding))
                if pick == nil { pick = try find(Lookup(time: time, atOrAfter: false, mediaType: type, excluding: excluding)) }
                guard let pick else { break }  // no other member of this type
                chosen.append(pick)
            }
            picks += chosen
        }
        return keys.map(\.id) + picks.sorted().map(\.id)
    }

    /// The spread rule over a collection's candidates (any order); `start` and `end` are the
    /// first and last capture times of all its visible members.
    public static func spread(_ members: [Candidate], start: LocalDateTime, end: LocalDateTime) -> [AssetID] {
        let ordered = members.sorted { $0.key < $1.key }
        let favorites = ordered.filter(\.isFavorite).map(\.key)
        return spread(favorites: favorites, start: start, end: end) { (lookup: Lookup) -> MomentMemberKey? in
            let pool = ordered.filter { !$0.isFavorite && $0.mediaType == lookup.mediaType && !lookup.excluding.contains($0.key.id) }
            if lookup.atOrAfter {
                return pool.first { !MomentGrouping.precedes($0.key.local, lookup.time) }?.key
            }
            return pool.last { MomentGrouping.precedes($0.key.local, lookup.time) }?.key
        }
    }

    /// The newest `limit` of `keys` (any order), newest first.
    public static func newest(_ keys: [MomentMemberKey]) -> [MomentMemberKey] {
        Array(keys.sorted(by: >).prefix(limit))
    }

    /// Merges `more` into `newest` (newest first, at most `limit`), keeping the newest `limit`.
    public static func merge(_ more: [MomentMemberKey], into newest: inout [MomentMemberKey]) {
        for key in more {
            guard newest.count < limit || key > newest[newest.count - 1] else { continue }
            guard !newest.contains(key) else { continue }
            let at = newest.firstIndex { key > $0 } ?? newest.count
            newest.insert(key, at: at)
            if newest.count > limit { newest.removeLast() }
        }
    }
}
