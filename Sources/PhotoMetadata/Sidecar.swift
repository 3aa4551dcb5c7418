import PhotoModel

/// What an XMP sidecar (`IMG_1.xmp`, `IMG_1.JPG.xmp`) says about its photo.
public struct SidecarMetadata: Sendable, Hashable {
    /// The capture date: `exif:DateTimeOriginal`, else `photoshop:DateCreated`, else `xmp:CreateDate`.
    public var date: Timestamp?
    /// `xmp:Rating`, 0–5.
    public var rating: Int?
    /// `dc:subject` keywords.
    public var keywords: [String]
    /// Its location fields (`Place.Source.file`).
    public var place: Place?

    /// A sidecar's fields.
    public init(date: Timestamp? = nil, rating: Int? = nil, keywords: [String] = [], place: Place? = nil) {
        self.date = date
        self.rating = rating
        self.keywords = keywords
        self.place = place
    }
}

extension MetadataReader {
    /// The largest sidecar read; XMP sidecars are a few kilobytes, a larger file is read up
    /// to this much.
    public static let maxSidecarBytes = 1 << 20

    /// Reads an XMP sidecar: the same bounded scanner as packets embedded in images.
    /// - Throws: `.emptyFile`, `.unreadable`, or `.notMedia` when the file holds no XMP packet.
    public func readSidecar(_ source: inout some ByteSource) throws(MetadataError) -> SidecarMetadata {
        guard source.size > 0 else { throw MetadataError(.emptyFile, "the sidecar is empty (0 bytes)") }
        let bytes = try source.read(at: 0, count: Int(min(source.size, Int64(Self.maxSidecarBytes))))
        guard XMP.find(Array("x:xmpmeta".utf8), in: ByteView(bytes), from: 0) != nil
                || XMP.find(Array("rdf:RDF".utf8), in: ByteView(bytes), from: 0) != nil
        else { throw MetadataError(.notMedia, "not an XMP sidecar (no x:xmpmeta or rdf:RDF element)", detectedKind: "text") }
        let f = XMP.scan(ByteView(bytes))
        return SidecarMetadata(date: f.date, rating: f.rating, keywords: f.keywords, place: f.place)
    }
}
