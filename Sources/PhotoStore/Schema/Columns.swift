import PhotoModel

/// One column of a table, declared once: its name, its parameter, how a record's value is
/// bound to it and read back from it. A table's SQL (`INSERT`, `UPDATE … SET`, `SELECT`) and its
/// bindings are derived from a `ColumnList` of these, so that no field is typed twice and no
/// parameter is a number typed by hand.
struct Column<Record>: Sendable {
    /// The column's name in SQL (`lens_model`).
    let name: String
    /// Its named parameter (`:lensModel`).
    let parameter: String
    let bind: @Sendable (Record, Statement, Int32) -> Void
    /// Reads the column into a record; false when the stored value is not one this build
    /// writes (a damaged or foreign row). Nil for a column only written through this list.
    let read: (@Sendable (inout Record, Statement, Int32) -> Bool)?

    init(_ name: String, _ parameter: String, bind: @escaping @Sendable (Record, Statement, Int32) -> Void,
         read: (@Sendable (inout Record, Statement, Int32) -> Bool)? = nil) {
        self.name = name
        self.parameter = ":" + parameter
        self.bind = bind
        self.read = read
    }
}

/// The columns of a record, in one order: what the SQL of a table's writes and reads is made of.
final class ColumnList<Record>: Sendable {
    let columns: [Column<Record>]

    init(_ columns: [Column<Record>]) { self.columns = columns }

    /// `a, b, c` (each prefixed with `table.` when given).
    func names(prefix: String? = nil) -> String {
        columns.map { column in prefix.map { "\($0).\(column.name)" } ?? column.name }.joined(separator: ", ")
    }

    /// `:a, :b, :c`.
    var parameters: String { columns.map(\.parameter).joined(separator: ", ") }

    /// `a = :a, b = :b`.
    var assignments: String { columns.map { "\($0.name) = \($0.parameter)" }.joined(separator: ", ") }

    /// `a = excluded.a, b = excluded.b` (for `ON CONFLICT … DO UPDATE SET`).
    var fromExcluded: String { columns.map { "\($0.name) = excluded.\($0.name)" }.joined(separator: ", ") }

    /// Binds every column of `record` to the statement's parameters of the same names.
    @inline(__always) func bind(_ record: Record, to s: Statement) {
        let indexes = s.parameterIndexes(ObjectIdentifier(self)) { columns.map(\.parameter) }
        for (column, index) in zip(columns, indexes) { column.bind(record, s, index) }
    }

    /// Reads the columns selected with `names()` starting at result column `first`; false
    /// when one holds a value this build does not write.
    @inline(__always) func read(into record: inout Record, from s: Statement, at first: Int32) -> Bool {
        var ok = true
        for (offset, column) in columns.enumerated() where !(column.read?(&record, s, first + Int32(offset)) ?? true) {
            ok = false
        }
        return ok
    }
}

/// The columns of `MediaFields`, the same in `files`, `tombstones` and `assets`: the one list
/// to extend when a field is added (with a migration that adds the column to the three
/// tables, and the wire mapping).
enum MediaColumns {
    static let list = ColumnList<MediaFields>([
        Column("media_type", "mediaType", bind: { $0.mediaType.rawValue.bind(to: $1, at: $2) },
               read: { r, s, i in
                   guard let v = MediaType(rawValue: s.string(i)) else { return false }
                   r.mediaType = v
                   return true
               }),
        Column("format", "format", bind: { $0.format.bind(to: $1, at: $2) }, read: { $0.format = $1.string($2); return true }),
        Column("is_raw", "isRaw", bind: { $0.isRaw.bind(to: $1, at: $2) }, read: { $0.isRaw = $1.int($2) != 0; return true }),
        Column("local_datetime", "localDateTime", bind: { $0.captureDate.local.description.bind(to: $1, at: $2) },
               read: { r, s, i in
                   guard let v = LocalDateTime(iso: s.string(i)) else { return false }
                   r.captureDate.local = v
                   return true
               }),
        Column("utc_offset", "utcOffset", bind: { $0.captureDate.offset?.seconds.bind(to: $1, at: $2) },
               read: { $0.captureDate.offset = $1.optionalInt($2).flatMap { UTCOffset(seconds: $0) }; return true }),
        Column("date_source", "dateSource", bind: { code($0.captureDate.source).bind(to: $1, at: $2) },
               read: { r, s, i in
                   guard let v = source(code: s.string(i)) else { return false }
                   r.captureDate.source = v
                   return true
               }),
        Column("pixel_width", "pixelWidth", bind: { $0.pixelWidth.bind(to: $1, at: $2) },
               read: { $0.pixelWidth = $1.optionalInt($2); return true }),
        Column("pixel_height", "pixelHeight", bind: { $0.pixelHeight.bind(to: $1, at: $2) },
               read: { $0.pixelHeight = $1.optionalInt($2); return true }),
        Column("orientation", "orientation", bind: { $0.orientation.bind(to: $1, at: $2) },
               read: { $0.orientation = $1.optionalInt($2) ?? 1; return true }),
        Column("latitude", "latitude", bind: { $0.latitude.bind(to: $1, at: $2) },
               read: { $0.latitude = $1.optionalDouble($2); return true }),
        Column("longitude", "longitude", bind: { $0.longitude.bind(to: $1, at: $2) },
               read: { $0.longitude = $1.optionalDouble($2); return true }),
        Column("altitude", "altitude", bind: { $0.altitude.bind(to: $1, at: $2) },
               read: { $0.altitude = $1.optionalDouble($2); return true }),
        Column("make", "make", bind: { $0.make.bind(to: $1, at: $2) }, read: { $0.make = $1.optionalString($2); return true }),
        Column("model", "model", bind: { $0.model.bind(to: $1, at: $2) },
               read: { $0.model = $1.optionalString($2); return true }),
        Column("lens_model", "lensModel", bind: { $0.lensModel.bind(to: $1, at: $2) },
               read: { $0.lensModel = $1.optionalString($2); return true }),
        Column("duration", "duration", bind: { $0.duration.bind(to: $1, at: $2) },
               read: { $0.duration = $1.optionalDouble($2); return true }),
        Column("frame_rate", "frameRate", bind: { $0.frameRate.bind(to: $1, at: $2) },
               read: { $0.frameRate = $1.optionalDouble($2); return true }),
        Column("video_codec", "videoCodec", bind: { $0.videoCodec.bind(to: $1, at: $2) },
               read: { $0.videoCodec = $1.optionalString($2); return true }),
        Column("audio_codec", "audioCodec", bind: { $0.audioCodec.bind(to: $1, at: $2) },
               read: { $0.audioCodec = $1.optionalString($2); return true }),
        Column("bit_rate", "bitRate", bind: { $0.bitRate.bind(to: $1, at: $2) },
               read: { $0.bitRate = $1.optionalInt64($2); return true }),
        Column("capture_frame_rate", "captureFrameRate", bind: { $0.captureFrameRate.bind(to: $1, at: $2) },
               read: { $0.captureFrameRate = $1.optionalDouble($2); return true }),
        // 0 is stored as NULL (most files have no trait: no bytes in the row).
        Column("traits", "traits", bind: { ($0.traits.isEmpty ? nil : $0.traits.rawValue).bind(to: $1, at: $2) },
               read: { $0.traits = MediaTraits(rawValue: $1.optionalInt64($2) ?? 0); return true }),
        Column("burst_id", "burstIdentifier", bind: { $0.burstIdentifier.bind(to: $1, at: $2) },
               read: { $0.burstIdentifier = $1.optionalString($2); return true }),
        Column("rating", "rating", bind: { $0.rating.bind(to: $1, at: $2) },
               read: { $0.rating = $1.optionalInt($2); return true }),
        Column("keywords", "keywords", bind: { Keywords.encode($0.keywords).bind(to: $1, at: $2) },
               read: { $0.keywords = Keywords.decode($1.optionalString($2)); return true }),
        Column("user_comment", "userComment", bind: { $0.userComment.bind(to: $1, at: $2) },
               read: { $0.userComment = $1.optionalString($2); return true }),
        Column("content_identifier", "contentIdentifier", bind: { $0.contentIdentifier.bind(to: $1, at: $2) },
               read: { $0.contentIdentifier = $1.optionalString($2); return true }),
        Column("file_place", "filePlace", bind: { $0.filePlace?.encoded.bind(to: $1, at: $2) },
               read: { r, s, i in
                   guard let text = s.optionalString(i) else { r.filePlace = nil; return true }
                   guard let place = Place(encoded: text) else { return false }
                   r.filePlace = place
                   return true
               }),
    ])

    /// How `date_source` stores a source: one letter (migration 008; the names were 12 bytes
    /// an asset).
    static func code(_ source: DateSource) -> String {
        switch source {
        case .exifOriginal: return "O"
        case .exifDigitized: return "D"
        case .xmp: return "X"
        case .iptc: return "I"
        case .exifModified: return "M"
        case .quicktime: return "Q"
        case .fileName: return "N"
        case .fileModified: return "F"
        }
    }

    static func source(code: String) -> DateSource? { DateSource.allCases.first { Self.code($0) == code } }

    /// A media file's row leaves its media columns empty (`media_type` NULL, `is_raw` 0) while
    /// it is the only file of its asset and the asset's fields are its own: the asset's row then
    /// holds them once for both (migration 008). The writer keeps that true in every step that
    /// changes an asset's fields or a file's link (`AssetRows.recompose`, `materialize`).
    static func deferred(_ file: String) -> String { "(\(file).status = 'media' AND \(file).media_type IS NULL)" }

    /// The media columns of a file row (`file`), from its asset's row (`asset`, joined on
    /// `asset_pk`) where the file's are deferred: what the row means, in `list`'s order.
    static func resolved(file: String, asset: String) -> String {
        list.columns.map { "CASE WHEN \(deferred(file)) THEN \(asset).\($0.name) ELSE \(file).\($0.name) END" }
            .joined(separator: ", ")
    }

    /// `SET` assignments that defer a file row's media columns to its asset.
    static let cleared = list.columns.map { $0.name == "is_raw" ? "is_raw = 0" : "\($0.name) = NULL" }
        .joined(separator: ", ")

    /// A `SET` assignment that copies a deferred file row's fields back from its asset (in an
    /// `UPDATE files`).
    static let fromAsset = "(\(list.names())) = (SELECT \(list.names(prefix: "a")) FROM assets a WHERE a.pk = files.asset_pk)"

    /// The fields an asset's place and zone offset are made of (`PlaceLookup.place(of:)` and
    /// `zoneOffset(of:at:)`: the coordinates, the file's own place, the capture date): what the
    /// pass that places a library indexed before places reads of each asset.
    static let placing = ColumnList<MediaFields>(list.columns.filter {
        ["local_datetime", "utc_offset", "date_source", "latitude", "longitude", "file_place"].contains($0.name)
    })

    /// A placeholder the columns are read into (every column read overwrites its field).
    static let blank = MediaFields(mediaType: .image, format: "",
                                   captureDate: CaptureDate(local: LocalDateTime(year: 1970, month: 1, day: 1)!,
                                                            offset: nil, source: .fileModified))

    /// What a sidecar's row holds in the media columns (its date, rating, keywords and place), from
    /// a row selected with `list.names()` starting at result column `first`.
    static func sidecar(from s: Statement, at first: Int32) -> SidecarFields {
        let local = s.optionalString(first + offset("local_datetime")).flatMap(LocalDateTime.init(iso:))
        let zone = s.optionalInt(first + offset("utc_offset")).flatMap { UTCOffset(seconds: $0) }
        return SidecarFields(date: local.map { Timestamp(local: $0, offset: zone) },
                             rating: s.optionalInt(first + offset("rating")),
                             keywords: Keywords.decode(s.optionalString(first + offset("keywords"))),
                             place: s.optionalString(first + offset("file_place")).flatMap(Place.init(encoded:)))
    }

    /// The place of a column in `list`.
    private static func offset(_ name: String) -> Int32 {
        Int32(list.columns.firstIndex { $0.name == name }!)
    }
}
