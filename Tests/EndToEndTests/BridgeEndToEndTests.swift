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
    /// More command-line arguments (a cluster's).
    let arguments: [String]

    /// Added to the server's environment (the configuration's `$VARIABLES`).
    let environment: [String: String]

    init(store: TemporaryDirectory, configuration: String? = nil, port: Int? = nil, arguments: [String] = [],
         environment: [String: String] = [:], wait: Bool = true, probe: String? = nil) throws {
        self.store = store
        self.configuration = configuration
        self.arguments = arguments
        self.environment = environment
        self.probe = probe
        self.port = try port ?? Self.freePort()
        try start(wait: wait)
    }

    var url: String { "nats://127.0.0.1:\(port)" }
    /// Where the server writes its log (beside its store, which the test removes).
    var logFile: URL { URL(fileURLWithPath: store("nats-server.log").string) }
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
    /// The URL the start-up probe connects with (one with a user, when the server wants one).
    let probe: String?

    /// Starts it (again) on the same port and store, and waits until it takes connections.
    func start(wait: Bool = true) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.path)
        p.arguments = ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", store.path.string]
        if let configuration {
            _ = try store.write("server.conf", Array(configuration.utf8))
            p.arguments! += ["-c", store("server.conf").string]
        }
        p.arguments! += arguments
        if !environment.isEmpty {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        // The server's log (appended across restarts), for a failing test's message.
        if !FileManager.default.fileExists(atPath: logFile.path) {
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        }
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = log
        try p.run()
        process = p
        guard wait else { return }
        try Self.waitUntilUp("nats-server on \(port)") { try NATSClient(urls: probe ?? url, name: "probe") }
    }

    /// Waits until `connect` connects (a server starting, a cluster electing).
    static func waitUntilUp(_ what: String, _ connect: () throws -> NATSClient) throws {
        try eventually("\(what) to take connections", timeout: .seconds(20)) { () -> Result<NATSClient, any Error> in
            Result { try connect() }
        } until: { if case .success = $0 { true } else { false } }
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
        try eventually("the bridge serving rpc; its log:\n\(log)") { log.contains("serving photod.") }
    }

    /// Waits until it has subscribed to photod (a first run starts from photod's current token:
    /// what happened before is not published).
    func waitSubscribed(count: Int = 1) throws {
        try eventually("the bridge subscribed to photod; its log:\n\(log)") {
            log.components(separatedBy: "subscribed to photod").count - 1 >= count
        }
    }

    func kill9() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { kill9() }
}

/// The fleet consumer example (clients/nats/photod_fleet.py) and the Python with nats-py it
/// needs (`scripts/install-deps --tests` makes .build/nats-venv).
enum FleetConsumer {
    static let python = TestPaths.packageRoot.appendingPathComponent(".build/nats-venv/bin/python3")
    static let script = TestPaths.packageRoot.appendingPathComponent("clients/nats/photod_fleet.py")
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: python.path) && NATSServerProcess.available
    }
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

    /// The token of the stream's last message on `subject`; nil when there is none (or no stream yet).
    static func lastToken(_ nats: NATSClient, subject: String) throws -> Int64? {
        let last = Result { () throws(NATSError) in try nats.lastMessage(stream: "PHOTOD", subject: subject, header: "Photod-Token") }
        if case .failure(let error) = last, error.isStreamMissing { return nil }
        return try last.get().flatMap { Int64($0.value) }
    }

    /// Waits until the stream holds the change set of photod's current token.
    static func waitCaughtUp(_ nats: NATSClient, daemon: DaemonProcess, subject: String) throws {
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        try eventually("token \(current) in the stream on \(subject)", timeout: .seconds(60)) { try lastToken(nats, subject: subject) } until: {
            ($0 ?? -1) >= current
        }
    }

    /// Waits until the stream has stored a message on `subject`.
    static func waitForMessage(_ nats: NATSClient, subject: String, _ what: @autoclosure () -> String) throws {
        try eventually(what()) { try lastToken(nats, subject: subject) } until: { $0 != nil }
    }

    /// A JetStream API request (`STREAM.INFO.PHOTOD`) and its JSON answer.
    static func jetStream(_ nats: NATSClient, _ api: String) throws -> JSONValue {
        try JSONValue.parse(nats.request(subject: "$JS.API." + api, payload: []).payload)
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
        try daemon.waitForAssets(6)
        let one = try #require(try daemon.allAssets().first?["id"]?.stringValue)
        _ = try daemon.call("assets.setFavorite", ["ids": .array([.string(one)]), "favorite": true])
        try FileManager.default.moveItem(atPath: lib("a/new-0.jpg").string, toPath: lib("a/moved-0.jpg").string)
        try FileManager.default.removeItem(atPath: lib("a/new-1.jpg").string)
        try daemon.waitFor("the move and the delete") { _ in
            let paths = try daemon.idsByPath()
            return paths[lib("a/moved-0.jpg").string] != nil && paths[lib("a/new-1.jpg").string] == nil
        }
        try Self.waitCaughtUp(nats, daemon: daemon, subject: subject)

        // The bridge killed while changes come, then started again.
        bridge.kill9()
        for i in 0..<3 { try lib.write("b/x-\(i).jpg", Library.jpeg(date: "2021:03:0\(i + 1) 10:00:00")) }
        try daemon.waitForAssets(8)
        bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-a", state: state)
        try Self.waitCaughtUp(nats, daemon: daemon, subject: subject)

        // photod killed and started again; the bridge reconnects by itself.
        daemon.kill9()
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        for i in 0..<3 { try lib.write("c/y-\(i).jpg", Library.jpeg(date: "2021:04:0\(i + 1) 10:00:00")) }
        try daemon.waitForAssets(11)
        try Self.waitCaughtUp(nats, daemon: daemon, subject: subject)

        // nats-server killed while changes come, and started again on its store.
        server.kill9()
        for i in 0..<3 { try lib.write("d/z-\(i).jpg", Library.jpeg(date: "2021:05:0\(i + 1) 10:00:00")) }
        try daemon.waitForAssets(14)
        try server.start()
        let again = try NATSClient(urls: server.url, name: "test-2")
        try Self.waitCaughtUp(again, daemon: daemon, subject: subject)

        // Exactly the tokens after `start`, each once, in order, each as photod's journal has it.
        let got = try Self.messages(again, subject: subject)
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        #expect(got.map(\.token) == (try daemon.journalTokens(after: start)) && got.last?.token == current,
                "\(got.map(\.token)); bridge log:\n\(bridge.log)")
        #expect(got.allSatisfy { $0.msgID == "box-a:\($0.token)" })
        let journal = try daemon.call("changes.since", ["since": .int(start)])["changes"]?.arrayValue ?? []
        let published = try got.map { try JSONValue.parse($0.payload) }
        #expect(published == journal, "the payloads are photod's change sets")
        // Byte for byte what a subscriber on the socket gets as the notifications' params.
        let raw = try RawClient(daemon.socket)
        try raw.send(#"{"jsonrpc":"2.0","id":1,"method":"changes.subscribe","params":{"since":\#(start)}}"# + "\n")
        var params: [[UInt8]] = []
        while params.count < got.count {
            let line = try raw.readRawLine()
            if RawJSON.member("method", in: line).map(Array.init) == Array(#""changes""#.utf8) {
                params.append(Array(try #require(RawJSON.member("params", in: line))))
            }
        }
        #expect(params == got.map(\.payload), "the stream's payloads are the socket's bytes")
        _ = daemon.stop()
    }

    @Test("NATS away while a thousand files come: the bridge waits with bounded memory, then publishes every change set once, in order")
    func outage() throws {
        let lib = try TemporaryDirectory("nats-outage-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-outage")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-outage-store")
        defer { store.remove() }
        _ = try lib.write("0.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let server = try NATSServerProcess(store: store)
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        let bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "away", state: state)
        try bridge.waitSubscribed()
        func rss() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(bridge.process.processIdentifier)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        let before = rss()
        server.kill9()
        var peak = before
        for batch in 0..<40 {
            for i in 0..<25 { _ = try lib.write("b\(batch)/\(i).jpg", Library.jpeg(date: "2021:02:01 10:\(batch % 60):\(i % 60)")) }
            try daemon.waitForAssets(1 + (batch + 1) * 25)
            peak = max(peak, rss())
        }
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        #expect(current - start >= 40, "\(current - start) change sets while NATS was away")
        #expect(peak - before < 32 << 10, "the bridge grew by \((peak - before) / 1024) MiB while NATS was away (\(before / 1024) → \(peak / 1024) MiB)")
        #expect(bridge.process.isRunning)
        try server.start()
        let nats = try NATSClient(urls: server.url, name: "test")
        try Self.waitCaughtUp(nats, daemon: daemon, subject: "photod.away.changes")
        #expect(try Self.messages(nats, subject: "photod.away.changes").map(\.token) == Array((start + 1)...current))
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
        try daemon.waitForAssets(2)
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
        try daemon.waitForJournal(prunedTo: Int(before) + 2)
        bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-b", state: state)
        try Self.waitForMessage(nats, subject: "photod.box-b.resync", "a resync event; bridge log:\n\(bridge.log)")
        let resync = try #require(try Self.messages(nats, subject: "photod.box-b.resync").first)
        let event = try JSONValue.parse(resync.payload)
        #expect(event["reason"]?.stringValue == "tokenExpired")
        #expect(event["lastToken"]?.int64Value == before)
        #expect(event["currentToken"]?.int64Value == resync.token)
        // Publishing goes on after the current token.
        try lib.write("after.jpg", Library.jpeg(date: "2021:03:01 10:00:00"))
        try daemon.waitForAssets(7)
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
        try reader.waitSubscribed()
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

        // A request cannot choose a reply subject that would have the bridge publish into the
        // stream or call JetStream's API (purge it): such requests are not answered.
        _ = try lib.write("b/after.jpg", Library.jpeg(date: "2021:01:09 10:00:00"))
        try daemon.waitForAssets(6)
        try Self.waitCaughtUp(nats, daemon: daemon, subject: "photod.reader.changes")
        let stored = try #require(try nats.lastSequence(stream: "PHOTOD"))
        func refusals() throws -> Int { try askJSON("", "photod.reader.bridge.status")["rpc"]?["refused"]?.intValue ?? -1 }
        let refusedBefore = try refusals()
        for reply in ["photod.reader.changes", "photod.reader.resync", "$JS.API.STREAM.PURGE.PHOTOD", "$JS.API.STREAM.DELETE.PHOTOD"] {
            try nats.send(subject: "photod.reader.rpc", reply: reply, payload: Array(reads[0].utf8))
            try nats.send(subject: "photod.reader.bridge.status", reply: reply, payload: [])
        }
        #expect(nats.flush())
        try eventually("the bridge to refuse the 8 requests") { try refusals() } until: { $0 >= refusedBefore + 8 }
        #expect(try nats.lastSequence(stream: "PHOTOD") == stored, "the stream is as it was")
        #expect(try Self.messages(nats, subject: "photod.reader.changes").allSatisfy { !$0.msgID.isEmpty })
        #expect(reader.log.contains("is not an inbox"), "\(reader.log)")

        // The status, and --status from the command line. The stream has stored the last change
        // set a moment before the bridge hears that it did.
        let status = try eventually("the bridge's status without lag") { try askJSON("", "photod.reader.bridge.status") } until: {
            $0["lag"]?["changeSets"]?.intValue == 0
        }
        #expect(status["name"]?.stringValue == "reader" && status["nats"]?["connected"]?.boolValue == true)
        #expect(status["photod"]?["token"]?.int64Value == (try daemon.call("changes.currentToken")["token"]?.int64Value))
        #expect((status["rpc"]?["images"]?.intValue ?? 0) >= 2 && (status["rpc"]?["refused"]?.intValue ?? 0) >= 13, "\(status)")
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

    @Test("A 3-node JetStream cluster on loopback, the stream on 3 replicas: a node killed during a burst loses nothing")
    func cluster() throws {
        let lib = try TemporaryDirectory("nats-cluster-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-cluster")
        defer { state.remove() }
        let stores = try (0..<3).map { try TemporaryDirectory("nats-cluster-node\($0)") }
        defer { stores.forEach { $0.remove() } }
        let ports = try (0..<3).map { _ in try NATSServerProcess.freePort() }
        let routes = try (0..<3).map { _ in try NATSServerProcess.freePort() }
        let nodes = try (0..<3).map { i in
            try NATSServerProcess(store: stores[i], port: ports[i], arguments: [
                "--server_name", "n\(i)", "--cluster_name", "photod-test",
                "--cluster", "nats://127.0.0.1:\(routes[i])",
                "--routes", routes.enumerated().filter { $0.offset != i }.map { "nats://127.0.0.1:\($0.element)" }.joined(separator: ","),
            ], wait: false)
        }
        for node in nodes { try NATSServerProcess.waitUntilUp("node \(node.port)") { try NATSClient(urls: node.url, name: "probe") } }
        let urls = nodes.map(\.url).joined(separator: ",")
        _ = try lib.write("a/0.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        // The cluster elects its JetStream leader in a few seconds; until then making the stream
        // fails and the bridge tries again.
        let bridge = try BridgeProcess(socket: daemon.socket, nats: urls, name: "cl", state: state, arguments: ["--replicas", "3"])
        try bridge.waitSubscribed()

        // A burst: 30 batches of files, one node killed after the tenth.
        var killed: NATSServerProcess?
        for batch in 0..<30 {
            for i in 0..<5 { _ = try lib.write("b/\(batch)-\(i).jpg", Library.jpeg(date: "2021:02:01 10:\(batch):0\(i)")) }
            if batch == 10 {
                killed = nodes[Int.random(in: 0..<3)]
                killed?.kill9()
            }
            usleep(30_000)  // the burst's pace: files keep coming for about a second, whatever the cluster does
        }
        try daemon.waitForAssets(151)
        let alive = try #require(nodes.first { $0 !== killed })
        let nats = try NATSClient(urls: alive.url, name: "test")
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        // Reads fail while the cluster elects a new leader for the stream: they are tried again.
        let got = try eventually("token \(current) in the stream; bridge log:\n\(bridge.log)", timeout: .seconds(90)) {
            (try? Self.messages(nats, subject: "photod.cl.changes").map(\.token)) ?? []
        } until: { ($0.last ?? -1) >= current }
        #expect(got == Array((start + 1)...current), "\(got); bridge log:\n\(bridge.log)")
        #expect(current - start >= 5, "the burst made \(current - start) change sets")
        // Three replicas: with the killed node back (and caught up), another node may go and
        // every message is still there, served by the two that are left.
        try killed?.start()
        try eventually("the restarted node caught up with the stream", timeout: .seconds(60)) {
            try? Self.jetStream(nats, "STREAM.INFO.PHOTOD")["cluster"]
        } until: { cluster in
            let replicas = cluster?["replicas"]?.arrayValue ?? []
            return replicas.count == 2 && replicas.allSatisfy { $0["current"]?.boolValue == true && ($0["lag"]?.intValue ?? 0) == 0 }
        }
        let second = try #require(nodes.first { $0 !== killed && $0 !== alive })
        second.kill9()
        let remaining = try NATSClient(urls: [alive, killed!].map(\.url).joined(separator: ","), name: "test-after")
        try eventually("the whole stream from the two nodes left", timeout: .seconds(60)) {
            try? Self.messages(remaining, subject: "photod.cl.changes").map(\.token)
        } until: { $0 == got }
        _ = daemon.stop()
    }

    /// Every asset of a photod (hidden ones too) as the fleet view keeps them: id → (path, favorite).
    static func library(_ daemon: DaemonProcess) throws -> [String: String] {
        var out: [String: String] = [:]
        var offset: Int64? = 0
        while let o = offset {
            let page = try daemon.call("assets.fetch", ["includeHidden": true, "includeAllBurstAssets": true, "limit": 1000, "offset": .int(o)])
            for a in page["assets"]?.arrayValue ?? [] {
                out[a["id"]?.stringValue ?? ""] = "\(a["path"]?.stringValue ?? "") favorite=\(a["isFavorite"]?.boolValue ?? false)"
            }
            offset = page["nextOffset"]?.int64Value
        }
        return out
    }

    @Test("Two photods into one stream: the Python fleet consumer's merged view equals both libraries, across its own kill -9 and a resync",
          .enabled(if: FleetConsumer.available, "nats-py is not installed in .build/nats-venv (scripts/install-deps --tests installs it)"))
    func fleet() throws {
        let store = try TemporaryDirectory("fleet-store")
        defer { store.remove() }
        let work = try TemporaryDirectory("fleet")
        defer { work.remove() }
        let server = try NATSServerProcess(store: store)
        var libs: [TemporaryDirectory] = [], states: [TemporaryDirectory] = []
        var daemons: [DaemonProcess] = [], bridges: [BridgeProcess] = []
        defer { libs.forEach { $0.remove() }; states.forEach { $0.remove() } }
        let names = ["lib-a", "lib-b"]
        for (n, name) in names.enumerated() {
            let lib = try TemporaryDirectory("fleet-\(name)")
            libs.append(lib)
            for i in 0..<(3 + n) { _ = try lib.write("x/\(i).jpg", Library.jpeg(date: "2020:0\(n + 1):0\(i + 1) 10:00:00")) }
            let state = try TemporaryDirectory("fleet-state-\(name)")
            states.append(state)
            let daemon = try DaemonProcess(libraries: [lib.path], state: state)
            try daemon.waitForIdle()
            daemons.append(daemon)
            let bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: name, state: state)
            try bridge.waitSubscribed()
            bridges.append(bridge)
            // A first change set, so that the library is in the stream when the consumer starts.
            _ = try lib.write("x/first.jpg", Library.jpeg(date: "2020:0\(n + 1):20 10:00:00"))
            try daemon.waitForAssets(4 + n)
        }
        let nats = try NATSClient(urls: server.url, name: "test")
        func caughtUp() throws {
            for (n, name) in names.enumerated() { try Self.waitCaughtUp(nats, daemon: daemons[n], subject: "photod.\(name).changes") }
        }
        try caughtUp()
        let view = work("view.json").string
        func consumer(idle: Int) throws -> Process {
            let p = Process()
            p.executableURL = FleetConsumer.python
            p.arguments = [FleetConsumer.script.path, "--nats", server.url, "--durable", "test-fleet", "--state", view,
                           "--idle-exit", String(idle)]
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: work("consumer.log").string, isDirectory: false))
            log.seekToEndOfFile()
            p.standardOutput = log
            p.standardError = log
            try p.run()
            return p
        }
        _ = try work.write("consumer.log", [])
        func consumerLog() -> String { (try? String(contentsOfFile: work("consumer.log").string, encoding: .utf8)) ?? "" }
        func merged() throws -> [String: [String: String]] {
            let data = try FileDescriptor.readAll(PathBytes(view), limit: 1 << 26)
            var out: [String: [String: String]] = [:]
            for (name, library) in try JSONValue.parse(data)["libraries"]?.objectValue ?? [:] {
                var assets: [String: String] = [:]
                for (id, a) in library["assets"]?.objectValue ?? [:] {
                    assets[id] = "\(a["path"]?.stringValue ?? "") favorite=\(a["isFavorite"]?.boolValue ?? false)"
                }
                out[name] = assets
            }
            return out
        }
        func expected() throws -> [String: [String: String]] {
            Dictionary(uniqueKeysWithValues: try names.enumerated().map { ($0.element, try Self.library(daemons[$0.offset])) })
        }

        /// Waits until library `n` holds `present` and not `absent` (photod idle can come before
        /// the watcher's batch), and photod is idle.
        func indexed(_ n: Int, _ present: String, not absent: String) throws {
            try daemons[n].waitFor("\(present) in, \(absent) out") { _ in
                let paths = try daemons[n].idsByPath()
                return paths[libs[n](present).string] != nil && paths[libs[n](absent).string] == nil
            }
            try daemons[n].waitForIdle()
        }

        // First run: both libraries read whole; then changes in both while it follows them.
        var running = try consumer(idle: 600)
        try eventually("the consumer following the stream:\n\(consumerLog())", timeout: .seconds(60)) {
            if !running.isRunning { throw HarnessError("the consumer exited:\n\(consumerLog())") }
            return consumerLog().contains("following PHOTOD")
        }
        for (n, lib) in libs.enumerated() {
            for i in 0..<4 { _ = try lib.write("y/\(i).jpg", Library.jpeg(date: "2021:0\(n + 1):0\(i + 1) 12:00:00")) }
            try daemons[n].waitForAssets(8 + n)
            let some = try #require(try daemons[n].allAssets().first?["id"]?.stringValue)
            _ = try daemons[n].call("assets.setFavorite", ["ids": [.string(some)], "favorite": true])
            try FileManager.default.moveItem(atPath: lib("y/0.jpg").string, toPath: lib("y/moved.jpg").string)
        }
        for n in libs.indices { try indexed(n, "y/moved.jpg", not: "y/0.jpg") }
        try caughtUp()
        // Killed once the server has its acknowledgments (a message fetched and not acknowledged
        // would come again only after the consumer's 60 s ack wait), changes meanwhile, started
        // again: its durable consumer resumes.
        try eventually("the consumer to acknowledge every message") {
            try Self.jetStream(nats, "CONSUMER.INFO.PHOTOD.test-fleet")
        } until: { $0["num_pending"]?.intValue == 0 && $0["num_ack_pending"]?.intValue == 0 }
        Glibc.kill(running.processIdentifier, SIGKILL)
        running.waitUntilExit()
        for (n, lib) in libs.enumerated() {
            try FileManager.default.removeItem(atPath: lib("x/0.jpg").string)
            _ = try lib.write("z/new.jpg", Library.jpeg(date: "2022:0\(n + 1):01 12:00:00"))
            try indexed(n, "z/new.jpg", not: "x/0.jpg")
        }
        try caughtUp()
        let logged = consumerLog().count
        running = try consumer(idle: 3)
        running.waitUntilExit()
        #expect(try merged() == (try expected()), "the merged view after a kill -9 and a restart:\n\(consumerLog())")
        let restarted = String(consumerLog().dropFirst(logged))
        #expect(restarted.contains("message(s)") && !restarted.contains("read whole"),
                "resumed through its durable consumer, not by reading the libraries again:\n\(restarted)")

        // A resync: lib-a's bridge away while more change sets are made than photod then keeps.
        bridges[0].kill9()
        let before = try #require(try daemons[0].call("changes.currentToken")["token"]?.int64Value)
        let count = try daemons[0].allAssets().count
        for i in 0..<4 {
            _ = try libs[0].write("w/\(i).jpg", Library.jpeg(date: "2023:01:0\(i + 1) 12:00:00"))
            try daemons[0].waitForAssets(count + i + 1)
        }
        #expect(daemons[0].stop() == 0)
        daemons[0] = try DaemonProcess(libraries: [libs[0].path], state: states[0], arguments: ["--journal-max-changes", "1"])
        try daemons[0].waitForIdle()
        try daemons[0].waitForJournal(prunedTo: Int(before) + 2)
        bridges[0] = try BridgeProcess(socket: daemons[0].socket, nats: server.url, name: "lib-a", state: states[0])
        try Self.waitForMessage(nats, subject: "photod.lib-a.resync", "a resync event:\n\(bridges[0].log)")
        running = try consumer(idle: 3)
        running.waitUntilExit()
        #expect(consumerLog().contains("lib-a: read whole (resync: tokenExpired)"), "\(consumerLog())")
        #expect(try merged() == (try expected()), "the merged view after a resync:\n\(consumerLog())")
        #expect(try merged().keys.sorted() == names)
        for daemon in daemons { _ = daemon.stop() }
    }

    @Test("docs/DISTRIBUTED.md's authorization recipe, as printed: the bridges under their user, a gallery that reads but cannot reach the writing bridge, a tagger that writes")
    func authorizationRecipe() throws {
        let doc = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/DISTRIBUTED.md"), encoding: .utf8)
        let start = try #require(doc.range(of: "<!-- example: nats-authorization -->\n```\n"), "no example in docs/DISTRIBUTED.md")
        let rest = doc[start.upperBound...]
        let recipe = String(rest[..<(try #require(rest.range(of: "```"))).lowerBound])
        // An administrator besides the recipe's users, for the test's own look at the stream.
        let configuration = recipe.replacingOccurrences(of: "users = [", with: "users = [\n    {user: admin, password: $ADMIN_PASS}")
        let lib = try TemporaryDirectory("nats-auth-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-auth")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-auth-store")
        defer { store.remove() }
        _ = try lib.write("1.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let passwords = ["BRIDGE_PASS": "b-\(UInt32.random(in: 0 ... .max))", "GALLERY_PASS": "g-\(UInt32.random(in: 0 ... .max))",
                         "TAGGER_PASS": "t-\(UInt32.random(in: 0 ... .max))", "ADMIN_PASS": "a-\(UInt32.random(in: 0 ... .max))"]
        let port = try NATSServerProcess.freePort()
        func url(_ user: String) -> String { "nats://\(user):\(passwords[user.uppercased() + "_PASS"]!)@127.0.0.1:\(port)" }
        let server = try NATSServerProcess(store: store, configuration: configuration, port: port, environment: passwords,
                                           probe: url("admin"))
        _ = server
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let reader = try BridgeProcess(socket: daemon.socket, nats: url("bridge"), name: "home", state: state)
        let writer = try BridgeProcess(socket: daemon.socket, nats: url("bridge"), name: "home-w", state: state,
                                       arguments: ["--allow-writes", "--rpc-only"])
        try reader.waitSubscribed()
        try reader.waitServing()
        try writer.waitServing()
        // The reading bridge publishes under its restricted user.
        _ = try lib.write("2.jpg", Library.jpeg(date: "2021:01:02 10:00:00"))
        try daemon.waitForAssets(2)
        let admin = try NATSClient(urls: url("admin"), name: "admin")
        try Self.waitCaughtUp(admin, daemon: daemon, subject: "photod.home.changes")
        #expect(try Self.messages(admin, subject: "photod.home-w.changes").isEmpty, "--rpc-only publishes nothing")

        let one = try #require(try daemon.allAssets().first?["id"]?.stringValue)
        let read = Array(#"{"jsonrpc":"2.0","id":1,"method":"assets.fetch","params":{"limit":1}}"#.utf8)
        let write = Array(#"{"jsonrpc":"2.0","id":2,"method":"assets.addKeywords","params":{"ids":["\#(one)"],"source":"tagger","keywords":["dog"]}}"#.utf8)
        let gallery = try NATSClient(urls: url("gallery"), name: "gallery")
        #expect(try JSONValue.parse(gallery.request(subject: "photod.home.rpc", payload: read).payload)["result"]?["assets"] != nil)
        #expect(try JSONValue.parse(gallery.request(subject: "photod.home.rpc", payload: write).payload)["error"]?["code"]?.intValue == -32003)
        #expect(throws: NATSError.self, "the gallery may not publish on the writing bridge's subject") {
            try gallery.request(subject: "photod.home-w.rpc", payload: write, timeout: .seconds(2))
        }
        let tagger = try NATSClient(urls: url("tagger"), name: "tagger")
        let tagged = try JSONValue.parse(tagger.request(subject: "photod.home-w.rpc", payload: write).payload)
        #expect(tagged["result"]?["updated"]?.arrayValue == [.string(one)], "\(tagged)")
        #expect(try daemon.call("assets.fetch", ["predicate": "keywords CONTAINS \"dog\""])["total"]?.intValue == 1)
        // The writing bridge's status: connected, publishing nothing.
        let wStatus = try runProcess(TestPaths.products.appendingPathComponent("photod-nats"),
                                     ["--status", "--json", "--nats", url("admin"), "--name", "home-w"])
        let w = try JSONValue.parse(wStatus.stdout)
        #expect(w["nats"]?["connected"]?.boolValue == true && w["subject"]?.isNull == true && w["rpc"]?["allowWrites"]?.boolValue == true,
                "\(wStatus.stdout)")
        // Nobody but the bridge may publish change sets.
        #expect(throws: NATSError.self) {
            try tagger.publish(subject: "photod.home.changes", payload: Array("{}".utf8), headers: [], timeout: .seconds(2))
        }
        _ = daemon.stop()
    }

    @Test("TLS with --tls-ca: the bridge publishes and serves through a server whose certificate that CA signed, and is refused without it",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "openssl is not installed"))
    func tls() throws {
        let lib = try TemporaryDirectory("nats-tls-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-tls")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-tls-store")
        defer { store.remove() }
        let pki = try TemporaryDirectory("nats-tls-pki")
        defer { pki.remove() }
        // A CA, and a certificate for 127.0.0.1 signed by it.
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        for args in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", pki("ca.key").string, "-out", pki("ca.pem").string,
             "-days", "2", "-subj", "/CN=photod test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", pki("server.key").string, "-out", pki("server.csr").string,
             "-subj", "/CN=127.0.0.1"],
        ] {
            let r = try runProcess(openssl, args)
            #expect(r.status == 0, "\(r.stderr)")
        }
        _ = try pki.write("ext.cnf", Array("subjectAltName=IP:127.0.0.1\n".utf8))
        let signed = try runProcess(openssl, ["x509", "-req", "-in", pki("server.csr").string, "-CA", pki("ca.pem").string,
                                              "-CAkey", pki("ca.key").string, "-CAcreateserial", "-out", pki("server.pem").string,
                                              "-days", "2", "-extfile", pki("ext.cnf").string])
        #expect(signed.status == 0, "\(signed.stderr)")
        let port = try NATSServerProcess.freePort()
        let server = try NATSServerProcess(store: store, configuration: """
            tls { cert_file: "\(pki("server.pem").string)", key_file: "\(pki("server.key").string)" }
            """, port: port, wait: false)
        let url = "tls://127.0.0.1:\(port)"
        try NATSServerProcess.waitUntilUp("the TLS server") { try NATSClient(urls: url, name: "probe", caFile: pki("ca.pem").string) }
        _ = server
        #expect(throws: NATSError.self, "an unknown CA is refused") { try NATSClient(urls: url, name: "no-ca") }
        _ = try lib.write("1.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let bridge = try BridgeProcess(socket: daemon.socket, nats: url, name: "tls", state: state,
                                       arguments: ["--tls-ca", pki("ca.pem").string])
        try bridge.waitSubscribed()
        try bridge.waitServing()
        _ = try lib.write("2.jpg", Library.jpeg(date: "2021:01:02 10:00:00"))
        try daemon.waitForAssets(2)
        let nats = try NATSClient(urls: url, name: "test", caFile: pki("ca.pem").string)
        try Self.waitCaughtUp(nats, daemon: daemon, subject: "photod.tls.changes")
        let answer = try JSONValue.parse(nats.request(subject: "photod.tls.rpc",
                                                      payload: Array(#"{"jsonrpc":"2.0","id":1,"method":"changes.currentToken"}"#.utf8)).payload)
        #expect(answer["result"]?["token"]?.int64Value == (try daemon.call("changes.currentToken")["token"]?.int64Value))
        // Without the CA the bridge cannot connect, and says why.
        let refused = try BridgeProcess(socket: daemon.socket, nats: url, name: "tls-no-ca", state: state)
        try eventually("the bridge without the CA to say it cannot connect:\n\(refused.log)", timeout: .seconds(20)) {
            refused.log.contains("cannot connect to NATS")
        }
        _ = daemon.stop()
    }

    @Test("--creds: a server in operator mode (JWTs made as nsc makes them) takes the bridge's user JWT and NKey seed, and refuses it without them",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/cryptography"),
                   "python3-cryptography is not installed (scripts/install-deps --tests installs it)"))
    func credentials() throws {
        let lib = try TemporaryDirectory("nats-creds-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-creds")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-creds-store")
        defer { store.remove() }
        let keys = try TemporaryDirectory("nats-creds-keys")
        defer { keys.remove() }
        let port = try NATSServerProcess.freePort()
        let made = try runProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                  [TestPaths.packageRoot.appendingPathComponent("Tests/Support/nats-operator.py").path,
                                   keys.path.string])
        #expect(made.status == 0, "\(made.stderr)")
        let configuration = try String(contentsOfFile: keys("server.conf").string, encoding: .utf8)
        let creds = keys("user.creds").string
        let url = "nats://127.0.0.1:\(port)"
        // -D: the server logs why it refuses a connection.
        let server = try NATSServerProcess(store: store, configuration: configuration, port: port, arguments: ["-D"], wait: false)
        try NATSServerProcess.waitUntilUp("the operator-mode server") { try NATSClient(urls: url, name: "probe", credentials: creds) }
        #expect(throws: NATSError.self, "no credentials, no connection") { try NATSClient(urls: url, name: "anonymous") }
        _ = try lib.write("1.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let bridge = try BridgeProcess(socket: daemon.socket, nats: url, name: "jwt", state: state, arguments: ["--creds", creds])
        try bridge.waitSubscribed()
        try bridge.waitServing()
        _ = try lib.write("2.jpg", Library.jpeg(date: "2021:01:02 10:00:00"))
        try daemon.waitForAssets(2)
        let nats = try NATSClient(urls: url, name: "test", credentials: creds)
        try Self.waitCaughtUp(nats, daemon: daemon, subject: "photod.jwt.changes")
        let answer = try JSONValue.parse(nats.request(subject: "photod.jwt.rpc",
                                                      payload: Array(#"{"jsonrpc":"2.0","id":1,"method":"changes.currentToken"}"#.utf8)).payload)
        #expect(answer["result"]?["token"] != nil, "\(answer)")
        let check = try runProcess(TestPaths.products.appendingPathComponent("photod-nats"),
                                   ["--check", "--socket", daemon.socket.string, "--nats", url, "--name", "jwt", "--creds", creds])
        #expect(check.status == 0 && check.stdout.contains("up to token"),
                "\(check.stdout)\nnats-server's log (-D):\n\(server.log.suffix(6000))")
        withExtendedLifetime(server) {}
        _ = daemon.stop()
    }

    @Test("kill -9 of the bridge, photod and nats-server at random moments while files keep coming: the stream's tokens are exactly the journal's, once each, in order")
    func randomKills() throws {
        let lib = try TemporaryDirectory("nats-chaos-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-chaos")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-chaos-store")
        defer { store.remove() }
        _ = try lib.write("0.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let server = try NATSServerProcess(store: store)
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        var bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "chaos", state: state)
        try bridge.waitSubscribed()
        // Files keep coming, one every 5-25 ms, on a thread of their own, whatever is down.
        let root = lib.path.string
        let photos = (0..<300).map { Library.jpeg(date: String(format: "2021:03:%02d 10:%02d:%02d", $0 / 100 + 1, $0 / 60 % 60, $0 % 60)) }
        let written = Locked(0)
        let writer = Thread {
            for (i, bytes) in photos.enumerated() {
                try? FileManager.default.createDirectory(atPath: "\(root)/d\(i / 50)", withIntermediateDirectories: true)
                try? TemporaryDirectory.writeFile("\(root)/d\(i / 50)/\(i).jpg", bytes)
                written.withLock { $0 += 1 }
                usleep(UInt32.random(in: 5_000...25_000))  // the pace of the files coming in is the test's input
            }
        }
        writer.start()
        /// Waits while `n` more files come in (or the last ones): the random moments are counted
        /// in files, so that changes always come between two kills, however slow the machine.
        func whileFilesCome(_ n: Int) throws {
            let target = min(written.withLock { $0 } + n, photos.count)
            try eventually("\(n) more files written") { written.withLock { $0 } } until: { $0 >= target }
        }
        var kills: [String] = []
        while written.withLock({ $0 }) < photos.count {
            try whileFilesCome(Int.random(in: 13...47))  // about 200-700 ms
            switch Int.random(in: 0..<3) {
            case 0:
                bridge.kill9()
                bridge = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "chaos", state: state)
                kills.append("bridge")
            case 1:
                daemon.kill9()
                daemon = try DaemonProcess(libraries: [lib.path], state: state)
                kills.append("photod")
            default:
                server.kill9()
                try whileFilesCome(Int.random(in: 7...33))  // about 100-500 ms
                try server.start()
                kills.append("nats-server")
            }
        }
        try daemon.waitForAssets(301)
        let nats = try NATSClient(urls: server.url, name: "test")
        try Self.waitCaughtUp(nats, daemon: daemon, subject: "photod.chaos.changes")
        let got = try Self.messages(nats, subject: "photod.chaos.changes").map(\.token)
        let current = try #require(try daemon.call("changes.currentToken")["token"]?.int64Value)
        #expect(got == (try daemon.journalTokens(after: start)) && got.last == current, "kills \(kills): \(got); bridge log:\n\(bridge.log)")
        #expect(kills.count >= 3, "\(kills)")
        _ = daemon.stop()
    }
}
