import PhotoModel

// What the pipeline hands the writer: one unit of writing, with what was read.

/// The outcome of reading one file, ready to be written.
public struct FileOutcome: Sendable {
    public enum Kind: Sendable {
        /// An image or a video, with what the reader found in it.
        case media(MediaFields)
        /// An XMP sidecar.
        case sidecar(SidecarFields)
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
        /// A file the index has could not be read (an I/O error: the disk, not the content).
        /// Nothing is written for it either: its row, and its asset, stay as they were (a
        /// failing disk must not send photos to Recently Deleted); it is read again at the next
        /// change or scan, and `library.status` lists it meanwhile.
        case unreadable(message: String)
    }

    /// The error code of a read that failed on an I/O error (`MetadataError.Code.unreadable`).
    public static let unreadableCode = "unreadable"

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
        case .vanished, .unreadable: return nil
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
        // Files written or removed by a later batch, by directory and name (no path is made per
        // file: this runs for every file of a merged initial-index transaction).
        struct FileKey: Hashable {
            var directory: PathBytes
            var name: [UInt8]
        }
        var laterPaths = Set<FileKey>()
        var laterGone: [PathBytes] = []         // directories removed by a later batch
        func goneLater(_ p: PathBytes) -> Bool { !laterGone.isEmpty && laterGone.contains { p.isWithin($0) } }
        var files: [[FileOutcome]] = []
        var removedFiles: [[(directory: PathBytes, name: [UInt8])]] = []
        var directories: [[DirectoryVisit]] = []
        for (n, batch) in batches.reversed().enumerated() {
            files.append(batch.files.filter {
                !goneLater($0.directory) && (laterPaths.isEmpty || !laterPaths.contains(FileKey(directory: $0.directory, name: $0.name)))
            })
            removedFiles.append(batch.removedFiles.filter { !goneLater($0.directory) })
            directories.append(batch.directories.filter { !goneLater($0.path) })
            laterGone += batch.removedDirectories
            if n == batches.count - 1 { break }  // the oldest: no batch before it to filter
            for f in batch.files { laterPaths.insert(FileKey(directory: f.directory, name: f.name)) }
            for r in batch.removedFiles { laterPaths.insert(FileKey(directory: r.directory, name: r.name)) }
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
