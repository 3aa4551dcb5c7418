import PhotoModel

/// A search of several words, none of them rare ("Berlin 2020", "Berlin apple"), answered from
/// one word's places, folders and cameras rather than a pass over every match of every word:
/// the word with the fewest assets in its groups drives — their assets are read from their
/// capture-order indexes, whose entries carry each asset's folder, place and camera (migrations
/// 019 and 021), and SQLite keeps only those the other words also match (by their groups or
/// own matches, the last as a byte per pk) — then its own matches outside its groups are
/// added, and the few left are scored and ordered here. The same order and total as the pass;
/// visible assets, one of a burst.
enum SearchJoin {
    /// At most this many of the driving word's own matches outside its places and folders are
    /// read one by one; more, the pass.
    static let outsideAtMost = SearchScores.few
    /// At most this many words (each word's own matches are held as a byte per asset).
    static let wordsAtMost = 4
    /// At most this many assets in the driving word's groups, read from their indexes inside
    /// SQLite (some 40 ns an entry); more, the pass.
    static let drivingAtMost = 400_000
    /// At most this many matches of every word ordered here (24 bytes each while they are);
    /// more, the pass.
    static let matchesAtMost = 150_000

    /// One word of the query: where it matches.
    struct Word {
        var places: [Int64] = []
        var folders: [Int64] = []
        var cameras: [Int64] = []
        /// Assets in its places, folders and cameras, each counted once per group.
        var grouped = 0
        /// Its own matches' codes, a byte per pk (`SearchSources.own`).
        var own: [UInt8] = []
        var ownCount = 0
        /// Its groups as a flag by id.
        var placeFlags: [Bool] = []
        var folderFlags: [Bool] = []
        var cameraFlags: [Bool] = []

        var hasGroups: Bool { !places.isEmpty || !folders.isEmpty || !cameras.isEmpty }

        mutating func flag() {
            placeFlags = Self.flags(places)
            folderFlags = Self.flags(folders)
            cameraFlags = Self.flags(cameras)
        }

        static func flags(_ ids: [Int64]) -> [Bool] {
            var flags = [Bool](repeating: false, count: Int(ids.max() ?? -1) + 1)
            for id in ids where id >= 0 { flags[Int(id)] = true }
            return flags
        }

        /// The word's code for an asset: the best of its place's, its folder's, its camera's
        /// and its own.
        func code(pk: Int64, place: Int64?, directory: Int64, camera: Int64?) -> Int {
            var best = pk >= 0 && pk < own.count ? Int(own[Int(pk)]) : 0
            if let place, place >= 0, place < placeFlags.count, placeFlags[Int(place)] { best = max(best, SearchSources.subject) }
            if directory >= 0, directory < folderFlags.count, folderFlags[Int(directory)] { best = max(best, SearchSources.name) }
            if let camera, camera >= 0, camera < cameraFlags.count, cameraFlags[Int(camera)] { best = max(best, SearchSources.camera) }
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
    /// has a place, a folder or a camera, when the driving word has too many own matches outside
    /// them or when the words match too much, for the pass to answer.
    func joinedSearch(_ terms: [SearchQuery.Term], needed: Int, wanted: Int,
                      outsideAtMost: Int = SearchJoin.outsideAtMost,
                      matchesAtMost: Int = SearchJoin.matchesAtMost,
                      intersecting: Bool = true) throws(StoreError) -> (pks: [Int64], total: Int)? {
        // Each word's own matches are a byte per asset here at once: a few words only.
        guard terms.count <= SearchJoin.wordsAtMost else { return nil }
        var words = try searchWords(terms)
        guard let driver = SearchJoin.driver(words) else { return nil }
        try addOwnMatches(&words, terms)
        // Words of one kind of group each: counted and read where their groups meet.
        if intersecting, let found = try intersectedSearch(words, driver: driver, needed: needed, wanted: wanted) {
            return found
        }
        // Each word matches at most its groups' assets and its own: when every word may match
        // more than are ordered here, the pass answers ("apple iphone": the same cameras).
        guard words.map({ $0.grouped + $0.ownCount }).min()! <= matchesAtMost else { return nil }
        let lead = words[driver]
        let others = words.indices.filter { $0 != driver }

        // Every other word's condition on an index entry, without the parts it has none of
        // (parameters from ?5 on, four a word: its places, its folders, its own matches, its
        // cameras).
        var conditions: [String] = []
        var parameter = 5
        for i in others {
            var parts: [String] = []
            if !words[i].places.isEmpty { parts.append("a.place_id IN (SELECT value FROM json_each(?\(parameter)))") }
            if !words[i].folders.isEmpty { parts.append("a.directory_id IN (SELECT value FROM json_each(?\(parameter + 1)))") }
            if words[i].ownCount > 0 { parts.append("photod_byte(?\(parameter + 2), a.pk) != 0") }
            if !words[i].cameras.isEmpty { parts.append("a.camera_id IN (SELECT value FROM json_each(?\(parameter + 3)))") }
            conditions.append(parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")")
            parameter += 4
        }
        // The driving word's own matches in its groups come out too, to tell those outside.
        let also = conditions.isEmpty ? "" : " AND " + (lead.ownCount > 0 ? "(photod_byte(?3, a.pk) != 0 OR " : "(")
            + conditions.joined(separator: " AND ") + ")"
        func bind(_ s: Statement) {
            s.bind(SearchJoin.json(lead.folders), at: 1)
            s.bind(SearchJoin.json(lead.places), at: 2)
            if lead.ownCount > 0 { s.bind(lead.own, at: 3) }
            s.bind(SearchJoin.json(lead.cameras), at: 4)
            var n: Int32 = 5
            for i in others {
                if !words[i].places.isEmpty { s.bind(SearchJoin.json(words[i].places), at: n) }
                if !words[i].folders.isEmpty { s.bind(SearchJoin.json(words[i].folders), at: n + 1) }
                if words[i].ownCount > 0 { s.bind(words[i].own, at: n + 2) }
                if !words[i].cameras.isEmpty { s.bind(SearchJoin.json(words[i].cameras), at: n + 3) }
                n += 4
            }
        }
        let unseen = Set(try leftOut(AssetQuery()))
        // An entry's camera is read only when a word has cameras (~3 ms of "Berlin 2020"'s 75,000
        // entries otherwise).
        let cameras = words.contains { !$0.cameras.isEmpty }
        var matches: [SearchJoin.Match] = []
        var inGroups = [Bool](repeating: false, count: lead.ownCount > 0 ? lead.own.count : 0)
        func keep(_ s: Statement) -> Bool {
            let pk = s.int64(0)
            if pk >= 0, pk < inGroups.count { inGroups[Int(pk)] = true }
            guard unseen.isEmpty || !unseen.contains(pk) else { return true }
            let place = s.optionalInt64(2), directory = s.int64(1), camera = cameras ? s.optionalInt64(4) : nil
            var score = 0
            for word in words {
                let code = word.code(pk: pk, place: place, directory: directory, camera: camera)
                guard code > 0 else { return true }
                score += Int(SearchSources.points[min(code, 3)])
            }
            // A capture time not in the stored form (none is written so) is ordered by the pass.
            guard let local = s.withText(3, LocalDateTime.orderKey(isoBytes:)) else { return false }
            matches.append(.init(score: score, local: local, pk: pk))
            return matches.count <= matchesAtMost
        }
        let columns = "a.pk, a.directory_id, a.place_id, a.local_datetime, " + (cameras ? "a.camera_id" : "NULL")
        let rows = [
            // Its folders' assets, then its places' outside those folders, then its cameras'
            // outside both (each asset once).
            """
            SELECT \(columns) FROM assets a INDEXED BY assets_directory
            WHERE a.directory_id IN (SELECT value FROM json_each(?1))\(also)
            """,
            """
            SELECT \(columns) FROM assets a INDEXED BY assets_place
            WHERE a.place_id IN (SELECT value FROM json_each(?2)) AND a.place_id IS NOT NULL AND a.is_hidden = 0
              AND a.deleted_at IS NULL AND a.directory_id NOT IN (SELECT value FROM json_each(?1))\(also)
            """,
            """
            SELECT \(columns) FROM assets a INDEXED BY assets_camera
            WHERE a.camera_id IN (SELECT value FROM json_each(?4)) AND a.camera_id IS NOT NULL AND a.is_hidden = 0
              AND a.deleted_at IS NULL AND a.directory_id NOT IN (SELECT value FROM json_each(?1))
              AND (a.place_id IS NULL OR a.place_id NOT IN (SELECT value FROM json_each(?2)))\(also)
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
                SELECT \(columns) FROM assets a WHERE a.pk IN (SELECT value FROM json_each(?1))
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

extension SearchJoin {
    /// The word with the fewest assets in its groups, which drives; nil when no word has groups,
    /// they are too many, or the other words' groups have fewer (the join saves the pass over
    /// the other words' groups, so they must have as many; else the pass, before any word's
    /// own matches are made: "Berlin kitten" has one word of a file name's).
    static func driver(_ words: [Word]) -> Int? {
        guard let driver = words.indices.filter({ words[$0].hasGroups }).min(by: { words[$0].grouped < words[$1].grouped }),
              words[driver].grouped <= drivingAtMost,
              words.indices.reduce(0, { $0 + ($1 == driver ? 0 : words[$1].grouped) }) >= words[driver].grouped
        else { return nil }
        return driver
    }
}

extension IndexReader {
    /// Each term's places, folders and cameras (with their visible assets counted).
    func searchWords(_ terms: [SearchQuery.Term]) throws(StoreError) -> [SearchJoin.Word] {
        try terms.map { term throws(StoreError) in
            let (places, folders, cameras) = try groups(of: term, newest: false)
            var word = SearchJoin.Word()
            word.places = places.map(\.group.id)
            word.folders = folders.map(\.group.id)
            word.cameras = cameras.map(\.group.id)
            word.grouped = (places + folders + cameras).reduce(0) { $0 + $1.assets }
            word.flag()
            return word
        }
    }

    /// Each word's own matches (`terms`' in order), as a byte per asset.
    func addOwnMatches(_ words: inout [SearchJoin.Word], _ terms: [SearchQuery.Term]) throws(StoreError) {
        for (i, term) in terms.enumerated() {
            words[i].own = try weights(term, ownOnly: true)
            words[i].ownCount = words[i].own.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        }
    }
}
