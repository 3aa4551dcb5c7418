import Foundation
import PhotoClient
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The write methods through the socket of a real daemon: what a photo manager's front end does.
@Suite("User state writes, end to end", .serialized)
struct WritesEndToEndTests {
    /// Ids by file name.
    static func ids(_ daemon: DaemonProcess) throws -> [String: String] {
        var out: [String: String] = [:]
        for a in try daemon.allAssets() {
            guard let path = a["path"]?.stringValue, let id = a["id"]?.stringValue else { continue }
            out[URL(fileURLWithPath: path).lastPathComponent] = id
        }
        return out
    }

    /// The ids of a fetch's page, in order.
    static func idList(_ result: JSONValue) -> [String] {
        (result["assets"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    /// The RPC error a call fails with.
    static func failure(_ body: () throws -> JSONValue) -> RPCError? {
        do {
            _ = try body()
            return nil
        } catch ClientError.rpc(let e) {
            return e
        } catch {
            return nil
        }
    }

    @Test("Favorites, hidden, user albums in folders, taggers' keywords: answered after commit, journaled, searchable, kept across kill -9")
    func writes() throws {
        let state = try TemporaryDirectory("writes")
        defer { state.remove() }
        let lib = try TemporaryDirectory("writes-lib")
        defer { lib.remove() }
        try lib.write("2021/a.jpg", Library.jpeg(date: "2021:03:01 10:00:00", width: 800))
        try lib.write("2021/b.jpg", Library.jpeg(date: "2021:03:02 10:00:00", width: 1600))
        try lib.write("2021/c.jpg", Library.jpeg(date: "2021:03:03 10:00:00", width: 400))
        try lib.write("2022/d.jpg", Library.jpeg(date: "2022:07:04 12:00:00", make: "NIKON", width: 1200))
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let id = try Self.ids(daemon)
        #expect(id.count == 4)
        let (a, b, c, d) = (id["a.jpg"]!, id["b.jpg"]!, id["c.jpg"]!, id["d.jpg"]!)

        // A subscriber on its own connection sees every write as a change set.
        let subscriber = try daemon.connect()
        let start = try subscriber.call("changes.subscribe", [:])["token"]!.int64Value!
        let conn = try daemon.connect()

        // Favorites: acknowledged with the token of their commit and the ids that changed.
        let fav = try conn.call("assets.setFavorite", ["ids": [.string(a), .string(b)], "favorite": true])
        #expect(fav["token"]?.int64Value == start + 1)
        #expect(Set(fav["updated"]?.arrayValue?.compactMap(\.stringValue) ?? []) == [a, b])
        let again = try conn.call("assets.setFavorite", ["ids": [.string(a)], "favorite": true])
        #expect(again["updated"]?.arrayValue?.isEmpty == true, "a repeat changes nothing")
        #expect(Self.idList(try conn.call("assets.fetch", ["predicate": "isFavorite == true"])) == [a, b])
        #expect(Self.idList(try conn.call("collections.assets", ["id": "s_favorites"])) == [a, b])

        // Hidden: gone from the library's fetches unless asked for.
        _ = try conn.call("assets.setHidden", ["ids": [.string(c)], "hidden": true])
        #expect(try conn.call("assets.fetch")["total"]?.intValue == 3)
        #expect(Self.idList(try conn.call("assets.fetch", ["includeHidden": true])) == [a, b, c, d])
        #expect(Self.idList(try conn.call("assets.fetch", ["predicate": "isHidden == true", "includeHidden": true])) == [c])
        #expect(Self.idList(try conn.call("collections.assets", ["id": "s_hidden"])) == [c])

        // A user album in a user folder; members in the order added, or sorted on request.
        let folder = try conn.call("albums.createFolder", ["title": "Trips"])["id"]!.stringValue!
        #expect(folder.hasPrefix("uf_"))
        let album = try conn.call("albums.create", ["title": "Rome", "folder": .string(folder)])["id"]!.stringValue!
        #expect(album.hasPrefix("u_"))
        _ = try conn.call("albums.addAssets", ["id": .string(album), "ids": [.string(d), .string(a), .string(b)]])
        #expect(Self.idList(try conn.call("collections.assets", ["id": .string(album)])) == [d, a, b])
        #expect(Self.idList(try conn.call("collections.assets", ["id": .string(album), "sort": "-pixelWidth"])) == [b, d, a])
        #expect(Self.idList(try conn.call("collections.assets", ["id": .string(album), "predicate": #"make == "nikon""#])) == [d])
        _ = try conn.call("albums.removeAssets", ["id": .string(album), "ids": [.string(a)]])
        _ = try conn.call("albums.rename", ["id": .string(album), "title": "Roma"])
        let user = try conn.call("userAlbums.fetch")
        #expect(user["albums"]?.arrayValue?.first?["title"]?.stringValue == "Roma")
        #expect(user["albums"]?.arrayValue?.first?["assetCount"]?.intValue == 2)
        #expect(user["folders"]?.arrayValue?.first?["id"]?.stringValue == folder)

        // Taggers' keywords, per source, searchable without regard to ASCII case.
        _ = try conn.call("assets.setKeywords", ["ids": [.string(a), .string(d)], "source": "faces", "keywords": ["Alice", "Bob"]])
        _ = try conn.call("assets.removeKeywords", ["ids": [.string(d)], "source": "faces", "keywords": ["Alice"]])
        #expect(Self.idList(try conn.call("assets.fetch", ["predicate": #"keywords CONTAINS "alice""#])) == [a])
        #expect(Self.idList(try conn.call("assets.fetch", ["predicate": #"keywords IN {"bob", "carol"}"#])) == [a, d])

        // Every write reached the subscriber, in token order, with no gap.
        var received: [JSONValue] = []
        subscriber.setTimeout(.seconds(10))
        let last = try conn.call("changes.currentToken")["token"]!.int64Value!
        while (received.last?["token"]?.int64Value ?? start) < last {
            let n = try subscriber.nextNotification()
            if n.method == "changes", let set = n.params { received.append(set) }
        }
        #expect(received.compactMap { $0["token"]?.int64Value } == Array((start + 1)...last))
        let favSet = received.first { $0["token"]?.int64Value == start + 1 }
        #expect(Set(favSet?["assets"]?["updated"]?.arrayValue?.compactMap(\.stringValue) ?? []) == [a, b])
        #expect(favSet?["collections"]?["updated"]?.arrayValue?.contains(.string("s_favorites")) == true)

        // Everything acknowledged survives a kill -9 right after the last answer.
        daemon.kill9()
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let after = try daemon.connect()
        #expect(Self.idList(try after.call("assets.fetch", ["predicate": "isFavorite == true"])) == [a, b])
        #expect(Self.idList(try after.call("collections.assets", ["id": "s_hidden"])) == [c])
        #expect(Self.idList(try after.call("collections.assets", ["id": .string(album)])) == [d, b])
        #expect(Self.idList(try after.call("assets.fetch", ["predicate": #"keywords CONTAINS "BOB""#])) == [a, d])
        #expect(try after.call("changes.currentToken")["token"]!.int64Value! >= last)

        // An album moves to the top (folder null) and back into its folder.
        _ = try after.call("albums.move", ["id": .string(album), "folder": .null])
        #expect(try after.call("userAlbums.fetch")["albums"]?.arrayValue?.first?["folderID"]?.isNull == true)
        #expect(Self.failure { try after.call("albums.move", ["id": .string(album)]) }?.data?["param"]?.stringValue == "folder")
        _ = try after.call("albums.move", ["id": .string(album), "folder": .string(folder)])

        // Deleting the folder deletes the album in it; the assets stay.
        _ = try after.call("albums.delete", ["id": .string(folder)])
        #expect(try after.call("userAlbums.fetch")["albums"]?.arrayValue?.isEmpty == true)
        #expect(try after.call("assets.fetch")["total"]?.intValue == 3)
        #expect(Self.failure { try after.call("collections.assets", ["id": .string(album)]) }?.name == "notFound")
        daemon.stop()
    }

    @Test("Bad writes and bad fetch options: notFound names the ids, invalid params the parameter and position; nothing changes")
    func badRequests() throws {
        let state = try TemporaryDirectory("writes-bad")
        defer { state.remove() }
        let lib = try TemporaryDirectory("writes-bad-lib")
        defer { lib.remove() }
        try lib.write("x/a.jpg", Library.jpeg(date: "2021:03:01 10:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let a = try Self.ids(daemon)["a.jpg"]!
        let conn = try daemon.connect()
        let before = try conn.call("changes.currentToken")["token"]!.int64Value!

        // A well-formed id that is not in the library: the whole write is refused.
        let missing = "a_" + String(repeating: "z", count: a.count - 2)
        let nf = Self.failure { try conn.call("assets.setFavorite", ["ids": [.string(a), .string(missing)], "favorite": true]) }
        #expect(nf?.code == -32004 && nf?.message == "notFound")
        #expect(nf?.data?["ids"]?.arrayValue == [.string(missing)])
        #expect(Self.idList(try conn.call("assets.fetch", ["predicate": "isFavorite == true"])).isEmpty)
        #expect(Self.failure { try conn.call("assets.setFavorite", ["ids": ["not an id"], "favorite": true]) }?.code == -32602)
        #expect(Self.failure { try conn.call("albums.addAssets", ["id": "u_nothere", "ids": [.string(a)]]) }?.name == "notFound")
        #expect(Self.failure { try conn.call("albums.create", ["title": "x", "folder": "uf_nothere"]) }?.name == "notFound")

        // Rescans stay inside the library roots, however the path is spelled.
        let outside = Self.failure { try conn.call("library.rescan", ["path": .string(lib.path.string + "/../../etc")]) }
        #expect(outside?.code == -32602 && outside?.data?["param"]?.stringValue == "path")
        #expect(Self.failure { try conn.call("library.rescan", ["path": "/etc"]) }?.code == -32602)
        let rescanned = try conn.call("library.rescan", ["path": .string(lib.path.string + "/x")])
        #expect(rescanned["rescanned"]?.arrayValue?.count == 1)

        // A predicate that does not parse: the position and what was expected.
        let bad = Self.failure { try conn.call("assets.fetch", ["predicate": #"pixelWidth >= "wide""#]) }
        #expect(bad?.code == -32602)
        #expect(bad?.data?["param"]?.stringValue == "predicate")
        #expect(bad?.data?["position"]?.intValue == 14)
        #expect(bad?.data?["reason"]?.stringValue == "typeMismatch")
        #expect(bad?.detail?.contains("expected an integer for 'pixelWidth' at 14") == true, "\(String(describing: bad))")
        let sort = Self.failure { try conn.call("assets.fetch", ["sort": "localDateTime,-size"]) }
        #expect(sort?.data?["param"]?.stringValue == "sort" && sort?.data?["position"]?.intValue == 15)
        #expect(Self.failure { try conn.call("assets.fetch", ["sort": [["key": "nope"]]]) }?.code == -32602)
        #expect(Self.failure { try conn.call("assets.fetch", ["includeHidden": "yes"]) }?.code == -32602)
        // Injection is just a string that matches nothing.
        let injected = try conn.call("assets.fetch", ["predicate": #"make == "x' OR 1=1; DROP TABLE assets; --""#])
        #expect(injected["total"]?.intValue == 0)
        #expect(try conn.call("assets.fetch")["total"]?.intValue == 1)
        let now = try conn.call("changes.currentToken")["token"]!.int64Value!
        #expect(now == before, "refused writes and a rescan that finds nothing new write no change set")
        daemon.stop()
    }

    @Test("library.rescan normalises its path: '..' out of a root is refused even when nothing is there; a vanished directory inside one is learnt gone")
    func rescanPaths() throws {
        // One watch, the root's: deep/ is polled every 300 s, so only the rescan can tell photod
        // soon that deep/y/ went away.
        try withDaemon("writes-rescan", arguments: ["--max-watches", "1"], library: { lib in
            try lib.write("x/a.jpg", Library.jpeg(date: "2021:03:01 10:00:00"))
            try lib.write("deep/y/b.jpg", Library.jpeg(date: "2021:03:02 10:00:00"))
        }) { lib, _, daemon in
            let conn = try daemon.connect()

            // Outside every root once normalised, whether or not it exists: refused, naming the path.
            for text in [lib.path.string + "/../elsewhere", lib.path.string + "/x/../../nothing/here", lib.path.string + "/..",
                         lib.path.string + "/./../" + URL(fileURLWithPath: lib.path.string).lastPathComponent + "-not"] {
                let refused = Self.failure { try conn.call("library.rescan", ["path": .string(text)]) }
                #expect(refused?.code == -32602, "\(text)")
                #expect(refused?.data?["param"]?.stringValue == "path", "\(text)")
                #expect(refused?.detail?.contains("'\(text)'") == true && refused?.detail?.contains("not inside a library root") == true,
                        "\(text): \(String(describing: refused?.detail))")
            }
            #expect(Self.failure { try conn.call("library.rescan", ["path": "x"]) }?.code == -32602, "a relative path")

            // Inside a root, spelled with dots and slashes: the tree it names.
            let spelled = try conn.call("library.rescan", ["path": .string(lib.path.string + "//deep/../x/./")])
            #expect(spelled["rescanned"] == [.string(lib("x").string)])

            // A directory deleted behind photod's back, named with a trailing slash: still inside the
            // root, so its rescan is done, and the index learns that it is gone.
            try FileManager.default.removeItem(atPath: lib("deep/y").string)
            #expect(try daemon.allAssets().count == 2, "nothing watches deep/: photod has not seen y/ go")
            let vanished = try conn.call("library.rescan", ["path": .string(lib("deep/y").string + "/")])
            #expect(vanished["rescanned"] == [.string(lib("deep/y").string)])
            #expect(try daemon.allAssets().map { $0["path"]?.stringValue } == [lib("x/a.jpg").string])
        }
    }

    /// Runs a request line as another user (`setpriv`) with Python's standard library and returns
    /// the reply line.
    static func callAs(user: String, group: String, groups: [String], socket: PathBytes, _ request: String) throws -> JSONValue {
        guard let python = PythonSubscriber.python else { throw HarnessError("python3 is not installed") }
        let r = try runProcess(URL(fileURLWithPath: "/usr/bin/setpriv"),
                               ["--reuid=\(user)", "--regid=\(group)"]
                                   + (groups.isEmpty ? ["--clear-groups"] : ["--groups=\(groups.joined(separator: ","))"])
                                   + [python.path, "-c", """
                                   import socket, sys
                                   s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                                   s.sendall(sys.argv[2].encode() + b"\\n")
                                   print(s.makefile().readline().strip())
                                   """, socket.string, request])
        guard r.status == 0 else { throw HarnessError("client as \(user) failed: \(r.stderr)") }
        return try JSONValue.parse(r.stdout)
    }

    @Test("Reads for whoever may connect (socket 0660, --socket-group); writes only for root, photod's user and --write-group",
          .enabled(if: CLIOperatorTests.canSwitchUser && PythonSubscriber.python != nil,
                   "runs clients as another user, which needs root, setpriv and python3"))
    func access() throws {
        let state = try TemporaryDirectory("writes-access")
        defer { state.remove() }
        let lib = try TemporaryDirectory("writes-access-lib")
        defer { lib.remove() }
        chmod(state.path.string, 0o755)
        try lib.write("a.jpg", Library.jpeg(date: "2021:03:01 10:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state,
                                       arguments: ["--socket-group", "nogroup", "--write-group", "users", "--trash-root", lib.path.string])
        try daemon.waitForIdle()
        let a = try Self.ids(daemon)["a.jpg"]!

        var info = stat()
        #expect(stat(daemon.socket.string, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(info.st_gid == 65534)

        let read = #"{"jsonrpc":"2.0","id":1,"method":"assets.fetch","params":{"predicate":"mediaType == \"image\""}}"#
        let write = #"{"jsonrpc":"2.0","id":2,"method":"assets.setFavorite","params":{"ids":["\#(a)"],"favorite":true}}"#
        // Parameters are not looked at before the check: a malformed write is refused the same way.
        let malformed = #"{"jsonrpc":"2.0","id":3,"method":"assets.setFavorite","params":{"ids":5}}"#
        // The trash too, on a root open to it: for writers only.
        let trash = #"{"jsonrpc":"2.0","id":4,"method":"assets.trash","params":{"ids":["\#(a)"]}}"#

        let reader = try Self.callAs(user: "nobody", group: "nogroup", groups: [], socket: daemon.socket, read)
        #expect(reader["result"]?["total"]?.intValue == 1, "\(reader)")
        for request in [write, malformed, trash] {
            let denied = try Self.callAs(user: "nobody", group: "nogroup", groups: [], socket: daemon.socket, request)
            #expect(denied["error"]?["code"]?.intValue == -32003, "\(denied)")
            #expect(denied["error"]?["message"]?.stringValue == "permissionDenied")
            #expect(denied["error"]?["data"]?["name"]?.stringValue == "permissionDenied")
        }
        #expect(Self.idList(try daemon.call("assets.fetch", ["predicate": "isFavorite == true"])).isEmpty, "nothing was written")
        #expect(FileManager.default.fileExists(atPath: lib("a.jpg").string), "nothing was trashed")

        // A member of the write group may write.
        let member = try Self.callAs(user: "nobody", group: "nogroup", groups: ["users"], socket: daemon.socket, write)
        #expect(member["result"]?["updated"]?.arrayValue == [.string(a)], "\(member)")
        #expect(Self.idList(try daemon.call("assets.fetch", ["predicate": "isFavorite == true"])) == [a])
        daemon.stop()
    }
}
