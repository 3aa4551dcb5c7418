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

/// A fake service manager's notification socket: a datagram socket at a path, every datagram
/// kept with the time it arrived (what systemd would read from `NOTIFY_SOCKET`).
final class FakeNotifySocket: Sendable {
    let path: String
    private let fd: Int32
    private let received = Locked<[(time: ContinuousClock.Instant, text: String)]>([])
    private let onReady = Locked<(@Sendable () -> Void)?>(nil)

    init(path: String) throws {
        self.path = path
        fd = try bindDatagramSocket(path)
        let descriptor = fd
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return }
                let text = String(decoding: buffer[0..<n], as: UTF8.self)
                received.withLock { $0.append((.now, text)) }
                if text.split(separator: "\n").contains("READY=1"), let hook = onReady.withLock({ $0 }) { hook() }
            }
        }
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }

    /// Runs `hook` on the receiving thread when a datagram says `READY=1` (before reading more).
    func whenReady(_ hook: @escaping @Sendable () -> Void) { onReady.withLock { $0 = hook } }

    var messages: [(time: ContinuousClock.Instant, text: String)] { received.withLock { $0 } }

    /// Every `KEY=value` assignment received, in order.
    var assignments: [(time: ContinuousClock.Instant, key: String, value: String)] {
        messages.flatMap { m in
            m.text.split(separator: "\n").compactMap { line -> (ContinuousClock.Instant, String, String)? in
                guard let eq = line.firstIndex(of: "=") else { return nil }
                return (m.time, String(line[..<eq]), String(line[line.index(after: eq)...]))
            }
        }
    }

    /// Waits until `condition` holds, failing with every datagram received.
    func waitFor(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) throws {
        try eventually("\(what); received: \(messages.map(\.text))", timeout: timeout, condition)
    }

    /// When each `WATCHDOG=1` since `start` arrived.
    func pings(since start: ContinuousClock.Instant) -> [ContinuousClock.Instant] {
        assignments.filter { $0.key == "WATCHDOG" && $0.time >= start }.map(\.time)
    }
}

@Suite("systemd integration, end to end", .serialized)
struct ServiceEndToEndTests {
    @Test("READY=1 only once the socket answers; STATUS= progresses; watchdog pings stop while the pipeline is wedged and resume; STOPPING=1 and a farewell on SIGTERM, exit 0")
    func notifyAndWatchdog() throws {
        let lib = try TemporaryDirectory("svc-lib")
        defer { lib.remove() }
        try Library.generate(lib, count: 300)
        let state = try TemporaryDirectory("svc")
        defer { state.remove() }
        let notify = try FakeNotifySocket(path: state("notify.sock").string)
        let socketPath = state("photod.sock")
        // When READY=1 arrives, the socket must already answer.
        let answeredAtReady = Locked<Bool?>(nil)
        notify.whenReady {
            let ok = (try? PhotoConnection(socket: socketPath, timeout: .seconds(5)).call("rpc.hello"))?["protocolVersion"] != nil
            answeredAtReady.withLock { if $0 == nil { $0 = ok } }
        }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, environment: [
            "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "600000", "PHOTOD_TEST_HOOKS": "1",
        ])
        try notify.waitFor("READY=1") { answeredAtReady.withLock { $0 } != nil }
        #expect(answeredAtReady.withLock { $0 } == true)
        try daemon.waitForIdle()
        try notify.waitFor("the watching status") {
            notify.assignments.contains { $0.key == "STATUS" && $0.value == "Watching 300 assets in 1 root" }
        }
        let statuses = notify.assignments.filter { $0.key == "STATUS" }.map(\.value)
        #expect(statuses.first.map { ["Starting the first scan", "Indexing", "Checking", "Watching"].contains(where: $0.hasPrefix) } == true, "\(statuses)")

        // Pings about every 0.3 s while idle: the third within 1.5 s.
        let idleFrom = ContinuousClock.now
        try notify.waitFor("three pings while idle") { notify.pings(since: idleFrom).count >= 3 }
        let third = notify.pings(since: idleFrom)[2]
        #expect(third - idleFrom <= .milliseconds(1500), "three pings took \(third - idleFrom)")

        // Wedged for 2.5 s with work pending: no ping for most of it, then they resume (by 4 s).
        let client = try daemon.connect()
        let wedgedFrom = ContinuousClock.now
        _ = try client.call("test.wedge", ["seconds": 2.5])
        try lib.write("late/new.jpg", Library.jpeg(date: "2021:01:01 00:00:00"))  // work that cannot proceed
        try notify.waitFor("a ping after the wedge") { notify.pings(since: wedgedFrom).contains { $0 - wedgedFrom > .milliseconds(2600) } }
        let pings = notify.pings(since: wedgedFrom)
        let resumed = pings.first { $0 - wedgedFrom > .milliseconds(2600) }!
        #expect(resumed - wedgedFrom < .seconds(4), "the first ping after the wedge came \(resumed - wedgedFrom) after it began")
        var longestGap: Duration = .zero
        var previous = wedgedFrom
        for t in pings {
            longestGap = max(longestGap, t - previous)
            previous = t
        }
        #expect(longestGap >= .milliseconds(1800), "longest gap between pings while wedged: \(longestGap)")
        #expect(daemon.log.contains("watchdog pings withheld"))

        // SIGTERM: STOPPING=1, a farewell to connected clients, exit 0 in time.
        let watcher = try daemon.connect()
        _ = try watcher.call("changes.subscribe")
        watcher.setTimeout(.seconds(10))
        let stopAsked = ContinuousClock.now
        #expect(daemon.stop() == 0)
        #expect(ContinuousClock.now - stopAsked < .seconds(10))
        #expect(notify.assignments.contains { $0.key == "STOPPING" && $0.value == "1" })
        var farewell: RPCNotification?
        while farewell == nil, let n = try? watcher.nextNotification() {
            if n.method == "photod.stopping" { farewell = n }
        }
        #expect(farewell?.params?["token"]?.intValue != nil, "the client was told photod is stopping")
    }

    @Test("Socket activation: photod takes the listening socket it is passed and leaves it in place when it stops")
    func socketActivation() throws {
        let tool = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            print("skipped: \(tool) is not installed (the systemd package has it)")
            return
        }
        let lib = try TemporaryDirectory("act-lib")
        defer { lib.remove() }
        try lib.write("a.jpg", Library.jpeg(date: "2021:01:01 00:00:00"))
        let state = try TemporaryDirectory("act")
        defer { state.remove() }
        let socketPath = state("activated.sock")
        let log = state("photod.log").string
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        // systemd-socket-activate passes no environment but what -E names: under
        // scripts/sanitize, the sanitizer's settings too, as every other photod of the run has them.
        let sanitizerSettings = ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"].flatMap { name in
            ProcessInfo.processInfo.environment[name].map { ["-E", "\(name)=\($0)"] } ?? []
        }
        p.arguments = ["-l", socketPath.string, "-E", "PHOTOD_SOCKET=\(state("unused.sock").string)"] + sanitizerSettings
                    + [TestPaths.products.appendingPathComponent("photod").path,
                       "--library", lib.path.string, "--database", state("photod.db").string, "--socket", socketPath.string,
                       "--timezone", "UTC"]
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log, isDirectory: false).creating())
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer {
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                p.waitUntilExit()
            }
        }
        // The tool listens; photod starts on the first connection and answers on that socket.
        let hello = try eventually("photod to answer on the passed socket") {
            try? PhotoConnection(socket: socketPath, timeout: .seconds(10)).call("rpc.hello")
        } until: { $0 != nil }
        #expect(hello?["protocolVersion"]?.intValue == 1)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("using the listening socket passed by the service manager"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: state("unused.sock").string))
        // systemd-socket-activate execs photod in its own process: the signal reaches photod.
        kill(p.processIdentifier, SIGTERM)
        let stopped = (try? p.waitForExit(timeout: .seconds(10))) != nil
        #expect(stopped, "photod did not stop on SIGTERM within 10 s")
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        // The socket belongs to the service manager: photod does not remove it.
        #expect(FileManager.default.fileExists(atPath: socketPath.string))
    }
    @Test("A scan's reader threads run 5 nice steps below the process; the image workers at its priority (a request during an index comes first)")
    func threadPriorities() throws {
        let lib = try TemporaryDirectory("prio-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("prio")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, environment: ["PHOTOD_TEST_HOOKS": "1"])
        try daemon.waitForIdle()
        // With the writer wedged, a scan's readers fill the queue to it and wait: alive to look at.
        // The files are made beside the library and moved in as one folder: one scan meets them
        // all at once (made in place, the watcher's reads of the first ones, or a poll's, would
        // be held behind the wedge, and the readers of a scan of a few would be gone already).
        _ = try daemon.call("test.wedge", ["seconds": .double(6)])
        let staging = try TemporaryDirectory("prio-staging")
        defer { staging.remove() }
        try Library.generate(staging, count: 3000)
        #expect(rename(staging("2020").string, lib("2020").string) == 0)
        let socket = daemon.socket
        let rescan = Thread { _ = try? PhotoConnection(socket: socket, timeout: .seconds(60)).call("library.rescan") }
        rescan.start()
        let pid = daemon.process.processIdentifier
        /// (name, nice) of every thread of photod, from /proc/PID/task/TID/{comm,stat}.
        func threads() -> [(name: String, nice: Int)] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.compactMap { tid in
                guard let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8),
                      let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return nil }
                // After the command's ")": state is field 3, nice field 19.
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                guard fields.count > 16, let nice = Int(fields[16]) else { return nil }
                return (comm.trimmingCharacters(in: .newlines), nice)
            }
        }
        let seen = try eventually("the scan's reader threads", timeout: .seconds(5)) { threads() } until: {
            $0.contains { $0.name.hasPrefix("photod-read") }
        }
        let base = try #require(seen.first { $0.name == "photod" }?.nice, "\(seen)")
        let readers = seen.filter { $0.name.hasPrefix("photod-read") }
        let images = seen.filter { $0.name.hasPrefix("photod-image") }
        #expect(!readers.isEmpty && readers.allSatisfy { $0.nice == min(base + 5, 19) }, "\(seen)")
        #expect(!images.isEmpty && images.allSatisfy { $0.nice == base }, "\(seen)")
        #expect(seen.first { $0.name == "photod-precache" }?.nice == 19)
        _ = try daemon.waitForAssets(3000)
        #expect(daemon.stop() == 0)
    }

    @Test("SIGHUP re-reads the configuration file: a new library root is indexed by a fresh photod in the same process, on the same socket; a broken file changes nothing")
    func reload() throws {
        let first = try TemporaryDirectory("reload-a")
        defer { first.remove() }
        let second = try TemporaryDirectory("reload-b")
        defer { second.remove() }
        try first.write("a.jpg", Library.jpeg(date: "2021:01:01 00:00:00"))
        try second.write("b1.jpg", Library.jpeg(date: "2021:02:01 00:00:00"))
        try second.write("b2.jpg", Library.jpeg(date: "2021:02:02 00:00:00"))
        let state = try TemporaryDirectory("reload")
        defer { state.remove() }
        let config = state("photod.conf").string
        func writeConfig(_ text: String) throws {
            let handle = try #require(FileHandle(forWritingAtPath: config) ?? {
                _ = FileManager.default.createFile(atPath: config, contents: nil)
                return FileHandle(forWritingAtPath: config)
            }())
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(text.utf8))
            try handle.close()
        }
        try writeConfig("# test\nlibrary = \(first.path.string)\n")
        let notify = try FakeNotifySocket(path: state("notify.sock").string)
        let daemon = try DaemonProcess(libraries: [], state: state, arguments: ["--config", config],
                                       environment: ["NOTIFY_SOCKET": notify.path])
        try daemon.waitForIdle()
        #expect(try daemon.allAssets().count == 1)
        let pid = daemon.process.processIdentifier
        let subscriber = try daemon.connect()
        _ = try subscriber.call("changes.subscribe")
        subscriber.setTimeout(.seconds(10))

        // A second root: RELOADING=1, the clients are told, the same process comes back READY.
        try writeConfig("library = \(first.path.string)\nlibrary = \(second.path.string)\n")
        let readies = notify.assignments.filter { $0.key == "READY" }.count
        #expect(kill(pid, SIGHUP) == 0)
        var told: RPCNotification?
        while told == nil, let n = try? subscriber.nextNotification() {
            if n.method == "photod.reloading" { told = n }
        }
        #expect(told != nil, "subscribers are told before the connection closes")
        try notify.waitFor("READY=1 after the reload") { notify.assignments.filter { $0.key == "READY" }.count > readies }
        #expect(notify.assignments.contains { $0.key == "RELOADING" && $0.value == "1" })
        // sd_notify(3): RELOADING=1 with the monotonic time it began (Type=notify-reload needs it).
        let reloadingMessage = try #require(notify.messages.first { $0.text.split(separator: "\n").contains("RELOADING=1") })
        let usec = reloadingMessage.text.split(separator: "\n").first { $0.hasPrefix("MONOTONIC_USEC=") }
            .flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) }
        #expect(usec.map { $0 > 0 && $0 <= Monotonic.nanoseconds / 1000 } == true, "\(reloadingMessage.text)")
        #expect(daemon.process.isRunning && daemon.process.processIdentifier == pid)
        try daemon.waitForIdle()
        let status = try daemon.call("library.status")
        #expect(status["pid"]?.intValue == Int(pid))
        #expect(try daemon.allAssets().count == 3)
        #expect(daemon.log.contains("restarting in place with the new configuration"))
        // Still called photod (it execs its own path, not /proc/self/exe, which named it `exe`).
        #expect((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "photod\n")

        // A broken file: nothing changes, READY=1 says why.
        try writeConfig("library = \(first.path.string)\nno-such-key = 1\n")
        let before = notify.assignments.filter { $0.key == "READY" }.count
        #expect(kill(pid, SIGHUP) == 0)
        try notify.waitFor("READY=1 after the refused reload") { notify.assignments.filter { $0.key == "READY" }.count > before }
        #expect(notify.assignments.contains { $0.key == "STATUS" && $0.value.hasPrefix("Reload failed") })
        #expect(try daemon.allAssets().count == 3)
        // The reason stays at the head of the status line until a reload succeeds (the status is
        // refreshed every 2 s: a new file changes it meanwhile, the reason stays).
        try first.write("a2.jpg", Library.jpeg(date: "2021:01:03 00:00:00"))
        try daemon.waitForIdle()
        try notify.waitFor("a fresh status line with the new asset") {
            notify.assignments.last { $0.key == "STATUS" }?.value.contains("Watching 4 assets") == true
        }
        let kept = try #require(notify.assignments.last { $0.key == "STATUS" }).value
        #expect(kept.hasPrefix("Reload failed, running the previous configuration: ") && kept.contains("no-such-key"), "\(kept)")
        try writeConfig("library = \(first.path.string)\nlibrary = \(second.path.string)\n")
        let readiesBefore = notify.assignments.filter { $0.key == "READY" }.count
        #expect(kill(pid, SIGHUP) == 0)
        try notify.waitFor("READY=1 after the good reload") { notify.assignments.filter { $0.key == "READY" }.count > readiesBefore }
        try daemon.waitForIdle()
        try notify.waitFor("a status line without the old failure") {
            notify.assignments.last { $0.key == "STATUS" }.map { !$0.value.hasPrefix("Reload failed") && $0.value.hasPrefix("Watching") } == true
        }

        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket.string), "the socket photod made is removed when it stops")
    }

}

extension URL {
    /// Creates the file if needed and returns the URL (for `FileHandle(forWritingTo:)`).
    func creating() throws -> URL {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw HarnessError("cannot create \(path)") }
        }
        return self
    }
}
