@preconcurrency import Dispatch
import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoWire

/// Keeps `<database>.userstate.json` up to date: after a commit, at most once per `interval`,
/// the user state is exported and, when it differs from what was last written, the file is
/// replaced atomically. Flushed at shutdown. Paused while a recovery waits to restore from
/// the file (an export of the half-rebuilt database must not replace it).
final class UserStateBackupService: Service {
    private let database: Database
    private let path: PathBytes
    private let logger: Logger
    private let interval: Duration
    private let queue = DispatchQueue(label: "photod.backup")
    private let now: @Sendable () -> Int64

    private struct State {
        var dirty = false
        var scheduled = false
        var paused = false
        var last: UserStateBackup?
        var failing = false
    }
    private let state = Locked(State())

    init(database: Database, logger: Logger, interval: Duration = .seconds(1),
         now: @escaping @Sendable () -> Int64 = { WallClock.milliseconds() }) {
        self.database = database
        self.path = UserStateBackup.path(forDatabase: database.path)
        self.logger = logger
        self.interval = interval
        self.now = now
    }

    /// Something was committed: the backup is refreshed within `interval` (one export for a
    /// burst of writes).
    func noteChange() {
        let schedule = state.withLock { s -> Bool in
            s.dirty = true
            guard !s.paused, !s.scheduled else { return false }
            s.scheduled = true
            return true
        }
        guard schedule else { return }
        let (seconds, attoseconds) = interval.components
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))) { [self] in
            state.withLock { $0.scheduled = false }
            flushNow()
        }
    }

    /// Stops writing until `resume()` (a recovery's restore is pending).
    func pause() { state.withLock { $0.paused = true } }

    /// Writes again, starting with a fresh export.
    func resume() {
        state.withLock { $0.paused = false }
        noteChange()
    }

    func start() {}

    /// Writes what is pending now and waits for it (at shutdown, after the last commit).
    func stop() {
        queue.sync { flushNow() }
    }

    /// On the queue: exports and writes when the state changed.
    private func flushNow() {
        let go = state.withLock { s -> Bool in
            guard s.dirty, !s.paused else { return false }
            s.dirty = false
            return true
        }
        guard go else { return }
        do {
            let backup = try database.read { try $0.exportUserState(now: now()) }
            if let last = state.withLock({ $0.last }), last.sameState(as: backup) { return }
            try AtomicFile.write(backup.encoded(), to: path)
            let recovered = state.withLock { s -> Bool in
                s.last = backup
                defer { s.failing = false }
                return s.failing
            }
            if recovered { logger.notice("the user-state backup '\(path)' is written again") }
            logger.debug("wrote the user-state backup: \(backup.assets.count) assets, \(backup.albums.count) albums, "
                         + "\(backup.folders.count) folders", [("backup.path", path.string), ("change.token", String(backup.token))])
        } catch {
            // Kept dirty: the next commit tries again. Said once, not per commit.
            let first = state.withLock { s -> Bool in
                s.dirty = true
                defer { s.failing = true }
                return !s.failing
            }
            if first {
                logger.error("cannot write the user-state backup '\(path)' (favorites, albums and keywords are "
                             + "still safe in the database; retrying after the next change): \(error)")
            }
        }
    }
}

/// Finishes a recovery from a damaged database: once the first scan has rebuilt the index,
/// re-attaches the user state from the backup kept at the damage, records the outcome in the
/// database (for `library.status`) and in the log, then lets the backup writer run again. A
/// service with a thread of its own while a recovery is pending; nothing otherwise.
final class RecoveryRestorer: Service {
    /// The largest user-state backup read at a recovery (a million favorites is about 200 MB).
    static let maxBackupBytes = 1 << 30

    let database: Database
    let live: LiveLoop
    let sortQueue: SortQueue
    let backup: UserStateBackupService
    let logger: Logger
    /// Signalled by `stop`: the thread waits for the first scan no longer.
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = Locked<DispatchSemaphore?>(nil)

    init(database: Database, live: LiveLoop, sortQueue: SortQueue, backup: UserStateBackupService, logger: Logger) {
        self.database = database
        self.live = live
        self.sortQueue = sortQueue
        self.backup = backup
        self.logger = logger
    }

    /// Starts a thread that waits for the first scan, when a recovery is pending.
    func start() {
        let pending: DatabaseRecovery
        do {
            guard let r = try database.recovery(), r.state == .pending else { return }
            pending = r
        } catch {
            logger.error("cannot read the recovery record: \(error)")
            return
        }
        backup.pause()
        let done = DispatchSemaphore(value: 0)
        finished.withLock { $0 = done }
        spawnThread("photod-recover") { [self] in
            // The first scan ends with `started`: checked every 50 ms (a once-only wait), or
            // until photod stops (then the recovery stays pending for the next start).
            while !live.status.started {
                if stopped.wait(timeout: .now() + .milliseconds(50)) == .success {
                    done.signal()
                    return
                }
            }
            Self.restore(pending, database: database, sortQueue: sortQueue, backup: backup, logger: logger)
            done.signal()
        }
    }

    func stop() {
        stopped.signal()
        finished.withLock { $0 }?.wait()
    }

    private static func restore(_ pending: DatabaseRecovery, database: Database, sortQueue: SortQueue,
                                backup: UserStateBackupService, logger: Logger) {
        var recovery = pending
        let metadata = [("database.damaged", pending.damagedPath), ("backup.path", pending.backupPath ?? "")]
        do {
            let bytes = try FileDescriptor.readAll(PathBytes(pending.backupPath ?? ""), limit: maxBackupBytes)
            let state = try UserStateBackup.decode(bytes)
            let done = DispatchSemaphore(value: 0)
            let outcome = Locked<Result<UserStateRestoreReport, any Error>?>(nil)
            sortQueue.submit(operation: { writer, now in
                do {
                    let (summary, report) = try writer.restoreUserState(state, now: now)
                    outcome.withLock { $0 = .success(report) }
                    return summary
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                    throw error
                }
            }, done: { _ in done.signal() })
            done.wait()
            switch outcome.withLock({ $0 }) {
            case .success(let report)?:
                recovery.state = .restored
                recovery.report = report
                logger.error("the damaged database was replaced by a rebuilt index; restored the user state from the backup: "
                             + "\(report.favorites) favorites, \(report.hidden) hidden, \(report.albums) albums with "
                             + "\(report.albumMembers) members, \(report.folders) folders, \(report.keywords) keywords; "
                             + "\(report.matched) assets found again, \(report.notFound) not found in the library", metadata)
            case .failure(let error)?: throw error
            case nil: return  // photod is stopping: still pending, the next start restores
            }
        } catch {
            recovery.state = .failed
            recovery.failure = "\(error)"
            logger.error("cannot restore the user state from the backup '\(pending.backupPath ?? "")': \(error); "
                         + "the backup is kept for another try", metadata)
        }
        do {
            try database.record(recovery)
        } catch {
            logger.error("cannot record the recovery's outcome: \(error)")
        }
        backup.resume()
    }
}


extension Methods {
    /// `library.status`'s `recovery`: the damaged database this one replaced and what was
    /// restored (null when the database was never recovered).
    func recoveryStatus() -> JSONValue {
        guard let r = try? database.recovery() else { return .null }
        var o = JSONObject()
        o["at"] = .int(r.at)
        o["reason"] = .string(r.reason)
        o["damagedFile"] = r.damagedPath.isEmpty ? .null : .string(r.damagedPath)
        o["backupFile"] = r.backupPath.map { .string($0) } ?? .null
        o["state"] = .string(r.state.rawValue)
        o["failure"] = r.failure.map { .string($0) } ?? .null
        if let report = r.report {
            var restored = JSONObject()
            restored["favorites"] = .int(Int64(report.favorites))
            restored["hidden"] = .int(Int64(report.hidden))
            restored["albums"] = .int(Int64(report.albums))
            restored["albumMembers"] = .int(Int64(report.albumMembers))
            restored["folders"] = .int(Int64(report.folders))
            restored["keywords"] = .int(Int64(report.keywords))
            restored["assetsFound"] = .int(Int64(report.matched))
            restored["assetsNotFound"] = .int(Int64(report.notFound))
            o["restored"] = .object(restored)
        } else {
            o["restored"] = .null
        }
        return .object(o)
    }
}
