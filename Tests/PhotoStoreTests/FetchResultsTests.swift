import Foundation
import PhotoModel
import PhotoSystem
@testable import PhotoStore
import PhotoTesting
import Testing

/// Kept fetch results (`FetchResults`): what a page, a repeat and `assetIDs` take from them
/// equals a fresh read after every kind of write, and they stay within their bounds.
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
    }

    @Test("Random writes (new, changed, removed, moved files and folders, favorites, hidden, keywords, purges, raw SQL), 12 seeds × 40 steps")
    func followsWrites() throws {
        for seed in UInt64(1)...12 {
            let dir = try TemporaryDirectory("fetch-results")
            defer { dir.remove() }
            let db = try Database(path: dir("c.db").string)
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
                default:
                    _ = try db.write { w in try w.purge(deletedBefore: now - 2_000, now: now) }
                }
                try Self.check(db, step: step, &g)
            }
        }
    }

    /// A key of its own per number, for the pure tests.
    func query(_ n: Int) -> FetchResults.Key { FetchResults.Key(scope: .moment(day: n), query: AssetQuery()) }

    @Test("Kept results are bounded by their number and by the pks they hold; the newest is kept when it fits")
    func bounds() throws {
        var results = FetchResults()
        let stamp = FetchResults.Stamp(generation: 0, token: 7)
        for i in 0..<(FetchResults.maxResults + 2) { results.keep(query(i), at: stamp, pks: [UInt32(i)]) }
        #expect(results.result(query(0), at: stamp) == nil && results.result(query(1), at: stamp) == nil)
        #expect(results.result(query(FetchResults.maxResults + 1), at: stamp) == [UInt32(FetchResults.maxResults + 1)])
        let big = [UInt32](repeating: 1, count: FetchResults.maxPKs - 5)
        results.keep(query(100), at: stamp, pks: big)
        #expect(results.result(query(100), at: stamp)?.count == big.count)
        #expect(results.result(query(FetchResults.maxResults + 1), at: stamp) == [UInt32(FetchResults.maxResults + 1)],
                "a few small ones still fit beside it")
        results.keep(query(101), at: stamp, pks: [UInt32](repeating: 2, count: 10))
        #expect(results.result(query(100), at: stamp) == nil, "the oldest go first: the big one with them")
        results.keep(query(102), at: stamp, pks: [UInt32](repeating: 3, count: FetchResults.maxPKs + 1))
        #expect(results.result(query(102), at: stamp) == nil, "larger than the bound: answered, not kept")
        var list = PKList()
        for pk in [1, 2, Int64(UInt32.max)] { list.append(pk) }
        #expect(list.compact == [1, 2, UInt32.max] && list.wide == nil)
        list.append(Int64(UInt32.max) + 1)
        #expect(list.compact.isEmpty && list.wide == [1, 2, Int64(UInt32.max), Int64(UInt32.max) + 1])
    }

    @Test("A write drops every result; none is made or taken while it runs, nor by a read that began before it")
    func generations() throws {
        var results = FetchResults()
        let before = FetchResults.Stamp(generation: results.generation, token: 7)
        results.keep(query(1), at: before, pks: [1])
        #expect(results.result(query(1), at: before) == [1])
        results.writeBegins()
        #expect(results.result(query(1), at: before) == nil, "dropped")
        let during = FetchResults.Stamp(generation: results.generation, token: 7)
        results.keep(query(2), at: during, pks: [2])
        #expect(results.result(query(2), at: during) == nil, "not made while a write runs")
        results.writeEnded()
        results.keep(query(3), at: before, pks: [3])
        #expect(results.result(query(3), at: before) == nil, "a read that saw the generation before the write")
        let after = FetchResults.Stamp(generation: results.generation, token: 8)
        results.keep(query(4), at: after, pks: [4])
        #expect(results.result(query(4), at: after) == [4])
        #expect(results.result(query(4), at: FetchResults.Stamp(generation: after.generation, token: 7)) == nil,
                "a snapshot at another token")
        results.keep(query(5), at: FetchResults.Stamp(generation: after.generation, token: 7), pks: [5])
        #expect(results.result(query(4), at: after) == [4], "an older snapshot's result does not push a newer one out")
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
