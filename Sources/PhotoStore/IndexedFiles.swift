import PhotoModel

// What the index knows of files and directories on disk: what a scan compares with a listing.

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

/// An indexed file's content, and the identity it had.
public struct IndexedContent: Sendable, Hashable {
    public var key: ContentKey
    public var identity: FileIdentity
    public init(key: ContentKey, identity: FileIdentity) {
        self.key = key
        self.identity = identity
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
