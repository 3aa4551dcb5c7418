@preconcurrency import Dispatch
import PhotoModel
import PhotoPipeline
import PhotoPlaces
import PhotoStore
import PhotoSystem
import PhotoWatch
#if canImport(Glibc)
import Glibc
#endif

/// The parts `Daemon.start` composes, each opened or made here with what it says in the log.
extension Daemon {
    /// The index, opened (or recovered from damage, or rebuilt from a user-state backup),
    /// migrated, and checked when the last stop was not clean.
    func openDatabase() throws(StartupError) -> Database {
        let database: Database
        let recovery: DatabaseRecovery?
        do {
            var storeOptions = Database.Options()
            storeOptions.places = options.gazetteer ? OfflinePlaces() : nil
            storeOptions.retentionMilliseconds = Int64(options.retentionDays) * 86_400_000
            (database, recovery) = try Database.openRecovering(path: options.database.string, options: storeOptions,
                                                               now: WallClock.milliseconds())
        } catch {
            throw StartupError(description: error.message)
        }
        if let recovery {
            logger.error(recovery.damagedPath.isEmpty
                         ? "the database '\(options.database)' is missing but a user-state backup exists: rebuilding the index "
                           + "from the library, then restoring favorites, hidden flags, albums and keywords from the backup"
                         : "the database '\(options.database)' is damaged (\(recovery.reason)): moved it to '\(recovery.damagedPath)'; "
                           + "rebuilding the index from the library, then "
                           + (recovery.backupPath == nil ? "no user-state backup to restore from: favorites, hidden flags, albums and keywords are lost"
                                                         : "restoring favorites, hidden flags, albums and keywords from the backup"),
                         [("database.damaged", recovery.damagedPath), ("backup.path", recovery.backupPath ?? "")])
        }
        if let upgraded = database.upgraded {
            logger.notice("the database was upgraded from schema \(upgraded.from) to \(Schema.currentVersion) "
                          + "(once) in \(fixedDecimals(upgraded.seconds, 1)) s")
        }
        if database.openedSealed {
            logger.debug("the database is as the last clean stop left it: no integrity check or counter recount needed")
        } else {
            // After a crash, a power cut, or a file changed while photod was stopped.
            do {
                if try database.verifyCounters() {
                    logger.warning("the index's counters did not match its tables and were repaired")
                }
            } catch {
                logger.warning("cannot verify the index's counters: \(error)")
            }
        }
        if let known = try? database.read({ try $0.roots() }) {
            for (_, root) in known where !roots.contains(root) {
                logger.warning("library root '\(root)' was indexed before but is not given with --library now; "
                               + "its assets stay in the index", [("root", root.string)])
            }
        }
        return database
    }

    /// The listening socket: the service manager's (socket activation, kept across restarts and
    /// reloads), or one made at `--socket`.
    struct Listener: Sendable {
        var descriptor: FileDescriptor
        /// Passed in by a service manager (or a reload).
        var activated: Bool
        /// Whether photod removes the socket file at a stop (it made it, or a reload of its own
        /// handed it over).
        var ownsPath: Bool
    }

    func openListener() throws(StartupError) -> Listener {
        let inherited = ListenFDs.take(environment: environment)
        let handedOver = environment["PHOTOD_SOCKET_OWNED"] == "1"
        if let socket = inherited.first(where: ListenFDs.isListeningUnixStream) {
            ListenFDs.makeNonBlocking(socket)
            for other in inherited where other != socket { other.close() }
            logger.notice(handedOver ? "taking over the listening socket from before the reload (fd \(socket.rawValue))"
                                     : "using the listening socket passed by the service manager (fd \(socket.rawValue))")
            return Listener(descriptor: socket, activated: true, ownsPath: handedOver)
        }
        if !inherited.isEmpty { logger.warning("ignoring \(inherited.count) inherited descriptors: none is a listening Unix stream socket") }
        do {
            // A private directory (0700 when created here, or 0750 for --socket-group's members
            // to reach the socket); an existing one must be trustworthy and is left as it is.
            let directory = options.socket.parent
            let existed = access(directory.string, F_OK) == 0
            try Directory.makePath(directory, mode: getuid() == 0 ? 0o755 : options.socketGroup != nil ? 0o750 : 0o700)
            if !existed, let group = options.socketGroup { try Groups.chgrp(directory, to: group) }
            try Directory.checkTrusted(directory)
            let listener = try UnixSocket.listen(options.socket)
            // Who may connect: the socket's group (reads); writes are checked per request.
            if let group = options.socketGroup { try Groups.chgrp(options.socket, to: group) }
            return Listener(descriptor: listener, activated: false, ownsPath: true)
        } catch {
            throw StartupError(description: "cannot listen on '\(options.socket)': \(error)")
        }
    }

    /// The inotify watcher (nil, with the reason, when inotify cannot be used: every root is
    /// then polled), delivering to `inbox`.
    func makeWatcher(for inbox: LiveInbox, options live: LiveOptions) -> (InotifyWatcher?, String?) {
        do {
            return (try InotifyWatcher(limits: live.watchLimits, exclusions: options.exclusions, logger: logger.facility("watch"),
                                        onChanges: inbox.receive), nil)
        } catch {
            return (nil, "cannot open inotify (\(error)): every root is polled every \(live.pollInterval)")
        }
    }

    /// The mount-table watcher (nil, with the reason, when the table cannot be watched: every
    /// tree is then rechecked at intervals), telling `trees` and `inbox` of each change.
    func makeMountWatcher(trees: Trees, inbox: LiveInbox, options live: LiveOptions) -> (MountWatcher?, String?) {
        // The tests prove that every path that can remove assets checks the mounts itself, with
        // nothing telling photod of the unmount first.
        if environment["PHOTOD_TEST_HOOKS"] == "1" && environment["PHOTOD_TEST_MOUNT_TABLE"] == "unwatched" {
            return (nil, "the mount table is not watched (switched off)")
        }
        do {
            let watcher = try MountWatcher(logger: logger.facility("watch")) { table in
                trees.update(table)
                inbox.mountsChanged()
            }
            return (watcher, nil)
        } catch {
            return (nil, "cannot watch the mount table (\(error)): unmounts are noticed by inotify, scans and a recheck "
                         + "every \(live.rootRecheckInterval) of unavailable trees only")
        }
    }
}

extension DaemonOptions {
    /// How the live loop runs with these options.
    var liveOptions: LiveOptions {
        var live = LiveOptions()
        live.pollInterval = .seconds(pollIntervalSeconds)
        live.retentionMilliseconds = Int64(retentionDays) * 86_400_000
        live.trashRoots = Set(trashRoots)
        if let n = maxWatches { live.watchLimits = WatchLimits(maxWatches: n) }
        live.journalMaxChanges = journalMaxChanges
        live.journalMaxAgeMilliseconds = Int64(journalMaxDays) * 86_400_000
        return live
    }

    /// How images are rendered and cached with these options.
    var imageOptions: ImageService.Options {
        var images = ImageService.Options(cacheDirectory: cacheDirectory)
        images.cacheBytes = cacheBytes
        images.pixelLimit = imagePixelLimit
        images.workers = imageWorkers
        images.group = socketGroup
        return images
    }
}

/// The database as a service: the first started, the last stopped — once nothing writes any
/// more, the WAL is checkpointed into the file and the file sealed, so that the next start
/// skips its checks.
final class DatabaseCloser: Service {
    let database: Database
    let logger: Logger

    init(_ database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    func start() {}

    func stop() {
        do {
            try database.checkpoint()
            if try database.seal() {
                logger.debug("sealed the database: the next start skips its integrity check")
            } else {
                logger.debug("the WAL is not empty after the checkpoint: not sealed, the next start checks the database")
            }
        } catch {
            logger.warning("cannot checkpoint or seal the database (the WAL keeps everything; the next start checks it): \(error)")
        }
    }
}

/// What the sort queue's commits are told to: subscribers, the image cache, the backup.
struct CommitFanOut: Sendable {
    let feed: ChangeFeed
    let images: ImageService
    let backup: UserStateBackupService

    /// Subscribers hear of each change set as soon as it is committed.
    func committed(_ change: ChangeSet) {
        if change.token != nil {
            feed.publish(change)
            if !change.deleted.isEmpty || !change.updated.isEmpty {
                images.assetsChanged(updated: change.updated.map(\.rawValue), deleted: change.deleted.map(\.rawValue))
            }
        }
        backup.noteChange()
    }
}
