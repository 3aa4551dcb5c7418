#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PhotoModel
import PhotoSystem
@testable import PhotoStore
import PhotoTesting
import Testing

/// The in-memory catalog follows every kind of write through the change journal: after each
/// one, library fetches answered from it equal the same fetches compiled to SQL.
@Suite("Fetch catalog: kept in step with the store by the change journal")
struct CatalogTests {
    static let predicates = [
        nil, "isFavorite == true", "isHidden == true", #"mediaType == "video""#, "pixelWidth >= 1000 OR pixelWidth == null",
        #"make BEGINSWITH "can" AND NOT model == null"#, #"make IN {"NIKON", "apple"}"#, "latitude != null",
        #"localDateTime BETWEEN "2020-03-01" AND "2020-06-30T12:00:00""#, #"localDate == "2020-02-03""#,
        #"path CONTAINS "/b/""#, #"path BEGINSWITH "/lib/moved""#, #"keywords CONTAINS "dog""#, #"keywords IN {"CAT", "sea"}"#,
        #"subtypes CONTAINS "raw""#, "duration > 1.5", #"addedDate >= "1970-01-01T00:00:02Z""#,
    ]
    static let sorts = ["", "-localDateTime", "pixelWidth", "-make,localDateTime", "path", "-latitude", "addedDate,-pixelHeight",
                        "isFavorite,-path", "mediaType,model"]

    /// Compares the two answers for every predicate and sort, with and without hidden assets.
    static func check(_ db: Database, step: Int, _ g: inout SplitMix64) throws {
        for text in predicates {
            let sort = sorts[Int(g.next() % UInt64(sorts.count))]
            let query = AssetQuery(predicate: try text.map { try AssetPredicate.parse($0) }, sort: try AssetSort.parse(sort),
                                   includeHidden: g.next() % 2 == 0)
            let (viaCatalog, viaSQL) = try db.read { r in
                (try r.assetIDs(query, now: 1_000_000), try r.withoutCatalog.assetIDs(query, now: 1_000_000))
            }
            #expect(viaCatalog == viaSQL, "step \(step): \(text ?? "all") sorted '\(sort)'")
            let offset = Int(g.next() % 5)
            let (page, sqlPage) = try db.read { r in
                (try r.assets(query, limit: 3, offset: offset, now: 1_000_000),
                 try r.withoutCatalog.assets(query, limit: 3, offset: offset, now: 1_000_000))
            }
            #expect(page?.assets.map(\.id) == sqlPage?.assets.map(\.id) && page?.total == sqlPage?.total,
                    "step \(step): page of \(text ?? "all")")
        }
    }

    @Test("Random writes (new, changed, removed, moved files and folders, favorites, hidden, keywords, purges), 12 seeds × 40 steps",
          arguments: [4_096, 3])
    func followsWrites(overlay: Int) throws {
        for seed in UInt64(1)...12 {
            let dir = try TemporaryDirectory("catalog")
            defer { dir.remove() }
            // With room for 4,096 changed assets, every change is laid over the first files;
            // with room for 3, the files are made again every few steps.
            var options = Database.Options()
            options.catalogOverlayMinimum = overlay
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
                try db.read { try $0.withoutCatalog.assetIDs(AssetQuery(includeHidden: true), now: 1_000_000) } ?? []
            }

            _ = try db.write { w in try w.apply(Make.batch((0..<20).map { _ in newFile(&g) }), now: now) }
            try Self.check(db, step: 0, &g)
            for step in 1...40 {
                now += 1_000
                let all = try ids(db)
                let some = Array(all.shuffled(using: &g).prefix(1 + Int(g.next() % 4)))
                switch g.next() % 9 {
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
                default:
                    _ = try db.write { w in try w.purge(deletedBefore: now - 2_000, now: now) }
                }
                try Self.check(db, step: step, &g)
            }
            #expect(db.fetchCatalog.lastError == nil)
            if overlay == 3 {
                #expect(db.fetchCatalog.buildCount > 3, "seed \(seed): the files were made again")
            } else {
                #expect(db.fetchCatalog.buildCount == 1, "seed \(seed): every change laid over the first files")
            }
        }
    }

    @Test("The files outlive the database's closing: a reopened database maps them, and a changed one lays its changes over them")
    func persisted() throws {
        let dir = try TemporaryDirectory("catalog-persisted")
        defer { dir.remove() }
        var g = SplitMix64(seed: 5)
        func add(_ db: Database, _ i: Int) throws {
            _ = try db.write { w in
                try w.apply(Make.batch([Make.outcome("/lib/a/\(i).jpg", inode: UInt64(i + 1), .media(Make.media(width: 100 * i)))]),
                            now: 1_000)
            }
        }
        do {
            let db = try Database(path: dir("c.db").string)
            _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
            for i in 0..<10 { try add(db, i) }
            try Self.check(db, step: 0, &g)
            #expect(db.fetchCatalog.buildCount == 1)
        }
        do {
            let db = try Database(path: dir("c.db").string)
            try Self.check(db, step: 1, &g)
            #expect(db.fetchCatalog.buildCount == 0, "the files were mapped, not made")
            for i in 10..<15 { try add(db, i) }
            try Self.check(db, step: 2, &g)
            #expect(db.fetchCatalog.buildCount == 0, "the new assets were laid over them")
        }
        // Damaged files are not used: the catalog is made again, and answers stay right.
        let files = try Directory(path: PathBytes(dir("c.db.catalog").string)).entries().map { String(decoding: $0.name, as: UTF8.self) }
        let starts = try #require(files.first { $0.hasSuffix(".paths.starts") })
        let fd = open(dir("c.db.catalog").string + "/" + starts, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        close(fd)
        let db = try Database(path: dir("c.db").string)
        try Self.check(db, step: 3, &g)
        #expect(db.fetchCatalog.buildCount == 1, "made again")
        // Files of another database (a recovered one, with the same tokens) are never used.
        let other = try TemporaryDirectory("catalog-other")
        defer { other.remove() }
        let fresh = try Database(path: other("c.db").string)
        _ = try fresh.write { try $0.registerRoots([PathBytes("/lib")]) }
        for i in 0..<20 { try add(fresh, 100 + i) }
        try FileManager.default.copyItem(atPath: dir("c.db.catalog").string, toPath: other("c.db.catalog").string)
        let query = AssetQuery(predicate: try AssetPredicate.parse("pixelWidth >= 0"))
        let page = try fresh.read { try $0.assets(query, limit: 100, offset: 0, now: 0) }
        #expect(page?.total == 20 && page?.assets.allSatisfy { $0.path.string.hasPrefix("/lib/a/1") } == true)
        #expect(fresh.fetchCatalog.buildCount == 1, "made from this database")
    }

    @Test("An older copy of the database put back, then written to the same token: its files are not used")
    func rolledBack() throws {
        let dir = try TemporaryDirectory("catalog-rolled-back")
        defer { dir.remove() }
        var g = SplitMix64(seed: 21)
        func add(_ db: Database, _ i: Int, width: Int) throws {
            _ = try db.write { w in
                try w.apply(Make.batch([Make.outcome("/lib/a/\(i).jpg", inode: UInt64(i + 1), .media(Make.media(width: width)))]),
                            now: 1_000 + Int64(i))
            }
        }
        let copy = dir("copy.db").string
        do {
            let db = try Database(path: dir("c.db").string)
            _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
            for i in 0..<5 { try add(db, i, width: 10) }
            try db.checkpoint()
            try FileManager.default.copyItem(atPath: dir("c.db").string, toPath: copy)
            for i in 5..<10 { try add(db, i, width: 10) }
            try Self.check(db, step: 0, &g)  // the files at the later token
            #expect(db.fetchCatalog.buildCount == 1)
            try db.checkpoint()
        }
        // The copy back in place (its WAL and lock files gone), then other writes up to the same token.
        for suffix in ["", "-wal", "-shm"] { unlink(dir("c.db").string + suffix) }
        try FileManager.default.moveItem(atPath: copy, toPath: dir("c.db").string)
        let db = try Database(path: dir("c.db").string)
        for i in 5..<10 { try add(db, 100 + i, width: 9_999) }
        try Self.check(db, step: 1, &g)
        #expect(db.fetchCatalog.buildCount == 1, "made again, not taken from the other timeline")
        let wide = AssetQuery(predicate: try AssetPredicate.parse("pixelWidth == 9999"))
        #expect(try db.read { try $0.assets(wide, limit: 10, offset: 0, now: 0) }?.total == 5)
    }

    @Test("A damaged sort order file is made again, not trusted")
    func damagedOrder() throws {
        let dir = try TemporaryDirectory("catalog-damaged-order")
        defer { dir.remove() }
        var g = SplitMix64(seed: 22)
        do {
            let db = try Database(path: dir("c.db").string)
            _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
            _ = try db.write { w in
                try w.apply(Make.batch((0..<40).map { Make.outcome("/lib/a/\($0).jpg", inode: UInt64($0 + 1),
                                                                   .media(Make.media(width: 40 - $0))) }), now: 1_000)
            }
            try Self.check(db, step: 0, &g)
        }
        let files = try Directory(path: PathBytes(dir("c.db.catalog").string)).entries().map { String(decoding: $0.name, as: UTF8.self) }
        let order = try #require(files.first { $0.hasSuffix(".order-pixelWidth") })
        // Every entry the same record: in range, but not a permutation.
        let fd = open(dir("c.db.catalog").string + "/" + order, O_WRONLY)
        #expect(fd >= 0)
        let zeros = [UInt8](repeating: 0, count: 40 * 4)
        #expect(zeros.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == 160)
        close(fd)
        let db = try Database(path: dir("c.db").string)
        let query = AssetQuery(sort: try AssetSort.parse("pixelWidth"), includeHidden: true)
        let (viaCatalog, viaSQL) = try db.read { r in
            (try r.assetIDs(query, now: 0), try r.withoutCatalog.assetIDs(query, now: 0))
        }
        #expect(viaCatalog == viaSQL && viaCatalog?.count == 40)
    }

    @Test("Files that cannot be written: fetches are answered by SQL, and the status says why")
    func unwritable() throws {
        let dir = try TemporaryDirectory("catalog-unwritable")
        defer { dir.remove() }
        // A plain file where the directory would go: it cannot be made.
        let fd = open(dir("c.db.catalog").string, O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0)
        close(fd)
        let db = try Database(path: dir("c.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write { w in
            try w.apply(Make.batch((0..<12).map { Make.outcome("/lib/a/\($0).jpg", inode: UInt64($0 + 1), .media(Make.media(width: $0))) }),
                        now: 1_000)
        }
        var g = SplitMix64(seed: 3)
        try Self.check(db, step: 0, &g)
        #expect(db.fetchCatalog.buildCount == 0)
        #expect(db.fetchCatalogStatus.lastError?.contains("catalog") == true, "\(String(describing: db.fetchCatalogStatus.lastError))")
    }

    /// A database whose catalog builds in the background, with 30 assets.
    static func backgroundDatabase(_ dir: TemporaryDirectory) throws -> Database {
        var options = Database.Options()
        options.catalogInBackground = true
        let db = try Database(path: dir("c.db").string, options: options)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write { w in
            try w.apply(Make.batch((0..<30).map { Make.outcome("/lib/a/\($0).jpg", inode: UInt64($0 + 1), .media(Make.media(width: $0))) }),
                        now: 1_000)
        }
        return db
    }

    /// Waits (5 s at most) until the catalog was built `n` times.
    static func waitForBuilds(_ db: Database, _ n: Int) {
        var waited = 0
        while db.fetchCatalog.buildCount < n, waited < 500 {
            usleep(10_000)
            waited += 1
        }
    }

    @Test("In the background: fetches are answered from SQL until the files are made, then from them")
    func background() throws {
        let dir = try TemporaryDirectory("catalog-background")
        defer { dir.remove() }
        let db = try Self.backgroundDatabase(dir)
        var g = SplitMix64(seed: 8)
        try Self.check(db, step: 0, &g)
        Self.waitForBuilds(db, 1)
        #expect(db.fetchCatalog.buildCount == 1)
        try Self.check(db, step: 1, &g)
        try db.checkpoint()
    }

    @Test("Compacting the database pauses the background catalog and lets it build again after")
    func compactResumes() throws {
        let dir = try TemporaryDirectory("catalog-compact")
        defer { dir.remove() }
        let db = try Self.backgroundDatabase(dir)
        var g = SplitMix64(seed: 12)
        try Self.check(db, step: 0, &g)
        Self.waitForBuilds(db, 1)
        #expect(db.fetchCatalog.buildCount == 1)
        try db.compact()
        // The catalog made again (a change outside the journal), then asked: it builds.
        db.invalidateCatalog()
        try Self.check(db, step: 1, &g)
        Self.waitForBuilds(db, 2)
        #expect(db.fetchCatalog.buildCount == 2, "the catalog builds again after a compaction")
        try Self.check(db, step: 2, &g)
        try db.checkpoint()
    }

    @Test("Kept results are bounded by their number and by the record indexes they hold; the newest is always kept")
    func resultCacheBound() throws {
        var cache: [(AssetQuery, [Int32])] = []
        func query(_ width: Int) throws -> AssetQuery { AssetQuery(predicate: try AssetPredicate.parse("pixelWidth == \(width)")) }
        for i in 0..<5 { CatalogSnapshot.keep((try query(i), Array(repeating: 0, count: 100)), in: &cache, count: 4, indexes: 1_000) }
        #expect(cache.map(\.0) == [try query(4), try query(3), try query(2), try query(1)], "at most four")
        CatalogSnapshot.keep((try query(5), Array(repeating: 0, count: 850)), in: &cache, count: 4, indexes: 1_000)
        #expect(cache.map(\.0) == [try query(5), try query(4)], "850 + 100 indexes fit, 850 + 200 do not")
        CatalogSnapshot.keep((try query(6), Array(repeating: 0, count: 5_000)), in: &cache, count: 4, indexes: 1_000)
        #expect(cache.map(\.0) == [try query(6)], "a result above the bound is kept alone")
    }

    @Test("A journal pruned past the catalog's token: everything is read again")
    func pruned() throws {
        let dir = try TemporaryDirectory("catalog-pruned")
        defer { dir.remove() }
        var g = SplitMix64(seed: 99)
        let db = try Database(path: dir("c.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        func add(_ i: Int, width: Int) throws {
            _ = try db.write { w in
                try w.apply(Make.batch([Make.outcome("/lib/a/\(i).jpg", inode: UInt64(i + 1), .media(Make.media(width: width)))]),
                            now: 1_000)
            }
        }
        try add(0, width: 10)
        try Self.check(db, step: 0, &g)  // the catalog at token 1
        for i in 1..<5 { try add(i, width: 9999) }
        #expect(try db.write { try $0.pruneJournal(keep: 1, before: Int64.max) } > 0)
        try Self.check(db, step: 1, &g)
        let query = AssetQuery(predicate: try AssetPredicate.parse("pixelWidth == 9999"))
        #expect(try db.read { try $0.assets(query, limit: 5, offset: 0, now: 0) }?.total == 4)
    }
}
