import PhotoModel

/// The mapping between `Asset` and the `assets` table, in one place.
enum AssetColumns {
    /// The columns `decode` reads, in order (the table is aliased `a`).
    static let select = """
        a.pk, a.id, a.media_type, a.format, a.subtypes, a.local_datetime, a.utc_offset, a.date_source,
        a.pixel_width, a.pixel_height, a.orientation, a.latitude, a.longitude, a.altitude, a.make, a.model,
        a.lens_model, a.duration, a.file_size, a.path, a.added_at, a.rating, a.keywords, a.is_favorite, a.is_hidden
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

    /// Every row of a statement selecting `select`, stepped to the end and reset. A row this
    /// build cannot read is a bug or a damaged file, not something to skip (a short page would
    /// end a client's paging early): it throws `undecodable`.
    static func decodeAll(_ s: Statement) throws -> [(pk: Int64, asset: Asset)] {
        defer { s.reset() }
        var rows: [(pk: Int64, asset: Asset)] = []
        while try s.step() {
            guard let row = decode(s) else { throw StoreError.undecodable(table: "assets", key: s.string(1)) }
            rows.append(row)
        }
        return rows
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
            duration: s.optionalDouble(17), rating: s.optionalInt(21), keywords: Keywords.decode(s.optionalString(22)),
            isFavorite: s.int(23) != 0, isHidden: s.int(24) != 0, fileSize: s.int64(18), addedAt: s.int64(20))
        return (s.int64(0), asset)
    }
}

extension Statement {
    @inline(__always) func bind(_ v: Int64?, at i: Int32) {
        if let v { bind(v, at: i) } else { try? bind(SQLValue.null, at: i) }
    }
}
