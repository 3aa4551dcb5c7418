/// Matroska and WebM: the DocType from the EBML header; from the Segment's `Info` the
/// duration (Duration × TimecodeScale) and `DateUTC`; from `Tracks` the video track's
/// PixelWidth/PixelHeight. Clusters (the media data) are skipped by size and the walk stops
/// at the first one once Info and Tracks are known.
enum Matroska {
    static let ebmlHeader: UInt32 = 0x1A45DFA3, docType: UInt32 = 0x4282, segment: UInt32 = 0x18538067
    static let info: UInt32 = 0x1549A966, timecodeScale: UInt32 = 0x2AD7B1, duration: UInt32 = 0x4489
    static let dateUTC: UInt32 = 0x4461, tracks: UInt32 = 0x1654AE6B, trackEntry: UInt32 = 0xAE
    static let trackType: UInt32 = 0x83, video: UInt32 = 0xE0, pixelWidth: UInt32 = 0xB0, pixelHeight: UInt32 = 0xBA
    static let cluster: UInt32 = 0x1F43B675
    /// Seconds from 1970-01-01 to 2001-01-01, Matroska's epoch.
    static let epochOffset: Int64 = 978_307_200

    struct State {
        var docType: [UInt8] = []
        var scale: UInt64 = 1_000_000
        var duration: Double?
        var date: Int64?
        var sawInfo = false
        var sawTracks = false
        var trackTypes: [Int] = []
        var videoSize: (Int, Int)?
        var currentType = 0
        var currentSize: (Int, Int) = (0, 0)
        var items = 0
    }

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata) throws(MetadataError) {
        var s = State()
        try walk(&input, from: 0, to: input.size, depth: 0, parent: 0, &s, &meta)
        meta.format = s.docType == Array("webm".utf8) ? .webm : .matroska
        if s.sawTracks, !s.trackTypes.isEmpty, !s.trackTypes.contains(1) {
            throw MetadataError(.notMedia, "content is Matroska audio (no video track), not a video", detectedKind: "audio")
        }
        if let (w, h) = s.videoSize { Stills.setSize(&meta, w, h) }
        if let d = s.duration, d.isFinite, d >= 0 { meta.duration = d * Double(s.scale) / 1_000_000_000 }
        if let ns = s.date {
            // Floor division without overflowing at Int64.min.
            let seconds = ns / 1_000_000_000 - (ns % 1_000_000_000 < 0 ? 1 : 0)
            meta.dates.containerUTC = epochOffset + seconds
        }
        if !s.sawTracks { meta.warnings.append("Matroska file has no Tracks element before its media data") }
    }

    /// An EBML variable-length integer: its value and length; IDs keep their marker bit.
    static func vint(_ v: ByteView, _ i: Int, keepMarker: Bool) -> (value: UInt64, length: Int, unknown: Bool)? {
        let first = v[i]
        guard first != 0, v.has(i, 1) else { return nil }
        let length = first.leadingZeroBitCount + 1
        guard v.has(i, length) else { return nil }
        var value = UInt64(keepMarker ? first : first & (0xFF >> UInt8(length)))
        var allOnes = value == UInt64(0xFF >> UInt8(length))
        for k in 1..<max(length, 1) {
            value = value << 8 | UInt64(v[i + k])
            if v[i + k] != 0xFF { allOnes = false }
        }
        return (value, length, !keepMarker && allOnes)
    }

    private static func walk(_ input: inout Input, from start: Int64, to end: Int64, depth: Int, parent: UInt32,
                             _ s: inout State, _ meta: inout MediaMetadata) throws(MetadataError) {
        guard depth < 8 else { return }
        var pos = start
        while pos < end, s.items < Limits.maxItems {
            s.items += 1
            let h = try input.view(at: pos, upTo: 12)
            guard let id = vint(h, 0, keepMarker: true), id.length <= 4,
                  let size = vint(h, id.length, keepMarker: false) else {
                meta.warnings.append("Matroska element header at \(pos) is invalid; stopped")
                return
            }
            let dataAt = pos + Int64(id.length + size.length)
            let unknown = size.unknown
            guard dataAt <= end else {
                input.hitEnd = input.hitEnd || end == input.size
                meta.warnings.append("Matroska element header runs past its parent; stopped")
                return
            }
            guard unknown || size.value <= UInt64(end - dataAt) else {
                // An element claiming more than its parent holds: read what is there, then stop.
                if id.value == segment || id.value == info || id.value == tracks || id.value == trackEntry || id.value == video {
                    try walk(&input, from: dataAt, to: end, depth: depth + 1, parent: UInt32(id.value), &s, &meta)
                }
                if dataAt + Int64(min(size.value, UInt64(Int64.max / 2))) > input.size { input.hitEnd = true }
                meta.warnings.append("Matroska element claims more bytes than the file holds")
                return
            }
            let dataEnd = unknown ? end : dataAt + Int64(size.value)
            let length = Int(min(dataEnd - dataAt, 64))
            switch UInt32(id.value) {
            case ebmlHeader, segment, info, tracks, video:
                try walk(&input, from: dataAt, to: dataEnd, depth: depth + 1, parent: UInt32(id.value), &s, &meta)
                if UInt32(id.value) == info { s.sawInfo = true }
                if UInt32(id.value) == tracks { s.sawTracks = true }
            case trackEntry:
                s.currentType = 0
                s.currentSize = (0, 0)
                try walk(&input, from: dataAt, to: dataEnd, depth: depth + 1, parent: trackEntry, &s, &meta)
                s.trackTypes.append(s.currentType)
                if s.currentType == 1, s.videoSize == nil, s.currentSize.0 > 0 { s.videoSize = s.currentSize }
            case docType where parent == ebmlHeader:
                s.docType = try input.view(at: dataAt, upTo: length).array().filter { $0 != 0 }
            case timecodeScale where parent == info:
                let v = uint(try input.view(at: dataAt, upTo: length))
                if v > 0 { s.scale = v }
            case duration where parent == info:
                let d = try input.view(at: dataAt, upTo: length)
                if d.count == 4 { s.duration = Double(Float(bitPattern: d.be32(0))) }
                if d.count == 8 { s.duration = Double(bitPattern: d.be64(0)) }
            case dateUTC where parent == info:
                let d = try input.view(at: dataAt, upTo: length)
                if d.count == 8 { s.date = Int64(bitPattern: d.be64(0)) }
            case trackType where parent == trackEntry:
                s.currentType = Int(clamping: uint(try input.view(at: dataAt, upTo: length)))
            case pixelWidth where parent == video:
                s.currentSize.0 = Int(clamping: uint(try input.view(at: dataAt, upTo: length)))
            case pixelHeight where parent == video:
                s.currentSize.1 = Int(clamping: uint(try input.view(at: dataAt, upTo: length)))
            case cluster:
                if (s.sawInfo && s.sawTracks) || unknown { return }
            default:
                break
            }
            if unknown { return }
            pos = dataEnd
        }
    }

    private static func uint(_ d: ByteView) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<min(d.count, 8) { v = v << 8 | UInt64(d[i]) }
        return v
    }
}
