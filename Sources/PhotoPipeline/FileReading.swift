import PhotoModel
import PhotoStore
import PhotoSystem

/// A file the scan found new or changed, to be read.
public struct Candidate: Sendable, Hashable {
    public var directory: PathBytes
    public var name: [UInt8]
    public var identity: FileIdentity
    /// The walk saw no index row for the file and no other file of its group (base name) in
    /// its directory: the writer may take the fast path for it.
    public var isSoleNewMember: Bool
    /// The index had no row for the file.
    public var isNew: Bool

    public init(directory: PathBytes, name: [UInt8], identity: FileIdentity, isSoleNewMember: Bool = false,
                isNew: Bool = false) {
        self.directory = directory
        self.name = name
        self.identity = identity
        self.isSoleNewMember = isSoleNewMember
        self.isNew = isNew || isSoleNewMember
    }

    public var path: PathBytes { directory.appending(name) }
}

/// The seam between the pipeline and the metadata reader: turns a candidate file into an
/// outcome (an asset, an ignored file, or a per-file error). Never throws: a file that cannot
/// be read is an outcome too. Must be safe to call from several threads at once.
public protocol FileReading: Sendable {
    func read(_ candidate: Candidate) -> FileOutcome

    /// The version of what reading finds in a file (formats, fields, the capture-date rules).
    /// A newer one than the index was read with makes the next full scan read every file again,
    /// once: an upgrade's new rules apply to the whole library, not only to files that change.
    var rulesVersion: Int { get }
}

/// File extensions that claim media content: a file with one of these whose content is not
/// media is reported as an error ("not-an-image.jpg"); other non-media files are ignored.
public enum MediaExtensions {
    public static let all: Set<String> = [
        "jpg", "jpeg", "jpe", "jfif", "mpo", "tif", "tiff", "png", "apng", "mng", "webp", "gif", "bmp", "ico", "heic",
        "heif", "hif", "avif", "jp2", "j2k", "jpf", "jpx", "jxl", "bpg", "psd", "psb", "dng", "nef", "nrw", "cr2", "cr3", "crw",
        "arw", "srf", "sr2", "orf", "rw2", "pef", "raf", "srw", "raw", "rwl", "3fr", "iiq", "erf", "kdc", "dcr", "mos",
        "mef", "mrw", "x3f",
        "mp4", "m4v", "mov", "qt", "3gp", "3g2", "mkv", "webm", "avi", "flv", "f4v", "wmv", "asf", "mts", "m2ts", "m2t",
        "mpg", "mpeg", "vob",
    ]

    /// Whether a file name's extension (case-insensitive) claims media content.
    public static func claimsMedia(_ name: [UInt8]) -> Bool {
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot + 1 < name.count, name.count - dot <= 6 else {
            return false
        }
        let ext = String(decoding: name[(dot + 1)...].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        return all.contains(ext)
    }
}
