import Foundation
import PhotoMetadata
import PhotoModel
import Testing

/// Throughput of `MetadataReader.read` over files held in memory (no I/O), one core.
/// Runs only when asked: `PHOTOD_BENCH=DIR swift test -c release --filter ReaderBenchmark`
/// (DIR is scanned recursively; `PHOTOD_BENCH=corpus` uses the shared real corpus). When
/// `DIR.manifest.tsv` exists (made by `shared/bench/make-corpus.py`), every file is also
/// checked against it.
@Suite struct ReaderBenchmark {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["PHOTOD_BENCH"] != nil,
                   "set PHOTOD_BENCH=DIR (or =corpus) to measure reader throughput"))
    func throughput() throws {
        var dir = try #require(ProcessInfo.processInfo.environment["PHOTOD_BENCH"])
        if dir == "corpus" {
            let root = try #require(Corpus.root, "\(Corpus.skipReason)")
            dir = root.appendingPathComponent("real").path
        }
        var files: [(name: String, bytes: [UInt8])] = []
        let base = URL(fileURLWithPath: dir)
        for case let p as String in FileManager.default.enumerator(atPath: dir) ?? FileManager.default.enumerator(atPath: "/")! {
            let url = base.appendingPathComponent(p)
            guard let data = try? Data(contentsOf: url), !data.isEmpty else { continue }
            files.append((p, [UInt8](data)))
        }
        files.sort { $0.name < $1.name }
        let reader = MetadataReader()
        let names = files.map { Array(($0.name as NSString).lastPathComponent.utf8) }
        var ok = 0, failed = 0
        // Warm up, then time several passes.
        for (i, f) in files.enumerated() {
            var s = MemorySource(f.bytes)
            if (try? reader.read(&s, fileName: names[i])) != nil { ok += 1 } else { failed += 1 }
        }
        let passes = max(1, 20_000 / max(files.count, 1))
        let clock = ContinuousClock()
        var sink = 0
        let elapsed = clock.measure {
            for _ in 0..<passes {
                for (i, f) in files.enumerated() {
                    var s = MemorySource(f.bytes)
                    if let m = try? reader.read(&s, fileName: names[i]) { sink &+= m.pixelWidth ?? 0 }
                }
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let n = Double(passes * files.count)
        print("reader: \(files.count) files (\(ok) media, \(failed) errors) x \(passes) passes: "
              + "\(Int(n / seconds)) files/s, \(String(format: "%.1f", seconds / n * 1e6)) µs/file (sink \(sink))")

        // Ground truth from make-corpus.py.
        let manifest = dir.hasSuffix("/") ? String(dir.dropLast()) + ".manifest.tsv" : dir + ".manifest.tsv"
        guard let text = try? String(contentsOfFile: manifest, encoding: .utf8) else { return }
        var lines = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        let header = lines.removeFirst()
        let byName = Dictionary(files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        var checked = 0
        for row in lines {
            let r = Dictionary(uniqueKeysWithValues: zip(header, row))
            guard let path = r["path"], let bytes = byName[path] else { continue }
            var s = MemorySource(bytes)
            let m = try reader.read(&s, fileName: Array(path.utf8))
            checked += 1
            #expect(m.pixelWidth == Int(r["width"] ?? "") && m.pixelHeight == Int(r["height"] ?? ""), "\(path)")
            guard r["exif"] == "1" else { continue }
            #expect(m.make == r["make"] && m.model == r["model"], "\(path)")
            #expect(m.orientation == Int(r["orientation"] ?? ""), "\(path)")
            let want = Timestamp.exif(Array((r["datetime_original"] ?? "").utf8), subSeconds: r["subsec"].map { Array($0.utf8) },
                                      offset: r["offset"].map { Array($0.utf8) })
            #expect(m.dates.exifOriginal == want, "\(path): \(String(describing: m.dates.exifOriginal)) vs \(String(describing: want))")
            if let lat = Double(r["lat"] ?? ""), let lon = Double(r["lon"] ?? "") {
                #expect(abs((m.latitude ?? .nan) - lat) < 1e-5 && abs((m.longitude ?? .nan) - lon) < 1e-5, "\(path)")
            } else {
                #expect(m.latitude == nil, "\(path)")
            }
        }
        print("reader: \(checked) files checked against \(manifest)")
    }
}
