import Dispatch
import PhotoMetadata
import PhotoModel
import PhotoStore
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// The directory walk of one scan: compares each directory with what the index holds and
/// emits jobs of at most `Indexer.chunkSize` files to read, together with the directory
/// visits and removals they imply. Runs on one thread.
struct Walk {
    let database: Database
    let logger: Logger
    let status: Locked<IndexerStatus>
    /// Whether a root or a mount point below one may be compared with the index.
    let trees: Trees
    /// The roots of this scan (the trees a subtree lies in are found below them).
    let roots: [PathBytes]
    /// What below the roots is not part of the library (`--exclude` and the defaults): never
    /// entered nor read, and removed from the index when it was indexed.
    let exclusions: PathExclusions
    let emit: (Job) -> Void
    let shouldStop: () -> Bool
    /// Look up new files and directories by identity (moves while photod was down, files back
    /// from Recently Deleted). Off for a first index: nothing to find.
    let lookForMoves: Bool
    /// Hold new files back until the removals are committed (a full scan after a stop: a copy
    /// of a removed file then keeps its asset). Off for the watcher's subtree scans, where the
    /// live index recognises copies itself and the reads should overlap the walk.
    var deferNewFiles = true

    private(set) var filesSeen = 0
    private(set) var candidates = 0
    private(set) var removedFiles = 0
    private(set) var removedDirectories = 0
    private(set) var movedFiles = 0
    private(set) var movedDirectories = 0
    private(set) var restoredFiles = 0
    /// Files skipped because another process was writing them.
    private(set) var busyFiles = 0
    /// Files modified after this instant (Unix nanoseconds) are checked for a writer before
    /// they are read; older ones are not (a copy in progress keeps its mtime current).
    private let recentCutoff = WallClock.nanoseconds() - 10_000_000_000
    /// Removals wait for the end of the walk: a file or directory missing here may turn up
    /// elsewhere later in the walk (a move), and must then keep its id.
    private var deferredFiles: [(directory: PathBytes, name: [UInt8])] = []
    private var deferredDirectories: [PathBytes] = []
    /// Where the files and directories found moved were indexed: their names missing there are
    /// no removal (`finish` leaves them out, of the job and of the counts).
    private var movedFrom = Set<PathBytes>()
    /// The directories (inodes) this walk compared as new, the index holding nothing for them:
    /// `findAgain` leaves those to what the walk made of them.
    private var comparedAsNew = Set<UInt64>()
    /// The directories among `deferredDirectories` removed because their parent's listing lacked
    /// them (not excluded ones): those `findAgain` looks for.
    private var missingDirectories: [PathBytes] = []
    /// New files held back until the removals are committed (bounded: beyond it they are read
    /// at once, and a copy among them gets a new id).
    private var deferredCandidates: [Candidate] = []
    static let maxDeferredCandidates = 50_000
    /// Lists directories ahead of this walk while it walks a root of an index that has files
    /// (nil for subtrees: few directories, not worth a thread; nil for a first index).
    private var lister: Lister?
    private var sequence = 0
    private var pending = Job(sequence: 0, candidates: [], batch: WriteBatch())
    private var pendingExtras = 0
    private var fileSystems: [UInt64: UInt64] = [:]  // st_dev → f_fsid, for this scan
    /// Roots whose every file is read again, changed or not (the reader's rules are newer than
    /// those they were read with).
    var readEverything = Set<PathBytes>()
    /// Whether the root being walked is one of them.
    private var readingEverything = false
    /// Directories reported unreadable before this walk reached them again.
    private var previouslyUnreadable = Set<PathBytes>()

    /// Directory visits and removals per job, at most (a tree with no new files still commits
    /// in bounded transactions).
    static let extrasPerJob = 500

    /// The directory the walk started from, whose trees were checked before it began.
    private var start: PathBytes?
    /// Trees (by the mount they were found on) that went away during the walk: nothing more of
    /// them is listed.
    private var lostMounts = Set<UInt64>()
    /// Trees an operator adopts: their files whose identity changed are matched to their assets
    /// by content (removed, then read as new: the tombstones recognise them), not by path.
    var adopting = Set<PathBytes>()

    init(database: Database, logger: Logger, status: Locked<IndexerStatus>, trees: Trees, roots: [PathBytes],
         exclusions: PathExclusions = .none, emit: @escaping (Job) -> Void, shouldStop: @escaping () -> Bool = { false },
         lookForMoves: Bool = false) {
        self.shouldStop = shouldStop
        self.exclusions = exclusions
        self.lookForMoves = lookForMoves
        self.database = database
        self.logger = logger
        self.status = status
        self.trees = trees
        self.roots = roots
        self.emit = emit
    }

    /// Walks one library root — if `MountGuard` says it may be: a root that cannot be opened, is
    /// empty while the index holds files there, or shows another file system than the one
    /// indexed (an unmounted disk or bind mount) is reported unavailable and left alone: nothing
    /// under it is removed, and its assets keep their ids and user state.
    mutating func walk(root: PathBytes) {
        guard !shouldStop() else { return }
        if trees.checkAndMark(root) != nil { return }
        trees.markAvailable(root)
        forgetUnreadable(below: root)
        readingEverything = readEverything.contains(root)
        defer { readingEverything = false }
        // A whole root over an index that has files (a restart, a rescan: the walk is what the
        // scan waits for): its listings are made ahead on a thread of their own (`Lister`). A
        // first index waits for its readers and writer instead; there the lister would only hold
        // memory.
        guard lookForMoves else { return walkTree(root, on: trees.probedMount(of: root)) }
        let lister = Lister()
        lister.start(root, isMountPoint: { [trees] in trees.isTree($0) },
                     isExcluded: { [exclusions] in exclusions.excludes($0, below: root) })
        self.lister = lister
        defer {
            lister.stop()
            self.lister = nil
        }
        walkTree(root, on: trees.probedMount(of: root))
    }

    /// Walks one directory tree below a root (a new directory, a rescan asked by the watcher or
    /// a client, a polled tree), after the same check of the root and of every mount point
    /// between it and the tree. A tree that is gone is removed (its assets to Recently Deleted)
    /// — unless it is a mount point recorded by the index: then it is unavailable.
    mutating func walk(subtree: PathBytes) {
        guard !shouldStop() else { return }
        if let (tree, reason) = trees.unavailability(of: subtree, roots: roots) {
            trees.markUnavailable(tree, reason: reason)
            return
        }
        let containing = trees.trees(containing: subtree, roots: roots)
        for tree in containing { trees.markAvailable(tree) }
        if (try? FileStat.of(subtree))?.isDirectory != true || exclusions.excludes(subtree, roots: roots) {
            if (try? database.read({ try $0.snapshot(of: subtree) })) != nil { removeDirectory(subtree) }
            forgetUnreadable(below: subtree)
            return
        }
        forgetUnreadable(below: subtree)
        walkTree(subtree, on: containing.last.flatMap { trees.probedMount(of: $0) })
    }

    /// Walks the directories at and below `top`, which lies on the mount `mount` (the one its
    /// tree was checked on): each directory is listed only if it is still on its tree's mount.
    private mutating func walkTree(_ top: PathBytes, on mount: UInt64?) {
        start = top
        var stack: [(PathBytes, UInt64?)] = [(top, mount)]
        while !shouldStop(), let (path, mount) = stack.popLast() {
            visit(path, on: mount, stack: &stack)
        }
    }

    /// Clears the unreadable directories at and below `top` before it is walked again (the walk
    /// records those still unreadable), remembering them so that the log repeats nothing.
    private mutating func forgetUnreadable(below top: PathBytes) {
        let cleared = status.withLock { s -> [PathBytes] in
            let below = s.unreadableDirectories.keys.filter { $0.isWithin(top) }
            for p in below { s.unreadableDirectories[p] = nil }
            if s.unreadableDirectories.isEmpty { s.unreadableDirectoriesOmitted = 0 }
            return below
        }
        previouslyUnreadable.formUnion(cleared)
    }

    private mutating func visit(_ path: PathBytes, on treeMount: UInt64?, stack: inout [(PathBytes, UInt64?)]) {
        if let treeMount, lostMounts.contains(treeMount) { return }
        var treeMount = treeMount
        if path != start, trees.isTree(path) {
            // A mount point below the walk's start: its own file system must be there.
            if trees.checkAndMark(path) != nil { return }
            treeMount = trees.probedMount(of: path)
        }
        let dir: Directory
        let dirStat: FileStat
        let entries: [DirectoryEntry]
        // The lister's stats of the entries, when its listing is of this directory as it is now.
        var listedStats: [FileStat?]?
        do {
            dir = try Directory(path: path)
            dirStat = try dir.stat()
            if let listing = lister?.take(path, sharing: stack.last?.0), listing.matches(dirStat) {
                entries = listing.entries
                listedStats = listing.stats
            } else {
                lister?.passed(path)
                entries = try dir.entries().sorted { Self.precedes($0.name, $1.name) }
            }
        } catch {
            // Vanished while walking: removed through its parent's listing next time (or found
            // again under another name by `findAgain`).
            if error.errno != ENOENT, error.errno != ENOTDIR { reportUnreadable(path, error) }
            return
        }
        if let expected = treeMount, let now = mountID(of: dir.descriptor), now != expected,
           !continueOnOtherMount(path, expected: expected, now: now, treeMount: &treeMount) {
            return
        }
        if !previouslyUnreadable.isEmpty, previouslyUnreadable.contains(path) {
            logger.notice("directory '\(path)' can be read again", [("path", path.string)])
        }
        let fsid: UInt64
        if let known = fileSystems[dirStat.device] {
            fsid = known
        } else {
            fsid = (try? dir.fileSystem().fsid) ?? dirStat.device
            fileSystems[dirStat.device] = fsid
        }

        let snapshot: DirectorySnapshot?
        do {
            snapshot = try indexed(path, fsid: fsid, inode: dirStat.inode, dir: dir, entries: entries)
        } catch {
            logger.error("cannot read the index for '\(path)': \(error)", [("path", path.string)])
            return
        }
        if snapshot == nil, lookForMoves { comparedAsNew.insert(dirStat.inode) }

        // Dot-names and what the exclusions name are not part of the library: as if not there.
        let names = exclusions.isEmpty ? [] : PathExclusions.names(of: path, roots: roots) ?? []
        let leftOut = { [exclusions] (name: [UInt8]) -> Bool in Self.isHidden(name) || exclusions.excludes(name, in: names) }
        let recordVisit: Bool
        switch Reconciliation.directory(indexed: snapshot, fsid: fsid, inode: dirStat.inode,
                                        mtimeNanoseconds: dirStat.mtimeNanoseconds,
                                        hasVisibleEntries: entries.contains { !leftOut($0.name) },
                                        hasNoMedia: entries.contains { $0.name == Self.noMedia }) {
        case .unavailable:
            trees.markUnavailable(path, reason: "the directory is empty and on another file system than when indexed "
                                      + "(an unmounted disk?)")
            return
        case .exclude(let forget):
            if forget { removeDirectory(path) }
            return
        case .compare(let changed):
            recordVisit = changed
        }

        // Both lists are in byte order (the entries sorted above, the index's by `ORDER BY name`):
        // one merge pass pairs each file with what the index knows of it, without hashing names.
        let known = snapshot?.files ?? []
        var k = 0
        // How many entries share each group key (base name): a file alone in its group, and new,
        // can be written without looking for partners.
        var groupSizes: [PathBytes: Int] = [:]  // PathBytes: hashed in one call
        for entry in entries where !leftOut(entry.name) {
            groupSizes[PathBytes(ResourcePairing.groupKey(of: entry.name)), default: 0] += 1
        }
        let scan = Reconciliation.Scan(readEverything: readingEverything,
                                       adopting: !adopting.isEmpty && adopting.contains { path.isWithin($0) },
                                       lookForMoves: lookForMoves, deferNewFiles: deferNewFiles,
                                       recentCutoff: recentCutoff)
        let facts = DirectoryFacts(path: path, descriptor: dir.descriptor, database: database, groupSizes: groupSizes)
        var seenDirectories = Set<PathBytes>()
        var subdirectories: [PathBytes] = []
        var moves = WriteBatch()

        for (i, entry) in entries.enumerated() where !leftOut(entry.name) {
            var kind = entry.kind
            var stat: FileStat?
            if kind == .file || kind == .unknown {
                stat = listedStats?[i] ?? (try? FileStat.at(dir.descriptor, entry.name))
                guard let s = stat else { continue }  // vanished since readdir
                kind = s.isRegularFile ? .file : (s.isDirectory ? .directory : .other)
            }
            switch kind {
            case .directory:
                seenDirectories.insert(PathBytes(entry.name))
                subdirectories.append(path.appending(entry.name))
            case .file:
                guard let s = stat else { continue }
                filesSeen += 1
                // Indexed files that sort before this one are gone from the disk.
                while k < known.count, Self.precedes(known[k].name, entry.name) {
                    carryOut(Reconciliation.vanished(.file), name: known[k].name, in: path)
                    k += 1
                }
                var indexed: IndexedFile?
                if k < known.count, known[k].name == entry.name {
                    indexed = known[k]
                    k += 1
                }
                let identity = FileIdentity(fsid: fsid, inode: s.inode, size: s.size, mtimeNanoseconds: s.mtimeNanoseconds)
                let decision = Reconciliation.file(entry.name, identity, indexed: indexed, scan: scan, facts: facts)
                carryOut(decision, name: entry.name, identity: identity, in: path, moves: &moves)
            default:
                continue  // symbolic links are not followed; devices, sockets and FIFOs are not media
            }
        }
        while k < known.count {
            carryOut(Reconciliation.vanished(.file), name: known[k].name, in: path)
            k += 1
        }
        findTrashed(entries, stats: listedStats, in: path, dir: dir, fsid: fsid)
        if moves.hasMoves {
            // After this directory's reads, in order; never merged with other jobs.
            flush()
            emit(Job(sequence: sequence, candidates: [], batch: moves))
            sequence += 1
            pending.sequence = sequence
        }
        for d in snapshot?.subdirectories ?? [] where !seenDirectories.contains(PathBytes(d)) {
            let gone = path.appending(d)
            carryOut(Reconciliation.vanished(.directory(isRecordedMount: trees.isRecorded(gone))), name: d, in: path)
        }
        if recordVisit {
            pending.batch.directories.append(DirectoryVisit(path: path, fsid: fsid, inode: dirStat.inode,
                                                            mtimeNanoseconds: dirStat.mtimeNanoseconds))
            pendingExtras += 1
        }
        if pendingExtras >= Self.extrasPerJob { flush() }

        trees.markAvailable(path)  // it was walked: it is there
        status.withLock {
            $0.current?.files = filesSeen
            $0.current?.toRead = candidates
            $0.current?.directories += 1
        }
        stack.append(contentsOf: subdirectories.reversed().map { ($0, treeMount) })
    }

    /// A directory that cannot be listed (permissions, a path past PATH_MAX): the index keeps
    /// what it has, and the status says so; the log says it once, not at every scan or poll.
    private func reportUnreadable(_ path: PathBytes, _ error: SystemError) {
        let reason = error.errno == ENAMETOOLONG
            ? "\(error.message): the path is longer than PATH_MAX (\(PATH_MAX) bytes); nothing below it is indexed"
            : error.message
        let known = status.withLock { s -> Bool in
            let known = s.unreadableDirectories[path] != nil
            if known || s.unreadableDirectories.count < IndexerStatus.maxUnreadableDirectories {
                s.unreadableDirectories[path] = reason
            } else {
                s.unreadableDirectoriesOmitted += 1
            }
            return known
        }
        if known || previouslyUnreadable.contains(path) {
            logger.debug("directory '\(path)' is still unreadable: \(reason)", [("path", path.string)])
        } else {
            logger.warning("cannot read directory '\(path)', skipping it: \(reason)", [("path", path.string)])
        }
    }

    /// What the index has of the directory at `path`. When it has nothing there and the
    /// directory was indexed elsewhere (moved while photod was down), its rows are moved here
    /// first (ids, user state and album id follow) and the move committed: then it compares as
    /// usual.
    private mutating func indexed(_ path: PathBytes, fsid: UInt64, inode: UInt64, dir: Directory,
                                  entries: [DirectoryEntry]) throws -> DirectorySnapshot? {
        if let snapshot = try database.read({ try $0.snapshot(of: path) }) { return snapshot }
        guard lookForMoves, let origin = try movedDirectoryOrigin(fsid: fsid, inode: inode),
              try isSameDirectory(indexedAt: origin, as: dir, entries: entries) else { return nil }
        moveDirectory(DirectoryMove(from: origin, to: path), "directory moved while photod was down")
        return try database.read { try $0.snapshot(of: path) }
    }

    /// Moves a directory's rows to where the walk found it, after what is pending, and waits
    /// for the commit (the walk then compares it as usual).
    private mutating func moveDirectory(_ move: DirectoryMove, _ what: String) {
        var batch = WriteBatch()
        batch.movedDirectories = [move]
        flush()
        emitAndWait(batch)
        trees.directoriesMoved([move])
        movedDirectories += 1
        movedFrom.insert(move.from)
        logger.info("\(what): '\(move.from)' -> '\(move.to)'", [("path", move.to.string)])
    }

    /// A directory listed on another mount than its tree's: a disk mounted there since the
    /// table was read (a tree of its own: checked like one), or its tree went away during the
    /// walk (unmounted: what was listed is the directory beneath, so nothing more of the tree is
    /// compared). Returns whether to go on with the directory.
    private mutating func continueOnOtherMount(_ path: PathBytes, expected: UInt64, now: UInt64,
                                               treeMount: inout UInt64?) -> Bool {
        trees.refreshTable()
        if path != start, trees.isTree(path) {
            if trees.checkAndMark(path) != nil { return false }
            treeMount = now
            return true
        }
        let tree = trees.trees(containing: path, roots: roots).last ?? path
        if trees.checkAndMark(tree) != nil {
            lostMounts.insert(expected)
            return false
        }
        // Mounted again (another mount id, the same file system): go on with the new one.
        treeMount = trees.probedMount(of: tree)
        if treeMount != now { return false }  // still not the directory's: leave it to the next scan
        return true
    }

    /// Carries out the table's answer for a file on disk: moves and restores go to `moves`
    /// (emitted after the directory's reads), reads to the pending job or, new, to those held
    /// back until the removals are committed (bounded: beyond it they are read at once, and a
    /// copy among them gets a new id).
    private mutating func carryOut(_ decision: Reconciliation.FileDecision, name: [UInt8], identity: FileIdentity,
                                   in directory: PathBytes, moves: inout WriteBatch) {
        if decision.removesIndexedRow { removeFile(directory, name) }
        switch decision.action {
        case .skip:
            return
        case .move(let origin):
            moves.movedFiles.append(FileMove(from: origin, to: directory.appending(name), identity: identity))
            movedFiles += 1
            movedFrom.insert(origin)
        case .restore(let tombstone):
            moves.restoredFiles.append(FileRestore(path: directory.appending(name), identity: identity,
                                                   tombstone: tombstone))
            restoredFiles += 1
        case .busy:
            // Its close brings it to the watcher, complete, and it is read once then (or by the
            // next poll or scan).
            busyFiles += 1
        case .read(let isNew, let isSoleNewMember, let afterRemovals):
            candidates += 1
            let candidate = Candidate(directory: directory, name: name, identity: identity,
                                      isSoleNewMember: isSoleNewMember, isNew: isNew)
            if afterRemovals, deferredCandidates.count < Self.maxDeferredCandidates {
                deferredCandidates.append(candidate)
            } else {
                pending.candidates.append(candidate)
                if pending.candidates.count >= Indexer.chunkSize { flush() }
            }
        }
    }

    /// Files under a trashed name (`assets.trash`'s, `TrashName`) that no tombstone records are
    /// read once the walk's removals are committed: the writer then finds the asset in Recently
    /// Deleted they belong to, or makes one (`IndexWriter.adoptTrashed`), so that the trash
    /// outlives a stop between a rename and its commit, and a lost database.
    private mutating func findTrashed(_ entries: [DirectoryEntry], stats: [FileStat?]?, in path: PathBytes, dir: Directory,
                                      fsid: UInt64) {
        let trashed = entries.indices.filter { Self.isHidden(entries[$0].name) && TrashName.parse(entries[$0].name) != nil }
        guard !trashed.isEmpty else { return }
        let recorded = (try? database.read { try $0.trashedNames(in: path) }) ?? []
        for i in trashed where !recorded.contains(entries[i].name) {
            guard let s = stats?[i] ?? (try? FileStat.at(dir.descriptor, entries[i].name)), s.isRegularFile else { continue }
            candidates += 1
            let identity = FileIdentity(fsid: fsid, inode: s.inode, size: s.size, mtimeNanoseconds: s.mtimeNanoseconds)
            let candidate = Candidate(directory: path, name: entries[i].name, identity: identity, isSoleNewMember: false, isNew: true)
            if deferredCandidates.count < Self.maxDeferredCandidates {
                deferredCandidates.append(candidate)
            } else {
                pending.candidates.append(candidate)  // more than the walk holds: the next scan finds the rest recorded
            }
        }
    }

    /// Carries out the table's answer for what the index has under a name the listing lacks.
    private mutating func carryOut(_ action: Reconciliation.VanishedAction, name: [UInt8], in directory: PathBytes) {
        switch action {
        case .removeFile:
            removeFile(directory, name)
        case .removeDirectory:
            removeDirectory(directory.appending(name))
            missingDirectories.append(directory.appending(name))
        case .checkMount:
            trees.checkAndMark(directory.appending(name))
        }
    }

    private mutating func removeFile(_ directory: PathBytes, _ name: [UInt8]) {
        deferredFiles.append((directory, name))
        removedFiles += 1
    }

    /// Whether a file the index holds unchanged is to be read again all the same: it was refused
    /// for want of permission, and may be read now (a `chmod` changes no size or mtime). A file
    /// still refused costs one `faccessat` per scan, no read, no write, no log line.
    static func mayReadAgain(_ known: IndexedFile, in dir: FileDescriptor, name: [UInt8]? = nil) -> Bool {
        Reconciliation.isRefusedForPermission(known) && FileStat.isReadable(dir, name ?? known.name)
    }

    /// Whether the file `known.name` in `directory` has the content the index has for it (its
    /// fingerprint), though not its identity: the same photo on another disk keeps its row. When
    /// either cannot be looked at (the database or the file fails to read), the row is kept: the
    /// file's own read then decides, and a read that fails writes nothing.
    static func sameContent(_ known: IndexedFile, at directory: PathBytes, in descriptor: FileDescriptor, size: Int64,
                            database: Database) -> Bool {
        let contents: [IndexedContent]
        do {
            contents = try database.read { try $0.contents(files: [directory.appending(known.name)], directories: []) }
        } catch {
            return true
        }
        guard let indexed = contents.first?.key, indexed.size == size else { return false }
        guard let fingerprint = MediaFileReader.fingerprint(of: known.name, in: descriptor, size: size) else { return true }
        return fingerprint == indexed.fingerprint
    }

    /// Byte order of names (what SQLite's BLOB comparison and the sorted listing use).
    @inline(__always)
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                let n = min(pa.count, pb.count)
                let c = n == 0 ? 0 : memcmp(pa.baseAddress!, pb.baseAddress!, n)
                return c != 0 ? c < 0 : pa.count < pb.count
            }
        }
    }

    private mutating func removeDirectory(_ path: PathBytes) {
        deferredDirectories.append(path)
        removedDirectories += 1
    }

    /// Emits what is pending, then the removals the walk deferred (a file or directory moved
    /// elsewhere was moved by then, so its removal finds nothing), then the new files held back
    /// (a copy of a removed file is then recognised by its content and keeps the asset's id).
    mutating func finish() {
        flush()
        findAgain()
        // A name missing where the walk found it moved from was counted as a removal when the
        // walk saw it gone: it is a move, counted once as one.
        let files = deferredFiles.count, directories = deferredDirectories.count
        deferredFiles.removeAll { movedFrom.contains($0.directory.appending($0.name)) }
        deferredDirectories.removeAll { movedFrom.contains($0) }
        removedFiles -= files - deferredFiles.count
        removedDirectories -= directories - deferredDirectories.count
        movedFrom = []
        let spared = trees.sparingTrees(deferredDirectories)
        deferredDirectories = spared.directories
        deferredFiles += spared.files
        for chunk in stride(from: 0, to: deferredDirectories.count, by: Self.extrasPerJob) {
            pending.batch.removedDirectories = Array(deferredDirectories[chunk..<min(chunk + Self.extrasPerJob, deferredDirectories.count)])
            flush()
        }
        for chunk in stride(from: 0, to: deferredFiles.count, by: Self.extrasPerJob) {
            pending.batch.removedFiles = Array(deferredFiles[chunk..<min(chunk + Self.extrasPerJob, deferredFiles.count)])
            flush()
        }
        deferredFiles = []
        deferredDirectories = []
        for candidate in deferredCandidates {
            pending.candidates.append(candidate)
            if pending.candidates.count >= Indexer.chunkSize { flush() }
        }
        deferredCandidates = []
        flush()
    }

    /// Looks once more for the directories the walk is about to remove: one renamed back and
    /// forth while the walk went by (its parent listed under one name, then the directory gone
    /// from that name, or back under the old one, when its turn came) is still in its parent,
    /// under its own name or another. It is walked where it is now — moved there first if its
    /// name changed — instead of being removed, so its assets keep their ids: a removal would
    /// make them tombstones, and a copy of one of its files read meanwhile could take an asset by
    /// its content before the file itself came back. One listing per parent; nothing when the
    /// walk removes no directory.
    private mutating func findAgain() {
        let missing = missingDirectories.filter { !movedFrom.contains($0) }
        missingDirectories = []
        guard lookForMoves, !missing.isEmpty else { return }
        var listings: [PathBytes: [UInt64: PathBytes]] = [:]
        for path in missing {
            guard !shouldStop(), !trees.isTree(path),
                  let indexed = try? database.read({ try $0.snapshot(of: path) }), let inode = indexed.inode,
                  !comparedAsNew.contains(inode) else { continue }
            if listings[path.parent] == nil { listings[path.parent] = Self.subdirectories(of: path.parent) }
            // Not one the walk leaves out (an exclusion: it is as if not there).
            guard let now = listings[path.parent]?[inode], !exclusions.excludes(now, roots: roots) else { continue }
            if now != path {
                // Under another name the index does not hold, with something indexed still in it
                // (not a new folder given the freed inode): the rename, carried out.
                guard (try? database.read({ try $0.snapshot(of: now) })) == nil,
                      let dir = try? Directory(path: now), let entries = try? dir.entries(),
                      (try? isSameDirectory(indexedAt: path, as: dir, entries: entries)) == true else { continue }
                moveDirectory(DirectoryMove(from: path, to: now), "directory renamed while the walk went by")
            }
            movedFrom.insert(path)
            walkTree(now, on: trees.trees(containing: now, roots: roots).last.flatMap { trees.probedMount(of: $0) })
        }
    }

    /// The directories in `parent` now, by inode.
    static func subdirectories(of parent: PathBytes) -> [UInt64: PathBytes] {
        guard let dir = try? Directory(path: parent), let entries = try? dir.entries() else { return [:] }
        var found: [UInt64: PathBytes] = [:]
        for entry in entries where (entry.kind == .directory || entry.kind == .unknown) && !isHidden(entry.name) {
            if let s = try? FileStat.at(dir.descriptor, entry.name), s.isDirectory { found[s.inode] = parent.appending(entry.name) }
        }
        return found
    }

    /// Emits a job and waits until its transaction has run.
    private mutating func emitAndWait(_ batch: WriteBatch) {
        let done = DispatchSemaphore(value: 0)
        emit(Job(sequence: sequence, candidates: [], batch: batch, committed: done))
        sequence += 1
        pending.sequence = sequence
        done.wait()
    }

    /// Where a directory with this identity was indexed, when that place no longer holds it.
    private func movedDirectoryOrigin(fsid: UInt64, inode: UInt64) throws -> PathBytes? {
        let candidates = try database.read { try $0.directories(fsid: fsid, inode: inode) }
        return candidates.first { !Self.exists($0, inode: inode) }
    }

    /// Whether the directory at hand is the one indexed at `origin`, moved, rather than a new
    /// one that got its inode after that one was deleted (ext4 and XFS hand a freed inode to
    /// the next `mkdir`, and a freed file inode to the next file): something indexed in it must
    /// still be in it, under any name — a file with the same inode, size and mtime, or a
    /// subdirectory with the same inode (so files renamed in the moved folder still count). An
    /// origin indexed empty matches only a directory with nothing in it either. Files of a
    /// directory that fails the test still keep their assets one by one (`DirectoryFacts.movedFrom`
    /// and the tombstones); only the folder album is new.
    private func isSameDirectory(indexedAt origin: PathBytes, as dir: Directory, entries: [DirectoryEntry]) throws -> Bool {
        guard let old = try database.read({ try $0.snapshot(of: origin) }) else { return false }
        let visible = entries.filter { !Self.isHidden($0.name) }
        if old.files.isEmpty && old.subdirectories.isEmpty { return visible.isEmpty }
        struct Key: Hashable { var inode: UInt64, size: Int64, mtime: Int64 }
        let files = Set(old.files.map { Key(inode: $0.identity.inode, size: $0.identity.size, mtime: $0.identity.mtimeNanoseconds) })
        let subdirectories = old.subdirectories.isEmpty ? [] : try database.read { try $0.subdirectoryInodes(parent: old.id) }
        for entry in visible {
            guard let s = try? FileStat.at(dir.descriptor, entry.name) else { continue }
            if s.isRegularFile, files.contains(Key(inode: s.inode, size: s.size, mtime: s.mtimeNanoseconds)) { return true }
            if s.isDirectory, subdirectories.contains(s.inode) { return true }
        }
        return false
    }

    /// Whether `path` still names the file or directory `inode`.
    static func exists(_ path: PathBytes, inode: UInt64) -> Bool {
        guard let st = try? FileStat.of(path) else { return false }
        return st.inode == inode
    }

    /// Emits the pending job, if it holds anything.
    mutating func flush() {
        guard !pending.candidates.isEmpty || !pending.batch.isEmpty else { return }
        precondition(pending.committed == nil)
        pending.sequence = sequence
        emit(pending)
        sequence += 1
        pending = Job(sequence: sequence, candidates: [], batch: WriteBatch())
        pendingExtras = 0
    }

    static let noMedia: [UInt8] = Array(".nomedia".utf8)

    /// Dot-files and dot-directories are not walked.
    @inline(__always)
    static func isHidden(_ name: [UInt8]) -> Bool { name.first == UInt8(ascii: ".") }
}

/// The reconciliation table's questions about the files of one directory, answered from the
/// disk and the index (each only when the table asks: an unchanged file costs none of them).
private struct DirectoryFacts: Reconciliation.Facts {
    let path: PathBytes
    let descriptor: FileDescriptor
    let database: Database
    let groupSizes: [PathBytes: Int]

    func isReadable(_ name: [UInt8]) -> Bool { FileStat.isReadable(descriptor, name) }

    func hasIndexedContent(_ row: IndexedFile, size: Int64) -> Bool {
        Walk.sameContent(row, at: path, in: descriptor, size: size, database: database)
    }

    /// A hard link keeps both names: not a move.
    func movedFrom(_ identity: FileIdentity, to name: [UInt8]) -> PathBytes? {
        let here = path.appending(name)
        let candidates = (try? database.read { try $0.files(identity: identity) }) ?? []
        return candidates.first { $0 != here && !Walk.exists($0, inode: identity.inode) }
    }

    func tombstone(_ identity: FileIdentity) -> Int64? {
        (try? database.read { try $0.tombstone(identity: identity) }) ?? nil
    }

    func isOpenForWriting(_ name: [UInt8]) -> Bool { FileStat.isOpenForWriting(descriptor, name) == true }

    func isAloneInGroup(_ name: [UInt8]) -> Bool { groupSizes[PathBytes(ResourcePairing.groupKey(of: name))] == 1 }
}
