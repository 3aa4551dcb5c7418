/// Flash Video (the `onMetaData` script tag's width, height and duration) and ASF/WMV (the
/// File Properties creation date and play duration, the video stream's encoded size).
enum FLV {
    static func parse(_ input: inout Input, _ meta: inout MediaMetadata) throws(MetadataError) {
        let h = input.headView
        let headerSize = Int64(h.be32(5))
        // Previous-tag-size (4), then the first tag's 11-byte header.
        guard let tag = try input.view(at: headerSize + 4, count: 11) else {
            meta.warnings.append("FLV ends before its first tag")
            return
        }
        guard tag[0] == 18 else { return }  // the first tag is not script data
        let d = try input.view(at: headerSize + 15, upTo: min(tag.be24(1), 65536))
        var r = AMF(view: d, i: 0)
        guard r.string() == Array("onMetaData".utf8) else { return }
        let kind = r.byte()
        if kind == 8 { r.i += 4 } else if kind != 3 { return }
        var width: Double?, height: Double?
        for _ in 0..<256 {
            guard let name = r.shortString(), !name.isEmpty, let value = r.value() else { break }
            switch name {
            case Array("width".utf8): width = value
            case Array("height".utf8): height = value
            case Array("duration".utf8): if value.isFinite, value >= 0 { meta.duration = value }
            default: break
            }
        }
        if let w = width, let hh = height, w.isFinite, hh.isFinite, w >= 1, hh >= 1, w < 1e6, hh < 1e6 {
            Stills.setSize(&meta, Int(w), Int(hh))
        }
    }

    /// A reader for the few AMF0 value types `onMetaData` uses; anything else stops it.
    struct AMF {
        let view: ByteView
        var i: Int

        mutating func byte() -> UInt8? {
            guard i < view.count else { return nil }
            defer { i += 1 }
            return view[i]
        }

        mutating func shortString() -> [UInt8]? {
            guard view.has(i, 2) else { return nil }
            let n = view.be16(i)
            guard view.has(i + 2, n) else { return nil }
            defer { i += 2 + n }
            return view.array(i + 2, n)
        }

        mutating func string() -> [UInt8]? {
            guard byte() == 2 else { return nil }
            return shortString()
        }

        /// A number (or a boolean as 0/1); strings are skipped and return NaN.
        mutating func value() -> Double? {
            guard let t = byte() else { return nil }
            switch t {
            case 0:
                guard view.has(i, 8) else { return nil }
                defer { i += 8 }
                return Double(bitPattern: view.be64(i))
            case 1:
                return byte().map { Double($0) }
            case 2:
                return shortString() != nil ? .nan : nil
            case 11:
                guard view.has(i, 10) else { return nil }
                i += 10
                return .nan
            default:
                return nil
            }
        }
    }
}

enum ASF {
    static let fileProperties: [UInt8] = [0xA1, 0xDC, 0xAB, 0x8C, 0x47, 0xA9, 0xCF, 0x11, 0x8E, 0xE4, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65]
    static let streamProperties: [UInt8] = [0x91, 0x07, 0xDC, 0xB7, 0xB7, 0xA9, 0xCF, 0x11, 0x8E, 0xE6, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65]
    static let videoMedia: [UInt8] = [0xC0, 0xEF, 0x19, 0xBC, 0x4D, 0x5B, 0xCF, 0x11, 0xA8, 0xFD, 0x00, 0x80, 0x5F, 0x5C, 0x44, 0x2B]
    static let audioMedia: [UInt8] = [0x40, 0x9E, 0x69, 0xF8, 0x4D, 0x5B, 0xCF, 0x11, 0xA8, 0xFD, 0x00, 0x80, 0x5F, 0x5C, 0x44, 0x2B]
    /// Seconds from 1601-01-01 (FILETIME's epoch) to 1970-01-01.
    static let fileTimeOffset: Int64 = 11_644_473_600

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata) throws(MetadataError) {
        let h = input.headView
        let headerSize = Int64(clamping: h.le64(16))
        let end = min(input.size, headerSize)
        let count = Int(h.le32(24))
        var pos: Int64 = 30
        var sawVideo = false, sawAudio = false
        for _ in 0..<min(count, 1000) {
            guard pos + 24 <= end, let o = try input.view(at: pos, count: 24) else { break }
            let size = Int64(clamping: o.le64(16))
            guard size >= 24, size <= end - pos else { meta.warnings.append("ASF header object is cut off"); break }
            if o.matches(fileProperties), let d = try input.view(at: pos, count: 92) {
                let created = Int64(d.le64(48) / 10_000_000) - fileTimeOffset  // at most ~1.8e12: no overflow
                if d.le64(48) != 0, created > 0, created < 7_258_118_400 { meta.dates.containerUTC = created }
                let play = Double(d.le64(64)) / 10_000_000, preroll = Double(d.le64(80)) / 1000
                if play > 0 { meta.duration = max(0, play - preroll) }
            } else if o.matches(streamProperties), let d = try input.view(at: pos, count: min(Int(size), 90)) {
                if d.matches(videoMedia, at: 24) {
                    sawVideo = true
                    if meta.pixelWidth == nil, d.count >= 86 { Stills.setSize(&meta, Int(d.le32(78)), Int(d.le32(82))) }
                } else if d.matches(audioMedia, at: 24) {
                    sawAudio = true
                }
            }
            pos += size
        }
        if sawAudio && !sawVideo {
            throw MetadataError(.notMedia, "content is Windows Media audio (no video stream), not a video", detectedKind: "audio")
        }
    }
}
