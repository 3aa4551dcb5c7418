import PhotoModel
@testable import PhotoStore
import PhotoTesting
import Testing

@Suite("Sort jobs: pairing, moments, albums, smart albums, journal")
struct CollectionsTests {
    let dir: TemporaryDirectory
    let db: Database
    init() throws {
        dir = try TemporaryDirectory("collections")
        db = try Database(path: dir("c.db").string)
        _ = try db.write { try $0.registerRoots([PathBytes("/lib")]) }
    }

    func apply(_ files: [FileOutcome], removed: [String] = [], now: Int64 = 1_000) throws -> ChangeSet {
        var b = Make.batch(files)
        b.removedFiles = removed.map { (PathBytes($0).parent, PathBytes($0).lastComponent) }
        return try db.write { try $0.apply(b, now: now) }
    }

    func assets() throws -> [Asset] { try db.read { try $0.assets(limit: 1000, offset: 0) } }

    @Test("RAW + JPEG are one asset; the JPEG is primary; deleting the JPEG leaves the RAW with the same id")
    func rawPlusJPEG() throws {
        defer { dir.remove() }
        // The RAW arrives first (another chunk), then the JPEG.
        _ = try apply([Make.outcome("/lib/d/IMG_1.CR2", inode: 1, .media(Make.media(format: "cr2", raw: true, width: 6000, height: 4000)))])
        let first = try #require(try assets().first)
        #expect(first.subtypes == [.raw])
        let s = try apply([Make.outcome("/lib/d/IMG_1.JPG", inode: 2, .media(Make.media(width: 1200, height: 800)))])
        #expect(s.updated == [first.id])
        #expect(s.inserted.isEmpty)
        let pair = try #require(try assets().first)
        #expect(try assets().count == 1)
        #expect(pair.id == first.id)
        #expect(pair.pixelWidth == 1200)  // the JPEG is the primary
        #expect(pair.subtypes.contains(.raw))
        #expect(pair.resources.map(\.role) == [.primary, .raw])
        #expect(pair.resources.first?.path == PathBytes("/lib/d/IMG_1.JPG"))
        _ = try apply([], removed: ["/lib/d/IMG_1.JPG"])
        let alone = try #require(try assets().first)
        #expect(alone.id == first.id)
        #expect(alone.pixelWidth == 6000)
        #expect(alone.resources.map(\.role) == [.primary])
    }

    @Test("Live Photos pair by ContentIdentifier or by capture instants within 3 s, never by file times")
    func livePhotos() throws {
        defer { dir.remove() }
        _ = try apply([
            Make.outcome("/lib/d/A.HEIC", inode: 1, .media(Make.media(format: "heic", contentID: "X-1"))),
            Make.outcome("/lib/d/A.MOV", inode: 2, .media(Make.media(type: .video, format: "mov", contentID: "X-1"))),
            // No identifiers: instants 2 s apart (both with offsets).
            Make.outcome("/lib/d/B.JPG", inode: 3, .media(Make.media(date: "2020-01-02T03:04:05"))),
            Make.outcome("/lib/d/B.MP4", inode: 4, .media(Make.media(date: "2020-01-02T03:04:07", type: .video, format: "mp4"))),
            // Identifiers differ: two assets.
            Make.outcome("/lib/d/C.HEIC", inode: 5, .media(Make.media(format: "heic", contentID: "Y"))),
            Make.outcome("/lib/d/C.MOV", inode: 6, .media(Make.media(type: .video, format: "mov", contentID: "Z"))),
            // Times from file names only: never paired.
            Make.outcome("/lib/d/D.JPG", inode: 7, .media(Make.media(offset: nil, source: .fileName))),
            Make.outcome("/lib/d/D.MOV", inode: 8, .media(Make.media(offset: nil, type: .video, format: "mov", source: .fileName))),
        ])
        let all = try assets()
        func asset(_ name: String) -> Asset? { all.first { $0.path.string.hasSuffix("/" + name) } }
        #expect(all.count == 6)
        #expect(asset("A.HEIC")?.subtypes.contains(.live) == true)
        #expect(asset("A.HEIC")?.resources.map(\.role) == [.primary, .pairedVideo])
        #expect(asset("B.JPG")?.subtypes.contains(.live) == true)
        #expect(asset("C.HEIC")?.subtypes.contains(.live) == false)
        #expect(asset("C.MOV") != nil)
        #expect(asset("D.MOV") != nil)
        let live = try db.read { try $0.assets(in: .smartAlbum(SmartAlbums.album(.livePhotos)), limit: 10, offset: 0, now: 1_000) }
        #expect(live?.total == 2)
    }

    @Test("A sidecar's XMP date is a capture date: it wins over the file's DateTime, XMP and IPTC dates, not over DateTimeOriginal or DateTimeDigitized")
    func sidecarDateRank() throws {
        defer { dir.remove() }
        let xmp = SidecarFields(date: Timestamp.iso8601("2015-06-07T08:09:10+02:00"), rating: nil, keywords: [])
        let sources: [(String, DateSource)] = [("M", .exifModified), ("X", .xmp), ("I", DateSource(rawValue: "iptc") ?? .xmp),
                                                ("D", .exifDigitized), ("O", .exifOriginal)]
        var files: [FileOutcome] = []
        for (i, (name, source)) in sources.enumerated() {
            files.append(Make.outcome("/lib/d/\(name).jpg", inode: UInt64(2 * i + 1), .media(Make.media(date: "2021-01-01T00:00:00", source: source))))
            files.append(Make.outcome("/lib/d/\(name).xmp", inode: UInt64(2 * i + 2), .sidecar(xmp)))
        }
        _ = try apply(files)
        let all = try assets()
        func source(_ name: String) -> String? { all.first { $0.path.string.hasSuffix("/\(name).jpg") }?.captureDate.source.rawValue }
        #expect(source("M") == "xmp")  // DateTime is the last edit's time
        #expect(source("X") == "xmp" && source("I") == "xmp")
        #expect(source("D") == "exifDigitized" && source("O") == "exifOriginal")
        #expect(all.first { $0.path.string.hasSuffix("/M.jpg") }?.captureDate.local.description == "2015-06-07T08:09:10")
    }

    @Test("An XMP sidecar attaches to its photo and gives a date when EXIF has none, plus rating and keywords")
    func sidecar() throws {
        defer { dir.remove() }
        let xmp = SidecarFields(date: Timestamp.iso8601("2015-06-07T08:09:10+02:00"), rating: 4, keywords: ["beach", "sea"])
        _ = try apply([
            Make.outcome("/lib/d/E.jpg", inode: 1, .media(Make.media(offset: nil, source: .fileModified))),
            Make.outcome("/lib/d/E.jpg.xmp", inode: 2, .sidecar(xmp)),
            Make.outcome("/lib/d/F.jpg", inode: 3, .media(Make.media(date: "2001-01-01T00:00:00"))),
            Make.outcome("/lib/d/F.xmp", inode: 4, .sidecar(xmp)),
            Make.outcome("/lib/d/orphan.xmp", inode: 5, .sidecar(xmp)),
        ])
        let all = try assets()
        #expect(all.count == 2)
        let e = try #require(all.first { $0.path.string.hasSuffix("E.jpg") })
        #expect(e.captureDate.source == .xmp)
        #expect(e.captureDate.local.description == "2015-06-07T08:09:10")
        #expect(e.captureDate.offset?.description == "+02:00")
        #expect(e.rating == 4)
        #expect(e.keywords == ["beach", "sea"])
        #expect(e.resources.map(\.role) == [.primary, .sidecar])
        let f = try #require(all.first { $0.path.string.hasSuffix("F.jpg") })
        #expect(f.captureDate.source == .exifOriginal)  // EXIF wins over the sidecar's date
        #expect(f.rating == 4)
        #expect(try db.read { try $0.counts() }.sidecars == 3)
    }

    @Test("Moments group by the capture clock's day; ids are stable; the journal has every change set")
    func momentsAndJournal() throws {
        defer { dir.remove() }
        let s1 = try apply([
            Make.outcome("/lib/t/tokyo.jpg", inode: 1, .media(Make.media(date: "2019-05-04T23:30:00", offset: 9 * 3600))),
            Make.outcome("/lib/n/ny.jpg", inode: 2, .media(Make.media(date: "2019-05-04T00:10:00", offset: -5 * 3600))),
            Make.outcome("/lib/n/v.mp4", inode: 3, .media(Make.media(date: "2019-05-05T09:00:00", type: .video, format: "mp4",
                                                                   latitude: nil, longitude: nil))),
        ])
        let moments = try db.read { try $0.moments() }
        #expect(moments.map(\.id) == ["m_20190505", "m_20190504"])
        #expect(moments[1].assetCount == 2)
        #expect(moments[1].start.description == "2019-05-04T00:10:00")
        #expect(moments[1].end.description == "2019-05-04T23:30:00")
        #expect(moments[1].dateTitle == "Saturday, 4 May 2019")
        #expect(moments[0].videoCount == 1)
        #expect(moments[0].latitude == nil)
        #expect(Set(s1.collectionsInserted).isSuperset(of: ["m_20190504", "m_20190505"]))
        let albums = try db.read { try $0.folderAlbums() }
        #expect(albums.map(\.title) == ["n", "t"])
        #expect(albums.map(\.assetCount) == [2, 1])
        #expect(s1.collectionsInserted.contains(albums[0].id))
        #expect(s1.collectionsUpdated.contains("s_allPhotos"))
        #expect(s1.collectionsUpdated.contains("s_videos"))

        // Moving the video to another day updates both moments; the token grows by one.
        let s2 = try apply([Make.outcome("/lib/n/v.mp4", inode: 3, .media(Make.media(date: "2019-05-04T12:00:00", type: .video,
                                                                                      format: "mp4")))])
        #expect(s2.token == s1.token! + 1)
        #expect(s2.collectionsDeleted == ["m_20190505"])
        #expect(s2.collectionsUpdated.contains("m_20190504"))
        let entries = try db.read { try $0.changes(after: s1.token!, limit: 10) }
        #expect(entries.map(\.token) == [s2.token])
        #expect(entries.first?.collectionsDeleted == ["m_20190505"])

        // A full rebuild from the same files gives the same moment and album ids.
        let other = try TemporaryDirectory("rebuild")
        defer { other.remove() }
        let rebuilt = try Database(path: other("r.db").string)
        _ = try rebuilt.write { try $0.registerRoots([PathBytes("/lib")]) }
        _ = try rebuilt.write {
            try $0.apply(Make.batch([
                Make.outcome("/lib/t/tokyo.jpg", inode: 1, .media(Make.media(date: "2019-05-04T23:30:00", offset: 9 * 3600))),
                Make.outcome("/lib/n/ny.jpg", inode: 2, .media(Make.media(date: "2019-05-04T00:10:00", offset: -5 * 3600))),
                Make.outcome("/lib/n/v.mp4", inode: 3, .media(Make.media(date: "2019-05-04T12:00:00", type: .video, format: "mp4"))),
            ]), now: 5)
        }
        #expect(try rebuilt.read { try $0.moments() }.map(\.id) == (try db.read { try $0.moments() }).map(\.id))
        #expect(try rebuilt.read { try $0.folderAlbums() }.map(\.id) == (try db.read { try $0.folderAlbums() }).map(\.id))
    }

    @Test("Smart album rules: screenshots, panoramas, selfies, RAW, recently added")
    func smartAlbums() throws {
        defer { dir.remove() }
        let day: Int64 = 86_400_000
        _ = try apply([
            Make.outcome("/lib/s/Screenshot 2023-05-04 at 13.22.10.png", inode: 1,
                         .media(Make.media(format: "png", width: 1170, height: 2532, make: nil))),
            Make.outcome("/lib/s/IMG_2000.png", inode: 2, .media(Make.media(format: "png", width: 2880, height: 1800, make: nil))),
            Make.outcome("/lib/s/pano.jpg", inode: 3, .media(Make.media(width: 9000, height: 3000))),
            Make.outcome("/lib/s/selfie.jpg", inode: 4, .media(Make.media(lens: "iPhone 12 front camera 2.71mm f/2.2"))),
            Make.outcome("/lib/s/plain.jpg", inode: 5, .media(Make.media())),
        ], now: 100 * day)
        let counts = try db.read { try $0.smartAlbumCounts(now: 100 * day) }
        #expect(counts["s_allPhotos"] == 5)
        #expect(counts["s_screenshots"] == 2)
        #expect(counts["s_panoramas"] == 1)
        #expect(counts["s_selfies"] == 1)
        #expect(counts["s_raw"] == 0)
        #expect(counts["s_recentlyAdded"] == 5)
        #expect(try db.read { try $0.smartAlbumCounts(now: 131 * day) }["s_recentlyAdded"] == 0)
    }
}
