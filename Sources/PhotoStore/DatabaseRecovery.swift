#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem

/// A database found damaged at start: the file was moved aside, a fresh one made, and the
/// index is rebuilt from the library; user state comes back from the backup
/// (`UserStateBackup`). Recorded in the fresh database's `meta` table, so that the status
/// tells of it and a restore interrupted by a crash is resumed at the next start.
public struct DatabaseRecovery: Sendable, Hashable {
    public enum State: String, Sendable {
        /// Waiting for the rebuild, then the restore.
        case pending
        /// The backup's user state was re-attached.
        case restored
        /// There was no backup: user state is lost.
        case noBackup
        /// The backup could not be read or applied (`failure` says why).
        case failed
    }

    /// When the damage was found (milliseconds since 1970).
    public var at: Int64
    /// What was wrong (SQLite's message or `quick_check`'s first finding).
    public var reason: String
    /// Where the damaged database file now is (its -wal and -shm next to it); empty when the
    /// database was missing.
    public var damagedPath: String
    /// The backup the restore reads: a hard link to the backup as it was at the damage, which
    /// later backups of the fresh database do not replace.
    public var backupPath: String?
    public var state: State
    public var report: UserStateRestoreReport?
    public var failure: String?

    public init(at: Int64, reason: String, damagedPath: String, backupPath: String?, state: State) {
        self.at = at
        self.reason = reason
        self.damagedPath = damagedPath
        self.backupPath = backupPath
        self.state = state
    }
}

extension Database {
    /// Opens the database, and when it is damaged (not a database, or `PRAGMA quick_check`
    /// finds a fault; the check is skipped for a file exactly as a clean stop sealed it) moves it aside as `<database>.corrupt-<time>` and creates a fresh one.
    /// Returns the recovery when one began now; one still pending from an earlier start is
    /// in `recovery()`. Other errors (locked, newer schema) are thrown as they are.
    public static func openRecovering(path: String, options: Options = Options(),
                                      now: Int64) throws(StoreError) -> (Database, DatabaseRecovery?) {
        var reason: String
        let backup = UserStateBackup.path(forDatabase: path).string
        // No database but a backup: the file was deleted or lost; the backup must not be
        // replaced by an export of the empty index, so this is a recovery too.
        if access(path, F_OK) != 0, access(backup, F_OK) == 0 {
            let kept = "\(path).missing-\(now).userstate.json"
            guard link(backup, kept) == 0 else {
                throw StoreError(code: .cannotOpen, message: "the database '\(path)' is missing and its user-state backup cannot be kept: "
                                     + SystemError(call: "link", errno: errno, context: kept).description)
            }
            let database = try Database(path: path, options: options)
            let recovery = DatabaseRecovery(at: now, reason: "the database file was missing", damagedPath: "",
                                            backupPath: kept, state: .pending)
            try database.record(recovery)
            return (database, recovery)
        }
        do {
            let database = try Database(path: path, options: options)
            // Unchanged since a clean stop: nothing damaged it while photod was away.
            if database.openedSealed { return (database, nil) }
            guard let fault = try database.quickCheck() else { return (database, nil) }
            reason = fault
        } catch where error.code == .corrupt {
            reason = error.message
        }
        // The damaged database is closed (and unlocked) here: nothing else holds it.
        let damaged = "\(path).corrupt-\(now)"
        for suffix in ["", "-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            guard rename(path + suffix, damaged + suffix) == 0 else {
                throw StoreError(code: .cannotOpen, message: "the database '\(path)' is damaged (\(reason)) and cannot be moved aside: "
                                     + SystemError(call: "rename", errno: errno, context: path + suffix).description)
            }
        }
        // Keep the backup as it was now: the fresh database's own backups replace the file.
        let kept = damaged + ".userstate.json"
        var backupPath: String?
        if access(backup, F_OK) == 0 {
            if link(backup, kept) == 0 {
                backupPath = kept
            } else {
                throw StoreError(code: .cannotOpen, message: "the database '\(path)' is damaged (\(reason)) and its user-state backup "
                                     + "cannot be kept: " + SystemError(call: "link", errno: errno, context: kept).description)
            }
        }
        try? AtomicFile.syncDirectory(PathBytes(path).parent)
        let database = try Database(path: path, options: options)
        let recovery = DatabaseRecovery(at: now, reason: reason, damagedPath: damaged, backupPath: backupPath,
                                        state: backupPath == nil ? .noBackup : .pending)
        try database.record(recovery)
        return (database, recovery)
    }

    /// `PRAGMA quick_check`: nil when the database is sound, else the first fault found.
    /// Reads every page once (about a second per few hundred MB).
    public func quickCheck() throws(StoreError) -> String? {
        do {
            return try write { w in
                let s = try w.connection.statement("PRAGMA quick_check")
                defer { s.reset() }
                guard try s.step() else { return nil }
                let first = s.string(0)
                return first == "ok" ? nil : first
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .sqlite, message: "\(error)")
        }
    }

    /// Records (or updates) the recovery in the `meta` table.
    public func record(_ recovery: DatabaseRecovery) throws(StoreError) {
        var values: [(String, SQLValue)] = [
            ("recovery.at", .integer(recovery.at)), ("recovery.reason", .text(recovery.reason)),
            ("recovery.damaged", .text(recovery.damagedPath)), ("recovery.backup", recovery.backupPath.map { .text($0) } ?? .null),
            ("recovery.state", .text(recovery.state.rawValue)), ("recovery.failure", recovery.failure.map { .text($0) } ?? .null),
        ]
        if let r = recovery.report {
            for (name, value) in Self.reportFields(r) { values.append(("recovery.report.\(name)", .integer(Int64(value)))) }
        }
        do {
            try write { w in
                try w.connection.transaction { () throws(StoreError) in
                    let s = try w.connection.statement("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")
                    for (key, value) in values {
                        s.reset()
                        try s.bind([.text(key), value])
                        try s.run()
                    }
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .sqlite, message: "\(error)")
        }
    }

    /// The recovery this database was made by, if any.
    public func recovery() throws(StoreError) -> DatabaseRecovery? {
        do {
            return try read { r in try r.recovery() }
        } catch {
            throw StoreError.wrapping(error)
        }
    }

    static func reportFields(_ r: UserStateRestoreReport) -> [(String, Int)] {
        [("matched", r.matched), ("matchedByIdentity", r.matchedByIdentity), ("matchedByFingerprint", r.matchedByFingerprint),
         ("matchedByPath", r.matchedByPath), ("notFound", r.notFound), ("favorites", r.favorites), ("hidden", r.hidden),
         ("folders", r.folders), ("albums", r.albums), ("albumMembers", r.albumMembers), ("keywords", r.keywords)]
    }
}

extension IndexReader {
    /// The recovery recorded in `meta`, if any.
    public func recovery() throws(StoreError) -> DatabaseRecovery? {
        var values: [String: SQLValue] = [:]
        let s = try db.statement("SELECT key, value FROM meta WHERE key LIKE 'recovery.%'")
        defer { s.reset() }
        while try s.step() { values[s.string(0)] = s.value(1) }
        guard let at = values["recovery.at"]?.int64, let damaged = values["recovery.damaged"]?.string,
              let state = values["recovery.state"]?.string.flatMap(DatabaseRecovery.State.init(rawValue:)) else { return nil }
        var recovery = DatabaseRecovery(at: at, reason: values["recovery.reason"]?.string ?? "", damagedPath: damaged,
                                        backupPath: values["recovery.backup"]?.string, state: state)
        recovery.failure = values["recovery.failure"]?.string
        if values["recovery.report.matched"] != nil {
            var r = UserStateRestoreReport()
            func n(_ name: String) -> Int { Int(values["recovery.report.\(name)"]?.int64 ?? 0) }
            r.matched = n("matched")
            r.matchedByIdentity = n("matchedByIdentity")
            r.matchedByFingerprint = n("matchedByFingerprint")
            r.matchedByPath = n("matchedByPath")
            r.notFound = n("notFound")
            r.favorites = n("favorites")
            r.hidden = n("hidden")
            r.folders = n("folders")
            r.albums = n("albums")
            r.albumMembers = n("albumMembers")
            r.keywords = n("keywords")
            recovery.report = r
        }
        return recovery
    }
}
