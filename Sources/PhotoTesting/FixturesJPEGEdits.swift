/// Edits of a JPEG's bytes into the variants real files carry: stray bytes between segments,
/// a height deferred to a DNL segment, an extra segment. They work on any JPEG — a real one
/// (made with TurboJPEG by the imaging tests, which then decodes) or a `JPEGFixture` — and
/// walk its segments, so each edit lands where a writer would have put it.
public enum JPEGEdit {
    /// The offset of the first segment with `marker` (0xC0 for SOF0, 0xDA for SOS, ...) in a
    /// JPEG's header segments, or nil.
    public static func offset(of marker: UInt8, in jpeg: [UInt8]) -> Int? {
        var pos = 2
        while pos + 4 <= jpeg.count, jpeg[pos] == 0xFF {
            if jpeg[pos + 1] == marker { return pos }
            if jpeg[pos + 1] == 0xDA || jpeg[pos + 1] == 0xD9 { return nil }
            pos += 2 + (Int(jpeg[pos + 2]) << 8 | Int(jpeg[pos + 3]))
        }
        return nil
    }

    /// `garbage` inserted just before the first `marker` segment, as some cameras and broken
    /// tools write (libjpeg warns "extraneous bytes before marker" and decodes the image).
    public static func insertingStrayBytes(_ jpeg: [UInt8], before marker: UInt8, _ garbage: [UInt8] = [0x00, 0x7F]) -> [UInt8] {
        guard let at = offset(of: marker, in: jpeg) else { preconditionFailure("no marker \(marker) in the JPEG") }
        var out = jpeg
        out.insert(contentsOf: garbage, at: at)
        return out
    }

    /// A segment (`FF marker length payload`) inserted right after SOI.
    public static func insertingSegment(_ jpeg: [UInt8], marker: UInt8, payload: [UInt8]) -> [UInt8] {
        precondition(payload.count + 2 <= 0xFFFF, "segment too large for a JPEG")
        let n = payload.count + 2
        return Array(jpeg[..<2]) + [0xFF, marker, UInt8(n >> 8), UInt8(n & 0xFF)] + payload + Array(jpeg[2...])
    }

    /// The frame header's height set to 0 and a DNL segment giving it placed right after the
    /// first scan's entropy-coded data, as ITU T.81 (B.2.5) allows and some scanners and
    /// cameras write. libjpeg refuses such a file ("Empty JPEG image (DNL not supported)").
    public static func deferringHeightToDNL(_ jpeg: [UInt8]) -> [UInt8] {
        guard let sof = offset(of: 0xC0, in: jpeg) ?? offset(of: 0xC2, in: jpeg) ?? offset(of: 0xC1, in: jpeg),
              let sos = offset(of: 0xDA, in: jpeg) else { preconditionFailure("no frame header or scan in the JPEG") }
        var out = jpeg
        let height = [out[sof + 5], out[sof + 6]]
        out[sof + 5] = 0
        out[sof + 6] = 0
        // The end of the first scan: the first marker that is not a stuffed zero, a fill byte or RSTn.
        var i = sos + 2 + (Int(out[sos + 2]) << 8 | Int(out[sos + 3]))
        while i + 1 < out.count {
            if out[i] == 0xFF, out[i + 1] != 0x00, out[i + 1] != 0xFF, !(0xD0...0xD7).contains(out[i + 1]) { break }
            i += 1
        }
        out.insert(contentsOf: [0xFF, 0xDC, 0x00, 0x04] + height, at: i)
        return out
    }
}

/// An IPTC-IIM record in a Photoshop APP13 segment, as Photoshop, Lightroom and Photo Mechanic
/// write it: `Photoshop 3.0\0`, image resource blocks (`8BIM`), the IPTC-NAA one (0x0404)
/// holding datasets.
public struct IPTCFixture: Sendable, Hashable {
    /// 2:55 DateCreated, `CCYYMMDD`.
    public var dateCreated: String?
    /// 2:60 TimeCreated, `HHMMSS±HHMM`.
    public var timeCreated: String?
    /// Writes a resource block before the IPTC one (a thumbnail resource, 0x040C), with a
    /// Pascal name of odd length, to exercise the padding rules.
    public var leadingResource: Bool
    /// Location datasets by number (2:90 City, 2:92 Sub-location, 2:95 Province/State, 2:100
    /// Country code, 2:101 Country name), as raw bytes (Latin-1 or UTF-8).
    public var location: [UInt8: [UInt8]]
    /// Writes record 1's CodedCharacterSet (1:90) as UTF-8 (`ESC % G`).
    public var declaresUTF8: Bool

    /// A record with these datasets (none given: only the record version and a keyword).
    public init(dateCreated: String? = nil, timeCreated: String? = nil, leadingResource: Bool = true,
                location: [UInt8: [UInt8]] = [:], declaresUTF8: Bool = false) {
        self.dateCreated = dateCreated
        self.timeCreated = timeCreated
        self.leadingResource = leadingResource
        self.location = location
        self.declaresUTF8 = declaresUTF8
    }

    /// A record with location datasets given as UTF-8 text.
    public init(city: String? = nil, subLocation: String? = nil, region: String? = nil, countryCode: String? = nil,
                country: String? = nil, declaresUTF8: Bool = true) {
        var location: [UInt8: [UInt8]] = [:]
        for (number, text) in [(UInt8(90), city), (92, subLocation), (95, region), (100, countryCode), (101, country)] {
            if let text { location[number] = Array(text.utf8) }
        }
        self.init(location: location, declaresUTF8: declaresUTF8)
    }

    /// The datasets of record 2 (with the record version 2:00 first).
    public func record() -> [UInt8] {
        func dataset(_ number: UInt8, _ value: [UInt8]) -> [UInt8] {
            [0x1C, 2, number, UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
        }
        var out: [UInt8] = declaresUTF8 ? [0x1C, 1, 90, 0, 3, 0x1B, 0x25, 0x47] : []
        out += dataset(0, [0, 4])
        out += dataset(25, Array("keyword".utf8))
        if let dateCreated { out += dataset(55, Array(dateCreated.utf8)) }
        if let timeCreated { out += dataset(60, Array(timeCreated.utf8)) }
        for number in location.keys.sorted() { out += dataset(number, location[number]!) }
        return out
    }

    /// The APP13 payload (the bytes after the segment's length field).
    public func app13Payload() -> [UInt8] {
        func resource(_ id: Int, name: [UInt8], _ data: [UInt8]) -> [UInt8] {
            var out = Array("8BIM".utf8) + [UInt8(id >> 8), UInt8(id & 0xFF)]
            out += [UInt8(name.count)] + name
            if (1 + name.count) % 2 == 1 { out.append(0) }
            out += be32(data.count) + data
            if data.count % 2 == 1 { out.append(0) }
            return out
        }
        var out = Array("Photoshop 3.0".utf8) + [0]
        if leadingResource { out += resource(0x040C, name: Array("thumb".utf8), [1, 2, 3]) }
        out += resource(0x0404, name: [], record())
        return out
    }
}
