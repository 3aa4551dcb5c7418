// Fuzz target: the text date and offset parsers (ISO local date-times as stored and sent on
// the wire, UTC offsets, EXIF date-time/sub-second/offset triples, ISO 8601 timestamps from
// XMP and QuickTime). A parsed LocalDateTime must read back from its own description.
import PhotoModel

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let local = LocalDateTime(iso: text) {
        guard LocalDateTime(iso: local.description) == local else {
            fatalError("LocalDateTime(iso:) does not read back its description: \(local)")
        }
    }
    _ = UTCOffset(parsing: bytes)
    _ = UTCOffset(parsing: text)
    _ = Timestamp.iso8601(bytes)
    // The EXIF form comes as up to three fields; split the input at the first two NULs.
    let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
    _ = Timestamp.exif(parts[0], subSeconds: parts.count > 1 ? parts[1] : nil, offset: parts.count > 2 ? parts[2] : nil)
    return 0
}
