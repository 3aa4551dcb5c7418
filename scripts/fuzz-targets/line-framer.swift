// Fuzz target: the socket's line framing. The first byte picks a line limit (1...256) and
// a chunk size (1...16) so that lines straddle reads; framing must agree with a plain split
// on "\n" and never buffer more than the limit.
import PhotoWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let limit = Int(data[0]) + 1
    let chunk = Int(data[0] % 16) + 1
    let stream = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var framer = LineFramer(maxLineBytes: limit)
    var events: [FramerEvent] = []
    var at = 0
    while at < stream.count {
        let end = min(stream.count, at + chunk)
        events += framer.append(stream[at..<end])
        guard framer.bufferedByteCount <= limit else { fatalError("framer buffers \(framer.bufferedByteCount) > \(limit)") }
        at = end
    }
    events += framer.finish()
    // The reference: split on \n, drop one trailing \r, skip blank lines, flag long ones.
    var expected: [FramerEvent] = []
    var lines = stream.split(separator: 0x0A, omittingEmptySubsequences: false)
    if stream.last == 0x0A || stream.isEmpty { lines.removeLast() }
    for line in lines {
        if line.count > limit {
            expected.append(.tooLong(droppedBytes: line.count))
            continue
        }
        var content = Array(line)
        if content.last == 0x0D { content.removeLast() }
        if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
        expected.append(.line(content))
    }
    guard events.count == expected.count else {
        fatalError("framer gave \(events.count) events, a plain split \(expected.count): \(events) vs \(expected)")
    }
    for (a, b) in zip(events, expected) {
        switch (a, b) {
        case (.line(let x), .line(let y)) where x == y: continue
        case (.tooLong, .tooLong): continue  // how many bytes were dropped is a report, not a contract
        default: fatalError("framer gave \(a), a plain split \(b)")
        }
    }
    return 0
}
