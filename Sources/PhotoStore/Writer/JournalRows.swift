import PhotoModel

/// How a change set's asset ids are stored: comma-separated, each after the first that
/// shares at least two leading characters with the one before it written as a capital letter
/// (`A` + the shared length) and the rest (`a_3ocubdwat4ud23rt7v3o,Lgsuo6k5updb`). Ids of one
/// job share their time digits: a bulk index's lists are half as long. Asset ids never begin
/// with a capital letter; lists written before migration 008 (every id whole) read the same.
enum JournalIDs {
    static func encode(_ ids: [AssetID]) -> String {
        var out: [UInt8] = []
        var previous: [UInt8] = []
        for id in ids {
            let bytes = Array(id.rawValue.utf8)
            var shared = 0
            while shared < min(25, bytes.count, previous.count), bytes[shared] == previous[shared] { shared += 1 }
            if !out.isEmpty { out.append(UInt8(ascii: ",")) }
            if shared >= 2 {
                out.append(UInt8(ascii: "A") + UInt8(shared))
                out += bytes[shared...]
            } else {
                out += bytes
            }
            previous = bytes
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The ids of a stored list; nil when it is not one this build writes.
    static func decode(_ text: String) -> [AssetID]? {
        guard !text.isEmpty else { return [] }
        var ids: [AssetID] = []
        var previous: [UInt8] = []
        for element in text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            var bytes = Array(element)
            if let first = bytes.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") {
                let shared = Int(first - UInt8(ascii: "A"))
                guard shared <= previous.count else { return nil }
                bytes = Array(previous[..<shared]) + bytes.dropFirst()
            }
            guard let id = AssetID(rawValue: String(decoding: bytes, as: UTF8.self)) else { return nil }
            ids.append(id)
            previous = bytes
        }
        return ids
    }
}

/// The writer's part for the journal and the counters: records a job's change set with its
/// token, and applies the job's counter changes (`library.status` reads them; no count scans
/// the library).
final class JournalRows {
    let db: Connection
    /// The highest token the journal may hand out before saying so on disk again (meta
    /// `journal.reserved`), cached; nil until read.
    private var reserved: Int64?
    /// Tokens reserved at once: one durable commit every so many change sets.
    static let reservation: Int64 = 10_000

    init(_ db: Connection) { self.db = db }

    /// Forgets the cached reservation (after a rollback).
    func forget() { reserved = nil }

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
        insert.bind(":assetsInserted", to: JournalIDs.encode(changes.inserted))
        insert.bind(":assetsUpdated", to: JournalIDs.encode(changes.updated))
        insert.bind(":assetsDeleted", to: JournalIDs.encode(changes.deleted))
        insert.bind(":collectionsInserted", to: changes.collectionsInserted.joined(separator: ","))
        insert.bind(":collectionsUpdated", to: changes.collectionsUpdated.joined(separator: ","))
        insert.bind(":collectionsDeleted", to: changes.collectionsDeleted.joined(separator: ","))
        try insert.run()
        let token = db.lastInsertRowID
        try reserve(through: token)
        var recorded = changes
        recorded.token = token
        recorded.time = now
        return recorded
    }

    /// Whether the next change set's token is past the tokens reserved on disk, so that the
    /// job recording it must commit durably (`IndexWriter.commit` asks before it begins: SQLite
    /// sets a commit's durability outside the transaction only).
    func reservationDue() throws(StoreError) -> Bool {
        let next = (try db.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").int64 ?? 0) + 1
        return next > (try reservedToken())
    }

    private func reservedToken() throws(StoreError) -> Int64 {
        if let reserved { return reserved }
        let read = try IndexReader(db).metaInteger("journal.reserved") ?? 0
        reserved = read
        return read
    }

    /// Makes sure `token` is within the tokens reserved on disk: past the reservation, the
    /// next block is reserved in this transaction, which then commits durably
    /// (`reservationDue`) before its change set can be sent. After a stop that was not clean,
    /// the journal goes on past every reserved token (`Database.skipUndoneTokens`), so a token
    /// a subscriber was sent and the power took back is never handed out again for other
    /// change sets.
    private func reserve(through token: Int64) throws(StoreError) {
        guard token > (try reservedToken()) else { return }
        let next = token + Self.reservation - 1
        let s = try db.statement("INSERT OR REPLACE INTO meta (key, value) VALUES ('journal.reserved', :value)")
        s.bind(":value", to: next)
        try s.run()
        reserved = next
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
