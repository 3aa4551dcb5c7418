/// Whether an asset is a still image or a video (PhotoKit's `PHAssetMediaType`).
public enum MediaType: String, Sendable, Hashable, CaseIterable, Codable {
    case image
    case video
}

/// Where an asset's capture time came from, in the order the rules try them.
public enum DateSource: String, Sendable, Hashable, CaseIterable, Codable {
    /// EXIF DateTimeOriginal (+ SubSecTimeOriginal, + OffsetTimeOriginal).
    case exifOriginal
    /// EXIF DateTimeDigitized (+ OffsetTimeDigitized).
    case exifDigitized
    /// An XMP capture date (`exif:DateTimeOriginal`, `photoshop:DateCreated`, `xmp:CreateDate`;
    /// sidecar or embedded packet).
    case xmp
    /// IPTC-IIM DateCreated (2:55) + TimeCreated (2:60), from a JPEG's Photoshop APP13 block.
    case iptc
    /// EXIF (IFD0) DateTime (+ OffsetTime): the time the file was last changed by its writer,
    /// so it comes after every capture date.
    case exifModified
    /// A QuickTime date: Apple's `com.apple.quicktime.creationdate`, or the `mvhd` time (UTC).
    case quicktime
    /// A date in the file name (`IMG_20190504_132210.jpg`, `Screenshot 2023-05-04 at ...`).
    case fileName
    /// The file's modification time, the rule that always exists.
    case fileModified
}

/// The subtypes PhotoKit calls `PHAssetMediaSubtype` (`SubtypeRules` gives each its rule).
public enum AssetSubtype: String, Sendable, Hashable, CaseIterable, Codable {
    case screenshot
    case panorama
    case live
    case raw
    case selfie
    /// A video recorded at 100 frames per second or more (`videoHighFrameRate`: slow motion).
    case highFrameRate
    /// A video recorded slower than it plays (`videoTimelapse`).
    case timelapse
    /// A GIF, APNG or WebP of more than one frame.
    case animated
    /// A photo with HDR content or an HDR capture, or a 10-bit HDR video (`photoHDR`).
    case hdr
    /// A photo with a depth or disparity map (`photoDepthEffect`: portrait mode).
    case depthEffect
    /// A photo shot in a burst (Apple's MakerNote BurstUUID).
    case burst
}

/// What a file's own bytes say about how it was made, as the subtype rules read it (one
/// integer column, `traits`).
public struct MediaTraits: OptionSet, Sendable, Hashable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// HDR: a photo's gain map (Ultra HDR `hdrgm` XMP, a HEIC/AVIF gain-map item), Apple's
    /// MakerNote HDR flag, or a video's PQ/HLG transfer at 10 bits or more.
    public static let hdr = MediaTraits(rawValue: 1)
    /// A depth or disparity map (a HEIC `auxC` depth/disparity item, Google's depth-map XMP or a
    /// Dynamic Depth container item).
    public static let depth = MediaTraits(rawValue: 2)
    /// More than one frame in a still-image format (GIF, APNG, WebP).
    public static let animated = MediaTraits(rawValue: 4)
}
