import PhotoModel

/// The writer's part for the journal and the counters: records a job's change set with its
/// token, and applies the job's counter changes (`library.status` reads them; no count scans
/// the library).
final class JournalRows {
    let db: Connection

    init(_ db: Connection) { self.db = db }

    /// Records the change set unless it is empty; returns it with its token and time.
    func record(_ changes: ChangeSet, now: Int64) throws(StoreError) -> ChangeSet {
        guard !changes.isEmpty else { return changes }
        let insert = try db.statement("""
            INSERT INTO changes (time, assets_inserted, assets_updated, assets_deleted, collections_inserted,
                                 collections_updated, collections_deleted)
            VALUES (:time, :assetsInserted, :assetsUpdated, :assetsDeleted, :collectionsInserted,
                    :collectionsUpdated, :collectionsDeleted)
            """)
        insert.bind(":time", to: now)
        insert.bind(":assetsInserted", to: changes.inserted.map(\.rawValue).joined(separator: ","))
        insert.bind(":assetsUpdated", to: changes.updated.map(\.rawValue).joined(separator: ","))
        insert.bind(":assetsDeleted", to: changes.deleted.map(\.rawValue).joined(separator: ","))
        insert.bind(":collectionsInserted", to: changes.collectionsInserted.joined(separator: ","))
        insert.bind(":collectionsUpdated", to: changes.collectionsUpdated.joined(separator: ","))
        insert.bind(":collectionsDeleted", to: changes.collectionsDeleted.joined(separator: ","))
        try insert.run()
        var recorded = changes
        recorded.token = db.lastInsertRowID
        recorded.time = now
        return recorded
    }

    /// Adds a job's deltas to the counters (per-root counters come and go with roots: they are
    /// created on first use).
    func apply(counters deltas: [String: Int]) throws(StoreError) {
        let s = try db.statement("""
            INSERT INTO counters (name, value) VALUES (:name, :delta) ON CONFLICT (name) DO UPDATE SET value = value + :delta
            """)
        for (name, delta) in deltas where delta != 0 {
            s.bind(":delta", to: delta)
            s.bind(":name", to: name)
            try s.run()
        }
    }
}
