import Foundation
import PhotoClient
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A damaged database file: photod starts anyway, rebuilds the index from the library, and
/// brings favorites, hidden flags, albums and keywords back from its user-state backup.
@Suite("Recovery from a damaged database, end to end", .serialized)
struct RecoveryEndToEndTests {
    /// Names of assets by id, hidden ones included.
    static func names(_ daemon: DaemonProcess) throws -> [String: String] {
        let all = try daemon.call("assets.fetch", ["limit": 1000, "includeHidden": true])["assets"]?.arrayValue ?? []
        var out: [String: String] = [:]
        for a in all {
            guard let path = a["path"]?.stringValue, let id = a["id"]?.stringValue else { continue }
            out[id] = URL(fileURLWithPath: path).lastPathComponent
        }
        return out
    }

    /// Everything users set, by file name: what must be the same after the recovery.
    static func userState(_ daemon: DaemonProcess) throws -> [String] {
        let name = try names(daemon)
        var lines: [String] = []
        func query(_ predicate: String) throws -> [String] {
            (try daemon.call("assets.fetch", ["predicate": .string(predicate), "includeHidden": true])["assets"]?.arrayValue ?? [])
                .compactMap { $0["id"]?.stringValue.flatMap { name[$0] } }.sorted()
        }
        lines.append("favorites: \(try query("isFavorite == true"))")
        lines.append("hidden: \(try query("isHidden == true"))")
        let all = try daemon.call("assets.fetch", ["limit": 1000, "includeHidden": true])["assets"]?.arrayValue ?? []
        for a in all {
            let words = (a["keywords"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
            lines.append("keywords \(name[a["id"]!.stringValue!]!): \(words)")
        }
        let tree = try daemon.call("userAlbums.fetch")
        var folderTitle: [String: String] = [:]
        for f in tree["folders"]?.arrayValue ?? [] { folderTitle[f["id"]!.stringValue!] = f["title"]!.stringValue! }
        for f in tree["folders"]?.arrayValue ?? [] {
            lines.append("folder \(f["title"]!.stringValue!) in \(f["parentID"]?.stringValue.flatMap { folderTitle[$0] } ?? "top")")
        }
        for a in tree["albums"]?.arrayValue ?? [] {
            let id = a["id"]!.stringValue!
            let members = (try daemon.call("collections.assets", ["id": .string(id), "includeHidden": true])["assets"]?.arrayValue ?? [])
                .compactMap { $0["id"]?.stringValue.flatMap { name[$0] } }
            lines.append("album \(id) \(a["title"]!.stringValue!) in \(a["folderID"]?.stringValue.flatMap { folderTitle[$0] } ?? "top"): \(members)")
        }
        return lines
    }

    @Test("Truncated or overwritten: moved aside, index rebuilt, user state restored from the backup, reported",
          arguments: ["truncated", "page overwritten"])
    func recovers(_ damage: String) throws {
        let state = try TemporaryDirectory("recovery")
        defer { state.remove() }
        let lib = try TemporaryDirectory("recovery-lib")
        defer { lib.remove() }
        try lib.write("2021/a.jpg", Library.jpeg(date: "2021:03:01 10:00:00", width: 800))
        try lib.write("2021/b.jpg", Library.jpeg(date: "2021:03:02 10:00:00", width: 1600))
        try lib.write("2021/c.jpg", Library.jpeg(date: "2021:03:03 10:00:00", width: 400))
        try lib.write("2022/d.jpg", Library.jpeg(date: "2022:07:04 12:00:00", make: "NIKON", width: 1200))
        // Enough files for a database of many pages, so that damage in its middle hits data.
        for i in 0..<60 { try lib.write("bulk/\(i).jpg", Library.jpeg(date: "2020:01:01 10:00:\(String(format: "%02d", i % 60))", width: 100 + i)) }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let byName = Dictionary(uniqueKeysWithValues: try Self.names(daemon).map { ($0.value, $0.key) })
        let (a, b, c, d) = (byName["a.jpg"]!, byName["b.jpg"]!, byName["c.jpg"]!, byName["d.jpg"]!)
        let conn = try daemon.connect()
        _ = try conn.call("assets.setFavorite", ["ids": [.string(a), .string(b)], "favorite": true])
        _ = try conn.call("assets.setHidden", ["ids": [.string(c)], "hidden": true])
        let trips = try conn.call("albums.createFolder", ["title": "Trips"])["id"]!.stringValue!
        let italy = try conn.call("albums.createFolder", ["title": "Italy", "parent": .string(trips)])["id"]!.stringValue!
        let rome = try conn.call("albums.create", ["title": "Rome", "folder": .string(italy)])["id"]!.stringValue!
        _ = try conn.call("albums.addAssets", ["id": .string(rome), "ids": [.string(d), .string(a), .string(b)]])
        let best = try conn.call("albums.create", ["title": "Best"])["id"]!.stringValue!
        _ = try conn.call("albums.addAssets", ["id": .string(best), "ids": [.string(c), .string(b)]])
        _ = try conn.call("assets.setKeywords", ["ids": [.string(a), .string(d)], "source": "faces", "keywords": ["Alice", "Bob"]])
        _ = try conn.call("assets.addKeywords", ["ids": [.string(b)], "source": "objects", "keywords": ["dog"]])
        let before = try Self.userState(daemon)
        #expect(before.contains("favorites: [\"a.jpg\", \"b.jpg\"]"))
        #expect(daemon.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: daemon.database.string + ".userstate.json"), "written at shutdown at the latest")

        // The damage.
        let path = daemon.database.string
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let fd = open(path, O_RDWR)
        #expect(fd >= 0)
        if damage == "truncated" {
            #expect(ftruncate(fd, off_t(size / 2)) == 0)
        } else {
            let pages = size / 4096
            let garbage = [UInt8](repeating: 0x5A, count: 4096 * 2)
            #expect(pwrite(fd, garbage, garbage.count, off_t((pages / 2) * 4096)) == garbage.count)
        }
        close(fd)

        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let status = try daemon.waitFor("the recovery", timeout: .seconds(120)) { status in
            if status["recovery"]?["state"]?.stringValue == "failed" { throw HarnessError("the recovery failed: \(status)") }
            return status["recovery"]?["state"]?.stringValue == "restored"
        }
        try daemon.waitForIdle()
        let recovery = try #require(status["recovery"])
        let damaged = try #require(recovery["damagedFile"]?.stringValue)
        #expect(damaged.hasPrefix(path + ".corrupt-"))
        #expect(FileManager.default.fileExists(atPath: damaged), "the damaged file is kept")
        let shown = try run("photoctl", ["--socket", daemon.socket.string, "status"])
        #expect(shown.stdout.contains("recovered   the database was") && shown.stdout.contains("2 favorites"), "\(shown.stdout)")
        #expect(recovery["restored"]?["favorites"]?.intValue == 2)
        #expect(recovery["restored"]?["hidden"]?.intValue == 1)
        #expect(recovery["restored"]?["albums"]?.intValue == 2)
        #expect(recovery["restored"]?["folders"]?.intValue == 2)
        #expect(recovery["restored"]?["assetsNotFound"]?.intValue == 0)
        #expect(daemon.log.contains("is damaged"))
        #expect(daemon.log.contains("restored the user state from the backup"))
        // The library is back (a new scan: new asset ids) with its user state.
        #expect(try Self.names(daemon).count == 64)
        #expect(try Self.names(daemon)[a] == nil, "asset ids are new after a rebuild")
        #expect(try Self.userState(daemon) == before)
        // The backup is written again from the recovered database (and recovers it once more).
        #expect(daemon.stop() == 0)
        let text = try String(contentsOfFile: path + ".userstate.json", encoding: .utf8)
        #expect(text.contains("\"title\":\"Rome\""))
    }
}
