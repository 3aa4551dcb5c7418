import PhotoModel
import PhotoStore

/// Builders of the store's inputs (file records, outcomes, batches) for tests.
public enum Make {
    public static func media(date: String = "2020-01-02T03:04:05", offset: Int? = 3600, type: MediaType = .image,
                      format: String = "jpeg", raw: Bool = false, source: DateSource = .exifOriginal,
                      width: Int? = 640, height: Int? = 480, make: String? = "Canon", lens: String? = nil,
                      latitude: Double? = -33.5, longitude: Double? = 151.25, contentID: String? = nil,
                      comment: String? = nil) -> MediaFields {
        MediaFields(mediaType: type, format: format, isRaw: raw,
                     captureDate: CaptureDate(local: LocalDateTime(iso: date)!, offset: offset.flatMap { UTCOffset(seconds: $0) },
                                              source: source),
                     pixelWidth: width, pixelHeight: height, orientation: 6, latitude: latitude, longitude: longitude,
                     make: make, model: "EOS", lensModel: lens, userComment: comment, contentIdentifier: contentID)
    }

    public static func outcome(_ path: String, inode: UInt64, _ kind: FileOutcome.Kind, size: Int64 = 1234) -> FileOutcome {
        let p = PathBytes(path)
        return FileOutcome(directory: p.parent, name: p.lastComponent,
                           identity: FileIdentity(fsid: 7, inode: inode, size: size, mtimeNanoseconds: 99),
                           fingerprint: inode &* 0x9E37_79B9_7F4A_7C15, kind: kind)
    }

    public static func batch(_ files: [FileOutcome]) -> WriteBatch {
        var b = WriteBatch()
        b.files = files
        return b
    }
}

