import Foundation
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A raw line-oriented connection, for sending what a well-behaved client never would.
final class RawClient {
    let fd: FileDescriptor
    var framer = LineFramer(maxLineBytes: 64 << 20)
    var lines: [[UInt8]] = []

    init(_ socket: PathBytes) throws { fd = try UnixSocket.connect(socket) }
    deinit { fd.close() }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = try bytes.withUnsafeBytes { try fd.writeSome(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            sent += n ?? 0
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func readLine() throws -> JSONValue { try JSONValue.parse(readRawLine()) }

    /// The next line's bytes, as photod sent them.
    func readRawLine() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while lines.isEmpty {
            let n = try buffer.withUnsafeMutableBytes { try fd.readSome(into: $0) }
            guard let n, n > 0 else { throw HarnessError("connection closed") }
            for case .line(let l) in framer.append(buffer[0..<n]) { lines.append(l) }
        }
        return lines.removeFirst()
    }
}

@Suite("Protocol and CLI, end to end", .serialized)
struct ProtocolTests {
    @Test("Bad requests get JSON-RPC errors and the connection stays usable")
    func badRequests() throws {
        let state = try TemporaryDirectory("proto")
        defer { state.remove() }
        let library = try TemporaryDirectory("proto-lib")
        defer { library.remove() }
        let daemon = try DaemonProcess(libraries: [library.path], state: state)
        try daemon.waitForIdle()
        let c = try RawClient(daemon.socket)

        try c.send("this is not json\n")
        var r = try c.readLine()
        #expect(r["error"]?["code"]?.intValue == -32700)
        #expect(r["id"]?.isNull == true)

        try c.send(#"{"jsonrpc":"2.0","id":7,"method":"no.such.method"}"# + "\n")
        r = try c.readLine()
        #expect(r["error"]?["code"]?.intValue == -32601)
        #expect(r["id"]?.intValue == 7)

        try c.send(#"{"jsonrpc":"2.0","id":8,"method":"assets.fetch","params":{"limit":"ten"}}"# + "\n")
        r = try c.readLine()
        #expect(r["error"]?["code"]?.intValue == -32602)
        #expect(r["error"]?["data"]?["param"]?.stringValue == "limit")

        try c.send(#"{"jsonrpc":"1.0","id":9,"method":"library.status"}"# + "\n")
        r = try c.readLine()
        #expect(r["error"]?["code"]?.intValue == -32600)

        // A line over 1 MiB is discarded unread and answered; the next line works.
        try c.send([UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) + 10) + [0x0A])
        r = try c.readLine()
        #expect(r["error"]?["code"]?.intValue == -32600)

        // Deep nesting is refused without harm.
        try c.send(String(repeating: "[", count: 100_000) + "\n")
        r = try c.readLine()
        #expect(r["error"]?["code"]?.intValue == -32700)

        // A batch: answers in one array line; the notification gets none.
        try c.send(#"[{"jsonrpc":"2.0","id":1,"method":"rpc.hello"},{"jsonrpc":"2.0","method":"library.status"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"# + "\n")
        r = try c.readLine()
        let batch = try #require(r.arrayValue)
        #expect(batch.count == 2)
        #expect(batch[0]["result"]?["protocolVersion"]?.intValue == 1)
        #expect(batch[1]["error"]?["code"]?.intValue == -32601)

        try c.send(#"{"jsonrpc":"2.0","id":10,"method":"library.status"}"# + "\n")
        r = try c.readLine()
        #expect(r["result"]?["state"]?.stringValue == "idle")
        #expect(daemon.stop() == 0)
    }

    @Test("photoctl: help, usage errors (64), unreachable daemon (69)")
    func cliExitCodes() throws {
        let help = try run("photoctl", ["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("OVERVIEW:"))
        #expect(help.stdout.contains("SUBCOMMANDS:"))
        let sub = try run("photoctl", ["help", "status"])
        #expect(sub.status == 0)
        #expect(sub.stdout.contains("--wait"))
        #expect(try run("photoctl", ["status", "--help"]).stdout == sub.stdout)
        #expect(try run("photoctl", ["frobnicate"]).status == 64)
        #expect(try run("photoctl", ["status", "--bogus"]).status == 64)
        let gone = try run("photoctl", ["--socket", "/nonexistent/photod.sock", "status"])
        #expect(gone.status == 69)
        #expect(gone.stderr.contains("cannot reach photod"))
        #expect(gone.stdout.isEmpty)
        let timedOut = try run("photoctl", ["--socket", "/nonexistent/photod.sock", "status", "--wait", "--timeout", "1"])
        #expect(timedOut.status == 69)
    }

    @Test("photod: help, usage errors, and a second daemon on the same database is refused")
    func daemonCommandLine() throws {
        #expect(try run("photod", ["--help"]).stdout.contains("USAGE: photod --library DIR"))
        #expect(try run("photod", []).status == 64)
        #expect(try run("photod", ["--library"]).status == 64)
        #expect(try run("photod", ["--library", "/tmp", "--workers", "0"]).status == 64)

        let state = try TemporaryDirectory("dup")
        defer { state.remove() }
        let library = try TemporaryDirectory("dup-lib")
        defer { library.remove() }
        let first = try DaemonProcess(libraries: [library.path], state: state)
        try first.waitForIdle()
        let second = try run("photod", ["--library", library.path.string, "--database", first.database.string,
                                        "--socket", state("other.sock").string])
        #expect(second.status == 1)
        #expect(second.stderr.contains("in use by another photod"))
        let third = try run("photod", ["--library", library.path.string, "--database", state("other.db").string,
                                       "--socket", first.socket.string])
        #expect(third.status == 1)
        #expect(third.stderr.contains("another photod is listening"))
        #expect(first.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: first.socket.string))
    }
}

@Suite("Protocol under load, end to end", .serialized)
struct ProtocolLoadTests {
    @Test("A client that half-closes still gets its whole answer; a huge batch is capped, not fatal")
    func halfCloseAndBatches() throws {
        let lib = try TemporaryDirectory("half-lib")
        defer { lib.remove() }
        try Library.generate(lib, count: 1200)
        let state = try TemporaryDirectory("half")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()

        // echo '...' | socat - UNIX-CONNECT:...: the request, then EOF on the client's side.
        let c = try RawClient(daemon.socket)
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"assets.fetch","params":{"limit":1000}}"# + "\n")
        #expect(shutdown(c.fd.rawValue, Int32(SHUT_WR)) == 0)
        let page = try c.readLine()
        #expect(page["result"]?["assets"]?.arrayValue?.count == 1000)
        #expect(page["result"]?["nextOffset"]?.intValue == 1000)
        #expect(page["result"]?["total"]?.intValue == 1200)

        // A batch of 100 full-page fetches: answered within a byte budget, the rest `overloaded`.
        let batch = "[" + (1...100).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"assets.fetch","params":{"limit":1000}}"# }
            .joined(separator: ",") + "]\n"
        let b = try RawClient(daemon.socket)
        try b.send(batch)
        let answers = try #require(try b.readLine().arrayValue)
        #expect(answers.count == 100)
        #expect(answers.contains { $0["result"] != nil })
        #expect(answers.contains { $0["error"]?["data"]?["name"]?.stringValue == "overloaded" })
        // The connection is still fine.
        try b.send(#"{"jsonrpc":"2.0","id":"x","method":"library.status"}"# + "\n")
        #expect(try b.readLine()["id"]?.stringValue == "x")
        let rss = try String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        print("daemon peak RSS after the batch: \(rss ?? "?")")
        #expect(daemon.stop() == 0)
    }

    @Test("photoctl status --wait started before the daemon; --timeout bounds a daemon that does not answer")
    func waitAndTimeout() throws {
        let lib = try TemporaryDirectory("wait-lib")
        defer { lib.remove() }
        try Library.generate(lib, count: 50)
        let state = try TemporaryDirectory("wait")
        defer { state.remove() }
        let socket = state("photod.sock")
        let waiter = Process()
        waiter.executableURL = TestPaths.products.appendingPathComponent("photoctl")
        waiter.arguments = ["status", "--wait", "--json", "--timeout", "60", "--socket", socket.string]
        let out = Pipe()
        waiter.standardOutput = out
        try waiter.run()
        // It found no socket and pauses before its next try: its wchan is the kernel's timed wait
        // (hrtimer_nano...), or, where /proc/PID/wchan is hidden as "0", its state is S.
        try eventually("photoctl status --wait in its pause between tries") { () -> String in
            let wchan = (try? String(contentsOfFile: "/proc/\(waiter.processIdentifier)/wchan", encoding: .utf8)) ?? ""
            let stat = (try? String(contentsOfFile: "/proc/\(waiter.processIdentifier)/stat", encoding: .utf8)) ?? ""
            return "\(wchan) \(stat.split(separator: ")").last?.split(separator: " ").first ?? "?")"
        } until: { $0.hasPrefix("0 ") ? $0.hasSuffix(" S") : $0.contains("_nano") }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        waiter.waitUntilExit()
        #expect(waiter.terminationStatus == 0)
        let status = try JSONValue.parse(Array(data))
        #expect(status["state"]?.stringValue == "idle")
        #expect(status["counts"]?["assets"]?.intValue == 50)

        // A stopped daemon accepts connections (the kernel does) but never answers.
        kill(daemon.process.processIdentifier, SIGSTOP)
        let started = ContinuousClock.now
        let stuck = try run("photoctl", ["--socket", socket.string, "status", "--wait", "--timeout", "2"])
        #expect(stuck.status == 69)
        #expect(started.duration(to: .now) < .seconds(10))
        kill(daemon.process.processIdentifier, SIGCONT)
        #expect(daemon.stop() == 0)
    }
}
