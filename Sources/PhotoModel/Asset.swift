/// One photo or video (PhotoKit's `PHAsset`): what the index knows about it.
public struct Asset: Sendable, Hashable {
    /// Stable and opaque; survives renames, moves and restarts.
    public var id: AssetID
    /// The primary resource's absolute path.
    public var path: PathBytes
    public var mediaType: MediaType
    /// The container or codec (`jpeg`, `heic`, `mp4`, ...), from the content.
    public var format: String
    public var subtypes: Set<AssetSubtype>
    public var captureDate: CaptureDate
    public var pixelWidth: Int?
    public var pixelHeight: Int?
    /// EXIF orientation 1–8 (1 when absent or out of range).
    public var orientation: Int
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?
    public var make: String?
    public var model: String?
    public var lensModel: String?
    /// Seconds, for videos.
    public var duration: Double?
    /// XMP rating 0–5 (a sidecar's, else the file's own), when present.
    public var rating: Int?
    /// XMP `dc:subject` keywords (a sidecar's, else the file's own).
    public var keywords: [String]
    /// User state (never derived from files).
    public var isFavorite: Bool
    public var isHidden: Bool
    /// Bytes of the primary resource.
    public var fileSize: Int64
    /// When the asset was first indexed, in Unix milliseconds.
    public var addedAt: Int64
    /// The files behind the asset, the primary first.
    public var resources: [Resource]

    public init(id: AssetID, path: PathBytes, mediaType: MediaType, format: String, subtypes: Set<AssetSubtype> = [],
                captureDate: CaptureDate, pixelWidth: Int? = nil, pixelHeight: Int? = nil, orientation: Int = 1,
                latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil, make: String? = nil,
                model: String? = nil, lensModel: String? = nil, duration: Double? = nil, rating: Int? = nil,
                keywords: [String] = [], isFavorite: Bool = false, isHidden: Bool = false, fileSize: Int64,
                addedAt: Int64, resources: [Resource] = []) {
        self.id = id
        self.path = path
        self.mediaType = mediaType
        self.format = format
        self.subtypes = subtypes
        self.captureDate = captureDate
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = orientation
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.make = make
        self.model = model
        self.lensModel = lensModel
        self.duration = duration
        self.rating = rating
        self.keywords = keywords
        self.isFavorite = isFavorite
        self.isHidden = isHidden
        self.fileSize = fileSize
        self.addedAt = addedAt
        self.resources = resources
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
