import PhotoModel

/// What identifies a file's content on disk without reading it: the file system (`f_fsid`,
/// stable across reboots, unlike `st_dev`), the inode, the size and the mtime. When all four
/// are unchanged since the last index the file is not read again.
public struct FileIdentity: Sendable, Hashable {
    public var fsid: UInt64
    public var inode: UInt64
    public var size: Int64
    public var mtimeNanoseconds: Int64

    public init(fsid: UInt64, inode: UInt64, size: Int64, mtimeNanoseconds: Int64) {
        self.fsid = fsid
        self.inode = inode
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
    }
}

/// How the index classified a file.
public enum FileStatus: String, Sendable, Hashable {
    /// An image or video: a resource of an asset.
    case media
    /// An XMP sidecar (a resource of the asset of the same base name, when there is one).
    case sidecar
    /// Not media, and not claiming to be (a `.txt`, a `.pdf`): remembered, not reported.
    case ignored
    /// Claims to be media (by extension) or is damaged media: reported with its reason.
    case error
}

/// A file as the index last saw it (one row of a directory's listing).
public struct IndexedFile: Sendable, Hashable {
    public var name: [UInt8]
    public var identity: FileIdentity
    public var status: FileStatus

    /// For `status == .error`: the error's code (`permissionDenied` is tried again once the
    /// file is readable).
    public var errorCode: String?

    public init(name: [UInt8], identity: FileIdentity, status: FileStatus, errorCode: String? = nil) {
        self.name = name
        self.identity = identity
        self.status = status
        self.errorCode = errorCode
    }
}

/// A directory as the index last saw it: its files and its subdirectories, for the scan's
/// comparison with the disk.
public struct DirectorySnapshot: Sendable {
    public var id: Int64
    /// The file system (`f_fsid`) the directory was on when last visited.
    public var fsid: UInt64?
    public var inode: UInt64?
    public var mtimeNanoseconds: Int64?
    /// In byte order of their names.
    public var files: [IndexedFile]
    /// Names, in byte order.
    public var subdirectories: [[UInt8]]

    public init(id: Int64, fsid: UInt64? = nil, inode: UInt64?, mtimeNanoseconds: Int64?, files: [IndexedFile],
                subdirectories: [[UInt8]]) {
        self.id = id
        self.fsid = fsid
        self.inode = inode
        self.mtimeNanoseconds = mtimeNanoseconds
        self.files = files
        self.subdirectories = subdirectories
    }

    /// Whether the index holds anything below this directory.
    public var isEmpty: Bool { files.isEmpty && subdirectories.isEmpty }
}

/// What the reader found in one media file: the file's own record, from which assets are
/// composed (a RAW+JPEG pair takes the JPEG's, a sidecar adds its date, rating and keywords).
public struct FileMetadata: Sendable, Hashable {
    public var mediaType: MediaType
    /// The container or codec from the content (`jpeg`, `heic`, `mp4`, ...).
    public var format: String
    /// Whether the file is camera RAW.
    public var isRaw: Bool
    public var captureDate: CaptureDate
    public var pixelWidth: Int?
    public var pixelHeight: Int?
    /// EXIF orientation 1–8.
    public var orientation: Int
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?
    public var make: String?
    public var model: String?
    public var lensModel: String?
    public var duration: Double?
    public var rating: Int?
    public var keywords: [String]
    /// EXIF UserComment (the screenshot rule reads it).
    public var userComment: String?
    /// Apple's ContentIdentifier (pairs a Live Photo's image and video).
    public var contentIdentifier: String?

    /// A file's record.
    public init(mediaType: MediaType, format: String, isRaw: Bool = false, captureDate: CaptureDate,
                pixelWidth: Int? = nil, pixelHeight: Int? = nil, orientation: Int = 1, latitude: Double? = nil,
                longitude: Double? = nil, altitude: Double? = nil, make: String? = nil, model: String? = nil,
                lensModel: String? = nil, duration: Double? = nil, rating: Int? = nil, keywords: [String] = [],
                userComment: String? = nil, contentIdentifier: String? = nil) {
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
        self.rating = rating
        self.keywords = keywords
        self.userComment = userComment
        self.contentIdentifier = contentIdentifier
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
public struct SidecarRecord: Sendable, Hashable {
    /// The capture date (used when the primary file has no EXIF date).
    public var date: Timestamp?
    public var rating: Int?
    public var keywords: [String]

    public init(date: Timestamp?, rating: Int?, keywords: [String]) {
        self.date = date
        self.rating = rating
        self.keywords = keywords
    }
}

/// The outcome of reading one file, ready to be written.
public struct FileOutcome: Sendable {
    public enum Kind: Sendable {
        /// An image or a video, with what the reader found in it.
        case media(FileMetadata)
        /// An XMP sidecar.
        case sidecar(SidecarRecord)
        /// Not media; remembered so that it is not read again.
        case ignored(reason: String)
        /// A per-file error with a stable code and a message.
        case error(code: String, message: String)
        /// The file was gone when it was to be read (renamed or deleted after the walk saw it).
        /// Nothing is written for it: a row it had keeps describing it until its removal or
        /// its new place arrives (the listing of the next scan, the watcher's event). Recording
        /// an error here would stick: its folder renamed back, the file would match the error
        /// row's identity and never be read again.
        case vanished
    }

    public var directory: PathBytes
    public var name: [UInt8]
    public var identity: FileIdentity
    /// A hash of the size and the first and last 64 KiB (recognises a copied file).
    public var fingerprint: UInt64?
    public var kind: Kind
    /// The file had no index row and no file of its group (base name) existed beside it when it
    /// was found: the writer inserts its asset directly instead of pairing its group. A wrong
    /// hint costs nothing but speed (a conflicting row sends the file down the general path).
    public var isSoleNewMember: Bool

    public init(directory: PathBytes, name: [UInt8], identity: FileIdentity, fingerprint: UInt64?, kind: Kind,
                isSoleNewMember: Bool = false) {
        self.directory = directory
        self.name = name
        self.identity = identity
        self.fingerprint = fingerprint
        self.kind = kind
        self.isSoleNewMember = isSoleNewMember
    }

    public var path: PathBytes { directory.appending(name) }

    /// The status the file's row gets (nil: no row is written, see `Kind.vanished`).
    public var status: FileStatus? {
        switch kind {
        case .media: return .media
        case .sidecar: return .sidecar
        case .ignored: return .ignored
        case .error: return .error
        case .vanished: return nil
        }
    }
}

/// A directory the scan visited, with what identifies it (its mtime lets later rescans skip
/// unchanged directories).
public struct DirectoryVisit: Sendable, Hashable {
    public var path: PathBytes
    public var fsid: UInt64
    public var inode: UInt64
    public var mtimeNanoseconds: Int64

    public init(path: PathBytes, fsid: UInt64, inode: UInt64, mtimeNanoseconds: Int64) {
        self.path = path
        self.fsid = fsid
        self.inode = inode
        self.mtimeNanoseconds = mtimeNanoseconds
    }
}

/// What recognises a file's content without its path or inode: its size and fingerprint.
public struct ContentKey: Sendable, Hashable {
    public var size: Int64
    public var fingerprint: UInt64
    public init(size: Int64, fingerprint: UInt64) {
        self.size = size
        self.fingerprint = fingerprint
    }
}

/// One unit of writing: committed in a single transaction, all or nothing.
public struct WriteBatch: Sendable {
    /// Directories to create or refresh.
    public var directories: [DirectoryVisit] = []
    /// Files read, with their outcome.
    public var files: [FileOutcome] = []
    /// Files that vanished from a directory.
    public var removedFiles: [(directory: PathBytes, name: [UInt8])] = []
    /// Directories that vanished, with everything below them.
    public var removedDirectories: [PathBytes] = []
    /// Directories renamed or moved inside the library (their files, assets and album ids follow).
    public var movedDirectories: [DirectoryMove] = []
    /// Files renamed or moved inside the library (they keep their row and asset).
    public var movedFiles: [FileMove] = []
    /// Files found again whose assets are in Recently Deleted (moved while photod was down).
    public var restoredFiles: [FileRestore] = []
    /// Files indexed shortly before as new assets that are copies of files this batch removes
    /// (`mv` across file systems copies, then deletes): each takes over the removed file's
    /// asset (its id, user state, albums), and its own short-lived asset is deleted.
    public var copiesOfRemoved: [PathBytes] = []

    public init() {}

    public var isEmpty: Bool {
        directories.isEmpty && files.isEmpty && removedFiles.isEmpty && removedDirectories.isEmpty && !hasMoves
    }

    /// Whether the batch moves or restores anything (such batches are not merged with others).
    public var hasMoves: Bool {
        !movedDirectories.isEmpty || !movedFiles.isEmpty || !restoredFiles.isEmpty || !copiesOfRemoved.isEmpty
    }

    /// Merges a later batch into this one so that applying the result equals applying the two
    /// in order.
    public mutating func absorb(_ later: WriteBatch) {
        self = WriteBatch.merged([self, later])
    }

    /// One batch whose application equals applying `batches` in order (the sort queue merges
    /// pending jobs this way). `apply` runs removals before writes, so what a later batch
    /// removes or rewrites cancels what an earlier one wrote there. O(total work): one pass
    /// from the newest batch back.
    public static func merged(_ batches: [WriteBatch]) -> WriteBatch {
        guard batches.count > 1 else { return batches.first ?? WriteBatch() }
        precondition(!batches.contains(where: \.hasMoves), "batches with moves are applied alone")
        var result = WriteBatch()
        var laterPaths = Set<PathBytes>()       // files written or removed by a later batch
        var laterGone: [PathBytes] = []         // directories removed by a later batch
        func goneLater(_ p: PathBytes) -> Bool { !laterGone.isEmpty && laterGone.contains { p.isWithin($0) } }
        var files: [[FileOutcome]] = []
        var removedFiles: [[(directory: PathBytes, name: [UInt8])]] = []
        var directories: [[DirectoryVisit]] = []
        for batch in batches.reversed() {
            files.append(batch.files.filter { !laterPaths.contains($0.path) && !goneLater($0.directory) })
            removedFiles.append(batch.removedFiles.filter { !goneLater($0.directory) })
            directories.append(batch.directories.filter { !goneLater($0.path) })
            for f in batch.files { laterPaths.insert(f.path) }
            for r in batch.removedFiles { laterPaths.insert(r.directory.appending(r.name)) }
            laterGone += batch.removedDirectories
        }
        for batch in batches { result.removedDirectories += batch.removedDirectories }
        for part in removedFiles.reversed() { result.removedFiles += part }
        for part in directories.reversed() { result.directories += part }
        for part in files.reversed() { result.files += part }
        return result
    }
}

/// A directory renamed or moved inside the library.
public struct DirectoryMove: Sendable, Hashable {
    public var from: PathBytes
    public var to: PathBytes
    public init(from: PathBytes, to: PathBytes) {
        self.from = from
        self.to = to
    }
}

/// A file renamed or moved inside the library.
public struct FileMove: Sendable, Hashable {
    public var from: PathBytes
    public var to: PathBytes
    /// What the file is at its new place (its identity must match the row's for a silent move).
    public var identity: FileIdentity?
    public init(from: PathBytes, to: PathBytes, identity: FileIdentity? = nil) {
        self.from = from
        self.to = to
        self.identity = identity
    }
}

/// A file found again at `path` whose asset is in Recently Deleted: its tombstone becomes its
/// row again (nothing is read) and the asset comes back with its id.
public struct FileRestore: Sendable, Hashable {
    public var path: PathBytes
    public var identity: FileIdentity
    public var tombstone: Int64
    public init(path: PathBytes, identity: FileIdentity, tombstone: Int64) {
        self.path = path
        self.identity = identity
        self.tombstone = tombstone
    }
}

/// What a committed batch changed: the change set recorded in the journal with its token.
public struct BatchSummary: Sendable, Hashable {
    /// The change token of the journal row (nil when nothing visible changed).
    public var token: Int64?
    public var inserted: [AssetID] = []
    public var updated: [AssetID] = []
    public var deleted: [AssetID] = []
    /// Collection ids (moments, folder albums, collection lists, smart albums).
    public var collectionsInserted: [String] = []
    public var collectionsUpdated: [String] = []
    public var collectionsDeleted: [String] = []
    /// Per-file errors recorded by the transaction (for every batch merged into it).
    public var errors = 0
    /// Files a move or restore named that the index did not know: read them.
    public var unresolvedFiles: [PathBytes] = []
    /// Directories a move named that the index did not know: scan them.
    public var unresolvedDirectories: [PathBytes] = []
    public init() {}

    /// Whether the change set is empty (nothing a client could see changed).
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && collectionsInserted.isEmpty
            && collectionsUpdated.isEmpty && collectionsDeleted.isEmpty
    }
}

/// Counts for `library.status`.
public struct LibraryCounts: Sendable, Hashable {
    /// Assets in the library (not counting those in Recently Deleted).
    public var assets = 0
    /// Assets in Recently Deleted.
    public var recentlyDeleted = 0
    public var images = 0
    public var videos = 0
    public var files = 0
    public var sidecars = 0
    public var errors = 0
    public var ignored = 0
    public var directories = 0
    public init() {}
}
