import PhotoWire
import Testing

/// A straightforward model of the framer's contract, to compare against.
private func referenceFrames(_ stream: [UInt8], maxLineBytes: Int, finish: Bool) -> [FramerEvent] {
    var events: [FramerEvent] = []
    var lines = stream.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
    let last = lines.removeLast()  // what follows the last newline
    if finish && !last.isEmpty { lines.append(last) }
    for line in lines {
        if line.count > maxLineBytes {
            events.append(.tooLong(droppedBytes: line.count))
            continue
        }
        let content = line.last == 0x0D ? Array(line.dropLast()) : line
        if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
        events.append(.line(content))
    }
    return events
}

@Suite("Line framer")
struct LineFramerTests {
    static let cases: [(String, [String], [FramerEvent])] = [
        ("one line", ["abc\n"], [.line(bytes("abc"))]),
        ("no newline yet", ["abc"], []),
        ("two appends", ["ab", "c\n"], [.line(bytes("abc"))]),
        ("CRLF", ["abc\r\n"], [.line(bytes("abc"))]),
        ("CR split from LF", ["abc\r", "\n"], [.line(bytes("abc"))]),
        ("inner CR kept", ["a\rb\n"], [.line(bytes("a\rb"))]),
        ("empty lines skipped", ["\n\n\r\n \t\nx\n"], [.line(bytes("x"))]),
        ("many lines at once", ["a\nb\nc\n"], [.line(bytes("a")), .line(bytes("b")), .line(bytes("c"))]),
        ("line then partial", ["a\nbc", "d\n"], [.line(bytes("a")), .line(bytes("bcd"))]),
        ("exactly the limit", ["12345678\n"], [.line(bytes("12345678"))]),
        ("one over the limit", ["123456789\n"], [.tooLong(droppedBytes: 9)]),
        ("oversized then normal", ["123456789012\nok\n"], [.tooLong(droppedBytes: 12), .line(bytes("ok"))]),
        ("oversized across appends", ["12345", "67890", "12\nok\n"], [.tooLong(droppedBytes: 12), .line(bytes("ok"))]),
        ("oversized, newline alone", ["1234567890", "\n", "x\n"], [.tooLong(droppedBytes: 10), .line(bytes("x"))]),
        ("two oversized", ["1234567890\nabcdefghij\n"], [.tooLong(droppedBytes: 10), .tooLong(droppedBytes: 10)]),
    ]

    @Test("frames", arguments: cases)
    func frames(_ name: String, _ chunks: [String], _ expected: [FramerEvent]) {
        var framer = LineFramer(maxLineBytes: 8)
        var events: [FramerEvent] = []
        for chunk in chunks { events += framer.append(bytes(chunk)) }
        #expect(events == expected, "\(name)")
    }

    static let stream = bytes("{\"a\":1}\r\n\nsecond line\n0123456789abcdefghij0123456789\nafter\n  \nlast")

    @Test func everySplitPointGivesTheSameEvents() {
        let expected = referenceFrames(Self.stream, maxLineBytes: 16, finish: true)
        #expect(expected.count == 5)
        for split in 0...Self.stream.count {
            var framer = LineFramer(maxLineBytes: 16)
            var events = framer.append(Array(Self.stream[..<split]))
            events += framer.append(Array(Self.stream[split...]))
            events += framer.finish()
            #expect(events == expected, "split at \(split)")
        }
    }

    @Test func byteAtATimeGivesTheSameEvents() {
        var framer = LineFramer(maxLineBytes: 16)
        var events: [FramerEvent] = []
        for byte in Self.stream {
            events += framer.append([byte])
            #expect(framer.bufferedByteCount <= 16)
        }
        events += framer.finish()
        #expect(events == referenceFrames(Self.stream, maxLineBytes: 16, finish: true))
    }

    @Test func finishReportsAPartialLineOrAnOversizedOne() {
        var framer = LineFramer(maxLineBytes: 4)
        #expect(framer.append(bytes("ab")).isEmpty)
        #expect(framer.bufferedByteCount == 2)
        #expect(framer.finish() == [.line(bytes("ab"))])
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.append(bytes("abcdefg")).isEmpty)
        #expect(framer.isDiscarding)
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.finish() == [.tooLong(droppedBytes: 7)])
        #expect(!framer.isDiscarding)
        #expect(framer.finish().isEmpty)
        #expect(framer.append(bytes("ok\n")) == [.line(bytes("ok"))])
    }

    @Test func oversizedBytesAreNeverBuffered() {
        var framer = LineFramer(maxLineBytes: 1 << 20)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 10)
        var events: [FramerEvent] = []
        for _ in 0..<64 {  // 4 MiB without a newline
            events += framer.append(chunk)
            #expect(framer.bufferedByteCount <= 1 << 20)
        }
        #expect(framer.isDiscarding)
        #expect(framer.bufferedByteCount == 0)
        events += framer.append(bytes("tail\n{\"ok\":true}\n"))
        #expect(events == [.tooLong(droppedBytes: 4 << 20 + 4), .line(bytes("{\"ok\":true}"))])
    }

    @Test func defaultLimitIsTheWireLimit() {
        #expect(LineFramer().maxLineBytes == WireLimits.maxLineBytes)
        var framer = LineFramer()
        let exact = [UInt8](repeating: UInt8(ascii: "a"), count: WireLimits.maxLineBytes)
        #expect(framer.append(exact + [0x0A]) == [.line(exact)])
        #expect(framer.append(exact + [UInt8(ascii: "a"), 0x0A]) == [.tooLong(droppedBytes: WireLimits.maxLineBytes + 1)])
    }

    @Test func rawBufferEntryPoint() {
        var framer = LineFramer()
        let events = bytes("a\nb").withUnsafeBytes { framer.append($0) }
        #expect(events == [.line(bytes("a"))])
        #expect(framer.append(bytes("x\nc\n")[1...]) == [.line(bytes("b")), .line(bytes("c"))])
    }

    @Test(arguments: 0..<6)
    func matchesTheReferenceOnRandomStreams(_ seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let maxLine = Int.random(in: 1...40, using: &rng)
            // Mostly letters, with newlines, CRs and spaces at random; long runs now and then.
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 0...300, using: &rng) {
                switch Int.random(in: 0..<20, using: &rng) {
                case 0, 1: stream.append(0x0A)
                case 2: stream.append(0x0D)
                case 3: stream.append(0x20)
                case 4: stream += [UInt8](repeating: 0x61, count: Int.random(in: 0...80, using: &rng))
                default: stream.append(UInt8.random(in: 0x21...0x7E, using: &rng))
                }
            }
            var framer = LineFramer(maxLineBytes: maxLine)
            var events: [FramerEvent] = []
            var position = 0
            while position < stream.count {
                let end = min(stream.count, position + Int.random(in: 1...50, using: &rng))
                events += framer.append(Array(stream[position..<end]))
                #expect(framer.bufferedByteCount <= maxLine)
                position = end
            }
            let finish = Bool.random(using: &rng)
            if finish { events += framer.finish() }
            #expect(events == referenceFrames(stream, maxLineBytes: maxLine, finish: finish))
        }
    }

    @Test func findsNewlinesAtEveryAlignment() {
        // The newline search reads eight bytes at a time; put the newline at every offset
        // around word boundaries, with high bytes (UTF-8) around it.
        for length in 1...40 {
            for position in 0..<length {
                var line = [UInt8](repeating: 0xC3, count: length)
                line[position] = 0x0A
                var framer = LineFramer(maxLineBytes: 100)
                let events = framer.append(line)
                let head = Array(line[..<position])
                #expect(events == (head.isEmpty ? [] : [.line(head)]), "length \(length), newline at \(position)")
                #expect(framer.bufferedByteCount == length - position - 1)
            }
        }
    }
}
