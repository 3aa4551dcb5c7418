import Dispatch
import PhotoModel
import PhotoPipeline
@testable import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing


@Suite("Sort queue, property: incremental collections equal a rebuild")
struct MomentsPropertyTests {
    /// Random libraries, random changes (adds, edits that move days, deletes), random chunkings,
    /// and random cancellation points (the writer is held so that pending jobs merge): the
    /// moments and folder albums in the store always equal grouping the final library from scratch.
    @Test(arguments: 0..<12)
    func incrementalEqualsRebuild(seed: Int) throws {
        var g = SplitMix64(state: UInt64(seed) &* 0x5EED)
        let dir = try TemporaryDirectory("prop")
        defer { dir.remove() }
        let db = try Database(path: dir("p.db").string)
        let root = PathBytes("/lib")
        _ = try db.write { try $0.registerRoots([root]) }
        let queue = SortQueue(database: db, logger: .silent)
        queue.start()

        // The model: path → (date, type, gps) of every file that exists.
        var library: [String: MediaFields] = [:]
        var inode: UInt64 = 0
        var operations: [(files: [FileOutcome], removed: [String])] = []
        for _ in 0..<Int.random(in: 20...60, using: &g) {
            var files: [FileOutcome] = []
            var removed: [String] = []
            for _ in 0..<Int.random(in: 1...12, using: &g) {
                let existing = library.keys.sorted()
                let roll = Int.random(in: 0..<10, using: &g)
                if roll < 6 || existing.isEmpty {
                    let path = "/lib/d\(Int.random(in: 0..<5, using: &g))/f\(inode).jpg"
                    inode += 1
                    let m = Self.randomMedia(&g)
                    library[path] = m
                    files.append(Make.outcome(path, inode: inode, .media(m)))
                } else if roll < 8 {
                    let path = existing.randomElement(using: &g)!
                    let m = Self.randomMedia(&g)
                    library[path] = m
                    inode += 1
                    files.append(Make.outcome(path, inode: inode, .media(m)))
                } else {
                    let path = existing.randomElement(using: &g)!
                    library[path] = nil
                    files.removeAll { $0.path.string == path }
                    removed.append(path)
                }
            }
            operations.append((files, removed))
        }

        let done = DispatchGroup()
        for op in operations {
            // Now and then hold the writer while jobs queue up: they are merged when it frees.
            let hold = Int.random(in: 0..<4, using: &g) == 0
            let release = DispatchSemaphore(value: 0), held = DispatchSemaphore(value: 0)
            if hold {
                DispatchQueue.global().async {
                    _ = try? db.write { _ in
                        held.signal()
                        release.wait()
                    }
                }
                held.wait()
            }
            var batch = WriteBatch()
            batch.files = op.files
            batch.removedFiles = op.removed.map { (PathBytes($0).parent, PathBytes($0).lastComponent) }
            done.enter()
            queue.submit(batch) { _ in done.leave() }
            if hold { release.signal() }
        }
        done.wait()
        queue.stop()

        let assets = try db.read { try $0.assets(limit: 100_000, offset: 0) }
        #expect(Set(assets.map(\.path.string)) == Set(library.keys), "seed \(seed)")
        for a in assets {
            let m = library[a.path.string]
            #expect(a.captureDate == m?.captureDate && a.mediaType == m?.mediaType && a.latitude == m?.latitude,
                    "seed \(seed): \(a.path) is not what was last written")
        }
        let expected = MomentGrouping.group(assets.map(MomentMember.init))
        let stored = try db.read { try $0.moments() }
        #expect(stored == expected, "seed \(seed): incremental moments differ from a rebuild")
        let albums = try db.read { try $0.folderAlbums() }
        var byDirectory: [PathBytes: Int] = [:]
        for a in assets { byDirectory[a.path.parent, default: 0] += 1 }
        #expect(Dictionary(uniqueKeysWithValues: albums.map { ($0.path, $0.assetCount) }) == byDirectory, "seed \(seed)")
        // Each album's first and last capture times, kept by the jobs, equal its assets' now.
        var spans: [PathBytes: (LocalDateTime, LocalDateTime)] = [:]
        for a in assets {
            let local = a.captureDate.local
            let old = spans[a.path.parent] ?? (local, local)
            spans[a.path.parent] = (min(old.0, local), max(old.1, local))
        }
        for album in albums {
            #expect(album.start == spans[album.path]?.0 && album.end == spans[album.path]?.1, "seed \(seed): \(album.path)")
        }
        #expect(try db.read { try $0.counts() } == (try db.read { try $0.recount() }), "seed \(seed)")
        for now: Int64 in [0, 1_000_000, 40 * 86_400_000] {
            #expect(try db.read { try $0.smartAlbumCounts(now: now) } == (try db.read { try $0.smartAlbumCountsByScan(now: now) }),
                    "seed \(seed) at \(now)")
        }
        // Tokens have no gap.
        let tokens = try db.read { try $0.changes(after: 0, limit: 100_000) }.map(\.token)
        #expect(tokens == Array(1...Int64(tokens.count)), "seed \(seed)")
    }

    static func randomMedia(_ g: inout SplitMix64) -> MediaFields {
        let day = Int.random(in: 1...6, using: &g)
        let hour = [0, 1, 12, 22, 23].randomElement(using: &g)!
        let date = "2020-03-0\(day)T\(hour < 10 ? "0" : "")\(hour):\(Int.random(in: 10...59, using: &g)):00"
        let gps = Bool.random(using: &g)
        return Make.media(date: date, offset: [nil, 9 * 3600, -5 * 3600].randomElement(using: &g)!,
                          type: Bool.random(using: &g) ? .image : .video,
                          latitude: gps ? Double.random(in: -80...80, using: &g) : nil,
                          longitude: gps ? Double.random(in: -170...170, using: &g) : nil)
    }
}
