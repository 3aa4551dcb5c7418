import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A FUSE file system that stops answering on command (`Tests/Support/hang-fs.py`): every call
/// into it blocks in the kernel while its control file exists, as a hard-mounted NFS share's do
/// when the server is down.
struct HangingMount {
    let work: TemporaryDirectory
    let target: PathBytes
    var source: PathBytes { work("source") }
    var control: PathBytes { work("hang") }

    /// Whether such a mount can be made here: root, `/dev/fuse`, and Debian's python3-fusepy.
    static let available: Bool = {
        guard Mounts.canBind, FileManager.default.fileExists(atPath: "/dev/fuse"),
              FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/fusepy.py") else { return false }
        return true
    }()

    static var script: String { TestPaths.packageRoot.appendingPathComponent("Tests/Support/hang-fs.py").path }

    /// Mounts a view of a fresh source directory holding `files` at `target`.
    init(at target: PathBytes, files: [(String, [UInt8])]) throws {
        self.target = target
        work = try TemporaryDirectory("hanging")
        try work.makeDirectory("source")
        let top = TemporaryDirectory(existing: work("source"))
        for (path, bytes) in files { _ = try top.write(path, bytes) }
        try Directory.makePath(target)
        try Mounts.runDetached("/usr/bin/python3", [Self.script, source.string, target.string, control.string])
    }

    /// From now on every call into the file system blocks.
    func hang() throws { try work.write("hang", []) }

    /// The blocked calls go on, and new ones are answered.
    func answer() { _ = unlink(control.string) }

    func remove() {
        answer()
        Mounts.unmountAll(below: target)
        work.remove()
    }
}

/// A tree whose file system stops answering (a hard NFS mount whose server is down) is reported,
/// and nothing else waits for it: what photod asks of a tree's file system runs on threads of
/// its own, with a deadline (issue 29).
@Suite("A file system that stops answering", .serialized)
struct HangingFileSystemTests {
    @Test("A FUSE tree below a root that hangs in getattr is reported not answering; the rest of the library keeps flowing; answering again, it is back with its ids",
          .enabled(if: HangingMount.available))
    func hangingTreeIsReported() throws {
        let lib = try TemporaryDirectory("hanging-lib")
        defer { lib.remove() }
        for (path, bytes) in MountsEndToEndTests.photos("main/", count: 2) { try lib.write(path, bytes) }
        let net = lib("net")
        let mount = try HangingMount(at: net, files: MountsEndToEndTests.photos("", count: 3))
        defer { mount.remove() }
        let state = try TemporaryDirectory("hanging-state")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--poll-interval", "1"])
        defer { _ = daemon.stop() }
        var status = try daemon.waitForIdle()
        #expect(status["watcher"]?["networkTrees"]?.arrayValue?.map(\.stringValue) == [net.string], "the FUSE tree is polled")
        let ids = try daemon.idsByPath()
        #expect(ids.count == 5)
        let token = try daemon.currentToken()

        try mount.hang()
        // The next poll looks at the tree: it does not answer within the deadline, and says so.
        status = try daemon.waitFor("the tree reported not answering", timeout: .seconds(30)) {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).contains {
                $0["path"]?.stringValue == net.string && ($0["reason"]?.stringValue ?? "").contains("does not answer")
            }
        }
        #expect(status["roots"]?[0]?["state"]?.stringValue == "available")
        // Nothing else waits: a photo added elsewhere in the root is indexed, the status answers at once.
        try lib.write("main/home/new.jpg", Library.jpeg(date: "2019:08:01 10:00:00"))
        try daemon.waitForAssets(6, timeout: .seconds(20))
        let asked = ContinuousClock.now
        _ = try daemon.call("library.status")
        #expect(ContinuousClock.now - asked < .seconds(1), "library.status answers while the tree hangs")
        let assets = try daemon.allAssets()
        for a in assets {
            let path = try #require(a["path"]?.stringValue)
            #expect(a["isAvailable"]?.boolValue == !PathBytes(path).isWithin(net), "\(path)")
        }
        try daemon.expectNothingDeleted(since: token, "while it hangs")

        mount.answer()
        status = try daemon.waitFor("the tree back", timeout: .seconds(30)) {
            ($0["roots"]?[0]?["unavailableMounts"]?.arrayValue ?? []).isEmpty && $0["state"]?.stringValue == "idle"
        }
        let back = try daemon.idsByPath()
        for (path, id) in ids { #expect(back[path] == id, "\(path)") }
        try daemon.expectNothingDeleted(since: token, "back")
        #expect(daemon.stop() == 0)
    }
}
