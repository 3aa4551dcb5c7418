import PhotoModel

/// A search's scores by asset, apart from SQLite: each term's weights (a byte per pk, from
/// `IndexReader.weights`) required in turn and added up, as `SearchSources.points`; 0 is not
/// a match.
struct SearchScores {
    private(set) var score: [UInt16]

    init(first weights: [UInt8]) {
        score = weights.map { SearchSources.points[Int(min($0, 3))] }
    }

    /// Keeps the assets `weights` also has, adding its points.
    mutating func require(_ weights: [UInt8]) {
        score.withUnsafeMutableBufferPointer { s in
            weights.withUnsafeBufferPointer { w in
                let shared = min(s.count, w.count)
                for i in 0..<shared where s[i] != 0 {
                    let code = w[i]
                    s[i] = code == 0 ? 0 : s[i] &+ SearchSources.points[Int(min(code, 3))]
                }
                for i in shared..<s.count { s[i] = 0 }
            }
        }
    }

    mutating func exclude(_ pk: Int64) {
        if pk >= 0, pk < score.count { score[Int(pk)] = 0 }
    }

    /// The scores that occur, the highest first, with how many assets have each.
    func tiers() -> [(score: UInt16, members: Int)] {
        var counts = [Int](repeating: 0, count: Int(UInt16.max) + 1)
        var highest = 0
        score.withUnsafeBufferPointer { s in
            for v in s where v != 0 {
                counts[Int(v)] += 1
                highest = max(highest, Int(v))
            }
        }
        return stride(from: highest, through: 1, by: -1).compactMap { v in counts[v] > 0 ? (UInt16(v), counts[v]) : nil }
    }

    /// A byte per pk, 1 for the assets with this score.
    func membership(scoring value: UInt16) -> [UInt8] {
        score.map { $0 == value ? 1 : 0 }
    }

    /// The assets with this score, pks ascending.
    func members(scoring value: UInt16) -> [Int64] {
        var pks: [Int64] = []
        score.withUnsafeBufferPointer { s in
            for i in s.indices where s[i] == value { pks.append(Int64(i)) }
        }
        return pks
    }

    /// The assets that match so far, when few (nil when more than `limit`).
    func candidates(atMost limit: Int) -> [Int64]? {
        var pks: [Int64] = []
        var over = false
        score.withUnsafeBufferPointer { s in
            for i in s.indices where s[i] != 0 {
                guard pks.count < limit else { over = true; return }
                pks.append(Int64(i))
            }
        }
        return over ? nil : pks
    }

    /// At most this many assets left by the terms so far are a later term's to look up among.
    static let few = 5_000

    /// Whether the first `wanted` of a tier of `members`, newest first, are found by walking
    /// the capture-order index from the newest inside SQLite (at most every entry, ~40 ns
    /// each, and far fewer when the tier's assets are spread over time) rather than by
    /// reading each member's time by pk (~1 µs each) and sorting: a few thousand members are
    /// read; more are walked for, unless all of them are wanted and a walk over the whole
    /// index would cost more than reading them.
    static func walks(members: Int, wanted: Int, assets: Int, readAtMost: Int = 2_000) -> Bool {
        guard members > readAtMost else { return false }
        return wanted < members || Double(members) > Double(assets) * 0.04
    }
}

extension IndexReader {
    /// One term's matches as a byte per pk, the best code of every source (`SearchSources`),
    /// or of the asset's own only (its words, the taggers' keywords, its user albums).
    func weights(_ term: SearchQuery.Term, ownOnly: Bool = false) throws(StoreError) -> [UInt8] {
        var blob: [UInt8] = []
        let sources = ownOnly ? [SearchSources.wordWeights, SearchSources.taggedWeights]
            : [SearchSources.wordWeights, SearchSources.taggedWeights, SearchSources.groupWeights]
        for sql in sources {
            let s = try db.statement(sql)
            s.bind(term.ftsMatch, at: 1)
            let part = try s.step() ? s.bytes(0) : []
            s.reset()
            blob = blob.isEmpty ? part : part.isEmpty ? blob : SearchGroups.larger(blob, part)
        }
        return blob
    }

    /// The pks a search leaves out: in Recently Deleted; hidden, unless `query` includes hidden
    /// assets; a burst's member that does not stand for it, unless it includes them all.
    func leftOut(_ query: AssetQuery) throws(StoreError) -> [Int64] {
        var pks: [Int64] = []
        let unseen = try db.statement("SELECT pk, deleted_at IS NOT NULL FROM assets WHERE is_hidden != 0 OR deleted_at IS NOT NULL")
        while try unseen.step() {
            if !query.includeHidden || unseen.int(1) != 0 { pks.append(unseen.int64(0)) }
        }
        unseen.reset()
        if !query.includeAllBurstAssets {
            let extras = try db.statement("SELECT pk FROM assets WHERE burst_id IS NOT NULL AND represents_burst = 0")
            while try extras.step() { pks.append(extras.int64(0)) }
            extras.reset()
        }
        return pks
    }

    /// A search's terms with a rare one first: the first term, in the query's order, that
    /// matches at most `few` assets (counted up to `few` + 1 only), then the others in order;
    /// as they are when none does. The first term is the only one whose every match is read,
    /// the others are looked up among the few it leaves, and scores add up: the order changes
    /// nothing but the work ("2020 algés" at 1,000,000 assets read 106,000 matches first).
    func rareFirst(_ terms: [SearchQuery.Term], few: Int = SearchScores.few) throws(StoreError) -> [SearchQuery.Term] {
        guard let i = try rareTerm(terms, few: few) else { return terms }
        var rest = terms
        rest.remove(at: i)
        return [terms[i]] + rest
    }

    /// The index of the first term, in the query's order, that matches at most `few` assets
    /// (counted up to `few` + 1 only); nil when none does or there is one term.
    func rareTerm(_ terms: [SearchQuery.Term], few: Int = SearchScores.few) throws(StoreError) -> Int? {
        guard terms.count > 1 else { return nil }
        let probe = try db.statement(SearchSources.probe)
        for (i, term) in terms.enumerated() {
            probe.bind(term.ftsMatch, at: 1)
            probe.bind(few + 1, at: 2)
            let matches = try probe.step() ? probe.int(0) : 0
            probe.reset()
            if matches <= few { return i }
        }
        return nil
    }

    /// The first `needed` pks, or more up to `wanted` while they are of the scores it took, of
    /// the library's assets that match `text`, most relevant first then newest, and how many
    /// match: each term's weights computed inside SQLite (`photod_weights`, a byte per asset),
    /// combined here, then each score's assets in capture order, newest first — read by pk and
    /// sorted, or found by walking the capture-order index when they are many and only the
    /// first are wanted. A score past the needed ones is not started for the extra (a walk to
    /// its first member may pass most of the index). `query` has no predicate and no sort.
    /// A single word whose matches are mostly places' or folders' is answered by their counts
    /// and indexes instead (`groupedSearch`), several common words by one word's places and
    /// folders (`joinedSearch`), unless `grouped` is false (the tests compare them with the pass).
    func rankedSearch(_ text: SearchQuery, _ query: AssetQuery, needed: Int, wanted: Int,
                      readAtMost: Int, grouped: Bool = true,
                      ownAtMost: Int = SearchGroups.ownAtMost) throws(StoreError) -> (pks: [Int64], total: Int) {
        var scores: SearchScores?
        if grouped, text.terms.count == 1, !query.includeHidden, !query.includeAllBurstAssets {
            switch try groupedSearch(text.terms[0], needed: needed, wanted: wanted, ownAtMost: ownAtMost) {
            case .found(let pks, let total)?: return (pks, total)
            case .weights(let weights)?: scores = SearchScores(first: weights)
            case nil: break
            }
        }
        // Several words, none rare: answered by one word's places and folders when it can be.
        let rare = try rareTerm(text.terms)
        if grouped, text.terms.count > 1, rare == nil, !query.includeHidden, !query.includeAllBurstAssets,
           let found = try joinedSearch(text.terms, needed: needed, wanted: wanted) {
            return found
        }
        var terms = text.terms
        if let rare { terms.insert(terms.remove(at: rare), at: 0) }
        // The word's weights from `groupedSearch` are all of a one-word query's.
        for term in scores == nil ? terms : [] {
            // A later term is looked up for the assets still in (few after a rare word) only.
            let few = scores?.candidates(atMost: SearchScores.few)
            if let few, few.isEmpty { break }
            let blob: [UInt8]
            if let few {
                let weights = try db.statement(term.isPrefix ? SearchSources.weightsAmongByPass : SearchSources.weightsAmong)
                weights.bind(term.ftsMatch, at: 1)
                weights.bind("[" + few.map(String.init).joined(separator: ",") + "]", at: 2)
                blob = try weights.step() ? weights.bytes(0) : []
                weights.reset()
            } else {
                blob = try self.weights(term)
            }
            if scores == nil { scores = SearchScores(first: blob) } else { scores?.require(blob) }
        }
        guard var scores else { return ([], 0) }
        for pk in try leftOut(query) { scores.exclude(pk) }
        let tiers = scores.tiers()
        let total = tiers.reduce(0) { $0 + $1.members }
        let needed = min(needed, total), wanted = min(max(needed, wanted), total)
        var ordered: [Int64] = []
        for tier in tiers where ordered.count < needed {
            let left = wanted - ordered.count
            if SearchScores.walks(members: tier.members, wanted: left, assets: scores.score.count, readAtMost: readAtMost) {
                let walk = try db.statement(SearchSources.newestMembers)
                walk.bind(scores.membership(scoring: tier.score), at: 1)
                walk.bind(left, at: 2)
                while try walk.step() { ordered.append(walk.int64(0)) }
                walk.reset()
            } else {
                let read = try db.statement("SELECT pk, local_datetime FROM assets WHERE pk IN (SELECT value FROM json_each(?1))")
                read.bind("[" + scores.members(scoring: tier.score).map(String.init).joined(separator: ",") + "]", at: 1)
                var timed: [(pk: Int64, local: String)] = []
                timed.reserveCapacity(tier.members)
                while try read.step() { timed.append((read.int64(0), read.string(1))) }
                read.reset()
                timed.sort { $0.local != $1.local ? $0.local > $1.local : $0.pk > $1.pk }
                ordered += timed.prefix(left).map(\.pk)
            }
        }
        return (Array(ordered.prefix(wanted)), total)
    }
}
