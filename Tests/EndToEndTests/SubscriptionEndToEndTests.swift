import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A Python subscriber run as a user would — `docs/examples/subscriber.py`, or an example of
/// docs/PROTOCOL.md — which prints each change set as one JSON line; its lines are collected as
/// they come.
final class PythonSubscriber: Sendable {
    let process = Process()
    private let received = Locked<[JSONValue]>([])
    private let ended = Locked(false)
    private let errors = Locked("")
    /// Whether the subscriber's stderr was read to its end (it exited).
    private let errorsRead = Locked(false)

    static var python: URL? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let url = URL(fileURLWithPath: dir).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// `docs/examples/subscriber.py TOKEN_FILE`, finding the socket through `PHOTOD_SOCKET`.
    convenience init(socket: PathBytes, tokenFile: PathBytes) throws {
        try self.init(script: TestPaths.packageRoot.appendingPathComponent("docs/examples/subscriber.py").path,
                      arguments: [tokenFile.string], environment: exampleEnvironment(["PHOTOD_SOCKET": socket.string]))
    }

    /// `python3 script arguments...` in `directory` with exactly `environment`.
    init(script: String, arguments: [String] = [], environment: [String: String], directory: PathBytes? = nil) throws {
        guard let python = Self.python else { throw HarnessError("python3 is not installed") }
        process.executableURL = python
        process.arguments = [script] + arguments
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory.string) }
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
                    let line = pending[pending.startIndex..<newline]
                    pending = Data(pending[pending.index(after: newline)...])
                    if let value = try? JSONValue.parse(String(decoding: line, as: UTF8.self)) {
                        received.withLock { $0.append(value) }
                    }
                }
            }
            ended.withLock { $0 = true }
        }
        Thread.detachNewThread { [self] in
            let data = stderr.readDataToEndOfFile()
            errors.withLock { $0 = String(decoding: data, as: UTF8.self) }
            errorsRead.withLock { $0 = true }
        }
    }

    var changeSets: [JSONValue] { received.withLock { $0 } }
    var tokens: [Int] { changeSets.compactMap { $0["token"]?.intValue } }
    var stderr: String { errors.withLock { $0 } }

    /// Everything the subscriber wrote to stderr, once it has exited and that was read (the
    /// reading thread may still be storing it when the exit is seen).
    func allOfStderr() throws -> String {
        try eventually("the subscriber's stderr read to its end") { errorsRead.withLock { $0 } } until: { $0 }
        return stderr
    }

    /// Waits until a change set with `token` (or later) arrived.
    func waitFor(token: Int, timeout: Duration = .seconds(30)) throws {
        try eventually("token \(token) at the subscriber; stderr: \(stderr)", timeout: timeout) { () throws -> [Int] in
            let seen = tokens
            if (seen.last ?? -1) < token, !process.isRunning, ended.withLock({ $0 }) {
                throw HarnessError("the subscriber exited with tokens \(seen), waited for \(token); stderr: \(stderr)")
            }
            return seen
        } until: { ($0.last ?? -1) >= token }
    }

    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { kill() }
}

/// The environment a user's shell would give an example: a `PATH` and `HOME`, and `extra` (where
/// the socket is: `PHOTOD_SOCKET`, `XDG_RUNTIME_DIR`, ...), nothing of the test process's own.
func exampleEnvironment(_ extra: [String: String]) -> [String: String] {
    let own = ProcessInfo.processInfo.environment
    return ["PATH": own["PATH"] ?? "/usr/bin:/bin", "HOME": own["HOME"] ?? "/root", "LANG": "C.UTF-8"].merging(extra) { _, new in new }
}

extension DaemonProcess {
    /// The newest change token.
    func currentToken() throws -> Int { try call("changes.currentToken")["token"]?.intValue ?? -1 }

    /// Waits until the journal's oldest token is `token` or later (photod prunes it at start).
    func waitForJournal(prunedTo token: Int) throws {
        let c = try connect()
        try eventually("the journal pruned to token \(token)") { try c.call("changes.currentToken") } until: {
            ($0["oldestToken"]?.intValue ?? 0) >= token
        }
    }
}

@Suite("Change subscriptions, end to end", .serialized)
struct SubscriptionEndToEndTests {
    @Test("A Python subscriber gets every change set in order, resumes after its own restart, follows the daemon's (SIGTERM, kill -9) without exiting, and an expired token is refused",
          .enabled(if: PythonSubscriber.python != nil, "python3 is not installed (scripts/install-deps --tests installs it)"))
    func pythonSubscriber() throws {
        let lib = try TemporaryDirectory("sub-lib")
        defer { lib.remove() }
        for i in 0..<3 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2021:06:0\(1 + i) 09:00:00", width: 100 + i)) }
        let state = try TemporaryDirectory("sub")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try daemon.currentToken()
        let p0 = try #require(try daemon.idsByPath()[lib("a/p0.jpg").string])
        let tokenFile = state("subscriber.token")
        var subscriber = try PythonSubscriber(socket: daemon.socket, tokenFile: tokenFile)
        // The first run starts from now: it saves the current token before any change.
        try daemon.waitFor("the subscription") { _ in FileManager.default.fileExists(atPath: tokenFile.string) }

        // Add, modify, move, delete: each arrives, in order, with consecutive tokens.
        try lib.write("a/new.jpg", Library.jpeg(date: "2021:07:01 09:00:00", width: 300))
        try subscriber.waitFor(token: start + 1)
        try lib.write("a/new.jpg", Library.jpeg(date: "2021:07:02 09:00:00", width: 301))
        try subscriber.waitFor(token: start + 2)
        try shell("mv", [lib("a/new.jpg").string, lib("a/moved.jpg").string])
        try subscriber.waitFor(token: start + 3)
        #expect(unlink(lib("a/p0.jpg").string) == 0)
        try subscriber.waitFor(token: start + 4)
        // A favorite: a write of user state, journaled like the rest.
        let p1 = try #require(try daemon.idsByPath()[lib("a/p1.jpg").string])
        _ = try daemon.call("assets.setFavorite", ["ids": [.string(p1)], "favorite": true])
        try subscriber.waitFor(token: start + 5)
        try daemon.waitForIdle()
        let journal = try daemon.call("changes.since", ["since": .int(Int64(start))])
        let expected = journal["changes"]?.arrayValue ?? []
        #expect(subscriber.tokens == Array(start + 1 ... start + expected.count))
        #expect(subscriber.changeSets == expected)
        let sets = subscriber.changeSets
        let inserted = sets[0]["assets"]?["inserted"]?.arrayValue ?? []
        #expect(inserted.count == 1)
        // The re-read and the move are updates of the new asset; the delete is an update of
        // p0's (it went to Recently Deleted); nothing was deleted for good.
        func updated(_ i: Int) -> [JSONValue] { sets[i]["assets"]?["updated"]?.arrayValue ?? [] }
        #expect(updated(1).contains(inserted[0]))
        #expect(updated(2).contains(inserted[0]))
        #expect(updated(3) == [.string(p0)])
        #expect(updated(4) == [.string(p1)])
        #expect(sets[4]["collections"]?["updated"]?.arrayValue?.contains(.string("s_favorites")) == true)
        #expect(sets.allSatisfy { $0["assets"]?["deleted"]?.arrayValue?.isEmpty == true })

        // The subscriber dies (once it has saved the token of what it printed: killed between the
        // two, it would print that change set again); changes go on; restarted, it gets exactly
        // what it missed.
        let seen = try #require(subscriber.tokens.last)
        try eventually("the subscriber's saved token \(seen)") { try? String(contentsOfFile: tokenFile.string, encoding: .utf8) } until: {
            $0 == String(seen)
        }
        subscriber.kill()
        try lib.write("b/x.jpg", Library.jpeg(date: "2021:08:01 09:00:00", width: 400))
        try lib.write("b/y.jpg", Library.jpeg(date: "2021:08:02 09:00:00", width: 401))
        try daemon.waitForAssets(5)
        let missedUpTo = try daemon.currentToken()
        #expect(missedUpTo > seen)
        subscriber = try PythonSubscriber(socket: daemon.socket, tokenFile: tokenFile)
        try subscriber.waitFor(token: missedUpTo)
        #expect(subscriber.tokens == Array(seen + 1 ... missedUpTo))

        // The daemon stops (photod.stopping), with a change while it is down, and comes back;
        // then it is killed (no goodbye, the connection just ends) and comes back with another:
        // the running subscriber reconnects each time and gets exactly what it missed, once.
        #expect(daemon.stop() == 0)
        try lib.write("c/z.jpg", Library.jpeg(date: "2021:09:01 09:00:00", width: 500))
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let afterStop = try daemon.currentToken()
        #expect(afterStop > missedUpTo)
        try subscriber.waitFor(token: afterStop)
        daemon.kill9()
        try lib.write("c/y.jpg", Library.jpeg(date: "2021:09:01 10:00:00", width: 501))
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let afterRestart = try daemon.currentToken()
        #expect(afterRestart > afterStop)
        try subscriber.waitFor(token: afterRestart)
        #expect(subscriber.process.isRunning)
        // Every change set once, across both restarts (the kill makes the numbers jump: tokens are
        // never used twice, PROTOCOL.md).
        #expect(subscriber.tokens.map(Int64.init) == (try daemon.journalTokens(after: Int64(seen))))
        #expect(subscriber.tokens.last == afterRestart)
        #expect(subscriber.changeSets == (try daemon.call("changes.since", ["since": .int(Int64(seen))])["changes"]?.arrayValue ?? []))
        subscriber.kill()
        #expect(daemon.stop() == 0)

        // A journal that keeps only the newest change set: the old token is expired.
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--journal-max-changes", "1"])
        try daemon.waitForIdle()
        try lib.write("c/w.jpg", Library.jpeg(date: "2021:09:02 09:00:00", width: 502))
        try lib.write("c/v.jpg", Library.jpeg(date: "2021:09:03 09:00:00", width: 503))
        try daemon.waitForAssets(9)
        #expect(daemon.stop() == 0)
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--journal-max-changes", "1"])
        try daemon.waitForIdle()
        try daemon.waitForJournal(prunedTo: afterRestart)
        // The subscriber's token file, rewound to the first token.
        let handle = try #require(FileHandle(forWritingAtPath: tokenFile.string))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("\(start)".utf8))
        try handle.close()
        subscriber = try PythonSubscriber(socket: daemon.socket, tokenFile: tokenFile)
        try subscriber.process.waitForExit()
        #expect(subscriber.process.terminationStatus == 1)
        #expect(try subscriber.allOfStderr().contains("older than the change journal keeps"))
        #expect(daemon.stop() == 0)
    }

    @Test("After a power cut took back change sets clients were sent, their tokens are tokenExpired; from the last one on disk the next change sets come under new numbers")
    func tokensAfterAPowerCut() throws {
        let lib = try TemporaryDirectory("cut-lib")
        defer { lib.remove() }
        try lib.write("a/p.jpg", Library.jpeg(date: "2021:06:01 09:00:00"))
        let state = try TemporaryDirectory("cut")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        for i in 0..<3 {
            try lib.write("b/q\(i).jpg", Library.jpeg(date: "2021:06:0\(2 + i) 09:00:00", width: 200 + i))
            try daemon.waitFor("file \(i)") { $0["counts"]?["assets"]?.intValue == 2 + i }
        }
        let end = try daemon.currentToken()
        daemon.kill9()
        // The cut: the last two change sets, committed without an fsync, never reached the disk.
        let kept = end - 2
        let cut = try runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.execute("DELETE FROM changes WHERE token > ?", (int(sys.argv[2]),))
            c.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'changes'", (int(sys.argv[2]),))
            c.commit()
            """, daemon.database.string, String(kept)])
        #expect(cut.status == 0, "\(cut.stderr)")
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        // A new change set first: without the skip it would take a number a client was sent.
        try lib.write("b/later.jpg", Library.jpeg(date: "2021:06:09 09:00:00"))
        try daemon.waitFor("the new file") { $0["counts"]?["assets"]?.intValue == 5 }
        let c = try daemon.connect()
        for lost in [end, end - 1] {
            for method in ["changes.since", "changes.subscribe"] {
                do {
                    _ = try c.call(method, ["since": .int(Int64(lost))])
                    Issue.record("\(method) from token \(lost), which the cut took back, was accepted")
                } catch {
                    guard case .rpc(let e) = error else { throw error }
                    #expect(e.code == -32001, "\(method) \(lost): \(e)")
                }
            }
        }
        // From the last token on disk: the new change set, numbered past every token handed out before.
        let page = try daemon.call("changes.since", ["since": .int(Int64(kept))])
        let tokens = (page["changes"]?.arrayValue ?? []).compactMap { $0["token"]?.intValue }
        #expect(!tokens.isEmpty && tokens.allSatisfy { $0 > end + 1 }, "\(tokens)")
        #expect((page["changes"]?.arrayValue ?? []).allSatisfy { ($0["assets"]?["inserted"]?.arrayValue?.count ?? 0) > 0 })
        _ = try c.call("changes.subscribe", ["since": .int(Int64(kept))])
        #expect(daemon.stop() == 0)
    }

    @Test("changes.since pages through the journal; tokens from the future or the pruned past are tokenExpired; filters")
    func sinceAndFilters() throws {
        let lib = try TemporaryDirectory("since-lib")
        defer { lib.remove() }
        try lib.write("a/p.jpg", Library.jpeg(date: "2021:06:01 09:00:00"))
        let state = try TemporaryDirectory("since")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try daemon.currentToken()
        for i in 0..<5 {
            try lib.write("b/q\(i).jpg", Library.jpeg(date: "2021:06:0\(2 + i) 09:00:00", width: 200 + i))
            try daemon.waitFor("file \(i)") { $0["counts"]?["assets"]?.intValue == 2 + i }
        }
        let end = try daemon.currentToken()
        #expect(end >= start + 5)
        // Pages of two.
        var since = start
        var tokens: [Int] = []
        while true {
            let page = try daemon.call("changes.since", ["since": .int(Int64(since)), "limit": 2])
            tokens += (page["changes"]?.arrayValue ?? []).compactMap { $0["token"]?.intValue }
            since = page["token"]?.intValue ?? since
            if page["more"]?.boolValue != true { break }
        }
        #expect(tokens == Array(start + 1 ... end))
        // The fetch results carry the token they reflect.
        #expect(try daemon.call("assets.fetch")["token"]?.intValue == end)
        // From the future: expired, with the current token.
        let c = try daemon.connect()
        do {
            _ = try c.call("changes.since", ["since": .int(Int64(end + 100))])
            Issue.record("a token from the future was accepted")
        } catch {
            guard case .rpc(let e) = error else { throw error }
            #expect(e.code == -32001)
            #expect(e.data?["currentToken"]?.intValue == end)
        }
        // A collection filter: only the change sets that name it.
        let album = try #require(try daemon.call("albums.fetch")["albums"]?.arrayValue?.first { $0["title"]?.stringValue == "b" })
        let filtered = try daemon.call("changes.since", ["since": .int(Int64(start)), "collection": album["id"]!])
        let sets = filtered["changes"]?.arrayValue ?? []
        #expect(sets.count == 5)
        #expect(sets.allSatisfy { ($0["collections"]?["updated"]?.arrayValue ?? []).contains(album["id"]!)
            || ($0["collections"]?["inserted"]?.arrayValue ?? []).contains(album["id"]!) })
        #expect(try daemon.call("changes.since", ["since": .int(Int64(start)), "mediaType": "video"])["changes"]?.arrayValue?.isEmpty == true)
        #expect(daemon.stop() == 0)
    }
}
