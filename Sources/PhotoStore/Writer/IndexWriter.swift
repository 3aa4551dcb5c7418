import PhotoModel

/// The writer side of the index: the only code that changes it, owned by `Database`'s writer
/// lock. Every write is one transaction (a `WriteJob`) carried out by parts that each own some
/// tables — `Directories`, `FileRows`, `AssetRows` (with the pure `AssetComposer`),
/// `CollectionRows`, `JournalRows`, and the user-state methods — in the order `apply` writes
/// down once.
public final class IndexWriter {
    let db: Connection
    let directories: Directories
    let assets: AssetRows
    let files: FileRows
    let collections: CollectionRows
    let journal: JournalRows
    let places: PlaceRows
    /// How long assets stay in Recently Deleted (`adoptTrashed`).
    let retentionMilliseconds: Int64

    init(_ db: Connection, places lookup: (any PlaceLookup)?, retentionMilliseconds: Int64 = 30 * 86_400_000) {
        self.db = db
        self.retentionMilliseconds = retentionMilliseconds
        directories = Directories(db)
        places = PlaceRows(db, lookup: lookup)
        assets = AssetRows(db, directories: directories, places: places)
        files = FileRows(db, directories: directories, assets: assets)
        collections = CollectionRows(db, directories: directories, places: places)
        journal = JournalRows(db)
    }

    /// The underlying connection, for maintenance and tests.
    public var connection: Connection { db }

    /// Records the library roots (creates rows for new ones). Returns root ids by path.
    @discardableResult
    public func registerRoots(_ paths: [PathBytes]) throws(StoreError) -> [PathBytes: Int64] {
        try directories.register(paths)
    }

    /// Runs `body` as one write transaction and ends it: the job's states after it, its
    /// counters, its collections (moments, folder albums and lists unless `recount` is false,
    /// smart albums always), the collections `body` returns, and the change set in the journal.
    /// A `durable` commit is on disk before it returns (user state: see `Connection.transaction`).
    /// On a rollback the directory caches are dropped (SQLite reuses rolled-back rowids).
    func commit(now: Int64, durable: Bool = false, recount: Bool = true,
                _ body: (WriteJob) throws(StoreError) -> ChangeSet) throws(StoreError) -> ChangeSet {
        do {
            let commitsDurably = durable ? true : try journal.reservationDue()
            return try db.transaction(durable: commitsDurably) { () throws(StoreError) in
                let job = WriteJob(now: now, assets: assets)
                let extra = try body(job)
                try assets.updateBursts(job)
                try job.loadAfterStates()
                try collections.countSmartAlbums(job)
                try journal.apply(counters: job.counterDeltas)
                var changes = ChangeSet()
                job.assetEvents(into: &changes)
                if recount {
                    try collections.update(job, into: &changes)
                } else {
                    try collections.updateSmartAlbums(job, &changes)
                }
                changes.add(collections: extra)
                try collections.updateUserAlbums(job, extra: extra, &changes)
                // A collection made in this job is inserted, not also updated.
                let inserted = Set(changes.collectionsInserted)
                changes.collectionsUpdated.removeAll { inserted.contains($0) }
                changes.report = job.report
                try assets.indexInserted()
                try collections.indexMoments()
                return try journal.record(changes, now: now)
            }
        } catch {
            directories.forget()
            collections.keys.forget()
            places.forget()
            assets.cameras.forget()
            journal.forget()
            throw error
        }
    }

    /// Writes one batch in one transaction and returns its change set (with its token).
    public func apply(_ batch: WriteBatch, now: Int64) throws(StoreError) -> ChangeSet {
        try commit(now: now) { job throws(StoreError) in
            try write(batch, job)
            return ChangeSet()
        }
    }

    /// A batch's rows, in `job`. Files read under a trashed name (`TrashName`: found by a
    /// walk, not recorded) go to Recently Deleted (`adoptTrashed`).
    func write(_ batch: WriteBatch, _ job: WriteJob) throws(StoreError) {
        guard batch.files.contains(where: { TrashName.parse($0.name) != nil }) else { return try writeRows(batch, job) }
        var plain = batch
        plain.files.removeAll { TrashName.parse($0.name) != nil }
        try writeRows(plain, job)
        try adoptTrashed(batch.files.filter { TrashName.parse($0.name) != nil }, job)
    }

    /// A batch's rows, in `job`, in the order below.
    func writeRows(_ batch: WriteBatch, _ job: WriteJob) throws(StoreError) {
        // Removals first, then moves and restores, then writes: `WriteBatch.merged` relies
        // on this order (what a later batch removes or rewrites cancels an earlier write).
        let removing = !batch.removedDirectories.isEmpty || !batch.removedFiles.isEmpty
        let tombstonesBefore = removing ? try files.lastTombstone() : 0
        for path in batch.removedDirectories { try files.removeSubtree(path, job) }
        for (dir, name) in batch.removedFiles { try files.remove(directory: dir, name: name, job) }
        for move in batch.movedDirectories { try files.move(move, job) }
        for move in batch.movedFiles { try files.move(move, job) }
        for restore in batch.restoredFiles { try files.restore(restore, job) }
        for copy in batch.copiesOfRemoved { try files.adoptRemovedOriginal(of: copy, job) }
        if removing { try files.adoptMovedAsNew(tombstonesAfter: tombstonesBefore, job) }
        for dir in batch.directories { try directories.update(dir, job) }
        try files.beginWrites()
        for file in batch.files { try files.write(file, job) }
        // Then the groups whose files changed are recomposed. Groups a file moved into go
        // first, so that a moved primary keeps its asset when the partners it left behind
        // become assets of their own.
        let groups = job.groups.sorted {
            let (a, b) = (job.movedInto.contains($0), job.movedInto.contains($1))
            if a != b { return a }
            return $0.directory != $1.directory ? $0.directory < $1.directory : $0.key.lexicographicallyPrecedes($1.key)
        }
        for group in groups { try assets.recompose(group, job) }
        // Last, assets whose files were removed and which no remaining file took over go to
        // Recently Deleted (their files' tombstones were kept). `job` then reads the states
        // after, and the collections and the journal follow from them.
        for pk in job.orphanCandidates.sorted() { try assets.trashIfOrphan(pk, job) }
    }

    /// Deletes for good the assets that have been in Recently Deleted since before `cutoff`
    /// (and their tombstones), but those in `keeping` (whose trashed files could not be
    /// unlinked): one transaction, one change set (they are `deleted`).
    public func purge(deletedBefore cutoff: Int64, keeping: Set<Int64> = [], now: Int64) throws(StoreError) -> ChangeSet {
        try purge(now: now) { () throws(StoreError) in
            let s = try db.statement("""
                SELECT pk, id FROM assets WHERE deleted_at IS NOT NULL AND deleted_at < :cutoff
                    AND pk NOT IN (SELECT value FROM json_each(:keep))
                """)
            s.bind(":cutoff", to: cutoff)
            s.bind(":keep", to: "[" + keeping.map(String.init).joined(separator: ",") + "]")
            var doomed: [(pk: Int64, id: String)] = []
            while try s.step() { doomed.append((s.int64(0), s.string(1))) }
            return doomed
        }
    }

    /// Deletes for good the assets in Recently Deleted among `pks` (`assets.deletePermanently`,
    /// and the retention purge once their trashed files are unlinked).
    public func purge(_ pks: [Int64], now: Int64) throws(StoreError) -> ChangeSet {
        try purge(now: now) { () throws(StoreError) in
            let s = try db.statement("""
                SELECT pk, id FROM assets WHERE pk IN (SELECT value FROM json_each(:pks)) AND deleted_at IS NOT NULL
                """)
            s.bind(":pks", to: "[" + pks.map(String.init).joined(separator: ",") + "]")
            var doomed: [(pk: Int64, id: String)] = []
            while try s.step() { doomed.append((s.int64(0), s.string(1))) }
            return doomed
        }
    }

    /// The `meta` key set once the repair below has run.
    static let filelessRepairKey = "repair.filelessAssets"

    /// Sends to Recently Deleted the visible assets no file refers to, once in a database's
    /// life (`filelessRepairKey`, set in the same transaction): builds before this one could
    /// leave them when a file took back a deleted asset (its content was the deleted one's, or
    /// a file read again under newer reading rules found its deleted copy) and kept its own
    /// asset in no Recently Deleted. Their user state stays on them. The change set names them.
    /// Once done, a start reads the key and opens no transaction (the writer is the only one).
    public func trashFilelessAssets(now: Int64) throws(StoreError) -> (ChangeSet, trashed: Int) {
        guard try IndexReader(db).metaInteger(Self.filelessRepairKey) == nil else { return (ChangeSet(), 0) }
        var trashed = 0
        let changes = try commit(now: now) { job throws(StoreError) in
            let s = try db.statement("""
                SELECT pk FROM assets a WHERE deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM files f WHERE f.asset_pk = a.pk)
                """)
            var pks: [Int64] = []
            while try s.step() { pks.append(s.int64(0)) }
            s.reset()
            for pk in pks { try assets.trash(pk, job) }
            trashed = pks.count
            try setMetaInteger(Self.filelessRepairKey, 1)
            return ChangeSet()
        }
        return (changes, trashed)
    }

    /// Purges the assets `select` names, in one transaction with one change set.
    private func purge(now: Int64, _ select: () throws(StoreError) -> [(pk: Int64, id: String)]) throws(StoreError) -> ChangeSet {
        // In Recently Deleted, they are in no moment or folder album: only smart albums change.
        try commit(now: now, recount: false) { job throws(StoreError) in
            try db.execute("DELETE FROM delete_pending")     // the delete's plan is done
            let doomed = try select()
            for (pk, _) in doomed { try assets.delete(pk, job) }
            // Gone for good: what users said about them goes too (albums lose them).
            var changes = ChangeSet()
            changes.collectionsUpdated = try forgetUserState(of: doomed.map(\.id), now: now)
            return changes
        }
    }
}
