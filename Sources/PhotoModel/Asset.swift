/// One photo or video (PhotoKit's `PHAsset`): what the index knows about it. Its metadata is
/// its primary file's `MediaFields` (with a sidecar's date, rating and keywords), read as the
/// asset's own fields: `asset.lensModel` is `asset.media.lensModel`.
@dynamicMemberLookup
public struct Asset: Sendable, Hashable {
    /// Stable and opaque; survives renames, moves and restarts.
    public var id: AssetID
    /// The primary resource's absolute path.
    public var path: PathBytes
    /// What the files say (the composer's choice: see `AssetComposer`).
    public var media: MediaFields
    public var subtypes: Set<AssetSubtype>
    /// User state (never derived from files).
    public var isFavorite: Bool
    public var isHidden: Bool
    /// Bytes of the primary resource.
    public var fileSize: Int64
    /// When the asset was first indexed, in Unix milliseconds.
    public var addedAt: Int64
    /// The files behind the asset, the primary first.
    public var resources: [Resource]
    /// The one photo that stands for its burst (`burstIdentifier`): the first by capture time,
    /// then path, of the visible members (a hidden one only when all are hidden; never one in
    /// Recently Deleted). Kept by the writer.
    public var representsBurst: Bool
    /// Where it was taken: its file's location fields (`media.filePlace`), else the place the
    /// gazetteer names for its coordinates (`Gazetteer`'s rule); nil when neither names one.
    public var place: Place?
    /// The offset its place's time zone had at the capture time, when its metadata gives none
    /// (`PlaceLookup.zoneOffset`): `captureDate.offset` stays what the file says.
    public var zoneOffset: UTCOffset?

    public init(id: AssetID, path: PathBytes, media: MediaFields, subtypes: Set<AssetSubtype> = [],
                isFavorite: Bool = false, isHidden: Bool = false, fileSize: Int64, addedAt: Int64,
                resources: [Resource] = [], representsBurst: Bool = false, place: Place? = nil,
                zoneOffset: UTCOffset? = nil) {
        self.representsBurst = representsBurst
        self.place = place
        self.zoneOffset = zoneOffset
        self.id = id
        self.path = path
        self.media = media
        self.subtypes = subtypes
        self.isFavorite = isFavorite
        self.isHidden = isHidden
        self.fileSize = fileSize
        self.addedAt = addedAt
        self.resources = resources
    }

    /// A field of `media`, as the asset's own.
    public subscript<T>(dynamicMember field: WritableKeyPath<MediaFields, T>) -> T {
        get { media[keyPath: field] }
        set { media[keyPath: field] = newValue }
    }
}

/// One file behind an asset (PhotoKit's `PHAssetResource`).
public struct Resource: Sendable, Hashable {
    public enum Role: String, Sendable, Hashable, CaseIterable {
        /// The file whose pixels the asset shows.
        case primary
        /// The RAW half of a RAW+JPEG pair.
        case raw
        /// The video half of a Live Photo.
        case pairedVideo
        /// An XMP sidecar.
        case sidecar
    }

    public var path: PathBytes
    public var role: Role

    public init(path: PathBytes, role: Role) {
        self.path = path
        self.role = role
    }
}

/// A file the index could not turn into an asset, with the reason (shown by `library.status`
/// and kept so that an unchanged broken file is not re-read at every start).
public struct FileIssue: Sendable, Hashable {
    public var path: PathBytes
    /// A stable code (`emptyFile`, `notMedia`, `truncated`, `unreadable`, ...).
    public var code: String
    public var message: String

    public init(path: PathBytes, code: String, message: String) {
        self.path = path
        self.code = code
        self.message = message
    }
}
