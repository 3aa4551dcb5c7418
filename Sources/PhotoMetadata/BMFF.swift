import PhotoModel

/// ISO base media files: MP4, MOV, 3GP/3G2, M4V (video only when a track's handler is
/// `vide`), HEIC/HEIF/AVIF (the primary item's `ispe` and the `Exif` item located through
/// `iinf`/`iloc`) and Canon CR3 (the `CMT1`...`CMT4` TIFF blocks). Boxes are walked by their
/// headers; `mdat` and sample tables are skipped by offset and never read, and a box that
/// claims more than its parent (or the file) holds ends the walk at that level.
enum BMFF {
    static let canonUUID: [UInt8] = [0x85, 0xC0, 0xB6, 0x87, 0x82, 0x0F, 0x11, 0xE0, 0x81, 0x11, 0xF4, 0xCE, 0x46, 0x2B, 0x6A, 0x48]
    /// Seconds from 1904-01-01 (QuickTime's epoch) to 1970-01-01.
    static let qtEpochOffset: Int64 = 2_082_844_800

    struct Track {
        var handler: UInt32 = 0
        var width = 0
        var height = 0
        var rotation: Int?
        var sampleSize: (Int, Int)?
    }

    struct State {
        var majorBrand: UInt32 = 0
        var brands: [UInt32] = []
        var sawFtyp = false
        var sawMoov = false
        var tracks: [Track] = []
        var creation: Int64?
        var duration: Double?
        var keys: [[UInt8]] = []
        var keyValues: [(index: Int, value: [UInt8])] = []
        var xyz: [UInt8]?
        var make: String?
        var model: String?
        // HEIF
        var primaryItem: UInt32?
        var itemTypes: [UInt32: UInt32] = [:]
        var xmpItems: [UInt32] = []
        var locations: [UInt32: ItemLocation] = [:]
        var properties: [ItemProperty] = []
        var associations: [UInt32: [Int]] = [:]
        var idatAt: Int64?
        var idatLength: Int64 = 0
        // CR3
        var cmt: [(kind: Int, at: Int64, length: Int64)] = []
        var items = 0
    }

    /// The item properties photod reads (`ipco`'s children, in order: `ipma` indexes them from 1).
    enum ItemProperty {
        /// `ispe`: the coded image's size, before any transformation.
        case size(Int, Int)
        /// `irot`: turned anti-clockwise by 90° times this.
        case rotation(Int)
        /// `imir`: mirrored; libheif 1.15 reads axis 0 as a top-to-bottom flip, 1 as left-to-right.
        case mirror(axis: Int)
        case other
    }

    struct ItemLocation {
        var method = 0
        var extents: [(offset: Int64, length: Int64)] = []
    }

    /// The traits an `auxC` type URN gives: Apple's HDR gain map (`urn:com:apple:photo:2020:aux:hdrgainmap`);
    /// a depth or disparity map — MPEG's (`urn:mpeg:hevc:2015:auxid:2`,
    /// `urn:mpeg:mpegB:cicp:systems:auxiliary:depth`) and Apple's (`…:aux:depth`, `…:aux:disparity`).
    /// Mattes (`…:aux:portraiteffectsmatte`) and alpha (`auxid:1`) give none.
    static func auxiliaryTraits(_ urn: [UInt8]) -> MediaTraits {
        let text = String(decoding: urn.prefix { $0 != 0 }, as: UTF8.self).lowercased()
        var t: MediaTraits = []
        if text.hasSuffix(":hdrgainmap") { t.insert(.hdr) }
        if text == "urn:mpeg:hevc:2015:auxid:2" || text.hasSuffix(":depth") || text.hasSuffix(":disparity") { t.insert(.depth) }
        return t
    }

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                      xmp: inout XMPFields?) throws(MetadataError) {
        var s = State()
        try walk(&input, from: 0, to: input.size, depth: 0, parent: 0, &s, &meta)

        // The format: brands first, then what the boxes say.
        let format = try decideFormat(s, &meta)
        meta.format = format

        if format == .heic || format == .heif || format == .avif {
            try readItems(&input, s, &meta, exif: &exif, xmp: &xmp)
            return
        }
        if format == .cr3 {
            // The camera's EXIF PixelX/YDimension is the image's size; the largest track's
            // (the sensor's, borders included) only when it is missing.
            var pixelSize: (width: Int, height: Int)?
            for part in s.cmt {
                guard let d = try input.view(at: part.at, count: Int(min(part.length, Int64(Limits.maxRead)))) else { continue }
                let kind: TIFFWalkMode = part.kind == 2 ? .single(.exif) : part.kind == 4 ? .single(.gps) : .exif
                guard part.kind != 3, var walker = try? TIFFWalker(store: MemoryTIFF(block: d)) else { continue }
                let layout = try walker.walk(kind)
                pixelSize = pixelSize ?? layout.exifPixelSize
                var f = exif ?? ExifFields()
                f.merge(ExifReader.decode(layout: layout))
                exif = f
            }
            if let pixelSize {
                Stills.setSize(&meta, pixelSize.width, pixelSize.height)
            } else if let best = s.tracks.compactMap(\.sampleSize).max(by: { $0.0 * $0.1 < $1.0 * $1.1 }) {
                Stills.setSize(&meta, best.0, best.1)
            }
            return
        }

        // Video.
        if let v = s.tracks.first(where: { $0.handler == fcc("vide") }) {
            Stills.setSize(&meta, v.width, v.height)
            if let r = v.rotation { meta.orientation = r }
        }
        if let d = s.duration { meta.duration = d }
        if let c = s.creation { meta.dates.containerUTC = c }
        meta.make = s.make
        meta.model = s.model
        for (index, value) in s.keyValues {
            guard index >= 1, index <= s.keys.count else { continue }
            switch s.keys[index - 1] {
            case Array("com.apple.quicktime.creationdate".utf8):
                meta.dates.quickTimeLocal = Timestamp.iso8601(value)
            case Array("com.apple.quicktime.location.ISO6709".utf8):
                if meta.latitude == nil { setLocation(value, &meta) }
            case Array("com.apple.quicktime.make".utf8):
                meta.make = cleanText(value) ?? meta.make
            case Array("com.apple.quicktime.model".utf8):
                meta.model = cleanText(value) ?? meta.model
            case Array("com.apple.quicktime.content.identifier".utf8):
                meta.contentIdentifier = cleanText(value)
            case Array("com.apple.quicktime.software".utf8):
                meta.software = cleanText(value)
            default:
                break
            }
        }
        if meta.latitude == nil, let xyz = s.xyz { setLocation(xyz, &meta) }
        if !s.sawMoov { meta.warnings.append("no 'moov' box (the file may be truncated): no size, duration or date") }
    }

    private static func decideFormat(_ s: State, _ meta: inout MediaMetadata) throws(MetadataError) -> MediaFormat {
        let major = s.majorBrand
        let text = fourCCString(major)
        switch major {
        case fcc("crx "): return .cr3
        case fcc("heic"), fcc("heix"), fcc("heim"), fcc("heis"), fcc("hevc"), fcc("hevx"): return .heic
        case fcc("avif"), fcc("avis"): return .avif
        case fcc("mif1"), fcc("msf1"), fcc("miaf"):
            return .heif
        default: break
        }
        let audioBrand = ["M4A ", "M4B ", "M4P ", "F4A ", "F4B "].contains(text)
        if s.sawMoov {
            let hasVideo = s.tracks.contains { $0.handler == fcc("vide") }
            if !hasVideo, s.tracks.contains(where: { $0.handler == fcc("soun") }) || audioBrand {
                throw MetadataError(.notMedia, "content is audio (an ISO media file without a video track), not a video",
                                    detectedKind: "audio")
            }
            // No track at all (a stub movie header) or only timed metadata: the brand decides.
            if !hasVideo, s.primaryItem != nil { return .heif }
        } else if audioBrand {
            throw MetadataError(.notMedia, "content is audio (\(text.trimmingSuffixSpaces) brand), not a video", detectedKind: "audio")
        } else if s.primaryItem != nil || !s.itemTypes.isEmpty {
            return .heif
        }
        if text == "qt  " { return .mov }
        if text.hasPrefix("3gp") || text.hasPrefix("3gg") || text.hasPrefix("3gs") || text.hasPrefix("3gr") { return .threeGP }
        if text.hasPrefix("3g2") || text.hasPrefix("kddi") { return .threeG2 }
        if text.hasPrefix("M4V") { return .m4v }
        if !s.sawFtyp { return .mov }
        return .mp4
    }

    private static func walk(_ input: inout Input, from start: Int64, to end: Int64, depth: Int, parent: UInt32,
                             _ s: inout State, _ meta: inout MediaMetadata) throws(MetadataError) {
        guard depth < Limits.maxDepth else { meta.warnings.append("boxes nested too deep; skipped"); return }
        var pos = start
        var index = 0
        while pos + 8 <= end, s.items < Limits.maxItems {
            s.items += 1
            index += 1
            guard let h = try input.view(at: pos, count: 8) else { break }
            var size = Int64(h.be32(0))
            let type = h.fourCC(4)
            var header: Int64 = 8
            if size == 1 {
                guard let l = try input.view(at: pos + 8, count: 8) else { break }
                let large = l.be64(0)
                guard large <= UInt64(Int64.max) else { meta.warnings.append("box '\(fourCCString(type))' claims an absurd size; stopped"); return }
                size = Int64(large)
                header = 16
            } else if size == 0 {
                size = end - pos
            }
            guard size >= header else {
                meta.warnings.append("box '\(fourCCString(type))' at \(pos) has size \(size); stopped")
                return
            }
            // A claimed size may be near Int64.max: compare before adding.
            let truncated = size > end - pos
            let boxEnd = truncated ? end : pos + size
            if truncated {
                if size > input.size - pos { input.hitEnd = true }
                meta.warnings.append("box '\(fourCCString(type))' claims more bytes than \(depth == 0 ? "the file" : "its parent") holds")
            }
            let dataAt = pos + header
            let dataEnd = min(boxEnd, end)
            let length = dataEnd - dataAt
            try box(type, parent: parent, index: index, &input, at: dataAt, length: length, depth: depth, &s, &meta)
            if truncated { return }  // nothing trustworthy follows a lying box
            pos = boxEnd
        }
    }

    private static func box(_ type: UInt32, parent: UInt32, index: Int, _ input: inout Input, at: Int64, length: Int64,
                            depth: Int, _ s: inout State, _ meta: inout MediaMetadata) throws(MetadataError) {
        func payload(_ cap: Int) throws(MetadataError) -> ByteView {
            try input.view(at: at, upTo: Int(min(length, Int64(cap))))
        }
        if parent == fcc("ilst") {
            // An item whose type is the 1-based index of its key; its value is in a `data` box.
            let d = try payload(4096)
            if d.count >= 16, d.fourCC(4) == fcc("data") {
                let n = min(Int(d.be32(0)), d.count) - 16
                if n > 0 { s.keyValues.append((Int(type), d.array(16, n))) }
            }
            return
        }
        if parent == fcc("ipco") {
            switch type {
            case fcc("ispe"):
                let d = try payload(12)
                s.properties.append(d.count >= 12 ? .size(Int(d.be32(4)), Int(d.be32(8))) : .other)
            case fcc("irot"):
                let d = try payload(1)
                s.properties.append(d.count == 1 ? .rotation(Int(d[0] & 3)) : .other)
            case fcc("imir"):
                let d = try payload(1)
                s.properties.append(d.count == 1 ? .mirror(axis: Int(d[0] & 1)) : .other)
            case fcc("auxC"):
                // An auxiliary image's kind (after the full box's version and flags): what an
                // iPhone's HDR gain map and a portrait photo's depth or disparity map say.
                let d = try payload(260)
                if d.count > 4 { meta.traits.formUnion(auxiliaryTraits(d.array(4, d.count - 4))) }
                s.properties.append(.other)
            default:
                s.properties.append(.other)
            }
            return
        }
        switch type {
        case fcc("ftyp") where depth == 0:
            let d = try payload(256)
            s.sawFtyp = true
            s.majorBrand = d.fourCC(0)
            var i = 8
            while i + 4 <= d.count { s.brands.append(d.fourCC(i)); i += 4 }
        case fcc("moov"):
            s.sawMoov = true
            try walk(&input, from: at, to: at + length, depth: depth + 1, parent: type, &s, &meta)
        case fcc("trak"):
            s.tracks.append(Track())
            try walk(&input, from: at, to: at + length, depth: depth + 1, parent: type, &s, &meta)
        case fcc("mdia"), fcc("minf"), fcc("stbl"), fcc("udta"), fcc("iprp"), fcc("ipco"):
            try walk(&input, from: at, to: at + length, depth: depth + 1, parent: type, &s, &meta)
        case fcc("ilst"):
            try walk(&input, from: at, to: at + length, depth: depth + 1, parent: type, &s, &meta)
        case fcc("meta"):
            // ISO `meta` is a full box (4 bytes of version and flags); QuickTime's is not.
            let d = try payload(16)
            let skip: Int64 = d.fourCC(4) == fcc("hdlr") || d.fourCC(4) == fcc("keys") ? 0 : 4
            try walk(&input, from: at + skip, to: at + length, depth: depth + 1, parent: type, &s, &meta)
        case fcc("mvhd"):
            let d = try payload(32)
            let v1 = d[0] == 1
            let created = v1 ? Int64(bitPattern: d.be64(4)) : Int64(d.be32(4))
            let timescale = Int64(v1 ? d.be32(20) : d.be32(12))
            let duration = v1 ? d.be64(24) : UInt64(d.be32(16))
            // Zero means "unset"; anything before 1970 or after 2199 is a broken clock.
            if created > qtEpochOffset, created - qtEpochOffset < 7_258_118_400 { s.creation = created - qtEpochOffset }
            if timescale > 0, duration != UInt64.max, duration != UInt64(UInt32.max) || v1 {
                s.duration = Double(duration) / Double(timescale)
            }
        case fcc("tkhd") where parent == fcc("trak") && !s.tracks.isEmpty:
            let d = try payload(96)
            let v1 = d[0] == 1
            let m = v1 ? 52 : 40
            let w = v1 ? 88 : 76
            guard d.count >= w + 8 else { break }
            let a = Int32(bitPattern: d.be32(m)), b = Int32(bitPattern: d.be32(m + 4))
            var rotation: Int?
            switch (a, b) {
            case let (a, 0) where a > 0: rotation = 1
            case let (0, b) where b > 0: rotation = 6
            case let (a, 0) where a < 0: rotation = 3
            case let (0, b) where b < 0: rotation = 8
            default: rotation = nil
            }
            s.tracks[s.tracks.count - 1].rotation = rotation
            s.tracks[s.tracks.count - 1].width = Int(d.be32(w) >> 16)
            s.tracks[s.tracks.count - 1].height = Int(d.be32(w + 4) >> 16)
        case fcc("hdlr") where parent == fcc("mdia") && !s.tracks.isEmpty:
            let d = try payload(12)
            s.tracks[s.tracks.count - 1].handler = d.fourCC(8)
        case fcc("stsd") where s.majorBrand == fcc("crx ") && !s.tracks.isEmpty:
            let d = try payload(64)
            if d.count >= 8 + 36, d.fourCC(12) == fcc("CRAW") {
                s.tracks[s.tracks.count - 1].sampleSize = (d.be16(8 + 32), d.be16(8 + 34))
            }
        case fcc("keys"):
            let d = try payload(65536)
            let n = Int(d.be32(4))
            var i = 8
            var k = 0
            while k < n, k < 1000, i + 8 <= d.count {
                let size = Int(d.be32(i))
                guard size >= 8, i + size <= d.count else { break }
                s.keys.append(d.array(i + 8, size - 8))
                i += size
                k += 1
            }
        case 0xA978_797A where parent == fcc("udta"):
            let d = try payload(256)
            s.xyz = d.count > 4 && d.be16(0) <= d.count - 4 ? d.array(4, d.be16(0)) : d.array()
        case 0xA96D_616B where parent == fcc("udta"):
            let d = try payload(256)
            s.make = cleanText(d.array(4, d.be16(0)))
        case 0xA96D_6F64 where parent == fcc("udta"):
            let d = try payload(256)
            s.model = cleanText(d.array(4, d.be16(0)))
        case fcc("uuid") where parent == fcc("moov"):
            let d = try payload(16)
            if d.matches(canonUUID) {
                try walk(&input, from: at + 16, to: at + length, depth: depth + 1, parent: type, &s, &meta)
            }
        case fcc("CMT1"), fcc("CMT2"), fcc("CMT3"), fcc("CMT4"):
            let kind = Int(type & 0xFF) - 0x30
            s.cmt.append((kind, at, length))
        // HEIF item boxes.
        case fcc("pitm"):
            let d = try payload(8)
            s.primaryItem = d[0] == 0 ? UInt32(d.be16(4)) : d.be32(4)
        case fcc("iinf"):
            let d = try payload(8)
            let skip: Int64 = d[0] == 0 ? 6 : 8
            try walk(&input, from: at + skip, to: at + length, depth: depth + 1, parent: type, &s, &meta)
        case fcc("infe"):
            let d = try payload(256)
            let version = d[0]
            guard version >= 2 else { break }
            let id = version == 2 ? UInt32(d.be16(4)) : d.be32(4)
            let typeAt = version == 2 ? 8 : 10
            let itemType = d.fourCC(typeAt)
            s.itemTypes[id] = itemType
            // ISO 21496-1's gain map item (AVIF, HEIF).
            if itemType == fcc("tmap") { meta.traits.insert(.hdr) }
            if itemType == fcc("mime"), d.find(Array("application/rdf+xml".utf8), from: typeAt + 4) != nil {
                s.xmpItems.append(id)
            }
        case fcc("iloc"):
            let d = try payload(Limits.maxRead)
            parseIloc(d, &s)
        case fcc("ipma"):
            let d = try payload(Limits.maxRead)
            parseIpma(d, &s)
        case fcc("idat"):
            s.idatAt = at
            s.idatLength = length
        default:
            break
        }
    }

    private static func parseIloc(_ d: ByteView, _ s: inout State) {
        let version = d[0]
        guard version <= 2 else { return }
        let offsetSize = Int(d[4] >> 4), lengthSize = Int(d[4] & 0xF)
        let baseSize = Int(d[5] >> 4), indexSize = version >= 1 ? Int(d[5] & 0xF) : 0
        var i = 6
        func read(_ n: Int) -> Int64? {
            guard d.has(i, n) else { return nil }
            var v: UInt64 = 0
            for k in 0..<n { v = v << 8 | UInt64(d[i + k]) }
            i += n
            return v <= UInt64(Int64.max) ? Int64(v) : nil
        }
        guard [0, 4, 8].contains(offsetSize), [0, 4, 8].contains(lengthSize), [0, 4, 8].contains(baseSize),
              let count = read(version < 2 ? 2 : 4) else { return }
        for _ in 0..<min(count, 4096) {
            guard let id = read(version < 2 ? 2 : 4) else { return }
            var loc = ItemLocation()
            if version >= 1 { guard let m = read(2) else { return }; loc.method = Int(m & 0xF) }
            guard read(2) != nil, let base = read(baseSize), let extents = read(2) else { return }
            for _ in 0..<min(extents, 256) {
                if indexSize > 0 { guard read(indexSize) != nil else { return } }
                guard let off = read(offsetSize), let len = read(lengthSize) else { return }
                let (sum, overflow) = base.addingReportingOverflow(off)
                if !overflow { loc.extents.append((sum, len)) }
            }
            s.locations[UInt32(truncatingIfNeeded: id)] = loc
        }
    }

    private static func parseIpma(_ d: ByteView, _ s: inout State) {
        let version = d[0]
        let wide = d[3] & 1 == 1
        let count = Int(d.be32(4))
        var i = 8
        for _ in 0..<min(count, 4096) {
            let id: UInt32
            if version < 1 { guard d.has(i, 3) else { return }; id = UInt32(d.be16(i)); i += 2 }
            else { guard d.has(i, 5) else { return }; id = d.be32(i); i += 4 }
            let n = Int(d[i]); i += 1
            var list: [Int] = []
            for _ in 0..<n {
                if wide { guard d.has(i, 2) else { return }; list.append(d.be16(i) & 0x7FFF); i += 2 }
                else { guard d.has(i, 1) else { return }; list.append(Int(d[i] & 0x7F)); i += 1 }
            }
            s.associations[id] = list
        }
    }

    /// HEIF: size from the primary item's `ispe`, orientation from its `irot`/`imir`, EXIF and
    /// XMP from their items.
    ///
    /// The orientation is the one libheif applies when it decodes the image (its transformative
    /// properties, in the order they are associated), as an EXIF value: what the renderer
    /// shows is the stored (`ispe`) image turned by it. The EXIF orientation a HEIF file may
    /// also carry is not used (MIAF says to ignore it; libheif does, and when it disagrees with
    /// `irot`, `irot` is what every viewer built on libheif shows).
    private static func readItems(_ input: inout Input, _ s: State, _ meta: inout MediaMetadata,
                                  exif: inout ExifFields?, xmp: inout XMPFields?) throws(MetadataError) {
        var transforms: [ItemProperty] = []
        if let primary = s.primaryItem, let props = s.associations[primary] {
            var sized = false
            for p in props where p >= 1 && p <= s.properties.count {
                switch s.properties[p - 1] {
                case .size(let w, let h) where !sized:
                    Stills.setSize(&meta, w, h)
                    sized = true
                case .rotation, .mirror:
                    transforms.append(s.properties[p - 1])
                default:
                    break
                }
            }
        }
        meta.orientation = HEIFTransform.orientation(transforms)
        if meta.pixelWidth == nil { meta.warnings.append("HEIF primary item has no size property") }
        if let id = s.itemTypes.first(where: { $0.value == fcc("Exif") })?.key,
           let data = try itemData(&input, s, id) {
            // A 4-byte offset to the TIFF header, usually pointing past `Exif\0\0`.
            let skip = Int(data.be32(0))
            if skip <= data.count - 4 {
                let tiff = data.slice(from: 4 + skip)
                exif = ExifReader.read(tiff: tiff, warnings: &meta.warnings)
            }
        }
        if let id = s.xmpItems.first, let data = try itemData(&input, s, id) { xmp = XMP.scan(data) }
    }

    /// An item's bytes (its extents joined), or `nil` when they are out of range or too large.
    private static func itemData(_ input: inout Input, _ s: State, _ id: UInt32) throws(MetadataError) -> ByteView? {
        guard let loc = s.locations[id], !loc.extents.isEmpty, loc.method <= 1 else { return nil }
        var total: Int64 = 0
        for e in loc.extents {
            guard e.length >= 0, e.length <= Int64(Limits.maxRead), e.offset >= 0 else { return nil }
            total += e.length
        }
        guard total > 0, total <= Int64(Limits.maxRead) else { return nil }
        let base: Int64 = loc.method == 1 ? (s.idatAt ?? -1) : 0
        guard base >= 0 else { return nil }
        // Offsets are checked against the idat (construction method 1) or the file before use.
        for e in loc.extents {
            if loc.method == 1, e.offset > s.idatLength - e.length { return nil }
            if e.offset > input.size - base { return nil }
        }
        if loc.extents.count == 1 {
            let e = loc.extents[0]
            return try input.view(at: base + e.offset, count: Int(e.length))
        }
        var joined: [UInt8] = []
        for e in loc.extents {
            guard let v = try input.view(at: base + e.offset, count: Int(e.length)) else { return nil }
            joined += v.array()
        }
        return ByteView(joined)
    }

    /// An ISO 6709 location (`+37.3349-122.0090+010.000/`) into signed degrees and metres.
    static func setLocation(_ raw: [UInt8], _ meta: inout MediaMetadata) {
        guard let (lat, lon, alt) = parseISO6709(raw) else { return }
        meta.latitude = lat
        meta.longitude = lon
        if let alt { meta.altitude = alt }
    }

    static func parseISO6709(_ raw: [UInt8]) -> (Double, Double, Double?)? {
        var parts: [[UInt8]] = []
        var current: [UInt8] = []
        for c in raw {
            if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                if !current.isEmpty { parts.append(current) }
                current = [c]
            } else if Digits.isDigit(c) || c == UInt8(ascii: ".") {
                guard !current.isEmpty else { return nil }
                current.append(c)
            } else {
                break  // '/' or a CRS suffix ends the coordinates
            }
            if parts.count > 3 { break }
        }
        if !current.isEmpty { parts.append(current) }
        guard parts.count >= 2, let lat = angle(parts[0], degreeDigits: 2), let lon = angle(parts[1], degreeDigits: 3),
              abs(lat) <= 90, abs(lon) <= 180 else { return nil }
        let alt = parts.count >= 3 ? Double(String(decoding: parts[2], as: UTF8.self)) : nil
        return (lat, lon, alt)
    }

    /// ±DD.DDD, ±DDMM.MMM or ±DDMMSS.SSS (one more degree digit for longitude).
    private static func angle(_ p: [UInt8], degreeDigits: Int) -> Double? {
        let negative = p[0] == UInt8(ascii: "-")
        let body = Array(p.dropFirst())
        let intDigits = body.firstIndex(of: UInt8(ascii: ".")) ?? body.count
        guard let value = Double(String(decoding: body, as: UTF8.self)) else { return nil }
        var deg: Double
        switch intDigits - degreeDigits {
        case 0: deg = value
        case 2:
            let d = (value / 100).rounded(.towardZero)
            deg = d + (value - d * 100) / 60
        case 4:
            let d = (value / 10000).rounded(.towardZero)
            let m = ((value - d * 10000) / 100).rounded(.towardZero)
            deg = d + m / 60 + (value - d * 10000 - m * 100) / 3600
        default: return nil
        }
        if negative { deg = -deg }
        return deg
    }
}

extension String {
    var trimmingSuffixSpaces: String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}

/// A HEIF item's `irot`/`imir` sequence as the EXIF orientation (1–8) of the same result.
enum HEIFTransform {
    /// A linear map of pixel coordinates about the image's centre (x right, y down):
    /// (x, y) ↦ (a·x + b·y, c·x + d·y). The eight EXIF orientations are the eight such maps
    /// with entries in {-1, 0, 1} that keep the image rectangular.
    struct Map: Equatable {
        var a = 1, b = 0, c = 0, d = 1

        /// This map, then `next`.
        func then(_ next: Map) -> Map {
            Map(a: next.a * a + next.b * c, b: next.a * b + next.b * d, c: next.c * a + next.d * c, d: next.c * b + next.d * d)
        }
    }

    /// What displays each EXIF orientation: the map from stored to displayed coordinates.
    static let exif: [(value: Int, map: Map)] = [
        (1, Map(a: 1, b: 0, c: 0, d: 1)),
        (2, Map(a: -1, b: 0, c: 0, d: 1)),    // mirrored left to right
        (3, Map(a: -1, b: 0, c: 0, d: -1)),   // turned 180°
        (4, Map(a: 1, b: 0, c: 0, d: -1)),    // mirrored top to bottom
        (5, Map(a: 0, b: 1, c: 1, d: 0)),     // transposed
        (6, Map(a: 0, b: -1, c: 1, d: 0)),    // turned 90° clockwise
        (7, Map(a: 0, b: -1, c: -1, d: 0)),   // transversed
        (8, Map(a: 0, b: 1, c: -1, d: 0)),    // turned 90° anti-clockwise
    ]

    static func orientation(_ transforms: [BMFF.ItemProperty]) -> Int {
        var m = Map()
        for t in transforms {
            switch t {
            case .rotation(let quarters):
                for _ in 0..<(quarters & 3) { m = m.then(Map(a: 0, b: 1, c: -1, d: 0)) }  // 90° anti-clockwise
            case .mirror(let axis):
                m = m.then(axis == 1 ? Map(a: -1, b: 0, c: 0, d: 1) : Map(a: 1, b: 0, c: 0, d: -1))
            default:
                break
            }
        }
        return exif.first { $0.map == m }?.value ?? 1
    }
}
