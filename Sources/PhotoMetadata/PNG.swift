/// PNG, APNG and MNG: the size from IHDR (MHDR for MNG), EXIF from an `eXIf` chunk wherever it
/// is (ImageMagick writes it after the image data), XMP from `iTXt` `XML:com.adobe.xmp`, and
/// APNG from an `acTL` chunk before the first IDAT. ImageMagick's `Raw profile type exif`
/// (`APP1`), `xmp`, `iptc` and `8bim` text chunks (`PNGText`), wherever they are, give EXIF, XMP
/// and IPTC-IIM where the standard chunks give none. Image-data chunks are skipped by their
/// lengths (never read), however many there are (`Limits.maxImageDataChunks`).
enum PNG {
    static let xmpKeyword = Array("XML:com.adobe.xmp\0".utf8)

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                      xmp: inout XMPFields?, mng: Bool) throws(MetadataError) {
        var pos: Int64 = 8
        var items = 0
        var imageDataChunks = 0
        var sawIDAT = false
        var lastLength: Int64 = 0
        // What raw profiles give, used where the standard chunks (anywhere in the file) give none.
        var profileExif: ExifFields?, profileXMP: XMPFields?, iptc: IPTCFields?
        defer {
            if exif == nil { exif = profileExif }
            if xmp == nil { xmp = profileXMP }
            if let iptc {
                if meta.dates.iptc == nil { meta.dates.iptc = iptc.date }
                if meta.iptcPlace == nil { meta.iptcPlace = iptc.place }
            }
        }
        while items < Limits.maxItems, imageDataChunks < Limits.maxImageDataChunks {
            // After a large chunk (image data) the next header is far away: read just the header.
            guard let h = try input.view(at: pos, count: 8, readAhead: lastLength < Int64(Limits.windowBytes)) else {
                if pos < input.size { meta.warnings.append("PNG ends inside a chunk header") }
                else if !sawIDAT { meta.warnings.append("PNG ends before the image data") }
                break
            }
            let length = Int64(h.be32(0))
            let type = h.fourCC(4)
            let dataAt = pos + 8
            if type == fcc("IDAT") || type == fcc("JDAT") || type == fcc("fdAT") { imageDataChunks += 1 } else { items += 1 }
            guard length <= Int64(Int32.max) else { meta.warnings.append("PNG chunk claims \(length) bytes; stopped"); break }
            if dataAt + length > input.size {
                input.hitEnd = true
                meta.warnings.append("PNG chunk '\(fourCCString(type))' is cut off by the end of the file")
            }
            switch type {
            case fcc("IHDR") where !mng, fcc("MHDR") where mng:
                if let d = try input.view(at: dataAt, count: 8) {
                    let w = Int(d.be32(0)), hh = Int(d.be32(4))
                    if w > 0, hh > 0 { meta.pixelWidth = w; meta.pixelHeight = hh }
                }
            case fcc("acTL") where !sawIDAT && !mng:
                meta.format = .apng
                // num_frames: an APNG may hold a single frame.
                if let d = try input.view(at: dataAt, count: 4), d.be32(0) > 1 { meta.traits.insert(.animated) }
            case fcc("IDAT"), fcc("JDAT"):
                sawIDAT = true
            case fcc("eXIf") where exif == nil:
                let d = try input.view(at: dataAt, upTo: Int(length))
                // The chunk holds a bare TIFF structure; some writers keep the `Exif\0\0` prefix.
                if d.matches("Exif\0\0") {
                    exif = ExifReader.read(tiff: d.slice(from: 6), warnings: &meta.warnings)
                } else {
                    exif = ExifReader.read(tiff: d, warnings: &meta.warnings)
                }
            case fcc("tEXt"), fcc("zTXt"), fcc("iTXt"):
                // The keyword first: most text chunks are comments, neither XMP nor a profile.
                guard let key = try input.view(at: dataAt, count: Int(min(length, 80))) else { break }
                if type == fcc("iTXt"), xmp == nil, key.matches(xmpKeyword) {
                    let d = try input.view(at: dataAt, upTo: Int(length))
                    // keyword\0, compression flag, method, language\0, translated keyword\0, text.
                    if d.has(xmpKeyword.count, 1), d[xmpKeyword.count] == 0 {
                        var i = xmpKeyword.count + 2
                        var nuls = 0
                        while i < d.count, nuls < 2 { if d[i] == 0 { nuls += 1 }; i += 1 }
                        xmp = XMP.scan(d.slice(from: i))
                    }
                } else if PNGText.isProfile(keyword: key) {
                    let d = try input.view(at: dataAt, upTo: Int(length))
                    if let chunk = PNGText.chunk(type: type, d), let profile = PNGText.rawProfile(chunk.text) {
                        PNGText.apply(profile, exif: &profileExif, xmp: &profileXMP, iptc: &iptc, warnings: &meta.warnings)
                    } else {
                        meta.warnings.append("PNG text chunk '\(String(decoding: key.array().prefix { $0 != 0 }, as: UTF8.self))' "
                                             + "holds no readable profile")
                    }
                }
            case fcc("IEND"), fcc("MEND"):
                return
            default:
                break
            }
            lastLength = length
            pos = dataAt + length + 4  // data and CRC
        }
    }
}

/// A four-character code for messages.
func fourCCString(_ v: UInt32) -> String {
    let bytes = [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    return String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
}
