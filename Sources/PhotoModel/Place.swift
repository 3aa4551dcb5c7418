/// Where a photo was taken, in words: what the file says (IPTC or XMP location fields, a
/// sidecar's before the file's own), else the nearest populated place to its coordinates in an
/// offline gazetteer. Names are in the source's own spelling, UTF-8.
public struct Place: Sendable, Hashable {
    /// Where the names came from.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        /// The file's own metadata (or its sidecar's): what the photographer or a tagger wrote.
        case file
        /// The nearest place to the coordinates in the GeoNames cities data set.
        case geonames
    }

    public var city: String?
    /// A district, a landmark or a venue within the city (IPTC Sub-location).
    public var subLocation: String?
    /// The province, state or other first-level division.
    public var region: String?
    public var country: String?
    /// ISO 3166-1 alpha-2, upper case (`PT`).
    public var countryCode: String?
    /// For a gazetteer place beyond the nearest city's reach but within sight of it: that
    /// city's name (`city` is then nil). Nil for a file's place.
    public var near: String?
    public var source: Source
    /// The IANA time zone of a gazetteer place (`Europe/Lisbon`): the offset of a photo that
    /// does not say its own. Nil for a file's place.
    public var timeZone: String?

    /// A place; empty strings count as absent.
    public init(city: String? = nil, subLocation: String? = nil, region: String? = nil, country: String? = nil,
                countryCode: String? = nil, near: String? = nil, source: Source, timeZone: String? = nil) {
        func clean(_ s: String?) -> String? {
            guard let s, let first = s.first, let last = s.last else { return nil }
            // Most names need nothing cut: the string itself, not a copy through generic slices
            // (which cost the gazetteer's load ~0.1 s for 24,000 places).
            if !first.isWhitespace && !last.isWhitespace { return s }
            let t = s.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
            return t.isEmpty ? nil : String(t)
        }
        self.city = clean(city)
        self.subLocation = clean(subLocation)
        self.region = clean(region)
        self.country = clean(country)
        self.countryCode = clean(countryCode).map { String($0.uppercased().prefix(3)) }
        self.near = clean(near)
        self.source = source
        self.timeZone = clean(timeZone)
    }

    /// Whether no name is set: a file whose location fields are all empty has no place.
    public var isEmpty: Bool {
        city == nil && subLocation == nil && region == nil && country == nil && countryCode == nil && near == nil
    }
}

extension Place {
    /// The place as one string, its fields in a fixed order separated by U+001F (unit
    /// separator, which no name holds): the source's letter (`f`, `g`), city, sub-location,
    /// region, country, country code, near, time zone. How the index stores a file's place and
    /// keys its places table.
    public var encoded: String {
        let letter = source == .file ? "f" : "g"
        return ([letter] + [city, subLocation, region, country, countryCode, near, timeZone].map { $0 ?? "" })
            .joined(separator: "\u{1F}")
    }

    /// A place from `encoded`; nil for anything else.
    public init?(encoded: String) {
        let f = encoded.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        guard f.count == 8, let source: Source = f[0] == "f" ? .file : f[0] == "g" ? .geonames : nil else { return nil }
        self.init(city: f[1], subLocation: f[2], region: f[3], country: f[4], countryCode: f[5], near: f[6],
                  source: source, timeZone: f[7])
    }
}

/// What the writer asks to place an asset: the offline gazetteer and the time-zone database
/// in the daemon; tables in tests.
public protocol PlaceLookup: Sendable {
    /// The place at a coordinate, or nil where nothing is near enough to name.
    func place(latitude: Double, longitude: Double) -> Place?
    /// The offset of an IANA time zone at a wall-clock time there; nil for an unknown zone.
    func offset(timeZone: String, at local: LocalDateTime) -> UTCOffset?
}

extension PlaceLookup {
    /// An asset's place: its file's (or sidecar's) location fields, else the gazetteer's for
    /// its coordinates. A file's place takes the time zone of its coordinates when it has them.
    public func place(of media: MediaFields) -> Place? {
        let found = media.latitude.flatMap { lat in media.longitude.flatMap { place(latitude: lat, longitude: $0) } }
        guard var own = media.filePlace else { return found }
        own.timeZone = found?.timeZone
        return own
    }

    /// The offset a photo gets from its place's time zone: only when its metadata gives none
    /// (no OffsetTimeOriginal, no GPS time stamp, no zone in XMP), and from a date taken from
    /// metadata (a file name or modification time is no capture clock to place). The local
    /// date and time stay as the camera wrote them: moments do not move.
    public func zoneOffset(of media: MediaFields, at place: Place?) -> UTCOffset? {
        guard media.captureDate.offset == nil, media.captureDate.source != .fileName,
              media.captureDate.source != .fileModified, let zone = place?.timeZone else { return nil }
        return offset(timeZone: zone, at: media.captureDate.local)
    }
}
