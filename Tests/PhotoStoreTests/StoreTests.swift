import PhotoModel
import PhotoStore
import PhotoTesting
import Testing

@Suite("Index store")
struct StoreTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory("store") }

    func open(_ name: String = "index.db") throws -> Database {
        try Database(path: dir(name).string)
    }

    static let root = PathBytes("/lib")

    static func asset(_ path: String, date: String = "2020-01-02T03:04:05", id: AssetID = .random(milliseconds: 0)) -> Asset {
        Asset(id: id, path: PathBytes(path), mediaType: .image, format: "jpeg",
              captureDate: CaptureDate(local: LocalDateTime(iso: date)!, offset: UTCOffset(seconds: 3600), source: .exifOriginal),
              pixelWidth: 640, pixelHeight: 480, orientation: 6, latitude: -33.5, longitude: 151.25, altitude: nil,
              make: "Canon", model: "EOS", lensModel: nil, duration: nil, fileSize: 1234, addedAt: 0)
    }

    static func outcome(_ path: String, inode: UInt64, kind: FileOutcome.Kind) -> FileOutcome {
        let p = PathBytes(path)
        return FileOutcome(directory: p.parent, name: p.lastComponent,
                           identity: FileIdentity(fsid: 7, inode: inode, size: 1234, mtimeNanoseconds: 99),
                           fingerprint: 42, format: "jpeg", kind: kind)
    }

    @Test("A new database is migrated to the current schema")
    func migrates() throws {
        defer { dir.remove() }
        let db = try open()
        let version = try db.read { try $0.connection.scalar("PRAGMA user_version").int64 }
        #expect(version == Int64(Schema.currentVersion))
        let mode = try db.read { try $0.connection.scalar("PRAGMA journal_mode").string }
        #expect(mode == "wal")
    }

    @Test("A second photod on the same database is refused")
    func exclusive() throws {
        defer { dir.remove() }
        let first = try open()
        #expect(throws: StoreError.self) { _ = try open() }
        do throws(StoreError) {
            _ = try Database(path: dir("index.db").string)
        } catch {
            #expect(error.code == .locked)
            #expect(error.message.contains("in use by another photod"))
        }
        withExtendedLifetime(first) {}
    }

    @Test("A database from a newer photod is refused, untouched")
    func newerSchema() throws {
        defer { dir.remove() }
        do {
            let db = try open()
            _ = try db.write { w in try w.connection.execute("PRAGMA user_version = 999") }
        }
        do throws(StoreError) {
            _ = try Database(path: dir("index.db").string)
            Issue.record("opened a newer database")
        } catch {
            #expect(error.code == .newerSchema)
        }
    }

    @Test("Batches insert, update and remove assets; ids survive updates")
    func batches() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([Self.root]) }
        let a = Self.asset("/lib/2020/a.jpg")
        var batch = WriteBatch()
        batch.files = [
            Self.outcome("/lib/2020/a.jpg", inode: 1, kind: .asset(a)),
            Self.outcome("/lib/2020/b.jpg", inode: 2, kind: .asset(Self.asset("/lib/2020/b.jpg", date: "2019-01-01T00:00:00"))),
            Self.outcome("/lib/2020/readme.txt", inode: 3, kind: .ignored(reason: "text")),
            Self.outcome("/lib/2020/bad.jpg", inode: 4, kind: .error(code: "truncated", message: "ends early")),
        ]
        let s1 = try db.write { try $0.apply(batch, now: 1000) }
        #expect(s1.inserted.count == 2)
        #expect(s1.errors == 1)

        let counts = try db.read { try $0.counts() }
        #expect(counts == (try db.read { try $0.recount() }))
        #expect(counts.assets == 2)
        #expect(counts.files == 4)
        #expect(counts.errors == 1)
        #expect(counts.ignored == 1)
        #expect(counts.directories == 2)  // /lib and /lib/2020

        let page = try db.read { try $0.assets(limit: 10, offset: 0) }
        #expect(page.map(\.path.string) == ["/lib/2020/b.jpg", "/lib/2020/a.jpg"])  // by capture time
        let stored = try #require(page.last)
        #expect(stored.id == a.id)
        #expect(stored.captureDate == a.captureDate)
        #expect(stored.orientation == 6)
        #expect(stored.latitude == -33.5)
        #expect(stored.addedAt == 1000)
        #expect(stored.resources == [Resource(path: PathBytes("/lib/2020/a.jpg"), role: .primary)])

        // Re-reading a changed file keeps its asset id.
        var again = WriteBatch()
        again.files = [Self.outcome("/lib/2020/a.jpg", inode: 1, kind: .asset(Self.asset("/lib/2020/a.jpg", date: "2021-01-01T00:00:00")))]
        let s2 = try db.write { try $0.apply(again, now: 2000) }
        #expect(s2.updated == [a.id])
        #expect(s2.inserted.isEmpty)
        let updated = try #require(try db.read { try $0.asset(id: a.id) })
        #expect(updated.captureDate.local.description == "2021-01-01T00:00:00")
        #expect(updated.addedAt == 1000)

        // A file that turns into garbage loses its asset.
        var broken = WriteBatch()
        broken.files = [Self.outcome("/lib/2020/a.jpg", inode: 1, kind: .error(code: "corrupt", message: "x"))]
        let s3 = try db.write { try $0.apply(broken, now: 3000) }
        #expect(s3.deleted == [a.id])

        // Snapshot of a directory, then removing a file and a subtree.
        let snap = try #require(try db.read { try $0.snapshot(of: PathBytes("/lib/2020")) })
        #expect(Set(snap.files.map { String(decoding: $0.name, as: UTF8.self) }) == ["a.jpg", "b.jpg", "readme.txt", "bad.jpg"])
        var removal = WriteBatch()
        removal.removedDirectories = [PathBytes("/lib/2020")]
        let s4 = try db.write { try $0.apply(removal, now: 4000) }
        #expect(s4.deleted.count == 1)
        let after = try db.read { try $0.counts() }
        #expect(after == (try db.read { try $0.recount() }), "trigger-kept counters equal a recount, cascades included")
        #expect(after.assets == 0)
        #expect(after.files == 0)
        #expect(after.directories == 1)
    }

    @Test("Subtree removal does not touch siblings that share a name prefix")
    func prefixSiblings() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([Self.root]) }
        var batch = WriteBatch()
        for p in ["/lib/a/x.jpg", "/lib/a/b/y.jpg", "/lib/a b/z.jpg", "/lib/a-b/w.jpg", "/lib/ab/v.jpg"] {
            batch.files.append(Self.outcome(p, inode: UInt64(p.count), kind: .asset(Self.asset(p))))
        }
        _ = try db.write { try $0.apply(batch, now: 1) }
        var removal = WriteBatch()
        removal.removedDirectories = [PathBytes("/lib/a")]
        _ = try db.write { try $0.apply(removal, now: 2) }
        let left = try db.read { try $0.assets(limit: 10, offset: 0) }.map(\.path.string).sorted()
        #expect(left == ["/lib/a b/z.jpg", "/lib/a-b/w.jpg", "/lib/ab/v.jpg"])
    }

    @Test("Paths are stored as bytes: NFC and NFD names are two files, invalid UTF-8 works")
    func bytePaths() throws {
        defer { dir.remove() }
        let db = try open()
        _ = try db.write { try $0.registerRoots([Self.root]) }
        let nfc = "/lib/Cr\u{E9}mieux.jpg", nfd = "/lib/Cre\u{301}mieux.jpg"
        let invalid = PathBytes(Array("/lib/".utf8) + [0xFF, 0xFE] + Array(".jpg".utf8))
        var batch = WriteBatch()
        batch.files = [Self.outcome(nfc, inode: 1, kind: .asset(Self.asset(nfc))),
                       Self.outcome(nfd, inode: 2, kind: .asset(Self.asset(nfd)))]
        var raw = Self.outcome("/lib/x.jpg", inode: 3, kind: .asset(Self.asset("/lib/x.jpg")))
        raw.name = invalid.lastComponent
        if case .asset(var a) = raw.kind { a.path = invalid; raw.kind = .asset(a) }
        batch.files.append(raw)
        _ = try db.write { try $0.apply(batch, now: 1) }
        let paths = try db.read { try $0.assets(limit: 10, offset: 0) }.map(\.path)
        #expect(Set(paths) == [PathBytes(nfc), PathBytes(nfd), invalid])
        let snap = try #require(try db.read { try $0.snapshot(of: Self.root) })
        #expect(snap.files.contains { $0.name == invalid.lastComponent })
    }
}

@Suite("Index store, failures")
struct StoreFailureTests {
    @Test("A rolled-back batch leaves no stale directory ids behind")
    func rollbackClearsCache() throws {
        let dir = try TemporaryDirectory("rollback")
        defer { dir.remove() }
        let db = try Database(path: dir("r.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
        func file(_ path: String, _ inode: UInt64) -> FileOutcome {
            StoreTests.outcome(path, inode: inode, kind: .asset(StoreTests.asset(path)))
        }
        var bad = WriteBatch()
        bad.files = [file("/lib/A/x.jpg", 1), file("/outside/y.jpg", 2)]
        #expect(throws: StoreError.self) { _ = try db.write { try $0.apply(bad, now: 1) } }
        var b = WriteBatch()
        b.files = [file("/lib/B/z.jpg", 3)]
        _ = try db.write { try $0.apply(b, now: 2) }
        var a = WriteBatch()
        a.files = [file("/lib/A/w.jpg", 4)]
        _ = try db.write { try $0.apply(a, now: 3) }
        let assets = try db.read { try $0.assets(limit: 10, offset: 0) }
        for asset in assets { #expect(asset.resources.map(\.path) == [asset.path]) }
        let snapA = try #require(try db.read { try $0.snapshot(of: PathBytes("/lib/A")) })
        #expect(snapA.files.map(\.name) == [Array("w.jpg".utf8)])
    }
}
