import PhotoModel

/// What one committed write changed, as clients see it: the assets inserted, updated and
/// deleted, and the collections (moments, folder albums, collection lists, smart albums, user
/// albums) that appeared, changed or went. The writer returns it; the journal records it with
/// its token; the change feed sends it. One type from the writer to the socket.
public struct ChangeSet: Sendable, Hashable {
    /// The journal's token for it (nil when nothing a client could see changed: not recorded).
    public var token: Int64?
    /// When it was committed (Unix milliseconds, UTC).
    public var time: Int64 = 0
    public var inserted: [AssetID] = []
    public var updated: [AssetID] = []
    public var deleted: [AssetID] = []
    /// Collection ids.
    public var collectionsInserted: [String] = []
    public var collectionsUpdated: [String] = []
    public var collectionsDeleted: [String] = []
    /// What the write tells its caller besides (not journaled, not sent to clients).
    public var report = JobReport()

    public init(token: Int64? = nil, time: Int64 = 0, inserted: [AssetID] = [], updated: [AssetID] = [],
                deleted: [AssetID] = [], collectionsInserted: [String] = [], collectionsUpdated: [String] = [],
                collectionsDeleted: [String] = []) {
        self.token = token
        self.time = time
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.collectionsInserted = collectionsInserted
        self.collectionsUpdated = collectionsUpdated
        self.collectionsDeleted = collectionsDeleted
    }

    /// What a sort job reports to the pipeline that submitted it.
    public struct JobReport: Sendable, Hashable {
        /// Per-file errors recorded (for every batch merged into the job).
        public var errors = 0
        /// Files a move or restore named that the index did not know: read them.
        public var unresolvedFiles: [PathBytes] = []
        /// Directories a move named that the index did not know: scan them.
        public var unresolvedDirectories: [PathBytes] = []
        public init() {}
    }

    /// Whether nothing a client could see changed.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && collectionsInserted.isEmpty
            && collectionsUpdated.isEmpty && collectionsDeleted.isEmpty
    }

    /// Every collection id it names.
    public var collections: [String] { collectionsInserted + collectionsUpdated + collectionsDeleted }

    /// Adds collections another part of the write changed (each id once per list).
    mutating func add(collections other: ChangeSet) {
        collectionsInserted += other.collectionsInserted.filter { !collectionsInserted.contains($0) }
        collectionsUpdated += other.collectionsUpdated.filter { !collectionsUpdated.contains($0) }
        collectionsDeleted += other.collectionsDeleted.filter { !collectionsDeleted.contains($0) }
    }
}
