import PhotoModel

/// Where the journal stands: the newest token, and the oldest token a client may still resume
/// from (change sets up to `floor` were pruned).
public struct JournalBounds: Sendable, Hashable {
    /// The newest token handed out (0 before the first change set).
    public var current: Int64
    /// `changes.since(t)` is answerable for `floor <= t <= current`.
    public var floor: Int64

    public init(current: Int64, floor: Int64) {
        self.current = current
        self.floor = floor
    }
}

extension IndexReader {
    /// The journal's bounds, on this connection's snapshot.
    public func journalBounds() throws(StoreError) -> JournalBounds {
        // AUTOINCREMENT keeps the highest token ever handed out in sqlite_sequence, even when
        // every row has been pruned.
        let current = try db.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").int64 ?? 0
        let oldest = try db.scalar("SELECT min(token) FROM changes").int64
        return JournalBounds(current: current, floor: oldest.map { $0 - 1 } ?? current)
    }

    /// Whether a client holding `token` may resume from it: it is within `bounds` and names a
    /// change set the journal holds (or the journal's ends). A token in no row between them is
    /// one an unclean stop took back (`Database.skipUndoneTokens`).
    public func resumable(_ token: Int64, in bounds: JournalBounds) throws(StoreError) -> Bool {
        guard token >= bounds.floor, token <= bounds.current else { return false }
        if token == bounds.floor || token == bounds.current { return true }
        return try db.scalar("SELECT 1 FROM changes WHERE token = ?1", .integer(token)).int64 != nil
    }

    /// Change sets after `token`, oldest first, at most `limit`.
    public func changes(after token: Int64, limit: Int) throws(StoreError) -> [ChangeSet] {
        let s = try db.statement("""
            SELECT token, time, assets_inserted, assets_updated, assets_deleted, collections_inserted,
                   collections_updated, collections_deleted
            FROM changes WHERE token > :token ORDER BY token LIMIT :limit
            """)
        defer { s.reset() }
        s.bind(":token", to: token)
        s.bind(":limit", to: limit)
        func ids(_ column: Int32) -> [String] {
            let text = s.string(column)
            return text.isEmpty ? [] : text.split(separator: ",").map(String.init)
        }
        var result: [ChangeSet] = []
        while try s.step() {
            let token = s.int64(0)
            func assets(_ column: Int32) throws(StoreError) -> [AssetID] {
                guard let ids = JournalIDs.decode(s.string(column)) else {
                    throw StoreError.undecodable(table: "changes", key: String(token))
                }
                return ids
            }
            result.append(ChangeSet(token: token, time: s.int64(1), inserted: try assets(2), updated: try assets(3),
                                    deleted: try assets(4), collectionsInserted: ids(5), collectionsUpdated: ids(6),
                                    collectionsDeleted: ids(7)))
        }
        return result
    }

    /// Of `ids`, the assets that exist now with this media type.
    public func assetIDs(_ ids: [String], mediaType: MediaType) throws(StoreError) -> Set<String> {
        guard !ids.isEmpty else { return [] }
        var found = Set<String>()
        let s = try db.statement("SELECT 1 FROM assets WHERE id = :id AND media_type = :mediaType")
        defer { s.reset() }
        for id in ids {
            s.bind(":id", to: id)
            s.bind(":mediaType", to: mediaType.rawValue)
            if try s.step() { found.insert(id) }
            s.reset()
        }
        return found
    }
}

extension IndexWriter {
    /// Drops the oldest change sets beyond `keep` and those committed before `before` (Unix
    /// ms), always keeping the newest one; returns how many were dropped. A client holding an
    /// older token is told `tokenExpired` and refetches.
    @discardableResult
    public func pruneJournal(keep: Int, before: Int64) throws(StoreError) -> Int {
        try db.transaction { () throws(StoreError) in
            // Always a prefix of the tokens (a clock that went back must not punch holes in
            // the middle: `floor` assumes the kept tokens are contiguous).
            let s = try db.statement("""
                DELETE FROM changes WHERE token < (SELECT max(token) FROM changes)
                    AND token <= max((SELECT max(token) FROM changes) - :keep,
                                     coalesce((SELECT max(token) FROM changes WHERE time < :before), 0))
                """)
            s.bind(":keep", to: max(1, keep))
            s.bind(":before", to: before)
            try s.run()
            return db.changes
        }
    }
}
