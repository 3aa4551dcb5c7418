import PhotoModel
@testable import PhotoWatch
import PhotoTesting
import Testing

/// Random file-system histories: the records the kernel would write go through the coalescer,
/// a model consumer applies the delivered batches as the contract says (in order, reading
/// files at delivery time, scans last), and at the end its index must equal the disk.
@Suite("Coalescer property: a consumer applying the batches ends up with the disk")
struct CoalescerPropertyTests {
    typealias SplitMix = SplitMix64

    /// The disk: files with a content version, and directories.
    struct Disk {
        var files: [PathBytes: Int] = [:]
        var directories: Set<PathBytes> = ["/r"]

        func stat(_ path: PathBytes) -> SettleStat? {
            files[path].map { SettleStat(size: Int64($0), mtimeNanoseconds: Int64($0)) }
        }
        func filesBelow(_ dir: PathBytes) -> [PathBytes: Int] { files.filter { $0.key.isWithin(dir) } }
    }

    /// What the consumer knows: files and the version it read, and the reads that found
    /// nothing (the file was renamed or deleted after its change; a later change says which).
    /// This is the consumer contract documented on `WatchChange`.
    struct Index {
        var files: [PathBytes: Int] = [:]
        var unresolved: Set<PathBytes> = []

        mutating func apply(_ batch: [WatchChange], disk: Disk) {
            func read(_ p: PathBytes) {
                if let v = disk.files[p] {
                    files[p] = v
                    unresolved.remove(p)
                } else {
                    files[p] = nil
                    unresolved.insert(p)
                }
            }
            func dropBelow(_ d: PathBytes) {
                files = files.filter { !$0.key.isWithin(d) }
                unresolved = unresolved.filter { !$0.isWithin(d) }
            }
            func scan(_ d: PathBytes) {
                dropBelow(d)
                for (p, v) in disk.filesBelow(d) { files[p] = v }
            }
            var scans: [PathBytes] = []
            for change in batch {
                switch change {
                case .added(let p), .modified(let p): read(p)
                case .removed(let p):
                    files[p] = nil
                    unresolved.remove(p)
                case .moved(let from, let to):
                    unresolved.remove(from)
                    if let v = files.removeValue(forKey: from) {
                        files[to] = v
                        unresolved.remove(to)
                    } else {
                        read(to)
                    }
                case .directoryAdded(let d), .rescan(let d): scans.append(d)
                case .directoryRemoved(let d): dropBelow(d)
                case .directoryMoved(let from, let to):
                    let moved = files.filter { $0.key.isWithin(from) }
                    let retry = unresolved.filter { $0.isWithin(from) }
                    if moved.isEmpty && retry.isEmpty { scans.append(to) }
                    for (p, _) in moved { files[p] = nil }
                    for (p, v) in moved { files[Coalescer.rebase(p, from: from, to: to)] = v }
                    unresolved.subtract(retry)
                    for p in retry { read(Coalescer.rebase(p, from: from, to: to)) }
                case .movedOut:
                    continue  // a hint: changes nothing (its removal may even have merged with a later change)
                case .overflow, .unwatched, .rootGone:
                    Issue.record("unexpected \(change)")
                }
            }
            if let firstScan = batch.firstIndex(where: \.isScan) {
                let scansLast = batch[firstScan...].allSatisfy { $0.isScan }
                #expect(scansLast, "scans come last: \(batch)")
            }
            for d in scans { scan(d) }
        }
    }

    struct World {
        var rng: SplitMix
        var disk = Disk()
        var index = Index()
        var h = Harness(CoalescerLimits(settleInterval: .milliseconds(200)))
        var version = 0
        var cookie: UInt32 = 0
        var delivered = 0
        var log: [String] = []

        init(seed: UInt64) { rng = SplitMix(state: seed) }

        mutating func newVersion() -> Int { version += 1; return version }
        mutating func nextCookie() -> UInt32 { cookie += 1; return cookie }

        mutating func pick<T>(_ xs: [T]) -> T? { xs.isEmpty ? nil : xs[Int(rng.next() % UInt64(xs.count))] }

        /// Feeds records and applies any batch delivered, against the disk as it is now.
        mutating func feed(_ events: [InotifyEvent]) {
            log += events.map(\.description)
            h.disk = stats()
            h.feed(events)
            applyDelivered()
        }

        mutating func advance(_ d: Duration) {
            h.disk = stats()
            h.advance(by: d)
            applyDelivered()
        }

        mutating func applyDelivered() {
            while delivered < h.batches.count {
                log.append("deliver \(h.batches[delivered])")
                index.apply(h.batches[delivered], disk: disk)
                delivered += 1
            }
        }

        func stats() -> [PathBytes: SettleStat] {
            var s: [PathBytes: SettleStat] = [:]
            for p in disk.files.keys { s[p] = disk.stat(p) }
            return s
        }

        mutating func freshName(in dir: PathBytes, prefix: String) -> PathBytes {
            dir.appending("\(prefix)\(rng.next() % 6)")
        }

        mutating func step() {
            let dirs = disk.directories.sorted()
            let files = disk.files.keys.sorted()
            guard let dir = pick(dirs) else { return }
            switch rng.next() % 13 {
            case 0, 1:  // create, write, close
                let f = freshName(in: dir, prefix: "f")
                guard !disk.directories.contains(f) else { return }
                let existed = disk.files[f] != nil
                disk.files[f] = newVersion()
                feed((existed ? [] : [ev(.create, f.string)]) + [ev(.modify, f.string), ev(.closeWrite, f.string)])
            case 2:  // a hard link: created, never closed
                let f = freshName(in: dir, prefix: "l")
                guard disk.files[f] == nil, !disk.directories.contains(f) else { return }
                disk.files[f] = newVersion()
                feed([ev(.create, f.string)])
            case 3:  // rewrite an existing file
                guard let f = pick(files) else { return }
                disk.files[f] = newVersion()
                feed([ev(.modify, f.string), ev(.closeWrite, f.string)])
            case 4:  // delete
                guard let f = pick(files) else { return }
                disk.files[f] = nil
                feed([ev(.delete, f.string)])
            case 5, 6:  // rename a file (maybe over another)
                guard let f = pick(files) else { return }
                let t = freshName(in: pick(dirs)!, prefix: "f")
                guard t != f, !disk.directories.contains(t) else { return }
                disk.files[t] = disk.files.removeValue(forKey: f)
                let c = nextCookie()
                if rng.next() % 4 == 0 {  // the pair split across two reads
                    feed([ev(.movedFrom, f.string, cookie: c)])
                    advance(.milliseconds(Int64(rng.next() % 40)))
                    feed([ev(.movedTo, t.string, cookie: c)])
                } else {
                    feed([ev(.movedFrom, f.string, cookie: c), ev(.movedTo, t.string, cookie: c)])
                }
            case 7:  // moved out / moved in
                if rng.next() % 2 == 0, let f = pick(files) {
                    disk.files[f] = nil
                    feed([ev(.movedFrom, f.string, cookie: nextCookie())])
                } else {
                    let t = freshName(in: dir, prefix: "m")
                    guard !disk.directories.contains(t) else { return }
                    disk.files[t] = newVersion()
                    feed([ev(.movedTo, t.string, cookie: nextCookie())])
                }
            case 8:  // mkdir
                let d = freshName(in: dir, prefix: "d")
                guard !disk.directories.contains(d), disk.files[d] == nil, d.bytes.count < 20 else { return }
                disk.directories.insert(d)
                feed([ev(.create.union(.isDirectory), d.string)])
            case 9:  // rmdir of an empty directory, or rm -r
                guard let d = pick(dirs.filter { $0 != "/r" }) else { return }
                var events: [InotifyEvent] = []
                for f in disk.filesBelow(d).keys.sorted() { events.append(ev(.delete, f.string)) }
                for sub in disk.directories.filter({ $0.isWithin(d) }).sorted(by: { $0.bytes.count > $1.bytes.count }) {
                    events.append(ev(.delete.union(.isDirectory), sub.string))
                }
                disk.files = disk.files.filter { !$0.key.isWithin(d) }
                disk.directories = disk.directories.filter { !$0.isWithin(d) }
                feed(events)
            case 10:  // rename a directory
                guard let d = pick(dirs.filter { $0 != "/r" }), let parent = pick(dirs.filter { !$0.isWithin(d) }) else { return }
                let t = freshName(in: parent, prefix: "d")
                guard !disk.directories.contains(t), disk.files[t] == nil, t.bytes.count < 24 else { return }
                disk.files = Dictionary(uniqueKeysWithValues: disk.files.map {
                    ($0.key.isWithin(d) ? Coalescer.rebase($0.key, from: d, to: t) : $0.key, $0.value)
                })
                disk.directories = Set(disk.directories.map { $0.isWithin(d) ? Coalescer.rebase($0, from: d, to: t) : $0 })
                let c = nextCookie()
                feed([ev(.movedFrom.union(.isDirectory), d.string, cookie: c), ev(.movedTo.union(.isDirectory), t.string, cookie: c),
                      selfEvent(.moveSelf, t.string)])
            case 11:  // a directory with files moved in from outside (no records for its content)
                let d = freshName(in: dir, prefix: "i")
                guard !disk.directories.contains(d), disk.files[d] == nil, d.bytes.count < 20 else { return }
                disk.directories.insert(d)
                disk.files[d.appending("x")] = newVersion()
                disk.files[d.appending("y")] = newVersion()
                feed([ev(.movedTo.union(.isDirectory), d.string, cookie: nextCookie())])
            default:  // time passes
                advance(.milliseconds(Int64(rng.next() % 300)))
            }
            if rng.next() % 3 == 0 { advance(.milliseconds(Int64(rng.next() % 20))) }
        }
    }

    @Test("random histories", arguments: 0..<500)
    func randomHistory(seed: UInt64) {
        var world = World(seed: seed &* 7919 &+ 17)
        for _ in 0..<80 { world.step() }
        world.advance(.seconds(5))
        world.h.settle()
        world.applyDelivered()
        #expect(world.h.coalescer.settlingCount == 0)
        #expect(world.h.coalescer.nextDeadline == nil)
        let ok = world.index.files == world.disk.files
        #expect(ok, "seed \(seed): index differs from disk\nindex only: \(world.index.files.filter { world.disk.files[$0.key] != $0.value }.keys.map(\.string).sorted())\ndisk only: \(world.disk.files.filter { world.index.files[$0.key] != $0.value }.keys.map(\.string).sorted())\n\(world.log.suffix(120).joined(separator: "\n"))")
    }
}
