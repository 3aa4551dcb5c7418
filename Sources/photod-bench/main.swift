import Foundation
import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem

// photod-bench: measures the sort queue's cost per job as the library grows. It feeds the real
// SortQueue and IndexWriter (SQLite on disk, one transaction per job) with synthetic 50-file jobs
// — no file reading, so only the sort job is timed — and prints the median job time around
// every 10,000 assets. Usage: photod-bench [ASSETS] [DIRECTORY]   (default 100000, a temp dir)

let total = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000
let dir = CommandLine.arguments.count > 2 ? CommandLine.arguments[2]
    : NSTemporaryDirectory() + "photod-bench-\(getpid())"
try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: dir) }

let database = try Database(path: dir + "/bench.db")
let root = PathBytes("/library")
let queue = SortQueue(database: database, logger: .silent)
queue.start()
_ = try queue.perform { try $0.registerRoots([root]) }

/// A camera-like library: folders of 100 photos, a day each, three years, some with GPS.
func job(_ index: Int) -> WriteBatch {
    var batch = WriteBatch()
    for k in 0..<Indexer.chunkSize {
        let n = index * Indexer.chunkSize + k
        let day = n / 100
        let (y, m, d) = CivilTime.civilFromDays(CivilTime.daysFromCivil(year: 2021, month: 1, day: 1) + day % 1100)
        let local = LocalDateTime(year: y, month: m, day: d, hour: 8 + n % 12, minute: n % 60, second: (n * 7) % 60)!
        let media = MediaFields(mediaType: n % 20 == 0 ? .video : .image, format: n % 20 == 0 ? "mp4" : "jpeg",
                                 captureDate: CaptureDate(local: local, offset: UTCOffset(seconds: 3600), source: .exifOriginal),
                                 pixelWidth: 4000, pixelHeight: 3000, orientation: 1,
                                 latitude: n % 3 == 0 ? 48.1 + Double(n % 100) / 1000 : nil,
                                 longitude: n % 3 == 0 ? 11.5 : nil, make: "Canon", model: "EOS R5")
        let directory = root.appending("\(y)/\(y)-\(m < 10 ? "0" : "")\(m)-\(d < 10 ? "0" : "")\(d) event \(day)")
        batch.files.append(FileOutcome(directory: directory, name: Array("IMG_\(n).JPG".utf8),
                                       identity: FileIdentity(fsid: 1, inode: UInt64(n + 1), size: 20_000,
                                                              mtimeNanoseconds: Int64(n)),
                                       fingerprint: UInt64(n), kind: .media(media), isSoleNewMember: true))
    }
    return batch
}

print("sort queue: \(total) assets in jobs of \(Indexer.chunkSize) files, one transaction each (\(dir))")
print("| assets in the library | median job ms | p90 job ms | jobs measured |")
print("|---|---|---|---|")
var window: [Double] = []
let jobs = total / Indexer.chunkSize
for i in 0..<jobs {
    let batch = job(i)
    let done = DispatchSemaphore(value: 0)
    let started = ContinuousClock.now
    queue.submit(batch) { result in
        if case .failure(let e) = result { FileHandle.standardError.write(Data("job failed: \(e)\n".utf8)) }
        done.signal()
    }
    done.wait()
    let d = started.duration(to: .now)
    window.append(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
    let assets = (i + 1) * Indexer.chunkSize
    if assets % 10_000 == 0 {
        let sorted = window.sorted()
        print(String(format: "| %d | %.3f | %.3f | %d |", assets, sorted[sorted.count / 2], sorted[sorted.count * 9 / 10],
                     sorted.count))
        window = []
    }
}
queue.stop()
let counts = try database.read { try $0.counts() }
let moments = try database.read { try $0.momentCount() }
print("library: \(counts.assets) assets, \(moments) moments, \(try database.read { try $0.folderAlbumCount() }) folder albums")
