import Foundation
import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

/// Key assets (`KeyAssets`) as the writer keeps them, against the rules applied from scratch
/// to every asset row by the independent implementation below.
@Suite("Key assets: kept by the writer, equal to the rules from scratch")
struct KeyAssetsTests {
    static let root = PathBytes("/lib")
    static let day = 86_400_000 as Int64

    /// An asset row as the rules read it.
    struct Row: Sendable {
        var id: String
        var local: String
        var path: PathBytes
        var isVideo: Bool
        var isFavorite: Bool
        var isHidden: Bool
        var deletedAt: Int64?
        var burst: String?
        var representsBurst: Bool
        var addedAt: Int64
        var subtypes: Int64
        var day: Int

        var visible: Bool { !isHidden && deletedAt == nil }
        var candidate: Bool { visible && (burst == nil || representsBurst) }
        var seconds: Int64 { LocalDateTime(iso: local)!.secondsSinceEpochOnThisClock }
        /// The capture order: the time's text (its bytes order as the store's), then the path.
        static func before(_ a: Row, _ b: Row) -> Bool { a.local != b.local ? a.local.utf8.lexicographicallyPrecedes(b.local.utf8) : a.path < b.path }
        var facts: SmartAlbumFacts {
            SmartAlbumFacts(mediaType: isVideo ? .video : .image,
                            subtypes: Set(AssetSubtype.allCases.filter { subtypes & Self.bit($0) != 0 }), isFavorite: isFavorite,
                            isHidden: isHidden, deletedAt: deletedAt, addedAt: addedAt, representsBurst: representsBurst)
        }
        static func bit(_ s: AssetSubtype) -> Int64 {
            [.screenshot: 1, .panorama: 2, .live: 4, .raw: 8, .selfie: 16, .highFrameRate: 32, .timelapse: 64, .animated: 128,
             .hdr: 256, .depthEffect: 512, .burst: 1024][s]!
        }
    }

    static func rows(_ db: Database) throws -> [Row] {
        try db.read { r in
            let s = try r.connection.statement("""
                SELECT id, local_datetime, path, media_type, is_favorite, is_hidden, deleted_at, burst_id, represents_burst, added_at,
                       subtypes, day FROM assets
                """)
            var rows: [Row] = []
            while try s.step() {
                rows.append(Row(id: s.string(0), local: s.string(1), path: PathBytes(s.bytes(2)), isVideo: s.string(3) == "video",
                                isFavorite: s.int(4) != 0, isHidden: s.int(5) != 0, deletedAt: s.optionalInt64(6),
                                burst: s.optionalString(7), representsBurst: s.int(8) != 0, addedAt: s.int64(9), subtypes: s.int64(10),
                                day: s.int(11)))
            }
            return rows
        }
    }

    /// The spread rule, written out again from its definition: favorites first; then per slot
    /// the first photo at or after the slot's time, else the last before it; videos when photos
    /// run out; the picks in capture order.
    static func spread(_ members: [Row]) -> [String] {
        let visible = members.filter(\.visible).sorted(by: Row.before)
        guard let first = visible.first, let last = visible.last else { return [] }
        let candidates = visible.filter(\.candidate)
        let favorites = candidates.filter(\.isFavorite).prefix(3).map(\.id)
        var picks: [Row] = []
        for video in [false, true] {
            let need = 3 - favorites.count - picks.count
            if need <= 0 { break }
            var pool = candidates.filter { !$0.isFavorite && $0.isVideo == video }
            let (s, span) = (first.seconds, last.seconds - first.seconds)
            for j in 0..<need {
                let target = s + span * Int64(2 * j + 1) / Int64(2 * need)
                guard let pick = pool.first(where: { $0.seconds >= target }) ?? pool.last(where: { $0.seconds < target }) else { break }
                picks.append(pick)
                pool.removeAll { $0.id == pick.id }
            }
        }
        return favorites + picks.sorted(by: Row.before).map(\.id)
    }

    static func newest(_ members: [Row]) -> [String] {
        members.filter(\.candidate).sorted(by: Row.before).suffix(3).reversed().map(\.id)
    }

    /// Every collection's key assets from scratch, by collection id.
    static func expected(_ rows: [Row], userAlbums: [String: [String]], folders: [String: String?], albumFolders: [String: String?],
                         now: Int64) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for (day, members) in Dictionary(grouping: rows.filter(\.visible), by: \.day) {
            result[MomentGrouping.id(day: day)] = spread(members)
        }
        for (dir, members) in Dictionary(grouping: rows.filter(\.visible), by: { $0.path.parent }) {
            result["album:" + dir.string] = spread(members)
        }
        // Collection lists: a list holds the albums strictly below it (a root's, its own too).
        var listPaths = Set<PathBytes>([root])
        for r in rows where r.visible {
            var d = r.path.parent.parent
            while d.bytes.count > root.bytes.count, d.isWithin(root) { listPaths.insert(d); d = d.parent }
        }
        for list in listPaths {
            let members = rows.filter { r in
                r.visible && (list == root ? r.path.isWithin(root) : r.path.parent != list && r.path.parent.isWithin(list))
            }
            if !members.isEmpty || list == root { result["list:" + list.string] = newest(members) }
        }
        // Moment lists: years and months.
        for (year, members) in Dictionary(grouping: rows.filter(\.visible), by: { $0.local.prefix(4) }) {
            result["y_" + year] = newest(members)
        }
        for (month, members) in Dictionary(grouping: rows.filter(\.visible), by: { $0.local.prefix(7) }) {
            result["mo_" + month] = newest(members)
        }
        for album in SmartAlbums.all where album.kind != .hidden && album.kind != .recentlyDeleted {
            let members = rows.filter { $0.candidate && SmartAlbums.contains(album.kind, $0.facts, now: now) }
            if album.order == .addedNewestFirst {
                let ordered = members.sorted { a, b in
                    a.addedAt != b.addedAt ? a.addedAt > b.addedAt : a.local != b.local ? Row.before(b, a) : a.path < b.path
                }
                result[album.id] = ordered.prefix(3).map(\.id)
            } else {
                result[album.id] = newest(members)
            }
        }
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
        for (album, ids) in userAlbums {
            let members = ids.compactMap { byID[$0] }
            result[album] = spread(members)
            var folder = albumFolders[album] ?? nil
            while let f = folder {
                result[f, default: []] += members.filter(\.candidate).map(\.id)
                folder = folders[f] ?? nil
            }
        }
        for f in folders.keys {
            let ids = Set(result[f] ?? [])
            result[f] = newest(ids.compactMap { byID[$0] })
        }
        return result
    }

    /// Every collection's key assets as the store answers them, keyed as `expected` keys them.
    static func stored(_ db: Database, now: Int64) throws -> [String: [String]] {
        try db.read { r in
            var result: [String: [String]] = [:]
            let moments = try r.moments()
            for (day, keys) in try r.momentKeyAssets(days: moments.map(\.day)) {
                result[MomentGrouping.id(day: day)] = keys.map(\.rawValue)
            }
            for album in try r.folderAlbums() { result["album:" + album.path.string] = album.keyAssetIDs.map(\.rawValue) }
            for list in try r.collectionLists(roots: [root]) {
                result["list:" + list.path.string] = list.keyAssetIDs.map(\.rawValue)
            }
            let (years, months) = try r.momentLists()
            #expect(MomentLists.build(moments) == (years, months))
            let kept = try r.withKeyAssets(years: years, months: months)
            for list in kept.years + kept.months { result[list.id] = list.keyAssetIDs.map(\.rawValue) }
            // Each kind alone gives the same.
            #expect(try r.withKeyAssets(years).map(\.keyAssetIDs) == kept.years.map(\.keyAssetIDs))
            for (id, keys) in try r.smartAlbumKeys(now: now) { result[id] = keys.map(\.rawValue) }
            for album in SmartAlbums.all where result[album.id] == nil && album.kind != .hidden && album.kind != .recentlyDeleted {
                result[album.id] = []
            }
            let albums = try r.userAlbums()
            for album in albums { result[album.id] = album.keyAssetIDs.map(\.rawValue) }
            for folder in UserFolder.withKeyAssets(try r.userFolders(), albums: albums) {
                result[folder.id] = folder.keyAssetIDs.map(\.rawValue)
            }
            return result
        }
    }

    @Test("A new burst photo is inserted, on a day of its own, counted once (its representative flag is set in the job that writes it)")
    func newBurstPhoto() throws {
        let dir = try TemporaryDirectory("keys-burst")
        defer { dir.remove() }
        let db = try Database(path: dir("k.db").string)
        _ = try db.write { try $0.registerRoots([Self.root]) }
        var m = Make.media(date: "2021-03-05T10:00:00")
        m.burstIdentifier = "B"
        let changes = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a/b.jpg", inode: 1, .media(m))]), now: 1) }
        let id = try #require(try Self.rows(db).first?.id)
        #expect(changes.inserted.map(\.rawValue) == [id] && changes.updated.isEmpty)
        #expect(changes.collectionsInserted.contains("m_20210305"))
        #expect(try db.read { try $0.moments() }.map(\.id) == ["m_20210305"])
        #expect(try db.read { try $0.smartAlbumCounts(now: 1) } == (try db.read { try $0.smartAlbumCountsByScan(now: 1) }))
        #expect(try db.read { try $0.smartAlbumCounts(now: 1) }["s_bursts"] == 1)
    }

    @Test("Migration 010: a database of version 9 gets every collection's key assets when it is opened; later jobs keep them")
    func migration() throws {
        let dir = try TemporaryDirectory("keys-migration")
        defer { dir.remove() }
        // Wall time: the opening computes Recently Added's at the clock's now.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var album = ""
        do {
            let db = try Database(path: dir("k.db").string)
            _ = try db.write { try $0.registerRoots([Self.root]) }
            var files: [FileOutcome] = []
            for i in 0..<30 {
                var m = Make.media(date: "2021-03-0\(1 + i % 3)T\(10 + i % 12):00:0\(i % 10)", type: i % 5 == 0 ? .video : .image)
                if i % 7 == 0 { m.burstIdentifier = "B" }
                files.append(Make.outcome(["/lib/a", "/lib/b/c", "/lib"][i % 3] + "/f\(i).jpg", inode: UInt64(i + 1), .media(m)))
            }
            _ = try db.write { try $0.apply(Make.batch(files), now: now) }
            let ids = try Self.rows(db).map { AssetID(rawValue: $0.id)! }.sorted()
            _ = try db.write { try $0.set(.favorite, true, ids: [ids[3], ids[9]], now: now) }
            _ = try db.write { try $0.set(.hidden, true, ids: [ids[4]], now: now) }
            album = try db.write { try $0.createUserAlbum(title: "A", folder: nil, now: now) }.id
            _ = try db.write { try $0.addToUserAlbum(album, ids: Array(ids[10..<16]), now: now) }
            _ = try db.write { w in try w.connection.execute(StoreTests.withoutKeyAssets + "PRAGMA user_version = 9;") }
        }
        let db = try Database(path: dir("k.db").string)
        #expect(try db.read { try $0.connection.scalar("PRAGMA user_version").int64 } == Int64(Schema.currentVersion))
        let members = try db.read { r in try r.connection.scalar("SELECT group_concat(asset_id) FROM user_album_assets").string }
        let userAlbums = [album: (members ?? "").split(separator: ",").map(String.init)]
        let expected = Self.expected(try Self.rows(db), userAlbums: userAlbums, folders: [:], albumFolders: [album: nil], now: now)
        let stored = try Self.stored(db, now: now)
        for key in Set(expected.keys).union(stored.keys).sorted() where expected[key] != stored[key] {
            Issue.record("\(key) keeps \(stored[key] ?? []), the rules give \(expected[key] ?? [])")
        }
        #expect(expected.values.contains { $0.count == 3 } && expected["s_favorites"]?.count == 2)
        // The next job keeps them.
        _ = try db.write { try $0.apply(Make.batch([Make.outcome("/lib/a/new.jpg", inode: 99, .media(Make.media(date: "2021-03-02T23:59:59")))]),
                                        now: now + 1) }
        let after = Self.expected(try Self.rows(db), userAlbums: userAlbums, folders: [:], albumFolders: [album: nil], now: now + 1)
        #expect(try Self.stored(db, now: now + 1) == after)
    }

    @Test("Random adds, rewrites, removals, favorites, hidden, bursts, folder moves and user albums: every collection's key assets equal the rules from scratch after every job",
          arguments: 0..<10)
    func property(seed: Int) throws {
        var g = SplitMix64(state: UInt64(seed) &* 0x6B65_7973 &+ 1)
        let dir = try TemporaryDirectory("keys")
        defer { dir.remove() }
        let db = try Database(path: dir("k.db").string)
        _ = try db.write { try $0.registerRoots([Self.root]) }
        var files: [String: UInt64] = [:]  // path → inode
        var inode: UInt64 = 0
        var now: Int64 = 1_000_000
        var userAlbums: [String: [String]] = [:]
        var albumFolders: [String: String?] = [:]
        var folders: [String: String?] = [:]
        let dirs = ["/lib/a", "/lib/b", "/lib/b/c", "/lib/d/e", "/lib"]

        func media() -> MediaFields {
            let day = Int.random(in: 1...4, using: &g)
            let second = Int.random(in: 0..<86_400, using: &g)
            // A few shared times: ties are decided by the path.
            let t = Bool.random(using: &g) ? second : [3600, 43_200][Int.random(in: 0..<2, using: &g)]
            let ms = Int.random(in: 0..<4, using: &g) == 0 ? ".500" : ""
            let month = Int.random(in: 0..<5, using: &g) == 0 ? "04" : "03"
            let date = "2021-\(month)-0\(day)T" + [t / 3600, t / 60 % 60, t % 60].map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: ":") + ms
            var m = Make.media(date: date, type: Int.random(in: 0..<4, using: &g) == 0 ? .video : .image)
            if m.mediaType == .video { m.format = "mp4" }
            if Int.random(in: 0..<6, using: &g) == 0 { m.burstIdentifier = ["B1", "B2"][Int.random(in: 0..<2, using: &g)] }
            if Int.random(in: 0..<8, using: &g) == 0 { m.isRaw = false; m.format = "png"; m.make = nil; m.pixelWidth = 1170; m.pixelHeight = 2532 }
            return m
        }
        func ids() throws -> [AssetID] { try Self.rows(db).filter { $0.deletedAt == nil }.compactMap { AssetID(rawValue: $0.id) } }

        for step in 0..<70 {
            now += Int64.random(in: 1...1000, using: &g)
            if Int.random(in: 0..<25, using: &g) == 0 { now += 31 * Self.day }  // Recently Added lets go
            let roll = Int.random(in: 0..<100, using: &g)
            var what = ""
            if roll < 45 || files.isEmpty {
                var batch = WriteBatch()
                for _ in 0..<Int.random(in: 1...8, using: &g) {
                    let existing = files.keys.sorted()
                    if !existing.isEmpty, Int.random(in: 0..<4, using: &g) == 0 {
                        let path = existing.randomElement(using: &g)!  // rewritten: another date, type, burst
                        inode += 1
                        files[path] = inode
                        batch.files.append(Make.outcome(path, inode: inode, .media(media())))
                    } else {
                        inode += 1
                        let path = dirs.randomElement(using: &g)! + "/f\(inode).jpg"
                        files[path] = inode
                        batch.files.append(Make.outcome(path, inode: inode, .media(media())))
                    }
                }
                what = "write \(batch.files.count)"
                _ = try db.write { try $0.apply(batch, now: now) }
            } else if roll < 55 {
                let path = files.keys.sorted().randomElement(using: &g)!
                files[path] = nil
                var batch = WriteBatch()
                batch.removedFiles = [(PathBytes(path).parent, PathBytes(path).lastComponent)]
                what = "remove \(path)"
                _ = try db.write { try $0.apply(batch, now: now) }
            } else if roll < 72 {
                let all = try ids()
                let chosen = (0..<Int.random(in: 1...3, using: &g)).compactMap { _ in all.randomElement(using: &g) }
                let flag: UserFlag = Int.random(in: 0..<3, using: &g) == 0 ? .hidden : .favorite
                let value = Int.random(in: 0..<3, using: &g) != 0
                what = "\(flag) \(value)"
                _ = try db.write { try $0.set(flag, value, ids: chosen, now: now) }
            } else if roll < 75 {
                // A tagger's keywords touch assets without moving them; or a RAW pairs with a
                // JPEG of the same name (two assets become one, the survivor takes the flags).
                if Bool.random(using: &g) {
                    let all = try ids()
                    let chosen = (0..<Int.random(in: 1...4, using: &g)).compactMap { _ in all.randomElement(using: &g) }
                    what = "keywords"
                    _ = try db.write { try $0.editKeywords(.add(["k\(step)"]), source: "t", ids: chosen, now: now) }
                } else {
                    inode += 1
                    let base = "/lib/a/P\(inode)"
                    var raw = media()
                    raw.mediaType = .image
                    raw.format = "cr2"
                    raw.isRaw = true
                    raw.burstIdentifier = nil
                    files[base + ".CR2"] = inode
                    _ = try db.write { try $0.apply(Make.batch([Make.outcome(base + ".CR2", inode: inode, .media(raw))]), now: now) }
                    if let id = try Self.rows(db).first(where: { $0.path.string == base + ".CR2" })?.id, Bool.random(using: &g) {
                        _ = try db.write { try $0.set(Bool.random(using: &g) ? .hidden : .favorite, true, ids: [AssetID(rawValue: id)!], now: now) }
                    }
                    inode += 1
                    var jpeg = raw
                    jpeg.format = "jpeg"
                    jpeg.isRaw = false
                    files[base + ".JPG"] = inode
                    what = "raw pair"
                    _ = try db.write { try $0.apply(Make.batch([Make.outcome(base + ".JPG", inode: inode, .media(jpeg))]), now: now) }
                }
            } else if roll < 78 {
                // A folder moves (and back later): every path below it changes.
                let from = ["/lib/a", "/lib/z"].first { f in files.keys.contains { $0.hasPrefix(f + "/") } } ?? "/lib/a"
                let to = from == "/lib/a" ? "/lib/z" : "/lib/a"
                var batch = WriteBatch()
                batch.movedDirectories = [DirectoryMove(from: PathBytes(from), to: PathBytes(to))]
                for (path, ino) in files where path.hasPrefix(from + "/") {
                    files[path] = nil
                    files[to + path.dropFirst(from.count)] = ino
                }
                what = "move \(from) → \(to)"
                _ = try db.write { try $0.apply(batch, now: now) }
            } else if roll < 84 {
                let folder: String? = folders.isEmpty || Bool.random(using: &g) ? nil : folders.keys.sorted().randomElement(using: &g)
                if Int.random(in: 0..<3, using: &g) == 0 {
                    let made = try db.write { try $0.createUserFolder(title: "F\(step)", parent: folder, now: now) }
                    folders[made.id] = folder
                    what = "folder"
                } else {
                    let made = try db.write { try $0.createUserAlbum(title: "A\(step)", folder: folder, now: now) }
                    userAlbums[made.id] = []
                    albumFolders[made.id] = folder
                    what = "album"
                }
            } else if roll < 95, let album = userAlbums.keys.sorted().randomElement(using: &g) {
                let all = try ids()
                let chosen = Array(Set((0..<Int.random(in: 1...6, using: &g)).compactMap { _ in all.randomElement(using: &g) }))
                if Bool.random(using: &g) || userAlbums[album]!.isEmpty {
                    _ = try db.write { try $0.addToUserAlbum(album, ids: chosen, now: now) }
                    for id in chosen where !userAlbums[album]!.contains(id.rawValue) { userAlbums[album]!.append(id.rawValue) }
                    what = "add to \(album)"
                } else {
                    let gone = userAlbums[album]!.randomElement(using: &g)!
                    _ = try db.write { try $0.removeFromUserAlbum(album, ids: [AssetID(rawValue: gone)!], now: now) }
                    userAlbums[album]!.removeAll { $0 == gone }
                    what = "remove from \(album)"
                }
            } else if let album = userAlbums.keys.sorted().randomElement(using: &g), Int.random(in: 0..<3, using: &g) == 0 {
                _ = try db.write { try $0.deleteUserCollection(album, now: now) }
                userAlbums[album] = nil
                albumFolders[album] = nil
                what = "delete \(album)"
            } else {
                continue
            }
            let expected = Self.expected(try Self.rows(db), userAlbums: userAlbums, folders: folders, albumFolders: albumFolders, now: now)
            let stored = try Self.stored(db, now: now)
            for key in Set(expected.keys).union(stored.keys).sorted() where expected[key] != stored[key] {
                Issue.record("seed \(seed) step \(step) (\(what)): \(key) keeps \(stored[key] ?? []), the rules give \(expected[key] ?? [])")
            }
            if expected != stored { return }
        }
    }
}
