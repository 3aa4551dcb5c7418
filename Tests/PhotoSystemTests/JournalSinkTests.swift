#if canImport(Glibc)
import Glibc
#endif
import PhotoSystem
import Testing

@Suite struct JournalSinkTests {
    @Test func everyFieldReachesTheJournal() throws {
        let journal = try FakeJournal()
        let sink = try JournalSink(path: journal.path, fallback: MemorySink())
        let logger = Logger(facility: "pipeline", threshold: .debug, sink: sink)
        let odd = "tab\there \u{1}\u{7F} \"quoted\" back\\slash = é 📷"
        let line = #line + 1
        logger.warning("cannot read 'a\nb.jpg', skipping", [("asset.id", "42"), ("path", "/lib/a\nb.jpg"), ("batch", "7"),
                                                            ("odd", odd), ("asset.path", "/lib/x.jpg")])
        let entry = try #require(journal.receiveFields())
        #expect(entry.names == ["PRIORITY", "SYSLOG_IDENTIFIER", "PHOTOD_FACILITY", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
                                "PHOTOD_ASSET_ID", "PHOTOD_PATH", "PHOTOD_BATCH", "PHOTOD_ODD", "PHOTOD_PATH", "MESSAGE"])
        #expect(entry["MESSAGE"] == "cannot read 'a\nb.jpg', skipping")
        #expect(entry["PRIORITY"] == "4")
        #expect(entry["SYSLOG_IDENTIFIER"] == "photod")
        #expect(entry["PHOTOD_FACILITY"] == "pipeline")
        #expect(entry["CODE_FILE"] == "PhotoSystemTests/JournalSinkTests.swift")
        #expect(entry["CODE_LINE"] == String(line))
        #expect(entry["CODE_FUNC"] == "everyFieldReachesTheJournal()")
        #expect(entry["PHOTOD_ASSET_ID"] == "42")
        #expect(entry.fields.filter { $0.name == "PHOTOD_PATH" }.map { String(decoding: $0.value, as: UTF8.self) }
                == ["/lib/a\nb.jpg", "/lib/x.jpg"])
        #expect(entry["PHOTOD_BATCH"] == "7")
        #expect(entry.bytes("PHOTOD_ODD") == Array(odd.utf8))

        // The raw bytes: text form for plain values, binary form (length, little-endian) with a newline.
        let text = String(decoding: entry.raw, as: UTF8.self)
        #expect(text.hasPrefix("PRIORITY=4\nSYSLOG_IDENTIFIER=photod\nPHOTOD_FACILITY=pipeline\n"))
        #expect(text.contains("\nPHOTOD_ODD=\(odd)\n"))
        let message = Array("cannot read 'a\nb.jpg', skipping".utf8)
        #expect(entry.raw.suffix(8 + 8 + message.count + 1)
                == Array("MESSAGE\n".utf8) + [UInt8(message.count), 0, 0, 0, 0, 0, 0, 0] + message + [10])
    }

    @Test func binaryFormIsLengthPrefixedLittleEndian() throws {
        var out: [UInt8] = []
        JournalFormat.append("A", Array("x\ny".utf8), to: &out)
        JournalFormat.append("B", Array("plain".utf8), to: &out)
        let long = [UInt8](repeating: 10, count: 0x1_02_03)
        JournalFormat.append("C", long, to: &out)
        #expect(Array(out.prefix(14)) == Array("A\n".utf8) + [3, 0, 0, 0, 0, 0, 0, 0] + Array("x\ny\n".utf8))
        #expect(Array(out[14..<22]) == Array("B=plain\n".utf8))
        #expect(Array(out[22..<32]) == Array("C\n".utf8) + [0x03, 0x02, 0x01, 0, 0, 0, 0, 0])
        let decoded = try #require(JournalFormat.decode(out))
        #expect(decoded.map(\.name) == ["A", "B", "C"])
        #expect(decoded.last?.value == long)
    }

    @Test func decodeRejectsMalformedDatagrams() {
        #expect(JournalFormat.decode(Array("NOVALUE".utf8)) == nil)
        #expect(JournalFormat.decode(Array("A\n".utf8) + [5, 0, 0, 0, 0, 0, 0, 0] + Array("ab\n".utf8)) == nil)
        #expect(JournalFormat.decode(Array("A\n".utf8) + [1, 0, 0, 0, 0, 0, 0, 0] + Array("ab".utf8)) == nil)
    }

    @Test(arguments: [
        ("asset.id", "PHOTOD_ASSET_ID"), ("path", "PHOTOD_PATH"), ("asset.path", "PHOTOD_PATH"), ("batch", "PHOTOD_BATCH"),
        ("client.pid", "PHOTOD_CLIENT_PID"), ("job.files", "PHOTOD_JOB_FILES"), ("_secret", "PHOTOD_SECRET"),
        ("9lives", "PHOTOD_9LIVES"), ("", "PHOTOD_FIELD"), ("...", "PHOTOD_FIELD"), ("a..b--c", "PHOTOD_A_B_C"),
        ("ünï-côde", "PHOTOD_N_C_DE"), ("Batch.ID", "PHOTOD_BATCH_ID"), ("line\nbreak=x", "PHOTOD_LINE_BREAK_X"),
    ])
    func metadataKeysBecomeValidFieldNames(key: String, expected: String) {
        #expect(JournalFormat.fieldName(forMetadataKey: key) == expected)
        #expect(JournalFormat.isValidFieldName(expected))
    }

    @Test func longKeysAreCutTo64Bytes() {
        let name = JournalFormat.fieldName(forMetadataKey: String(repeating: "ab.", count: 100))
        #expect(name.utf8.count <= 64)
        #expect(JournalFormat.isValidFieldName(name))
        #expect(!name.hasSuffix("_"))
    }

    @Test(arguments: ["", "_PID", "9X", "lower", "A-B", "A B", String(repeating: "A", count: 65), "É"])
    func invalidFieldNames(name: String) {
        #expect(!JournalFormat.isValidFieldName(name))
    }

    @Test func anOversizedMessageIsCutAtACharacterBoundary() throws {
        let message = String(repeating: "é📷x\n", count: 2_000)  // 8 bytes each
        let record = LogRecord(level: .info, facility: "store", message: message, metadata: [("path", "/p")],
                               file: "F.swift", line: 1, function: "f()")
        #expect(JournalFormat.encode(record, identifier: "photod")!.count > 16_000)
        for limit in [300, 301, 302, 303, 1024, 4096] {
            let datagram = try #require(JournalFormat.encode(record, identifier: "photod", maxBytes: limit))
            #expect(datagram.count <= limit)
            let entry = try #require(JournalEntry(datagram))
            let cut = try #require(entry["MESSAGE"])
            #expect(cut.hasSuffix("…"))
            #expect(message.hasPrefix(cut.dropLast()))
            #expect(String(validating: try #require(entry.bytes("MESSAGE")), as: UTF8.self) != nil)
            #expect(entry["PHOTOD_MESSAGE_BYTES"] == "16000")
            #expect(entry["PHOTOD_PATH"] == "/p")
            #expect(datagram.count > limit - 16)  // the room is used, not wasted
        }
        #expect(JournalFormat.encode(record, identifier: "photod", maxBytes: 100) == nil)
    }

    @Test func theSinkCutsRecordsToItsLimit() throws {
        let journal = try FakeJournal()
        let fallback = MemorySink()
        let sink = try JournalSink(path: journal.path, fallback: fallback, maxDatagramBytes: 2_048)
        sink.emit(LogRecord(level: .info, facility: "f", message: String(repeating: "m", count: 10_000)))
        let entry = try #require(journal.receiveFields())
        #expect(entry.raw.count <= 2_048)
        #expect(entry["PHOTOD_MESSAGE_BYTES"] == "10000")
        // Metadata alone over the limit: the record goes to stderr whole.
        let big = LogRecord(level: .info, facility: "f", message: "m", metadata: [("blob", String(repeating: "b", count: 4_000))])
        sink.emit(big)
        #expect(fallback.all.map(\.message) == ["m"])
    }

    @Test func aDatagramOverTheKernelLimitIsCutUntilItFits() throws {
        // A 64 KiB send buffer (the kernel doubles it) refuses a 512 KiB datagram with EMSGSIZE.
        let journal = try FakeJournal()
        let fallback = MemorySink()
        let sink = try JournalSink(path: journal.path, fallback: fallback, maxDatagramBytes: 1 << 20, sendBufferBytes: 64 << 10)
        sink.emit(LogRecord(level: .info, facility: "f", message: String(repeating: "m", count: 512 << 10)))
        let entry = try #require(journal.receiveFields())
        #expect(entry["PHOTOD_MESSAGE_BYTES"] == String(512 << 10))
        let cut = try #require(entry.bytes("MESSAGE")).count
        #expect(cut < 128 << 10 && cut > 16 << 10)
        #expect(fallback.all.isEmpty)
    }

    @Test func recordsGoToStderrWhileTheJournalIsGone() throws {
        let journal = try FakeJournal()
        let fallback = MemorySink()
        let sink = try JournalSink(path: journal.path, fallback: fallback)
        sink.emit(LogRecord(level: .info, facility: "f", message: "one"))
        #expect(journal.receiveFields()?["MESSAGE"] == "one")

        journal.stop()
        sink.emit(LogRecord(level: .error, facility: "f", message: "two"))
        sink.emit(LogRecord(level: .info, facility: "f", message: "three"))
        let lost = fallback.all
        #expect(lost.map(\.message).count == 3)
        #expect(lost.first?.level == .warning)
        #expect(lost.first?.message.hasPrefix("cannot send to the journal at '\(journal.path)': ") == true)
        #expect(lost.dropFirst().map(\.message) == ["two", "three"])
        #expect(lost[1].level == .error)

        try journal.restart()
        sink.emit(LogRecord(level: .info, facility: "f", message: "four"))
        #expect(journal.receiveFields()?["MESSAGE"] == "four")
        let notice = try #require(journal.receiveFields())
        #expect(notice["MESSAGE"]?.contains("takes records again; 2 went to stderr") == true)
        #expect(notice["PRIORITY"] == "5")
        #expect(fallback.all.count == 3)
    }

    @Test func aSocketThatNeverExistedFallsBackToo() throws {
        let fallback = MemorySink()
        let sink = try JournalSink(path: "/nonexistent/photod-journal.sock", fallback: fallback)
        sink.emit(LogRecord(level: .notice, facility: "f", message: "kept"))
        #expect(fallback.all.map(\.message).last == "kept")
        #expect(fallback.all.first?.message.contains("No such file or directory") == true)
    }

    @Test func pathsTooLongForASocketAddressAreRefused() {
        #expect(throws: SystemError.self) { try JournalSink(path: "/" + String(repeating: "x", count: 200)) }
    }
}
