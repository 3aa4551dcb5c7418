import PhotoModel

/// A container or codec family, recognised from the file's first bytes (never from its
/// extension alone).
public enum MediaFormat: String, Sendable, Hashable, CaseIterable {
    // Still images.
    case jpeg, mpo, tiff, png, apng, webp, gif, bmp, ico, heic, heif, avif, jpeg2000, jpegXL, bpg, psd
    // TIFF-based RAW (the TIFF magic plus the maker's signature or extension) and other RAW.
    case dng, nef, cr2, cr3, arw, orf, rw2, pef, raf, srw
    // Rarer TIFF-based RAW, told from TIFF by extension or maker: Phase One, Hasselblad,
    // Epson, Kodak, Leaf, Mamiya, Leica.
    case iiq, threeFR = "3fr", erf, kdc, dcr, mos, mef, rwl
    // RAW with structures of their own: Canon CIFF, Minolta, Sigma (Foveon).
    case crw, mrw, x3f
    // Videos.
    case mp4, mov, threeGP, threeG2, m4v, mng, matroska, webm, avi, flv, asf
    /// An MPEG transport stream: AVCHD's `.mts`/`.m2ts`, or a `.ts` recording.
    case m2ts
    /// An MPEG-1 system or MPEG-2 program stream: `.mpg`, `.vob`, a camcorder's `.mod`.
    case mpeg

    /// Whether assets of this format are photos or videos. MNG is an animation, which
    /// exiftool and PhotoKit both call a video.
    public var mediaType: MediaType {
        switch self {
        case .mp4, .mov, .threeGP, .threeG2, .m4v, .mng, .matroska, .webm, .avi, .flv, .asf, .m2ts, .mpeg: return .video
        default: return .image
        }
    }

    /// HEIC, HEIF or AVIF: the container's `irot`/`imir` say how the image is displayed (and
    /// libheif applies them), so `MediaMetadata.orientation` comes from them, not from EXIF.
    public var isHEIF: Bool { self == .heic || self == .heif || self == .avif }

    /// Whether this is a camera RAW format (the `raw` subtype).
    public var isRaw: Bool {
        switch self {
        case .dng, .nef, .cr2, .cr3, .arw, .orf, .rw2, .pef, .raf, .srw,
             .iiq, .threeFR, .erf, .kdc, .dcr, .mos, .mef, .rwl, .crw, .mrw, .x3f: return true
        default: return false
        }
    }

    /// The MIME type clients and web servers use for the format.
    public var mimeType: String {
        switch self {
        case .jpeg, .mpo: return "image/jpeg"
        case .tiff: return "image/tiff"
        case .png, .apng: return "image/png"
        case .webp: return "image/webp"
        case .gif: return "image/gif"
        case .bmp: return "image/bmp"
        case .ico: return "image/x-icon"
        case .heic: return "image/heic"
        case .heif: return "image/heif"
        case .avif: return "image/avif"
        case .jpeg2000: return "image/jp2"
        case .jpegXL: return "image/jxl"
        case .bpg: return "image/bpg"
        case .psd: return "image/vnd.adobe.photoshop"
        case .dng: return "image/x-adobe-dng"
        case .nef: return "image/x-nikon-nef"
        case .cr2: return "image/x-canon-cr2"
        case .cr3: return "image/x-canon-cr3"
        case .arw: return "image/x-sony-arw"
        case .orf: return "image/x-olympus-orf"
        case .rw2: return "image/x-panasonic-rw2"
        case .pef: return "image/x-pentax-pef"
        case .raf: return "image/x-fuji-raf"
        case .srw: return "image/x-samsung-srw"
        case .iiq: return "image/x-phaseone-iiq"
        case .threeFR: return "image/x-hasselblad-3fr"
        case .erf: return "image/x-epson-erf"
        case .kdc: return "image/x-kodak-kdc"
        case .dcr: return "image/x-kodak-dcr"
        case .mos: return "image/x-leaf-mos"
        case .mef: return "image/x-mamiya-mef"
        case .rwl: return "image/x-leica-rwl"
        case .crw: return "image/x-canon-crw"
        case .mrw: return "image/x-minolta-mrw"
        case .x3f: return "image/x-sigma-x3f"
        case .mp4: return "video/mp4"
        case .mov: return "video/quicktime"
        case .threeGP: return "video/3gpp"
        case .threeG2: return "video/3gpp2"
        case .m4v: return "video/x-m4v"
        case .mng: return "video/x-mng"
        case .matroska: return "video/x-matroska"
        case .webm: return "video/webm"
        case .avi: return "video/x-msvideo"
        case .flv: return "video/x-flv"
        case .asf: return "video/x-ms-asf"
        case .m2ts: return "video/mp2t"
        case .mpeg: return "video/mpeg"
        }
    }
}

/// What the metadata reader learned from one media file. Every field is optional except the
/// format: a damaged file yields what is valid in it.
public struct MediaMetadata: Sendable, Hashable {
    /// The container or codec, from the content.
    public var format: MediaFormat
    /// Pixel size as stored (JPEG SOF, PNG IHDR, HEIC `ispe`, a video track's `tkhd`), before
    /// orientation is applied; never EXIF PixelXDimension, which editors leave stale — except
    /// in CR2, CR3 and IIQ files, whose IFDs describe only previews and which no editor rewrites.
    public var pixelWidth: Int?
    /// See `pixelWidth`.
    public var pixelHeight: Int?
    /// How the stored pixels are turned to be displayed, as an EXIF orientation 1–8: the EXIF
    /// tag, else XMP `tiff:Orientation`; for HEIC/HEIF/AVIF the container's `irot`/`imir`
    /// (what libheif applies; their EXIF tag is ignored); for videos the track rotation as the
    /// matching EXIF value. `nil` when the file does not say or says something out of range.
    public var orientation: Int?
    /// Every capture-date candidate found; `CaptureDate.resolve` picks one.
    public var dates: DateCandidates
    /// Signed degrees (south and west negative) and metres (below sea level negative).
    public var latitude: Double?
    /// Signed degrees, west negative.
    public var longitude: Double?
    /// Metres, below sea level negative.
    public var altitude: Double?
    /// Camera make as stored, trimmed of NULs and spaces (EXIF Make, QuickTime make).
    public var make: String?
    /// Camera model as stored, trimmed.
    public var model: String?
    /// EXIF LensModel (0xA434), trimmed.
    public var lensModel: String?
    /// Video duration in seconds.
    public var duration: Double?
    /// Apple's ContentIdentifier (MakerNote of a Live Photo's image, QuickTime key of its video).
    public var contentIdentifier: String?
    /// XMP rating 0–5, when present.
    public var rating: Int?
    /// XMP `dc:subject` keywords, when present.
    public var keywords: [String]
    /// Where the file says it was taken: XMP's location fields, else IPTC-IIM's (`Place.Source.file`).
    public var place: Place?
    /// The IPTC-IIM record's location, before XMP's is weighed against it.
    var iptcPlace: Place?
    /// EXIF UserComment (the screenshot rule of the next issue uses it).
    public var userComment: String?
    /// EXIF Software.
    public var software: String?
    /// What the bytes say about how the file was made: a gain map or an HDR capture, a depth
    /// map, more than one frame (`MediaTraits`).
    public var traits: MediaTraits = []
    /// Apple's BurstUUID (MakerNote): the burst the photo was shot in.
    public var burstIdentifier: String?
    /// Problems that did not stop the read ("EXIF GPS IFD offset out of range, ignored").
    public var warnings: [String]

    /// An empty record of a format; the reader fills what it finds.
    public init(format: MediaFormat) {
        self.format = format
        self.dates = DateCandidates()
        self.keywords = []
        self.warnings = []
    }

    /// Image or video, by format.
    public var mediaType: MediaType { format.mediaType }
}

/// Why a file yielded no media record.
public struct MetadataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable, Hashable {
        /// A zero-byte file.
        case emptyFile
        /// The content is not an image or video (text, PDF, SVG, audio, an archive...).
        case notMedia
        /// The content is a media format photod recognises but cannot index at all.
        case unsupported
        /// The file ends before the parts needed to call it a media file.
        case truncated
        /// The structure is broken beyond what could be salvaged.
        case corrupt
        /// The file could not be read (an I/O error, a file system that refused).
        case unreadable
        /// The file could not be opened for want of permission (it is read again once photod may
        /// read it: after a `chmod`, or at the next scan).
        case permissionDenied
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence a user can act on ("content is plain text, not an image").
    public var message: String
    /// For `notMedia`: what the content looks like (`text`, `pdf`, `svg`, `audio`, `zip`, `unknown`).
    public var detectedKind: String?

    /// An error with a code, a message and, for `notMedia`, what the content looks like.
    public init(_ code: Code, _ message: String, detectedKind: String? = nil) {
        self.code = code
        self.message = message
        self.detectedKind = detectedKind
    }

    /// `code: message`, for logs.
    public var description: String { "\(code.rawValue): \(message)" }
}
