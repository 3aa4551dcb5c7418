import Foundation
import PhotoModel
import PhotoSystem
@testable import PhotoStore
import PhotoTesting
import Testing

/// Kept fetch results (`FetchResults`): what a page, a repeat and `assetIDs` take from them
/// equals a fresh read after every kind of write, they stay within their bounds, and they
/// outlive a clean stop only.
@Suite("Kept fetch results: equal to a fresh read after every kind of write")
struct FetchResultsTests {
    static let predicates = [
        nil, "isFavorite == true", "isHidden == true", #"mediaType == "video""#, "pixelWidth >= 1000 OR pixelWidth == null",
        #"make BEGINSWITH "can" AND NOT model == null"#, #"make IN {"NIKON", "apple"}"#, "latitude != null",
        #"localDateTime BETWEEN "2020-03-01" AND "2020-06-30T12:00:00""#, #"localDate == "2020-02-03""#,
        #"path CONTAINS "/b/""#, #"path BEGINSWITH "/lib/moved""#, #"keywords CONTAINS "dog""#, #"keywords IN {"CAT", "sea"}"#,
        #"subtypes CONTAINS "raw""#, "duration > 1.5", #"addedDate >= "1970-01-01T00:00:02Z""#,
    ]
    static let sorts = ["", "-localDateTime", "pixelWidth", "-make,localDateTime", "path", "-latitude", "addedDate,-pixelHeight",
                        "isFavorite,-path", "mediaType,model"]
    static let scopes: [AssetScope] = [.library, .smartAlbum(SmartAlbums.album(.favorites)),
                                       .smartAlbum(SmartAlbums.album(.allPhotos)), .smartAlbum(SmartAlbums.album(.recentlyDeleted))]

    /// Every predicate with a random sort, scope and offset: the pool's reader (which keeps and
    /// takes results: asked twice) against a reader that keeps none.
    static func check(_ db: Database, step: Int, _ g: inout SplitMix64) throws {
        for text in predicates {
            let sort = sorts[Int(g.next() % UInt64(sorts.count))]
            let scope = scopes[Int(g.next() % UInt64(scopes.count))]
            let query = AssetQuery(predicate: try text.map { try AssetPredicate.parse($0) }, sort: try AssetSort.parse(sort),
                                   includeHidden: g.next() % 2 == 0)
            let offset = Int(g.next() % 5)
            let (kept, again, fresh) = try db.read { r in
                let fresh = IndexReader(r.db)
                return (try r.consistent { () throws(StoreError) in try r.assets(query, in: scope, limit: 3, offset: offset, now: 1_000_000) },
                        try r.consistent { () throws(StoreError) in try r.assets(query, in: scope, limit: 3, offset: offset, now: 1_000_000) },
                        try fresh.consistent { () throws(StoreError) in
                            try fresh.assets(query, in: scope, limit: 3, offset: offset, now: 1_000_000)
                        })
            }
            for page in [kept, again] {
                #expect(page?.assets.map(\.id) == fresh?.assets.map(\.id) && page?.total == fresh?.total,
                        "step \(step): page of \(text ?? "all") sorted '\(sort)' in \(scope)")
            }
            let (ids, freshIDs) = try db.read { r in
                (try r.assetIDs(query, in: scope, now: 1_000_000), try IndexReader(r.db).assetIDs(query, in: scope, now: 1_000_000))
            }
            #expect(ids == freshIDs, "step \(step): ids of \(text ?? "all") sorted '\(sort)' in \(scope)")
        }
        // Searches: a page, the same again and the next, kept and taken, against a reader that
        // keeps none.
        for text in ["img", "2020", "a", "canon", "apple 2020", "jp", "nikon img"] {
            let q = try SearchQuery.parse(text)
            let query = AssetQuery(includeHidden: g.next() % 2 == 0)
            let (limit, offset) = (1 + Int(g.next() % 4), Int(g.next() % 6))
            let (kept, fresh) = try db.read { r in
                let fresh = IndexReader(r.db)
                return (try [offset, offset, offset + limit, offset + 3 * limit].map { o throws(StoreError) in
                            try r.search(q, query, limit: limit, offset: o, now: 1_000_000) },
                        try [offset, offset, offset + limit, offset + 3 * limit].map { o throws(StoreError) in
                            try fresh.search(q, query, limit: limit, offset: o, now: 1_000_000) })
            }
            for (page, expected) in zip(kept, fresh) {
                #expect(page.assets.map(\.id) == expected.assets.map(\.id) && page.total == expected.total,
                        "step \(step): search '\(text)' limit \(limit) from \(offset)")
            }
        }
        try SearchStoreTests.expectWordsConsistent(db)
    }

    @Test("Random writes (new, changed, removed, moved files and folders, favorites, hidden, keywords, purges, raw SQL and an invalidation), 12 seeds × 40 steps")
    func followsWrites() throws {
        for seed in UInt64(1)...12 {
            let dir = try TemporaryDirectory("fetch-results")
            defer { dir.remove() }
            var options = Database.Options()
            options.places = TablePlaces()   // places too, for the search lists and kept place counts checked below
            let db = try Database(path: dir("c.db").string, options: options)
            _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
            var g = SplitMix64(seed: seed)
            var inode: UInt64 = 1
            var live: [String: UInt64] = [:]  // path → inode
            var now: Int64 = 1_000

            func media(_ g: inout SplitMix64) -> MediaFields {
                let month = 1 + Int(g.next() % 9)
                let millis = g.next() % 3 == 0 ? ".\(100 + g.next() % 900)" : ""
                let date = "2020-0\(month)-0\(1 + g.next() % 9)T1\(g.next() % 10):0\(g.next() % 10):1\(g.next() % 10)\(millis)"
                let makes: [String?] = ["Canon", "NIKON", "Apple", "apple", nil]
                return Make.media(date: date, type: g.next() % 6 == 0 ? .video : .image, raw: g.next() % 8 == 0,
                                  width: g.next() % 5 == 0 ? nil : [640, 1000, 4000][Int(g.next() % 3)],
                                  make: makes[Int(g.next() % UInt64(makes.count))],
                                  latitude: g.next() % 3 == 0 ? nil : Double(g.next() % 100) - 50)
            }
            func newFile(_ g: inout SplitMix64) -> FileOutcome {
                let path = "/lib/\(["a", "b", "c/d"][Int(g.next() % 3)])/IMG_\(inode).JPG"
                live[path] = inode
                inode += 1
                return Make.outcome(path, inode: inode - 1, .media(media(&g)))
            }
            func ids(_ db: Database) throws -> [AssetID] {
                try db.read { try IndexReader($0.db).assetIDs(AssetQuery(includeHidden: true), now: 1_000_000) } ?? []
            }

            _ = try db.write { w in try w.apply(Make.batch((0..<20).map { _ in newFile(&g) }), now: now) }
            try Self.check(db, step: 0, &g)
            for step in 1...40 {
                now += 1_000
                let all = try ids(db)
                let some = Array(all.shuffled(using: &g).prefix(1 + Int(g.next() % 4)))
                switch g.next() % 10 {
                case 0:
                    _ = try db.write { w in try w.apply(Make.batch((0..<(1 + Int(g.next() % 5))).map { _ in newFile(&g) }), now: now) }
                case 1:  // a file rewritten with other metadata
                    if let (path, ino) = live.randomElement(using: &g) {
                        var o = Make.outcome(path, inode: ino, .media(media(&g)), size: Int64(2000 + step))
                        o.identity.mtimeNanoseconds = Int64(step)
                        _ = try db.write { w in try w.apply(Make.batch([o]), now: now) }
                    }
                case 2:  // removed: to Recently Deleted
                    if let path = live.keys.randomElement(using: &g) {
                        live[path] = nil
                        var b = WriteBatch()
                        let p = PathBytes(path)
                        b.removedFiles = [(p.parent, p.lastComponent)]
                        _ = try db.write { w in try w.apply(b, now: now) }
                    }
                case 3:  // a file moved
                    if let (path, ino) = live.randomElement(using: &g) {
                        let to = "/lib/moved/\(step)-\(PathBytes(path).lastComponent.count).JPG"
                        live[path] = nil
                        live[to] = ino
                        var b = WriteBatch()
                        b.movedFiles = [FileMove(from: PathBytes(path), to: PathBytes(to))]
                        _ = try db.write { w in try w.apply(b, now: now) }
                    }
                case 4:  // a folder moved
                    let from = ["/lib/a", "/lib/b", "/lib/c"].randomElement(using: &g)!
                    let to = "/lib/moved/f\(step)"
                    if live.keys.contains(where: { $0.hasPrefix(from + "/") }) {
                        for (path, ino) in live where path.hasPrefix(from + "/") {
                            live[path] = nil
                            live[to + path.dropFirst(from.count)] = ino
                        }
                        var b = WriteBatch()
                        b.movedDirectories = [DirectoryMove(from: PathBytes(from), to: PathBytes(to))]
                        _ = try db.write { w in try w.apply(b, now: now) }
                    }
                case 5:
                    _ = try db.write { w in try w.set(.favorite, g.next() % 3 != 0, ids: some, now: now) }
                case 6:
                    _ = try db.write { w in try w.set(.hidden, g.next() % 2 == 0, ids: some, now: now) }
                case 7:
                    let words = [["Dog"], ["cat", "Sea"], [], ["DOG", "sea"]][Int(g.next() % 4)]
                    let edit: KeywordEdit = g.next() % 2 == 0 ? .replace(words) : .add(words)
                    _ = try db.write { w in try w.editKeywords(edit, source: ["faces", "scenes"][Int(g.next() % 2)], ids: some, now: now) }
                case 8:  // a write outside the journal (a tool editing the table): no new token
                    _ = try db.write { w in
                        try w.connection.execute("UPDATE assets SET pixel_width = coalesce(pixel_width, 0) + 1 WHERE pk % 3 = \(step % 3)")
                    }
                    db.invalidateFetchResults()
                default:
                    _ = try db.write { w in try w.purge(deletedBefore: now - 2_000, now: now) }
                }
                try Self.check(db, step: step, &g)
            }
        }
    }

    /// A key of its own per number, for the pure tests.
    func query(_ n: Int) -> FetchResults.Key { FetchResults.Key(scope: .moment(day: n), query: AssetQuery()) }

    @Test("Kept results are bounded by their number and by the pks they hold; a larger result is not kept")
    func bounds() throws {
        var results = FetchResults()
        let stamp = FetchResults.Stamp(generation: 0, token: 7)
        for i in 0..<(FetchResults.maxResults + 2) { results.keep(query(i), at: stamp, .pks([UInt32(i)])) }
        #expect(results.held(query(0), at: stamp) == nil && results.held(query(1), at: stamp) == nil)
        #expect(results.held(query(FetchResults.maxResults + 1), at: stamp) == .pks([UInt32(FetchResults.maxResults + 1)]))
        let big = [UInt32](repeating: 1, count: FetchResults.maxPKs - 5)
        results.keep(query(100), at: stamp, .pks(big))
        #expect(results.held(query(100), at: stamp)?.count == big.count)
        #expect(results.held(query(FetchResults.maxResults + 1), at: stamp) != nil, "a few small ones still fit beside it")
        results.keep(query(101), at: stamp, .pks([UInt32](repeating: 2, count: 10)))
        #expect(results.held(query(100), at: stamp) == nil, "the oldest go first: the big one with them")
        results.keep(query(102), at: stamp, .pks([UInt32](repeating: 3, count: FetchResults.maxPKs + 1)))
        #expect(results.held(query(102), at: stamp) == nil, "larger than the bound: answered, not kept")
        results.keep(query(103), at: stamp, .total(5_000_000))
        #expect(results.held(query(103), at: stamp) == .total(5_000_000), "a total takes no room")
        results.keep(query(103), at: stamp, .pks([1, 2]))
        results.keep(query(103), at: stamp, .total(2))
        #expect(results.held(query(103), at: stamp) == .pks([1, 2]), "the pks replace a total, not the other way")
        var list = PKList()
        for pk in [1, 2, Int64(UInt32.max)] { list.append(pk) }
        #expect(list.compact == [1, 2, UInt32.max] && list.wide == nil)
        list.append(Int64(UInt32.max) + 1)
        #expect(list.compact.isEmpty && list.wide == [1, 2, Int64(UInt32.max), Int64(UInt32.max) + 1])
    }

    @Test("A result is taken only at its token; an invalidation drops every result and any being read across it")
    func stamps() {
        var results = FetchResults()
        let at7 = FetchResults.Stamp(generation: results.generation, token: 7)
        results.keep(query(1), at: at7, .pks([1]))
        #expect(results.held(query(1), at: at7) == .pks([1]))
        #expect(results.held(query(1), at: FetchResults.Stamp(generation: at7.generation, token: 8)) == nil, "another token")
        let at8 = FetchResults.Stamp(generation: results.generation, token: 8)
        results.keep(query(2), at: at8, .pks([2]))
        #expect(results.held(query(1), at: at7) == nil, "a newer token's result drops the older ones")
        results.keep(query(3), at: at7, .pks([3]))
        #expect(results.held(query(2), at: at8) == .pks([2]) && results.held(query(3), at: at7) == nil,
                "an older snapshot's result does not push a newer one out")
        results.invalidate()
        #expect(results.held(query(2), at: at8) == nil, "dropped")
        results.keep(query(4), at: at8, .pks([4]))
        #expect(results.held(query(4), at: FetchResults.Stamp(generation: results.generation, token: 8)) == nil,
                "a read that began before the invalidation")
    }

    @Test("A search keeps up to twice the assets its page needs, not starting a lower score for them: the pages in them are taken, one past them asks again")
    func searchPages() throws {
        let dir = try TemporaryDirectory("fetch-results-search")
        defer { dir.remove() }
        let db = try Database(path: dir("c.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write { w in
            try w.apply(Make.batch((0..<30).map { i in
                var media = Make.media(date: "2020-01-\(10 + i % 20)T10:00:00")
                if i % 7 == 0 { media.keywords = ["beach"] }   // 5 of them: found by what they are of, they come first
                return Make.outcome("/lib/beach/IMG_\(i).jpg", inode: UInt64(i + 1), .media(media))
            }), now: 1_000)
        }
        let q = try SearchQuery.parse("beach")
        func page(_ offset: Int) throws -> [AssetID] { try db.read { try $0.search(q, AssetQuery(), limit: 3, offset: offset, now: 0) }.assets.map(\.id) }
        func kept() throws -> Int? {
            let token = try db.read { try $0.journalBounds().current }
            return db.keptSearch(q, token: token)?.pkCount
        }
        let whole = try db.read { try IndexReader($0.db).search(q, AssetQuery(), limit: 100, offset: 0, now: 0) }.assets.map(\.id)
        #expect(whole.count == 30)
        #expect(try page(0) == Array(whole[0..<3]) && kept() == 5, "the five of the first score, not six: the next score is not started")
        #expect(try page(3) == Array(whole[3..<6]) && kept() == 12, "asked again: up to twice the page's end")
        #expect(try page(6) == Array(whole[6..<9]) && kept() == 12, "taken")
        #expect(try page(9) == Array(whole[9..<12]) && kept() == 12, "taken")
        #expect(try page(27) == Array(whole[27..<30]) && kept() == 30)
        #expect(try page(30) == [] && kept() == 30, "the whole result is kept: taken for any page")
        _ = try db.write { w in
            try w.apply(Make.batch([Make.outcome("/lib/beach/new.jpg", inode: 99, .media(Make.media(date: "2021-01-01T10:00:00")))]), now: 2_000)
        }
        #expect(try kept() == nil, "a change: its token moved")
        let again = try db.read { try IndexReader($0.db).search(q, AssetQuery(), limit: 100, offset: 0, now: 0) }.assets.map(\.id)
        #expect(try page(3) == Array(again[3..<6]) && again.count == 31 && again[5] != whole[5], "the new asset, newest of the second score")
    }

    @Test("Results survive a clean stop as bytes: read back at their token only, and not when damaged")
    func encoding() throws {
        var results = FetchResults()
        let stamp = FetchResults.Stamp(generation: 0, token: 42)
        let predicates = [#"path BEGINSWITH "/lib/raw\xFF\xFE/" AND make == "a \"b\"\n""#, #"keywords IN {"sea", "x"}"#,
                          "NOT (pixelWidth > 3 OR latitude == null)"]
        let keys: [FetchResults.Key] = [
            FetchResults.Key(scope: .library, query: AssetQuery(predicate: try AssetPredicate.parse(predicates[0]),
                                                                sort: try AssetSort.parse("-make,path"), includeHidden: true)),
            FetchResults.Key(scope: .folderAlbum(id: "f_a:b"), query: AssetQuery(predicate: try AssetPredicate.parse(predicates[1]))),
            FetchResults.Key(scope: .smartAlbum(SmartAlbums.album(.recentlyDeleted)),
                             query: AssetQuery(predicate: try AssetPredicate.parse(predicates[2]), includeAllBurstAssets: true)),
            FetchResults.Key(scope: .moment(day: -3), query: AssetQuery()),
            FetchResults.Key(scope: .userAlbum(id: "u_x"), query: AssetQuery(sort: try AssetSort.parse("pixelWidth"))),
            FetchResults.Key(scope: .burst(identifier: "B-1"), query: AssetQuery()),
        ]
        for (i, key) in keys.enumerated() { results.keep(key, at: stamp, i % 2 == 0 ? .pks([UInt32(i), 9, UInt32.max]) : .total(i)) }
        let search = FetchResults.Key(scope: .library, query: AssetQuery(), search: try SearchQuery.parse("beach"))
        results.keep(search, at: stamp, .first([3, 1], total: 9))
        #expect(results.held(search, at: stamp) == .first([3, 1], total: 9))
        let bytes = results.encoded(token: 42)
        let back = try #require(FetchResults.decoded(bytes, token: 42))
        for (i, key) in keys.enumerated() {
            #expect(back.held(key, at: stamp) == (i % 2 == 0 ? .pks([UInt32(i), 9, UInt32.max]) : .total(i)), "\(key)")
        }
        #expect(back.held(search, at: stamp) == nil, "searches are kept while photod runs only")
        #expect(FetchResults.decoded(bytes, token: 43) == nil, "another token")
        #expect(FetchResults.decoded(Array(bytes.dropLast()), token: 42) == nil, "cut short")
        #expect(FetchResults.decoded(bytes + [0], token: 42) == nil, "more than it says")
        #expect(results.encoded(token: 41).count < 64, "only the results at the token asked")
    }

    @Test("A clean stop keeps the results for the next start; a start after anything else reads afresh")
    func acrossAStart() throws {
        let dir = try TemporaryDirectory("fetch-results-start")
        defer { dir.remove() }
        let query = AssetQuery(predicate: try AssetPredicate.parse("pixelWidth >= 3"), sort: try AssetSort.parse("-pixelWidth"))
        func fetch(_ db: Database) throws -> [AssetID]? {
            try db.read { try $0.assets(query, limit: 2, offset: 1, now: 0) }?.assets.map(\.id)
        }
        let expected: [AssetID]?
        do {
            let db = try Database(path: dir("c.db").string)
            _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
            _ = try db.write { w in
                try w.apply(Make.batch((0..<8).map { Make.outcome("/lib/a/\($0).jpg", inode: UInt64($0 + 1), .media(Make.media(width: $0))) }),
                            now: 1_000)
            }
            expected = try fetch(db)
            #expect(db.keptFetchResults == 1)
            try db.checkpoint()
            #expect(try db.seal())
        }
        do {
            let db = try Database(path: dir("c.db").string)
            #expect(db.openedSealed && db.keptFetchResults == 1, "taken from the stop")
            #expect(try fetch(db) == expected)
            #expect(throws: SystemError.self) { try FileDescriptor.readAll(PathBytes(dir("c.db.results").string)) }
            try db.checkpoint()
            #expect(try db.seal())
        }
        // Changed while photod was stopped: the seal does not match, the results are not taken.
        do {
            var o = Database.Options()
            o.exclusive = false
            let tool = try Database(path: dir("c.db").string, options: o)
            _ = try tool.write { try $0.connection.execute("UPDATE assets SET pixel_width = 100 - pixel_width") }
            try tool.checkpoint()
        }
        let db = try Database(path: dir("c.db").string)
        #expect(!db.openedSealed && db.keptFetchResults == 0)
        #expect(try fetch(db) == (try db.read { try IndexReader($0.db).assets(query, limit: 2, offset: 1, now: 0) }?.assets.map(\.id)))
    }

    @Test("An earlier photod's fetch catalog files beside the database are removed when it opens")
    func oldCatalogRemoved() throws {
        let dir = try TemporaryDirectory("fetch-old-catalog")
        defer { dir.remove() }
        try Directory.makePath(PathBytes(dir("c.db.catalog").string))
        try TemporaryDirectory.writeFile(dir("c.db.catalog/manifest").string, Array("gen 1".utf8))
        try TemporaryDirectory.writeFile(dir("c.db.catalog/1.pk").string, [1, 2, 3])
        _ = try Database(path: dir("c.db").string)
        #expect(throws: SystemError.self) { try Directory(path: PathBytes(dir("c.db.catalog").string)) }
    }
}
