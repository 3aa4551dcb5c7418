import PhotoModel

/// The state one write transaction shares between the writer's parts: what it touched, the
/// assets' states before and after it, the counters it moves, and what it reports to its
/// caller. Made at `BEGIN`, dropped at `COMMIT` or `ROLLBACK`.
final class WriteJob {
    /// The transaction's time (Unix milliseconds): `deleted_at`, `added_at`, new ids.
    let now: Int64
    /// Where asset states are read (for `recordBefore` and `loadAfterStates`).
    private unowned let assets: AssetRows

    /// Groups (directory, base name) whose files changed: recomposed after the file writes.
    var groups = Set<GroupRef>()
    /// Groups files were moved into (recomposed first).
    var movedInto = Set<GroupRef>()
    /// State before the job, of every pre-existing asset the job changed or deleted.
    var before: [Int64: AssetState] = [:]
    /// Every asset pk the job wrote (inserted or updated) or deleted.
    var touched = Set<Int64>()
    /// State after the job (`.some(nil)`: deleted), from what was written or read back at the end.
    var after: [Int64: AssetState?] = [:]
    var removedAlbums: [RemovedAlbum] = []
    /// Where the folder albums of moved directories were (their old lists change too).
    var movedAlbumOrigins: [PathBytes] = []
    /// Assets that lost a file; trashed at the end of the job unless another file holds them.
    var orphanCandidates = Set<Int64>()
    /// Assets a group's recomposition claimed in this job (another group must not take them).
    var claimedAssets = Set<Int64>()
    /// Changes to the `counters` rows, applied once at the end of the job.
    var counters: [String: Int] = [:]
    /// Changes to the per-root asset counters (`root.<id>.assets`), by root id: kept apart so
    /// that a file written costs no string made for its counter.
    var rootAssets: [Int64: Int] = [:]
    /// Assets whose place and zone offset alone changed (`IndexWriter.placeAssets`), in pk
    /// order: reported `updated`, with the user albums holding them; nothing else of theirs
    /// changed, so they are not `touched`.
    var placed: [AssetID] = []
    /// What the caller is told besides the change set.
    var report = ChangeSet.JobReport()
    /// The noise of the job's last new asset id (`AssetID(milliseconds:noise:)`): the next one
    /// counts up from it.
    var idNoise: UInt64?

    init(now: Int64, assets: AssetRows) {
        self.now = now
        self.assets = assets
    }

    func count(_ name: String, _ delta: Int) {
        guard delta != 0 else { return }
        counters[name, default: 0] += delta
    }

    /// Counts assets of a media type in or out (`assets.image`, `assets.video`).
    func countAssets(_ type: MediaType, _ delta: Int) {
        count(type == .image ? "assets.image" : "assets.video", delta)
    }

    /// Counts assets in or out of a root.
    func countAssets(root: Int64, _ delta: Int) {
        rootAssets[root, default: 0] += delta
    }

    /// Every counter change, by counter name.
    var counterDeltas: [String: Int] {
        var all = counters
        for (root, delta) in rootAssets where delta != 0 { all["root.\(root).assets", default: 0] += delta }
        return all
    }

    /// Marks an asset as touched, reading its state before the job the first time.
    func recordBefore(_ pk: Int64) throws(StoreError) {
        touched.insert(pk)
        guard before[pk] == nil, let state = try assets.state(pk: pk) else { return }
        before[pk] = state
    }

    /// Fills the states after the job that were not recorded when written (deleted or moved).
    func loadAfterStates() throws(StoreError) {
        for pk in touched where after[pk] == nil { after[pk] = .some(try assets.state(pk: pk)) }
    }

    /// The directories whose folder album may have changed.
    var albumDirectories: Set<Int64> {
        var dirs = Set<Int64>()
        for (_, b) in before { if let d = b.directory { dirs.insert(d) } }
        for (_, a) in after { if let d = a?.directory { dirs.insert(d) } }
        return dirs
    }

    /// The asset part of the change set.
    func assetEvents(into changes: inout ChangeSet) {
        for pk in touched.sorted() {
            switch (before[pk], after[pk] ?? nil) {
            case (nil, let a?): changes.inserted.append(a.member.id)
            case (_?, let a?): changes.updated.append(a.member.id)
            case (let b?, nil): changes.deleted.append(b.member.id)
            case (nil, nil): break
            }
        }
        changes.updated += placed
    }

    /// By day, the places (row ids) of the visible assets the job added to it; nil for a day
    /// it also removed a visible asset from or changed one of (`PlaceRows.retitle` then counts
    /// the day again).
    func placesAdded() -> [Int: [Int64]?] {
        var changed = Set<Int>()
        var added: [Int: [Int64]] = [:]
        for pk in touched {
            if let b = before[pk], b.isVisible { changed.insert(b.member.day) }
            guard let a = after[pk] ?? nil, a.isVisible else { continue }
            if let place = a.placeID { added[a.member.day, default: []].append(place) } else if added[a.member.day] == nil {
                added[a.member.day] = []
            }
        }
        var result: [Int: [Int64]?] = [:]
        for (day, places) in added { result[day] = changed.contains(day) ? .some(nil) : .some(places) }
        for day in changed { result[day] = .some(nil) }
        return result
    }

    /// The moments part: old members of visible assets leave, new ones join.
    func momentChange() -> MomentChange {
        var change = MomentChange()
        for pk in touched.sorted() {
            if let b = before[pk], b.isVisible { change.removed.append(b.member) }
            if let a = after[pk] ?? nil, a.isVisible { change.added.append(a.member) }
        }
        return change
    }
}

/// A group of files of one directory that share a base name.
struct GroupRef: Hashable {
    var directory: Int64
    var key: [UInt8]
    /// The directory's path (determined by `directory`, so left out of equality and hashing).
    var path: PathBytes

    init(directory: Int64, name: [UInt8], path: PathBytes) {
        self.directory = directory
        self.key = ResourcePairing.groupKey(of: name)
        self.path = path
    }

    static func == (a: GroupRef, b: GroupRef) -> Bool { a.directory == b.directory && a.key == b.key }

    func hash(into h: inout Hasher) {
        h.combine(directory)
        key.withUnsafeBytes { h.combine(bytes: $0) }
    }
}

/// What collections need to know of an asset before and after a job.
struct AssetState {
    var pk: Int64
    var root: Int64
    /// Nil once the asset's directory is gone (an asset in Recently Deleted).
    var directory: Int64?
    var member: MomentMember
    var facts: SmartAlbumFacts
    /// The burst it belongs to (`burst_id`).
    var burst: String?
    /// Its place's row (`place_id`).
    var placeID: Int64?

    /// Whether the asset counts in moments and albums (not hidden, not in Recently Deleted).
    var isVisible: Bool { !facts.isHidden && facts.deletedAt == nil }
}

/// A folder album removed with its directory.
struct RemovedAlbum {
    var path: PathBytes
    var albumID: String
}

/// A SplitMix64 generator seeded from the system's: ids need uniqueness, not secrecy, and a
/// `getrandom` call per asset showed in bulk-index profiles.
struct IDNoise: RandomNumberGenerator {
    var state: UInt64

    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
