import Foundation
@testable import PhotoDaemon
import PhotoImaging
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Image cache")
struct ImageCacheTests {
    static let assets = (0..<4).map { AssetID(rawValue: "a_3ocoflhz2con3imdh" + ["aaa", "bbb", "ccc", "ddd"][$0])! }

    /// A fake image of `bytes` bytes (the cache does not look inside).
    static func image(_ bytes: Int) -> EncodedImage {
        try! RenderedImage(size: PixelSize(width: 8, height: 8), channels: 3, pixels: [UInt8](repeating: 0, count: 192))
            .encodeJPEG().padded(to: bytes)
    }

    static func stem(_ i: Int, key: String = "00000000000000aa") -> String {
        ImageCache.stem(asset: assets[i], fileKey: key, mode: "fit", target: PixelSize(width: 8, height: 8))
    }

    @Test("Names parse back; what is on disk is found again after a restart, in the order of use")
    func reloadKeepsOrder() throws {
        let dir = try TemporaryDirectory("cache")
        defer { dir.remove() }
        let first = ImageCache(root: dir.path, capacity: 1 << 20, logger: .silent)
        var paths: [PathBytes] = []
        for i in 0..<3 {
            let path = try first.store(Self.image(1000), stem: Self.stem(i)).path
            // Distinct file times (the order of use across a restart), a second apart, in the past.
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: Double(i - 10))], ofItemAtPath: path.string)
            paths.append(path)
        }
        #expect(ImageCache.parse("00aa-fit-8x8=8x6.jpg")?.size == PixelSize(width: 8, height: 6))
        #expect(ImageCache.parse("garbage.jpg") == nil)
        _ = first.lookup(Self.stem(0))  // the oldest is now the most recently used
        // Debris: a temporary file of a write cut short, and an empty image (a power cut).
        try dir.write("xx/junk/.partial.1.2.tmp", [1, 2, 3])
        try dir.write("dd/" + Self.assets[3].rawValue + "/00000000000000aa-fit-8x8=8x8.jpg", [])

        // A restart with room for two (after eviction, which goes down to 90 % of the capacity):
        // storing a fourth evicts the least recently used (asset 1, then asset 2), not asset 0.
        let two = Double(2 * Self.image(1000).bytes.count) / ImageCache.evictionTarget
        let second = ImageCache(root: dir.path, capacity: Int64(two) + 10, logger: .silent)
        #expect(second.usage.files == 3)
        #expect(access(dir("xx/junk/.partial.1.2.tmp").string, F_OK) != 0)
        _ = try second.store(Self.image(1000), stem: Self.stem(3))
        #expect(second.lookup(Self.stem(1)) == nil)
        #expect(second.lookup(Self.stem(2)) == nil)
        #expect(second.usage.files == 2)
        #expect(access(paths[1].string, F_OK) != 0)
        #expect(second.lookup(Self.stem(0)) != nil)
        #expect(second.usage.evictions >= 1)
        #expect(second.usage.bytes <= second.capacity)
    }

    @Test("A new version of a file removes the images of the old one; removing an asset removes all of them")
    func versions() throws {
        let dir = try TemporaryDirectory("cache-v")
        defer { dir.remove() }
        let cache = ImageCache(root: dir.path, capacity: 1 << 20, logger: .silent)
        let old = try cache.store(Self.image(500), stem: Self.stem(0, key: "00000000000000aa"))
        let exif = try cache.store(Self.image(200), stem: ImageCache.exifStem(asset: Self.assets[0], fileKey: "00000000000000aa"))
        #expect(cache.variants(asset: Self.assets[0], fileKey: "00000000000000aa").count == 2)
        let new = try cache.store(Self.image(500), stem: Self.stem(0, key: "00000000000000bb"))
        #expect(access(old.path.string, F_OK) != 0 && access(exif.path.string, F_OK) != 0)
        #expect(cache.variants(asset: Self.assets[0], fileKey: "00000000000000aa").isEmpty)
        cache.remove(asset: Self.assets[0], except: "00000000000000bb")
        #expect(access(new.path.string, F_OK) == 0)
        cache.remove(asset: Self.assets[0])
        #expect(access(new.path.string, F_OK) != 0)
        #expect(!cache.hasImages(of: Self.assets[0]))
        // Files are readable by the group, directories searchable by it.
        let again = try cache.store(Self.image(100), stem: Self.stem(1))
        #expect(try FileStat.of(again.path).mode & 0o777 == 0o640)
        #expect(try FileStat.of(again.path.parent).mode & 0o777 == 0o750)
    }

    @Test("With a group (--socket-group), every directory and image below the root is in it, whatever the umask",
          .enabled(if: getuid() == 0, "giving files to another group needs root"))
    func group() throws {
        let dir = try TemporaryDirectory("cache-g")
        defer { dir.remove() }
        let gid = UInt32(65534)  // nogroup: the tests run as root, which may give files to any group
        let old = umask(0o077)
        defer { umask(old) }
        let cache = ImageCache(root: dir("images"), capacity: 1 << 20, group: gid, logger: .silent)
        let entry = try cache.store(Self.image(100), stem: Self.stem(0))
        func info(_ path: PathBytes) -> (mode: UInt32, gid: UInt32) {
            var st = stat()
            _ = stat(path.string, &st)
            return (st.st_mode & 0o7777, st.st_gid)
        }
        for path in [dir("images"), entry.path.parent.parent, entry.path.parent] {
            #expect(info(path).mode == 0o2750, "\(path)")
            #expect(info(path).gid == gid, "\(path)")
        }
        #expect(info(entry.path).gid == gid)
        #expect(info(entry.path).mode == 0o640)
    }
}

@Suite("Image job queue")
struct StemQueueTests {
    @Test("First in, first out across the head's compaction; compact keeps the order of what it keeps")
    func order() {
        var q = StemQueue()
        for i in 0..<3000 { q.append("s\(i)") }
        for i in 0..<2500 { #expect(q.popFirst() == "s\(i)") }
        q.append("t")
        #expect(q.pending == 501)
        q.compact { $0 != "s2600" }
        #expect(q.pending == 500)
        var rest: [String] = []
        while let s = q.popFirst() { rest.append(s) }
        #expect(rest == (2500..<3000).filter { $0 != 2600 }.map { "s\($0)" } + ["t"])
    }
}

extension EncodedImage {
    /// The same image with trailing bytes, so that sizes are exact (a JPEG ignores them).
    func padded(to count: Int) -> EncodedImage {
        EncodedImage(bytes: bytes + [UInt8](repeating: 0, count: max(0, count - bytes.count)), format: format, size: size)
    }
}
