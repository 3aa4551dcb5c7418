import Foundation
import PhotoModel
@testable import PhotoPipeline
import PhotoSystem
import PhotoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("The census of a first index")
struct CensusTests {
    /// 7 files the walk sees, and what it does not: dot-files and dot-folders, a `.nomedia`
    /// folder, a symbolic link to a file and one to a folder, a FIFO.
    static func tree(_ dir: TemporaryDirectory) throws {
        for name in ["a.jpg", "notes.txt", "2020/b.jpg", "2020/b.xmp", "2020/deep/er/c.jpg", "2021/d.mov", "2021/e.heic"] {
            try dir.write(name, [1, 2, 3])
        }
        for name in [".hidden.jpg", ".thumbs/t.jpg", "skip/.nomedia", "skip/x.jpg", "skip/sub/y.jpg", "2020/.z.jpg"] {
            try dir.write(name, [1])
        }
        #expect(symlink(dir("a.jpg").string, dir("link.jpg").string) == 0)
        #expect(symlink(dir("2020").string, dir("linked-folder").string) == 0)
        #expect(mkfifo(dir("2021/pipe").string, 0o600) == 0)
        try dir.makeDirectory("empty")
    }

    @Test("It counts the files the walk reads, by the walk's rules, with progress as it goes")
    func counts() throws {
        let dir = try TemporaryDirectory("census")
        defer { dir.remove() }
        try Self.tree(dir)
        var reported: [Int] = []
        let n = Census.count(roots: [dir.path], every: 2, shouldStop: { false }) { reported.append($0) }
        #expect(n == 7)
        #expect(reported.last == 7)
        #expect(reported == reported.sorted() && reported.count >= 3, "\(reported)")
        // Two roots add up; a missing root counts nothing and stops nothing.
        let other = try TemporaryDirectory("census-other")
        defer { other.remove() }
        try other.write("f.jpg", [1])
        #expect(Census.count(roots: [dir.path, PathBytes("/nonexistent/photod"), other.path], shouldStop: { false }) { _ in } == 8)
    }

    @Test("It stops when told, with what it counted")
    func stops() throws {
        let dir = try TemporaryDirectory("census-stop")
        defer { dir.remove() }
        for i in 0..<20 { try dir.write("d\(i)/f.jpg", [1]) }
        var visits = 0
        let n = Census.count(roots: [dir.path], shouldStop: {
            visits += 1
            return visits > 5
        }) { _ in }
        #expect(n == 4, "the root and four folders were listed")
    }

    @Test("A first index's expectation: the census count until the walk's own is final")
    func expectation() {
        var p = ScanProgress(startedNanoseconds: 0)
        p.toRead = 300
        #expect(p.expectedToRead == 300 && !p.expectationFinal)
        p.counted = 50_000
        #expect(p.expectedToRead == 50_000 && !p.expectationFinal)
        p.countFinished = true
        #expect(p.expectationFinal)
        p.noteCommitted(10_000, at: 10_000_000_000)
        #expect(p.secondsLeft(at: 10_000_000_000) == 40)
        // The walk's count wins when it is larger (a file written during the scan).
        p.toRead = 50_010
        #expect(p.expectedToRead == 50_010)
    }
}
