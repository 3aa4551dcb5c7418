import PhotoModel
import PhotoStore

/// What the live path knows of the disk and the index, asked as questions (each only when a
/// decision needs it): `LiveChanges` is pure, and this is its one door to the world. `DiskFacts`
/// answers from the disk and the index; tests answer from tables.
protocol LiveFacts {
    /// What `lstat` says of `path` now (links are not followed); nil when it is gone.
    func stat(_ path: PathBytes) -> LiveChanges.Entry?
    /// The index's row under `path`, and whether no file of its group (base name) is indexed
    /// in its directory.
    func indexed(_ path: PathBytes) -> (row: IndexedFile?, groupIsEmpty: Bool)
    /// Whether the file may be opened for reading now (`faccessat`).
    func isReadable(_ path: PathBytes) -> Bool
    /// Where a file with this identity was indexed, when that place no longer holds it.
    func movedFrom(_ identity: FileIdentity, to path: PathBytes) -> PathBytes?
    /// The Recently Deleted asset whose file had this identity.
    func tombstone(_ identity: FileIdentity) -> Int64?
    /// What the index has of the content of these files and of the files below these
    /// directories, with the identity each had.
    func contents(files: [PathBytes], directories: [PathBytes]) -> [IndexedContent]
}

/// The live path's decisions: one step of watcher changes (`ChangePlan.Step`) plus what the disk
/// and the index say → a write batch and the files to read. Each file reported added or modified
/// is decided by the walk's own table (`Reconciliation.file`), as a scan that looks for moves
/// decides it: unchanged → nothing, indexed elsewhere and gone from there → moved, the file of an
/// asset in Recently Deleted → restored, else read. Pure: the disk and the index are questions to
/// `LiveFacts`, and time is an input (`at:`), so it is tested with tables and synthetic time.
///
/// It remembers, across steps: the files submitted and not yet committed (a second report of
/// one meanwhile is not read again), the new files read lately by content (a removal of a file
/// with the same content soon after is the second half of a move across file systems, which
/// copies, then deletes), and the files reported that were gone when looked at (a directory
/// rename reported later brings them back under their new path).
struct LiveChanges: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// A directory entry as `lstat` saw it.
    struct Entry: Sendable, Hashable {
        enum Kind: Sendable, Hashable { case file, directory, other }
        var kind: Kind
        var identity: FileIdentity
    }

    /// What one step writes and reads.
    struct Writes: Sendable {
        /// Removals, moves, restores and copies, in the writer's order.
        var batch = WriteBatch()
        /// Files to read, then write (in chunks of `Indexer.chunkSize`).
        var reads: [Candidate] = []
        /// Trees to scan after the step (directories reported as files, moved in as files).
        var scans: [PathBytes] = []
    }

    /// A new file read lately, by content.
    struct RecentFile: Sendable, Hashable {
        var path: PathBytes
        var identity: FileIdentity
        var at: Instant
    }

    private(set) var inFlight: [PathBytes: FileIdentity] = [:]
    /// The last few of each content (a folder's photo copied elsewhere while the folder moves:
    /// the removal picks the one that is the file itself).
    private(set) var recentNew: [ContentKey: [RecentFile]] = [:]
    private(set) var unresolved: [PathBytes: Instant] = [:]

    /// How long, and how many, files gone when looked at are remembered.
    static let unresolvedWindow: Duration = .seconds(60)
    static let unresolvedMemory = 10_000
    /// How long, and how many, new files are remembered by content.
    static let copyWindow: Duration = .seconds(600)
    static let copyMemory = 100_000
    static let copiesPerContent = 4

    /// How the live path compares a file with the index: as a scan that looks for moves, reads
    /// new files at once, and never finds a writer (the watcher reports a file once it is closed).
    static let scan = Reconciliation.Scan(lookForMoves: true)

    // MARK: - Deciding

    /// The writes of one step. `spared`: the step's directory removals with the trees below them
    /// kept (`Trees.sparingTrees`).
    mutating func decide(_ step: ChangePlan.Step, spared: (directories: [PathBytes], files: [(PathBytes, [UInt8])]),
                         facts: some LiveFacts, at now: Instant) -> Writes {
        var writes = Writes()
        writes.batch.removedDirectories = spared.directories
        // A file reported removed that is there again (renamed away and back, as a trash and its
        // restore do, or deleted and written anew) is compared as a file found, not removed.
        var backAgain: [PathBytes] = []
        for path in step.removedFiles {
            if let entry = facts.stat(path), entry.kind == .file {
                backAgain.append(path)
            } else {
                writes.batch.removedFiles.append((path.parent, path.lastComponent))
            }
        }
        writes.batch.removedFiles += spared.files
        writes.batch.movedDirectories = step.movedDirectories.map { DirectoryMove(from: $0.from, to: $0.to) }
        for (from, to) in step.movedFiles {
            switch facts.stat(to) {
            case let entry? where entry.kind == .file:
                writes.batch.movedFiles.append(FileMove(from: from, to: to, identity: entry.identity))
            case let entry?:
                writes.batch.removedFiles.append((from.parent, from.lastComponent))
                if entry.kind == .directory { writes.scans.append(to) }
            case nil:
                writes.batch.removedFiles.append((from.parent, from.lastComponent))  // gone again
            }
        }
        writes.batch.copiesOfRemoved = copies(ofRemoved: step, facts: facts, at: now)
        let reads = step.reads + retryUnresolved(step)
        let alsoRead = Set(reads)
        decide(reads: reads + backAgain.filter { !alsoRead.contains($0) }, into: &writes, facts: facts, at: now)
        return writes
    }

    /// Decides files reported added or modified (or left unresolved by the writer: a move whose
    /// source it did not know) into `writes`.
    mutating func decide(reads paths: [PathBytes], into writes: inout Writes, facts: some LiveFacts, at now: Instant) {
        // A group (directory, base name) that has a read in this step is not empty for the next
        // file of it: the writer's fast path is for a file alone in its group.
        var groupsRead = Set<GroupKey>()
        for path in paths {
            guard let entry = facts.stat(path) else {
                // Gone already: its removal or rename follows (a rename of a directory above it
                // brings it back under its new path, see `retryUnresolved`).
                noteUnresolved(path, at: now)
                continue
            }
            switch entry.kind {
            case .directory:
                writes.scans.append(path)
                continue
            case .other:
                continue  // links are not followed; devices are not media
            case .file:
                break
            }
            if inFlight[path] == entry.identity { continue }
            let group = GroupKey(directory: path.parent, key: ResourcePairing.groupKey(of: path.lastComponent))
            let (row, groupIsEmpty) = facts.indexed(path)
            let questions = Questions(directory: path.parent, facts: facts,
                                      isAlone: groupIsEmpty && !groupsRead.contains(group))
            let decision = Reconciliation.file(path.lastComponent, entry.identity, indexed: row, scan: Self.scan, facts: questions)
            switch decision.action {
            case .skip, .busy:
                continue
            case .move(let origin):
                writes.batch.movedFiles.append(FileMove(from: origin, to: path, identity: entry.identity))
            case .restore(let tombstone):
                writes.batch.restoredFiles.append(FileRestore(path: path, identity: entry.identity, tombstone: tombstone))
            case .read(let isNew, let isSoleNewMember, _):
                groupsRead.insert(group)
                writes.reads.append(Candidate(directory: path.parent, name: path.lastComponent, identity: entry.identity,
                                              isSoleNewMember: isSoleNewMember, isNew: isNew))
            }
        }
    }

    // MARK: - What happened to the reads

    /// The candidates are on their way to the writer: a second report of one, unchanged, is
    /// not read again until they are committed.
    mutating func submitted(_ candidates: [Candidate]) {
        for c in candidates { inFlight[c.path] = c.identity }
    }

    /// The candidates' transaction has run.
    mutating func committed(_ candidates: [Candidate]) {
        for c in candidates where inFlight[c.path] == c.identity { inFlight[c.path] = nil }
    }

    /// What the reader made of `candidates`: new media files are remembered by content (for
    /// `copies(ofRemoved:)`); a file gone between the stat and the read is like one gone at the
    /// stat.
    mutating func read(_ outcomes: [FileOutcome], of candidates: [Candidate], at now: Instant) {
        let newFiles = Set(candidates.filter(\.isNew).map(\.path))
        remember(outcomes.filter { newFiles.contains($0.path) }, at: now)
        for outcome in outcomes { if case .vanished = outcome.kind { noteUnresolved(outcome.path, at: now) } }
    }

    /// Remembers new media files by content (also those a scan found: a folder copied in whole).
    mutating func remember(_ outcomes: [FileOutcome], at now: Instant) {
        if recentNew.count + outcomes.count > Self.copyMemory {
            recentNew = recentNew.compactMapValues { files in
                let kept = files.filter { now - $0.at < Self.copyWindow }
                return kept.isEmpty ? nil : kept
            }
            if recentNew.count + outcomes.count > Self.copyMemory { recentNew = [:] }
        }
        for outcome in outcomes {
            guard case .media = outcome.kind, let fingerprint = outcome.fingerprint else { continue }
            let key = ContentKey(size: outcome.identity.size, fingerprint: fingerprint)
            var files = (recentNew[key] ?? []).filter { $0.path != outcome.path }
            files.append(RecentFile(path: outcome.path, identity: outcome.identity, at: now))
            recentNew[key] = files.suffix(Self.copiesPerContent)
        }
    }

    // MARK: - Memory

    /// A file reported added or modified that was gone when looked at: remembered for a while.
    private mutating func noteUnresolved(_ path: PathBytes, at now: Instant) {
        if unresolved.count >= Self.unresolvedMemory {
            unresolved = unresolved.filter { now - $0.value < Self.unresolvedWindow }
            if unresolved.count >= Self.unresolvedMemory { unresolved = [:] }
        }
        unresolved[path] = now
    }

    /// Forgets unresolved reads that a step removes, and returns those below a directory the
    /// step moves, under their new paths (to be read).
    private mutating func retryUnresolved(_ step: ChangePlan.Step) -> [PathBytes] {
        guard !unresolved.isEmpty else { return [] }
        for p in step.removedFiles { unresolved[p] = nil }
        for (from, _) in step.movedFiles { unresolved[from] = nil }
        for d in step.removedDirectories { unresolved = unresolved.filter { !$0.key.isWithin(d) } }
        var retries: [PathBytes] = []
        for (from, to) in step.movedDirectories {
            for (p, _) in unresolved where p.isWithin(from) {
                unresolved[p] = nil
                retries.append(PathBytes(to.bytes + p.bytes.dropFirst(from.bytes.count)))
            }
        }
        return retries.sorted()
    }

    /// Files read lately as new whose content is that of files the step removes: `mv` between
    /// file systems (two roots on two disks) copies, then deletes; the copy keeps the asset.
    /// Of several new files with that content, the one that is the removed file itself (its
    /// inode: a rename seen as a new file, the folder moved again before it was looked at), else
    /// one with its modification time (`mv` and `cp -p` keep it), else the newest.
    private mutating func copies(ofRemoved step: ChangePlan.Step, facts: some LiveFacts, at now: Instant) -> [PathBytes] {
        guard !step.removedFiles.isEmpty || !step.removedDirectories.isEmpty, !recentNew.isEmpty else { return [] }
        var copies: [PathBytes] = []
        for removed in facts.contents(files: step.removedFiles, directories: step.removedDirectories) {
            guard let recent = recentNew[removed.key]?.filter({ now - $0.at < Self.copyWindow }), !recent.isEmpty else { continue }
            let was = removed.identity
            let pick = recent.lastIndex { $0.identity.fsid == was.fsid && $0.identity.inode == was.inode }
                ?? recent.lastIndex { $0.identity.mtimeNanoseconds == was.mtimeNanoseconds }
                ?? recent.count - 1
            copies.append(recent[pick].path)
            var rest = recent
            rest.remove(at: pick)
            recentNew[removed.key] = rest.isEmpty ? nil : rest
        }
        return copies
    }

    /// A group of files: a directory and a base name.
    private struct GroupKey: Hashable {
        var directory: PathBytes
        var key: [UInt8]
    }

    /// The reconciliation table's questions about a file of one directory, put to `LiveFacts`.
    private struct Questions<Facts: LiveFacts>: Reconciliation.Facts {
        let directory: PathBytes
        let facts: Facts
        /// No file of the group is indexed, and none was read before in this step.
        let isAlone: Bool

        func isReadable(_ name: [UInt8]) -> Bool { facts.isReadable(directory.appending(name)) }
        func hasIndexedContent(_ row: IndexedFile, size: Int64) -> Bool { false }  // asked only of adopted trees
        func movedFrom(_ identity: FileIdentity, to name: [UInt8]) -> PathBytes? {
            facts.movedFrom(identity, to: directory.appending(name))
        }
        func tombstone(_ identity: FileIdentity) -> Int64? { facts.tombstone(identity) }
        func isOpenForWriting(_ name: [UInt8]) -> Bool { false }  // asked only of files modified after `recentCutoff`
        func isAloneInGroup(_ name: [UInt8]) -> Bool { isAlone }
    }
}
