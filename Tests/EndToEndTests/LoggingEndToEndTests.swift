import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A fake journald: a datagram socket at a path, drained by a thread of its own (the kernel
/// queues only `net.unix.max_dgram_qlen` datagrams, often 10; a daemon logging into a full
/// queue blocks). Every datagram is kept, decoded.
final class FakeJournald: Sendable {
    let path: String
    private let fd: Int32
    private let received = Locked<[[(name: String, value: [UInt8])]]>([])

    init(path: String) throws {
        self.path = path
        fd = try bindDatagramSocket(path)
        let descriptor = fd
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return }
                if let fields = JournalFormat.decode(Array(buffer[0..<n])) { received.withLock { $0.append(fields) } }
            }
        }
    }

    /// Stops receiving and removes the socket: journald is gone.
    func stop() {
        unlink(path)
        shutdown(fd, Int32(SHUT_RDWR))
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }

    /// Every record received, each as field name → value (the first value of a repeated name).
    var records: [[String: String]] {
        received.withLock { all in
            all.map { fields in
                var record: [String: String] = [:]
                for f in fields where record[f.name] == nil { record[f.name] = String(decoding: f.value, as: UTF8.self) }
                return record
            }
        }
    }

    /// Waits until `condition` holds for the records received so far.
    func waitFor(_ what: String, timeout: Duration = .seconds(30), _ condition: ([[String: String]]) -> Bool) throws {
        try eventually(what, timeout: timeout) { records } until: { condition($0) }
    }
}

/// Whether photod's `main.swift` builds its logger with `Logger.daemon` (the sink chosen from
/// the environment); until it does, the journal test has nothing to observe.
let photodUsesDaemonLogger: Bool = {
    let main = TestPaths.packageRoot.appendingPathComponent("Sources/photod/main.swift")
    return (try? String(contentsOf: main, encoding: .utf8))?.contains("Logger.daemon(") ?? false
}()

@Suite("Logging, end to end", .serialized)
struct LoggingEndToEndTests {
    @Test("PHOTOD_JOURNAL_SOCKET: records arrive as native journal datagrams with their fields; PHOTOD_DEBUG switches one facility to debug; with the journal gone, records go to stderr",
          .enabled(if: photodUsesDaemonLogger, "Sources/photod/main.swift does not call Logger.daemon yet"))
    func journal() throws {
        let lib = try TemporaryDirectory("log-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("log-state")
        defer { state.remove() }
        try lib.write("2020/a.jpg", Library.jpeg(date: "2020:01:02 03:04:05"))
        let journal = try FakeJournald(path: state("journal.sock").string)
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--log-level", "warning"],
                                       environment: ["PHOTOD_JOURNAL_SOCKET": journal.path, "PHOTOD_DEBUG": "pipeline"])
        defer { daemon.stop() }
        try daemon.waitForIdle()

        try journal.waitFor("a pipeline debug record") { records in
            records.contains { $0["PHOTOD_FACILITY"] == "pipeline" && $0["PRIORITY"] == "7" }
        }
        let records = journal.records
        let debug = try #require(records.first { $0["PHOTOD_FACILITY"] == "pipeline" && $0["PRIORITY"] == "7" })
        #expect(debug["SYSLOG_IDENTIFIER"] == "photod")
        #expect(debug["MESSAGE"]?.isEmpty == false)
        #expect(debug["CODE_FILE"]?.hasPrefix("PhotoPipeline/") == true)
        #expect(debug["CODE_LINE"].flatMap(Int.init) != nil)
        #expect(debug["CODE_FUNC"]?.isEmpty == false)
        // --log-level warning holds for the facilities PHOTOD_DEBUG does not name.
        #expect(!records.contains { $0["PHOTOD_FACILITY"] != "pipeline" && ($0["PRIORITY"].flatMap(Int.init) ?? 0) > 4 })
        // Nothing went to stderr while the journal listened.
        #expect(!daemon.log.contains("[pipeline]"), "\(daemon.log)")

        // journald goes away: the next records reach stderr, after one warning saying so.
        journal.stop()
        try lib.write("2020/b.jpg", Library.jpeg(date: "2020:01:03 03:04:05"))
        try daemon.waitForLog("debug: [pipeline]")
        #expect(daemon.log.contains("cannot send to the journal at '\(journal.path)'"))
        #expect(daemon.stop() == 0)
    }

    @Test("A configuration error under the journal: logged at priority err (journalctl -p err shows it), exit 64; on a terminal, the usage text on stderr")
    func configurationError() throws {
        let state = try TemporaryDirectory("log-config")
        defer { state.remove() }
        let config = state("photod.conf")
        try Data("library = /srv/photos\nno-such-key = 1\n".utf8).write(to: URL(fileURLWithPath: config.string))
        let journal = try FakeJournald(path: state("journal.sock").string)
        let logged = try run("photod", ["--config", config.string], environment: ["PHOTOD_JOURNAL_SOCKET": journal.path])
        #expect(logged.status == 64)
        try journal.waitFor("the configuration error") { records in
            records.contains { $0["PRIORITY"] == "3" && $0["MESSAGE"]?.contains("configuration error, not starting") == true
                && $0["MESSAGE"]?.contains("unknown key 'no-such-key'") == true }
        }
        #expect(logged.stderr.isEmpty, "with the journal listening nothing goes to stderr: \(logged.stderr)")
        let plain = try run("photod", ["--config", config.string], environment: [:])
        #expect(plain.status == 64)
        #expect(plain.stderr.contains("unknown key 'no-such-key'") && plain.stderr.contains("Usage: photod"))
    }

    @Test("--check-config: exit 0 and what photod would use when valid; exit 64 and why when not, at err in the journal (systemctl reload runs it)")
    func checkConfig() throws {
        let state = try TemporaryDirectory("log-check")
        defer { state.remove() }
        let config = state("photod.conf")
        try Data("library = /srv/photos\ndatabase = \(state("x.db").string)\n".utf8).write(to: URL(fileURLWithPath: config.string))
        let valid = try run("photod", ["--config", config.string, "--check-config"], environment: [:])
        #expect(valid.status == 0)
        #expect(valid.stdout.contains("the configuration is valid: libraries /srv/photos; database \(state("x.db").string)"))
        #expect(!FileManager.default.fileExists(atPath: state("x.db").string), "a check opens nothing")
        try Data("library = /srv/photos\nworkers = 0\n".utf8).write(to: URL(fileURLWithPath: config.string))
        let journal = try FakeJournald(path: state("journal.sock").string)
        let invalid = try run("photod", ["--config", config.string, "--check-config"], environment: ["PHOTOD_JOURNAL_SOCKET": journal.path])
        #expect(invalid.status == 64)
        try journal.waitFor("the check's error") { records in
            records.contains { $0["PRIORITY"] == "3" && $0["MESSAGE"]?.hasPrefix("the configuration is not valid: --workers") == true }
        }
    }
}
