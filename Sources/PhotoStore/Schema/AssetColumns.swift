import PhotoModel

/// The mapping between `Asset` and the `assets` table, in one place.
enum AssetColumns {
    /// The capture order (time, then path bytes): the `assets_order` index (local_datetime)
    /// walks the time and SQLite sorts the assets of one time by path (`USE TEMP B-TREE FOR
    /// RIGHT PART OF ORDER BY`: a sort of the tie, not of the library). No two assets share a
    /// path (each is its primary file's), so the pk never decides.
    static let captureOrder = "a.local_datetime, a.path, a.pk"

    /// The columns `decode` reads, in order (the table is aliased `a`): the asset's own, then
    /// the media fields (`MediaColumns`).
    static let select = """
        a.pk, a.id, a.subtypes, a.file_size, a.path, a.added_at, a.is_favorite, a.is_hidden, a.represents_burst, \
        (SELECT p.key FROM places p WHERE p.id = a.place_id), a.zone_offset, \(MediaColumns.list.names(prefix: "a"))
        """

    /// Bit positions of `AssetSubtype` in the `subtypes` column (stable: stored on disk).
    static func bit(_ s: AssetSubtype) -> Int64 {
        switch s {
        case .screenshot: return 1
        case .panorama: return 2
        case .live: return 4
        case .raw: return 8
        case .selfie: return 16
        case .highFrameRate: return 32
        case .timelapse: return 64
        case .animated: return 128
        case .hdr: return 256
        case .depthEffect: return 512
        case .burst: return 1024
        }
    }

    static func mask(_ set: Set<AssetSubtype>) -> Int64 { set.reduce(0) { $0 | bit($1) } }

    static func subtypes(_ mask: Int64) -> Set<AssetSubtype> {
        Set(AssetSubtype.allCases.filter { mask & bit($0) != 0 })
    }

    /// Every row of a statement selecting `select`, stepped to the end and reset. A row this
    /// build cannot read is a bug or a damaged file, not something to skip (a short page would
    /// end a client's paging early): it throws `undecodable`.
    static func decodeAll(_ s: Statement) throws(StoreError) -> [(pk: Int64, asset: Asset)] {
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
        var media = MediaColumns.blank
        guard let id = AssetID(rawValue: s.string(1)), MediaColumns.list.read(into: &media, from: s, at: 11) else { return nil }
        var place: Place?
        if let key = s.optionalString(9) {
            guard let p = Place(encoded: key) else { return nil }
            place = p
        }
        let asset = Asset(id: id, path: PathBytes(s.bytes(4)), media: media, subtypes: subtypes(s.int64(2)),
                          isFavorite: s.int(6) != 0, isHidden: s.int(7) != 0, fileSize: s.int64(3), addedAt: s.int64(5),
                          representsBurst: s.int(8) != 0, place: place,
                          zoneOffset: s.optionalInt(10).flatMap { UTCOffset(seconds: $0) })
        return (s.int64(0), asset)
    }
}

extension Statement {
    @inline(__always) func bind(_ v: Int64?, at i: Int32) {
        if let v { bind(v, at: i) } else { try? bind(SQLValue.null, at: i) }
    }
}
