import CZlib
import PhotoModel

/// PNG's text chunks and the metadata ImageMagick keeps in them: `tEXt` (keyword, NUL, Latin-1
/// text), `zTXt` (keyword, NUL, method 0, a zlib stream) and `iTXt` (keyword, NUL, compression
/// flag, method, language, NUL, translated keyword, NUL, UTF-8 text, a zlib stream when
/// flagged). ImageMagick writes a file's EXIF, XMP and IPTC profiles as `Raw profile type exif`
/// (also `APP1`), `xmp`, `iptc` and `8bim`: the text `\nTYPE\n   LENGTH\n` then the profile's
/// bytes in hex, wrapped at 72 digits; exiftool and Pillow read them. Pure and bounded: a chunk
/// inflates to `maxInflatedBytes` at most, a profile holds at most what its hex gives.
enum PNGText {
    /// The most one compressed chunk may inflate to (hex doubles a profile: 2 MiB of text is a
    /// 1 MiB profile, beyond any EXIF block's 64 KiB).
    static let maxInflatedBytes = 2 << 20

    /// A chunk's keyword and its text, inflated.
    struct Chunk {
        var keyword: [UInt8]
        var text: [UInt8]
    }

    /// Whether a chunk of type `type` whose data begins with `head` is worth inflating: the
    /// keyword is one photod reads (most text chunks are comments and software names).
    static func isProfile(keyword: ByteView) -> Bool {
        keyword.matches(profilePrefix)
    }

    static let profilePrefix = Array("Raw profile type ".utf8)

    /// The keyword and text of a `tEXt`, `zTXt` or `iTXt` chunk's data, or nil when it is
    /// malformed or does not inflate; `warnings` says why when it was a profile.
    static func chunk(type: UInt32, _ d: ByteView) -> Chunk? {
        guard let nul = d.find([0], limit: min(d.count, 80)), nul > 0 else { return nil }
        let keyword = d.array(0, nul)
        var at = nul + 1
        switch type {
        case fcc("tEXt"):
            return Chunk(keyword: keyword, text: d.array(at, d.count - at))
        case fcc("zTXt"):
            guard d.has(at, 1), d[at] == 0 else { return nil }
            return inflate(d.slice(from: at + 1)).map { Chunk(keyword: keyword, text: $0) }
        case fcc("iTXt"):
            guard d.has(at, 2) else { return nil }
            let compressed = d[at] == 1
            guard !compressed || d[at + 1] == 0 else { return nil }
            at += 2
            for _ in 0..<2 {  // the language tag and the translated keyword
                guard let end = d.find([0], from: at) else { return nil }
                at = end + 1
            }
            let text = d.slice(from: at)
            return compressed ? inflate(text).map { Chunk(keyword: keyword, text: $0) } : Chunk(keyword: keyword, text: text.array())
        default:
            return nil
        }
    }

    /// A zlib stream inflated, up to `maxInflatedBytes`; nil when it is damaged.
    static func inflate(_ stream: ByteView) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: maxInflatedBytes)
        var produced = 0
        let status = stream.withUnsafeBytes { src in
            out.withUnsafeMutableBufferPointer { dst in
                photo_inflate(src.baseAddress?.assumingMemoryBound(to: UInt8.self), src.count, dst.baseAddress, dst.count, &produced)
            }
        }
        guard status == Int32(PHOTO_INFLATE_OK) || status == Int32(PHOTO_INFLATE_TOO_LARGE) else { return nil }
        out.removeSubrange(produced...)
        return out
    }

    /// A raw profile's type (lowercased: `exif`, `app1`, `xmp`, `iptc`, `8bim`) and bytes, from a
    /// `Raw profile type …` chunk's text: `\nTYPE\n`, blanks, the byte count in decimal, a
    /// newline, then hex digits with white space between them. Nil when the text is not of that
    /// form, claims nothing, or its hex stops before a byte; fewer digits than claimed give the
    /// bytes they hold.
    static func rawProfile(_ text: [UInt8]) -> (type: String, bytes: [UInt8])? {
        var i = 0
        func skipBlanks() { while i < text.count, text[i] == 0x0A || text[i] == 0x0D || text[i] == 0x20 || text[i] == 0x09 { i += 1 } }
        skipBlanks()
        let typeStart = i
        while i < text.count, text[i] != 0x0A, i - typeStart < 16 { i += 1 }
        guard i < text.count, i > typeStart else { return nil }
        let type = String(decoding: text[typeStart..<i].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        skipBlanks()
        var length = 0
        let digitsStart = i
        while i < text.count, Digits.isDigit(text[i]), i - digitsStart < 9 {
            length = length * 10 + Int(text[i] - 0x30)
            i += 1
        }
        guard i > digitsStart, length > 0 else { return nil }
        length = min(length, text.count / 2)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        var high: UInt8?
        while i < text.count, bytes.count < length {
            let c = text[i]
            i += 1
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x61...0x66: v = c - 0x61 + 10
            case 0x41...0x46: v = c - 0x41 + 10
            case 0x0A, 0x0D, 0x20, 0x09: continue
            default: return bytes.isEmpty ? nil : (type, bytes)
            }
            if let h = high {
                bytes.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return bytes.isEmpty ? nil : (type, bytes)
    }

    /// What a chunk's raw profile gives: EXIF (a TIFF structure, after an `Exif\0\0` when the
    /// writer kept it), XMP, or IPTC-IIM (bare datasets, image resource blocks, or an APP13
    /// payload). Each at most once: the first of a kind counts.
    static func apply(_ profile: (type: String, bytes: [UInt8]), exif: inout ExifFields?, xmp: inout XMPFields?,
                      iptc: inout IPTCFields?, warnings: inout [String]) {
        let v = ByteView(profile.bytes)
        switch profile.type {
        case "exif", "app1":
            guard exif == nil else { return }
            exif = ExifReader.read(tiff: v.matches("Exif\0\0") ? v.slice(from: 6) : v, warnings: &warnings)
        case "xmp":
            guard xmp == nil else { return }
            xmp = XMP.scan(v)
        case "iptc", "8bim":
            guard iptc == nil else { return }
            if v.matches(IPTC.photoshopSignature) {
                iptc = IPTC.fields(app13: v)
            } else if v.matches(IPTC.resourceSignature) {
                iptc = IPTC.iptcRecord(v).map(IPTC.fields(datasets:))
            } else if v.has(0, 1), v[0] == 0x1C {
                iptc = IPTC.fields(datasets: v)
            }
        default:
            return
        }
    }
}
