/// The container families recognised from a file's first bytes. The parser of each family
/// settles the exact `MediaFormat` (an ISO BMFF file may be HEIC, MP4, CR3 or audio).
enum Container: Sendable, Hashable {
    case jpeg, tiff, png, mng, gif, bmp, ico, webp, avi, bmff, jp2, j2kCodestream, jxlCodestream, jxlContainer
    case bpg, ebml, flv, asf, raf, psd, crw, mrw, x3f, mpegTS, mpegPS
}

/// The verdict of sniffing.
enum Sniffed: Sendable, Hashable {
    case container(Container)
    /// Not an image or video: `kind` is the `detectedKind` of the error.
    case notMedia(kind: String, message: String)
    /// A media format photod recognises but does not index.
    case unsupported(String)
}

/// Magic-byte sniffing. Only the content decides; the extension never does (it only helps
/// tell TIFF-based RAW formats apart later).
enum Sniffer {
    static let asfGUID: [UInt8] = [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C]
    static let jp2Signature: [UInt8] = [0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]
    static let jxlSignature: [UInt8] = [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    static func sniff(_ h: ByteView) -> Sniffed {
        let b0 = h[0], b1 = h[1], b2 = h[2], b3 = h[3]
        if b0 == 0xFF, b1 == 0xD8, b2 == 0xFF { return .container(.jpeg) }
        if h.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .container(.png) }
        if h.matches([0x8A, 0x4D, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .container(.mng) }
        if h.matches([0x8B, 0x4A, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .unsupported("JNG image") }
        if h.matches("II*\0") || h.matches("MM\0*") || h.matches("IIRO") || h.matches("IIRS") || h.matches("MMOR")
            || h.matches("IIU\0") { return .container(.tiff) }
        // BigTIFF (64-bit offsets), which TIFFWalker walks too.
        if h.matches("II+\0") || h.matches("MM\0+") { return .container(.tiff) }
        if h.matches("GIF87a") || h.matches("GIF89a") { return .container(.gif) }
        if h.matches("RIFF"), h.count >= 12 {
            if h.matches("WEBP", at: 8) { return .container(.webp) }
            if h.matches("AVI ", at: 8) || h.matches("AVIX", at: 8) { return .container(.avi) }
            if h.matches("WAVE", at: 8) { return .notMedia(kind: "audio", message: "content is WAV audio, not an image or video") }
            if h.matches("RMID", at: 8) { return .notMedia(kind: "audio", message: "content is MIDI audio, not an image or video") }
            return .notMedia(kind: "unknown", message: "content is a RIFF file of an unknown kind")
        }
        if h.matches("RF64") { return .notMedia(kind: "audio", message: "content is RF64 (WAV) audio, not an image or video") }
        if h.matches(jp2Signature) { return .container(.jp2) }
        if h.matches(jxlSignature) { return .container(.jxlContainer) }
        if b0 == 0xFF, b1 == 0x0A { return .container(.jxlCodestream) }
        if b0 == 0xFF, b1 == 0x4F, b2 == 0xFF, b3 == 0x51 { return .container(.j2kCodestream) }
        if h.count >= 8 {
            switch h.fourCC(4) {
            case fcc("ftyp"), fcc("moov"), fcc("mdat"), fcc("wide"), fcc("pnot"), fcc("skip"), fcc("free"):
                // A box size below 8 (other than 0 and 1) is not a box.
                let size = h.be32(0)
                if size == 0 || size == 1 || size >= 8 { return .container(.bmff) }
            default: break
            }
        }
        if h.matches([0x42, 0x50, 0x47, 0xFB]) { return .container(.bpg) }
        if h.matches([0x1A, 0x45, 0xDF, 0xA3]) { return .container(.ebml) }
        if h.matches("FLV\u{01}") { return .container(.flv) }
        if h.matches(asfGUID) { return .container(.asf) }
        if h.matches("FUJIFILMCCD-RAW") { return .container(.raf) }
        // Camera RAW outside TIFF: Canon CRW (CIFF), Minolta MRW, Sigma X3F.
        if h.matches("HEAPCCDR", at: 6), h.matches("II") || h.matches("MM") { return .container(.crw) }
        if h.matches([0, 0x4D, 0x52, 0x4D]) { return .container(.mrw) }
        if h.matches("FOVb") { return .container(.x3f) }
        // Photoshop: PSD (version 1) and PSB (2, the large-document format).
        if h.matches("8BPS"), h.count >= 6, h.be16(4) == 1 || h.be16(4) == 2 { return .container(.psd) }
        if b0 == 0x42, b1 == 0x4D, h.count >= 26 {
            // "BM" alone is weak: also require a known DIB header size (OS/2 2.x's may be cut
            // at any length from 16 to 64 bytes).
            switch h.le32(14) {
            case 12, 16...64, 108, 124: return .container(.bmp)
            default: break
            }
        }
        if b0 == 0, b1 == 0, b2 == 1, b3 == 0, h.count >= 22 {
            let n = h.le16(4)
            if n >= 1, n <= 256, h[9] == 0 || h[9] == 0xFF { return .container(.ico) }
        }

        // Not media: say what it is, so the per-file error is useful.
        if h.matches("%PDF") { return .notMedia(kind: "pdf", message: "content is a PDF document, not an image or video") }
        if h.matches("PK\u{03}\u{04}") || h.matches("PK\u{05}\u{06}") || h.matches("PK\u{07}\u{08}") {
            return .notMedia(kind: "zip", message: "content is a ZIP archive, not an image or video")
        }
        if (b0 == 0x1F && b1 == 0x8B) || h.matches("BZh") || h.matches([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00])
            || h.matches([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) || h.matches("Rar!\u{1A}\u{07}")
            || h.matches([0x28, 0xB5, 0x2F, 0xFD]) || h.matches("ustar", at: 257) {
            return .notMedia(kind: "archive", message: "content is a compressed archive, not an image or video")
        }
        if h.matches("ID3") || h.matches("fLaC") || h.matches("MThd") || h.matches("#!AMR") || h.matches(".snd")
            || h.matches("caff") || h.matches("wvpk") || h.matches("MAC ")
            || (h.matches("FORM") && (h.matches("AIFF", at: 8) || h.matches("AIFC", at: 8))) {
            return .notMedia(kind: "audio", message: "content is audio, not an image or video")
        }
        if h.matches("OggS") {
            if h.find([0x80] + Array("theora".utf8), limit: 512) != nil { return .unsupported("Ogg Theora video") }
            return .notMedia(kind: "audio", message: "content is Ogg audio, not an image or video")
        }
        if b0 == 0xFF, b1 & 0xE0 == 0xE0, b1 & 0x06 != 0 {
            return .notMedia(kind: "audio", message: "content is MPEG audio (MP3), not an image or video")
        }
        if b0 == 0, b1 == 0, b2 == 1, b3 == 0xBA { return .container(.mpegPS) }
        if MPEGTS.layout(h) != nil { return .container(.mpegTS) }
        if h.matches([0x7F, 0x45, 0x4C, 0x46]) { return .notMedia(kind: "executable", message: "content is an executable, not an image or video") }
        if let text = textKind(h) { return text }
        return .notMedia(kind: "unknown", message: "content is not a recognised image or video format")
    }

    /// Text, SVG or other markup: no NULs and almost only printable bytes in the first KiB.
    static func textKind(_ h: ByteView) -> Sniffed? {
        let n = min(h.count, 1024)
        guard n > 0 else { return nil }
        var bad = 0
        for i in 0..<n {
            let c = h[i]
            if c == 0 { return nil }
            if c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0D && c != 0x0C && c != 0x1B { bad += 1 }
        }
        guard bad * 50 <= n else { return nil }
        var i = 0
        if h.matches([0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < n, h[i] == 0x20 || h[i] == 0x09 || h[i] == 0x0A || h[i] == 0x0D { i += 1 }
        if h[i] == UInt8(ascii: "<"), h.find(Array("<svg".utf8), limit: min(h.count, 4096)) != nil {
            return .notMedia(kind: "svg", message: "content is an SVG drawing, not a photo or video")
        }
        return .notMedia(kind: "text", message: "content is plain text, not an image or video")
    }
}
