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

/// The subtypes PhotoKit calls `PHAssetMediaSubtype`.
public enum AssetSubtype: String, Sendable, Hashable, CaseIterable, Codable {
    case screenshot
    case panorama
    case live
    case raw
    case selfie
}
