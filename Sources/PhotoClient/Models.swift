import PhotoModel
import PhotoWire

/// One photo or video as photod indexes it (PhotoKit's `PHAsset`): the record `assets.fetch`
/// and `collections.assets` answer with.
public struct PhotoAsset: Sendable, Hashable, Identifiable {
    /// Whether an asset is a still image or a video. Open: a newer daemon may name more types.
    public struct MediaType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The wire name (`"image"`).
        public let rawValue: String
        /// The type with this wire name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A still image.
        public static let image = MediaType(rawValue: "image")
        /// A video.
        public static let video = MediaType(rawValue: "video")
        /// The wire name.
        public var description: String { rawValue }
    }

    /// A kind of photo or video within its type (PhotoKit's `PHAssetMediaSubtype`). Open, like
    /// ``MediaType``.
    public struct Subtype: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The wire name (`"screenshot"`).
        public let rawValue: String
        /// The subtype with this wire name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A screenshot.
        public static let screenshot = Subtype(rawValue: "screenshot")
        /// A panorama.
        public static let panorama = Subtype(rawValue: "panorama")
        /// A Live Photo (a still with its short video).
        public static let live = Subtype(rawValue: "live")
        /// A camera raw file (or a raw + JPEG pair).
        public static let raw = Subtype(rawValue: "raw")
        /// A front-camera photo.
        public static let selfie = Subtype(rawValue: "selfie")
        /// A video recorded at 100 fps or more (PhotoKit's `videoHighFrameRate`).
        public static let highFrameRate = Subtype(rawValue: "highFrameRate")
        /// A video recorded slower than it plays (`videoTimelapse`).
        public static let timelapse = Subtype(rawValue: "timelapse")
        /// A GIF, APNG or WebP of more than one frame.
        public static let animated = Subtype(rawValue: "animated")
        /// HDR content or capture (`photoHDR`), or a PQ/HLG video.
        public static let hdr = Subtype(rawValue: "hdr")
        /// A photo with a depth map (`photoDepthEffect`).
        public static let depthEffect = Subtype(rawValue: "depthEffect")
        /// A photo of a burst (`burstIdentifier`).
        public static let burst = Subtype(rawValue: "burst")
        /// The wire name.
        public var description: String { rawValue }
    }

    /// One file of an asset (PhotoKit's `PHAssetResource`): the primary file, a raw or video
    /// companion, a sidecar.
    public struct Resource: Sendable, Hashable {
        /// The file.
        public var path: PathBytes
        /// What the file is to the asset (`"primary"`, `"raw"`, `"pairedVideo"`, `"sidecar"`).
        public var role: String
    }

    /// The stable id (`a_…`): the same file keeps it across renames, moves and restarts.
    public var id: String
    /// The primary file.
    public var path: PathBytes
    /// Image or video.
    public var mediaType: MediaType
    /// The container format (`"jpeg"`, `"heic"`, `"mp4"`, …).
    public var format: String
    /// Screenshot, panorama, Live Photo, raw, selfie.
    public var subtypes: Set<Subtype>
    /// The capture time on the camera's clock.
    public var localDateTime: LocalDateTime
    /// The capture clock's offset from UTC: the file's, else its place's time zone's at that
    /// time (`utcOffsetSource`).
    public var utcOffset: UTCOffset?
    /// `"metadata"` or `"place"`; nil without an offset.
    public var utcOffsetSource: String?
    /// Where the capture time came from (`"exifOriginal"`, `"fileName"`, `"fileModified"`, …).
    public var dateSource: String
    /// Width in pixels after orientation, when known.
    public var pixelWidth: Int?
    /// Height in pixels after orientation, when known.
    public var pixelHeight: Int?
    /// The EXIF orientation (1–8; 1 when the file says nothing).
    public var orientation: Int
    /// Where it was taken, when the file says so.
    public var location: Location?
    /// Where it was taken, in words: the file's location fields, else the GeoNames place of its
    /// coordinates; nil when neither names one.
    public var place: Place?
    /// The camera maker.
    public var make: String?
    /// The camera model.
    public var model: String?
    /// The lens.
    public var lensModel: String?
    /// A video's length in seconds.
    public var duration: Double?
    /// A video's nominal frames per second.
    public var frameRate: Double?
    /// A video's codec, as FFmpeg names it (`h264`, `hevc`, `vp9`, `av1`…).
    public var videoCodec: String?
    /// A video's audio codec (`aac`, `opus`…); nil without sound.
    public var audioCodec: String?
    /// A video's bits per second.
    public var bitRate: Int64?
    /// The rate a video was recorded at when it differs from how it plays (Android's
    /// `com.android.capture.fps`: above `frameRate` for slow motion, below for a time-lapse).
    public var captureFrameRate: Double?
    /// The burst the photo was shot in (Apple's BurstUUID); `collections.assets` on
    /// `b_` + it lists the burst.
    public var burstIdentifier: String?
    /// Whether it is the photo that stands for its burst (in the Bursts smart album).
    public var representsBurst: Bool
    /// The rating (0–5), when the file has one.
    public var rating: Int?
    /// The file's keywords and the taggers' (`assets.setKeywords`), merged.
    public var keywords: [String]
    /// In Favorites.
    public var isFavorite: Bool
    /// Hidden (only in fetches with `includeHidden` and the Hidden smart album).
    public var isHidden: Bool
    /// False while its library root is unavailable (an unmounted disk): listed, not openable.
    public var isAvailable: Bool
    /// The primary file's size in bytes.
    public var fileSize: Int64
    /// When photod first indexed it, in Unix milliseconds.
    public var addedAt: Int64
    /// Every file of the asset, the primary first.
    public var resources: [Resource]

    /// A place's names (`place` in PROTOCOL.md).
    public struct Place: Sendable, Hashable {
        public var city: String?
        public var subLocation: String?
        public var region: String?
        public var country: String?
        /// ISO 3166-1 alpha-2.
        public var countryCode: String?
        /// The place a photo beyond every city's reach is near.
        public var near: String?
        /// `"file"` or `"geonames"`.
        public var source: String
    }

    /// A place on Earth (WGS 84).
    public struct Location: Sendable, Hashable {
        /// Degrees north.
        public var latitude: Double
        /// Degrees east.
        public var longitude: Double
        /// Metres above sea level, when known.
        public var altitude: Double?
    }

    /// Decodes an asset record; `path` names it in errors (`assets[3]`).
    public init(json: JSONValue, path: String = "asset") throws(MalformedReply) {
        let f = try Fields(json, at: path)
        id = try f.string("id")
        self.path = try f.path("path")
        mediaType = MediaType(rawValue: try f.string("mediaType"))
        format = try f.optionalString("format") ?? ""
        subtypes = Set(try f.strings("subtypes").map(Subtype.init(rawValue:)))
        localDateTime = try f.localDateTime("localDateTime")
        utcOffset = try f.optionalOffset("utcOffset")
        utcOffsetSource = try f.optionalString("utcOffsetSource")
        dateSource = try f.optionalString("dateSource") ?? ""
        pixelWidth = try f.optionalInt("pixelWidth").map { Int($0) }
        pixelHeight = try f.optionalInt("pixelHeight").map { Int($0) }
        orientation = Int(try f.optionalInt("orientation") ?? 1)
        let latitude = try f.optionalDouble("latitude"), longitude = try f.optionalDouble("longitude")
        let altitude = try f.optionalDouble("altitude")
        location = latitude.flatMap { lat in longitude.map { Location(latitude: lat, longitude: $0, altitude: altitude) } }
        if let p = try f.optionalFields("place") {
            place = Place(city: try p.optionalString("city"), subLocation: try p.optionalString("subLocation"),
                          region: try p.optionalString("region"), country: try p.optionalString("country"),
                          countryCode: try p.optionalString("countryCode"), near: try p.optionalString("near"),
                          source: try p.string("source"))
        }
        make = try f.optionalString("make")
        model = try f.optionalString("model")
        lensModel = try f.optionalString("lensModel")
        duration = try f.optionalDouble("duration")
        frameRate = try f.optionalDouble("frameRate")
        videoCodec = try f.optionalString("videoCodec")
        audioCodec = try f.optionalString("audioCodec")
        bitRate = try f.optionalInt("bitRate")
        captureFrameRate = try f.optionalDouble("captureFrameRate")
        burstIdentifier = try f.optionalString("burstIdentifier")
        representsBurst = try f.optionalBool("representsBurst") ?? false
        rating = try f.optionalInt("rating").map { Int($0) }
        keywords = try f.strings("keywords")
        isFavorite = try f.bool("isFavorite")
        isHidden = try f.bool("isHidden")
        isAvailable = try f.optionalBool("isAvailable") ?? true
        fileSize = try f.optionalInt("fileSize") ?? 0
        addedAt = try f.utcMilliseconds("addedDate")
        resources = try f.objects("resources") { value, path throws(MalformedReply) in
            let r = try Fields(value, at: path)
            return Resource(path: try r.path("path"), role: try r.string("role"))
        }
    }
}

/// One commit's changes (a journal entry): what `changes` notifications and `changes.since`
/// carry. Ids only; fetch the objects for their new state.
public struct ChangeSet: Sendable, Hashable {
    /// The change token after this commit; tokens only grow.
    public var token: Int64
    /// When it was committed, in Unix milliseconds.
    public var time: Int64
    /// Assets that appeared (new files).
    public var assetsInserted: [String]
    /// Assets whose record or user state changed (re-read, moved, favorited, gone to Recently
    /// Deleted, added to an album).
    public var assetsUpdated: [String]
    /// Assets purged for good.
    public var assetsDeleted: [String]
    /// Collections that appeared (a new moment, folder, user album).
    public var collectionsInserted: [String]
    /// Collections whose members, order or title changed.
    public var collectionsUpdated: [String]
    /// Collections that are gone.
    public var collectionsDeleted: [String]

    /// A change set with these lists.
    public init(token: Int64, time: Int64 = 0, assetsInserted: [String] = [], assetsUpdated: [String] = [],
                assetsDeleted: [String] = [], collectionsInserted: [String] = [], collectionsUpdated: [String] = [],
                collectionsDeleted: [String] = []) {
        self.token = token
        self.time = time
        self.assetsInserted = assetsInserted
        self.assetsUpdated = assetsUpdated
        self.assetsDeleted = assetsDeleted
        self.collectionsInserted = collectionsInserted
        self.collectionsUpdated = collectionsUpdated
        self.collectionsDeleted = collectionsDeleted
    }

    /// Decodes `{"token", "time", "assets": {inserted, updated, deleted}, "collections": {…}}`.
    public init(json: JSONValue, path: String = "change") throws(MalformedReply) {
        let f = try Fields(json, at: path)
        token = try f.int("token")
        time = try f.utcMilliseconds("time")
        let assets = try f.fields("assets"), collections = try f.fields("collections")
        assetsInserted = try assets.strings("inserted")
        assetsUpdated = try assets.strings("updated")
        assetsDeleted = try assets.strings("deleted")
        collectionsInserted = try collections.strings("inserted")
        collectionsUpdated = try collections.strings("updated")
        collectionsDeleted = try collections.strings("deleted")
    }
}
