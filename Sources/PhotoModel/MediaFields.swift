/// What a media file says about itself: every metadata field photod keeps, declared once.
///
/// The reader produces one per file; the writer stores it in the file's row (and in the
/// tombstone that outlives the row); the asset composer makes an asset's from its primary
/// file's (with a sidecar's date, rating and keywords); `Asset` carries it (its fields read as
/// the asset's own: `asset.lensModel`); the wire mapping says which of them a client sees.
///
/// Adding a field touches this record, the column list in `MediaColumns` (PhotoStore), one
/// migration that adds the column to `files`, `tombstones` and `assets`, and the wire mapping
/// (`WireMapping.swift`): four places (five with the client's `Asset`; a predicate key adds its
/// SQL column and catalog column).
public struct MediaFields: Sendable, Hashable {
    public var mediaType: MediaType
    /// The container or codec, from the content (`jpeg`, `heic`, `mp4`, ...).
    public var format: String
    /// Whether the file is camera RAW.
    public var isRaw: Bool
    public var captureDate: CaptureDate
    /// Pixel size as stored, before orientation.
    public var pixelWidth: Int?
    /// See `pixelWidth`.
    public var pixelHeight: Int?
    /// EXIF orientation 1–8 (1 when absent or out of range).
    public var orientation: Int
    /// Signed degrees (south negative).
    public var latitude: Double?
    /// Signed degrees (west negative).
    public var longitude: Double?
    /// Metres (below sea level negative).
    public var altitude: Double?
    public var make: String?
    public var model: String?
    public var lensModel: String?
    /// Seconds, for videos.
    public var duration: Double?
    /// A video's nominal frames per second.
    public var frameRate: Double?
    /// A video's codec, as FFmpeg names it (`h264`, `hevc`, `vp9`, `av1`, `mpeg4`, `mjpeg`…).
    public var videoCodec: String?
    /// A video's audio codec (`aac`, `opus`, `pcm_s16le`…); nil when it has no sound.
    public var audioCodec: String?
    /// A video's bits per second (the container's figure, else its bytes over its duration).
    public var bitRate: Int64?
    /// The rate a video was recorded at when it differs from how it plays (Android's
    /// `com.android.capture.fps`): above the frame rate for slow motion, below for a time-lapse.
    public var captureFrameRate: Double?
    /// What the file's bytes say about how it was made (HDR, a depth map, animation).
    public var traits: MediaTraits
    /// The burst the photo was shot in (Apple's MakerNote BurstUUID).
    public var burstIdentifier: String?
    /// XMP rating 0–5, when present.
    public var rating: Int?
    /// XMP `dc:subject` keywords.
    public var keywords: [String]
    /// EXIF UserComment (the screenshot rule reads it).
    public var userComment: String?
    /// Apple's ContentIdentifier (pairs a Live Photo's image and video).
    public var contentIdentifier: String?
    /// Where the file's metadata says it was taken (IPTC-IIM or XMP location fields; a sidecar's
    /// for an asset that has one). The asset's `place` is this, else the gazetteer's.
    public var filePlace: Place?

    /// A file's fields; what a reader does not find stays empty.
    public init(mediaType: MediaType, format: String, isRaw: Bool = false, captureDate: CaptureDate,
                pixelWidth: Int? = nil, pixelHeight: Int? = nil, orientation: Int = 1, latitude: Double? = nil,
                longitude: Double? = nil, altitude: Double? = nil, make: String? = nil, model: String? = nil,
                lensModel: String? = nil, duration: Double? = nil, frameRate: Double? = nil, videoCodec: String? = nil,
                audioCodec: String? = nil, bitRate: Int64? = nil, captureFrameRate: Double? = nil,
                traits: MediaTraits = [], burstIdentifier: String? = nil, rating: Int? = nil, keywords: [String] = [],
                userComment: String? = nil, contentIdentifier: String? = nil, filePlace: Place? = nil) {
        self.mediaType = mediaType
        self.format = format
        self.isRaw = isRaw
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
        self.frameRate = frameRate
        self.videoCodec = videoCodec
        self.audioCodec = audioCodec
        self.bitRate = bitRate
        self.captureFrameRate = captureFrameRate
        self.traits = traits
        self.burstIdentifier = burstIdentifier
        self.rating = rating
        self.keywords = keywords
        self.userComment = userComment
        self.contentIdentifier = contentIdentifier
        self.filePlace = filePlace
    }

    /// The capture instant in Unix milliseconds, when the capture time came from real metadata
    /// with a zone (never from a file name or the file's mtime): what Live Photo pairing compares.
    public var captureInstantMilliseconds: Int64? {
        guard let offset = captureDate.offset, captureDate.source != .fileName, captureDate.source != .fileModified
        else { return nil }
        return captureDate.local.unixSeconds(offsetSeconds: offset.seconds) * 1000 + Int64(captureDate.local.millisecond ?? 0)
    }
}

/// What an XMP sidecar adds to its asset.
public struct SidecarFields: Sendable, Hashable {
    /// The capture date (used when the primary file has no EXIF date).
    public var date: Timestamp?
    public var rating: Int?
    public var keywords: [String]
    /// Its location fields: they come before the file's own.
    public var place: Place?

    public init(date: Timestamp?, rating: Int?, keywords: [String], place: Place? = nil) {
        self.date = date
        self.rating = rating
        self.keywords = keywords
        self.place = place
    }
}
