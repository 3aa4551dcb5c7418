/// JPEG (and MPO): walks the marker segments up to the first scan, taking the frame size from
/// the first SOFn, EXIF from the first APP1 `Exif` segment wherever it sits among the APPn
/// segments (libexif's own loader gives up at APP6 and others), XMP from APP1, the IPTC-IIM
/// capture date and location from a Photoshop APP13 segment, and the MPF APP2 segment that marks a
/// multi-picture file. Stray bytes between segments are skipped to the next marker, as libjpeg
/// does. Scan data is never read, with one exception: a frame header whose height is 0 defers
/// it to a DNL segment after the first scan (ITU T.81 B.2.5), which is looked for there.
enum JPEG {
    static let xmpPrefix: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                      xmp: inout XMPFields?, base: Int64 = 0, end: Int64? = nil) throws(MetadataError) {
        var pos: Int64 = base + 2
        let end = min(end ?? input.size, input.size)
        var items = 0
        var sawFrame = false
        var heightFromDNL = false
        var iptc: IPTCFields?
        defer {
            if let iptc {
                if meta.dates.iptc == nil { meta.dates.iptc = iptc.date }
                if meta.iptcPlace == nil { meta.iptcPlace = iptc.place }
            }
        }
        while items < Limits.maxItems {
            items += 1
            guard pos + 4 <= end, let h = try input.view(at: pos, count: 4) else {
                if pos < end { meta.warnings.append("JPEG ends inside a segment header") }
                else { meta.warnings.append("JPEG ends before the image data") }
                input.hitEnd = true
                break
            }
            guard h[0] == 0xFF, h[1] != 0x00 else {
                // Stray bytes before a marker: libjpeg skips to the next one with a warning (and
                // ImageMagick, exiftool and browsers show the image), so skip them too.
                guard let next = try nextMarker(&input, from: pos, end: end) else {
                    meta.warnings.append("JPEG marker expected at \(pos), found bytes that lead to no marker; stopped")
                    break
                }
                meta.warnings.append("JPEG has \(next - pos) stray bytes before the marker at \(next); skipped")
                pos = next
                continue
            }
            let marker = h[1]
            if marker == 0xFF { pos += 1; continue }  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { pos += 2; continue }
            if marker == 0xD9 { break }  // EOI
            let length = h.be16(2)
            guard length >= 2 else {
                meta.warnings.append("JPEG segment at \(pos) has length \(length); stopped")
                break
            }
            let payloadAt = pos + 4
            let payloadLength = length - 2
            if marker == 0xDA {
                // SOS: entropy-coded data follows. Only a height left to DNL makes it worth reading.
                if heightFromDNL { try readDNL(&input, &meta, from: payloadAt + Int64(payloadLength), end: end) }
                break
            }
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
            case 0xED where iptc == nil:
                let prefix = try input.view(at: payloadAt, upTo: IPTC.photoshopSignature.count)
                if prefix.matches(IPTC.photoshopSignature) {
                    iptc = IPTC.fields(app13: try input.view(at: payloadAt, upTo: payloadLength))
                }
            case _ where JPEGMarkers.isFrameHeader(marker) && !sawFrame:
                // SOFn: precision (1), height (2), width (2).
                sawFrame = true
                if let f = try input.view(at: payloadAt, count: 5) {
                    let height = f.be16(1), width = f.be16(3)
                    if width > 0 { meta.pixelWidth = width }
                    if height > 0 { meta.pixelHeight = height }
                    // Height 0: defined by the DNL segment after the first scan.
                    heightFromDNL = height == 0 && width > 0
                }
            default:
                break
            }
            pos = payloadAt + Int64(payloadLength)
        }
    }

    /// The offset of the next marker at or after `from` (libjpeg's rule, see `JPEGMarkers.next`),
    /// looking through at most `Limits.maxStrayBytes`.
    private static func nextMarker(_ input: inout Input, from: Int64, end: Int64) throws(MetadataError) -> Int64? {
        var at = from
        while at < end, at - from < Int64(Limits.maxStrayBytes) {
            let window = try input.view(at: at, upTo: Int(min(Int64(Limits.windowBytes), end - at)))
            guard window.count >= 2 else { return nil }
            if let i = window.withUnsafeBytes({ JPEGMarkers.next(in: $0, from: 0) }) { return at + Int64(i) }
            at += Int64(window.count - 1)  // a 0xFF at the window's end is looked at again with what follows
        }
        return nil
    }

    /// The height a DNL segment gives, looked for where T.81 puts it: right after the first
    /// scan's entropy-coded data (read in windows, at most `Limits.maxDNLSearch` bytes).
    private static func readDNL(_ input: inout Input, _ meta: inout MediaMetadata, from: Int64, end: Int64) throws(MetadataError) {
        var at = from
        while at < end, at - from < Int64(Limits.maxDNLSearch) {
            let window = try input.view(at: at, upTo: Int(min(Int64(Limits.maxRead), end - at)))
            guard window.count >= 2 else { break }
            guard let i = window.withUnsafeBytes({ JPEGMarkers.endOfEntropyCodedData(in: $0, from: 0) }) else {
                at += Int64(window.count - 1)
                continue
            }
            let markerAt = at + Int64(i)
            if let dnl = try input.view(at: markerAt, count: 6), dnl[1] == JPEGMarkers.defineNumberOfLines, dnl.be16(2) == 4,
               dnl.be16(4) > 0 {
                meta.pixelHeight = dnl.be16(4)
            } else {
                meta.warnings.append("JPEG frame header gives height 0 and no DNL segment follows the first scan")
            }
            return
        }
        meta.warnings.append("JPEG frame header gives height 0; no DNL segment found in the first \(Limits.maxDNLSearch) bytes of the scan")
    }
}
