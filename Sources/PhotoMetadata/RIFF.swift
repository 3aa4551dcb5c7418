import PhotoModel

/// RIFF containers: WebP (size from VP8X, VP8 or VP8L; `EXIF` and `XMP ` chunks) and AVI
/// (size and duration from `avih` and the video stream's `strh`/`strf`; the `IDIT` date).
/// The `movi` list and index are skipped by offset.
enum RIFF {
    static func webp(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                     xmp: inout XMPFields?) throws(MetadataError) {
        var pos: Int64 = 12
        let end = min(input.size, 8 + Int64(input.headView.le32(4)))
        var items = 0
        var canvas: (Int, Int)?
        var bitstream: (Int, Int)?
        var frames = 0
        while items < 1000, let h = try input.view(at: pos, count: 8) {
            items += 1
            let type = h.fourCC(0)
            let length = Int64(h.le32(4))
            let dataAt = pos + 8
            switch type {
            case fcc("VP8X"):
                if let d = try input.view(at: dataAt, count: 10) { canvas = (d.le24(4) + 1, d.le24(7) + 1) }
            case fcc("VP8 ") where bitstream == nil:
                if let d = try input.view(at: dataAt, count: 10) {
                    if !d.matches([0x9D, 0x01, 0x2A], at: 3) { meta.warnings.append("WebP VP8 start code missing") }
                    bitstream = (d.le16(6) & 0x3FFF, d.le16(8) & 0x3FFF)
                }
            case fcc("VP8L") where bitstream == nil:
                if let d = try input.view(at: dataAt, count: 5), d[0] == 0x2F {
                    let bits = Int(d.le32(1))
                    bitstream = ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
                }
            case fcc("EXIF") where exif == nil:
                let d = try input.view(at: dataAt, upTo: Int(length))
                if d.matches("Exif\0\0") {
                    exif = ExifReader.read(tiff: d.slice(from: 6), warnings: &meta.warnings)
                } else {
                    exif = ExifReader.read(tiff: d, warnings: &meta.warnings)
                }
            case fcc("XMP ") where xmp == nil:
                xmp = XMP.scan(try input.view(at: dataAt, upTo: Int(length)))
            case fcc("ANMF"):
                frames += 1
            default:
                break
            }
            pos = dataAt + length + (length & 1)
            if pos >= end { break }
        }
        if let (w, h) = canvas ?? bitstream { Stills.setSize(&meta, w, h) }
        if canvas == nil && bitstream == nil { meta.warnings.append("WebP has no image header") }
        if frames > 1 { meta.traits.insert(.animated) }
    }

    static func avi(_ input: inout Input, _ meta: inout MediaMetadata) throws(MetadataError) {
        var state = AVIState()
        let end = min(input.size, 8 + Int64(input.headView.le32(4)))
        try walk(&input, from: 12, to: end, depth: 0, &state, &meta)
        if let (w, h) = state.streamSize ?? state.mainSize { Stills.setSize(&meta, w, h) }
        if state.microsecondsPerFrame > 0, state.totalFrames > 0 {
            meta.duration = Double(state.totalFrames) * Double(state.microsecondsPerFrame) / 1_000_000
        } else if let d = state.streamDuration {
            meta.duration = d
        }
        if let date = state.date { meta.dates.containerLocal = date }
    }

    private struct AVIState {
        var mainSize: (Int, Int)?
        var streamSize: (Int, Int)?
        var microsecondsPerFrame = 0
        var totalFrames = 0
        var streamDuration: Double?
        var date: LocalDateTime?
        var inVideoStream = false
        var items = 0
    }

    private static func walk(_ input: inout Input, from start: Int64, to end: Int64, depth: Int,
                             _ s: inout AVIState, _ meta: inout MediaMetadata) throws(MetadataError) {
        var pos = start
        while pos + 8 <= end, s.items < 5000, let h = try input.view(at: pos, count: 8) {
            s.items += 1
            let type = h.fourCC(0)
            let length = Int64(h.le32(4))
            let dataAt = pos + 8
            switch type {
            case fcc("LIST"):
                if let t = try input.view(at: dataAt, count: 4) {
                    let listType = t.fourCC(0)
                    // The media data and index hold nothing we read.
                    if listType != fcc("movi"), listType != fcc("rec "), depth < 4 {
                        if listType == fcc("strl") { s.inVideoStream = false }
                        try walk(&input, from: dataAt + 4, to: min(end, dataAt + length), depth: depth + 1, &s, &meta)
                    }
                }
            case fcc("avih"):
                if let d = try input.view(at: dataAt, count: 40) {
                    s.microsecondsPerFrame = Int(d.le32(0))
                    s.totalFrames = Int(d.le32(16))
                    s.mainSize = (Int(d.le32(32)), Int(d.le32(36)))
                }
            case fcc("strh"):
                if let d = try input.view(at: dataAt, count: 36) {
                    s.inVideoStream = d.matches("vids")
                    let scale = Double(d.le32(20)), rate = Double(d.le32(24)), frames = Double(d.le32(32))
                    if s.inVideoStream, rate > 0, s.streamDuration == nil { s.streamDuration = frames * scale / rate }
                }
            case fcc("strf") where s.inVideoStream && s.streamSize == nil:
                if let d = try input.view(at: dataAt, count: 12) {
                    let w = Int(Int32(bitPattern: d.le32(4))), hh = Int(Int32(bitPattern: d.le32(8)))
                    if w != 0, hh != 0 { s.streamSize = (abs(w), abs(hh)) }
                }
            case fcc("IDIT") where s.date == nil, fcc("ICRD") where s.date == nil:
                let d = try input.view(at: dataAt, upTo: min(Int(length), 64))
                s.date = parseRIFFDate(d.array())
            default:
                break
            }
            pos = dataAt + length + (length & 1)
        }
    }

    /// AVI `IDIT` dates: ctime style (`MON MAR 10 15:04:43 2003`), or EXIF/ISO style.
    static func parseRIFFDate(_ raw: [UInt8]) -> LocalDateTime? {
        let text = raw.prefix { $0 != 0 && $0 != 0x0A && $0 != 0x0D }
        if let t = Timestamp.exif(Array(text)) ?? Timestamp.iso8601(Array(text)) { return t.local }
        // Wdy Mon DD HH:MM:SS YYYY
        let words = text.split(separator: 0x20, omittingEmptySubsequences: true).map { Array($0) }
        guard words.count >= 5 else { return nil }
        let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        let mon = String(decoding: words[1].prefix(3), as: UTF8.self).uppercased()
        guard let m = months.firstIndex(of: mon), let day = Int(String(decoding: words[2], as: UTF8.self)),
              words[3].count == 8, let hh = Digits.value(words[3], 0, 2), let mm = Digits.value(words[3], 3, 2),
              let ss = Digits.value(words[3], 6, 2), let y = Int(String(decoding: words[4], as: UTF8.self))
        else { return nil }
        return LocalDateTime(year: y, month: m + 1, day: day, hour: hh, minute: mm, second: ss)
    }
}
