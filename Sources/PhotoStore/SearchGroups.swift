import PhotoModel

/// A one-word search whose many matches are a place's, a folder's or a camera's assets
/// ("Berlin", "2020", "apple"), answered without reading every match: how many match from the
/// counts the places, the folders and the cameras keep (`place_counts`,
/// `directories.asset_count`, `camera_counts`), and the newest of each score from their
/// capture-order indexes, merged. The asset's own matches (its words, the taggers' keywords,
/// its user albums) are read one by one when few, and when many only those that change a score
/// (outside the word's groups, or weighing more than the group they are in); where its places',
/// folders' and cameras' assets meet is summed from the counts of each folder, place and camera
/// together (`group_counts`). Visible assets only, one of a burst (the others go back to
/// `rankedSearch`'s pass); the same order and total.
enum SearchGroups {
    /// At most this many of the asset's own matches are read one by one (of all, or of those
    /// that change a score); more send the word back to the pass.
    static let ownAtMost = SearchScores.few
    /// Rows a group's cursor reads at a time (then four times more at each refill).
    static let batch = 16

    /// Above every capture time (they are ISO digits), with the largest pk: where a walk begins.
    static let start = (pk: Int64.max, local: "\u{10FFFF}")

    /// A place's visible assets before (`?2`, `?3`) in capture order, newest first, `?4` of them.
    static let placeRows = """
        SELECT pk, local_datetime FROM assets INDEXED BY assets_place
        WHERE place_id = ?1 AND place_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL
          AND (local_datetime, pk) < (?2, ?3)
        ORDER BY local_datetime DESC, pk DESC LIMIT ?4
        """

    /// A folder's visible assets at none of the places in the JSON array `?5`, likewise.
    static let folderRows = """
        SELECT pk, local_datetime FROM assets INDEXED BY assets_directory
        WHERE directory_id = ?1 AND is_hidden = 0 AND deleted_at IS NULL
          AND (place_id IS NULL OR place_id NOT IN (SELECT value FROM json_each(?5)))
          AND (local_datetime, pk) < (?2, ?3)
        ORDER BY local_datetime DESC, pk DESC LIMIT ?4
        """

    /// A camera's visible assets in none of the folders in the JSON array `?5` and at none of
    /// the places in `?6`, likewise.
    static let cameraRows = """
        SELECT pk, local_datetime FROM assets INDEXED BY assets_camera
        WHERE camera_id = ?1 AND camera_id IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL
          AND directory_id NOT IN (SELECT value FROM json_each(?5))
          AND (place_id IS NULL OR place_id NOT IN (SELECT value FROM json_each(?6)))
          AND (local_datetime, pk) < (?2, ?3)
        ORDER BY local_datetime DESC, pk DESC LIMIT ?4
        """

    /// A group whose assets are read newest first: its id and the newest capture time it can
    /// hold (nil: unknown, read at once).
    struct Group {
        var id: Int64
        var newest: String?
    }

    /// A match of the asset's own sources, visible and not one of a burst's others.
    struct Own {
        var pk: Int64
        var code: Int
        var place: Int64?
        var directory: Int64
        var camera: Int64?
        var local: String
    }

    /// The assets of one score, as `rankedSearch`'s tiers: how many it has, which groups it
    /// reads (by `rows`, a group's id, a capture time and pk to read before and a count bound
    /// at ?1 to ?4, then `parameters` from ?5 on), the own matches it adds and the pks it skips.
    struct Tier {
        var code: Int
        var members = 0
        var groups: [Group] = []
        var rows: String?
        var parameters: [String] = []
        var added: [(pk: Int64, local: String)] = []
        var skipped: Set<Int64> = []
    }

    /// The tiers of a word whose places `places` (with their visible assets), folders
    /// `folders` and cameras `cameras` (likewise) match, `meeting` of the places' and the
    /// folders' assets being in both, `cameraMeeting` of the cameras' in one of those folders or
    /// at one of those places, `extras` the visible burst members that do not stand for their
    /// burst, `own` the asset's own matches: pure, so the tests can check the counting apart.
    static func tiers(places: [(group: Group, assets: Int)], folders: [(group: Group, assets: Int)],
                      cameras: [(group: Group, assets: Int)] = [], meeting: Int, cameraMeeting: Int = 0,
                      extras: [(pk: Int64, place: Int64?, directory: Int64, camera: Int64?)], own: [Own]) -> [Tier] {
        let placeIDs = Set(places.map(\.group.id)), folderIDs = Set(folders.map(\.group.id))
        let cameraIDs = Set(cameras.map(\.group.id))
        func grouped(_ place: Int64?, _ directory: Int64, _ camera: Int64?) -> Int {
            if let place, placeIDs.contains(place) { return SearchSources.subject }
            if folderIDs.contains(directory) { return SearchSources.name }
            if let camera, cameraIDs.contains(camera) { return SearchSources.camera }
            return 0
        }
        var byPlace = Tier(code: SearchSources.subject), byFolder = Tier(code: SearchSources.name)
        var byCamera = Tier(code: SearchSources.camera)
        byPlace.members = places.reduce(0) { $0 + $1.assets }
        byPlace.groups = places.map(\.group)
        byPlace.rows = placeRows
        byFolder.members = folders.reduce(0) { $0 + $1.assets } - meeting
        byFolder.groups = folders.map(\.group)
        byFolder.rows = folderRows
        byFolder.parameters = [SearchJoin.json(places.map(\.group.id))]
        byCamera.members = cameras.reduce(0) { $0 + $1.assets } - cameraMeeting
        byCamera.groups = cameras.map(\.group)
        byCamera.rows = cameraRows
        byCamera.parameters = [SearchJoin.json(folders.map(\.group.id)), byFolder.parameters[0]]
        for extra in extras {
            switch grouped(extra.place, extra.directory, extra.camera) {
            case SearchSources.subject: byPlace.members -= 1; byPlace.skipped.insert(extra.pk)
            case SearchSources.name: byFolder.members -= 1; byFolder.skipped.insert(extra.pk)
            case SearchSources.camera: byCamera.members -= 1; byCamera.skipped.insert(extra.pk)
            default: break
            }
        }
        for match in own {
            let group = grouped(match.place, match.directory, match.camera)
            guard match.code > group else { continue }
            if group == SearchSources.name { byFolder.members -= 1; byFolder.skipped.insert(match.pk) }
            if group == SearchSources.camera { byCamera.members -= 1; byCamera.skipped.insert(match.pk) }
            switch match.code {
            case SearchSources.subject: byPlace.members += 1; byPlace.added.append((match.pk, match.local))
            case SearchSources.name: byFolder.members += 1; byFolder.added.append((match.pk, match.local))
            default: byCamera.members += 1; byCamera.added.append((match.pk, match.local))
            }
        }
        return [byPlace, byFolder, byCamera].filter { $0.members > 0 }
    }

    /// What `groupedSearch` gives: the answer, or the word's weights for the pass.
    enum Answer {
        case found(pks: [Int64], total: Int)
        case weights([UInt8])

        var found: (pks: [Int64], total: Int)? {
            if case .found(let pks, let total) = self { return (pks, total) }
            return nil
        }
    }

    /// A word's own matches that change scores, or too many of them and the word's weights.
    enum OwnMatches {
        case read([Own])
        case tooMany(weights: [UInt8])
    }

    /// A byte per id, 1 for these (positive) ids, for `photod_member`: 0, no place or camera, is
    /// never one.
    static func members(_ ids: [Int64]) -> [UInt8] {
        var blob = [UInt8](repeating: 0, count: Int(ids.max() ?? 0) + 1)
        for id in ids where id > 0 { blob[Int(id)] = 1 }
        return blob
    }

    /// The larger byte of the two at each pk.
    static func larger(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = a.count >= b.count ? a : b
        let other = a.count >= b.count ? b : a
        for i in other.indices where other[i] > out[i] { out[i] = other[i] }
        return out
    }

    /// The condition an own match is read under: visible, and the one of its burst shown.
    static let shown = "a.is_hidden = 0 AND a.deleted_at IS NULL AND NOT (a.burst_id IS NOT NULL AND a.represents_burst = 0)"

    /// Whether `a` comes before `b` newest first (capture time, then pk, both descending).
    static func newer(_ a: (pk: Int64, local: String), _ b: (pk: Int64, local: String)) -> Bool {
        a.local != b.local ? a.local > b.local : a.pk > b.pk
    }

    /// The pks whose own code changes their score: larger than their group's (0 where no group
    /// has them; a subject's, 3, in a folder, 2). Both blobs are a byte per pk.
    static func changing(own: [UInt8], group: [UInt8]) -> [Int64] {
        var pks: [Int64] = []
        own.withUnsafeBufferPointer { o in
            group.withUnsafeBufferPointer { g in
                for i in o.indices where o[i] != 0 {
                    if o[i] > (i < g.count ? g[i] : 0) { pks.append(Int64(i)) }
                }
            }
        }
        return pks
    }
}

extension SearchGroups.Own {
    /// From a row of pk, code, place_id, directory_id, local_datetime, camera_id.
    init(_ s: Statement) {
        self.init(pk: s.int64(0), code: s.int(1), place: s.optionalInt64(2), directory: s.int64(3),
                  camera: s.optionalInt64(5), local: s.string(4))
    }
}

extension IndexReader {
    /// `rankedSearch` for one word whose matches are mostly a place's, a folder's or a camera's
    /// assets (`SearchGroups`); nil when its own matches are too many to read, for the pass to
    /// answer — with the word's weights when they were made.
    func groupedSearch(_ term: SearchQuery.Term, needed: Int, wanted: Int,
                       ownAtMost: Int = SearchGroups.ownAtMost) throws(StoreError) -> SearchGroups.Answer? {
        let (places, folders, cameras) = try groups(of: term, newest: true)
        // A word no group has ("kitten", a file name's) is the pass's: its own matches are not
        // counted twice (a prefix's are merged from all its words, ~7 ms for "kitt"*).
        guard !places.isEmpty || !folders.isEmpty || !cameras.isEmpty else { return nil }
        // The word's own matches as a byte per pk (a prefix of one or two letters is one list of
        // FTS5's, migration 023; a longer one's words are merged once: "202"* is thousands of
        // dates).
        let ownCodes = try weights(term, ownOnly: true)
        let ownRows = ownCodes.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }

        let (meeting, cameraMeeting) = try meetings(places: places.map(\.group.id), folders: folders.map(\.group.id),
                                                    cameras: cameras.map(\.group.id))

        var extras: [(pk: Int64, place: Int64?, directory: Int64, camera: Int64?)] = []
        do {
            let others = try db.statement("""
                SELECT pk, place_id, directory_id, camera_id FROM assets
                WHERE burst_id IS NOT NULL AND represents_burst = 0 AND is_hidden = 0 AND deleted_at IS NULL
                """)
            while try others.step() { extras.append((others.int64(0), others.optionalInt64(1), others.int64(2), others.optionalInt64(3))) }
            others.reset()
        }

        var own: [SearchGroups.Own] = []
        if ownRows > ownAtMost {
            // Many: only those that change a score are read — outside the word's places and
            // folders, or weighing more than a folder in one ("2020"'s 43,552 file-name dates at
            // 1,000,000 assets are nearly all in its 703 folders) — found by comparing the
            // own matches' codes with the groups' as a byte per asset, both made inside SQLite.
            switch try ownChangingScores(ownCodes, places: places.map(\.group.id), folders: folders.map(\.group.id),
                                         cameras: cameras.map(\.group.id), atMost: ownAtMost) {
            case .read(let read): own = read
            case .tooMany(let weights): return .weights(weights)
            }
        } else if ownRows > 0 {
            own = try readOwn(ownCodes, pks: ownCodes.indices.filter { ownCodes[$0] != 0 }.map(Int64.init))
        }

        let tiers = SearchGroups.tiers(places: places, folders: folders, cameras: cameras, meeting: meeting,
                                       cameraMeeting: cameraMeeting, extras: extras, own: own)
        let (pks, total) = try ordered(tiers, needed: needed, wanted: wanted)
        return .found(pks: pks, total: total)
    }

    /// How many visible assets are at one of `places` and in one of `folders`, and how many of
    /// `cameras`' are in one of those folders or at one of those places: a sum over the kept
    /// counts of folder, place and camera together (`group_counts`), when the word has groups of
    /// two kinds or three.
    private func meetings(places: [Int64], folders: [Int64], cameras: [Int64]) throws(StoreError)
        -> (places: Int, cameras: Int) {
        let kinds = [places, folders, cameras].filter { !$0.isEmpty }.count
        guard kinds > 1 else { return (0, 0) }
        let sum = try db.statement("""
            SELECT coalesce(sum(assets) FILTER (WHERE photod_member(?1, place_id) AND photod_member(?2, directory_id)), 0),
                   coalesce(sum(assets) FILTER (WHERE photod_member(?3, camera_id)
                                                AND (photod_member(?2, directory_id) OR photod_member(?1, place_id))), 0)
            FROM group_counts
            """)
        sum.bind(SearchGroups.members(places), at: 1)
        sum.bind(SearchGroups.members(folders), at: 2)
        sum.bind(SearchGroups.members(cameras), at: 3)
        defer { sum.reset() }
        return try sum.step() ? (sum.int(0), sum.int(1)) : (0, 0)
    }

    /// A word's own matches that change a score (`SearchGroups.changing`), read; when more than
    /// `atMost`, the word's weights instead (a byte per pk, as `IndexReader.weights` makes
    /// them for the assets a search without hidden ones keeps), for the pass to go on from.
    private func ownChangingScores(_ own: [UInt8], places: [Int64], folders: [Int64], cameras: [Int64],
                                   atMost: Int) throws(StoreError) -> SearchGroups.OwnMatches {
        // A word of no place whose folders hold most of the library ("20"*: every year's folder):
        // an own match (a name, 2, or a keyword, 3: never a camera's 1) changes its score where
        // it is a keyword or in none of those folders, so the other folders' assets are read
        // instead of theirs.
        if places.isEmpty, let changing = try changingOutsideFolders(own, folders: folders) {
            if changing.count <= atMost { return .read(try readOwn(own, pks: changing)) }
        }
        let groups = try db.statement("""
            SELECT photod_weights(pk, c) FROM (
                SELECT pk, \(SearchSources.name) AS c FROM assets INDEXED BY assets_directory
                    WHERE directory_id IN (SELECT value FROM json_each(?1))
                UNION ALL SELECT pk, \(SearchSources.subject) FROM assets INDEXED BY assets_place
                    WHERE place_id IN (SELECT value FROM json_each(?2)) AND place_id IS NOT NULL
                      AND is_hidden = 0 AND deleted_at IS NULL
                UNION ALL SELECT pk, \(SearchSources.camera) FROM assets INDEXED BY assets_camera
                    WHERE camera_id IN (SELECT value FROM json_each(?3)) AND camera_id IS NOT NULL
                      AND is_hidden = 0 AND deleted_at IS NULL)
            """)
        groups.bind(SearchJoin.json(folders), at: 1)
        groups.bind(SearchJoin.json(places), at: 2)
        groups.bind(SearchJoin.json(cameras), at: 3)
        let group = try groups.step() ? groups.bytes(0) : []
        groups.reset()
        let changing = SearchGroups.changing(own: own, group: group)
        guard changing.count <= atMost else { return .tooMany(weights: SearchGroups.larger(own, group)) }
        return .read(try readOwn(own, pks: changing))
    }

    /// The own matches that change a score for a word of no place, found from the assets of
    /// the folders it does not match; nil when those are not fewer than the ones it does.
    private func changingOutsideFolders(_ own: [UInt8], folders: [Int64]) throws(StoreError) -> [Int64]? {
        let sizes = try db.statement("""
            SELECT coalesce(sum(asset_count), 0), coalesce(sum(asset_count) FILTER (WHERE id IN (SELECT value FROM json_each(?1))), 0)
            FROM directories
            """)
        let json = SearchJoin.json(folders)
        sizes.bind(json, at: 1)
        let (all, inFolders) = try sizes.step() ? (sizes.int(0), sizes.int(1)) : (0, 0)
        sizes.reset()
        guard all - inFolders < inFolders else { return nil }
        let outside = try db.statement("""
            SELECT photod_weights(pk, 1) FROM assets INDEXED BY assets_directory
            WHERE directory_id IN (SELECT id FROM directories WHERE id NOT IN (SELECT value FROM json_each(?1)))
            """)
        outside.bind(json, at: 1)
        let elsewhere = try outside.step() ? outside.bytes(0) : []
        outside.reset()
        var pks: [Int64] = []
        own.withUnsafeBufferPointer { o in
            elsewhere.withUnsafeBufferPointer { e in
                for i in o.indices where o[i] == UInt8(SearchSources.subject) || (o[i] != 0 && i < e.count && e[i] != 0) {
                    pks.append(Int64(i))
                }
            }
        }
        return pks
    }

    /// The rows of these own matches (`own`: their codes, a byte per pk) that are visible and
    /// shown for their burst.
    private func readOwn(_ own: [UInt8], pks: [Int64]) throws(StoreError) -> [SearchGroups.Own] {
        guard !pks.isEmpty else { return [] }
        let read = try db.statement("""
            SELECT a.pk, photod_byte(?1, a.pk), a.place_id, a.directory_id, a.local_datetime, a.camera_id FROM assets a
            WHERE a.pk IN (SELECT value FROM json_each(?2)) AND \(SearchGroups.shown)
            """)
        read.bind(own, at: 1)
        read.bind(SearchJoin.json(pks), at: 2)
        var found: [SearchGroups.Own] = []
        while try read.step() { found.append(SearchGroups.Own(read)) }
        read.reset()
        return found
    }

    /// The first `count` assets of a tier, newest first: its groups' assets, each group read
    /// from its index a batch at a time and opened only once its newest capture time could
    /// come next, merged with the own matches it adds, without those it skips.
    func newest(of tier: SearchGroups.Tier, count: Int) throws(StoreError) -> [Int64] {
        struct Cursor {
            var group: Int64
            var rows: [(pk: Int64, local: String)]
            var next = 0
            var batch: Int
            var done: Bool
            var head: (pk: Int64, local: String)? { next < rows.count ? rows[next] : nil }
        }
        let statement = try tier.rows.map { sql throws(StoreError) in try db.statement(sql) }
        func read(_ group: Int64, after: (pk: Int64, local: String), _ batch: Int) throws(StoreError) -> Cursor {
            guard let s = statement else { return Cursor(group: group, rows: [], batch: batch, done: true) }
            s.bind(group, at: 1)
            s.bind(after.local, at: 2)
            s.bind(after.pk, at: 3)
            s.bind(batch, at: 4)
            for (i, parameter) in tier.parameters.enumerated() { s.bind(parameter, at: Int32(5 + i)) }
            var rows: [(pk: Int64, local: String)] = []
            while try s.step() { rows.append((s.int64(0), s.string(1))) }
            s.reset()
            return Cursor(group: group, rows: rows, batch: batch, done: rows.count < batch)
        }
        // Groups not yet opened, the newest last; a group of unknown span is opened at once.
        var waiting = tier.groups.sorted { ($0.newest ?? SearchGroups.start.local) < ($1.newest ?? SearchGroups.start.local) }
        var open: [Cursor] = []
        var added = tier.added.sorted(by: SearchGroups.newer)[...]
        var out: [Int64] = []
        out.reserveCapacity(count)
        while out.count < count {
            let best = open.indices.max { SearchGroups.newer(open[$1].head!, open[$0].head!) }
            let head = best.map { open[$0].head! }
            if let group = waiting.last, head == nil || (group.newest ?? SearchGroups.start.local) >= head!.local {
                waiting.removeLast()
                let cursor = try read(group.id, after: SearchGroups.start, SearchGroups.batch)
                if cursor.head != nil { open.append(cursor) }
                continue
            }
            if let first = added.first, head == nil || SearchGroups.newer(first, head!) {
                added.removeFirst()
                out.append(first.pk)
                continue
            }
            guard let best, let head else { break }
            if !tier.skipped.contains(head.pk) { out.append(head.pk) }
            open[best].next += 1
            if open[best].head == nil {
                if open[best].done {
                    open.remove(at: best)
                } else {
                    open[best] = try read(open[best].group, after: head, open[best].batch * 4)
                    if open[best].head == nil { open.remove(at: best) }
                }
            }
        }
        return out
    }
}


extension IndexReader {
    /// The places, folders and cameras whose words `term` matches and that have visible assets,
    /// with how many (kept in `place_counts`, `directories.asset_count`, `camera_counts`); with
    /// `newest`, each one's newest capture time too (nil without).
    func groups(of term: SearchQuery.Term, newest: Bool) throws(StoreError)
        -> (places: [(group: SearchGroups.Group, assets: Int)], folders: [(group: SearchGroups.Group, assets: Int)],
            cameras: [(group: SearchGroups.Group, assets: Int)]) {
        func newestIn(_ index: String, _ column: String) -> String {
            newest ? """
                (SELECT max(local_datetime) FROM assets INDEXED BY \(index)
                    WHERE \(column) = c.\(column) AND \(column) IS NOT NULL AND is_hidden = 0 AND deleted_at IS NULL)
                """ : "NULL"
        }
        let lists = [
            """
            SELECT c.place_id, c.assets, \(newestIn("assets_place", "place_id"))
            FROM place_words w JOIN place_counts c ON c.place_id = w.rowid WHERE place_words MATCH ?1 AND c.assets > 0
            """,
            """
            SELECT d.id, d.asset_count, \(newest ? "d.end_local" : "NULL")
            FROM folder_words w JOIN directories d ON d.id = w.rowid WHERE folder_words MATCH ?1 AND d.asset_count > 0
            """,
            """
            SELECT c.camera_id, c.assets, \(newestIn("assets_camera", "camera_id"))
            FROM camera_words w JOIN camera_counts c ON c.camera_id = w.rowid WHERE camera_words MATCH ?1 AND c.assets > 0
            """,
        ]
        var found: [[(group: SearchGroups.Group, assets: Int)]] = []
        for sql in lists {
            let s = try db.statement(sql)
            s.bind(term.ftsMatch, at: 1)
            var groups: [(group: SearchGroups.Group, assets: Int)] = []
            while try s.step() { groups.append((.init(id: s.int64(0), newest: s.optionalString(2)), s.int(1))) }
            s.reset()
            found.append(groups)
        }
        return (found[0], found[1], found[2])
    }

    /// The tiers' first `needed` assets in order, or more up to `wanted` while they are of the
    /// scores it took, and how many the tiers have.
    func ordered(_ tiers: [SearchGroups.Tier], needed: Int, wanted: Int) throws(StoreError) -> (pks: [Int64], total: Int) {
        let total = tiers.reduce(0) { $0 + $1.members }
        let needed = min(needed, total), wanted = min(max(needed, wanted), total)
        var ordered: [Int64] = []
        for tier in tiers where ordered.count < needed {
            ordered += try newest(of: tier, count: min(tier.members, wanted - ordered.count))
        }
        return (ordered, total)
    }
}
