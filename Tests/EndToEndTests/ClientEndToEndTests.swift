import Foundation
import PhotoClient
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing

/// Consumes a change stream on a task of its own and keeps what it delivered.
final class EventCollector: Sendable {
    private struct State {
        var events: [ChangeEvent] = []
        var ended = false
        var error: String?
    }

    private let state = Locked(State())
    private let task = Locked<Task<Void, Never>?>(nil)
    /// What a timeout reports besides the events (the daemon's log).
    private let diagnostics: @Sendable () -> String

    private init(diagnostics: @escaping @Sendable () -> String) { self.diagnostics = diagnostics }

    /// Starts consuming `stream`, on a thread of its own: on the cooperative pool the consumer
    /// would wait behind tests that block it, and the events with it. A wait that times out
    /// reports `diagnostics()` too.
    static func start(_ stream: ChangeStream, diagnostics: @escaping @Sendable () -> String = { "" }) -> EventCollector {
        let collector = EventCollector(diagnostics: diagnostics)
        collector.task.withLock { $0 = Task(executorPreference: ThreadExecutor.shared) { await collector.consume(stream) } }
        return collector
    }

    private func consume(_ stream: ChangeStream) async {
        do {
            for try await event in stream { state.withLock { $0.events.append(event) } }
        } catch {
            state.withLock { $0.error = "\(error)" }
        }
        state.withLock { $0.ended = true }
    }

    var events: [ChangeEvent] { state.withLock { $0.events } }
    var changeSets: [ChangeSet] { events.compactMap { if case .changes(let c) = $0 { c } else { nil } } }
    var tokens: [Int64] { changeSets.map(\.token) }

    /// Waits (without blocking a thread) until `condition` holds for the events so far.
    @discardableResult
    func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: ([ChangeEvent]) -> Bool) async throws -> [ChangeEvent] {
        try await eventually("\(what)\n\(diagnostics())", timeout: timeout) { () throws -> [ChangeEvent] in
            let (events, ended, error) = state.withLock { ($0.events, $0.ended, $0.error) }
            if ended, !condition(events) {
                throw HarnessError("waited for \(what); the stream ended (\(error ?? "no error")) after \(events)\n" + diagnostics())
            }
            return events
        } until: { condition($0) }
    }

    /// Waits for the change set with `token`; returns it.
    func changeSet(token: Int64) async throws -> ChangeSet {
        try await waitFor("change set \(token)") { _ in tokens.contains(token) }
        return changeSets.first { $0.token == token }!
    }

    /// Cancels the consuming task and waits for it to end.
    func stop() async {
        let t = task.withLock { $0 }
        t?.cancel()
        await t?.value
    }
}

/// Every daemon log in a state directory (one per `DaemonProcess` started on it).
func daemonLogs(in state: TemporaryDirectory) -> String {
    let dir = state.path.string
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix("photod-") && $0.hasSuffix(".log") }
    return names.sorted().map { name in
        "--- \(name)\n" + ((try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "(unreadable)")
    }.joined(separator: "\n")
}

extension ChangeEvent {
    var isReconnecting: Bool { if case .reconnecting = self { true } else { false } }
    var isReconnected: Bool { if case .reconnected = self { true } else { false } }
}

@Suite("Client library, end to end", .serialized)
struct ClientEndToEndTests {
    @Test("Fetch with a predicate and a sort; favorite through the client; the stream delivers it; change details insert it; the stream resumes across kill -9 and a restart without a gap or a repeat; cancelling closes the socket")
    func client() async throws {
        let lib = try TemporaryDirectory("client-lib")
        defer { lib.remove() }
        for i in 0..<4 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2021:06:0\(1 + i) 09:00:00", width: 100 + 10 * i)) }
        let state = try TemporaryDirectory("client")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let library = PhotoLibrary(socket: daemon.socket)

        // A predicate and a sort: the three wider photos, widest first; records load lazily.
        let wide = try library.fetchAssets(FetchOptions(predicate: "pixelWidth >= 110",
                                                        sortDescriptors: [FetchSortDescriptor("pixelWidth", ascending: false)]))
        #expect(wide.count == 3 && wide.total == 3)
        let records = try library.assets(of: wide, in: 0..<wide.count)
        #expect(records.map(\.id) == wide.ids)
        #expect(records.map(\.pixelWidth) == [130, 120, 110])
        #expect(records.allSatisfy { $0.mediaType == .image && $0.make == "Canon" && !$0.isFavorite && $0.resources.count == 1 })
        #expect(records.map { $0.path.string } == ["a/p3.jpg", "a/p2.jpg", "a/p1.jpg"].map { lib($0).string })
        let firstTwo = try library.fetchAssets(FetchOptions(sortDescriptors: [FetchSortDescriptor("pixelWidth")], fetchLimit: 2))
        #expect(firstTwo.count == 2 && firstTwo.total == 4)
        let moments = try library.fetchMoments()
        #expect(moments.items.count == 4)
        let inMoment = try library.fetchAssets(in: moments.items[0].id)
        #expect(inMoment.ids == [records[0].id])  // newest moment: p3's day
        #expect(try library.fetchSmartAlbums().items.contains { $0.id == "s_favorites" && $0.assetCount == 0 })

        // Favorites, empty; a stream from its token; a favorite arrives as one change set,
        // and the change details of the favorites fetch insert it at index 0.
        let favorites = try library.fetchAssets(FetchOptions(predicate: "isFavorite == true"))
        #expect(favorites.isEmpty)
        let events = EventCollector.start(library.changes(since: favorites.token)) { daemonLogs(in: state) }
        let target = records[1].id
        let token = try #require(try library.setFavorite([target], true).token)
        let change = try await events.changeSet(token: token)
        #expect(change.assetsUpdated.contains(target))
        let details = try #require(try library.changeDetails(for: favorites, event: .changes(change)))
        #expect(details.hasIncrementalChanges)
        #expect(details.insertedIndexes == [0] && details.insertedIDs == [target])
        #expect(details.removedIndexes.isEmpty && details.changedIndexes.isEmpty && !details.hasMoves)
        #expect(details.fetchResultAfterChanges.ids == [target] && details.fetchResultAfterChanges.token >= token)

        // A keyword on the favorite: an update of an object in both results, a changed index.
        let tagged = try #require(try library.addKeywords(["sunset"], to: [target], source: "tests").token)
        let tagChange = try await events.changeSet(token: tagged)
        let afterTag = try #require(try library.changeDetails(for: details.fetchResultAfterChanges, in: tagChange))
        #expect(afterTag.changedIndexes == [0] && afterTag.changedIndexesBefore == [0] && afterTag.insertedIndexes.isEmpty)
        #expect(afterTag.coveredThrough >= tagged)
        // A change set the details already cover needs nothing more.
        #expect(try library.changeDetails(for: afterTag.fetchResultAfterChanges, in: tagChange) == nil)

        // kill -9: the stream reports it and retries; a file added while the daemon is down
        // and a favorite after the restart arrive, every token once, in order.
        daemon.kill9()
        try await events.waitFor("reconnecting") { $0.contains { $0.isReconnecting } }
        try lib.write("b/new.jpg", Library.jpeg(date: "2021:07:01 09:00:00", width: 200))
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForAssets(5)
        try library.setFavorite([records[0].id], true)  // the library reconnects by itself
        let journal = try library.fetchChanges(since: favorites.token)
        try await events.waitFor("token \(journal.token)") { _ in events.tokens.last ?? 0 >= journal.token }
        let delivered = events.changeSets.filter { $0.token <= journal.token }
        #expect(delivered == journal.changes)
        // Every token once, in order (the kill makes the numbers jump: none is used twice).
        #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0.token < $1.token } && delivered.last?.token == journal.token)
        #expect(Set(events.tokens).count == events.tokens.count)
        let all = events.events
        let reconnecting = try #require(all.firstIndex { $0.isReconnecting })
        let reconnected = try #require(all.firstIndex { $0.isReconnected })
        #expect(reconnecting < reconnected)
        #expect(try library.fetchAssets(FetchOptions(predicate: "isFavorite == true")).count == 2)

        // Ending the consuming task closes the stream's socket: every connection the daemon saw
        // is closed once the library's is too.
        await events.stop()
        library.close()
        try await waitForAllDisconnected(daemon)
        #expect(daemon.stop() == 0)
    }

    @Test("A token the daemon does not know: the stream reports .expired with the current token and goes on from it; the reload details replace the result")
    func expired() async throws {
        let lib = try TemporaryDirectory("client-expired-lib")
        defer { lib.remove() }
        try lib.write("a/p.jpg", Library.jpeg(date: "2021:06:01 09:00:00"))
        let state = try TemporaryDirectory("client-expired")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let library = PhotoLibrary(socket: daemon.socket)
        let all = try library.fetchAssets()
        let current = try library.currentToken()
        // A token from a future this database never reached (as after a rebuilt database).
        let events = EventCollector.start(library.changes(since: current + 100)) { daemonLogs(in: state) }
        try await events.waitFor("expired") { $0.first == .expired(currentToken: current) }
        let details = try #require(try library.changeDetails(for: all, event: .expired(currentToken: current)))
        #expect(!details.hasIncrementalChanges && details.fetchResultAfterChanges.ids == all.ids)
        let id = try #require(all.first)
        let token = try #require(try library.setHidden([id], true).token)
        let change = try await events.changeSet(token: token)
        #expect(change.assetsUpdated == [id])
        #expect(events.tokens == [token])
        #expect(try library.fetchAssets().isEmpty)
        #expect(try library.fetchAssets(FetchOptions(includeHidden: true)).ids == [id])
        await events.stop()
        #expect(daemon.stop() == 0)
    }

    @Test("Collections of every kind decode from the real daemon; user albums made, filled, fetched in their order, renamed, deleted")
    func collections() throws {
        let lib = try TemporaryDirectory("client-albums-lib")
        defer { lib.remove() }
        for i in 0..<3 { try lib.write("d\(i % 2)/p\(i).jpg", Library.jpeg(date: "2021:0\(1 + i):01 09:00:00")) }
        let state = try TemporaryDirectory("client-albums")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let library = PhotoLibrary(socket: daemon.socket)
        #expect(try library.fetchMoments().items.count == 3)
        #expect(try library.fetchMoments(year: 2021, month: 2).items.map(\.localDate) == ["2021-02-01"])
        let lists = try library.fetchMomentLists()
        #expect(lists.years.map(\.year) == [2021] && lists.months.count == 3)
        let folders = try library.fetchAlbums()
        #expect(folders.items.map(\.title) == ["d0", "d1"] && folders.items.map(\.assetCount) == [2, 1])
        #expect(try library.fetchCollectionLists().items.first?.albumIDs.count == 2)
        #expect(try library.fetchAssets(in: folders.items[0].id).count == 2)

        let ids = try library.fetchAssets().ids
        let (folderID, _) = try library.createFolder(title: "Travel")
        let (albumID, made) = try library.createAlbum(title: "Trip", folderID: folderID)
        #expect(made.token != nil)
        try library.addAssets([ids[2], ids[0]], toAlbum: albumID)
        #expect(try library.fetchAssets(in: albumID).ids == [ids[2], ids[0]])  // the album's own order
        try library.renameAlbum(albumID, title: "Road trip")
        let user = try library.fetchUserAlbums()
        #expect(user.folders.map(\.title) == ["Travel"])
        #expect(user.albums.map(\.title) == ["Road trip"] && user.albums.first?.folderID == folderID && user.albums.first?.assetCount == 2)
        try library.removeAssets([ids[0]], fromAlbum: albumID)
        try library.setKeywords(["a", "b"], for: [ids[2]], source: "tests")
        try library.removeKeywords(["a"], from: [ids[2]], source: "tests")
        #expect(try library.assets(of: library.fetchAssets(in: albumID), in: 0..<1).first?.keywords == ["b"])
        try library.deleteAlbum(albumID)
        #expect(try library.fetchUserAlbums().albums.isEmpty)
        #expect(try library.rescan() >= made.token!)
        #expect(daemon.stop() == 0)
    }

    @Test("assets.fetchIDs: one snapshot of all ids in the fetch's order, a limit, a collection, and its errors")
    func fetchIDs() throws {
        let lib = try TemporaryDirectory("ids-lib")
        defer { lib.remove() }
        for i in 0..<5 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2021:06:0\(1 + i) 09:00:00", width: 100 + i)) }
        let state = try TemporaryDirectory("ids")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let c = try daemon.connect()
        let page = try c.call("assets.fetch", ["sort": "-pixelWidth", "limit": 1000])
        let all = try c.call("assets.fetchIDs", ["sort": "-pixelWidth"])
        #expect(all["ids"] == .array((page["assets"]?.arrayValue ?? []).map { $0["id"] ?? .null }))
        #expect(all["total"] == 5 && all["token"] == page["token"])
        let cut = try c.call("assets.fetchIDs", ["sort": "-pixelWidth", "limit": 2])
        #expect(cut["ids"]?.arrayValue?.count == 2 && cut["total"] == 5)
        let moment = try c.call("assets.fetchIDs", ["id": "m_20210603"])
        #expect(moment["ids"]?.arrayValue?.count == 1 && moment["id"] == "m_20210603")
        let bad: [(JSONObject, RPCErrorCode)] = [
            (["id": .string("l_x")], .invalidParams), (["id": .string("zz")], .notFound), (["limit": .int(0)], .invalidParams),
            (["predicate": .string("pixelWidth >")], .invalidParams), (["offset": .int(3)], .invalidParams),
        ]
        for (params, code) in bad {
            do throws(ClientError) {
                _ = try c.call("assets.fetchIDs", params)
                Issue.record("assets.fetchIDs \(params) succeeded")
            } catch {
                guard case .rpc(let e) = error else { throw error }
                #expect(e.errorCode == code, "\(params)")
            }
        }
        #expect(daemon.stop() == 0)
    }

    @Test("assets.get: records by id in the order asked, hidden only when asked, Recently Deleted and unknown ids missing")
    func getByID() throws {
        let lib = try TemporaryDirectory("get-lib")
        defer { lib.remove() }
        for i in 0..<4 { try lib.write("p\(i).jpg", Library.jpeg(date: "2021:06:0\(1 + i) 09:00:00", width: 100 + i)) }
        let state = try TemporaryDirectory("get")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let c = try daemon.connect()
        let records = try #require(try c.call("assets.fetch", ["sort": "pixelWidth"])["assets"]?.arrayValue)
        let ids = records.compactMap { $0["id"]?.stringValue }
        let unknown = "a_aaaaaaaaaaaaaaaaaaaa"
        let got = try c.call("assets.get", ["ids": .array([ids[2], ids[0], unknown, ids[2]].map { .string($0) })])
        #expect(got["assets"]?.arrayValue == [records[2], records[0]], "the records as assets.fetch gives them, in the order asked")
        #expect(got["missing"] == [.string(unknown)])
        #expect(got["token"] == (try c.call("changes.currentToken")["token"]))
        _ = try c.call("assets.setHidden", ["ids": [.string(ids[1])], "hidden": true])
        #expect(try c.call("assets.get", ["ids": [.string(ids[1])]])["missing"] == [.string(ids[1])])
        #expect(try c.call("assets.get", ["ids": [.string(ids[1])], "includeHidden": true])["assets"]?.arrayValue?.count == 1)
        try FileManager.default.removeItem(atPath: lib("p3.jpg").string)
        try daemon.waitForIdle()
        try eventually("the deleted file's asset missing", timeout: .seconds(20)) {
            try c.call("assets.get", ["ids": [.string(ids[3])]])
        } until: { $0["missing"] == [.string(ids[3])] }
        for params: JSONObject in [["ids": []], ["ids": ["nope"]], ["ids": .array((0...1000).map { _ in .string(unknown) })],
                                   ["ids": [.string(unknown)], "limit": 3]] {
            do throws(ClientError) {
                _ = try c.call("assets.get", params)
                Issue.record("assets.get \(params) succeeded")
            } catch {
                guard case .rpc(let e) = error else { throw error }
                #expect(e.errorCode == .invalidParams, "\(params)")
            }
        }
        #expect(daemon.stop() == 0)
    }
}

/// Waits until the daemon logged as many disconnections as connections.
func waitForAllDisconnected(_ daemon: DaemonProcess, timeout: Duration = .seconds(10)) async throws {
    func count(_ text: String) -> Int { daemon.log.components(separatedBy: text).count - 1 }
    try await eventually("every connection's disconnection logged", timeout: timeout) {
        (connected: count("client connected"), disconnected: count("client disconnected"))
    } until: { $0.connected == $0.disconnected }
}
