import PhotoModel

/// The mapping between `Asset` and the `assets` table, in one place.
enum AssetColumns {
    /// The columns `decode` reads, in order.
    static let select = """
        a.pk, a.id, a.media_type, a.format, a.subtypes, a.local_datetime, a.utc_offset, a.date_source,
        a.pixel_width, a.pixel_height, a.orientation, a.latitude, a.longitude, a.altitude, a.make, a.model,
        a.lens_model, a.duration, a.file_size, a.path, a.added_at
        """

    /// Bit positions of `AssetSubtype` in the `subtypes` column (stable: stored on disk).
    static func bit(_ s: AssetSubtype) -> Int64 {
        switch s {
        case .screenshot: return 1
        case .panorama: return 2
        case .live: return 4
        case .raw: return 8
        case .selfie: return 16
        }
    }

    static func mask(_ set: Set<AssetSubtype>) -> Int64 { set.reduce(0) { $0 | bit($1) } }

    static func subtypes(_ mask: Int64) -> Set<AssetSubtype> {
        Set(AssetSubtype.allCases.filter { mask & bit($0) != 0 })
    }

    /// Decodes a row selected with `select`; returns the row's pk with the asset.
    static func decode(_ s: Statement) -> (pk: Int64, asset: Asset)? {
        guard let id = AssetID(rawValue: s.string(1)),
              let mediaType = MediaType(rawValue: s.string(2)),
              let local = LocalDateTime(iso: s.string(5)),
              let source = DateSource(rawValue: s.string(7))
        else { return nil }
        let offset = s.optionalInt(6).flatMap { UTCOffset(seconds: $0) }
        let asset = Asset(
            id: id, path: PathBytes(s.bytes(19)), mediaType: mediaType, format: s.string(3),
            subtypes: subtypes(s.int64(4)), captureDate: CaptureDate(local: local, offset: offset, source: source),
            pixelWidth: s.optionalInt(8), pixelHeight: s.optionalInt(9), orientation: s.int(10),
            latitude: s.optionalDouble(11), longitude: s.optionalDouble(12), altitude: s.optionalDouble(13),
            make: s.optionalString(14), model: s.optionalString(15), lensModel: s.optionalString(16),
            duration: s.optionalDouble(17), fileSize: s.int64(18), addedAt: s.int64(20))
        return (s.int64(0), asset)
    }

    /// Binds an asset's derived fields to parameters 1...18 of `insert`/`update`
    /// (everything but the id, the pk and `added_at`).
    static func bindFields(_ a: Asset, _ s: Statement) {
        s.bind(a.mediaType.rawValue, at: 1)
        s.bind(a.format, at: 2)
        s.bind(mask(a.subtypes), at: 3)
        s.bind(a.captureDate.local.description, at: 4)
        s.bind(a.captureDate.offset?.seconds, at: 5)
        s.bind(a.captureDate.source.rawValue, at: 6)
        s.bind(a.pixelWidth, at: 7)
        s.bind(a.pixelHeight, at: 8)
        s.bind(a.orientation, at: 9)
        s.bind(a.latitude, at: 10)
        s.bind(a.longitude, at: 11)
        s.bind(a.altitude, at: 12)
        s.bind(a.make, at: 13)
        s.bind(a.model, at: 14)
        s.bind(a.lensModel, at: 15)
        s.bind(a.duration, at: 16)
        s.bind(a.fileSize, at: 17)
        s.bind(a.path.bytes, at: 18)
    }

    static let fieldNames = """
        media_type, format, subtypes, local_datetime, utc_offset, date_source, pixel_width, pixel_height,
        orientation, latitude, longitude, altitude, make, model, lens_model, duration, file_size, path
        """

    static let insert = "INSERT INTO assets (\(fieldNames), id, added_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"

    static let update = """
        UPDATE assets SET media_type = ?1, format = ?2, subtypes = ?3, local_datetime = ?4, utc_offset = ?5,
            date_source = ?6, pixel_width = ?7, pixel_height = ?8, orientation = ?9, latitude = ?10,
            longitude = ?11, altitude = ?12, make = ?13, model = ?14, lens_model = ?15, duration = ?16,
            file_size = ?17, path = ?18
        WHERE pk = ?19
        """
}

extension Statement {
    @inline(__always) func bind(_ v: Int64?, at i: Int32) {
        if let v { bind(v, at: i) } else { try? bind(SQLValue.null, at: i) }
    }
}
