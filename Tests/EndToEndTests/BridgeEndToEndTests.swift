import Foundation
import PhotoBridge
import PhotoImaging
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real `nats-server -js` on a loopback port of its own, with its store in a temporary directory.
final class NATSServerProcess {
    let port: Int
    let store: TemporaryDirectory
    private(set) var process: Process?

    static var available: Bool { FileManager.default.isExecutableFile(atPath: path) }
    static let path = ["/usr/sbin/nats-server", "/usr/bin/nats-server"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? "/usr/sbin/nats-server"

    /// Extra lines of the server's configuration file (`max_payload: 65536`).
    let configuration: String?

    init(store: TemporaryDirectory, configuration: String? = nil) throws {
        self.store = store
        self.configuration = configuration
        port = try Self.freePort()
        try start()
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Starts it (again) on the same port and store, and waits until it takes connections.
    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.path)
        p.arguments = ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", store.path.string]
        if let configuration {
            _ = try store.write("server.conf", Array(configuration.utf8))
            p.arguments! += ["-c", store("server.conf").string]
        }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        let deadline = TestTime.deadline(.seconds(20))
        while (try? NATSClient(urls: url, name: "probe")) == nil {
            if ContinuousClock.now >= deadline { throw HarnessError("nats-server did not come up on \(port)") }
            usleep(50_000)
        }
    }

    func kill9() {
        guard let p = process, p.isRunning else { return }
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    deinit { kill9() }

    /// A port nobody listens on now (the kernel's pick for a socket bound to port 0).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw HarnessError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// `photod-nats` as a process.
final class BridgeProcess {
    let process = Process()
    let logFile: URL

    init(socket: PathBytes, nats: String, name: String, state: TemporaryDirectory, arguments: [String] = []) throws {
        logFile = URL(fileURLWithPath: state("bridge-\(UInt32.random(in: 0 ... .max)).log").string)
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.executableURL = TestPaths.products.appendingPathComponent("photod-nats")
        process.arguments = ["--socket", socket.string, "--nats", nats, "--name", name] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
    }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Waits until it serves the rpc subject.
    func waitServing() throws {
        let deadline = TestTime.deadline(.seconds(30))
        while !log.contains("serving photod.") {
            if ContinuousClock.now >= deadline { throw HarnessError("the bridge does not serve rpc:\n\(log)") }
            usleep(20_000)
        }
    }

    /// Waits until it has subscribed to photod (a first run starts from photod's current token:
    /// what happened before is not published).
    func waitSubscribed(count: Int = 1) throws {
        let deadline = TestTime.deadline(.seconds(30))
        while log.components(separatedBy: "subscribed to photod").count - 1 < count {
            if ContinuousClock.now >= deadline { throw HarnessError("the bridge did not subscribe:\n\(log)") }
            usleep(20_000)
        }
    }

    func kill9() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { kill9() }
}

@Suite("The NATS bridge, end to end (real nats-server)", .serialized,
       .enabled(if: NATSServerProcess.available, "nats-server is not installed (scripts/install-deps --tests installs it)"))
struct BridgeEndToEndTests {
    /// Every message of the stream on `subject`, in stream order: (token header, payload).
    static func messages(_ nats: NATSClient, subject: String) throws -> [(token: Int64, msgID: String, payload: [UInt8])] {
        guard let last = try nats.lastSequence(stream: "PHOTOD"), last > 0 else { return [] }
        var result: [(Int64, String, [UInt8])] = []
        for seq in 1...last {
            guard let m = try nats.message(stream: "PHOTOD", sequence: seq, header: "Photod-Token"), m.subject == subject else { continue }
            guard let token = Int64(m.header) else { throw HarnessError("message \(seq) on \(subject) has no Photod-Token") }
            let id = try nats.message(stream: "PHOTOD", sequence: seq, header: "Nats-Msg-Id")?.header ?? ""
            result.append((token, id, m.payload))
        }
        return result
    }

    /// Waits until the stream holds the change set of photod's current token.
    static func waitCaughtUp(_ nats: NATSClient, daemon: DaemonProcess, subject: String) throws {
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        let deadline = TestTime.deadline(.seconds(60))
        while (try messages(nats, subject: subject).last?.token ?? -1) < current {
            if ContinuousClock.now >= deadline { throw HarnessError("the stream did not reach token \(current)") }
            usleep(50_000)
        }
    }

    @Test("Every change set once, in token order, as photod sent it, with Nats-Msg-Id and Photod-Token; a kill -9 of the bridge, of photod and of nats-server loses and repeats nothing")
    func publishAndFaults() throws {
        let lib = try TemporaryDirectory("nats-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-state")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-store")
        defer { store.remove() }
        try lib.write("a/1.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let server = try NATSServerProcess(store: store)
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        var bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-a", state: state)
        try bridge.waitSubscribed()
        let nats = try NATSClient(urls: server.url, name: "test")
        let subject = "photod.box-a.changes"

        // Adds, a favorite, a move and a delete.
        for i in 0..<5 { try lib.write("a/new-\(i).jpg", Library.jpeg(date: "2021:02:0\(i + 1) 10:00:00")) }
        try daemon.waitForIdle()
        let one = try #require(try daemon.allAssets().first?["id"]?.stringValue)
        _ = try daemon.call("assets.setFavorite", ["ids": .array([.string(one)]), "favorite": true])
        try FileManager.default.moveItem(atPath: lib("a/new-0.jpg").string, toPath: lib("a/moved-0.jpg").string)
        try FileManager.default.removeItem(atPath: lib("a/new-1.jpg").string)
        try daemon.waitForIdle()
        try Self.waitCaughtUp(nats, daemon: daemon, subject: subject)

        // The bridge killed while changes come, then started again.
        bridge.kill9()
        for i in 0..<3 { try lib.write("b/x-\(i).jpg", Library.jpeg(date: "2021:03:0\(i + 1) 10:00:00")) }
        try daemon.waitForIdle()
        bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-a", state: state)
        try Self.waitCaughtUp(nats, daemon: daemon, subject: subject)

        // photod killed and started again; the bridge reconnects by itself.
        daemon.kill9()
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        for i in 0..<3 { try lib.write("c/y-\(i).jpg", Library.jpeg(date: "2021:04:0\(i + 1) 10:00:00")) }
        try daemon.waitForIdle()
        try Self.waitCaughtUp(nats, daemon: daemon, subject: subject)

        // nats-server killed while changes come, and started again on its store.
        server.kill9()
        for i in 0..<3 { try lib.write("d/z-\(i).jpg", Library.jpeg(date: "2021:05:0\(i + 1) 10:00:00")) }
        try daemon.waitForIdle()
        try server.start()
        let again = try NATSClient(urls: server.url, name: "test-2")
        try Self.waitCaughtUp(again, daemon: daemon, subject: subject)

        // Exactly the tokens after `start`, each once, in order, each as photod's journal has it.
        let got = try Self.messages(again, subject: subject)
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        #expect(got.map(\.token) == Array((start + 1)...current), "\(got.map(\.token)); bridge log:\n\(bridge.log)")
        #expect(got.allSatisfy { $0.msgID == "box-a:\($0.token)" })
        let journal = try daemon.call("changes.since", ["since": .int(start)])["changes"]?.arrayValue ?? []
        let published = try got.map { try JSONValue.parse($0.payload) }
        #expect(published == journal, "the payloads are photod's change sets")
        _ = daemon.stop()
    }

    @Test("A token photod's journal no longer holds: a resync event on photod.NAME.resync, then the change sets after photod's current token")
    func resyncAfterExpiredToken() throws {
        let lib = try TemporaryDirectory("nats-resync-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-resync")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-resync-store")
        defer { store.remove() }
        try lib.write("1.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let server = try NATSServerProcess(store: store)
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let nats = try NATSClient(urls: server.url, name: "test")
        var bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-b", state: state)
        try bridge.waitSubscribed()
        try lib.write("2.jpg", Library.jpeg(date: "2021:01:02 10:00:00"))
        try daemon.waitForIdle()
        try Self.waitCaughtUp(nats, daemon: daemon, subject: "photod.box-b.changes")
        let before = try Self.messages(nats, subject: "photod.box-b.changes").last!.token
        // Away while more change sets are made than the journal then keeps (photod prunes it at
        // start: restarted keeping 1).
        bridge.kill9()
        for i in 0..<4 {
            try lib.write("later-\(i).jpg", Library.jpeg(date: "2021:02:0\(i + 1) 10:00:00"))
            try daemon.waitForAssets(3 + i)
        }
        #expect(daemon.stop() == 0)
        daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--journal-max-changes", "1"])
        try daemon.waitForIdle()
        let pruned = TestTime.deadline(.seconds(30))
        while (try daemon.call("changes.currentToken")["oldestToken"]?.int64Value ?? 0) <= before + 1 {
            if ContinuousClock.now >= pruned {
                throw HarnessError("photod did not prune its journal: \(try daemon.call("changes.currentToken"))")
            }
            usleep(20_000)
        }
        bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-b", state: state)
        let deadline = TestTime.deadline(.seconds(30))
        while try Self.messages(nats, subject: "photod.box-b.resync").isEmpty {
            if ContinuousClock.now >= deadline { throw HarnessError("no resync event; bridge log:\n\(bridge.log)") }
            usleep(50_000)
        }
        let resync = try #require(try Self.messages(nats, subject: "photod.box-b.resync").first)
        let event = try JSONValue.parse(resync.payload)
        #expect(event["reason"]?.stringValue == "tokenExpired")
        #expect(event["lastToken"]?.int64Value == before)
        #expect(event["currentToken"]?.int64Value == resync.token)
        // Publishing goes on after the current token.
        try lib.write("after.jpg", Library.jpeg(date: "2021:03:01 10:00:00"))
        try daemon.waitForIdle()
        try Self.waitCaughtUp(nats, daemon: daemon, subject: "photod.box-b.changes")
        let after = try Self.messages(nats, subject: "photod.box-b.changes").map(\.token).filter { $0 > before }
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        #expect(after == Array((resync.token + 1)...current), "every change set after the resync's token, once")
        #expect(try Self.messages(nats, subject: "photod.box-b.resync").count == 1)
        _ = daemon.stop()
    }

    @Test("photod.NAME.rpc: reads answered byte for byte as on the socket, writes refused unless --allow-writes, images as bytes under max_payload, and the bridge's status")
    func requestReply() throws {
        let lib = try TemporaryDirectory("nats-rpc-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-rpc")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-rpc-store")
        defer { store.remove() }
        // Noise compresses badly: its full-size render cannot fit 128 KiB, a thumbnail can.
        var rng = SplitMix64(seed: 3)
        let noise = RenderedImage(size: PixelSize(width: 640, height: 480), channels: 3,
                                  pixels: (0..<640 * 480 * 3).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        _ = try lib.write("a/noise.jpg", try noise.encodeJPEG(quality: 95).bytes)
        _ = try lib.write("a/pattern.jpg", try ImagesEndToEndTests.pattern(width: 300, height: 200).encodeJPEG(quality: 90).bytes)
        for i in 0..<3 { _ = try lib.write("b/\(i).jpg", Library.jpeg(date: "2021:01:0\(i + 1) 10:00:00")) }
        let maxPayload = 128 << 10
        let server = try NATSServerProcess(store: store, configuration: "max_payload: \(maxPayload)\n")
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let reader = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "reader", state: state)
        try reader.waitServing()
        let nats = try NATSClient(urls: server.url, name: "test")
        #expect(nats.maxPayload == maxPayload)
        func ask(_ text: String, _ subject: String = "photod.reader.rpc") throws -> NATSMessage {
            try nats.request(subject: subject, payload: Array(text.utf8), timeout: .seconds(20))
        }
        func askJSON(_ text: String, _ subject: String = "photod.reader.rpc") throws -> JSONValue {
            try JSONValue.parse(ask(text, subject).payload)
        }

        // Reads: the bytes photod gives on its socket.
        let socket = try RawClient(daemon.socket)
        let album = try #require(try daemon.call("albums.fetch")["albums"]?[0]?["id"]?.stringValue)
        let reads = [
            #"{"jsonrpc":"2.0","id":1,"method":"assets.fetch","params":{"limit":3,"sort":"localDateTime DESC"}}"#,
            #"{"jsonrpc":"2.0","id":"two","method":"moments.fetch"}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"momentLists.fetch","params":{"kind":"year"}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"albums.fetch"}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"smartAlbums.fetch"}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"collections.assets","params":{"id":"\#(album)"}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"changes.currentToken"}"#,
            #"{"jsonrpc":"2.0","id":8,"method":"changes.since","params":{"since":0,"limit":2}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"assets.fetch","params":{"limt":3}}"#,
            #"{"jsonrpc":"2.0","id":10,"method":"collections.assets","params":{"id":"m_19000101"}}"#,
            #"[{"jsonrpc":"2.0","id":11,"method":"changes.currentToken"},{"jsonrpc":"2.0","id":12,"method":"albums.fetch"}]"#,
            #"not json"#,
        ]
        for request in reads {
            try socket.send(request + "\n")
            let direct = try socket.readRawLine()
            let remote = try ask(request).payload
            #expect(remote == direct, "\(request): \(String(decoding: remote, as: UTF8.self))")
        }
        // A request spread over lines (JSON allows it; photod's socket takes one line) is one request.
        #expect(try askJSON("{\"jsonrpc\":\"2.0\",\n \"id\":13,\r\n \"method\":\"changes.currentToken\"}")["result"]?["token"] != nil)
        // The method lists cover every method photod has.
        let hello = try askJSON(#"{"jsonrpc":"2.0","id":14,"method":"rpc.hello","params":{"client":"test"}}"#)
        let methods = Set(try #require(hello["result"]?["capabilities"]?.arrayValue, "\(hello)").compactMap(\.stringValue))
        #expect(methods == RPCPolicy.reads.union(RPCPolicy.writes).union(RPCPolicy.connectionBound.keys))

        // Writes refused, and nothing written; what needs a connection refused; a notification refused.
        let one = try #require(try daemon.allAssets().first?["id"]?.stringValue)
        let favorite = #"{"jsonrpc":"2.0","id":"w","method":"assets.setFavorite","params":{"ids":["\#(one)"],"favorite":true}}"#
        let refused = try askJSON(favorite)
        #expect(refused["error"]?["code"]?.intValue == -32003 && refused["id"]?.stringValue == "w", "\(refused)")
        #expect(try askJSON("[" + reads[6] + "," + favorite + "]")["error"]?["data"]?["index"]?.intValue == 1)
        #expect(try daemon.call("assets.fetch", ["predicate": "isFavorite == true"])["total"]?.intValue == 0)
        for method in ["changes.subscribe", "images.cancel", "no.such"] {
            let answer = try askJSON(#"{"jsonrpc":"2.0","id":15,"method":"\#(method)","params":{}}"#)
            #expect(answer["error"]?["code"]?.intValue == -32601 && answer["error"]?["data"]?["method"]?.stringValue == method)
        }
        #expect(try askJSON(#"{"jsonrpc":"2.0","method":"changes.currentToken"}"#)["error"]?["code"]?.intValue == -32600)

        // Images: the bytes of the cache file, the result in Photod-Result; too large for max_payload is -32009.
        let pattern = try ImagesEndToEndTests.asset(daemon, named: "pattern.jpg")
        let image = try ask(#"{"jsonrpc":"2.0","id":16,"method":"images.request","params":{"id":"\#(pattern)","targetSize":[150,150],"deliveryMode":"opportunistic"}}"#)
        let result = try JSONValue.parse(Array(try #require(image.header("Photod-Result"), "\(String(decoding: image.payload, as: UTF8.self))").utf8))
        #expect(result["width"]?.intValue == 150 && result["height"]?.intValue == 100 && result["isDegraded"]?.boolValue == false)
        #expect(image.header("Content-Type") == "image/jpeg")
        #expect(image.payload == (try FileDescriptor.readAll(PathBytes(try #require(result["path"]?.stringValue)), limit: 1 << 24)))
        #expect(Array(image.payload.prefix(2)) == [0xFF, 0xD8])
        let noiseID = try ImagesEndToEndTests.asset(daemon, named: "noise.jpg")
        let small = try ask(#"{"jsonrpc":"2.0","id":17,"method":"images.request","params":{"id":"\#(noiseID)","targetSize":[96,96]}}"#)
        #expect(small.header("Photod-Result") != nil && small.payload.count > 1000)
        let big = try askJSON(#"{"jsonrpc":"2.0","id":18,"method":"images.request","params":{"id":"\#(noiseID)","targetSize":[640,640]}}"#)
        #expect(big["error"]?["code"]?.intValue == -32009 && big["id"]?.intValue == 18, "\(big)")
        #expect((big["error"]?["data"]?["bytes"]?.intValue ?? 0) > maxPayload)
        #expect(big["error"]?["data"]?["maxPayload"]?.intValue == maxPayload)
        let failed = try askJSON(#"{"jsonrpc":"2.0","id":19,"method":"images.request","params":{"id":"a_aaaaaaaaaaaaaaaaaaaa","targetSize":[96,96]}}"#)
        #expect(failed["error"]?["code"]?.intValue == -32004)

        // The status, and --status from the command line.
        let status = try askJSON("", "photod.reader.bridge.status")
        #expect(status["name"]?.stringValue == "reader" && status["nats"]?["connected"]?.boolValue == true)
        #expect(status["photod"]?["token"]?.int64Value == (try daemon.call("changes.currentToken")["token"]?.int64Value))
        #expect(status["lag"]?["changeSets"]?.intValue == 0)
        #expect((status["rpc"]?["images"]?.intValue ?? 0) >= 2 && (status["rpc"]?["refused"]?.intValue ?? 0) >= 5, "\(status)")
        let printed = try runProcess(TestPaths.products.appendingPathComponent("photod-nats"),
                                     ["--status", "--nats", server.url, "--name", "reader"])
        #expect(printed.status == 0 && printed.stdout.contains("photod: connected"), "\(printed)")
        let json = try runProcess(TestPaths.products.appendingPathComponent("photod-nats"),
                                  ["--status", "--json", "--nats", server.url, "--name", "reader"])
        #expect((try? JSONValue.parse(json.stdout))?["rpc"]?["subject"]?.stringValue == "photod.reader.rpc")
        let nobody = try runProcess(TestPaths.products.appendingPathComponent("photod-nats"),
                                    ["--status", "--nats", server.url, "--name", "nobody"])
        #expect(nobody.status == 1 && nobody.stdout.contains("no bridge answers"), "\(nobody)")

        // With --allow-writes the write goes to photod, which decides as for any client.
        let writer = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "writer", state: state, arguments: ["--allow-writes"])
        try writer.waitServing()
        let written = try askJSON(favorite, "photod.writer.rpc")
        #expect(written["result"]?["updated"]?.arrayValue == [.string(one)], "\(written)")
        #expect(try daemon.call("assets.fetch", ["predicate": "isFavorite == true"])["total"]?.intValue == 1)
        _ = daemon.stop()
    }
}
