import CLinux
import CSQLite
import PhotoModel
import PhotoSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The index database: one writer connection, a small pool of reader connections (WAL mode:
/// readers are never blocked by the writer), and an exclusive lock file so that a second
/// photod on the same database is refused.
public final class Database: Sendable {
    /// The database file.
    public let path: String
    private let lock: LockFile?
    private let writer: Locked<IndexWriter>
    private let readers: [ReaderSlot]
    private let nextReader = Atomic<Int>(0)
    private let writerTaken = Locked(false)
    /// What the writer was made with (kept for `reopenAfterFailure`).
    private let writerOptions: Options
    /// Recent fetch results, shared by the readers (see `FetchResults`).
    private let results: Locked<FetchResults>
    /// Whether the file was opened exactly as photod left it at a clean stop (its seal taken
    /// and matching, see ``DatabaseSeal``): the checks against damage done while it was
    /// stopped — `quick_check`, the counter recount — can be skipped.
    public let openedSealed: Bool
    /// The schema version the file had when it was opened, and the seconds its migration to
    /// `Schema.currentVersion` took; nil when it had the current one (or was new).
    public let upgraded: (from: Int, seconds: Double)?

    /// How the database is opened.
    public struct Options: Sendable {
        /// Take the exclusive `<database>.lock` (the daemon does; tools reading a copy need not).
        public var exclusive = true
        /// Reader connections in the pool.
        public var readers = 4
        /// Names assets' places from their coordinates and gives zone offsets (the daemon's
        /// gazetteer); nil: an asset's place is only its file's own.
        public var places: (any PlaceLookup)?
        /// How long assets stay in Recently Deleted (`--retention-days`): a trashed file found
        /// without its record goes there for what its name's expiry leaves of it.
        public var retentionMilliseconds: Int64 = 30 * 86_400_000
        public init() {}
    }

    /// Opens or creates the database, takes its lock, and migrates it to the current schema.
    public init(path: String, options: Options = Options()) throws(StoreError) {
        _ = Database.configureSQLite
        self.path = path
        writerOptions = options
        do {
            try Directory.makePath(PathBytes(path).parent)
        } catch {
            throw StoreError(code: .cannotOpen, message: "cannot create the database's directory: \(error)")
        }
        if options.exclusive {
            do throws(LockFile.Failure) {
                lock = try LockFile(path: PathBytes(path + ".lock"))
            } catch {
                switch error {
                case .held(let pid):
                    throw StoreError(code: .locked, message: "database '\(path)' is in use by another photod"
                                         + (pid.map { " (pid \($0))" } ?? "") + "; stop it first or choose another --database")
                case .system(let e):
                    throw StoreError(code: .cannotOpen, message: "cannot lock database '\(path)': \(e)")
                }
            }
        } else {
            lock = nil
        }
        // Under the lock and before SQLite opens the file: a second photod refused above
        // cannot take the seal, and nothing has written to the file since it was sealed.
        openedSealed = options.exclusive && DatabaseSeal.take(forDatabase: path)
        let connection = try Connection(path: path)
        do throws(StoreError) {
            try Schema.checkVersion(connection)
            // journal_mode=WAL answers with the mode in force; anything else means the file
            // system cannot do WAL (some network mounts), which we do not support silently.
            let mode = try connection.scalar("PRAGMA journal_mode=WAL").string
            guard mode == "wal" else {
                throw StoreError(code: .cannotOpen, message: "database '\(path)' cannot use WAL mode (got \(mode ?? "nil"))")
            }
            // A larger checkpoint interval than SQLite's 1,000 pages: a bulk index rewrites the
            // same hot pages, and each checkpoint copies them back into the database file.
            // A 4 MB page cache: the pages a batch misses are in the kernel's page cache (the
            // database was just written), so a larger one bought no speed; 16 MB measured the
            // same files/s at 50,000 assets with 13 MB more peak memory.
            // Debian builds SQLite with SECURE_DELETE on: freed pages are overwritten with zeros,
            // writes the index does not need (what they held is paths and metadata of files the
            // library holds anyway).
            try connection.execute(Self.writerPragmas)
            let started = ContinuousClock.now
            let found = try Schema.migrate(connection)
            // The smart albums' counters, counted once for a database from before them.
            if try !SmartCounters.exist(connection) {
                let actual = try SmartCounters.recount(connection, now: SmartCounters.now)
                try connection.transaction { () throws(StoreError) in try SmartCounters.replace(connection, with: actual) }
            }
            // Every collection's key assets, computed once for a database from before them.
            if try !KeyAssetRows.exist(connection) {
                try connection.transaction { () throws(StoreError) in try KeyAssetRows(connection).rebuild(now: SmartCounters.now) }
            }
            // The upgrade's time includes what it made: the counters and key assets.
            let took = ContinuousClock.now - started
            upgraded = found > 0 && found < Schema.currentVersion
                ? (found, Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18) : nil
        } catch let error where error.code == .corrupt {
            throw StoreError(code: .corrupt, message: "database '\(path)' is not a valid photod database: \(error.message)")
        }
        // The fetch results kept at the last clean stop, if the file is still as it was then
        // (taken: read and removed, whatever it holds). Earlier photods kept a fetch catalog in
        // files beside the database (268 bytes an asset): nothing reads them now. Both are ours
        // alone, so removing them cannot fail but for a damaged file system, which the database
        // itself would report.
        var kept: FetchResults?
        if options.exclusive {
            let resultsPath = Self.fetchResultsPath(forDatabase: path)
            if openedSealed, let bytes = try? FileDescriptor.readAll(resultsPath, limit: 64 << 20) {
                kept = FetchResults.decoded(bytes, token: try IndexReader(connection).journalBounds().current)
            }
            try? AtomicFile.remove(resultsPath)
            try? Directory.removeWithFiles(PathBytes(path + ".catalog"))
        }
        if options.exclusive { try Self.skipUndoneTokens(connection, now: SmartCounters.now) }
        results = Locked(kept ?? FetchResults())
        let indexWriter = IndexWriter(connection, places: options.places, retentionMilliseconds: options.retentionMilliseconds)
        writer = Locked(indexWriter)
        readers = (0..<max(1, options.readers)).map { _ in ReaderSlot() }
    }

    /// The writer connection's settings (see `init` for why each).
    private static let writerPragmas = """
        PRAGMA wal_autocheckpoint=8000;
        PRAGMA synchronous=NORMAL;
        PRAGMA foreign_keys=ON;
        PRAGMA temp_store=MEMORY;
        PRAGMA cache_size=-4000;
        PRAGMA secure_delete=OFF;
        """

    /// Closes the writer and reader connections and opens the database again, then checks it
    /// (`quick_check`): after the disk failed a write or an fsync of it (``StoreError/Code/ioError``).
    /// A failed fsync may have dropped written pages while the kernel's cache still shows them,
    /// and SQLite's own caches describe what it meant to write: going on with them is going on
    /// as if the data were safe (PostgreSQL's "fsyncgate"). A fresh connection reads the WAL and
    /// the database as the file system has them now. Throws (and the caller must not write)
    /// when the file cannot be opened or the check fails; waits for the writer. The journal then
    /// goes on past the reserved tokens (`skipUndoneTokens`): what the disk kept may end before
    /// the last change set sent.
    public func reopenAfterFailure() throws(StoreError) {
        try writer.withLock { w throws(StoreError) in
            // Every connection closed first: SQLite then lets go of the file (no descriptor
            // kept for reuse) and the next open rebuilds the WAL index from the WAL itself. Until
            // the database opens again the writer is a placeholder on an empty in-memory
            // database, on which nothing can be written (the sort queue reopens before any job).
            for slot in readers { slot.connection.withLock { $0 = nil } }
            w = IndexWriter(try Connection(path: ":memory:"), places: nil)
            let connection = try Connection(path: path, create: false)
            try connection.execute(Self.writerPragmas)
            let check = try connection.scalar("PRAGMA quick_check").string
            guard check == "ok" else {
                throw StoreError(code: .corrupt, message: "database '\(path)' fails its check after a disk error: \(check ?? "nil")")
            }
            // Change sets sent to subscribers may be gone with the pages the disk dropped: as
            // after a stop that was not clean, the journal goes on past every token handed out.
            try Self.skipUndoneTokens(connection, now: SmartCounters.now)
            w = IndexWriter(connection, places: writerOptions.places, retentionMilliseconds: writerOptions.retentionMilliseconds)
        }
        results.withLock { $0.invalidate() }
    }

    /// Process-wide SQLite settings, once, before the first connection.
    private static let configureSQLite: Void = {
        _ = photo_sqlite_disable_memstatus()
    }()

    /// Compares the writer-kept counters with a recount and repairs them when they differ
    /// (a bug, or a database written by a build with another counting rule). Returns whether
    /// they had to be repaired. Costs one pass over the tables: run at start-up.
    @discardableResult
    public func verifyCounters() throws(StoreError) -> Bool {
        try writer.withLock { w throws(StoreError) in
            // The recount scans every table: on a connection of its own with a small page cache,
            // closed afterwards, so that the scan does not fill the writer's cache for good.
            let scan = try Connection(path: path, readOnly: true, create: false)
            try scan.execute("PRAGMA cache_size=-1000;")
            let reader = IndexReader(scan)
            let kept = try reader.counts()
            let actual = try reader.recount()
            let deleted = try reader.deletedByType()
            let byRoot = try reader.recountByRoot()
            let keptByRoot = try reader.rootCounters()
            let rootsAgree = Set(byRoot.keys).union(keptByRoot.keys).allSatisfy { (keptByRoot[$0] ?? 0) == (byRoot[$0] ?? 0) }
            // The smart albums' counters (zeros are the same as none).
            let now = SmartCounters.now
            let smartKept = try SmartCounters.kept(scan, now: now)
            let smartRecount = try SmartCounters.recount(scan, now: now)
            let smartActual = smartRecount.filter { $0.value != 0 }
            if smartKept != smartActual {
                try w.connection.transaction { () throws(StoreError) in try SmartCounters.replace(w.connection, with: smartRecount) }
            }
            guard kept != actual || !rootsAgree else { return smartKept != smartActual }
            try w.connection.transaction { () throws(StoreError) in
                try w.connection.execute("DELETE FROM counters WHERE name LIKE 'root.%'")
                let r = try w.connection.statement("INSERT INTO counters (name, value) VALUES (:name, :value)")
                for (root, n) in byRoot {
                    r.bind(":name", to: "root.\(root).assets")
                    r.bind(":value", to: n)
                    try r.run()
                }
                let s = try w.connection.statement("UPDATE counters SET value = :value WHERE name = :name")
                for (name, value) in [("assets.image", actual.images + (deleted["image"] ?? 0)),
                                      ("assets.video", actual.videos + (deleted["video"] ?? 0)),
                                      ("files.sidecar", actual.sidecars), ("files.ignored", actual.ignored),
                                      ("files.error", actual.errors),
                                      ("files.media", actual.files - actual.sidecars - actual.ignored - actual.errors),
                                      ("directories", actual.directories)] {
                    s.bind(":value", to: value)
                    s.bind(":name", to: name)
                    try s.run()
                }
            }
            return true
        }
    }

    /// Checkpoints the WAL into the database file and truncates it (on a clean shutdown, so
    /// that the database file alone is complete). Waits for the writer.
    public func checkpoint() throws(StoreError) {
        try writer.withLock { w throws(StoreError) in
            // Every change set up to now is on disk once the checkpoint has synced the WAL:
            // the next open need not skip tokens (`skipUndoneTokens`).
            let current = try IndexReader(w.connection).journalBounds().current
            try w.connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('journal.durableThrough', \(current))")
            try w.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Rewrites the database file compactly (SQLite's `VACUUM`), then checkpoints: for after
    /// every row was rewritten at once (a re-read under newer rules), whose rows grew by the
    /// columns added since and split their pages: at 1,000,000 assets 655 MB become 513 MB in
    /// 5.5 s. Waits for the writer and holds it meanwhile (readers go on). Returns the file's
    /// bytes before and after; SQLite needs free space about the database's size while it
    /// runs, and on an error (a full disk) the database is left as it was.
    @discardableResult
    public func compact() throws(StoreError) -> (before: Int64, after: Int64) {
        return try writer.withLock { w throws(StoreError) in
            func size() throws(StoreError) -> Int64 {
                (try w.connection.scalar("PRAGMA page_count").int64 ?? 0) * (try w.connection.scalar("PRAGMA page_size").int64 ?? 0)
            }
            let before = try size()
            try w.connection.execute("VACUUM")
            try w.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return (before, try size())
        }
    }

    /// After a stop that was not clean (a kill, a crash, a power cut), change sets committed
    /// without an fsync may be gone though subscribers were sent them. Unless the last stop
    /// checkpointed (meta `journal.durableThrough` is the newest token: every change set was
    /// on disk), the journal goes on after every token it may have handed out (meta
    /// `journal.reserved`, made durable before any of them was used), with an empty change set
    /// at the last one: the tokens between the last change set on disk and it are in no row,
    /// and a client resuming from one of them is told `tokenExpired`
    /// (`IndexReader.resumable`), never sent other change sets under its number. After a kill
    /// nothing was lost and no client holds such a token: the numbers jump, nothing else. The
    /// mark is cleared durably, so a power cut later cannot bring it back.
    static func skipUndoneTokens(_ connection: Connection, now: Int64) throws(StoreError) {
        let reader = IndexReader(connection)
        let current = try reader.journalBounds().current
        let durableThrough = try reader.metaInteger("journal.durableThrough")
        if durableThrough != nil {
            try connection.transaction(durable: true) { () throws(StoreError) in
                try connection.execute("DELETE FROM meta WHERE key = 'journal.durableThrough'")
            }
        }
        guard durableThrough != current, let reserved = try reader.metaInteger("journal.reserved"), reserved > current else { return }
        try connection.transaction(durable: true) { () throws(StoreError) in
            let s = try connection.statement("""
                INSERT INTO changes (token, time, assets_inserted, assets_updated, assets_deleted, collections_inserted,
                                     collections_updated, collections_deleted)
                VALUES (:token, :time, '', '', '', '', '', '')
                """)
            s.bind(":token", to: reserved)
            s.bind(":time", to: now)
            try s.run()
        }
    }

    /// Seals the database at a clean stop, after `checkpoint()`: the next open that finds it
    /// unchanged skips the integrity check and the recount (``DatabaseSeal``), and takes the
    /// fetch results kept now (`<database>.results`, a cache: not written is not a failure).
    /// False, and no seal, when the WAL still holds frames. Waits for the writer; call it when
    /// nothing writes any more.
    @discardableResult
    public func seal() throws(StoreError) -> Bool {
        do {
            return try writer.withLock { w throws(SystemError) in
                if let token = try? IndexReader(w.connection).journalBounds().current {
                    let bytes = results.withLock { $0.encoded(token: token) }
                    try? AtomicFile.write(bytes, to: Self.fetchResultsPath(forDatabase: path))
                }
                return try DatabaseSeal.write(forDatabase: path)
            }
        } catch {
            throw StoreError(code: .cannotOpen, message: "cannot seal the database: \(error)")
        }
    }

    /// Runs `body` on the writer connection (the one writer; callers are serialised). Not
    /// public: the daemon's one writer is its sort queue, which holds the writer through
    /// `takeWriter()`; inside PhotoStore, opening and recovery write before the queue exists,
    /// and tests write through `@testable import`.
    func write<R: Sendable>(_ body: (IndexWriter) throws -> R) throws -> R {
        try writer.withLock { w in try body(w) }
    }

    /// Drops the kept fetch results, and any being read now: for writes that bypass the
    /// journal (tests that edit the tables directly). Every write through `IndexWriter`'s
    /// methods is journaled, which is what keeps the results true.
    func invalidateFetchResults() { results.withLock { $0.invalidate() } }

    /// How many fetch results are kept now (for tests).
    var keptFetchResults: Int { results.withLock { $0.count } }

    /// What is kept of a search's result (tests).
    func keptSearch(_ text: SearchQuery, _ query: AssetQuery = AssetQuery(), token: Int64) -> FetchResults.Held? {
        results.withLock { r in
            r.held(FetchResults.Key(scope: .library, query: query, search: text), at: FetchResults.Stamp(generation: r.generation, token: token))
        }
    }

    /// `<database>.results`: the fetch results kept at a clean stop.
    static func fetchResultsPath(forDatabase database: String) -> PathBytes { PathBytes(database + ".results") }

    /// Hands out the right to write, once: the sort queue takes it when it is made, so that it
    /// is the one writer (a second taker is a bug, and traps).
    public func takeWriter() -> DatabaseWriter {
        let first = writerTaken.withLock { taken -> Bool in
            defer { taken = true }
            return !taken
        }
        precondition(first, "the database's writer was already taken: the sort queue is its one writer")
        return DatabaseWriter(database: self)
    }

    /// For tests that simulate a disk filling up and freeing up: the database may not grow
    /// beyond its current size (`.current`), `n` pages, or (nil) is unlimited again. Returns the
    /// limit in force. Not a write of data: it sets the writer connection's `max_page_count`.
    public func limitPages(_ limit: PageLimit?) throws(StoreError) -> Int64 {
        try writer.withLock { w throws(StoreError) in
            let pages: Int64
            switch limit {
            case .current?: pages = try w.connection.scalar("PRAGMA page_count").int64 ?? 1
            case .pages(let n)?: pages = n
            case nil: pages = 4_294_967_294
            }
            return try w.connection.scalar("PRAGMA max_page_count = \(pages)").int64 ?? pages
        }
    }

    /// A limit for `limitPages`.
    public enum PageLimit: Sendable {
        case current
        case pages(Int64)
    }

    /// Lets go of the pages every connection caches (the writer's and each reader's up to 4 MB),
    /// for a daemon at rest: SQLite's caches repeat what the kernel's page cache holds, so a read
    /// after this costs a copy from it, not a disk read. Waits for a connection in use.
    public func releaseMemory() {
        for slot in readers { slot.connection.withLock { $0?.releaseMemory() } }
        writer.withLock { $0.connection.releaseMemory() }
    }

    /// Runs `body` on a reader connection from the pool: the first one free, so that a daemon
    /// read by one thread at a time keeps one connection's cache warm rather than four
    /// connections' caches each holding the same pages; when all are in use, waits for one in turn.
    public func read<R: Sendable>(_ body: (IndexReader) throws -> R) throws -> R {
        let free = readers.first { $0.claim() }
        defer { free?.release() }
        let slot = free ?? readers[nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % readers.count]
        return try slot.connection.withLock { connection in
            if connection == nil {
                let c = try Connection(path: path, readOnly: true, create: false)
                try c.execute("PRAGMA query_only=ON; PRAGMA cache_size=-4000;")
                connection = c
            }
            let result = try body(IndexReader(connection!, results: results))
            // A statement left on a row would hold this connection's snapshot open: later reads
            // would see old data and the WAL could not be checkpointed past it. Debug builds
            // (the tests) check that every read resets what it stepped.
            assert(connection!.busyStatements.isEmpty, "a read left statements unreset: \(connection!.busyStatements)")
            return result
        }
    }
}

/// The right to write to the index: the sort queue holds it (`Database.takeWriter()`), so that
/// every write goes through the queue, in order, with its change set.
public struct DatabaseWriter: Sendable {
    /// The database written to.
    public let database: Database

    /// Runs `body` on the writer connection.
    public func write<R: Sendable>(_ body: (IndexWriter) throws -> R) throws -> R {
        try database.write(body)
    }
}

/// One pooled reader connection, opened on first use.
final class ReaderSlot: Sendable {
    let connection = Locked<Connection?>(nil)
    /// Whether a read has claimed the slot as free (one that found none free waits on the lock).
    private let claimed = Atomic<Bool>(false)

    /// Claims the slot if no read has; true when this one did.
    func claim() -> Bool { claimed.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged }

    func release() { claimed.store(false, ordering: .releasing) }
}
