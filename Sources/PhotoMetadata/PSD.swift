/// Photoshop documents (`.psd`, and `.psb`, the large-document variant): the size from the
/// 26-byte header (`8BPS`, version 1 or 2, 6 reserved bytes, channels, height, width, depth,
/// colour mode), then the image resources section — after the colour mode data — for EXIF
/// (resource 0x0422, a TIFF structure), XMP (0x0424) and the IPTC-NAA record (0x0404), as the
/// blocks of a JPEG's APP13 are laid out. Layers and image data are not read.
enum PSD {
    /// The image resources photod reads.
    static let exifResource = 0x0422
    static let xmpResource = 0x0424

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata, exif: inout ExifFields?,
                      xmp: inout XMPFields?) throws(MetadataError) {
        let h = input.headView
        guard h.count >= 26 else {
            input.hitEnd = true
            meta.warnings.append("PSD header is cut off")
            return
        }
        let version = h.be16(4)
        guard version == 1 || version == 2 else {
            meta.warnings.append("PSD version \(version) is unknown")
            return
        }
        Stills.setSize(&meta, Int(h.be32(18)), Int(h.be32(14)))
        guard let modeData = try input.view(at: 26, count: 4) else { return }
        let resourcesAt = 30 + Int64(modeData.be32(0))
        guard let lengthField = try input.view(at: resourcesAt, count: 4) else {
            meta.warnings.append("PSD ends before its image resources")
            return
        }
        let blocks = try input.view(at: resourcesAt + 4, upTo: Int(lengthField.be32(0)))
        var iptc: IPTCFields?
        var warnings: [String] = []
        var (foundExif, foundXMP) = (exif, xmp)
        // The same block layout as APP13's.
        IPTC.forEachResource(blocks) { id, data in
            switch id {
            case exifResource where foundExif == nil:
                foundExif = ExifReader.read(tiff: data.matches("Exif\0\0") ? data.slice(from: 6) : data, warnings: &warnings)
            case xmpResource where foundXMP == nil:
                foundXMP = XMP.scan(data)
            case IPTC.iptcResource where iptc == nil:
                iptc = IPTC.fields(datasets: data)
            default:
                break
            }
            return true
        }
        (exif, xmp) = (foundExif, foundXMP)
        meta.warnings += warnings
        if let iptc {
            meta.dates.iptc = iptc.date
            meta.iptcPlace = iptc.place
        }
    }
}
