import CLinux
import Foundation
import PhotoModel
import PhotoSystem

/// What library fetches with a predicate or a sort are answered from: the values predicates and
/// sorts read, for every asset, column by column, in files beside the database that are mapped
/// (not read into memory), plus the few assets changed since those files were written.
///
/// It is a cache of the database, never a source of truth. The files (`CatalogFiles`) hold the
/// library at one change token, the *base*. A reader at a later token takes a `CatalogView`: the
/// base with the assets the change journal names after the base's token masked out, and those
/// assets re-read from SQLite in the reader's own transaction (every change to an asset is
/// journaled: that is the journal's promise to clients too). The page's rows are read in that
/// same transaction, so a page, its total and its token always agree.
///
/// When the changed assets pass a bound (`Settings.overlayLimit`), the journal no longer reaches
/// back, or the database is not the one the files were made from, the files are made again: in
/// the reader's request (`Settings.background == false`: tests and tools), or on a thread of
/// their own while fetches are answered by SQL (the daemon). The files survive restarts: the
/// first fetch after a start maps them instead of reading the library.
final class AssetCatalog: Sendable {
    struct Settings: Sendable {
        /// Where the files go; nil keeps the base in memory (readers without a database).
        var directory: String?
        /// Make the files on a thread of their own (fetches meanwhile are answered by SQL).
        var background = false
        /// Changed assets a view takes before the files are made again, at least.
        var overlayMinimum = 4_096

        /// The changed assets a view over `count` records may hold (at most 0.8 % of the
        /// library above the minimum: each is a record in memory and a merge step per fetch).
        func overlayLimit(_ count: Int) -> Int { max(overlayMinimum, count / 128) }
    }

    private struct State {
        var base: CatalogSnapshot?
        /// Whether the files have been looked for since the start (or the last invalidation).
        var looked = false
        var latest: CatalogView?
        var identity: Int64?
        /// A background build is scheduled or running (its thread clears it as it ends).
        var building = false
        var stopped = false
        /// Builds wait while the database is rewritten (`Database.compact`); a stop is for good.
        var paused = false
        /// Moved by `invalidate`: a build or view begun before it is not kept.
        var epoch = 0
        var lastBuildEnd: UInt64 = 0
        var lastBuildTook: UInt64 = 0
        var builds = 0
        var lastError: String?

        /// Whether a build may start now: none for three times the last one's length after it
        /// ended (successful or not), so that a library changing fast, or a disk that is full,
        /// costs at most a quarter of a core.
        func waitBeforeBuild(at now: UInt64) -> UInt64 {
            let ready = lastBuildEnd == 0 ? 0 : lastBuildEnd + 3 * lastBuildTook
            return ready > now ? ready - now : 0
        }
    }

    let settings: Settings
    private let state = Locked(State())
    /// Runs `build(_:)` in a read transaction of its own (set by the database).
    let runner = Locked<(@Sendable () -> Void)?>(nil)
    /// Held while the files are looked for or made: one at a time, and no clean-up of the
    /// directory while another writes in it.
    private let filesLock = Locked<Void>(())

    init(_ settings: Settings = Settings()) { self.settings = settings }

    /// How many times the files (or the in-memory base) were made; the last failure to make them.
    var buildCount: Int { state.withLock { $0.builds } }
    var lastError: String? { state.withLock { $0.lastError } }

    var status: FetchCatalogStatus {
        state.withLock { s in
            FetchCatalogStatus(token: s.base?.token, assets: s.base?.count ?? 0, changed: s.latest.map { $0.base === s.base ? $0.changedCount : 0 } ?? 0,
                               building: s.building, builds: s.builds,
                               lastBuildSeconds: s.builds > 0 ? Double(s.lastBuildTook) / 1e9 : nil, lastError: s.lastError)
        }
    }

    /// Drops the base and the files: the next fetch reads everything again (for writes that
    /// bypass the journal: tests and maintenance tools).
    func invalidate() {
        let old = state.withLock { s -> CatalogSnapshot? in
            let old = s.base
            s.base = nil
            s.latest = nil
            s.looked = true
            s.epoch += 1
            return old
        }
        old?.retire()
        if let dir = settings.directory { filesLock.withLock { _ in CatalogFiles(directory: dir).removeAll() } }
    }

    /// Stops making files: a build under way gives up at its next row, and none starts again.
    /// Returns when none runs (a clean stop's checkpoint must not wait behind a long read).
    func stopBuilding() {
        state.withLock { $0.stopped = true }
        while state.withLock({ $0.building }) { usleep(2_000) }
    }

    /// Holds builds off while the database file is rewritten: a build under way gives up, none
    /// starts until `resumeBuilding`. Returns when none runs.
    func pauseBuilding() {
        state.withLock { $0.paused = true }
        while state.withLock({ $0.building }) { usleep(2_000) }
    }

    /// Lets builds run again after `pauseBuilding` (a stop stays a stop).
    func resumeBuilding() {
        state.withLock { $0.paused = false }
    }

    /// Whether a build must give up now: stopped for good, or paused.
    private var isStopped: Bool { state.withLock { $0.stopped || $0.paused } }

    /// Records why a background build could not run (a stop is not a failure).
    func failed(_ error: StoreError) {
        guard error.code != .cancelled else { return }
        state.withLock { $0.lastError = error.message }
    }

    /// The view at `reader`'s token, or nil when there is none to be had now (the files are
    /// being made in the background): the caller answers from SQL. Call inside a read transaction.
    func view(_ reader: IndexReader) throws(StoreError) -> CatalogView? {
        let bounds = try reader.journalBounds()
        let (held, epoch) = state.withLock { ($0.latest, $0.epoch) }
        if let held, held.token == bounds.current { return held }
        let identity = try self.identity(reader)
        var base = state.withLock { $0.base }
        if base == nil, settings.directory != nil, !state.withLock({ $0.looked }) {
            base = try loadFiles(identity: identity, reader: reader, bounds: bounds)
        }
        // A transaction older than the files (another reader made them meanwhile) is answered by SQL.
        if let base, base.token > bounds.current { return nil }
        if let base, base.token >= bounds.floor {
            let from = held.flatMap { $0.base === base && $0.token <= bounds.current ? $0 : nil }
            if let view = try CatalogView.make(base, reader: reader, to: bounds.current, from: from,
                                               limit: settings.overlayLimit(base.count)) {
                keep(view, epoch: epoch)
                if view.changedCount > settings.overlayLimit(base.count) / 2 { schedule() }
                return view
            }
        }
        // No base this reader can use: make one.
        if settings.background {
            schedule()
            return nil
        }
        // In the request, spaced like a background build (files that cannot be written are not
        // tried again at every fetch), and one at a time.
        if state.withLock({ $0.waitBeforeBuild(at: Monotonic.nanoseconds) }) > 0 { return nil }
        let fresh: CatalogSnapshot? = try filesLock.withLock { (_: inout Void) throws(StoreError) -> CatalogSnapshot? in
            // Another request may have made them while this one waited.
            if let made = state.withLock({ $0.base }), made.token == bounds.current { return made }
            return try build(reader, token: bounds.current, identity: identity)
        }
        guard let fresh else { return nil }
        fresh.makeOrders(cancelled: { false })
        let view = CatalogView(base: fresh)
        keep(view, epoch: epoch)
        return view
    }

    private func keep(_ view: CatalogView, epoch: Int) {
        state.withLock {
            guard $0.epoch == epoch, $0.base === view.base else { return }
            if $0.latest == nil || $0.latest!.token <= view.token { $0.latest = view }
        }
    }

    /// The database's identity (in `meta`), which the files name: files of another database
    /// (a recovered one, a copy) are never used.
    private func identity(_ reader: IndexReader) throws(StoreError) -> Int64 {
        if let known = state.withLock({ $0.identity }) { return known }
        let identity = try reader.metaInteger(CatalogFiles.identityKey) ?? 0
        state.withLock { $0.identity = identity }
        return identity
    }

    /// The files as a previous run left them, if they are of this database as it is now.
    private func loadFiles(identity: Int64, reader: IndexReader, bounds: JournalBounds) throws(StoreError) -> CatalogSnapshot? {
        guard let dir = settings.directory else { return nil }
        return try filesLock.withLock { (_: inout Void) throws(StoreError) -> CatalogSnapshot? in
            if state.withLock({ $0.looked }) { return state.withLock { $0.base } }
            let loaded = try CatalogFiles(directory: dir).load(identity: identity, reader: reader, bounds: bounds)
            state.withLock {
                $0.looked = true
                if $0.base == nil { $0.base = loaded }
            }
            return state.withLock { $0.base }
        }
    }

    /// Makes the base at `token` in `reader`'s transaction: files when there is a directory (nil
    /// when they cannot be written: fetches are answered by SQL), else in memory. Its sort
    /// orders are made afterwards (`makeOrders`), outside the transaction where it can be.
    @discardableResult
    func build(_ reader: IndexReader, token: Int64, identity known: Int64? = nil,
               cancellable: Bool = false) throws(StoreError) -> CatalogSnapshot? {
        let identity: Int64
        if let known { identity = known } else { identity = try self.identity(reader) }
        let epoch = state.withLock { $0.epoch }
        let started = Monotonic.nanoseconds
        let snapshot: CatalogSnapshot?
        if let dir = settings.directory {
            do throws(StoreError) {
                snapshot = try CatalogFiles(directory: dir).build(reader, token: token, identity: identity,
                                                                  cancelled: { [self] in cancellable && isStopped })
            } catch {
                if error.code == .cancelled { throw error }
                // Spaced like a build that took this long: a full disk is not retried at every fetch.
                let took = Monotonic.nanoseconds - started
                state.withLock {
                    $0.lastError = error.message
                    $0.lastBuildEnd = Monotonic.nanoseconds
                    $0.lastBuildTook = max(took, 1_000_000_000)
                }
                return nil
            }
        } else {
            snapshot = try CatalogSnapshot.buildInMemory(reader, token: token)
        }
        let took = Monotonic.nanoseconds - started
        let kept = state.withLock { s -> Bool in
            s.builds += 1
            s.lastBuildTook = took
            s.lastBuildEnd = Monotonic.nanoseconds
            s.lastError = nil
            // Made from data an invalidation has since declared stale: not used, not kept.
            guard s.epoch == epoch else { return false }
            if s.base == nil || s.base!.token <= token {
                s.base?.retire()
                s.base = snapshot
                s.looked = true
                if let latest = s.latest, latest.token < token { s.latest = nil }
            }
            return true
        }
        if !kept {
            snapshot?.retire()
            if let dir = settings.directory { CatalogFiles(directory: dir).removeAll() }
            return nil
        }
        return snapshot
    }

    /// A background build: at `reader`'s token, in its transaction, one at a time with loads
    /// and other builds. Its sort orders are made by `finish` after the transaction.
    func buildInBackground(_ reader: IndexReader) throws(StoreError) -> CatalogSnapshot? {
        try filesLock.withLock { (_: inout Void) throws(StoreError) -> CatalogSnapshot? in
            try build(reader, token: try reader.journalBounds().current, cancellable: true)
        }
    }

    /// Makes a background build's sort orders (the database is not read: no transaction needed).
    func finish(_ snapshot: CatalogSnapshot) { snapshot.makeOrders(cancelled: { [self] in isStopped }) }

    /// Starts a background build unless one runs or the catalog stopped, after the spacing
    /// `waitBeforeBuild` asks (slept in short steps, so that a stop does not wait it out).
    private func schedule() {
        guard settings.background, let run = runner.withLock({ $0 }) else { return }
        let wait: UInt64? = state.withLock { s in
            guard !s.building, !s.stopped, !s.paused else { return nil }
            s.building = true
            return s.waitBeforeBuild(at: Monotonic.nanoseconds)
        }
        guard let wait else { return }
        let thread = Thread { [self] in
            setThreadName("photod-catalog")
            lowerThreadPriority(by: 5)
            let until = Monotonic.nanoseconds + wait
            while !isStopped, Monotonic.nanoseconds < until { usleep(20_000) }
            if !isStopped { run() }
            state.withLock { $0.building = false }
        }
        thread.start()
    }
}

/// What the fetch catalog holds now (`library.status`).
public struct FetchCatalogStatus: Sendable, Hashable {
    /// The token of its files (nil: none made or found yet).
    public var token: Int64?
    /// The assets in them (Recently Deleted too).
    public var assets: Int
    /// The assets changed since, laid over them by the latest fetch.
    public var changed: Int
    /// Whether new files are being made.
    public var building: Bool
    /// Files made since the start, and how long the last took.
    public var builds: Int
    public var lastBuildSeconds: Double?
    /// Why the last attempt to make them failed (fetches are answered by SQL meanwhile).
    public var lastError: String?
}

/// A snapshot's records at one token with the assets changed since the snapshot's token laid
/// over it: what a reader at that token fetches from. Immutable, shared by readers at the token.
final class CatalogView: Sendable {
    let token: Int64
    let base: CatalogSnapshot
    /// Base records whose asset changed after the base's token (nil: none).
    let masked: Bitmap?
    /// The changed assets as they are at `token` (those that still exist), in a small snapshot.
    let overlay: CatalogSnapshot?
    /// The changed assets' ids, and their rows (none for an asset that is gone).
    let changed: Set<String>
    let rows: [String: CatalogRow]
    private let results = Locked<[(AssetQuery, [Int32])]>([])

    var changedCount: Int { changed.count }

    init(base: CatalogSnapshot) {
        token = base.token
        self.base = base
        masked = nil
        overlay = nil
        changed = []
        rows = [:]
    }

    init(token: Int64, base: CatalogSnapshot, masked: Bitmap?, overlay: CatalogSnapshot?, changed: Set<String>,
         rows: [String: CatalogRow]) {
        self.token = token
        self.base = base
        self.masked = masked
        self.overlay = overlay
        self.changed = changed
        self.rows = rows
    }

    /// `base` brought to `token` (from `from`, a view of the same base at an earlier token, when
    /// there is one): the assets the journal names after it re-read. Nil when more than `limit`
    /// changed in all.
    static func make(_ base: CatalogSnapshot, reader: IndexReader, to token: Int64, from: CatalogView?,
                     limit: Int) throws(StoreError) -> CatalogView? {
        if token == base.token { return CatalogView(base: base) }
        var changed = from?.changed ?? []
        var rows = from?.rows ?? [:]
        var after = from?.token ?? base.token
        var newly = Set<String>()
        while after < token {
            let page = try reader.changes(after: after, limit: 500)
            guard let last = page.last else { break }
            for c in page {
                for id in c.inserted + c.updated + c.deleted where !newly.contains(id.rawValue) { newly.insert(id.rawValue) }
            }
            if changed.union(newly).count > limit { return nil }
            after = last.token ?? after
        }
        if newly.isEmpty, let from { return from.at(token) }
        var masked = from?.masked ?? Bitmap(count: base.count, filled: false)
        for id in newly {
            if let i = base.index(of: id) { masked.insert(Int(i)) }
            rows[id] = nil
        }
        let list = IndexWriter.jsonArray(Array(newly))
        var interner = CatalogSnapshot.Interner()
        let s = try reader.db.statement("SELECT \(CatalogSnapshot.columns) FROM assets a WHERE a.id IN (SELECT value FROM json_each(:ids))")
        defer { s.reset() }
        s.bind(":ids", to: list)
        while try s.step() {
            guard let r = CatalogSnapshot.row(s, &interner) else { throw StoreError.undecodable(table: "assets", key: s.string(1)) }
            rows[r.id] = r
        }
        let tagged = try CatalogSnapshot.taggerKeywords(reader, ids: list)
        for (id, more) in tagged {
            guard var row = rows[id] else { continue }
            row.keywords = CatalogSnapshot.folded(row.keywords, more)
            rows[id] = row
        }
        changed.formUnion(newly)
        let overlay = rows.isEmpty ? nil : CatalogSnapshot.inMemory(Array(rows.values), token: token)
        return CatalogView(token: token, base: base, masked: masked, overlay: overlay, changed: changed, rows: rows)
    }

    /// This view at a later token at which none of the assets changed (collections did).
    private func at(_ token: Int64) -> CatalogView {
        CatalogView(token: token, base: base, masked: masked, overlay: overlay, changed: changed, rows: rows)
    }

    /// A selected record: an index into the base (≥ 0) or into the overlay (`-1 - index`).
    func pk(_ ref: Int32) -> Int64 { ref >= 0 ? base.columns.pk[Int(ref)] : overlay!.columns.pk[Int(-1 - ref)] }

    func id(_ ref: Int32) -> String { ref >= 0 ? base.ids.string(Int(ref)) : overlay!.ids.string(Int(-1 - ref)) }

    /// Lets go of the base's mapped pages after a fetch.
    func release() { base.release() }

    /// The records `query` selects, in its order: the base's without the masked ones, merged
    /// with the overlay's by the same order.
    func select(_ query: AssetQuery) -> [Int32] {
        if let hit = results.withLock({ $0.first { $0.0 == query }?.1 }) { return hit }
        var fromBase = base.select(query)
        if let masked, masked.cardinality > 0 { fromBase.removeAll { masked[Int($0)] } }
        guard let overlay else { return fromBase }
        let fromOverlay = overlay.select(query)
        guard !fromOverlay.isEmpty else { return fromBase }
        let sort = query.sort.descriptors.isEmpty ? [AssetSortDescriptor(.localDateTime)] : query.sort.descriptors
        var out: [Int32] = []
        out.reserveCapacity(fromBase.count + fromOverlay.count)
        var i = 0, j = 0
        while i < fromBase.count, j < fromOverlay.count {
            if CatalogSnapshot.before(overlay, Int(fromOverlay[j]), base, Int(fromBase[i]), sort) {
                out.append(-1 - fromOverlay[j])
                j += 1
            } else {
                out.append(fromBase[i])
                i += 1
            }
        }
        out.append(contentsOf: fromBase[i...])
        for k in fromOverlay[j...] { out.append(-1 - k) }
        results.withLock { CatalogSnapshot.keep((query, out), in: &$0, count: 4, indexes: CatalogSnapshot.cachedIndexes) }
        return out
    }
}

/// One asset as predicates and sorts see it: plain data (no references). Its id, path and
/// keywords are in the snapshot's tables. Text compared without regard to ASCII case (make,
/// model) is interned folded.
struct CatalogRecord: Sendable {
    var pk: Int64
    /// `local_datetime` as milliseconds on the capture clock since 0000-01-01.
    var time: Int64
    /// Whether `local_datetime` is written with milliseconds (`…SS.fff`): in the stored text's
    /// order, `…SS` comes before `…SS.000`.
    var timeHasMillis: Bool
    var day: Int32
    var added: Int64
    var width: Int64?
    var height: Int64?
    var latitude: Double?
    var longitude: Double?
    var duration: Double?
    var make: String?
    var model: String?
    var frameRate: Double?
    var bitRate: Int64?
    var videoCodec: String?
    var audioCodec: String?
    var subtypes: Int64
    var isVideo: Bool
    var isFavorite: Bool
    var isHidden: Bool
    var isDeleted: Bool
    /// A burst's member other than its representative.
    var isBurstExtra: Bool = false
}

/// A record read from the database with the parts kept apart.
struct CatalogRow: Sendable {
    var record: CatalogRecord
    var id: String
    var path: [UInt8]
    /// The file's keywords and the taggers', folded, without repeats.
    var keywords: [String]
}

/// The records column by column: a predicate reads only the columns it tests (a pass over
/// one column of 100,000 records touches 800 KB, not the 14 MB of whole records). Missing
/// integers are `Int64.min`, missing reals NaN (SQLite stores neither); missing text -1.
struct CatalogColumns: Sendable {
    static let noInteger = Int64.min

    var pk = CatalogColumn<Int64>()
    var time = CatalogColumn<Int64>()
    var day = CatalogColumn<Int32>()
    var added = CatalogColumn<Int64>()
    var width = CatalogColumn<Int64>()
    var height = CatalogColumn<Int64>()
    var latitude = CatalogColumn<Double>()
    var longitude = CatalogColumn<Double>()
    var duration = CatalogColumn<Double>()
    /// Indexes into the snapshot's `strings`.
    var make = CatalogColumn<Int32>()
    var model = CatalogColumn<Int32>()
    var subtypes = CatalogColumn<Int64>()
    /// `Flags` bits.
    var flags = CatalogColumn<UInt8>()
    var frameRate = CatalogColumn<Double>()
    var bitRate = CatalogColumn<Int64>()
    /// Indexes into the snapshot's `strings`, as `make`.
    var videoCodec = CatalogColumn<Int32>()
    var audioCodec = CatalogColumn<Int32>()

    enum Flags {
        static let video: UInt8 = 1
        static let favorite: UInt8 = 2
        static let hidden: UInt8 = 4
        static let deleted: UInt8 = 8
        static let millis: UInt8 = 16
        static let burstExtra: UInt8 = 32
    }

    static func flags(_ r: CatalogRecord) -> UInt8 {
        (r.isVideo ? Flags.video : 0) | (r.isFavorite ? Flags.favorite : 0) | (r.isHidden ? Flags.hidden : 0)
            | (r.isDeleted ? Flags.deleted : 0) | (r.timeHasMillis ? Flags.millis : 0) | (r.isBurstExtra ? Flags.burstExtra : 0)
    }

    var count: Int { pk.count }

    /// Every column's memory (to let go of mapped pages).
    var memories: [ColumnMemory] {
        [pk.memory, time.memory, day.memory, added.memory, width.memory, height.memory, latitude.memory, longitude.memory,
         duration.memory, make.memory, model.memory, subtypes.memory, flags.memory, frameRate.memory, bitRate.memory,
         videoCodec.memory, audioCodec.memory].compactMap { $0 }
    }
}

/// The columns being collected in memory, then frozen into `CatalogColumns`.
struct ColumnArrays {
    var pk: [Int64] = [], time: [Int64] = [], day: [Int32] = [], added: [Int64] = [], width: [Int64] = []
    var height: [Int64] = [], latitude: [Double] = [], longitude: [Double] = [], duration: [Double] = []
    var make: [Int32] = [], model: [Int32] = [], subtypes: [Int64] = [], flags: [UInt8] = []
    var frameRate: [Double] = [], bitRate: [Int64] = [], videoCodec: [Int32] = [], audioCodec: [Int32] = []

    /// Appends `r`, its texts interned in `strings`.
    mutating func append(_ r: CatalogRecord, _ strings: inout TextInterner) {
        pk.append(r.pk); time.append(r.time); day.append(r.day); added.append(r.added)
        width.append(r.width ?? CatalogColumns.noInteger); height.append(r.height ?? CatalogColumns.noInteger)
        latitude.append(r.latitude ?? .nan); longitude.append(r.longitude ?? .nan); duration.append(r.duration ?? .nan)
        make.append(strings.intern(r.make)); model.append(strings.intern(r.model)); subtypes.append(r.subtypes)
        flags.append(CatalogColumns.flags(r))
        frameRate.append(r.frameRate ?? .nan); bitRate.append(r.bitRate ?? CatalogColumns.noInteger)
        videoCodec.append(strings.intern(r.videoCodec)); audioCodec.append(strings.intern(r.audioCodec))
    }

    var frozen: CatalogColumns {
        CatalogColumns(pk: CatalogColumn(pk), time: CatalogColumn(time), day: CatalogColumn(day), added: CatalogColumn(added), width: CatalogColumn(width),
                       height: CatalogColumn(height), latitude: CatalogColumn(latitude), longitude: CatalogColumn(longitude),
                       duration: CatalogColumn(duration), make: CatalogColumn(make), model: CatalogColumn(model), subtypes: CatalogColumn(subtypes),
                       flags: CatalogColumn(flags), frameRate: CatalogColumn(frameRate), bitRate: CatalogColumn(bitRate),
                       videoCodec: CatalogColumn(videoCodec), audioCodec: CatalogColumn(audioCodec))
    }
}

/// A byte string per entry in one buffer (no object per string): the paths, over which a
/// predicate runs through contiguous memory, the ids, interned text.
struct ByteTable: Sendable {
    let bytes: CatalogColumn<UInt8>
    /// Where each entry starts; one more for the end of the last.
    let starts: CatalogColumn<Int>

    init(bytes: CatalogColumn<UInt8>, starts: CatalogColumn<Int>) {
        self.bytes = bytes
        self.starts = starts
    }

    /// A table of `entries` made in memory.
    init(_ entries: [[UInt8]]) {
        var bytes: [UInt8] = []
        var starts: [Int] = [0]
        for e in entries {
            bytes.append(contentsOf: e)
            starts.append(bytes.count)
        }
        self.init(bytes: CatalogColumn(bytes), starts: CatalogColumn(starts))
    }

    var count: Int { max(0, starts.count - 1) }

    /// Entry `i`'s bytes, in place.
    func slice(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes.buffer[starts[i]..<starts[i + 1]])
    }

    /// Entry `i` as text (ids are ASCII).
    func string(_ i: Int) -> String { String(decoding: slice(i), as: UTF8.self) }

    /// Whether entry `i` sorts before `other`, byte for byte.
    func precedes(_ i: Int, _ other: some Collection<UInt8>) -> Bool { slice(i).lexicographicallyPrecedes(other) }

    /// Whether entry `i` is `other`.
    func equals(_ i: Int, _ other: some Collection<UInt8>) -> Bool { slice(i).elementsEqual(other) }

    /// The entries that hold `needle`: one search through the whole buffer, an occurrence
    /// counting for the entry it starts in when it ends there too.
    func containing(_ needle: [UInt8]) -> Bitmap {
        guard !needle.isEmpty else { return Bitmap(count: count, filled: true) }
        var words = [UInt64](repeating: 0, count: (count + 63) / 64)
        let b = bytes.buffer
        needle.withUnsafeBufferPointer { n in
            guard let base = b.baseAddress, let nb = n.baseAddress else { return }
            var cursor = 0
            var record = 0
            while cursor < b.count {
                let found = photo_memfind(base + cursor, b.count - cursor, nb, n.count)
                if found < 0 { break }
                let at = cursor + Int(found)
                // The entry the occurrence starts in (entries are in buffer order).
                var lo = record, hi = count - 1
                while lo < hi {
                    let mid = (lo + hi + 1) / 2
                    if starts[mid] <= at { lo = mid } else { hi = mid - 1 }
                }
                record = lo
                if at + n.count <= starts[record + 1] {
                    words[record >> 6] |= 1 << UInt64(record & 63)
                    cursor = starts[record + 1]  // this entry is decided
                } else {
                    cursor = at + 1
                }
            }
        }
        return Bitmap(words: words, count: count)
    }

    /// The entries that pass `test`, given each one's bytes.
    func scan(_ test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bitmap {
        var words = [UInt64](repeating: 0, count: (count + 63) / 64)
        let s = starts.buffer
        let base = bytes.buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        words.withUnsafeMutableBufferPointer { w in
            for i in 0..<count where test(UnsafeBufferPointer(start: base + s[i], count: s[i + 1] - s[i])) {
                w[i >> 6] |= 1 << UInt64(i & 63)
            }
        }
        return Bitmap(words: words, count: count)
    }

    var memories: [ColumnMemory] { [bytes.memory, starts.memory].compactMap { $0 } }
}

/// Each record's keywords: indexes into a table of distinct folded keywords.
struct KeywordLists: Sendable {
    /// The distinct keywords, folded.
    let table: ByteTable
    let refs: CatalogColumn<Int32>
    /// Where each record's refs start; one more for the end of the last.
    let starts: CatalogColumn<Int>

    /// The records with any of `words` (folded).
    func records(withAny words: Set<String>) -> Bitmap {
        let n = max(0, starts.count - 1)
        var wanted = [Bool](repeating: false, count: table.count)
        var any = false
        for k in 0..<table.count where words.contains(table.string(k)) {
            wanted[k] = true
            any = true
        }
        guard any else { return Bitmap(count: n, filled: false) }
        var words = [UInt64](repeating: 0, count: (n + 63) / 64)
        let s = starts.buffer, r = refs.buffer
        wanted.withUnsafeBufferPointer { want in
            for i in 0..<n {
                var k = s[i]
                let end = s[i + 1]
                while k < end {
                    if want[Int(r[k])] {
                        words[i >> 6] |= 1 << UInt64(i & 63)
                        break
                    }
                    k += 1
                }
            }
        }
        return Bitmap(words: words, count: n)
    }

    var memories: [ColumnMemory] { table.memories + [refs.memory, starts.memory].compactMap { $0 } }
}

/// Interns text while records are collected: each distinct value gets the next index.
struct TextInterner {
    var strings: [String] = []
    var index: [String: Int32] = [:]

    mutating func intern(_ text: String?) -> Int32 {
        guard let text else { return -1 }
        if let i = index[text] { return i }
        let i = Int32(strings.count)
        strings.append(text)
        index[text] = i
        return i
    }
}

/// The catalog's records at one change token: immutable, shared by every reader.
final class CatalogSnapshot: Sendable {
    let token: Int64
    /// Every asset (Recently Deleted too), in (path, id) order: a record's index is its place
    /// in the tie-breaking order of every sort.
    let columns: CatalogColumns
    let ids: ByteTable
    let paths: ByteTable
    let keywords: KeywordLists
    /// Folded make and model values.
    let strings: [String]
    /// Per string: its rank in the sorted `strings`.
    let stringRank: [Int32]
    /// The records in id order, to find one by id (made on first use when not given).
    private let byID = Locked<CatalogColumn<Int32>?>(nil)
    /// Where sort orders and value ranks are kept (nil: in memory).
    private let files: CatalogFiles.Generation?
    /// Per sort key, the records in ascending order (made on first use).
    private let orders = Locked<[AssetSortKey: CatalogColumn<Int32>]>([:])
    /// Per sort key, the dense rank of each record's value (made on first use).
    private let valueRankCache = Locked<[AssetSortKey: CatalogColumn<Int32>]>([:])
    /// Recent results: the record indexes a query selects, in its order.
    private let results = Locked<[(AssetQuery, [Int32])]>([])
    /// Results kept per snapshot, at most, and the record indexes they may hold together
    /// (4 MB; the newest result is kept whatever its size).
    static let cachedResults = 16
    static let cachedIndexes = 1 << 20

    init(token: Int64, columns: CatalogColumns, ids: ByteTable, paths: ByteTable, keywords: KeywordLists, strings: [String],
         byID: CatalogColumn<Int32>? = nil, files: CatalogFiles.Generation? = nil) {
        self.token = token
        self.columns = columns
        self.ids = ids
        self.paths = paths
        self.keywords = keywords
        self.strings = strings
        var ranks = [Int32](repeating: 0, count: strings.count)
        let bytes = strings.map { Array($0.utf8) }
        for (r, i) in strings.indices.sorted(by: { bytes[$0].lexicographicallyPrecedes(bytes[$1]) }).enumerated() {
            ranks[i] = Int32(r)
        }
        stringRank = ranks
        self.files = files
        self.byID.withLock { $0 = byID }
    }

    /// How many records (assets) it holds.
    var count: Int { ids.count }

    /// Its files are about to be removed (a newer generation, an invalidation): sort orders it
    /// makes from now on stay in memory instead of leaving files no manifest names.
    func retire() { files?.retire() }

    /// Lets go of mapped pages (a snapshot in memory has none).
    func release() {
        guard files != nil else { return }
        for m in columns.memories + ids.memories + paths.memories + keywords.memories { m.release() }
        for m in orders.withLock({ $0.values.compactMap(\.memory) }) { m.release() }
        for m in valueRankCache.withLock({ $0.values.compactMap(\.memory) }) { m.release() }
        byID.withLock { $0?.memory?.release() }
    }

    /// Record index by id.
    func index(of id: String) -> Int32? {
        let order = idOrder
        let key = Array(id.utf8)
        var lo = 0, hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ids.precedes(Int(order[mid]), key) { lo = mid + 1 } else { hi = mid }
        }
        guard lo < order.count, ids.equals(Int(order[lo]), key) else { return nil }
        return order[lo]
    }

    /// The records in id order, made if needed.
    private var idOrder: CatalogColumn<Int32> {
        if let order = byID.withLock({ $0 }) { return order }
        let table = ids
        let order = CatalogColumn((0..<Int32(count)).sorted { a, b in table.precedes(Int(a), table.slice(Int(b))) })
        byID.withLock { $0 = order }
        return order
    }

    // MARK: Building

    /// The columns a record is read from (the table aliased `a`).
    static let columns = """
        a.pk, a.id, a.path, a.local_datetime, a.day, a.added_at, a.pixel_width, a.pixel_height, a.latitude, a.longitude,
        a.duration, a.make, a.model, a.subtypes, a.media_type, a.is_favorite, a.is_hidden, a.deleted_at IS NOT NULL, a.keywords,
        a.frame_rate, a.bit_rate, a.video_codec, a.audio_codec, a.burst_id IS NOT NULL AND a.represents_burst = 0
        """

    /// Interns the raw make and model texts a statement returns (many rows share a few).
    struct Interner {
        var folded: [String: String] = [:]

        mutating func fold(_ text: String?) -> String? {
            guard let text else { return nil }
            if let f = folded[text] { return f }
            let f = Keywords.folded(text)
            folded[text] = f
            return f
        }
    }

    /// A row selected with `columns`; nil when a value is not in the form the store writes.
    static func row(_ s: Statement, _ interner: inout Interner) -> CatalogRow? {
        guard let (time, millis) = parseLocal(s.bytes(3)) else { return nil }
        let record = CatalogRecord(
            pk: s.int64(0), time: time, timeHasMillis: millis, day: Int32(truncatingIfNeeded: s.int64(4)),
            added: s.int64(5), width: s.isNull(6) ? nil : s.int64(6), height: s.isNull(7) ? nil : s.int64(7),
            latitude: s.optionalDouble(8), longitude: s.optionalDouble(9), duration: s.optionalDouble(10),
            make: interner.fold(s.optionalString(11)), model: interner.fold(s.optionalString(12)),
            frameRate: s.optionalDouble(19), bitRate: s.optionalInt64(20), videoCodec: interner.fold(s.optionalString(21)),
            audioCodec: interner.fold(s.optionalString(22)), subtypes: s.int64(13),
            isVideo: s.string(14) == MediaType.video.rawValue, isFavorite: s.int(15) != 0, isHidden: s.int(16) != 0,
            isDeleted: s.int(17) != 0, isBurstExtra: s.int(23) != 0)
        return CatalogRow(record: record, id: s.string(1), path: s.bytes(2), keywords: folded(Keywords.decode(s.optionalString(18)), []))
    }

    /// `YYYY-MM-DDTHH:MM:SS` or `YYYY-MM-DDTHH:MM:SS.fff` as milliseconds since 0000-01-01 on the
    /// same clock, and whether the milliseconds were written.
    static func parseLocal(_ b: [UInt8]) -> (Int64, Bool)? {
        guard b.count == 19 || (b.count == 23 && b[19] == UInt8(ascii: ".")),
              b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"),
              b[16] == UInt8(ascii: ":")
        else { return nil }
        func digits(_ at: Int, _ n: Int) -> Int? {
            var v = 0
            for i in at..<(at + n) {
                let d = Int(b[i]) - 48
                guard (0...9).contains(d) else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard let y = digits(0, 4), let mo = digits(5, 2), let d = digits(8, 2), let h = digits(11, 2), let mi = digits(14, 2),
              let s = digits(17, 2), (1...12).contains(mo), (1...31).contains(d)
        else { return nil }
        let ms = b.count == 23 ? digits(20, 3) : 0
        guard let ms else { return nil }
        return (milliseconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms), b.count == 23)
    }

    static func milliseconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int) -> Int64 {
        let days = Int64(CivilTime.daysFromCivil(year: year, month: month, day: day) - CivilTime.daysFromCivil(year: 0, month: 1, day: 1))
        return ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60_000 + Int64(second * 1000 + millisecond)
    }

    /// Keywords folded, without repeats, in their first order.
    static func folded(_ words: [String], _ more: [String]) -> [String] {
        var out: [String] = []
        for w in words + more {
            let f = Keywords.folded(w)
            if !out.contains(f) { out.append(f) }
        }
        return out
    }

    /// A snapshot in memory of `rows` (any order).
    static func inMemory(_ rows: [CatalogRow], token: Int64) -> CatalogSnapshot {
        var rows = rows
        rows.sort(by: precedes)
        var columns = ColumnArrays()
        var strings = TextInterner(), words = TextInterner()
        var ids: [[UInt8]] = [], paths: [[UInt8]] = []
        var refs: [Int32] = [], starts: [Int] = [0]
        for r in rows {
            columns.append(r.record, &strings)
            ids.append(Array(r.id.utf8))
            paths.append(r.path)
            for w in r.keywords { refs.append(words.intern(w)) }
            starts.append(refs.count)
        }
        let keywords = KeywordLists(table: ByteTable(words.strings.map { Array($0.utf8) }), refs: CatalogColumn(refs), starts: CatalogColumn(starts))
        return CatalogSnapshot(token: token, columns: columns.frozen, ids: ByteTable(ids), paths: ByteTable(paths), keywords: keywords,
                               strings: strings.strings)
    }

    /// Reads every asset into a snapshot in memory (a reader without a directory for files).
    static func buildInMemory(_ reader: IndexReader, token: Int64) throws(StoreError) -> CatalogSnapshot {
        var rows: [CatalogRow] = []
        var interner = Interner()
        let s = try reader.db.statement("SELECT \(columns) FROM assets a")
        defer { s.reset() }
        while try s.step() {
            guard let r = row(s, &interner) else { throw StoreError.undecodable(table: "assets", key: s.string(1)) }
            rows.append(r)
        }
        let tagged = try taggerKeywords(reader, ids: nil)
        for i in rows.indices { if let more = tagged[rows[i].id] { rows[i].keywords = folded(rows[i].keywords, more) } }
        return inMemory(rows, token: token)
    }

    /// The taggers' keywords by asset id (of `ids`, a JSON array, or of every asset).
    static func taggerKeywords(_ reader: IndexReader, ids: String?) throws(StoreError) -> [String: [String]] {
        var tagged: [String: [String]] = [:]
        let k = try reader.db.statement(ids == nil ? "SELECT asset_id, keyword FROM asset_keywords"
            : "SELECT asset_id, keyword FROM asset_keywords WHERE asset_id IN (SELECT value FROM json_each(:ids))")
        defer { k.reset() }
        if let ids { k.bind(":ids", to: ids) }
        while try k.step() { tagged[k.string(0), default: []].append(k.string(1)) }
        return tagged
    }

    /// The (path, id) order: bytes, then id bytes (as SQLite's `ORDER BY a.path, a.id`).
    static func precedes(_ a: CatalogRow, _ b: CatalogRow) -> Bool {
        if a.path != b.path { return a.path.lexicographicallyPrecedes(b.path) }
        return Array(a.id.utf8).lexicographicallyPrecedes(Array(b.id.utf8))
    }

    // MARK: Queries

    /// The record indexes `query` selects from the library (Recently Deleted never; hidden
    /// assets with `includeHidden`), in its order (capture time when it has no sort).
    func select(_ query: AssetQuery) -> [Int32] {
        if let hit = results.withLock({ $0.first { $0.0 == query }?.1 }) { return hit }
        let includeHidden = query.includeHidden
        let sort = query.sort.descriptors
        let first = sort.first ?? AssetSortDescriptor(.localDateTime)
        // A column at a time into a bitmap; then the key's order picks the matches.
        var selected = CatalogPredicate.evaluate(query.predicate, self)
        let hiding = CatalogColumns.Flags.deleted | (includeHidden ? 0 : CatalogColumns.Flags.hidden)
            | (query.includeAllBurstAssets ? 0 : CatalogColumns.Flags.burstExtra)
        selected.formIntersection(CatalogPredicate.scan(columns.flags) { $0 & hiding == 0 })
        let count = selected.cardinality
        var out: [Int32] = []
        out.reserveCapacity(count)
        if count > 0 {
            let order = ascending(first.key)
            if first.ascending {
                for i in order where selected[Int(i)] { out.append(i) }
            } else {
                // Descending: the non-null part reversed, then the null part reversed (missing
                // values stay last; ties go by path and id descending, as the first key does).
                let nulls = nullStart(order, first.key)
                for i in order[..<nulls].reversed() where selected[Int(i)] { out.append(i) }
                for i in order[nulls...].reversed() where selected[Int(i)] { out.append(i) }
            }
        }
        if sort.count > 1 { sortByTheRest(&out, sort) }
        results.withLock { Self.keep((query, out), in: &$0) }
        return out
    }

    /// Puts a result first in `cache` and drops the oldest beyond `count` results or
    /// `indexes` record indexes in all (never the one just put).
    static func keep(_ result: (AssetQuery, [Int32]), in cache: inout [(AssetQuery, [Int32])],
                     count: Int = cachedResults, indexes: Int = cachedIndexes) {
        cache.insert(result, at: 0)
        var held = cache.reduce(0) { $0 + $1.1.count }
        while cache.count > 1, cache.count > count || held > indexes {
            held -= cache.removeLast().1.count
        }
    }

    /// Where the records without a value for `key` start in its ascending order.
    private func nullStart(_ order: CatalogColumn<Int32>, _ key: AssetSortKey) -> Int {
        guard key.isNullable else { return order.count }
        var lo = 0, hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sortValue(Int(order[mid]), key) == nil { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// Within runs that tie on the first key, orders by the other keys (then path and id in the
    /// first key's direction, which the run's order already is).
    private func sortByTheRest(_ out: inout [Int32], _ sort: [AssetSortDescriptor]) {
        let first = valueRanks(sort[0].key)
        let rest = sort.dropFirst().map { (ranks: valueRanks($0.key), ascending: $0.ascending) }
        var start = 0
        while start < out.count {
            var end = start + 1
            while end < out.count, first[Int(out[start])] == first[Int(out[end])] { end += 1 }
            if end - start > 1 {
                // Stable: equal on every key keeps the tie-breaking order of the run.
                let run = out[start..<end].enumerated().sorted { a, b in
                    for key in rest {
                        let x = key.ranks[Int(a.element)], y = key.ranks[Int(b.element)]
                        if x == y { continue }
                        if x == Int32.max || y == Int32.max { return y == Int32.max }  // missing values last
                        return (x < y) == key.ascending
                    }
                    return a.offset < b.offset
                }
                for (k, item) in run.enumerated() { out[start + k] = item.element }
            }
            start = end
        }
    }

    /// Per record, the rank of its value for `key` among the distinct values (equal values,
    /// equal ranks), `Int32.max` when it has none; made on first use from the key's order.
    func valueRanks(_ key: AssetSortKey) -> CatalogColumn<Int32> {
        if let ranks = valueRankCache.withLock({ $0[key] }) { return ranks }
        let order = ascending(key)
        let fill = { [self] (ranks: UnsafeMutableBufferPointer<Int32>) in
            for i in 0..<ranks.count { ranks[i] = Int32.max }
            var rank: Int32 = -1
            var previous: SortValue?
            for i in order {
                guard let v = sortValue(Int(i), key) else { break }  // the rest have none
                if previous != v {
                    rank += 1
                    previous = v
                }
                ranks[Int(i)] = rank
            }
        }
        let n = count
        let ranks = made("rank-\(key.rawValue)", valid: { $0.allSatisfy { ($0 >= 0 && Int($0) < n) || $0 == Int32.max } }, fill)
        valueRankCache.withLock { $0[key] = ranks }
        return ranks
    }

    /// The records in ascending order of `key` (missing values last; ties by path and id).
    func ascending(_ key: AssetSortKey) -> CatalogColumn<Int32> {
        if let order = orders.withLock({ $0[key] }) { return order }
        let fill = { [self] (order: UnsafeMutableBufferPointer<Int32>) in
            // Records are in path order: that order is the path's, and the tie-breaker of the rest.
            guard key != .path else {
                for i in 0..<order.count { order[i] = Int32(i) }
                return
            }
            // Each value as an unsigned number in the same order, sorted with its record.
            var present: [(UInt64, Int32)] = []
            present.reserveCapacity(count)
            var missing: [Int32] = []
            for i in 0..<count {
                if let k = orderKey(i, key) { present.append((k, Int32(i))) } else { missing.append(Int32(i)) }
            }
            present.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            for (k, item) in present.enumerated() { order[k] = item.1 }
            for (k, i) in missing.enumerated() { order[present.count + k] = i }
        }
        let n = count
        let order = made("order-\(key.rawValue)", valid: { CatalogFiles.isPermutation($0, count: n) }, fill)
        orders.withLock { $0[key] = order }
        return order
    }

    /// A column of `count` Int32 filled by `fill`: in a file of the snapshot's generation (kept
    /// for the next start), or in memory for a snapshot in memory or when the file cannot be made.
    private func made(_ name: String, valid: (CatalogColumn<Int32>) -> Bool,
                      _ fill: (UnsafeMutableBufferPointer<Int32>) -> Void) -> CatalogColumn<Int32> {
        if let files, let column = files.column(name, count: count, valid: valid, fill) { return column }
        var values = [Int32](repeating: 0, count: count)
        values.withUnsafeMutableBufferPointer { fill($0) }
        return CatalogColumn(values)
    }

    /// Record `i`'s value for `key` as an unsigned number in the same order (`-0.0` as `0.0`,
    /// which SQLite holds equal), nil when it has none.
    func orderKey(_ i: Int, _ key: AssetSortKey) -> UInt64? {
        switch sortValue(i, key) {
        case nil: return nil
        case .int(let v): return UInt64(bitPattern: v) ^ (1 << 63)
        case .real(let d):
            let bits = (d == 0 ? 0.0 : d).bitPattern
            return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        }
    }

    /// Makes every sort order (a library's snapshot, as its files are made: the first fetch in
    /// any order does not wait for one).
    /// Stops early when `cancelled` (the rest are made on first use).
    func makeOrders(cancelled: () -> Bool) {
        defer { release() }
        for key in AssetSortKey.allCases where !cancelled() { _ = ascending(key) }
    }

    /// A record's value for `key` as an order-preserving number (nil when it has none).
    func sortValue(_ i: Int, _ key: AssetSortKey) -> SortValue? {
        func int(_ v: Int64) -> SortValue? { v == CatalogColumns.noInteger ? nil : .int(v) }
        func real(_ v: Double) -> SortValue? { v.isNaN ? nil : .real(v) }
        func text(_ m: Int32) -> SortValue? { m < 0 ? nil : .int(Int64(stringRank[Int(m)])) }
        switch key {
        case .localDateTime: return .int(columns.time[i] * 2 + (columns.flags[i] & CatalogColumns.Flags.millis != 0 ? 1 : 0))
        case .addedDate: return .int(columns.added[i])
        case .pixelWidth: return int(columns.width[i])
        case .pixelHeight: return int(columns.height[i])
        case .duration: return real(columns.duration[i])
        case .latitude: return real(columns.latitude[i])
        case .longitude: return real(columns.longitude[i])
        case .make: return text(columns.make[i])
        case .model: return text(columns.model[i])
        case .path: return .int(Int64(i))
        case .mediaType: return .int(columns.flags[i] & CatalogColumns.Flags.video != 0 ? 1 : 0)
        case .isFavorite: return .int(columns.flags[i] & CatalogColumns.Flags.favorite != 0 ? 1 : 0)
        }
    }

    /// Whether record `a` of `s` comes before record `b` of `t` in `sort`'s order (missing
    /// values last; ties by path, then id, in the first key's direction): the order `select`
    /// gives within one snapshot, across two.
    static func before(_ s: CatalogSnapshot, _ a: Int, _ t: CatalogSnapshot, _ b: Int, _ sort: [AssetSortDescriptor]) -> Bool {
        for d in sort {
            let c: Int
            switch d.key {
            case .make, .model:
                let x = d.key == .make ? s.columns.make[a] : s.columns.model[a]
                let y = d.key == .make ? t.columns.make[b] : t.columns.model[b]
                if x < 0 || y < 0 {
                    if (x < 0) == (y < 0) { continue }
                    return y < 0  // missing values last
                }
                c = compareBytes(s.strings[Int(x)].utf8, t.strings[Int(y)].utf8)
            case .path:
                c = compareBytes(s.paths.slice(a), t.paths.slice(b))
            default:
                let x = s.sortValue(a, d.key), y = t.sortValue(b, d.key)
                switch (x, y) {
                case (nil, nil): continue
                case (nil, _): return false
                case (_, nil): return true
                case (let x?, let y?): c = x == y ? 0 : (x < y ? -1 : 1)
                }
            }
            if c != 0 { return (c < 0) == d.ascending }
        }
        let ascending = sort.first?.ascending ?? true
        var c = compareBytes(s.paths.slice(a), t.paths.slice(b))
        if c == 0 { c = compareBytes(s.ids.slice(a), t.ids.slice(b)) }
        return (c < 0) == ascending
    }

    static func compareBytes(_ x: some Sequence<UInt8>, _ y: some Sequence<UInt8>) -> Int {
        var i = x.makeIterator(), j = y.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let p?, let q?): if p != q { return p < q ? -1 : 1 }
            }
        }
    }
}

/// A sort value: integers and reals never meet in one key.
enum SortValue: Comparable, Sendable {
    case int(Int64)
    case real(Double)

    static func < (a: SortValue, b: SortValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y
        case (.real(let x), .real(let y)): return x < y
        case (.int(let x), .real(let y)): return Double(x) < y
        case (.real(let x), .int(let y)): return x < Double(y)
        }
    }
}
