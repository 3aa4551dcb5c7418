import Foundation
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Peak resident memory of a process in KiB (`VmHWM`).
func peakRSS(pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    let line = text.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
    return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
}

@Suite("File-system faults, end to end", .serialized)
struct FileSystemFaultsEndToEndTests {
    @Test("Permission denied (photod as nobody): the rest is indexed, clear errors, no retries; chmod brings them in")
    func permissionDenied() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            // As any other user the daemon could be given unreadable files just the same, but the
            // test needs to give the files away and take them back: root only.
            print("skipped: the permission test runs photod as nobody, which needs root and setpriv")
            return
        }
        let state = try TemporaryDirectory("perm")
        defer { state.remove() }
        let lib = try TemporaryDirectory("perm-lib")
        defer {
            chmod(lib("locked").string, 0o755)
            lib.remove()
        }
        #expect(chown(state.path.string, 65534, 65534) == 0)
        try lib.write("a/ok.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        try lib.write("a/secret.jpg", Library.jpeg(date: "2021:01:02 10:00:00"))
        try lib.write("locked/inside.jpg", Library.jpeg(date: "2021:01:03 10:00:00"))
        try lib.write("b/ok2.jpg", Library.jpeg(date: "2021:01:04 10:00:00"))
        #expect(chmod(lib("a/secret.jpg").string, 0o000) == 0)
        #expect(chmod(lib("locked").string, 0o000) == 0)

        let daemon = try DaemonProcess(libraries: [lib.path], state: state, asNobody: true)
        defer { daemon.stop() }
        var status = try daemon.waitForIdle()
        #expect(status["counts"]?["assets"]?.intValue == 2, "\(status)")
        #expect(status["counts"]?["errors"]?.intValue == 1)
        let errors = try daemon.call("library.errors")["errors"]?.arrayValue ?? []
        #expect(errors.count == 1)
        #expect(errors.first?["path"]?.stringValue == lib("a/secret.jpg").string)
        #expect(errors.first?["code"]?.stringValue == "permissionDenied")
        let unreadable = status["unreadableDirectories"]?.arrayValue ?? []
        #expect(unreadable.map { $0["path"]?.stringValue } == [lib("locked").string], "\(status)")
        #expect(unreadable.first?["reason"]?.stringValue?.contains("Permission denied") == true)
        #expect(daemon.log.contains("cannot read '\(lib("a/secret.jpg").string)'"))
        #expect(daemon.log.contains("cannot read directory '\(lib("locked").string)'"))

        // No retry storm: a rescan does not open the refused file again, nor log it again.
        let reads = status["metadataReads"]?.intValue
        _ = try daemon.call("library.rescan")
        status = try daemon.waitForIdle()
        #expect(status["metadataReads"]?.intValue == reads)
        #expect(daemon.log.components(separatedBy: "cannot read '\(lib("a/secret.jpg").string)'").count == 2)
        #expect(daemon.log.components(separatedBy: "cannot read directory '\(lib("locked").string)'").count == 2)

        // Permissions restored: the file through IN_ATTRIB, the directory through IN_ATTRIB on
        // its parent's watch (it is watched and scanned then), no restart, no rescan asked.
        #expect(chmod(lib("a/secret.jpg").string, 0o644) == 0)
        try daemon.waitFor("the file readable again", timeout: .seconds(30)) { $0["counts"]?["assets"]?.intValue == 3 }
        #expect(try daemon.call("library.status")["counts"]?["errors"]?.intValue == 0)
        #expect(chmod(lib("locked").string, 0o755) == 0)
        try daemon.waitFor("the directory readable again", timeout: .seconds(30)) { $0["counts"]?["assets"]?.intValue == 4 }
        status = try daemon.waitForIdle()
        #expect(status["unreadableDirectories"]?.arrayValue?.isEmpty == true, "\(status)")
        // The directory is watched now: a new file in it comes in live.
        try lib.write("locked/later.jpg", Library.jpeg(date: "2021:01:05 10:00:00"))
        try daemon.waitFor("the new file in the directory", timeout: .seconds(30)) { $0["counts"]?["assets"]?.intValue == 5 }
    }

    @Test("Names that are not UTF-8, live: indexed, reachable through pathBytes, renamed and removed")
    func invalidUTF8Live() throws {
        let state = try TemporaryDirectory("utf8")
        defer { state.remove() }
        let lib = try TemporaryDirectory("utf8-lib")
        defer { lib.remove() }
        try lib.write("ok.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        defer { daemon.stop() }
        try daemon.waitForIdle()

        // "caf\xE9" (Latin-1) holding "x\xFF.jpg", and an empty "bad\xFE.jpg" (an error).
        let dir = lib.path.appending([0x63, 0x61, 0x66, 0xE9])
        let file = dir.appending([0x78, 0xFF, 0x2E, 0x6A, 0x70, 0x67])
        let bad = dir.appending([0x62, 0x61, 0x64, 0xFE, 0x2E, 0x6A, 0x70, 0x67])
        // Made under a UTF-8 name, then renamed into place: the watcher sees the directory arrive
        // with its files (IN_MOVED_TO) and scans it.
        try lib.write("tmpdir/f", Library.jpeg(date: "2021:02:02 10:00:00"))
        try lib.write("tmpdir/e", [])
        func move(_ from: PathBytes, _ to: PathBytes) -> Int32 { from.withCString { a in to.withCString { b in rename(a, b) } } }
        #expect(move(lib("tmpdir/f"), lib("tmpdir").appending(file.lastComponent)) == 0)
        #expect(move(lib("tmpdir/e"), lib("tmpdir").appending(bad.lastComponent)) == 0)
        #expect(move(lib("tmpdir"), dir) == 0)

        try eventually("the moved-in directory's photo") { try daemon.allAssets().count } until: { $0 == 2 }
        try daemon.waitForIdle()
        let odd = try #require(try daemon.allAssets().first { $0["pathBytes"] != nil })
        #expect(odd["pathBytes"]?.stringValue == Base64Check.encode(file.bytes))
        let errors = try daemon.call("library.errors")["errors"]?.arrayValue ?? []
        #expect(errors.map { $0["pathBytes"]?.stringValue } == [Base64Check.encode(bad.bytes)])
        let albums = try daemon.call("albums.fetch")["albums"]?.arrayValue ?? []
        #expect(albums.contains { $0["pathBytes"]?.stringValue == Base64Check.encode(dir.bytes) }, "\(albums)")
        // photoctl prints it (the UTF-8 string with replacement characters) without failing.
        let listed = try run("photoctl", ["--socket", daemon.socket.string, "assets", "--json"])
        #expect(listed.status == 0)
        #expect(try records(listed.stdout).count == 2)

        // Renamed live to another invalid name: same id; removed: gone.
        let renamed = dir.appending([0x79, 0xFE, 0xFF, 0x2E, 0x6A, 0x70, 0x67])
        #expect(move(file, renamed) == 0)
        try eventually("the rename to another invalid name") {
            try daemon.allAssets().contains { $0["pathBytes"]?.stringValue == Base64Check.encode(renamed.bytes) }
        }
        #expect(try daemon.allAssets().first { $0["pathBytes"] != nil }?["id"] == odd["id"])
        #expect(renamed.withCString { unlink($0) } == 0)
        try eventually("the removal") { try daemon.allAssets().count } until: { $0 == 1 }
    }

    @Test("Symbolic link loops made while photod runs: not followed, no hang")
    func symlinkLoopsLive() throws {
        let state = try TemporaryDirectory("links")
        defer { state.remove() }
        let lib = try TemporaryDirectory("links-lib")
        defer { lib.remove() }
        try lib.write("x/y/a.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        #expect(symlink("../..", lib("x/y/up").string) == 0)
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        defer { daemon.stop() }
        try daemon.waitForIdle()
        #expect(symlink("b.jpg", lib("x/a-loop.jpg").string) == 0)
        #expect(symlink("a-loop.jpg", lib("x/b.jpg").string) == 0)
        #expect(symlink(lib.path.string, lib("x/y/root").string) == 0)
        try lib.write("x/new.jpg", Library.jpeg(date: "2021:01:02 10:00:00"))  // a marker that must arrive
        try eventually("the marker") { try daemon.allAssets().count } until: { $0 == 2 }
        let status = try daemon.waitForIdle()
        #expect(status["counts"]?["files"]?.intValue == 2)
        #expect(status["counts"]?["directories"]?.intValue == 3)
        #expect(status["watcher"]?["watches"]?.intValue == 3)
    }

    /// Writes `count` copies of a tiny JPEG into `dir`.
    static func fill(_ dir: PathBytes, count: Int) {
        let bytes = JPEGFixture.make(width: 16, height: 16)
        for i in 0..<count {
            let fd = open("\(dir.string)/IMG_\(i).jpg", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    /// Indexes one directory of `count` files; prints the time and photod's peak RSS.
    func bigDirectory(count: Int) throws {
        let state = try TemporaryDirectory("big")
        defer { state.remove() }
        let lib = try TemporaryDirectory("big-lib")
        defer { lib.remove() }
        try lib.makeDirectory("all")
        Self.fill(lib("all"), count: count)
        let started = ContinuousClock.now
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--log-level", "info"])
        defer { daemon.stop() }
        let status = try daemon.waitForIdle(timeout: .seconds(1800))
        let elapsed = ContinuousClock.now - started
        let rss = peakRSS(pid: daemon.process.processIdentifier) ?? 0
        print("big directory: \(count) files indexed in \(elapsed), photod peak RSS \(rss / 1024) MiB")
        #expect(status["counts"]?["assets"]?.intValue == count)
        #expect(status["counts"]?["files"]?.intValue == count)
        #expect(status["counts"]?["errors"]?.intValue == 0)
        if !memoryIsInstrumented { #expect(rss < 512 * 1024, "peak RSS \(rss) KiB") }
        let album = (try daemon.call("albums.fetch")["albums"]?.arrayValue ?? []).first
        #expect(album?["assetCount"]?.intValue == count, "\(String(describing: album))")
        // Restart: nothing read again, still bounded.
        #expect(daemon.stop() == 0)
        let again = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--log-level", "info"])
        defer { again.stop() }
        let after = try again.waitForIdle(timeout: .seconds(600))
        #expect(after["metadataReads"]?.intValue == 0)
        #expect(after["counts"]?["assets"]?.intValue == count)
    }

    @Test("One directory of 20,000 files: all indexed, bounded memory")
    func twentyThousandFiles() throws {
        try bigDirectory(count: 20_000)
    }

    @Test("One directory of 200,000 files (PHOTOD_LONG_TESTS=1)",
          .enabled(if: ProcessInfo.processInfo.environment["PHOTOD_LONG_TESTS"] == "1"))
    func twoHundredThousandFiles() throws {
        try bigDirectory(count: 200_000)
    }
}
