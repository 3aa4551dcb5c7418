import PhotoModel
import PhotoStore
import PhotoTesting
import Testing

/// `WriteBatch.merged` against its definition: applying the merged batch leaves the same files
/// as applying the batches in order (removed directories, then removed files, then written
/// files, as `IndexWriter.apply` does), on random batches over a small set of paths.
@Suite("WriteBatch.merged equals the batches applied in order")
struct WriteBatchMergeTests {
    /// The files a sequence of batches leaves, by path, with the fingerprint of their last write.
    static func apply(_ batches: [WriteBatch]) -> [PathBytes: UInt64] {
        var state: [PathBytes: UInt64] = [:]
        for b in batches {
            for dir in b.removedDirectories { state = state.filter { !$0.key.isWithin(dir) } }
            for r in b.removedFiles { state[r.directory.appending(r.name)] = nil }
            for f in b.files { state[f.path] = f.fingerprint }
        }
        return state
    }

    @Test("random batches", arguments: 0..<200)
    func randomBatches(_ seed: Int) {
        var g = SplitMix64(seed: UInt64(seed))
        let dirs: [PathBytes] = ["/lib/a", "/lib/a/x", "/lib/b"]
        let names = ["1.jpg", "2.jpg", "3.jpg"].map { Array($0.utf8) }
        var batches: [WriteBatch] = []
        var stamp: UInt64 = 0
        for _ in 0..<(1 + Int(g.next() % 5)) {
            var b = WriteBatch()
            for _ in 0..<Int(g.next() % 6) {
                let dir = dirs[Int(g.next() % UInt64(dirs.count))]
                let name = names[Int(g.next() % UInt64(names.count))]
                switch g.next() % 8 {
                case 0: b.removedDirectories.append(dir)
                case 1, 2: b.removedFiles.append((dir, name))
                default:
                    stamp += 1
                    b.files.append(FileOutcome(directory: dir, name: name,
                                               identity: FileIdentity(fsid: 1, inode: stamp, size: 1, mtimeNanoseconds: 1),
                                               fingerprint: stamp, kind: .media(Make.media())))
                }
            }
            batches.append(b)
        }
        #expect(Self.apply([WriteBatch.merged(batches)]) == Self.apply(batches))
    }
}
