import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing

/// `FileDescriptor.prefetch`: the reads the pipeline starts ahead of its reader threads.
@Suite("Prefetch: a file's head and tail are read ahead, nothing else, and nothing blocks")
struct PrefetchTests {
    static let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Which pages of the file are in the page cache (`mincore` over a read-only mapping).
    static func resident(_ path: PathBytes, size: Int) throws -> [Bool] {
        let fd = try FileDescriptor.open(path)
        defer { fd.close() }
        guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, fd.rawValue, 0), map != MAP_FAILED else {
            throw SystemError(call: "mmap", errno: errno, context: path.string)
        }
        defer { munmap(map, size) }
        var vec = [UInt8](repeating: 0, count: (size + page - 1) / page)
        guard mincore(map, size, &vec) == 0 else { throw SystemError(call: "mincore", errno: errno, context: path.string) }
        return vec.map { $0 & 1 != 0 }
    }

    /// A written, synced file whose pages were then dropped from the cache; `nil` where the
    /// file system keeps every page (tmpfs: nothing to read ahead).
    static func coldFile(_ dir: TemporaryDirectory, size: Int) throws -> PathBytes? {
        var rng = SplitMix64(seed: 5)
        let path = try dir.write("big.bin", (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        let fd = try FileDescriptor.open(path)
        defer { fd.close() }
        _ = fsync(fd.rawValue)
        _ = posix_fadvise(fd.rawValue, 0, 0, POSIX_FADV_DONTNEED)
        return try resident(path, size: size).contains(true) ? nil : path
    }

    static let pageCacheCanBeDropped: Bool = {
        guard let dir = try? TemporaryDirectory("prefetch-probe") else { return false }
        defer { dir.remove() }
        return (try? coldFile(dir, size: 1 << 20)) != nil
    }()

    @Test("The first and last 64 KiB of a 1 MiB file come into the page cache without a read; the middle stays out",
          .enabled(if: pageCacheCanBeDropped, "the temporary directory's file system keeps every page in memory (tmpfs)"))
    func headAndTail() async throws {
        let dir = try TemporaryDirectory("prefetch")
        defer { dir.remove() }
        let size = 1 << 20, span = 64 << 10
        let path = try #require(try Self.coldFile(dir, size: size))
        let head = 0..<(span / Self.page), tail = ((size - span) / Self.page)..<(size / Self.page)
        var pages: [Bool] = []
        func headAndTailResident(_ pages: [Bool]) -> Bool { !pages.isEmpty && head.allSatisfy { pages[$0] } && tail.allSatisfy { pages[$0] } }
        // WILLNEED is advice: a kernel busy with other I/O (a sanitizer run beside) may let one
        // go. Asked up to three times, each given 2 s to land.
        for _ in 0..<3 where !headAndTailResident(pages) {
            #expect(FileDescriptor.prefetch(path, size: Int64(size), head: span, tail: span) == 0)
            do {
                pages = try await eventually("head and tail resident", timeout: .seconds(2)) { try Self.resident(path, size: size) }
                    until: { headAndTailResident($0) }
            } catch is WaitTimeout {
                pages = try Self.resident(path, size: size)
            }
        }
        #expect(headAndTailResident(pages), "head and tail resident")
        // The kernel's readahead may round a request up, never to the middle of the file.
        #expect(!pages[(size / 2) / Self.page], "the middle was not read")
    }

    @Test("A missing file, a symbolic link and a FIFO: an error or nothing, at once (no link followed, no open that waits)")
    func harmless() throws {
        let dir = try TemporaryDirectory("prefetch")
        defer { dir.remove() }
        #expect(FileDescriptor.prefetch(dir("missing.jpg"), size: 100, head: 65536, tail: 65536) == ENOENT)
        let target = try dir.write("real.jpg", [1, 2, 3])
        #expect(symlink(target.string, dir("link.jpg").string) == 0)
        #expect(FileDescriptor.prefetch(dir("link.jpg"), size: 3, head: 65536, tail: 65536) == ELOOP)
        #expect(mkfifo(dir("fifo.jpg").string, 0o600) == 0)
        // A FIFO with no writer: a blocking open would wait forever.
        let rc = FileDescriptor.prefetch(dir("fifo.jpg"), size: 10, head: 65536, tail: 65536)
        #expect(rc == 0 || rc == ESPIPE)
        #expect(FileDescriptor.prefetch(target, size: 0, head: 65536, tail: 65536) == 0)
    }
}
