#if canImport(Glibc)
import Glibc
#endif
import PhotoModel

/// What photod takes from an XMP packet.
struct XMPFields: Sendable, Hashable {
    /// The capture date: `exif:DateTimeOriginal`, else `photoshop:DateCreated`, else `xmp:CreateDate`.
    var date: Timestamp?
    /// `xmp:Rating`, 0–5.
    var rating: Int?
    /// `dc:subject` bag items.
    var keywords: [String] = []
    /// `tiff:Orientation`, 1–8 (EXIF's values), which editors write when the file has no EXIF.
    var orientation: Int?
    /// A gain map: Ultra HDR's and Adobe's `hdrgm` namespace, Apple's HDRGainMap one, or a
    /// container item of semantic `GainMap`.
    var hasGainMap = false
    /// The location: `Iptc4xmpExt:LocationCreated`, else the first `LocationShown`, else the
    /// flat properties (`photoshop:City`/`State`/`Country`, `Iptc4xmpCore:Location`/`CountryCode`).
    var place: Place?
    /// A depth map: Google's `GDepth` properties (the map itself in the extended packet), or a
    /// Dynamic Depth container item of semantic `Depth`.
    var hasDepthMap = false
}

/// A bounded byte scanner for the few XMP properties photod reads, in attribute form
/// (`xmp:CreateDate="..."`) or element form (`<xmp:CreateDate>...</xmp:CreateDate>`).
/// No XML library: the packet is searched, never parsed into a tree.
enum XMP {
    /// Capture-date properties in priority order, each under its usual prefixes.
    static let dateNames: [[[UInt8]]] = [
        [Array("exif:DateTimeOriginal".utf8)],
        [Array("photoshop:DateCreated".utf8)],
        [Array("xmp:CreateDate".utf8), Array("xap:CreateDate".utf8)],
    ]
    static let ratingNames: [[UInt8]] = [Array("xmp:Rating".utf8), Array("xap:Rating".utf8)]
    static let orientationName = Array("tiff:Orientation".utf8)
    static let subjectOpen = Array("<dc:subject".utf8)
    static let subjectClose = Array("</dc:subject>".utf8)
    static let liOpen = Array("<rdf:li".utf8)
    static let liClose = Array("</rdf:li>".utf8)
    static let gainMapMarkers = ["http://ns.adobe.com/hdr-gain-map/1.0/", "http://ns.apple.com/HDRGainMap/1.0/",
                                 "Semantic=\"GainMap\""].map { Array($0.utf8) }
    static let depthMapMarkers = ["GDepth:Format", "GDepth:Mime", "GDepth:Data", "Semantic=\"Depth\""].map { Array($0.utf8) }

    /// Scans a packet (at most `Limits.maxRead` bytes are looked at).
    static func scan(_ packet: ByteView) -> XMPFields {
        let p = packet.slice(0, Limits.maxRead)
        var f = XMPFields()
        for names in dateNames where f.date == nil {
            for name in names {
                if let v = value(of: name, in: p), let t = Timestamp.iso8601(v) ?? Timestamp.exif(v) {
                    f.date = t
                    break
                }
            }
        }
        for name in ratingNames {
            if let v = value(of: name, in: p) {
                let digits = v.prefix { $0 != UInt8(ascii: ".") }
                if digits.count == 1, let r = Digits.value(Array(digits), 0, 1), r <= 5 { f.rating = r }
                break
            }
        }
        if let v = value(of: orientationName, in: p), let o = cleanText(v).flatMap({ Int($0) }), (1...8).contains(o) {
            f.orientation = o
        }
        f.place = location(in: p)
        f.hasGainMap = gainMapMarkers.contains { find($0, in: p, from: 0) != nil }
        f.hasDepthMap = depthMapMarkers.contains { find($0, in: p, from: 0) != nil }
        if let open = find(subjectOpen, in: p, from: 0) {
            let end = find(subjectClose, in: p, from: open) ?? p.count
            var i = open
            while f.keywords.count < 200, let li = find(liOpen, in: p, from: i), li < end {
                guard let gt = find([UInt8(ascii: ">")], in: p, from: li), gt < end else { break }
                guard p[gt - 1] != UInt8(ascii: "/") else { i = gt; continue }  // <rdf:li/>
                guard let close = find(liClose, in: p, from: gt), close <= end else { break }
                if let s = cleanText(decodeEntities(p.array(gt + 1, min(close - gt - 1, 1024)))) { f.keywords.append(s) }
                i = close
            }
        }
        return f
    }

    static let locationStructs = ["Iptc4xmpExt:LocationCreated", "Iptc4xmpExt:LocationShown"].map { Array($0.utf8) }
    static let structNames = (city: Array("Iptc4xmpExt:City".utf8), sub: Array("Iptc4xmpExt:Sublocation".utf8),
                              region: Array("Iptc4xmpExt:ProvinceState".utf8), country: Array("Iptc4xmpExt:CountryName".utf8),
                              code: Array("Iptc4xmpExt:CountryCode".utf8))
    static let flatNames = (city: Array("photoshop:City".utf8), sub: Array("Iptc4xmpCore:Location".utf8),
                            region: Array("photoshop:State".utf8), country: Array("photoshop:Country".utf8),
                            code: Array("Iptc4xmpCore:CountryCode".utf8))

    /// The packet's location (see `XMPFields.place`): a structure's fields are looked for
    /// between its opening and closing tags (or in its `rdf:li`'s attributes), so that
    /// LocationShown's city is not taken for LocationCreated's.
    static func location(in p: ByteView) -> Place? {
        for name in locationStructs {
            guard let open = find([UInt8(ascii: "<")] + name, in: p, from: 0) else { continue }
            let close = find(Array("</".utf8) + name, in: p, from: open) ?? min(p.count, open + 4096)
            let inner = p.slice(open, close - open)
            let names = structNames
            let place = Place.inFile(city: text(names.city, inner), subLocation: text(names.sub, inner),
                                     region: text(names.region, inner), country: text(names.country, inner), code: text(names.code, inner))
            if !place.isEmpty { return place }
        }
        let names = flatNames
        let place = Place.inFile(city: text(names.city, p), subLocation: text(names.sub, p), region: text(names.region, p),
                                 country: text(names.country, p), code: text(names.code, p))
        return place.isEmpty ? nil : place
    }

    private static func text(_ name: [UInt8], _ p: ByteView) -> String? {
        value(of: name, in: p).flatMap(cleanText)
    }

    /// The value of a property as an attribute or a simple element, entity-decoded.
    static func value(of name: [UInt8], in p: ByteView) -> [UInt8]? {
        var from = 0
        var tries = 0
        while tries < 64, let at = find(name, in: p, from: from) {
            tries += 1
            from = at + name.count
            // The name must stand alone: preceded by whitespace or '<', followed by '=' or '>'.
            let before = at > 0 ? p[at - 1] : 0x20
            guard before == 0x20 || before == 0x09 || before == 0x0A || before == 0x0D || before == UInt8(ascii: "<")
            else { continue }
            var i = at + name.count
            while i < p.count, p[i] == 0x20 || p[i] == 0x09 || p[i] == 0x0A || p[i] == 0x0D { i += 1 }
            guard i < p.count else { return nil }
            if before != UInt8(ascii: "<"), p[i] == UInt8(ascii: "=") {
                i += 1
                while i < p.count, p[i] == 0x20 || p[i] == 0x09 { i += 1 }
                let quote = p[i]
                guard quote == 0x22 || quote == 0x27 else { continue }
                var j = i + 1
                while j < p.count, p[j] != quote, j - i < 512 { j += 1 }
                guard j < p.count, p[j] == quote else { continue }
                return decodeEntities(p.array(i + 1, j - i - 1))
            }
            if before == UInt8(ascii: "<") {
                guard let gt = find([UInt8(ascii: ">")], in: p, from: i), gt - i < 256 else { continue }
                guard p[gt - 1] != UInt8(ascii: "/") else { continue }
                var j = gt + 1
                while j < p.count, p[j] != UInt8(ascii: "<"), j - gt < 512 { j += 1 }
                guard j < p.count else { return nil }
                let text = decodeEntities(p.array(gt + 1, j - gt - 1))
                // An element holding a structure (rdf:Alt/Seq) is not a simple value.
                if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { continue }
                return text
            }
        }
        return nil
    }

    /// The first occurrence of `needle` at or after `from`, found with `memchr` on its first byte.
    static func find(_ needle: [UInt8], in p: ByteView, from: Int) -> Int? {
        guard let first = needle.first, from >= 0, from + needle.count <= p.count else { return nil }
        return p.base.withUnsafeBufferPointer { buf -> Int? in
            let base = buf.baseAddress! + p.start
            var i = from
            let last = p.count - needle.count
            while i <= last {
                guard let hit = memchr(base + i, Int32(first), last - i + 1) else { return nil }
                let at = UnsafePointer<UInt8>(hit.assumingMemoryBound(to: UInt8.self)) - base
                if needle.withUnsafeBufferPointer({ memcmp(base + at, $0.baseAddress!, needle.count) == 0 }) { return at }
                i = at + 1
            }
            return nil
        }
    }

    /// Replaces the five XML entities and numeric character references.
    static func decodeEntities(_ b: [UInt8]) -> [UInt8] {
        guard b.contains(UInt8(ascii: "&")) else { return b }
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "&"), let semi = b[i...].prefix(12).firstIndex(of: UInt8(ascii: ";")) {
                let name = Array(b[(i + 1)..<semi])
                var scalar: UInt32?
                switch name {
                case Array("amp".utf8): scalar = 0x26
                case Array("lt".utf8): scalar = 0x3C
                case Array("gt".utf8): scalar = 0x3E
                case Array("quot".utf8): scalar = 0x22
                case Array("apos".utf8): scalar = 0x27
                default:
                    if name.first == UInt8(ascii: "#") {
                        let hexForm = name.count > 1 && (name[1] == UInt8(ascii: "x") || name[1] == UInt8(ascii: "X"))
                        let digits = name.dropFirst(hexForm ? 2 : 1)
                        scalar = UInt32(String(decoding: digits, as: UTF8.self), radix: hexForm ? 16 : 10)
                    }
                }
                if let s = scalar, let u = Unicode.Scalar(s) {
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                    i = semi + 1
                    continue
                }
            }
            out.append(b[i])
            i += 1
        }
        return out
    }
}

extension Place {
    /// A place from a file's location fields: the country code as two letters (from the code
    /// field, else from the country's name: "United States", "USA"), so that files and the
    /// gazetteer name one country alike.
    static func inFile(city: String?, subLocation: String?, region: String?, country: String?, code: String?) -> Place {
        Place(city: city, subLocation: subLocation, region: region, country: country,
              countryCode: code.flatMap { CountryCodes.alpha2($0) } ?? country.flatMap { CountryCodes.alpha2(forName: $0) }, source: .file)
    }
}
