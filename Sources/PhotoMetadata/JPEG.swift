/// JPEG (and MPO): walks the marker segments up to the first scan, taking the frame size from
/// the first SOFn, EXIF from the first APP1 `Exif` segment wherever it sits among the APPn
/// segments (libexif's own loader gives up at APP6 and others), XMP from APP1, and the MPF
/// APP2 segment that marks a multi-picture file. Scan data is never read.
enum JPEG {
    static let xmpPrefix: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                      xmp: inout XMPFields?, base: Int64 = 0, end: Int64? = nil) throws(MetadataError) {
        var pos: Int64 = base + 2
        let end = min(end ?? input.size, input.size)
        var items = 0
        var sawFrame = false
        while items < Limits.maxItems {
            items += 1
            guard pos + 4 <= end, let h = try input.view(at: pos, count: 4) else {
                if pos < end { meta.warnings.append("JPEG ends inside a segment header") }
                else { meta.warnings.append("JPEG ends before the image data") }
                input.hitEnd = true
                break
            }
            guard h[0] == 0xFF else {
                meta.warnings.append("JPEG marker expected at \(pos), found garbage; stopped")
                break
            }
            let marker = h[1]
            if marker == 0xFF { pos += 1; continue }  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { pos += 2; continue }
            if marker == 0xD9 || marker == 0xDA { break }  // EOI, or SOS: entropy-coded data follows
            let length = h.be16(2)
            guard length >= 2 else {
                meta.warnings.append("JPEG segment at \(pos) has length \(length); stopped")
                break
            }
            let payloadAt = pos + 4
            let payloadLength = length - 2
            switch marker {
            case 0xE1 where exif == nil || xmp == nil:
                // Read the 29-byte prefix first; the payload only when it is one we want.
                let prefix = try input.view(at: payloadAt, upTo: min(payloadLength, 29))
                if exif == nil, prefix.matches("Exif\0"), payloadLength >= 14 {
                    let payload = try input.view(at: payloadAt, upTo: payloadLength)
                    if payload.count < payloadLength { meta.warnings.append("EXIF segment is cut off by the end of the file") }
                    if payload.count >= 14 {
                        exif = ExifReader.read(tiff: payload.slice(from: 6), warnings: &meta.warnings) ?? ExifFields()
                    }
                } else if xmp == nil, prefix.matches(xmpPrefix) {
                    let payload = try input.view(at: payloadAt, upTo: payloadLength)
                    xmp = XMP.scan(payload.slice(from: xmpPrefix.count))
                }
            case 0xE2 where meta.format == .jpeg:
                let prefix = try input.view(at: payloadAt, upTo: 4)
                if prefix.matches("MPF\0") { meta.format = .mpo }
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC && !sawFrame:
                // SOFn: precision (1), height (2), width (2). DHT, JPG and DAC share the range.
                sawFrame = true
                if let f = try input.view(at: payloadAt, count: 5) {
                    let height = f.be16(1), width = f.be16(3)
                    if width > 0 { meta.pixelWidth = width }
                    // Height 0 means "defined by the DNL marker later"; leave it unknown.
                    if height > 0 { meta.pixelHeight = height }
                    if height == 0 { meta.pixelWidth = nil }
                }
            default:
                break
            }
            pos = payloadAt + Int64(payloadLength)
        }
    }
}
