/// Limits that keep a lying file from costing memory or time. Every read, loop and recursion
/// in the parsers is bounded by one of these.
enum Limits {
    /// The first bytes read at once; most headers of a photo fit.
    static let headBytes = 65536
    /// The largest single read: a box, chunk or segment claiming more is skipped or cut.
    static let maxRead = 1 << 20
    /// Reads outside the head fetch at least this much, so walking many small headers past
    /// the head (PNG chunks, MP4 boxes) costs one read per header, not one per field.
    static let windowBytes = 4096
    /// Boxes, chunks, segments or elements visited in one file.
    static let maxItems = 20_000
    /// Nesting depth of boxes and elements.
    static let maxDepth = 12
    /// Entries read from one TIFF IFD.
    static let maxIFDEntries = 1000
    /// IFDs visited in one TIFF structure.
    static let maxIFDs = 32
    /// Stray bytes looked through for the next JPEG marker (libjpeg looks through any number).
    static let maxStrayBytes = 1 << 20
    /// Bytes of a JPEG's first scan searched for the DNL segment its frame header defers the
    /// height to (only for such files: a height of 0 is rare).
    static let maxDNLSearch = 64 << 20
    /// PNG image-data chunks (`IDAT`, `JDAT`, `fdAT`) walked past by their lengths; they do not
    /// count towards `maxItems`, so an `eXIf` after the image data of a PNG written in small
    /// chunks is still reached.
    static let maxImageDataChunks = 1 << 20
}

/// The file as the parsers see it: its size, its first bytes in memory, and bounded reads
/// elsewhere (served from a small window cache when possible).
struct Input {
    var source: any ByteSource
    let size: Int64
    /// The first `min(size, Limits.headBytes)` bytes.
    let head: [UInt8]
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0
    /// Some parser asked for bytes past the end of the file: the file is cut short.
    var hitEnd = false

    init(source: any ByteSource) throws(MetadataError) {
        var s = source
        self.size = s.size
        self.head = size > 0 ? try s.read(at: 0, count: Int(min(size, Int64(Limits.headBytes)))) : []
        self.source = s
    }

    var headView: ByteView { ByteView(head) }

    /// Exactly `count` bytes at `offset` as a view (no copy when they lie in the head or the
    /// window), or `nil` when the file ends before or `count` exceeds `Limits.maxRead`.
    ///
    /// `readAhead` fetches a window around a small request past the head, which pays off when
    /// the next header is near (boxes inside `moov`); a caller hopping over large payloads
    /// (PNG image data) turns it off so that it reads only the headers.
    mutating func view(at offset: Int64, count: Int, readAhead: Bool = true) throws(MetadataError) -> ByteView? {
        guard offset >= 0, count >= 0, count <= Limits.maxRead else { return nil }
        guard offset <= size, Int64(count) <= size - offset else {
            hitEnd = true
            return nil
        }
        if offset + Int64(count) <= Int64(head.count) { return ByteView(head, start: Int(offset), count: count) }
        if offset >= windowStart, offset + Int64(count) <= windowStart + Int64(window.count) {
            return ByteView(window, start: Int(offset - windowStart), count: count)
        }
        let want = Int(min(Int64(max(count, readAhead ? Limits.windowBytes : count)), size - offset))
        let bytes = try source.read(at: offset, count: want)
        guard bytes.count >= count else { return nil }
        if want <= Limits.windowBytes * 4 {
            window = bytes
            windowStart = offset
        }
        return ByteView(bytes, start: 0, count: count)
    }

    /// Up to `count` bytes at `offset` (fewer at end of file), capped at `Limits.maxRead`.
    mutating func view(at offset: Int64, upTo count: Int) throws(MetadataError) -> ByteView {
        guard offset >= 0, offset < size else {
            if count > 0 { hitEnd = true }
            return .empty
        }
        if Int64(count) > size - offset { hitEnd = true }
        let n = Int(min(Int64(min(max(0, count), Limits.maxRead)), size - offset))
        return try view(at: offset, count: n) ?? .empty
    }
}
