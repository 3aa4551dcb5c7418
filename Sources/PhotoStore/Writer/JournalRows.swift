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
        insert.bind(":assetsInserted", to: JournalIDs.encode(changes.inserted))
        insert.bind(":assetsUpdated", to: JournalIDs.encode(changes.updated))
        insert.bind(":assetsDeleted", to: JournalIDs.encode(changes.deleted))
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
