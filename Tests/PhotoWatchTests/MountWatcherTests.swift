import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
@testable import PhotoWatch
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Whether this process may mount (root with CAP_SYS_ADMIN): tried once with a bind mount.
private let canMount: Bool = {
    guard getuid() == 0, let dir = try? TemporaryDirectory("mount-watch-probe") else { return false }
    defer { dir.remove() }
    try? dir.makeDirectory("a")
    try? dir.makeDirectory("b")
    guard mountTool(["--bind", dir("a").string, dir("b").string]) else { return false }
    return mountTool(["umount", dir("b").string], tool: "umount")
}()

private func mountTool(_ arguments: [String], tool: String = "mount") -> Bool {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = [tool] + (tool == "umount" ? Array(arguments.dropFirst()) : arguments)
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
}

@Suite("Mount table watcher", .serialized)
struct MountWatcherTests {
    @Test("A bind mount and its unmount are each reported with the new table; stop ends the thread",
          .enabled(if: canMount))
    func bindMountReported() throws {
        let dir = try TemporaryDirectory("mount-watch")
        defer { dir.remove() }
        try dir.makeDirectory("source")
        try dir.makeDirectory("target")
        let tables = Locked<[MountTable]>([])
        let watcher = try MountWatcher(logger: .silent) { table in tables.withLock { $0.append(table) } }
        watcher.start()
        defer { watcher.stop() }
        let target = dir("target")
        #expect(!watcher.current.entries.contains { $0.mountPoint == target })

        #expect(mountTool(["--bind", dir("source").string, target.string]))
        // Other processes may mount meanwhile: wait for a table that has this one.
        func reported(mounted: Bool) throws {
            try eventually("a table \(mounted ? "with" : "without") \(target)", timeout: .seconds(10)) {
                tables.withLock { $0.last }.map { $0.entries.contains { $0.mountPoint == target } }
            } until: { $0 == mounted }
        }
        try reported(mounted: true)
        let mounted = try #require(tables.withLock { $0.last }?.entries.last { $0.mountPoint == target })
        #expect(mounted.root.string.hasSuffix("/source"), "the mount's root is the bind's source: \(mounted.root)")

        #expect(mountTool(["umount", target.string], tool: "umount"))
        try reported(mounted: false)
        #expect(!watcher.current.entries.contains { $0.mountPoint == target })
    }

    @Test("Stopped before it started, or twice: no thread left, nothing reported")
    func stopWithoutStart() throws {
        let watcher = try MountWatcher(logger: .silent) { _ in Issue.record("no change expected") }
        watcher.stop()
        watcher.stop()
    }
}
