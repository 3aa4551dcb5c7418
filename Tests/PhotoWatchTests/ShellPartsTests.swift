import PhotoModel
@testable import PhotoWatch
import Testing

@Suite("Record parsing and the watch registry")
struct ShellPartsTests {
    /// Builds a read as the kernel lays it out: 16-byte headers, names NUL-padded to `len`.
    static func record(wd: Int32, mask: UInt32, cookie: UInt32, name: String, padTo: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        func put(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        put(UInt32(bitPattern: wd))
        put(mask)
        put(cookie)
        let length = name.isEmpty ? 0 : padTo
        put(UInt32(length))
        var n = Array(name.utf8)
        n += [UInt8](repeating: 0, count: length - n.count)
        return bytes + n
    }

    @Test("records are split at +16 with NUL-padded names, at any alignment")
    func parse() {
        let read = Self.record(wd: 1, mask: 0x100, cookie: 0, name: "a.jpg", padTo: 16)
            + Self.record(wd: 2, mask: 0x4000_0040, cookie: 77, name: "Ünïcödé dir", padTo: 32)
            + Self.record(wd: 3, mask: 0x400, cookie: 0, name: "", padTo: 0)
            + Self.record(wd: -1, mask: 0x4000, cookie: 0, name: "", padTo: 0)
        for shift in 0..<4 {
            // Shift the whole read in memory: loads must not assume alignment.
            let shifted = [UInt8](repeating: 0xEE, count: shift) + read
            var records: [InotifyWatcher.RawRecord] = []
            shifted.withUnsafeBytes { raw in
                InotifyWatcher.parse(UnsafeRawBufferPointer(rebasing: raw[shift...])) { records.append($0) }
            }
            #expect(records == [
                .init(wd: WatchDescriptor(rawValue: 1), mask: .create, cookie: 0, name: Array("a.jpg".utf8)),
                .init(wd: WatchDescriptor(rawValue: 2), mask: [.movedFrom, .isDirectory], cookie: 77, name: Array("Ünïcödé dir".utf8)),
                .init(wd: WatchDescriptor(rawValue: 3), mask: .deleteSelf, cookie: 0, name: []),
                .init(wd: WatchDescriptor(rawValue: -1), mask: .queueOverflow, cookie: 0, name: []),
            ])
        }
    }

    @Test("a truncated trailing record is not read past the buffer")
    func truncated() {
        let read = Self.record(wd: 1, mask: 0x100, cookie: 0, name: "a.jpg", padTo: 16) + [1, 2, 3]
        var count = 0
        read.withUnsafeBytes { InotifyWatcher.parse($0) { _ in count += 1 } }
        #expect(count == 1)
    }

    static func wd(_ n: Int32) -> WatchDescriptor { WatchDescriptor(rawValue: n) }

    @Test("a directory rename rewrites the path prefix of every watch below it, nothing else")
    func move() {
        var reg = WatchRegistry()
        for (n, path) in [(1, "/r"), (2, "/r/d"), (3, "/r/d/e"), (4, "/r/d/e/f"), (5, "/r/dd"), (6, "/r/x")] as [(Int32, String)] {
            reg.insert(Self.wd(n), path: p(path))
        }
        reg.unwatched = [p("/r/d/e/big")]
        let displaced = reg.move(from: p("/r/d"), to: p("/r/x/moved"))
        #expect(displaced.isEmpty)
        #expect(reg.entry(Self.wd(2))?.path == p("/r/x/moved"))
        #expect(reg.entry(Self.wd(3))?.path == p("/r/x/moved/e"))
        #expect(reg.entry(Self.wd(4))?.path == p("/r/x/moved/e/f"))
        #expect(reg.entry(Self.wd(5))?.path == p("/r/dd"), "a sibling sharing the prefix bytes is not below it")
        #expect(reg.byPath[p("/r/d")] == nil)
        #expect(reg.byPath[p("/r/x/moved/e")] == Self.wd(3))
        #expect(reg.unwatched == [p("/r/x/moved/e/big")])
    }

    @Test("a rename onto a watched directory displaces its watch")
    func moveOnto() {
        var reg = WatchRegistry()
        reg.insert(Self.wd(1), path: p("/r/a"))
        reg.insert(Self.wd(2), path: p("/r/b"))
        #expect(reg.move(from: p("/r/a"), to: p("/r/b")) == [Self.wd(2)])
        #expect(reg.count == 1)
        #expect(reg.byPath[p("/r/b")] == Self.wd(1))
    }

    @Test("removing a tree returns its descriptors; the same descriptor under a new path is re-pathed")
    func removeAndReinsert() {
        var reg = WatchRegistry()
        for (n, path) in [(1, "/r"), (2, "/r/d"), (3, "/r/d/e"), (4, "/r/dd")] as [(Int32, String)] {
            reg.insert(Self.wd(n), path: p(path))
        }
        #expect(reg.removeTree(p("/r/d"), includingSelf: false) == [Self.wd(3)])
        #expect(reg.removeTree(p("/r/d")) == [Self.wd(2)])
        #expect(reg.count == 2)
        let again = reg.insert(Self.wd(4), path: p("/r/renamed"))
        #expect(!again.isNew)
        #expect(reg.byPath[p("/r/dd")] == nil)
        #expect(reg.entry(Self.wd(4))?.path == p("/r/renamed"))
        let replaced = reg.insert(Self.wd(9), path: p("/r/renamed"))
        #expect(replaced == WatchRegistry.Insertion(isNew: true, displaced: Self.wd(4)))
    }

    @Test("the default budget leaves a reserve to other programs", arguments: [
        (8_192, 1_000), (192_536, 19_253), (1_000_000, 100_000), (1_500, 750),
    ])
    func reserve(limit: Int, reserve: Int) {
        #expect(WatchLimits.reserve(forUserLimit: limit) == reserve)
    }

    @Test("the system budget is read from /proc")
    func systemBudget() throws {
        let limit = try #require(WatchLimits.systemMaxUserWatches())
        #expect(WatchLimits.system().maxWatches == limit - WatchLimits.reserve(forUserLimit: limit))
    }
}
