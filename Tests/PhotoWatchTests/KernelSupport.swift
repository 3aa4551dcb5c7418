#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
@testable import PhotoWatch
import Testing

/// Collects the batches a watcher delivers and lets a test await a condition on them.
final class Collector: Sendable {
    private let received = Locked<[[WatchChange]]>([])

    func append(_ batch: [WatchChange]) { received.withLock { $0.append(batch) } }

    var batches: [[WatchChange]] { received.withLock { $0 } }
    var changes: [WatchChange] { batches.flatMap { $0 } }

    /// Waits until `condition` holds on everything received so far.
    func wait(_ what: String = "the watcher's changes", timeout: Duration = .seconds(10), _ condition: ([WatchChange]) -> Bool) async throws {
        try await eventually(what, timeout: timeout) { changes } until: { condition($0) }
    }

    /// Waits until `change` was received.
    func wait(for change: WatchChange, timeout: Duration = .seconds(10)) async throws {
        try await wait("\(change)", timeout: timeout) { $0.contains(change) }
    }
}

/// A watcher on a fresh temporary tree, with its collector.
struct Rig {
    let dir: TemporaryDirectory
    let root: PathBytes
    let watcher: InotifyWatcher
    let collector: Collector

    init(_ label: String, limits: WatchLimits = WatchLimits(maxWatches: 100_000),
         coalescing: CoalescerLimits = CoalescerLimits(), exclusions: PathExclusions = .none,
         prepare: (PathBytes) throws -> Void = { _ in }) throws {
        dir = try TemporaryDirectory("watch-\(label)")
        root = dir.path.appending("lib")
        try Directory.makePath(root)
        try prepare(root)
        let collector = Collector()
        self.collector = collector
        watcher = try InotifyWatcher(limits: limits, coalescing: coalescing, exclusions: exclusions, logger: .silent) {
            collector.append($0)
        }
        watcher.start()
    }

    func tearDown() {
        watcher.stop()
        dir.remove()
    }
}

// MARK: File operations (plain system calls, as other programs make them)

func writeFile(_ path: PathBytes, _ bytes: [UInt8] = Array("photo".utf8), append: Bool = false) throws {
    let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)
    let fd = try path.withCString { p throws(SystemError) in try syscall("open", context: path.string) { open(p, flags, 0o644) } }
    defer { close(fd) }
    _ = try bytes.withUnsafeBytes { b throws(SystemError) in try syscall("write") { write(fd, b.baseAddress, b.count) } }
}

func makeDirectory(_ path: PathBytes) throws {
    _ = try path.withCString { p throws(SystemError) in try syscall("mkdir", context: path.string) { mkdir(p, 0o755) } }
}

func rename(_ from: PathBytes, _ to: PathBytes) throws {
    _ = try from.withCString { f throws(SystemError) in
        try to.withCString { t throws(SystemError) in try syscall("rename", context: from.string) { Glibc.rename(f, t) } }
    }
}

func hardLink(_ from: PathBytes, _ to: PathBytes) throws {
    _ = try from.withCString { f throws(SystemError) in
        try to.withCString { t throws(SystemError) in try syscall("link", context: to.string) { link(f, t) } }
    }
}

func removeFile(_ path: PathBytes) throws {
    _ = try path.withCString { p throws(SystemError) in try syscall("unlink", context: path.string) { unlink(p) } }
}

/// The regular files directly in `dir`.
func listFiles(_ dir: PathBytes) throws -> Set<PathBytes> {
    Set(try Directory(path: dir).entries().filter { $0.kind == .file }.map { dir.appending($0.name) })
}

/// Runs a command line through `/bin/sh -c` and returns its exit status.
@discardableResult
func shell(_ script: String, _ args: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script, "sh"] + args
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Every path a change names (for "reported once" checks).
func paths(of change: WatchChange) -> [PathBytes] {
    switch change {
    case .added(let p), .modified(let p), .removed(let p), .directoryAdded(let p), .directoryRemoved(let p), .rescan(let p),
         .rootGone(let p):
        return [p]
    case .moved(let f, let t), .directoryMoved(let f, let t):
        return [f, t]
    case .unwatched(let ps):
        return ps
    case .overflow, .movedOut:  // a hint repeats its removal's path
        return []
    }
}
