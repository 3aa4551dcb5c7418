import PhotoModel

/// The camera RAW formats that are not TIFF-based: Canon's CRW (CIFF), Minolta's MRW and
/// Sigma's X3F. Each gives its pixel size, capture time, camera and rotation from its own
/// structure; LibRaw renders CRW and MRW (Debian's LibRaw 0.20 is built without X3F, so an X3F
/// is listed with its metadata and its image requests are `undecodable`).
enum OtherRAW {
    /// Canon CRW (Camera Image File Format): a heap of records whose table sits at the heap's
    /// end; records of types 0x28 and 0x30 are heaps themselves. Read: MakeModel (0x080a),
    /// TimeStamp (0x180e, Unix seconds on the camera's clock) and ImageInfo (0x1810: width,
    /// height, pixel aspect, rotation), wherever they are in the tree.
    static func crw(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?) throws(MetadataError) {
        meta.format = .crw
        let head = input.headView
        let little = head.matches("II")
        let headerLength = Int64(little ? head.le32(2) : head.be32(2))
        var fields = ExifFields()
        var heaps: [(start: Int64, length: Int64, depth: Int)] = [(headerLength, input.size - headerLength, 0)]
        var visited = 0
        while let heap = heaps.popLast() {
            visited += 1
            guard visited <= 64, heap.length >= 6, let tail = try input.view(at: heap.start + heap.length - 4, count: 4) else { continue }
            let table = heap.start + Int64(little ? tail.le32(0) : tail.be32(0))
            guard table >= heap.start, table + 2 <= heap.start + heap.length,
                  let countView = try input.view(at: table, count: 2) else {
                meta.warnings.append("CRW: a record table lies outside its heap")
                continue
            }
            let count = min(little ? countView.le16(0) : countView.be16(0), Limits.maxIFDEntries)
            guard let entries = try input.view(at: table + 2, count: 10 * count) else {
                meta.warnings.append("CRW: a record table is cut off")
                continue
            }
            for i in 0..<count {
                let e = 10 * i
                let tag = little ? entries.le16(e) : entries.be16(e)
                let size = Int64(little ? entries.le32(e + 2) : entries.be32(e + 2))
                let offset = Int64(little ? entries.le32(e + 6) : entries.be32(e + 6))
                let inRecord = (tag >> 14) & 3 == 1
                let value: ByteView?
                if inRecord {
                    value = entries.slice(e + 2, 8)
                } else {
                    guard offset + size <= heap.length else { continue }
                    if tag & 0x3800 == 0x2800 || tag & 0x3800 == 0x3000 {
                        if heap.depth < Limits.maxDepth { heaps.append((heap.start + offset, size, heap.depth + 1)) }
                        continue
                    }
                    value = size <= 256 ? try input.view(at: heap.start + offset, count: Int(size)) : nil
                }
                guard let value else { continue }
                func u32(_ i: Int) -> Int { value.has(i, 4) ? Int(little ? value.le32(i) : value.be32(i)) : 0 }
                switch tag & 0x3FFF {
                case 0x080A:
                    let parts = value.array().split(separator: 0, omittingEmptySubsequences: false)
                    if parts.count >= 2 {
                        fields.make = cleanText(Array(parts[0]))
                        fields.model = cleanText(Array(parts[1]))
                    }
                case 0x180E where value.count >= 4:
                    if let local = LocalDateTime(unixSeconds: Int64(u32(0)), offsetSeconds: 0) {
                        fields.original = Timestamp(local: local)
                    }
                case 0x1810 where value.count >= 16:
                    if u32(0) > 0, u32(4) > 0 { Stills.setSize(&meta, u32(0), u32(4)) }
                    fields.orientation = orientation(degrees: Int(Int32(truncatingIfNeeded: u32(12))))
                default:
                    break
                }
            }
        }
        if fields != ExifFields() { exif = fields }
    }

    /// Minolta MRW: a `\0MRM` block whose blocks are a four-byte name and a big-endian length:
    /// `\0PRD` holds the sensor and image sizes, `\0TTW` a whole TIFF structure with the EXIF.
    static func mrw(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?) throws(MetadataError) {
        meta.format = .mrw
        let head = input.headView
        let end = min(8 + Int64(head.be32(4)), input.size)
        var at: Int64 = 8
        var blocks = 0
        while at + 8 <= end, blocks < 64, let h = try input.view(at: at, count: 8) {
            blocks += 1
            let length = Int64(h.be32(4))
            switch h.fourCC(0) {
            case fcc("\0PRD"):
                if let d = try input.view(at: at + 8, count: 16) { Stills.setSize(&meta, d.be16(14), d.be16(12)) }
            case fcc("\0TTW"):
                let d = try input.view(at: at + 8, upTo: Int(min(length, Int64(Limits.maxRead))))
                exif = ExifReader.read(tiff: d, warnings: &meta.warnings)
            default:
                break
            }
            at += 8 + length
        }
    }

    /// Sigma X3F: a header with the image's columns, rows and rotation; a directory at the
    /// offset the file's last four bytes give, whose `PROP` section holds name/value pairs in
    /// UTF-16: `TIME` (Unix seconds), `CAMMANUF`, `CAMMODEL`.
    static func x3f(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?) throws(MetadataError) {
        meta.format = .x3f
        let head = input.headView
        var fields = ExifFields()
        if head.has(28, 12) {
            Stills.setSize(&meta, Int(head.le32(28)), Int(head.le32(32)))
            fields.orientation = orientation(degrees: Int(head.le32(36)))
        }
        if input.size >= 4, let tail = try input.view(at: input.size - 4, count: 4),
           let dir = try input.view(at: Int64(tail.le32(0)), count: 12), dir.matches("SECd") {
            let count = min(Int(dir.le32(8)), 64)
            if let entries = try input.view(at: Int64(tail.le32(0)) + 12, count: 12 * count) {
                for i in 0..<count where entries.fourCC(12 * i + 8) == fcc("PROP") {
                    let at = Int64(entries.le32(12 * i)), length = Int(entries.le32(12 * i + 4))
                    let section = try input.view(at: at, upTo: min(length, Limits.maxRead))
                    for (name, value) in properties(section) {
                        switch name {
                        case "TIME":
                            if let seconds = Int64(value), let local = LocalDateTime(unixSeconds: seconds, offsetSeconds: 0) {
                                fields.original = Timestamp(local: local)
                            }
                        case "CAMMANUF": fields.make = value
                        case "CAMMODEL": fields.model = value
                        default: break
                        }
                    }
                }
            }
        }
        if fields != ExifFields() { exif = fields }
    }

    /// The name/value pairs of an X3F `SECp` section: a header of six 32-bit words (the
    /// count third), the pairs' character offsets, then the UTF-16 characters.
    static func properties(_ s: ByteView) -> [(String, String)] {
        guard s.matches("SECp"), s.has(0, 24) else { return [] }
        let count = min(Int(s.le32(8)), 256)
        let chars = 24 + 8 * count
        guard s.has(24, 8 * count) else { return [] }
        func text(_ index: Int) -> String? {
            var units: [UInt16] = []
            var i = chars + 2 * index
            while s.has(i, 2), units.count < 256 {
                let u = UInt16(s.le16(i))
                if u == 0 { return String(decoding: units, as: UTF16.self) }
                units.append(u)
                i += 2
            }
            return nil
        }
        return (0..<count).compactMap { k in
            guard let name = text(Int(s.le32(24 + 8 * k))), let value = text(Int(s.le32(28 + 8 * k))) else { return nil }
            return (name, value)
        }
    }

    /// The EXIF orientation of a picture turned clockwise by `degrees` to be seen upright.
    static func orientation(degrees: Int) -> Int? {
        switch degrees {
        case 90: return 6
        case 180: return 3
        case 270: return 8
        default: return nil
        }
    }
}
