/// A JPEG as a metadata reader sees it: SOI, optional extra APPn segments, an APP1 EXIF
/// segment, an APP1 XMP packet, an optional APP2 MPF segment, DQT, a frame header (SOFn)
/// with the given size, DHT, a scan header, filler scan data and EOI. The scan data is not
/// decodable; everything a metadata reader parses is well-formed.
///
/// `bytes()` is a pure function: build thousands of files from one value by varying fields.
public struct JPEGFixture: Sendable, Hashable {
    /// A marker segment (`FF marker length payload`).
    public struct Segment: Sendable, Hashable {
        /// The marker byte after 0xFF (0xE6 for APP6).
        public var marker: UInt8
        /// The bytes after the length field.
        public var payload: [UInt8]
        /// A segment; the length field is computed.
        public init(marker: UInt8, payload: [UInt8]) {
            self.marker = marker
            self.payload = payload
        }
    }

    /// The frame width written in the SOF segment.
    public var width: Int
    /// The frame height written in the SOF segment.
    public var height: Int
    /// An APP1 `Exif` segment, when set.
    public var exif: ExifFixture?
    /// An XMP packet (the XML text) for an APP1 `http://ns.adobe.com/xap/1.0/` segment.
    public var xmp: String?
    /// Segments written before the EXIF segment (e.g. APP6 segments, which stop libexif's loader).
    public var leadingSegments: [Segment]
    /// Adds an APP2 `MPF` segment (a multi-picture file, MPO).
    public var multiPicture: Bool
    /// The SOF marker (0xC0 baseline, 0xC2 progressive, ...).
    public var frameMarker: UInt8
    /// Bytes of filler scan data after SOS (no 0xFF bytes), standing for the image.
    public var scanBytes: Int

    /// A JPEG fixture.
    public init(width: Int, height: Int, exif: ExifFixture? = nil, xmp: String? = nil, leadingSegments: [Segment] = [],
                multiPicture: Bool = false, frameMarker: UInt8 = 0xC0, scanBytes: Int = 256) {
        self.width = width
        self.height = height
        self.exif = exif
        self.xmp = xmp
        self.leadingSegments = leadingSegments
        self.multiPicture = multiPicture
        self.frameMarker = frameMarker
        self.scanBytes = scanBytes
    }

    /// The file's bytes.
    public func bytes() -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        func segment(_ marker: UInt8, _ payload: [UInt8]) {
            precondition(payload.count + 2 <= 0xFFFF, "segment too large for a JPEG")
            let n = payload.count + 2
            out += [0xFF, marker, UInt8(n >> 8), UInt8(n & 0xFF)]
            out += payload
        }
        if leadingSegments.isEmpty, exif == nil {
            segment(0xE0, Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
        }
        for s in leadingSegments { segment(s.marker, s.payload) }
        if let exif { segment(0xE1, exif.app1Payload()) }
        if let xmp { segment(0xE1, Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + Array(xmp.utf8)) }
        if multiPicture { segment(0xE2, Array("MPF".utf8) + [0] + [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }
        segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
        segment(frameMarker, [8, UInt8(height >> 8 & 0xFF), UInt8(height & 0xFF), UInt8(width >> 8 & 0xFF),
                              UInt8(width & 0xFF), 3, 1, 0x22, 0, 2, 0x11, 0, 3, 0x11, 0])
        segment(0xC4, [0x00] + [0, 1] + [UInt8](repeating: 0, count: 14) + [0])
        segment(0xDA, [3, 1, 0, 2, 0, 3, 0, 0, 63, 0])
        for i in 0..<scanBytes { out.append(UInt8(truncatingIfNeeded: i * 7 + 1) & 0x7F) }
        out += [0xFF, 0xD9]
        return out
    }

    /// A JPEG of the given size with an optional EXIF block: the common case in one call.
    public static func make(width: Int, height: Int, exif: ExifFixture? = nil, scanBytes: Int = 256) -> [UInt8] {
        JPEGFixture(width: width, height: height, exif: exif, scanBytes: scanBytes).bytes()
    }
}

/// A small XMP packet with the properties photod reads, for fixtures.
public enum XMPFixture {
    /// An `x:xmpmeta` packet: dates as attributes (or elements when `elements`), a rating,
    /// keywords and a `tiff:Orientation`.
    public static func packet(createDate: String? = nil, dateTimeOriginal: String? = nil, dateCreated: String? = nil,
                              rating: Int? = nil, keywords: [String] = [], orientation: Int? = nil,
                              elements: Bool = false) -> String {
        var attributes = ""
        var children = ""
        func add(_ name: String, _ value: String?) {
            guard let value else { return }
            if elements { children += "   <\(name)>\(value)</\(name)>\n" } else { attributes += "\n    \(name)=\"\(value)\"" }
        }
        add("xmp:CreateDate", createDate)
        add("exif:DateTimeOriginal", dateTimeOriginal)
        add("photoshop:DateCreated", dateCreated)
        add("xmp:Rating", rating.map(String.init))
        add("tiff:Orientation", orientation.map(String.init))
        if !keywords.isEmpty {
            children += "   <dc:subject>\n    <rdf:Bag>\n"
            for k in keywords { children += "     <rdf:li>\(k)</rdf:li>\n" }
            children += "    </rdf:Bag>\n   </dc:subject>\n"
        }
        return """
            <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
            <x:xmpmeta xmlns:x="adobe:ns:meta/">
             <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
              <rdf:Description rdf:about=""
                xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:exif="http://ns.adobe.com/exif/1.0/"
                xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"
                xmlns:tiff="http://ns.adobe.com/tiff/1.0/"\(attributes)>
            \(children)  </rdf:Description>
             </rdf:RDF>
            </x:xmpmeta>
            <?xpacket end="w"?>
            """
    }
}
