/// What the framer found in the bytes it was given.
public enum FramerEvent: Sendable, Hashable {
    /// One complete line, without its `\n` (and without a `\r` before it).
    case line([UInt8])
    /// A line longer than the limit ended (or the stream ended inside it); its
    /// `droppedBytes` bytes (excluding the `\n`) were discarded without being buffered.
    /// Reported once per oversized line, in order with the lines around it, so the daemon
    /// can answer it with an error in sequence.
    case tooLong(droppedBytes: Int)
}

/// Splits a byte stream into lines — photod's framing: one JSON-RPC message per line, lines
/// ending in `\n` (a `\r` before it is stripped, so `CRLF` clients work too).
///
/// A pure state machine: the connection's read loop feeds it whatever `read` returned and
/// acts on the events. Memory stays bounded by ``maxLineBytes``: a longer line is dropped as
/// it arrives and reported once as ``FramerEvent/tooLong(droppedBytes:)``; the lines after
/// it are framed normally.
///
/// Each byte is scanned for `\n` exactly once: a partial line is kept only when the scan
/// found no newline in it, so the next append scans the new bytes only. Complete lines in an
/// append are sliced from the input without going through the buffer.
///
/// Lines that are empty or only whitespace (space, tab, `\r`) are skipped: harmless
/// keep-alives from hand-typed sessions (`socat`), not requests.
public struct LineFramer: Sendable {
    /// The longest line accepted, in bytes, not counting the `\n` (a `\r` before it counts).
    public let maxLineBytes: Int
    /// The start of a line whose `\n` has not arrived yet. Never contains a `\n`.
    private var partial: [UInt8] = []
    /// Whether the current line has exceeded the limit and is being discarded.
    private var discarding = false
    /// How many bytes of the current oversized line have been discarded.
    private var discarded = 0

    /// A framer for lines of at most `maxLineBytes` bytes (photod uses
    /// ``WireLimits/maxLineBytes``).
    public init(maxLineBytes: Int = WireLimits.maxLineBytes) {
        precondition(maxLineBytes > 0, "LineFramer: maxLineBytes must be positive")
        self.maxLineBytes = maxLineBytes
    }

    /// The bytes held for an incomplete line (at most ``maxLineBytes``).
    public var bufferedByteCount: Int { partial.count }

    /// Whether the framer is inside an oversized line, discarding until its `\n`.
    public var isDiscarding: Bool { discarding }

    /// Frames `bytes`, the next part of the stream.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) -> [FramerEvent] {
        append(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Frames `bytes`, the next part of the stream.
    public mutating func append(_ bytes: [UInt8]) -> [FramerEvent] {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Frames `bytes`, the next part of the stream.
    public mutating func append(_ bytes: ArraySlice<UInt8>) -> [FramerEvent] {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Frames `bytes`, the next part of the stream.
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) -> [FramerEvent] {
        var events: [FramerEvent] = []
        var start = 0
        while start < bytes.count {
            let rest = UnsafeBufferPointer(rebasing: bytes[start...])
            guard let newline = Self.firstNewline(in: rest) else {
                // No line ends in this append: keep the start of the line, or drop it.
                if discarding {
                    discarded += rest.count
                } else if partial.count + rest.count > maxLineBytes {
                    discarding = true
                    discarded = partial.count + rest.count
                    releasePartial()
                } else {
                    partial.append(contentsOf: rest)
                }
                break
            }
            let lineEnd = start + newline
            let piece = UnsafeBufferPointer(rebasing: bytes[start..<lineEnd])
            if discarding {
                events.append(.tooLong(droppedBytes: discarded + piece.count))
                discarding = false
                discarded = 0
            } else if partial.count + piece.count > maxLineBytes {
                events.append(.tooLong(droppedBytes: partial.count + piece.count))
                releasePartial()
            } else if partial.isEmpty {
                emit(piece, into: &events)
            } else {
                partial.append(contentsOf: piece)
                partial.withUnsafeBufferPointer { emit($0, into: &events) }
                releasePartial()
            }
            start = lineEnd + 1
        }
        return events
    }

    /// Ends the stream: the last line, if it had no `\n` (or a report that it was too long).
    /// The framer is then empty and can be reused.
    public mutating func finish() -> [FramerEvent] {
        var events: [FramerEvent] = []
        if discarding {
            events.append(.tooLong(droppedBytes: discarded))
        } else if !partial.isEmpty {
            partial.withUnsafeBufferPointer { emit($0, into: &events) }
        }
        discarding = false
        discarded = 0
        releasePartial()
        return events
    }

    /// Empties the partial-line buffer, giving back its storage when a long line grew it, so
    /// an idle connection does not keep a megabyte.
    private mutating func releasePartial() {
        if partial.capacity > 64 << 10 {
            partial = []
        } else {
            partial.removeAll(keepingCapacity: true)
        }
    }

    /// Emits `line` without a trailing `\r`, unless it is blank.
    private func emit(_ line: UnsafeBufferPointer<UInt8>, into events: inout [FramerEvent]) {
        var end = line.count
        if end > 0 && line[end - 1] == 0x0D { end -= 1 }
        let content = UnsafeBufferPointer(rebasing: line[..<end])
        if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        events.append(.line(Array(content)))
    }

    /// The offset of the first `\n`, eight bytes at a time (SWAR): PhotoWire stays free of C,
    /// so no `memchr`, and a byte loop would dominate the cost of framing large requests.
    static func firstNewline(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var index = 0
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let newlines: UInt64 = 0x0A0A_0A0A_0A0A_0A0A
        while index + 8 <= count {
            // Read as little-endian on every platform, so memory order is significance
            // order and the lowest flagged byte is the first newline (the borrow in the
            // test can flag bytes after a real match, never before one).
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) ^ newlines
            let found = (word &- ones) & ~word & highs
            if found != 0 { return index + found.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < count {
            if bytes[index] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}
