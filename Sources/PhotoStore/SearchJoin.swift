import PhotoModel

/// A search of several words, none of them rare ("Berlin 2020"), answered from one word's
/// places and folders rather than a pass over every match of every word: the word with the
/// fewest matches drives — its folders' and places' assets are read from their capture-order
/// indexes, whose entries carry each asset's folder and place (migration 019), and SQLite keeps
/// only those the other words also match (by their places, folders or own matches, the last as
/// a byte per pk) — then its own matches outside its groups are added, and the few left are
/// scored and ordered here. The same order and total as the pass; visible assets, one of a burst.
enum SearchJoin {
    /// At most this many of the driving word's own matches outside its places and folders are
    /// read one by one; more, the pass.
    static let outsideAtMost = SearchScores.few
    /// At most this many words (each word's own matches are held as a byte per asset).
    static let wordsAtMost = 4
    /// At most this many assets in the driving word's places and folders, and matches of every
    /// word ordered here (24 bytes each while they are); more, the pass.
    static let matchesAtMost = 150_000

    /// One word of the query: where it matches.
    struct Word {
        var places: [Int64] = []
        var folders: [Int64] = []
        /// Assets in its places and folders, each counted once per group.
        var grouped = 0
        /// Its own matches' codes, a byte per pk (`SearchSources.own`).
        var own: [UInt8] = []
        var ownCount = 0
        /// Its places and folders as a flag by id.
        var placeFlags: [Bool] = []
        var folderFlags: [Bool] = []

        mutating func flag() {
            placeFlags = Self.flags(places)
            folderFlags = Self.flags(folders)
        }

        static func flags(_ ids: [Int64]) -> [Bool] {
            var flags = [Bool](repeating: false, count: Int(ids.max() ?? -1) + 1)
            for id in ids where id >= 0 { flags[Int(id)] = true }
            return flags
        }

        /// The word's code for an asset: the best of its place's, its folder's and its own.
        func code(pk: Int64, place: Int64?, directory: Int64) -> Int {
            var best = pk >= 0 && pk < own.count ? Int(own[Int(pk)]) : 0
            if let place, place >= 0, place < placeFlags.count, placeFlags[Int(place)] { best = max(best, SearchSources.subject) }
            if directory >= 0, directory < folderFlags.count, folderFlags[Int(directory)] { best = max(best, SearchSources.name) }
            return best
        }
    }

    /// A match: its score (the words' points added up), capture time (`LocalDateTime.orderKey`)
    /// and pk.
    struct Match {
        var score: Int
        var local: Int64
        var pk: Int64
    }

    /// Most relevant first, then newest (capture time, then pk, descending), as the pass orders.
    static func before(_ a: Match, _ b: Match) -> Bool {
        if a.score != b.score { return a.score > b.score }
        return a.local != b.local ? a.local > b.local : a.pk > b.pk
    }

    /// The first `needed`, or more up to `wanted` while they are of the scores it took (as
    /// `rankedSearch` takes them), of matches in order.
    static func taken(_ ordered: [Match], needed: Int, wanted: Int) -> [Int64] {
        let needed = min(needed, ordered.count), wanted = min(max(needed, wanted), ordered.count)
        guard needed > 0 else { return [] }
        let lastScore = ordered[needed - 1].score
        var end = needed
        while end < wanted, ordered[end].score == lastScore { end += 1 }
        return ordered.prefix(end).map(\.pk)
    }

    static func json(_ ids: some Sequence<Int64>) -> String { "[" + ids.map(String.init).joined(separator: ",") + "]" }
}

extension IndexReader {
    /// `rankedSearch` for several words none of which is rare (`SearchJoin`); nil when no word
    /// has a place or a folder, when the driving word has too many own matches outside them or
    /// when the words match too much, for the pass to answer.
    func joinedSearch(_ terms: [SearchQuery.Term], needed: Int, wanted: Int,
                      outsideAtMost: Int = SearchJoin.outsideAtMost,
                      matchesAtMost: Int = SearchJoin.matchesAtMost) throws(StoreError) -> (pks: [Int64], total: Int)? {
        // Each word's own matches are a byte per asset here at once: a few words only.
        guard terms.count <= SearchJoin.wordsAtMost else { return nil }
        var words: [SearchJoin.Word] = []
        let placeList = try db.statement("""
            SELECT c.place_id, c.assets FROM place_words w JOIN place_counts c ON c.place_id = w.rowid
            WHERE place_words MATCH ?1 AND c.assets > 0
            """)
        let folderList = try db.statement("""
            SELECT d.id, d.asset_count FROM folder_words w JOIN directories d ON d.id = w.rowid
            WHERE folder_words MATCH ?1 AND d.asset_count > 0
            """)
        for term in terms {
            var word = SearchJoin.Word()
            placeList.bind(term.ftsMatch, at: 1)
            while try placeList.step() { word.places.append(placeList.int64(0)); word.grouped += placeList.int(1) }
            placeList.reset()
            folderList.bind(term.ftsMatch, at: 1)
            while try folderList.step() { word.folders.append(folderList.int64(0)); word.grouped += folderList.int(1) }
            folderList.reset()
            word.flag()
            words.append(word)
        }
        // The word with the fewest assets in its groups drives; the join saves the pass over
        // the other words' places and folders, so they must have as many (else the pass,
        // before any word's own matches are made: "Berlin apple" has one word of a camera's).
        guard let driver = words.indices.filter({ !words[$0].places.isEmpty || !words[$0].folders.isEmpty })
            .min(by: { words[$0].grouped < words[$1].grouped }),
            words[driver].grouped <= matchesAtMost,
            words.indices.reduce(0, { $0 + ($1 == driver ? 0 : words[$1].grouped) }) >= words[driver].grouped
        else { return nil }
        for (i, term) in terms.enumerated() {
            words[i].own = try weights(term, ownOnly: true)
            words[i].ownCount = words[i].own.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        }
        let lead = words[driver]
        let others = words.indices.filter { $0 != driver }

        // Every other word's condition on an index entry, without the parts it has none of
        // (parameters from ?4 on, three a word: its places, its folders, its own matches).
        var conditions: [String] = []
        var parameter = 4
        for i in others {
            var parts: [String] = []
            if !words[i].places.isEmpty { parts.append("a.place_id IN (SELECT value FROM json_each(?\(parameter)))") }
            if !words[i].folders.isEmpty { parts.append("a.directory_id IN (SELECT value FROM json_each(?\(parameter + 1)))") }
            if words[i].ownCount > 0 { parts.append("photod_byte(?\(parameter + 2), a.pk) != 0") }
            conditions.append(parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")")
            parameter += 3
        }
        // The driving word's own matches in its groups come out too, to tell those outside.
        let also = conditions.isEmpty ? "" : " AND " + (lead.ownCount > 0 ? "(photod_byte(?3, a.pk) != 0 OR " : "(")
            + conditions.joined(separator: " AND ") + ")"
        func bind(_ s: Statement) {
            s.bind(SearchJoin.json(lead.folders), at: 1)
            s.bind(SearchJoin.json(lead.places), at: 2)
            if lead.ownCount > 0 { s.bind(lead.own, at: 3) }
            var n: Int32 = 4
            for i in others {
                if !words[i].places.isEmpty { s.bind(SearchJoin.json(words[i].places), at: n) }
                if !words[i].folders.isEmpty { s.bind(SearchJoin.json(words[i].folders), at: n + 1) }
                if words[i].ownCount > 0 { s.bind(words[i].own, at: n + 2) }
                n += 3
            }
        }
        let unseen = Set(try leftOut(AssetQuery()))
        var matches: [SearchJoin.Match] = []
        var inGroups = [Bool](repeating: false, count: lead.ownCount > 0 ? lead.own.count : 0)
        func keep(_ s: Statement) -> Bool {
            let pk = s.int64(0)
            if pk >= 0, pk < inGroups.count { inGroups[Int(pk)] = true }
            guard !unseen.contains(pk) else { return true }
            let place = s.optionalInt64(2), directory = s.int64(1)
            var score = 0
            for word in words {
                let code = word.code(pk: pk, place: place, directory: directory)
                guard code > 0 else { return true }
                score += Int(SearchSources.points[min(code, 3)])
            }
            // A capture time not in the stored form (none is written so) is ordered by the pass.
            guard let local = s.withText(3, LocalDateTime.orderKey(isoBytes:)) else { return false }
            matches.append(.init(score: score, local: local, pk: pk))
            return matches.count <= matchesAtMost
        }
        let rows = [
            // Its folders' assets, then its places' outside those folders (each asset once).
            """
            SELECT a.pk, a.directory_id, a.place_id, a.local_datetime FROM assets a INDEXED BY assets_directory
            WHERE a.directory_id IN (SELECT value FROM json_each(?1))\(also)
            """,
            """
            SELECT a.pk, a.directory_id, a.place_id, a.local_datetime FROM assets a INDEXED BY assets_place
            WHERE a.place_id IN (SELECT value FROM json_each(?2)) AND a.place_id IS NOT NULL AND a.is_hidden = 0
              AND a.deleted_at IS NULL AND a.directory_id NOT IN (SELECT value FROM json_each(?1))\(also)
            """,
        ]
        for sql in rows {
            let s = try db.statement(sql)
            bind(s)
            while try s.step() {
                guard keep(s) else { s.reset(); return nil }
            }
            s.reset()
        }
        // The driving word's own matches outside its groups, read one by one.
        let outside = inGroups.indices.filter { lead.own[$0] != 0 && !inGroups[$0] }.map(Int64.init)
        guard outside.count <= outsideAtMost else { return nil }
        if !outside.isEmpty {
            let s = try db.statement("""
                SELECT a.pk, a.directory_id, a.place_id, a.local_datetime FROM assets a
                WHERE a.pk IN (SELECT value FROM json_each(?1))
                """)
            s.bind(SearchJoin.json(outside), at: 1)
            while try s.step() {
                guard keep(s) else { s.reset(); return nil }
            }
            s.reset()
        }
        matches.sort(by: SearchJoin.before)
        return (SearchJoin.taken(matches, needed: needed, wanted: wanted), matches.count)
    }
}
