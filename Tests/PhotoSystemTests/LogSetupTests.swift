#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing

/// Runs `body` with the write end of a pipe and returns what was written to it.
func captured(_ body: (CInt) -> Void) -> String {
    var fds: [CInt] = [0, 0]
    precondition(pipe(&fds) == 0)
    body(fds[1])
    close(fds[1])
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        if n <= 0 { break }
        out += buffer[..<n]
    }
    close(fds[0])
    return String(decoding: out, as: UTF8.self)
}

@Suite struct LineSinkTests {
    @Test func journalStreamLinesStartWithThePriority() {
        let text = captured { fd in
            let logger = Logger(facility: "pipeline", threshold: .debug, sink: JournalStreamSink(fd: fd))
            logger.error("broken", [("path", "/a b\nc.jpg")])
            logger.warning("w")
            logger.notice("n")
            logger.info("two\nlines")
            logger.debug("d", [("asset.id", "7")])
        }
        #expect(text == """
            <3>[pipeline] broken path="/a b\\nc.jpg"
            <4>[pipeline] w
            <5>[pipeline] n
            <6>[pipeline] two\\nlines
            <7>[pipeline] d asset.id=7

            """)
    }

    @Test func plainLinesNameTheLevel() {
        let text = captured { fd in
            let logger = Logger(facility: "store", sink: StderrSink(fd: fd))
            logger.warning("cannot read 'x', skipping", [("path", "x y"), ("odd", "\u{1}\"\\")])
            logger.debug("dropped")
        }
        #expect(text == "warning: [store] cannot read 'x', skipping path=\"x y\" odd=\"\\x1\\\"\\\\\"\n")
    }

    @Test func longLinesFromManyThreadsDoNotInterleave() {
        let text = captured { fd in
            let sink = StderrSink(fd: fd)
            DispatchQueue.concurrentPerform(iterations: 8) { i in
                sink.emit(LogRecord(level: .info, facility: "t\(i)", message: String(repeating: Character("\(i)"), count: 3_000)))
            }
        }
        let lines = text.split(separator: "\n")
        #expect(lines.count == 8)
        for line in lines {
            let body = line.split(separator: " ").last!
            #expect(Set(body).count == 1 && body.count == 3_000)
        }
    }
}

@Suite struct LogSetupTests {
    @Test func journalStreamMatchesTheDeviceAndInodeOfTheDescriptor() throws {
        let dir = try TemporaryDirectory("stream")
        defer { dir.remove() }
        let file = try dir.write("stderr.log", [])
        let fd = try FileDescriptor.open(file)
        defer { fd.close() }
        let st = try fd.stat()
        #expect(LogSetup.journalStream("\(st.device):\(st.inode)", matches: fd))
        #expect(!LogSetup.journalStream("\(st.device):\(st.inode + 1)", matches: fd))
        #expect(!LogSetup.journalStream("\(st.device + 1):\(st.inode)", matches: fd))
        for bad in [nil, "", "garbage", "\(st.device)", "\(st.device):\(st.inode):1", " \(st.device):\(st.inode)", "-1:2"] {
            #expect(!LogSetup.journalStream(bad, matches: fd))
        }
        // Another file is another inode.
        let other = try FileDescriptor.open(try dir.write("other.log", []))
        defer { other.close() }
        #expect(!LogSetup.journalStream("\(st.device):\(st.inode)", matches: other))
    }

    @Test func destinationTable() {
        let me = (device: UInt64(8), inode: UInt64(1234))
        let stream = "8:1234"
        let def = LogSetup.defaultJournalSocket
        func decide(_ env: [String: String], sockets: Set<String>) -> LogDestination {
            LogSetup.destination(environment: env, stderrIdentity: me, isWritableSocket: { sockets.contains($0) })
        }
        // A terminal (or a file) on a machine with journald: stderr, not the journal.
        #expect(decide([:], sockets: [def]) == .stderr)
        #expect(decide(["JOURNAL_STREAM": "8:999"], sockets: [def]) == .stderr)
        // Under systemd: the native protocol, else <N> lines.
        #expect(decide(["JOURNAL_STREAM": stream], sockets: [def]) == .journal(socket: def, stderrIsJournal: true))
        #expect(decide(["JOURNAL_STREAM": stream], sockets: []) == .journalStream)
        // PHOTOD_JOURNAL_SOCKET wins when usable, whatever stderr is.
        #expect(decide(["PHOTOD_JOURNAL_SOCKET": "/t/j"], sockets: ["/t/j"]) == .journal(socket: "/t/j", stderrIsJournal: false))
        #expect(decide(["PHOTOD_JOURNAL_SOCKET": "/t/j", "JOURNAL_STREAM": stream], sockets: ["/t/j", def])
                == .journal(socket: "/t/j", stderrIsJournal: true))
        #expect(decide(["PHOTOD_JOURNAL_SOCKET": "/t/gone"], sockets: [def]) == .stderr)
        #expect(decide(["PHOTOD_JOURNAL_SOCKET": "/t/gone", "JOURNAL_STREAM": stream], sockets: [def])
                == .journal(socket: def, stderrIsJournal: true))
        #expect(decide(["PHOTOD_JOURNAL_SOCKET": ""], sockets: [""]) == .stderr)
        // fstat(2) failed (stderr closed).
        #expect(LogSetup.destination(environment: ["JOURNAL_STREAM": stream], stderrIdentity: nil, isWritableSocket: { _ in true })
                == .stderr)
    }

    @Test func onlyWritableSocketsCount() throws {
        let journal = try FakeJournal()
        #expect(LogSetup.isWritableSocket(journal.path))
        let file = try journal.directory.write("plain", [])
        #expect(!LogSetup.isWritableSocket(file.string))
        #expect(!LogSetup.isWritableSocket(journal.directory.path.string))
        #expect(!LogSetup.isWritableSocket(journal.directory("missing.sock").string))
        if getuid() != 0 {  // root may write anything
            chmod(journal.path, 0o400)
            #expect(!LogSetup.isWritableSocket(journal.path))
        }
    }

    @Test func theSinkForEachDestination() throws {
        let journal = try FakeJournal()
        #expect(LogSetup.sink(for: .stderr) is StderrSink)
        #expect(LogSetup.sink(for: .journalStream) is JournalStreamSink)
        let native = try #require(LogSetup.sink(for: .journal(socket: journal.path, stderrIsJournal: true)) as? JournalSink)
        #expect(native.path == journal.path)
        #expect(native.identifier == "photod")
        // Unusable socket path: straight to the stderr sink.
        #expect(LogSetup.sink(for: .journal(socket: "/" + String(repeating: "x", count: 200), stderrIsJournal: false)) is StderrSink)
    }

    @Test func theDaemonLoggerFollowsTheEnvironment() throws {
        let journal = try FakeJournal()
        let logger = Logger.daemon(threshold: .notice,
                                   environment: ["PHOTOD_JOURNAL_SOCKET": journal.path, "PHOTOD_DEBUG": "pipeline"])
        #expect(logger.facility == "photod")
        #expect(logger.threshold == .notice)
        #expect(logger.facility("pipeline").threshold == .debug)
        #expect(logger.facility("wire").threshold == .notice)
        #expect((logger.sink as? JournalSink)?.path == journal.path)
        logger.facility("pipeline").debug("sort job committed", [("batch", "3")])
        let entry = try #require(journal.receiveFields())
        #expect(entry["MESSAGE"] == "sort job committed")
        #expect(entry["PRIORITY"] == "7")
        #expect(entry["PHOTOD_FACILITY"] == "pipeline")
        #expect(entry["PHOTOD_BATCH"] == "3")
    }
}
