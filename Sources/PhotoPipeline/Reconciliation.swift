import PhotoMetadata
import PhotoModel
import PhotoStore

/// The walk's comparison of a directory on disk with the index, as a table: what the disk has
/// under a name × what the index has under it × what identifies the file → what to do (skip,
/// read, move, restore, remove, …). Pure: whatever costs a system call or a query (is the file
/// readable now, has it the content indexed under its name, was it indexed elsewhere, is it in
/// Recently Deleted, is a writer holding it) is a question to `Facts`, asked only when a rule
/// needs the answer, so that an unchanged file asks none. `Walk.visit` is the shell: it lists,
/// stats, asks the table and carries out the answer. GNOME LocalSearch's `update_state`
/// (`tracker-file-notifier.c`) is the model.
enum Reconciliation {
    /// The questions about the files of one directory that cost a system call or a query.
    protocol Facts {
        /// Whether the file `name` may be opened for reading now (`faccessat`).
        func isReadable(_ name: [UInt8]) -> Bool
        /// Whether the file under `row`'s name, whose identity changed, has the content the
        /// index has for it (its fingerprint): the same photo on another disk.
        func hasIndexedContent(_ row: IndexedFile, size: Int64) -> Bool
        /// Where a file with this identity was indexed, when that place no longer holds it.
        func movedFrom(_ identity: FileIdentity, to name: [UInt8]) -> PathBytes?
        /// The Recently Deleted asset whose file had this identity.
        func tombstone(_ identity: FileIdentity) -> Int64?
        /// Whether another process holds the file `name` open for writing.
        func isOpenForWriting(_ name: [UInt8]) -> Bool
        /// Whether `name` is the only file of its group (base name) in the listing.
        func isAloneInGroup(_ name: [UInt8]) -> Bool
    }

    /// How a scan compares the files of a directory (the same for all of them).
    struct Scan: Hashable, Sendable {
        /// Every file is read again, changed or not: the reader's rules are newer than those the
        /// root was read with.
        var readEverything = false
        /// The directory lies in a tree an operator adopts: a file whose identity changed is the
        /// asset indexed under its name only if its content says so.
        var adopting = false
        /// Files the index has no row for are looked up by identity (moves while photod was
        /// down, files back from Recently Deleted). Off for a first index: nothing to find.
        var lookForMoves = false
        /// New files nothing identifies wait until the walk's removals are committed.
        var deferNewFiles = false
        /// Files modified after this instant (Unix nanoseconds) are checked for a writer before
        /// they are read; older ones are not (a copy in progress keeps its mtime current).
        var recentCutoff = Int64.max
    }

    /// What to do with a regular file found on disk.
    enum FileAction: Hashable, Sendable {
        /// The index holds it as it is.
        case skip
        /// Read it. `isNew`: the index keeps no row for it; `isSoleNewMember`: new and alone in
        /// its group (the writer's fast path); `afterRemovals`: read once the walk's removals are
        /// committed, when their tombstones can recognise a copy of a removed file by content.
        case read(isNew: Bool, isSoleNewMember: Bool, afterRemovals: Bool)
        /// Moved here while photod was down: its row (id, user state) follows it.
        case move(from: PathBytes)
        /// The file of an asset in Recently Deleted, back: the asset is restored.
        case restore(tombstone: Int64)
        /// Being written (a copy in progress): its close brings it to the watcher, complete.
        case busy
    }

    /// The table's answer for a file on disk.
    struct FileDecision: Hashable, Sendable {
        /// The index's row under the file's name goes first: in an adopted tree, the same name
        /// is not the same photo (the removal leaves a tombstone that recognises it elsewhere).
        var removesIndexedRow = false
        var action: FileAction
    }

    /// What the index has under a name the listing has no regular file or directory for.
    enum Vanished: Hashable, Sendable {
        case file
        /// `isRecordedMount`: a mount point the index keeps a record of (a root or a mount below).
        case directory(isRecordedMount: Bool)
    }

    /// What to do with what the index has under a vanished name.
    enum VanishedAction: Hashable, Sendable {
        /// Its asset goes to Recently Deleted (at the end of the walk: it may turn up elsewhere
        /// in it, moved).
        case removeFile
        /// Its tree's assets go to Recently Deleted (at the end of the walk, too).
        case removeDirectory
        /// A mount point gone with its disk (as udisks removes it): unavailable if its check
        /// fails, never deleted.
        case checkMount
    }

    /// What to do with a directory that was listed, before its entries are compared.
    enum DirectoryAction: Hashable, Sendable {
        /// Empty and on another file system than when indexed: a mount point the index has no
        /// record of (indexed before records were kept) that lost its file system. The index
        /// keeps what it has.
        case unavailable
        /// It holds `.nomedia`: the user excluded the tree. `forget`: the index has it.
        case exclude(forget: Bool)
        /// Compare its entries with the index. `recordVisit`: its inode or mtime is not the
        /// indexed one, so the visit is written (an unchanged library commits nothing).
        case compare(recordVisit: Bool)
    }

    /// The table for a regular file on disk: `identity` is what its `stat` says, `indexed` the
    /// index's row under its name (nil: none).
    static func file(_ name: [UInt8], _ identity: FileIdentity, indexed: IndexedFile?, scan: Scan,
                     facts: some Facts) -> FileDecision {
        var row = indexed
        var removesIndexedRow = false
        if let known = row {
            if known.identity == identity {
                // Unchanged, unless every file is read again, or it was refused for want of
                // permission and may be read now (a `chmod` changes no size or mtime), or the
                // disk failed its read (an I/O error: a look later may succeed).
                if !scan.readEverything, !(isRefusedForPermission(known) && facts.isReadable(name)), !isUnreadable(known) {
                    return FileDecision(action: .skip)
                }
            } else if scan.adopting, !facts.hasIndexedContent(known, size: identity.size) {
                removesIndexedRow = true
                row = nil
            }
        }
        if row == nil, scan.lookForMoves {
            if let origin = facts.movedFrom(identity, to: name) {
                return FileDecision(removesIndexedRow: removesIndexedRow, action: .move(from: origin))
            }
            if let tombstone = facts.tombstone(identity) {
                return FileDecision(removesIndexedRow: removesIndexedRow, action: .restore(tombstone: tombstone))
            }
        }
        if identity.mtimeNanoseconds > scan.recentCutoff, facts.isOpenForWriting(name) {
            return FileDecision(removesIndexedRow: removesIndexedRow, action: .busy)
        }
        let isNew = row == nil
        return FileDecision(removesIndexedRow: removesIndexedRow,
                            action: .read(isNew: isNew, isSoleNewMember: isNew && facts.isAloneInGroup(name),
                                          afterRemovals: isNew && scan.lookForMoves && scan.deferNewFiles))
    }

    /// The table for what the index has under a name the listing lacks.
    static func vanished(_ indexed: Vanished) -> VanishedAction {
        switch indexed {
        case .file: .removeFile
        case .directory(isRecordedMount: false): .removeDirectory
        case .directory(isRecordedMount: true): .checkMount
        }
    }

    /// The table for a listed directory: `indexed` is what the index has of it (nil: nothing),
    /// `fsid`, `inode` and `mtimeNanoseconds` what the disk says now.
    static func directory(indexed: DirectorySnapshot?, fsid: UInt64, inode: UInt64, mtimeNanoseconds: Int64,
                          hasVisibleEntries: Bool, hasNoMedia: Bool) -> DirectoryAction {
        if let indexed, let indexedFS = indexed.fsid, indexedFS != fsid, !indexed.isEmpty, !hasVisibleEntries {
            return .unavailable
        }
        if hasNoMedia { return .exclude(forget: indexed != nil) }
        return .compare(recordVisit: indexed?.mtimeNanoseconds != mtimeNanoseconds || indexed?.inode != inode)
    }

    /// Whether the reader refused the file for want of permission (it is tried again once the
    /// file is readable).
    static func isRefusedForPermission(_ row: IndexedFile) -> Bool {
        row.status == .error && row.errorCode == MetadataError.Code.permissionDenied.rawValue
    }

    /// Whether the reader could not read the file for an I/O error (it is tried again at every
    /// look: once a scan, not in a loop).
    static func isUnreadable(_ row: IndexedFile) -> Bool {
        row.status == .error && row.errorCode == MetadataError.Code.unreadable.rawValue
    }
}
