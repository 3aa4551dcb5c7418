import Foundation
import PhotoMetadata
import PhotoTesting

/// Small hand-built headers for formats without a PhotoTesting builder.
enum Build {
    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
    static func le64(_ v: UInt64) -> [UInt8] { le32(Int(v & 0xFFFF_FFFF)) + le32(Int(v >> 32)) }
    static func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// An ISO BMFF box.
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + ascii(type) + payload }
    /// An ISO BMFF full box (version and flags first).
    static func fullBox(_ type: String, version: UInt8 = 0, flags: Int = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version, UInt8(flags >> 16 & 0xFF), UInt8(flags >> 8 & 0xFF), UInt8(flags & 0xFF)] + payload)
    }

    /// A HEIF still: `ftyp`, `meta` (hdlr pict, pitm 1, iinf with item 1 `hvc1` and item 2 `Exif`,
    /// iloc, iprp/ipco with a decoy `ispe` then the primary's, ipma), then `mdat` with the EXIF item.
    static func heif(brand: String = "heic", width: Int, height: Int, exif: [UInt8]?, properties: [UInt8] = [],
                     itemType: String = "hvc1") -> [UInt8] {
        let ftyp = box("ftyp", ascii(brand) + be32(0) + ascii("mif1") + ascii(brand))
        let hdlr = fullBox("hdlr", be32(0) + ascii("pict") + [UInt8](repeating: 0, count: 13))
        let pitm = fullBox("pitm", be16(1))
        var infes = fullBox("infe", version: 2, be16(1) + be16(0) + ascii(itemType) + [0])
        if exif != nil { infes += fullBox("infe", version: 2, be16(2) + be16(0) + ascii("Exif") + [0]) }
        let iinf = fullBox("iinf", be16(exif == nil ? 1 : 2) + infes)
        let decoy = fullBox("ispe", be32(512) + be32(512))
        let ispe = fullBox("ispe", be32(width) + be32(height))
        let ipco = box("ipco", decoy + ispe + properties)
        // item 1 -> property 2 (the second ispe); item 2 (Exif) -> nothing.
        let ipma = fullBox("ipma", be32(1) + be16(1) + [1, 0x82])
        let iprp = box("iprp", ipco + ipma)
        let payload = exif.map { be32(6) + ascii("Exif") + [0, 0] + $0 } ?? []
        // iloc v0: offset_size 4, length_size 4, base_offset_size 0; offsets patched below.
        func iloc(_ mdatPayloadAt: Int) -> [UInt8] {
            var items = be16(1) + be16(0) + be16(1) + be32(mdatPayloadAt) + be32(16)
            var count = 1
            if exif != nil {
                items += be16(2) + be16(0) + be16(1) + be32(mdatPayloadAt + 16) + be32(payload.count)
                count = 2
            }
            return fullBox("iloc", [0x44, 0x00] + be16(count) + items)
        }
        let probeMeta = fullBox("meta", hdlr + pitm + iinf + iloc(0) + iprp)
        let mdatPayloadAt = ftyp.count + probeMeta.count + 8
        let meta = fullBox("meta", hdlr + pitm + iinf + iloc(mdatPayloadAt) + iprp)
        return ftyp + meta + box("mdat", [UInt8](repeating: 0x11, count: 16) + payload)
    }

    /// A RIFF file.
    static func riff(_ form: String, _ chunks: [UInt8]) -> [UInt8] { ascii("RIFF") + le32(4 + chunks.count) + ascii(form) + chunks }
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        ascii(type) + le32(data.count) + data + (data.count & 1 == 1 ? [0] : [])
    }

    /// An EBML element with a known size.
    static func ebml(_ id: [UInt8], _ data: [UInt8]) -> [UInt8] {
        precondition(data.count < 0x3FFF)
        return id + [0x40 | UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data
    }

    /// A Matroska/WebM file with one track of the given type (1 video, 2 audio).
    static func matroska(docType: String, trackType: UInt8, width: Int = 0, height: Int = 0, durationMs: Double = 0,
                         dateUTCNanos: Int64? = nil) -> [UInt8] {
        let header = ebml([0x1A, 0x45, 0xDF, 0xA3], ebml([0x42, 0x82], ascii(docType)))
        var info = ebml([0x2A, 0xD7, 0xB1], [0x0F, 0x42, 0x40])
        var d = durationMs.bitPattern.bigEndian
        info += ebml([0x44, 0x89], withUnsafeBytes(of: &d) { Array($0) })
        if let n = dateUTCNanos {
            var v = n.bigEndian
            info += ebml([0x44, 0x61], withUnsafeBytes(of: &v) { Array($0) })
        }
        var entry = ebml([0x83], [trackType])
        if trackType == 1 { entry += ebml([0xE0], ebml([0xB0], be16(width)) + ebml([0xBA], be16(height))) }
        let tracks = ebml([0x16, 0x54, 0xAE, 0x6B], ebml([0xAE], entry))
        let cluster = ebml([0x1F, 0x43, 0xB6, 0x75], [UInt8](repeating: 0, count: 32))
        return header + ebml([0x18, 0x53, 0x80, 0x67], ebml([0x15, 0x49, 0xA9, 0x66], info) + tracks + cluster)
    }

    /// An AVI with `avih`, one video stream and an `IDIT` date.
    static func avi(width: Int, height: Int, frames: Int, microsecondsPerFrame: Int, idit: String?) -> [UInt8] {
        var avih = le32(microsecondsPerFrame) + le32(0) + le32(0) + le32(0) + le32(frames) + le32(0) + le32(1) + le32(0)
        avih += le32(width) + le32(height) + [UInt8](repeating: 0, count: 16)
        let strh = ascii("vids") + ascii("DIB ") + [UInt8](repeating: 0, count: 12) + le32(1) + le32(25) + le32(0) + le32(frames)
            + [UInt8](repeating: 0, count: 20)
        let strf = le32(40) + le32(width) + le32(height) + [UInt8](repeating: 0, count: 28)
        let strl = chunk("LIST", ascii("strl") + chunk("strh", strh) + chunk("strf", strf))
        var hdrl = ascii("hdrl") + chunk("avih", avih) + strl
        if let idit { hdrl += chunk("IDIT", ascii(idit) + [0x0A, 0]) }
        return riff("AVI ", chunk("LIST", hdrl) + chunk("LIST", ascii("movi") + [UInt8](repeating: 0, count: 64)))
    }

    /// An FLV with an `onMetaData` script tag.
    static func flv(width: Double, height: Double, duration: Double) -> [UInt8] {
        func number(_ name: String, _ v: Double) -> [UInt8] {
            var bits = v.bitPattern.bigEndian
            return be16(name.utf8.count) + ascii(name) + [0] + withUnsafeBytes(of: &bits) { Array($0) }
        }
        let script = [2] + be16(10) + ascii("onMetaData") + [8] + be32(3) + number("duration", duration)
            + number("width", width) + number("height", height) + [0, 0, 9]
        let tag = [18] + Array(be32(script.count).suffix(3)) + [0, 0, 0, 0] + [0, 0, 0] + script
        return ascii("FLV") + [1, 5] + be32(9) + be32(0) + tag + be32(tag.count)
    }

    /// An ASF header with File Properties and one stream (video or audio).
    static func asf(video: Bool, width: Int = 0, height: Int = 0, playDuration100ns: UInt64 = 0, prerollMs: UInt64 = 0,
                    created: UInt64 = 0) -> [UInt8] {
        let headerGUID: [UInt8] = [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C]
        let fileGUID: [UInt8] = [0xA1, 0xDC, 0xAB, 0x8C, 0x47, 0xA9, 0xCF, 0x11, 0x8E, 0xE4, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65]
        let streamGUID: [UInt8] = [0x91, 0x07, 0xDC, 0xB7, 0xB7, 0xA9, 0xCF, 0x11, 0x8E, 0xE6, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65]
        let videoGUID: [UInt8] = [0xC0, 0xEF, 0x19, 0xBC, 0x4D, 0x5B, 0xCF, 0x11, 0xA8, 0xFD, 0x00, 0x80, 0x5F, 0x5C, 0x44, 0x2B]
        let audioGUID: [UInt8] = [0x40, 0x9E, 0x69, 0xF8, 0x4D, 0x5B, 0xCF, 0x11, 0xA8, 0xFD, 0x00, 0x80, 0x5F, 0x5C, 0x44, 0x2B]
        let fileData = [UInt8](repeating: 0, count: 16) + le64(0) + le64(created) + le64(0) + le64(playDuration100ns) + le64(0)
            + le64(prerollMs) + le32(2) + le32(0) + le32(0) + le32(0)
        let file = fileGUID + le64(UInt64(24 + fileData.count)) + fileData
        var typeSpecific = le32(width) + le32(height) + [2] + le16(40) + le32(40) + le32(width) + le32(height)
        typeSpecific += [UInt8](repeating: 0, count: 28)
        let streamData = (video ? videoGUID : audioGUID) + [UInt8](repeating: 0, count: 16) + le64(0)
            + le32(video ? typeSpecific.count : 0) + le32(0) + le16(1) + le32(0) + (video ? typeSpecific : [])
        let stream = streamGUID + le64(UInt64(24 + streamData.count)) + streamData
        let body = file + stream
        return headerGUID + le64(UInt64(30 + body.count)) + le32(2) + [1, 2] + body
    }

    /// Reads bytes in memory with a file name.
    static func read(_ bytes: [UInt8], name: String = "file.bin") throws(MetadataError) -> MediaMetadata {
        var source = MemorySource(bytes)
        return try MetadataReader().read(&source, fileName: Array(name.utf8))
    }

    /// The error a read throws, or `nil` when it succeeds.
    static func error(_ bytes: [UInt8], name: String = "file.bin") -> MetadataError? {
        do { _ = try read(bytes, name: name); return nil } catch { return error }
    }
}
