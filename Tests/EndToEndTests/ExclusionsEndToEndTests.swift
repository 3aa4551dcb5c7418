import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Exclusion patterns, end to end", .serialized)
struct ExclusionsEndToEndTests {
    @Test("The NAS's folders are not indexed, at the start nor live; a reload with a new pattern sends what it matches to Recently Deleted, one without brings them back with their ids")
    func nasFolders() throws {
        let lib = try TemporaryDirectory("exclude-lib")
        defer { lib.remove() }
        try lib.write("2024/a.jpg", Library.jpeg(date: "2024:01:01 10:00:00"))
        try lib.write("2024/@eaDir/a.jpg/SYNOPHOTO_THUMB_XL.jpg", Library.jpeg(date: "2024:01:01 10:00:01"))
        try lib.write("2024/._a.jpg", Library.jpeg(date: "2024:01:01 10:00:02"))
        try lib.write("#recycle/old.jpg", Library.jpeg(date: "2024:01:01 10:00:03"))
        try lib.write("@Recycle/old.jpg", Library.jpeg(date: "2024:01:01 10:00:04"))
        try lib.write("$RECYCLE.BIN/S-1-5-21/old.jpg", Library.jpeg(date: "2024:01:01 10:00:05"))
        try lib.write("Scans/s1.jpg", Library.jpeg(date: "2024:01:02 10:00:00"))
        try lib.write("Scans/deep/s2.jpg", Library.jpeg(date: "2024:01:02 10:00:01"))
        let state = try TemporaryDirectory("exclude")
        defer { state.remove() }
        let config = state("photod.conf")
        func writeConfig(_ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: config.string))
        }
        try writeConfig("library = \(lib.path.string)\n")

        // --check-config lists the defaults.
        let check = try run("photod", ["--config", config.string, "--check-config"], environment: [:])
        #expect(check.status == 0)
        #expect(check.stdout.contains("excluded @eaDir #recycle #snapshot"), "\(check.stdout)")

        let daemon = try DaemonProcess(libraries: [], state: state, arguments: ["--config", config.string])
        defer { daemon.stop() }
        try daemon.waitForIdle()
        func paths() throws -> Set<String> {
            Set(try daemon.allAssets().map { String($0["path"]!.stringValue!.dropFirst(lib.path.bytes.count + 1)) })
        }
        #expect(try paths() == ["2024/a.jpg", "Scans/s1.jpg", "Scans/deep/s2.jpg"])
        let ids = try daemon.idsByPath()

        // Live: what is made in excluded folders (new or existing) is not indexed; a file made
        // after them is (the watcher's batches are applied in order: it comes last).
        try lib.write("2024/@eaDir/b.jpg/SYNOPHOTO_THUMB_XL.jpg", Library.jpeg(date: "2024:01:03 10:00:00"))
        try lib.write("2025/#snapshot/GMT+01_2025-01-01/x.jpg", Library.jpeg(date: "2024:01:03 10:00:01"))
        try lib.write("#recycle/new.jpg", Library.jpeg(date: "2024:01:03 10:00:02"))
        try lib.write("2025/._b.jpg", Library.jpeg(date: "2024:01:03 10:00:03"))
        try lib.write("2025/b.jpg", Library.jpeg(date: "2024:01:03 10:00:04"))
        try daemon.waitForAssets(4)
        #expect(try paths() == ["2024/a.jpg", "2025/b.jpg", "Scans/s1.jpg", "Scans/deep/s2.jpg"])

        // A reload with a new pattern: what it matches goes to Recently Deleted.
        func status(_ what: String, _ condition: @escaping (JSONValue) -> Bool) throws {
            try eventually("\(what); photod's log:\n\(daemon.log)", timeout: .seconds(60)) {
                try? daemon.call("library.status")
            } until: { $0.map(condition) ?? false }
        }
        let pid = daemon.process.processIdentifier
        try writeConfig("library = \(lib.path.string)\nexclude = /Scans\n")
        #expect(kill(pid, SIGHUP) == 0)
        try status("Scans in Recently Deleted") {
            $0["counts"]?["assets"]?.intValue == 2 && $0["counts"]?["recentlyDeleted"]?.intValue == 2 && $0["state"]?.stringValue == "idle"
        }
        #expect(try paths() == ["2024/a.jpg", "2025/b.jpg"])
        // Files made there now are not indexed either.
        try lib.write("Scans/s3.jpg", Library.jpeg(date: "2024:01:04 10:00:00"))
        try lib.write("2025/c.jpg", Library.jpeg(date: "2024:01:04 10:00:01"))
        try daemon.waitForAssets(3)
        #expect(try paths() == ["2024/a.jpg", "2025/b.jpg", "2025/c.jpg"])

        // Without the pattern: they are indexed again, back from Recently Deleted with their ids.
        try writeConfig("library = \(lib.path.string)\n")
        #expect(kill(pid, SIGHUP) == 0)
        try status("Scans back") {
            $0["counts"]?["assets"]?.intValue == 6 && $0["counts"]?["recentlyDeleted"]?.intValue == 0 && $0["state"]?.stringValue == "idle"
        }
        let back = try daemon.idsByPath()
        #expect(back[lib("Scans/s1.jpg").string] == ids[lib("Scans/s1.jpg").string])
        #expect(back[lib("Scans/deep/s2.jpg").string] == ids[lib("Scans/deep/s2.jpg").string])
        #expect(back[lib("Scans/s3.jpg").string] != nil)
        #expect(daemon.process.processIdentifier == pid)
    }
}
