import PhotoModel

/// The EXIF fields photod uses.
struct ExifFields: Sendable, Hashable {
    var make: String?
    var model: String?
    var lensModel: String?
    var software: String?
    var userComment: String?
    var orientation: Int?
    var original: Timestamp?
    var digitized: Timestamp?
    var modified: Timestamp?
    var gpsUTC: LocalDateTime?
    var latitude: Double?
    var longitude: Double?
    var altitude: Double?
    var contentIdentifier: String?
    /// Apple's MakerNote says the photo is an HDR capture (HDRImageType 3).
    var appleHDR = false
    /// Apple's MakerNote BurstUUID: the burst the photo was shot in.
    var burstIdentifier: String?

    /// Fills the fields `other` has and this one lacks (a RAW's second EXIF block, CR3's parts).
    mutating func merge(_ other: ExifFields) {
        make = make ?? other.make
        model = model ?? other.model
        lensModel = lensModel ?? other.lensModel
        software = software ?? other.software
        userComment = userComment ?? other.userComment
        orientation = orientation ?? other.orientation
        original = original ?? other.original
        digitized = digitized ?? other.digitized
        modified = modified ?? other.modified
        gpsUTC = gpsUTC ?? other.gpsUTC
        if latitude == nil, longitude == nil { latitude = other.latitude; longitude = other.longitude }
        altitude = altitude ?? other.altitude
        contentIdentifier = contentIdentifier ?? other.contentIdentifier
        appleHDR = appleHDR || other.appleHDR
        burstIdentifier = burstIdentifier ?? other.burstIdentifier
    }
}

/// EXIF decoding: a bounded walk of the TIFF structure (`TIFFWalker`) keeps the entries photod
/// reads, in place; their values are decoded here.
///
/// A tag's value is its first entry in its IFD that libexif 0.6.24 (which photod used until
/// 2026-12) would load: of a type TIFF 6 defines (1–12), with at least one byte. The tests hold
/// libexif to it, on a block repacked from the same entries (`LibExifOracleTests`). One
/// difference, on purpose: libexif read no further than 0xFFFE bytes into a block, so a large
/// value (a UserComment or a Make of tens of KB, as some tools write into PNG, WebP or HEIF EXIF)
/// hid the entries packed after it, the GPS IFD among them; photod reads them.
enum ExifReader {
    /// Decodes the EXIF of a TIFF structure held in memory (the bytes after `Exif\0\0` in a
    /// JPEG APP1 segment, a PNG `eXIf` chunk, a HEIF `Exif` item...).
    static func read(tiff: ByteView, warnings: inout [String]) -> ExifFields? {
        guard var walker = try? TIFFWalker(store: MemoryTIFF(block: tiff)),
              let layout = try? walker.walk(.exif) else { return nil }
        var fields = decode(layout: layout)
        warnings += layout.warnings.map { "EXIF: " + $0 }
        if let mn = layout.makerNote, fields.make == "Apple" { fields.applyAppleMakerNote(tiff.slice(mn.offset, mn.count)) }
        return fields
    }

    /// Decodes a layout's entries.
    static func decode(layout: TIFFLayout) -> ExifFields {
        ExifFields { kind, tag in
            layout.entries(kind).lazy.filter { $0.tag == tag }.compactMap { EntryValue($0, little: layout.littleEndian) }.first
        }
    }

    /// Apple's ContentIdentifier (tag 0x11 of the `Apple iOS` maker note), which pairs a Live
    /// Photo's image and video.
    static func appleContentIdentifier(_ note: ByteView) -> String? { appleMakerNote(note).contentIdentifier }

    /// A text entry of the maker note (type ASCII), nil when absent or malformed.
    private static func appleText(_ note: ByteView, entry e: Int, little: Bool) -> String? {
        let count = Int(little ? note.le32(e + 4) : note.be32(e + 4))
        guard count > 0, count < 256 else { return nil }
        if count <= 4 { return cleanText(note.array(e + 8, count)) }
        let off = Int(little ? note.le32(e + 8) : note.be32(e + 8))
        return note.has(off, count) ? cleanText(note.array(off, count)) : nil
    }

    /// What photod reads of the `Apple iOS` maker note: a big-endian IFD at offset 14 whose value
    /// offsets count from the maker note's start. Tag 0x11, ContentIdentifier (pairs a Live
    /// Photo's image and video); tag 0x0A, HDRImageType (3: an HDR capture; 4: the normal
    /// exposure kept beside it); tag 0x0B, BurstUUID (the burst the photo belongs to), as
    /// exiftool's Apple tables name them.
    static func appleMakerNote(_ note: ByteView) -> (contentIdentifier: String?, hdr: Bool, burst: String?) {
        guard note.matches("Apple iOS\0"), note.count >= 16 else { return (nil, false, nil) }
        let little = note.matches("II", at: 12)
        let n = little ? note.le16(14) : note.be16(14)
        guard n > 0, n < 200, note.has(16, 12 * n) else { return (nil, false, nil) }
        var id: String?, hdr = false, burst: String?
        for i in 0..<n {
            let e = 16 + 12 * i
            let tag = little ? note.le16(e) : note.be16(e)
            let type = little ? note.le16(e + 2) : note.be16(e + 2)
            let count = Int(little ? note.le32(e + 4) : note.be32(e + 4))
            switch tag {
            case 0x11 where type == 2: id = appleText(note, entry: e, little: little)
            case 0x0B where type == 2: burst = appleText(note, entry: e, little: little)
            case 0x0A where (type == 9 || type == 4) && count == 1:  // SLONG or LONG, inline
                hdr = (little ? note.le32(e + 8) : note.be32(e + 8)) == 3
            default:
                break
            }
        }
        return (id, hdr, burst)
    }
}

extension ExifFields {
    /// Takes what Apple's maker note says (`ExifReader.appleMakerNote`).
    mutating func applyAppleMakerNote(_ note: ByteView) {
        let note = ExifReader.appleMakerNote(note)
        contentIdentifier = note.contentIdentifier
        appleHDR = note.hdr
        burstIdentifier = note.burst
    }
}

extension ExifFields {
    /// photod's fields from an EXIF structure's entries, each looked up by its IFD and tag
    /// (`nil` when absent or unusable).
    init(entry get: (IFDKind, UInt16) -> EntryValue?) {
        self.init()
        make = get(.ifd0, ExifTags.make)?.text
        model = get(.ifd0, ExifTags.model)?.text
        software = get(.ifd0, ExifTags.software)?.text
        lensModel = get(.exif, ExifTags.lensModel)?.text
        if let o = get(.ifd0, ExifTags.orientation)?.integer(0), (1...8).contains(o) { orientation = o }
        if let c = get(.exif, ExifTags.userComment) { userComment = Self.userComment(c) }

        func stamp(_ kind: IFDKind, _ date: UInt16, _ sub: UInt16, _ offset: UInt16) -> Timestamp? {
            guard let d = get(kind, date)?.bytes else { return nil }
            return Timestamp.exif(d, subSeconds: get(.exif, sub)?.bytes, offset: get(.exif, offset)?.bytes)
        }
        original = stamp(.exif, ExifTags.dateTimeOriginal, ExifTags.subSecTimeOriginal, ExifTags.offsetTimeOriginal)
        digitized = stamp(.exif, ExifTags.dateTimeDigitized, ExifTags.subSecTimeDigitized, ExifTags.offsetTimeDigitized)
        modified = stamp(.ifd0, ExifTags.dateTime, ExifTags.subSecTime, ExifTags.offsetTime)

        // GPS: a reference without its value (or a value without a usable reference) is no position.
        if let lat = get(.gps, ExifTags.gpsLatitude).flatMap(Self.degrees),
           let lon = get(.gps, ExifTags.gpsLongitude).flatMap(Self.degrees),
           let latRef = get(.gps, ExifTags.gpsLatitudeRef)?.bytes.first,
           let lonRef = get(.gps, ExifTags.gpsLongitudeRef)?.bytes.first,
           latRef == UInt8(ascii: "N") || latRef == UInt8(ascii: "S"),
           lonRef == UInt8(ascii: "E") || lonRef == UInt8(ascii: "W") {
            let la = latRef == UInt8(ascii: "S") ? -abs(lat) : lat
            let lo = lonRef == UInt8(ascii: "W") ? -abs(lon) : lon
            if abs(la) <= 90, abs(lo) <= 180 {
                latitude = la
                longitude = lo
            }
        }
        if let alt = get(.gps, ExifTags.gpsAltitude)?.real(0), alt.isFinite, abs(alt) < 1_000_000 {
            let below = get(.gps, ExifTags.gpsAltitudeRef)?.integer(0) == 1
            altitude = below ? -abs(alt) : alt
        }
        if let d = get(.gps, ExifTags.gpsDateStamp)?.bytes, d.count >= 10,
           let y = Digits.value(d, 0, 4), let mo = Digits.value(d, 5, 2), let dd = Digits.value(d, 8, 2),
           let t = get(.gps, ExifTags.gpsTimeStamp), t.components >= 3,
           let h = t.real(0), let mi = t.real(1), let s = t.real(2),
           h >= 0, h < 24, mi >= 0, mi < 60, s >= 0, s < 61 {
            let whole = Int(s)
            let ms = Int((s - Double(whole)) * 1000)
            gpsUTC = LocalDateTime(year: y, month: mo, day: dd, hour: Int(h), minute: Int(mi), second: whole,
                                   millisecond: ms > 0 ? ms : nil)
        }
    }

    /// Degrees from a GPS coordinate: one to three (S)RATIONAL values, degrees/minutes/seconds.
    private static func degrees(_ v: EntryValue) -> Double? {
        guard v.components >= 1, let d = v.real(0) else { return nil }
        var value = d
        if v.components >= 2 { guard let m = v.real(1) else { return nil }; value += m / 60 }
        if v.components >= 3 { guard let s = v.real(2) else { return nil }; value += s / 3600 }
        return value.isFinite ? value : nil
    }

    /// EXIF UserComment: an 8-byte character-code prefix, then the text.
    private static func userComment(_ v: EntryValue) -> String? {
        let b = v.bytes
        guard b.count > 8 else { return nil }
        let code = b[0..<8]
        let body = b[8...]
        if code.elementsEqual("UNICODE\0".utf8) {
            // UCS-2 in the block's byte order unless a BOM says otherwise.
            var units: [UInt16] = []
            var little = v.little
            var i = body.startIndex
            if body.count >= 2 {
                if body[i] == 0xFF, body[i + 1] == 0xFE { little = true; i += 2 }
                else if body[i] == 0xFE, body[i + 1] == 0xFF { little = false; i += 2 }
            }
            while i + 1 < body.endIndex {
                let u = little ? UInt16(body[i]) | UInt16(body[i + 1]) << 8 : UInt16(body[i]) << 8 | UInt16(body[i + 1])
                if u == 0 { break }
                units.append(u)
                i += 2
            }
            let s = String(decoding: units, as: UTF16.self)
            return cleanText(Array(s.utf8))
        }
        if code.elementsEqual("JIS\0\0\0\0\0".utf8) { return nil }
        return cleanText(body)
    }
}

/// One entry's value, decoded on demand.
struct EntryValue {
    /// The TIFF type.
    let format: Int
    let components: Int
    let data: ByteView
    let little: Bool

    init(format: Int, components: Int, data: ByteView, little: Bool) {
        self.format = format
        self.components = components
        self.data = data
        self.little = little
    }

    /// A walked entry's value; `nil` for a type TIFF 6 does not define or an empty value.
    init?(_ entry: TIFFEntry, little: Bool) {
        guard (1...12).contains(entry.type), entry.value.count > 0 else { return nil }
        self.init(format: Int(entry.type), components: Int(entry.count), data: entry.value, little: little)
    }

    var bytes: [UInt8] { data.array() }
    var text: String? { cleanText(data.base[data.start..<(data.start + data.count)]) }

    private func u16(_ i: Int) -> Int? {
        guard i + 2 <= data.count else { return nil }
        return little ? Int(data[i]) | Int(data[i + 1]) << 8 : Int(data[i]) << 8 | Int(data[i + 1])
    }

    private func u32(_ i: Int) -> UInt32? {
        guard i + 4 <= data.count else { return nil }
        let b0 = UInt32(data[i]), b1 = UInt32(data[i + 1]), b2 = UInt32(data[i + 2]), b3 = UInt32(data[i + 3])
        return little ? b0 | b1 << 8 | b2 << 16 | b3 << 24 : b0 << 24 | b1 << 16 | b2 << 8 | b3
    }

    /// The i-th value of an integer entry.
    func integer(_ i: Int) -> Int? {
        guard i < components else { return nil }
        switch format {
        case 1, 7: return i < data.count ? Int(data[i]) : nil
        case 6: return i < data.count ? Int(Int8(bitPattern: data[i])) : nil
        case 3: return u16(2 * i)
        case 8: return u16(2 * i).map { Int(Int16(truncatingIfNeeded: $0)) }
        case 4: return u32(4 * i).map { Int($0) }
        case 9: return u32(4 * i).map { Int(Int32(bitPattern: $0)) }
        default: return nil
        }
    }

    /// The i-th value as a number: rationals (signed or not), integers, floats.
    func real(_ i: Int) -> Double? {
        guard i < components else { return nil }
        switch format {
        case 5:
            guard let n = u32(8 * i), let d = u32(8 * i + 4), d != 0 else { return nil }
            return Double(n) / Double(d)
        case 10:
            guard let n = u32(8 * i), let d = u32(8 * i + 4), d != 0 else { return nil }
            return Double(Int32(bitPattern: n)) / Double(Int32(bitPattern: d))
        case 11:
            return u32(4 * i).map { Double(Float(bitPattern: $0)) }
        case 12:
            guard let hi = u32(8 * i + (little ? 4 : 0)), let lo = u32(8 * i + (little ? 0 : 4)) else { return nil }
            return Double(bitPattern: UInt64(hi) << 32 | UInt64(lo))
        default:
            return integer(i).map(Double.init)
        }
    }
}
