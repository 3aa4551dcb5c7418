/// TIFF files and TIFF-based RAW (DNG, CR2, NEF, ARW, ORF, RW2, PEF, SRW), and Fujifilm RAF.
/// A TIFF file is itself the EXIF structure; its IFDs are read at their offsets (which may be
/// anywhere in the file) rather than from a header buffer.
enum TIFFFile {
    static func parse(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                      xmp: inout XMPFields?, fileName: [UInt8]) throws(MetadataError) {
        guard var walker = try TIFFWalker(store: FileTIFF(input: input, base: 0)) else {
            throw MetadataError(.corrupt, "TIFF header is invalid")
        }
        let layout = try walker.walk(.imageFile)
        input = walker.store.input
        meta.warnings += layout.warnings.map { "TIFF: " + $0 }
        var fields = ExifReader.decode(layout: layout)
        if let mn = layout.makerNote, fields.make == "Apple", let note = try input.view(at: Int64(mn.offset), count: mn.count) {
            fields.applyAppleMakerNote(note)
        }
        exif = fields
        meta.format = classify(layout, make: fields.make, head: input.headView, fileName: fileName)

        // The main image: for a plain TIFF, IFD0's; for RAW, the largest full-resolution one.
        var image: TIFFImage?
        if meta.format == .tiff {
            image = layout.images.first
        } else {
            let full = layout.images.filter { ($0.subfileType ?? 0) == 0 }
            // Sizes are 32-bit values from the file: compare areas in floating point.
            image = (full.isEmpty ? layout.images : full).max { Double($0.width) * Double($0.height) < Double($1.width) * Double($1.height) }
        }
        if let image { Stills.setSize(&meta, image.width, image.height) }
        if meta.format == .rw2, let s = layout.rw2ImageSize { Stills.setSize(&meta, s.width, s.height) }
        // Canon's CR2 and Phase One's IIQ describe only previews in their IFDs (the sensor data's
        // IFD has no size, or a 1-pixel one): the camera's EXIF PixelX/YDimension is the image's.
        if meta.format == .cr2 || meta.format == .iiq, let s = layout.exifPixelSize { Stills.setSize(&meta, s.width, s.height) }
        if let x = layout.xmp, let packet = try input.view(at: Int64(x.offset), count: x.count) {
            xmp = XMP.scan(packet)
        }
    }

    /// Which TIFF-based format this is: the magic, the CR2 signature and the DNGVersion tag
    /// decide alone; the maker's RAW formats share plain TIFF's magic and need Make and the
    /// file name's extension.
    static func classify(_ layout: TIFFLayout, make: String?, head: ByteView, fileName: [UInt8]) -> MediaFormat {
        if layout.magic == 0x55 { return .rw2 }
        if layout.magic == 0x4F52 || layout.magic == 0x5352 { return .orf }
        if head.matches("CR", at: 8) { return .cr2 }
        if layout.hasDNGVersion { return .dng }
        let ext = fileExtension(fileName)
        let maker = (make ?? "").uppercased()
        switch ext {
        case "nef", "nrw": return .nef
        case "arw", "srf", "sr2": return .arw
        case "pef": return .pef
        case "srw": return .srw
        case "iiq": return .iiq
        case "3fr": return .threeFR
        case "erf": return .erf
        case "kdc": return .kdc
        case "dcr": return .dcr
        case "mos": return .mos
        case "mef": return .mef
        case "rwl": return .rwl
        case "tif", "tiff": return .tiff
        default: break
        }
        // An unknown or missing extension: a maker's TIFF with a full-size image in a SubIFD is its RAW.
        let hasRawSubIFD = layout.images.count > 1 && layout.images.contains { $0.subfileType == 0 }
        guard hasRawSubIFD else { return .tiff }
        if maker.hasPrefix("NIKON") { return .nef }
        if maker.hasPrefix("SONY") { return .arw }
        if maker.hasPrefix("PENTAX") { return .pef }
        if maker.hasPrefix("SAMSUNG") { return .srw }
        if maker.hasPrefix("HASSELBLAD") { return .threeFR }
        if maker.hasPrefix("PHASE ONE") { return .iiq }
        return .tiff
    }

    /// The lower-cased ASCII extension of a file name.
    static func fileExtension(_ name: [UInt8]) -> String {
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot + 1 < name.count, name.count - dot <= 6 else { return "" }
        return String(decoding: name[(dot + 1)...].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}

/// Fujifilm RAF: a fixed header pointing at an embedded JPEG (which carries the EXIF) and at
/// the CFA header, whose RawImageFullSize record is the sensor image's size.
enum RAF {
    static func parse(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                      xmp: inout XMPFields?) throws(MetadataError) {
        guard let h = try input.view(at: 0, count: 108) else { throw MetadataError(.truncated, "RAF header is cut off") }
        let jpegAt = Int64(h.be32(84)), jpegLength = Int64(h.be32(88))
        let cfaAt = Int64(h.be32(92)), cfaLength = Int64(h.be32(96))
        if jpegLength > 0, let soi = try input.view(at: jpegAt, count: 3), soi.matches([0xFF, 0xD8, 0xFF]) {
            try JPEG.parse(&input, &meta, exif: &exif, xmp: &xmp, base: jpegAt, end: jpegAt + jpegLength)
        }
        meta.format = .raf
        // Records: count, then (tag, size, data); 0x100 is RawImageFullSize (height, width).
        if cfaLength >= 4, let c = try input.view(at: cfaAt, upTo: Int(min(cfaLength, 65536))) as ByteView? {
            let n = Int(c.be32(0))
            var i = 4
            for _ in 0..<min(n, 256) {
                guard c.has(i, 4) else { break }
                let tag = c.be16(i), size = c.be16(i + 2)
                if tag == 0x100, size >= 4, c.has(i + 4, 4) {
                    Stills.setSize(&meta, c.be16(i + 6), c.be16(i + 4))
                    break
                }
                i += 4 + size
            }
        }
    }
}

/// Box-structured still images: JPEG 2000 (`jp2h`/`ihdr`) and the JPEG XL container
/// (`jxlc`/`jxlp` codestream, `Exif` and `xml ` boxes).
enum BoxStills {
    static func jp2(_ input: inout Input, _ meta: inout MediaMetadata) throws(MetadataError) {
        try forEachBox(&input, from: 0, to: input.size) { input, type, at, length throws(MetadataError) in
            guard type == fcc("jp2h") else { return true }
            try forEachBox(&input, from: at, to: at + length) { input, type, at, _ throws(MetadataError) in
                guard type == fcc("ihdr"), let d = try input.view(at: at, count: 8) else { return true }
                Stills.setSize(&meta, Int(d.be32(4)), Int(d.be32(0)))
                return false
            }
            return false
        }
    }

    static func jxl(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                    xmp: inout XMPFields?) throws(MetadataError) {
        try forEachBox(&input, from: 0, to: input.size) { input, type, at, length throws(MetadataError) in
            switch type {
            case fcc("jxlc") where meta.pixelWidth == nil:
                Stills.jxlCodestream(try input.view(at: at, upTo: min(Int(length), 64)), &meta)
            case fcc("jxlp") where meta.pixelWidth == nil:
                let d = try input.view(at: at + 4, upTo: min(Int(length) - 4, 64))
                if d.matches([0xFF, 0x0A]) { Stills.jxlCodestream(d, &meta) }
            case fcc("Exif") where exif == nil:
                let d = try input.view(at: at, upTo: Int(length))
                let skip = Int(d.be32(0))
                if skip <= d.count - 4 {
                    exif = ExifReader.read(tiff: d.slice(from: 4 + skip), warnings: &meta.warnings)
                }
            case fcc("xml ") where xmp == nil:
                xmp = XMP.scan(try input.view(at: at, upTo: Int(length)))
            default:
                break
            }
            return true
        }
    }

    /// Calls `body` with each box's type, payload offset and length until it returns false.
    static func forEachBox(_ input: inout Input, from start: Int64, to end: Int64,
                           _ body: (inout Input, UInt32, Int64, Int64) throws(MetadataError) -> Bool) throws(MetadataError) {
        var pos = start
        var n = 0
        while pos + 8 <= end, n < 1000, let h = try input.view(at: pos, count: 8) {
            n += 1
            var size = Int64(h.be32(0))
            var header: Int64 = 8
            if size == 1, let l = try input.view(at: pos + 8, count: 8), l.be64(0) <= UInt64(Int64.max) {
                size = Int64(l.be64(0)); header = 16
            } else if size == 0 {
                size = end - pos
            }
            guard size >= header else { return }
            let length = min(size, end - pos) - header
            guard try body(&input, h.fourCC(4), pos + header, length) else { return }
            pos += size
        }
    }
}
