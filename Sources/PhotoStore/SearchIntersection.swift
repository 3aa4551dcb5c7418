import PhotoModel

/// A search of several words that are each one kind of group — places ("Berlin"), folders
/// ("2020") or cameras ("apple") — and have few matches of their own, answered without reading
/// the matches: where the groups meet, every asset has the same score (each word's code is its
/// groups' kind), so how many there are is a count SQLite makes over the driving word's index
/// entries (which carry each asset's place, folder and camera), and the newest are read from
/// those entries a batch at a time, as `SearchGroups` reads one word's. The own matches (and
/// the assets a search leaves out) are read one by one and moved to the score they make. The
/// same order and total as the pass; visible assets, one of a burst. "Berlin apple" at
/// 1,000,000 assets: its groups (310,121 and 270,913 assets) meet at 90,332, counted over the
/// cameras' entries (~28 ms); the pass made a byte per asset for each word (~70 ms).
enum SearchIntersection {
    /// At most this many own matches and left-out assets read one by one; more, the join or
    /// the pass.
    static let readAtMost = SearchScores.few * 4

    /// A kind of group as its capture-order index holds it.
    struct Kind: Equatable {
        var code: Int
        var index: String
        var column: String
        /// The index's own condition (its entries are the visible assets only), or "".
        var visibleOnly: String

        static func of(code: Int) -> Kind {
            switch code {
            case SearchSources.subject:
                Kind(code: code, index: "assets_place", column: "place_id",
                     visibleOnly: " AND a.place_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL")
            case SearchSources.name:
                Kind(code: code, index: "assets_directory", column: "directory_id", visibleOnly: "")
            default:
                Kind(code: code, index: "assets_camera", column: "camera_id",
                     visibleOnly: " AND a.camera_id IS NOT NULL AND a.is_hidden = 0 AND a.deleted_at IS NULL")
            }
        }

        /// Whether the index holds an asset that is hidden or in Recently Deleted.
        var holdsHidden: Bool { visibleOnly.isEmpty }
    }

    /// The other words' conditions and the span of capture times where their visible assets
    /// all are (the two after their groups): each one's groups, bound from `?first` on.
    static func others(_ kinds: [Kind], first: Int) -> String {
        kinds.enumerated().map { i, kind in
            " AND a.\(kind.column) IN (SELECT value FROM json_each(?\(first + i)))"
        }.joined() + " AND a.local_datetime BETWEEN ?\(first + kinds.count) AND ?\(first + kinds.count + 1)"
    }

    /// How many entries of the driving word's groups (the JSON array `?1`) the other words'
    /// groups (from `?2` on) also have, in their span.
    static func count(_ driver: Kind, _ kinds: [Kind]) -> String {
        """
        SELECT count(*) FROM assets a INDEXED BY \(driver.index)
        WHERE a.\(driver.column) IN (SELECT value FROM json_each(?1))\(driver.visibleOnly)\(others(kinds, first: 2))
        """
    }

    /// One group's entries the other words' groups (from `?5` on) also have in their span,
    /// newest first, before (`?2`, `?3`), `?4` of them: a tier's `rows` (`SearchGroups.Tier`).
    static func rows(_ driver: Kind, _ kinds: [Kind]) -> String {
        """
        SELECT a.pk, a.local_datetime FROM assets a INDEXED BY \(driver.index)
        WHERE a.\(driver.column) = ?1\(driver.visibleOnly)\(others(kinds, first: 5))
          AND (a.local_datetime, a.pk) < (?2, ?3)
        ORDER BY a.local_datetime DESC, a.pk DESC LIMIT ?4
        """
    }

    /// The first and last capture times of a group's visible assets.
    static func span(_ kind: Kind) -> String {
        kind.code == SearchSources.name
            ? "SELECT start_local, end_local FROM directories WHERE id = ?1"
            : """
              SELECT (SELECT a.local_datetime FROM assets a INDEXED BY \(kind.index) WHERE a.\(kind.column) = ?1\(kind.visibleOnly)
                      ORDER BY a.local_datetime LIMIT 1),
                     (SELECT a.local_datetime FROM assets a INDEXED BY \(kind.index) WHERE a.\(kind.column) = ?1\(kind.visibleOnly)
                      ORDER BY a.local_datetime DESC LIMIT 1)
              """
    }

    /// Where spans overlap: the latest start and the earliest end (an empty span when one is).
    static func overlap(_ spans: [(first: String, last: String)?]) -> (first: String, last: String) {
        var first = "", last = "\u{10FFFF}"
        for span in spans {
            guard let span else { return ("\u{10FFFF}", "") }
            first = max(first, span.first)
            last = min(last, span.last)
        }
        return (first, last)
    }

    /// An asset read one by one: an own match of some word, or one a search leaves out.
    struct Read {
        var pk: Int64
        var place: Int64?
        var directory: Int64
        var camera: Int64?
        var local: String
        /// Neither hidden nor in Recently Deleted.
        var visible: Bool
        /// Visible and not a burst's member that does not stand for it.
        var shown: Bool
    }

    /// The tiers, highest score first: the groups' meeting (`met` entries counted over the
    /// driving word's index in `span`, `base` its tier with its groups and rows) corrected by
    /// the assets read one by one (`read`, scored by `words`). Pure, so the tests can check it
    /// apart.
    static func tiers(words: [SearchJoin.Word], driver: Kind, span: (first: String, last: String), met: Int,
                      base: SearchGroups.Tier, read: [Read]) -> [SearchGroups.Tier] {
        let baseScore = words.reduce(0) { $0 + Int(SearchSources.points[$1.soleKind?.code ?? 0]) }
        var base = base
        base.code = baseScore
        base.members = met
        var byScore: [Int: SearchGroups.Tier] = [:]
        for asset in read {
            var score = 0, meets = true
            for word in words {
                let group = word.code(pk: -1, place: asset.place, directory: asset.directory, camera: asset.camera)
                let code = word.code(pk: asset.pk, place: asset.place, directory: asset.directory, camera: asset.camera)
                meets = meets && group > 0
                guard code > 0 else { score = 0; break }
                score += Int(SearchSources.points[code])
            }
            let counted = meets && (driver.holdsHidden || asset.visible) && asset.local >= span.first && asset.local <= span.last
            let stays = counted && asset.shown && score == baseScore
            if counted && !stays {
                base.members -= 1
                base.skipped.insert(asset.pk)
            }
            guard asset.shown, score > 0, !stays else { continue }
            if score == baseScore {
                base.members += 1
                base.added.append((asset.pk, asset.local))
            } else {
                byScore[score, default: SearchGroups.Tier(code: score)].members += 1
                byScore[score]!.added.append((asset.pk, asset.local))
            }
        }
        return ([base] + byScore.values).filter { $0.members > 0 }.sorted { $0.code > $1.code }
    }
}

extension SearchJoin.Word {
    /// The code and ids of the word's groups when they are of one kind.
    var soleKind: (code: Int, ids: [Int64])? {
        switch (places.isEmpty, folders.isEmpty, cameras.isEmpty) {
        case (false, true, true): (SearchSources.subject, places)
        case (true, false, true): (SearchSources.name, folders)
        case (true, true, false): (SearchSources.camera, cameras)
        default: nil
        }
    }
}

extension IndexReader {
    /// `rankedSearch` for several words (`words`, their own matches made) each of one kind of
    /// group, `driver` the one with the fewest assets in them (`SearchIntersection`); nil when
    /// a word's groups are of several kinds or the own matches and left-out assets are too many
    /// to read, for the join or the pass to answer.
    func intersectedSearch(_ words: [SearchJoin.Word], driver: Int, needed: Int, wanted: Int,
                           readAtMost: Int = SearchIntersection.readAtMost) throws(StoreError) -> (pks: [Int64], total: Int)? {
        let sole = words.compactMap(\.soleKind)
        guard sole.count == words.count, words.count > 1 else { return nil }
        guard words.reduce(0, { $0 + $1.ownCount }) <= readAtMost else { return nil }
        var read = Set<Int64>()
        for word in words where word.ownCount > 0 {
            for pk in word.own.indices where word.own[pk] != 0 { read.insert(Int64(pk)) }
            guard read.count <= readAtMost else { return nil }
        }
        read.formUnion(try leftOut(AssetQuery()))
        guard read.count <= readAtMost else { return nil }

        let driverKind = SearchIntersection.Kind.of(code: sole[driver].code)
        let others = sole.indices.filter { $0 != driver }
        let kinds = others.map { SearchIntersection.Kind.of(code: sole[$0].code) }
        // Where the other words' visible assets all are: the meeting is there, and its walk
        // starts there ("sony 2020" walks a camera's 2020, not its years after).
        var spans: [(first: String, last: String)?] = []
        for (i, kind) in kinds.enumerated() {
            let spanOf = try db.statement(SearchIntersection.span(kind))
            var word: (first: String, last: String)?
            for id in sole[others[i]].ids {
                spanOf.bind(id, at: 1)
                if try spanOf.step(), let first = spanOf.optionalString(0), let last = spanOf.optionalString(1) {
                    word = (min(word?.first ?? first, first), max(word?.last ?? last, last))
                }
                spanOf.reset()
            }
            spans.append(word)
        }
        let span = SearchIntersection.overlap(spans)
        let groups = others.map { SearchJoin.json(sole[$0].ids) } + [span.first, span.last]
        let count = try db.statement(SearchIntersection.count(driverKind, kinds))
        count.bind(SearchJoin.json(sole[driver].ids), at: 1)
        for (i, json) in groups.enumerated() { count.bind(json, at: Int32(2 + i)) }
        let met = try count.step() ? count.int(0) : 0
        count.reset()

        var rows: [SearchIntersection.Read] = []
        if !read.isEmpty {
            let s = try db.statement("""
                SELECT a.pk, a.place_id, a.directory_id, a.camera_id, a.local_datetime,
                       a.is_hidden = 0 AND a.deleted_at IS NULL, \(SearchGroups.shown)
                FROM assets a WHERE a.pk IN (SELECT value FROM json_each(?1))
                """)
            s.bind(SearchJoin.json(read), at: 1)
            while try s.step() {
                rows.append(.init(pk: s.int64(0), place: s.optionalInt64(1), directory: s.int64(2), camera: s.optionalInt64(3),
                                  local: s.string(4), visible: s.int(5) != 0, shown: s.int(6) != 0))
            }
            s.reset()
        }
        // Each driving group's newest entry, when its cursor is opened (`newest(of:count:)`).
        let newestOf = try db.statement("""
            SELECT max(a.local_datetime) FROM assets a INDEXED BY \(driverKind.index) WHERE a.\(driverKind.column) = ?1\(driverKind.visibleOnly)
            """)
        var base = SearchGroups.Tier(code: 0)
        for id in sole[driver].ids {
            newestOf.bind(id, at: 1)
            let local = try newestOf.step() ? newestOf.optionalString(0) : nil
            newestOf.reset()
            if let local { base.groups.append(.init(id: id, newest: min(local, span.last))) }
        }
        base.rows = SearchIntersection.rows(driverKind, kinds)
        base.parameters = groups
        let tiers = SearchIntersection.tiers(words: words, driver: driverKind, span: span, met: met, base: base, read: rows)
        return try ordered(tiers, needed: needed, wanted: wanted)
    }
}
