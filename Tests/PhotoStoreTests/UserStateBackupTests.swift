import PhotoModel
@testable import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("User-state backup: export, file format, restore onto a rebuilt index, damaged databases")
struct UserStateBackupTests {
    let dir: TemporaryDirectory

    init() throws { dir = try TemporaryDirectory("backup") }

    /// Four photos in /lib/a; `inode(i)` and `fingerprintOf(i)` let a rebuild change them.
    static func files(inode: (Int) -> UInt64 = { UInt64($0 + 1) }) -> [FileOutcome] {
        (0..<4).map { Make.outcome("/lib/a/p\($0).jpg", inode: inode($0), .media(Make.media(date: "2020-05-0\($0 + 1)T10:00:00"))) }
    }

    static func index(_ path: String, _ files: [FileOutcome]) throws -> (Database, [PathBytes: AssetID]) {
        let db = try Database(path: path)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try db.write { try $0.apply(Make.batch(files), now: 1_000) }
        let ids = try db.read { try $0.assets(limit: 10, offset: 0) }
        return (db, Dictionary(uniqueKeysWithValues: ids.map { ($0.path, $0.id) }))
    }

    /// Favorites, hidden, a folder in a folder holding an album with three ordered members,
    /// an album at the top, keywords from two taggers.
    static func makeState(_ db: Database, _ ids: [PathBytes: AssetID]) throws {
        func id(_ i: Int) -> AssetID { ids[PathBytes("/lib/a/p\(i).jpg")]! }
        _ = try db.write { try $0.set(.favorite, true, ids: [id(0), id(2)], now: 2_000) }
        _ = try db.write { try $0.set(.hidden, true, ids: [id(3)], now: 2_000) }
        let (outer, _) = try db.write { try $0.createUserFolder(title: "Trips", parent: nil, now: 2_000) }
        let (inner, _) = try db.write { try $0.createUserFolder(title: "2020 \"Summer\"", parent: outer, now: 2_001) }
        let (album, _) = try db.write { try $0.createUserAlbum(title: "Beach", folder: inner, now: 2_002) }
        _ = try db.write { try $0.addToUserAlbum(album, ids: [id(2), id(0), id(3)], now: 2_003) }
        let (top, _) = try db.write { try $0.createUserAlbum(title: "Best", folder: nil, now: 2_004) }
        _ = try db.write { try $0.addToUserAlbum(top, ids: [id(1)], now: 2_005) }
        _ = try db.write { try $0.editKeywords(.add(["dog", "Beach"]), source: "objects", ids: [id(0), id(1)], now: 2_006) }
        _ = try db.write { try $0.editKeywords(.add(["Ann"]), source: "faces", ids: [id(1)], now: 2_007) }
    }

    /// The state with asset ids replaced by paths: what must survive a rebuild.
    static func byPath(_ b: UserStateBackup) -> (assets: [PathBytes: [String]], albums: [[String]], folders: [[String]]) {
        var path: [String: PathBytes] = [:]
        var assets: [PathBytes: [String]] = [:]
        for a in b.assets {
            path[a.id] = a.path
            assets[a.path] = ["fav=\(a.favorite)", "hidden=\(a.hidden)"] + a.keywords.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
        }
        let albums = b.albums.map { [$0.id, $0.title, $0.folderID ?? "-"] + $0.members.map { path[$0]!.string } }
        let folders = b.folders.map { [$0.id, $0.title, $0.parentID ?? "-"] }
        return (assets, albums, folders)
    }

    @Test("The export reaches the assets through the user-state indexes: no pass over every asset (it runs once a second while a library is indexed)")
    func exportUsesIndexes() throws {
        let (db, _) = try Self.index(dir("plan.db").string, Self.files())
        let plan = try db.read { r in
            let s = try r.connection.transientStatement("EXPLAIN QUERY PLAN " + IndexReader.userStateAssetsSQL)
            var details: [String] = []
            while try s.step() { details.append(s.string(3)) }
            return details
        }
        #expect(!plan.contains { $0.hasPrefix("SCAN assets") && !$0.contains("USING") }, "\(plan)")
        #expect(plan.contains { $0.contains("assets_invisible") }, "\(plan)")
    }

    @Test("Export, encode, decode: the same backup (paths as bytes, titles with quotes, keywords by source)")
    func roundTrip() throws {
        defer { dir.remove() }
        let (db, ids) = try Self.index(dir("a.db").string, Self.files())
        try Self.makeState(db, ids)
        let backup = try db.read { try $0.exportUserState(now: 5_000) }
        #expect(backup.assets.count == 4)
        #expect(backup.folders.count == 2)
        #expect(backup.albums.map(\.members.count).sorted() == [1, 3])
        #expect(backup.token > 0)
        let decoded = try UserStateBackup.decode(backup.encoded())
        #expect(decoded == backup)
        // Not a backup, or a newer one: refused with a reason.
        #expect(throws: StoreError.self) { try UserStateBackup.decode(Array("{\"format\":\"other\"}".utf8)) }
        #expect(throws: StoreError.self) { try UserStateBackup.decode(Array("{\"format\":\"photod.userstate\",\"version\":99}".utf8)) }
        #expect(throws: StoreError.self) { try UserStateBackup.decode(Array("{\"format\":".utf8)) }
    }

    @Test("Restore onto a rebuilt index (new asset ids): favorites, hidden, nested folders, album order, keywords")
    func restoreAfterRebuild() throws {
        defer { dir.remove() }
        let (old, oldIDs) = try Self.index(dir("a.db").string, Self.files())
        try Self.makeState(old, oldIDs)
        let backup = try UserStateBackup.decode(try old.read { try $0.exportUserState(now: 5_000) }.encoded())
        // The rebuild: p1 has a new inode (restored from a copy: found by fingerprint), p2 a new
        // inode and content (found by path); p3 is as it was.
        var files = Self.files(inode: { [0: 1, 1: 11, 2: 12, 3: 4][$0]! })
        files[1].fingerprint = 2 &* 0x9E37_79B9_7F4A_7C15  // the old p1's (inode 2)
        let (new, newIDs) = try Self.index(dir("b.db").string, files)
        #expect(Set(newIDs.values).isDisjoint(with: Set(oldIDs.values)))
        let (summary, report) = try new.write { try $0.restoreUserState(backup, now: 6_000) }
        #expect(summary.token != nil)
        #expect(report.matched == 4 && report.notFound == 0)
        #expect(report.matchedByIdentity == 2 && report.matchedByFingerprint == 1 && report.matchedByPath == 1)
        #expect(report.favorites == 2 && report.hidden == 1 && report.folders == 2 && report.albums == 2)
        #expect(report.albumMembers == 4 && report.keywords == 5)
        let restored = try new.read { try $0.exportUserState(now: 7_000) }
        let (a, b) = (Self.byPath(backup), Self.byPath(restored))
        #expect(a.assets == b.assets)
        #expect(a.albums == b.albums)
        #expect(a.folders == b.folders)
        #expect(try new.read { try $0.asset(id: newIDs[PathBytes("/lib/a/p0.jpg")]!) }?.isFavorite == true)
        #expect(try new.read { try $0.userAlbums() }.map(\.title).sorted() == ["Beach", "Best"])
        // Again (a restore interrupted by a crash runs again): nothing doubles.
        let (_, again) = try new.write { try $0.restoreUserState(backup, now: 8_000) }
        #expect(again.albums == 0 && again.folders == 0 && again.albumMembers == 0)
        #expect(Self.byPath(try new.read { try $0.exportUserState(now: 9_000) }).albums == a.albums)
    }

    @Test("An asset whose file is gone is counted as not found; the rest is restored")
    func notFound() throws {
        defer { dir.remove() }
        let (old, oldIDs) = try Self.index(dir("a.db").string, Self.files())
        try Self.makeState(old, oldIDs)
        let backup = try old.read { try $0.exportUserState(now: 5_000) }
        var files = Self.files(inode: { UInt64($0 + 21) })
        for i in files.indices { files[i].fingerprint = UInt64(i + 500) }
        files.removeFirst()  // p0 is gone; the others are found by path
        let (new, _) = try Self.index(dir("b.db").string, files)
        let (_, report) = try new.write { try $0.restoreUserState(backup, now: 6_000) }
        #expect(report.notFound == 1 && report.matchedByPath == 3)
        #expect(report.favorites == 1 && report.albumMembers == 3)
    }

    @Test("A damaged database is moved aside with its backup kept, and a fresh one records the recovery — sealed at a clean stop or not",
          arguments: ["truncated", "page overwritten", "header overwritten"], [false, true])
    func damaged(_ damage: String, sealed: Bool) throws {
        defer { dir.remove() }
        let path = dir("d.db").string
        do {
            let (db, ids) = try Self.index(path, Self.files())
            try Self.makeState(db, ids)
            let backup = try db.read { try $0.exportUserState(now: 5_000) }
            try AtomicFile.write(backup.encoded(), to: UserStateBackup.path(forDatabase: path))
            try db.checkpoint()
            if sealed { #expect(try db.seal()) }
        }
        let size = try FileStat.of(PathBytes(path)).size
        let fd = open(path, O_RDWR)
        #expect(fd >= 0)
        switch damage {
        case "truncated": #expect(ftruncate(fd, off_t(size / 2)) == 0)
        default:
            let page = damage == "header overwritten" ? 0 : (size / 4096) / 2
            let garbage = [UInt8](repeating: 0xA5, count: 4096)
            #expect(pwrite(fd, garbage, 4096, off_t(page * 4096)) == 4096)
        }
        close(fd)
        let (db, recovery) = try Database.openRecovering(path: path, now: 42)
        let r = try #require(recovery)
        #expect(r.damagedPath == path + ".corrupt-42")
        #expect(r.state == .pending)
        #expect(r.backupPath == path + ".corrupt-42.userstate.json")
        #expect(access(r.damagedPath, F_OK) == 0)
        #expect(try db.recovery() == r)
        #expect(try db.read { try $0.assetCount() } == 0)
        let kept = try UserStateBackup.decode(FileDescriptor.readAll(PathBytes(r.backupPath!)))
        #expect(kept.assets.count == 4)
        // A sound database opens without a recovery.
        let sound = dir("s.db").string
        _ = try Database(path: sound)
        #expect(try Database.openRecovering(path: sound, now: 43).1 == nil)
    }
}
