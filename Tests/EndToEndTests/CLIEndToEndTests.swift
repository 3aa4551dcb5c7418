import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `photoctl watch` as a child process, its stdout and stderr read as they come.
final class WatchProcess: Sendable {
    let process = Process()
    private let lines = Locked<[String]>([])
    private let errors = Locked("")

    init(_ arguments: [String]) throws {
        process.executableURL = TestPaths.products.appendingPathComponent("photoctl")
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading, stderr = err.fileHandleForReading
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = stdout.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[pending.index(after: newline)...])
                    lines.withLock { $0.append(line) }
                }
            }
        }
        Thread.detachNewThread { [self] in
            while true {
                let chunk = stderr.availableData
                if chunk.isEmpty { break }
                errors.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            }
        }
    }

    var stdout: [String] { lines.withLock { $0 } }
    var stderr: String { errors.withLock { $0 } }
    /// The change sets of `watch --json`.
    var changeSets: [JSONValue] { stdout.compactMap { try? JSONValue.parse($0) } }
    var tokens: [Int] { changeSets.compactMap { $0["token"]?.intValue } }

    /// Waits until `condition` holds, failing with what the watch printed.
    func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: () -> Bool) throws {
        try eventually("watch to print \(what) (running: \(process.isRunning)); stdout: \(stdout); stderr: \(stderr)", timeout: timeout) {
            let met = condition()
            if !met, !process.isRunning { throw HarnessError("watch exited before \(what); stdout: \(stdout); stderr: \(stderr)") }
            return met
        }
    }

    /// SIGTERM, then the exit status; nil if it died of a signal or ignored SIGTERM for 10 s.
    func terminate() -> Int32? {
        if process.isRunning { process.terminate() }
        if (try? process.waitForExit(timeout: .seconds(10))) == nil {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    deinit {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

@Suite("photoctl, end to end", .serialized)
struct CLIEndToEndTests {
    /// Every subcommand photoctl has.
    static let subcommands = ["status", "assets", "moments", "albums", "smart-albums", "folders", "errors", "watch", "favorite",
                              "unfavorite", "hide", "unhide", "album", "keywords", "rescan"]

    /// The client side (PhotoClient, and photoctl on it) needs no SQLite: the SQLite shim lives
    /// in CSQLite, which only the store links.
    @Test("photoctl, built on the client library, does not link libsqlite3")
    func clientLinksNoSQLite() throws {
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        ldd.arguments = [TestPaths.products.appendingPathComponent("photoctl").path]
        let out = Pipe()
        ldd.standardOutput = out
        try ldd.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        #expect(ldd.terminationStatus == 0)
        #expect(text.contains("libc.so"), "\(text)")
        #expect(!text.contains("libsqlite3"), "\(text)")
    }

    @Test("help for every subcommand exits 0 with its usage", arguments: subcommands)
    func help(_ command: String) throws {
        for arguments in [["help", command], [command, "--help"], [command, "-h"]] {
            let r = try run("photoctl", arguments)
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
            #expect(r.stdout.hasPrefix("OVERVIEW: "), "\(arguments)")
            #expect(r.stdout.contains("USAGE: photoctl "), "\(arguments)")
            #expect(r.stdout.contains("photoctl \(command) "), "\(arguments)")
            #expect(r.stderr.isEmpty)
        }
        let overview = try run("photoctl", ["--help"])
        #expect(overview.status == 0)
        #expect(overview.stdout.contains("\n  \(command) "))
    }

    @Test("usage errors exit 64, an unreachable daemon 69")
    func usageAndUnreachable() throws {
        let nowhere = ["--socket", "/nonexistent/photod.sock"]
        for arguments in [["album"], ["album", "frobnicate"], ["album", "create"], ["album", "move", "u_x"], ["favorite"],
                          ["keywords", "add", "a_x", "cat"], ["keywords", "add", "--source", "t", "a_x"], ["rescan", "a", "b"],
                          ["watch", "--media-type", "photo"], ["watch", "--in", "s_videos", "--media-type", "video"],
                          ["assets", "--sort"], ["assets", "--bogus"], ["frobnicate"]] {
            let r = try run("photoctl", nowhere + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.hasPrefix("photoctl: "), "\(arguments)")
            #expect(r.stdout.isEmpty, "\(arguments)")
        }
        for arguments in [["favorite", "a_x"], ["album", "list"], ["watch"], ["rescan"], ["assets", "--where", "isFavorite == true"]] {
            let r = try run("photoctl", nowhere + arguments)
            #expect(r.status == 69, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("cannot reach photod"), "\(arguments)")
        }
    }

    @Test("assets --where/--sort/--include-hidden, a bad predicate, favorite/hide, albums, keywords and rescan")
    func writesAndQueries() throws {
        let lib = try TemporaryDirectory("cli-lib")
        defer { lib.remove() }
        try lib.write("a/p1.jpg", Library.jpeg(date: "2021:01:01 09:00:00", width: 200))
        try lib.write("a/p2.jpg", Library.jpeg(date: "2021:02:01 09:00:00", width: 50))
        try lib.write("a/p3.jpg", Library.jpeg(date: "2021:03:01 09:00:00", width: 300))
        try lib.write("b/p4.jpg", Library.jpeg(date: "2020:12:01 09:00:00", width: 150))
        // The newest, and wide: only the media type keeps it out.
        try lib.write("v/clip.mp4", MP4Fixture(appleKeys: ["com.apple.quicktime.creationdate": "2021-04-01T09:00:00+0000"]).bytes())
        let state = try TemporaryDirectory("cli")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        defer { daemon.stop() }
        try daemon.waitForIdle()
        let ids = try daemon.idsByPath()
        let p1 = try #require(ids[lib("a/p1.jpg").string]), p2 = try #require(ids[lib("a/p2.jpg").string])
        let p3 = try #require(ids[lib("a/p3.jpg").string]), p4 = try #require(ids[lib("b/p4.jpg").string])
        let sock = ["--socket", daemon.socket.string]
        func ctl(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
            try run("photoctl", sock + arguments)
        }
        func listed(_ arguments: String...) throws -> [String] {
            let r = try run("photoctl", sock + ["assets", "--json"] + arguments)
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
            return try records(r.stdout).compactMap { $0["id"]?.stringValue }
        }

        // A predicate and a sort order.
        #expect(try listed("--where", #"mediaType == "image" AND pixelWidth > 100"#, "--sort", "-localDateTime") == [p3, p1, p4])
        #expect(try listed("--where", #"pixelWidth > 100 AND mediaType == "image""#, "--sort", "pixelWidth,-localDateTime") == [p4, p1, p3])
        #expect(try listed("--where", #"mediaType == "image""#, "--sort", "-pixelWidth", "--limit", "2") == [p3, p1])
        #expect(try listed("--in", "m_20210101", "--where", "pixelWidth < 100").isEmpty)
        let table = try ctl("assets", "--where", "pixelWidth < 100")
        #expect(table.status == 0)
        #expect(table.stdout.split(separator: "\n").count == 2)  // the header and p2
        #expect(table.stdout.contains(p2))

        // A predicate photod cannot parse: usage, the message, then a caret under the spot (in
        // Unicode scalars: "é" is one scalar and two bytes).
        let bad = "make == \"Caf\u{E9}\" AND pixelWidth ~ 3"
        let position = bad.unicodeScalars.distance(from: bad.unicodeScalars.startIndex, to: bad.unicodeScalars.firstIndex(of: "~")!)
        let refused = try ctl("assets", "--where", bad)
        #expect(refused.status == 64)
        #expect(refused.stdout.isEmpty)
        let lines = refused.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 4, "\(refused.stderr)")  // message, predicate, caret, and the final newline
        if lines.count >= 3 {
            #expect(lines[0].hasPrefix("photoctl: assets.fetch: invalid params: 'predicate': expected"))
            #expect(lines[0].contains("at \(position)"))
            #expect(lines[1] == "    " + bad)
            #expect(lines[2] == "    " + String(repeating: " ", count: position) + "^")
        }
        let badSort = try ctl("assets", "--sort", "-width")
        #expect(badSort.status == 64)
        #expect(badSort.stderr.contains("'sort'"))
        #expect(badSort.stderr.contains("    -width\n     ^"))  // under the key, after the '-'

        // Favorites.
        let fav = try ctl("favorite", p1)
        #expect(fav.status == 0, "\(fav.stderr)")
        #expect(fav.stdout.hasPrefix("favorited 1 of 1 asset (token "))
        #expect(try listed("--in", "s_favorites") == [p1])
        #expect(try listed("--where", "isFavorite == true") == [p1])
        let favJSON = try jsonLines(try ctl("favorite", "--json", p1, p3).stdout)
        #expect(favJSON.first?["updated"] == [.string(p3)])  // p1 already was
        #expect(try ctl("unfavorite", p1, p3).status == 0)
        #expect(try listed("--in", "s_favorites").isEmpty)
        let unknown = try ctl("favorite", "a_aaaaaaaaaaaaaaaaaaaa")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("photoctl: assets.setFavorite: notFound"))

        // Hidden.
        #expect(try ctl("hide", p2).status == 0)
        #expect(try !listed().contains(p2))
        #expect(try listed("--include-hidden").contains(p2))
        #expect(try listed("--in", "s_hidden") == [p2])
        #expect(try ctl("unhide", p2).status == 0)
        #expect(try listed().contains(p2))

        // User albums and folders: create, add, list, rename, move, remove, delete.
        let folder = try ctl("album", "create-folder", "Trips")
        #expect(folder.status == 0, "\(folder.stderr)")
        let folderID = folder.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(folderID.hasPrefix("uf_"))
        let created = try ctl("album", "create", "Italy", "--folder", folderID)
        let albumID = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(albumID.hasPrefix("u_"), "\(created.stderr)")
        #expect(try ctl("album", "add", albumID, p1, p3).status == 0)
        var list = try records(try ctl("album", "list", "--json").stdout)
        #expect(list.map { $0["kind"]?.stringValue } == ["folder", "album"])
        #expect(list.last?["id"]?.stringValue == albumID)
        #expect(list.last?["folderID"]?.stringValue == folderID)
        #expect(list.last?["assetCount"]?.intValue == 2)
        let tree = try ctl("album", "list")
        #expect(tree.stdout.contains("Trips/"))
        #expect(tree.stdout.contains("  Italy "))  // indented: inside Trips
        #expect(tree.stdout.contains("2 assets"))
        #expect(try listed("--in", albumID) == [p1, p3])
        #expect(try listed("--in", albumID, "--sort", "-pixelWidth") == [p3, p1])
        #expect(try ctl("album", "rename", albumID, "Italia").status == 0)
        #expect(try ctl("album", "move", albumID, "--top").status == 0)
        list = try records(try ctl("album", "list", "--json").stdout)
        #expect(list.last?["title"]?.stringValue == "Italia")
        #expect(list.last?["folderID"]?.isNull == true)
        #expect(try ctl("album", "move", albumID, "--folder", folderID).status == 0)
        #expect(try ctl("album", "remove", albumID, p1).status == 0)
        #expect(try listed("--in", albumID) == [p3])
        #expect(try ctl("album", "delete", albumID).status == 0)
        list = try records(try ctl("album", "list", "--json").stdout)
        #expect(list.map { $0["id"]?.stringValue } == [folderID])
        let gone = try ctl("album", "rename", albumID, "Nope")
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("notFound"))
        #expect(try ctl("album", "delete", folderID).status == 0)
        #expect(try records(try ctl("album", "list", "--json").stdout).isEmpty)

        // A tagger's keywords.
        func keywords() throws -> [JSONValue] {
            try #require(try daemon.allAssets().first { $0["id"]?.stringValue == p4 })["keywords"]?.arrayValue ?? []
        }
        #expect(try ctl("keywords", "add", "--source", "tagger", p4, "cat", "dog").status == 0)
        #expect(try keywords() == ["cat", "dog"])
        #expect(try listed("--where", #"keywords CONTAINS "cat""#) == [p4])
        #expect(try ctl("keywords", "remove", "--source", "tagger", p4, "dog").status == 0)
        #expect(try keywords() == ["cat"])
        #expect(try ctl("keywords", "set", "--source", "tagger", p4).status == 0)
        #expect(try keywords().isEmpty)

        // Rescans: the library, a directory in it, and one outside it.
        let all = try ctl("rescan")
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout.contains(lib.path.string))
        let one = try jsonLines(try ctl("rescan", "--json", lib("a").string).stdout)
        #expect(one.first?["rescanned"] == [.string(lib("a").string)])
        let outside = try ctl("rescan", state.path.string)
        #expect(outside.status == 1)
        #expect(outside.stderr.contains("not inside a library root"))
    }

    @Test("watch prints each change set once, across a kill -9 and restart of photod; expired tokens; SIGTERM exits 0")
    func watchAcrossRestart() throws {
        let lib = try TemporaryDirectory("watch-lib")
        defer { lib.remove() }
        try lib.write("a/p0.jpg", Library.jpeg(date: "2022:05:01 09:00:00", width: 100))
        let spare = try TemporaryDirectory("watch-spare")
        defer { spare.remove() }
        try spare.write("new1.jpg", Library.jpeg(date: "2022:05:02 09:00:00", width: 101))
        try spare.write("new2.jpg", Library.jpeg(date: "2022:05:03 09:00:00", width: 102))
        let state = try TemporaryDirectory("watch")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try daemon.currentToken()
        let sock = ["--socket", daemon.socket.string]

        // From `start`: nothing committed after it can be missed, however soon it comes.
        let watch = try WatchProcess(sock + ["watch", "--since", String(start), "--json"])
        // From a token this database never issued: it says so and goes on from now.
        let expired = try WatchProcess(sock + ["watch", "--since", "999999"])
        try expired.waitFor("the expiry notice") { expired.stderr.contains("has expired") }
        #expect(expired.stderr.contains("refetch"))

        try shell("cp", [spare("new1.jpg").string, lib("a/new1.jpg").string])
        try daemon.waitForAssets(2)
        let first = try daemon.currentToken()
        #expect(first > start)
        try watch.waitFor("token \(first)") { (watch.tokens.last ?? -1) >= first }

        // photod dies without a goodbye; the watch keeps trying; photod comes back; more changes.
        daemon.kill9()
        try watch.waitFor("the reconnecting notice") { watch.stderr.contains("reconnecting…") }
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        defer { daemon.stop() }
        try daemon.waitForIdle()
        try watch.waitFor("the reconnected notice") { watch.stderr.contains("reconnected") }
        try shell("cp", [spare("new2.jpg").string, lib("a/new2.jpg").string])
        try daemon.waitForAssets(3)
        let last = try daemon.currentToken()
        #expect(last > first)
        try watch.waitFor("token \(last)") { (watch.tokens.last ?? -1) >= last }
        // The other watch subscribed from "now" after its expiry notice: the second file is in it.
        try expired.waitFor("a change set") { expired.stdout.contains { $0.hasPrefix("token \(last) ") } }

        // Every change set once, in order: what the journal holds after `start`.
        let journal = try daemon.call("changes.since", ["since": .int(Int64(start))])
        #expect(journal["more"]?.boolValue == false)
        #expect(watch.tokens.map(Int64.init) == (try daemon.journalTokens(after: Int64(start))) && watch.tokens.last == last)
        #expect(watch.changeSets == journal["changes"]?.arrayValue ?? [])
        #expect(watch.changeSets.allSatisfy { $0["assets"]?["inserted"] != nil && $0["collections"]?["updated"] != nil })

        // The human format: a summary line per change set, then its ids indented.
        let human = expired.stdout
        let summary = try #require(human.first { $0.hasPrefix("token ") })
        #expect(summary.wholeMatch(of: /token \d+  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  assets \+\d+ ~\d+ -\d+  collections \+\d+ ~\d+ -\d+/) != nil,
                "\(summary)")
        #expect(human.contains { $0.hasPrefix("  + a_") })

        #expect(watch.terminate() == 0)
        #expect(expired.terminate() == 0)
    }
}
