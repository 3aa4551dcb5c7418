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
    /// A resource of an asset.
    case asset
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

    public init(name: [UInt8], identity: FileIdentity, status: FileStatus) {
        self.name = name
        self.identity = identity
        self.status = status
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

/// The outcome of reading one file, ready to be written.
public struct FileOutcome: Sendable {
    public enum Kind: Sendable {
        /// The file is an asset's primary resource. The asset's `id` is a fresh one: the writer
        /// keeps the existing id when the file already belonged to an asset.
        case asset(Asset)
        /// Not media; remembered so that it is not read again.
        case ignored(reason: String)
        /// A per-file error with a stable code and a message.
        case error(code: String, message: String)
    }

    public var directory: PathBytes
    public var name: [UInt8]
    public var identity: FileIdentity
    /// A hash of the size and the first and last 64 KiB (recognises a copied file).
    public var fingerprint: UInt64?
    public var format: String?
    public var kind: Kind

    public init(directory: PathBytes, name: [UInt8], identity: FileIdentity, fingerprint: UInt64?, format: String?,
                kind: Kind) {
        self.directory = directory
        self.name = name
        self.identity = identity
        self.fingerprint = fingerprint
        self.format = format
        self.kind = kind
    }

    public var path: PathBytes { directory.appending(name) }
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

    public init() {}

    public var isEmpty: Bool {
        directories.isEmpty && files.isEmpty && removedFiles.isEmpty && removedDirectories.isEmpty
    }

    /// Appends another batch's work (the sort queue merges pending batches this way).
    public mutating func absorb(_ other: WriteBatch) {
        directories += other.directories
        files += other.files
        removedFiles += other.removedFiles
        removedDirectories += other.removedDirectories
    }
}

/// What a committed batch changed, by asset id.
public struct BatchSummary: Sendable, Hashable {
    public var inserted: [AssetID] = []
    public var updated: [AssetID] = []
    public var deleted: [AssetID] = []
    public var errors = 0
    public init() {}
}

/// Counts for `library.status`.
public struct LibraryCounts: Sendable, Hashable {
    public var assets = 0
    public var images = 0
    public var videos = 0
    public var files = 0
    public var errors = 0
    public var ignored = 0
    public var directories = 0
    public init() {}
}
