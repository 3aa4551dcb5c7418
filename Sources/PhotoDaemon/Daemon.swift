@preconcurrency import Dispatch
import Foundation
import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoWatch
import PhotoWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The running daemon's signal sources; their handlers hold everything else (the server, the
/// pipeline, the database). `dispatchMain()` ends the main thread (`pthread_exit`), and with
/// it any frame that referenced them; kept here, the running daemon stays referenced from a
/// global for as long as it runs. LeakSanitizer looks for references in globals and on live
/// stacks only, so without this it reported the whole daemon as leaked at every exit. Written
/// once, on the main thread before `dispatchMain()`, and never read: nothing to synchronise.
nonisolated(unsafe) private var runningSources: [any DispatchSourceSignal] = []

/// The daemon: opens the index, listens on the socket, runs the initial scan, and stops
/// cleanly on SIGTERM or SIGINT.
public final class Daemon: Sendable {
    let options: DaemonOptions
    let logger: Logger
    let environment: [String: String]

    /// `environment` holds what a service manager passes (`NOTIFY_SOCKET`, `WATCHDOG_USEC`,
    /// `LISTEN_FDS`) and the test hooks' switch (`PHOTOD_TEST_HOOKS=1`).
    public init(options: DaemonOptions, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.options = options
        self.logger = logger
        self.environment = environment
    }

    /// A startup failure, with the exit code `main` should use.
    public struct StartupError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts everything and never returns: the process exits from the signal handler.
    public func run() throws(StartupError) -> Never {
        runningSources = try start()
        dispatchMain()
    }

    /// Opens, wires and starts everything; returns the signal sources, whose handlers hold the
    /// running daemon. A function of its own so that its locals are released when it returns:
    /// in `run()` they would stay in a frame that never ends (`dispatchMain()` does not return).
    private func start() throws(StartupError) -> [any DispatchSourceSignal] {
        guard let zone = SystemZone.named(options.timeZone) else {
            throw StartupError(description: "unknown time zone '\(options.timeZone ?? "")': use an IANA name such as Europe/Berlin, UTC, or +HH:MM")
        }
        // The path the kernel reaches: a root given through a link (or with '..', a trailing
        // slash) is the same root whether or not its disk is mounted yet.
        let roots = options.libraries.map { DefaultPaths.resolved($0) }
        let database: Database
        let recovery: DatabaseRecovery?
        do {
            var databaseOptions = Database.Options()
            databaseOptions.catalogInBackground = true
            (database, recovery) = try Database.openRecovering(path: options.database.string, options: databaseOptions,
                                                               now: Int64(Date().timeIntervalSince1970 * 1000))
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
        let notifier = ServiceNotifier(environment: environment)
        let listener: FileDescriptor
        // Socket activation: the service manager's listening socket, kept across restarts.
        let inherited = ListenFDs.take(environment: environment)
        if let socket = inherited.first(where: ListenFDs.isListeningUnixStream) {
            ListenFDs.makeNonBlocking(socket)
            listener = socket
            for other in inherited where other != socket { other.close() }
            logger.notice(environment["PHOTOD_SOCKET_OWNED"] == "1"
                          ? "taking over the listening socket from before the reload (fd \(socket.rawValue))"
                          : "using the listening socket passed by the service manager (fd \(socket.rawValue))")
        } else {
            if !inherited.isEmpty { logger.warning("ignoring \(inherited.count) inherited descriptors: none is a listening Unix stream socket") }
            do {
                // A private directory (0700 when created here, or 0750 for --socket-group's members
                // to reach the socket); an existing one must be trustworthy and is left as it is.
                let directory = options.socket.parent
                let existed = access(directory.string, F_OK) == 0
                try Directory.makePath(directory, mode: getuid() == 0 ? 0o755 : options.socketGroup != nil ? 0o750 : 0o700)
                if !existed, let group = options.socketGroup { try Groups.chgrp(directory, to: group) }
                try Directory.checkTrusted(directory)
                listener = try UnixSocket.listen(options.socket)
                // Who may connect: the socket's group (reads); writes are checked per request.
                if let group = options.socketGroup { try Groups.chgrp(options.socket, to: group) }
            } catch {
                throw StartupError(description: "cannot listen on '\(options.socket)': \(error)")
            }
        }
        let activated = inherited.contains(listener)

        if let upgraded = database.upgraded {
            logger.notice("the database was upgraded from schema \(upgraded.from) to \(Schema.currentVersion) "
                          + "(once) in \(String(format: "%.1f", upgraded.seconds)) s")
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
        let reads = ReadCounter()
        let sortQueue = SortQueue(database: database, logger: logger.facility("pipeline"))
        let indexer = Indexer(database: database, sortQueue: sortQueue, reader: MediaFileReader(zone: zone, reads: reads),
                              logger: logger.facility("pipeline"), workers: options.workers)
        let info = DaemonInfo(pid: getpid(), started: .now, database: options.database, roots: roots,
                              timeZone: (zone as? SystemZone)?.identifier ?? options.timeZone ?? "UTC")
        var liveOptions = LiveIndex.Options()
        liveOptions.pollInterval = .seconds(options.pollIntervalSeconds)
        liveOptions.retentionMilliseconds = Int64(options.retentionDays) * 86_400_000
        if let n = options.maxWatches { liveOptions.watchLimits = WatchLimits(maxWatches: n) }
        liveOptions.journalMaxChanges = options.journalMaxChanges
        liveOptions.journalMaxAgeMilliseconds = Int64(options.journalMaxDays) * 86_400_000
        // The tests prove that every path that can remove assets checks the mounts itself, with
        // nothing telling photod of the unmount first.
        liveOptions.watchMountTable = !(environment["PHOTOD_TEST_HOOKS"] == "1" && environment["PHOTOD_TEST_MOUNT_TABLE"] == "unwatched")
        let feed: ChangeFeed
        do {
            feed = try ChangeFeed(database: database, logger: logger.facility("wire"))
        } catch {
            throw StartupError(description: "cannot read the change journal: \(error)")
        }
        var imageOptions = ImageService.Options(cacheDirectory: options.cacheDirectory)
        imageOptions.cacheBytes = options.cacheBytes
        imageOptions.pixelLimit = options.imagePixelLimit
        imageOptions.workers = options.imageWorkers
        imageOptions.group = options.socketGroup
        let images = ImageService(database: database, options: imageOptions, logger: logger.facility("images"))
        if let socketPath = ListenFDs.boundPath(listener) {
            Self.checkCacheReadable(socket: socketPath, cache: options.cacheDirectory, logger: logger)
        }
        // Subscribers hear of each change set as soon as it is committed.
        let backup = UserStateBackupService(database: database, logger: logger.facility("store"))
        sortQueue.onCommit { change, _ in
            if change.token != nil {
                feed.publish(change)
                if !change.deleted.isEmpty || !change.updated.isEmpty {
                    images.assetsChanged(updated: change.updated.map(\.rawValue), deleted: change.deleted.map(\.rawValue))
                }
            }
            backup.noteChange()
        }
        // `--wait` must never see a daemon that has not started its first scan as idle.
        indexer.announceScan()
        let live = LiveIndex(indexer: indexer, sortQueue: sortQueue, roots: roots, options: liveOptions,
                             logger: logger.facility("live"))
        // After a damaged database: user state comes back from the backup once the scan is done.
        RecoveryRestorer.startIfPending(database: database, live: live, sortQueue: sortQueue, backup: backup,
                                        logger: logger.facility("store"))
        backup.noteChange()
        let access = WriteAccess(daemonUID: getuid(), writeGroup: options.writeGroup)
        let methods = Methods(database: database, indexer: indexer, sortQueue: sortQueue, live: live, feed: feed, reads: reads,
                              info: info, liveOptions: liveOptions, access: access, images: images)
        let imageMethods = ImageMethods(images: images)
        if let known = try? database.read({ try $0.roots() }) {
            for (_, root) in known where !roots.contains(root) {
                logger.warning("library root '\(root)' was indexed before but is not given with --library now; "
                               + "its assets stay in the index", [("root", root.string)])
            }
        }
        var table = methods.table
        table.merge(imageMethods.table) { a, _ in a }
        if environment["PHOTOD_TEST_HOOKS"] == "1" {
            logger.warning("test hooks are on (PHOTOD_TEST_HOOKS=1): never in production")
            table.merge(TestHooks(sortQueue: sortQueue, database: database).table) { a, _ in a }
        }
        // A socket handed over by a reload that photod made itself is still photod's to remove.
        let ownsPath = !activated || environment["PHOTOD_SOCKET_OWNED"] == "1"
        let server = SocketServer(listener: listener, path: ownsPath ? options.socket : nil,
                                  handler: RPCDispatcher(methods: table, admission: methods.admission, deferred: imageMethods.deferred,
                                                         logger: logger.facility("wire")),
                                  logger: logger.facility("wire"))
        let reporter = ServiceReporter(notifier: notifier, database: database, indexer: indexer, sortQueue: sortQueue, live: live,
                                       roots: roots, logger: logger.facility("service"))
        feed.attach { [weak server] id in server?.connection(id) }
        images.attach { [weak server] id in server?.connection(id) }
        server.onDisconnect { id in
            feed.unsubscribe(client: id)
            images.disconnected(client: id)
        }

        let stopping = Atomic<Bool>(false)
        let signalQueue = DispatchQueue(label: "photod.signals")
        var sources: [any DispatchSourceSignal] = []
        /// Stops the pipeline: what has been read is committed; the rest waits for the next start.
        @Sendable func quiesce(farewell method: String) -> Bool {
            let token = (try? feed.journalBounds())?.current ?? 0
            let handedOver = server.stop(farewell: RPCNotification(method: method, params: .object(["token": .int(token)])).encodedLine(),
                                         keepListener: method == "photod.reloading")
            images.stop()
            live.stop()
            sortQueue.stop()
            backup.finish()
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
            return handedOver
        }
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: signalQueue)
            source.setEventHandler { [logger] in
                guard !stopping.exchange(true, ordering: .relaxed) else { return }
                logger.notice("received \(sig == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                reporter.stopping()
                _ = quiesce(farewell: "photod.stopping")
                logger.notice("stopped")
                exit(0)
            }
            source.resume()
            sources.append(source)
        }
        // SIGHUP: re-read the configuration; when it is valid, hand the listening socket over to
        // a fresh photod in this same process (exec), which starts with the new options.
        signal(SIGHUP, SIG_IGN)
        let reload = DispatchSource.makeSignalSource(signal: SIGHUP, queue: signalQueue)
        reload.setEventHandler { [self] in
            guard !stopping.load(ordering: .relaxed) else { return }
            logger.notice("received SIGHUP, reloading the configuration" + (options.configFile.map { " from \($0)" } ?? ""))
            reporter.reloading()
            if let reason = Self.invalidConfiguration() {
                logger.error("the new configuration is not valid, keeping the current one: \(reason)")
                reporter.reloadFailed(reason)
                return
            }
            guard !stopping.exchange(true, ordering: .relaxed) else { return }
            guard quiesce(farewell: "photod.reloading") else {
                logger.error("cannot hand the listening socket over; stopping (the service manager restarts photod)")
                exit(1)
            }
            Restart.exec(listener: listener, ownsSocketPath: ownsPath, arguments: CommandLine.arguments, logger: logger)
        }
        reload.resume()
        sources.append(reload)

        // Only now that the stop and reload signals are handled: a client that got an answer
        // may send one at once (a launcher can hand them over ignored, so they would be lost).
        server.start()
        logger.notice("photod \(DaemonOptions.version) listening on \(activated ? "the inherited socket" : options.socket.string), "
                      + "database \(options.database), library \(roots.map(\.string).joined(separator: ", "))")
        // Ready: the database is open and migrated, the socket answers (the scan may still run).
        reporter.ready()
        return sources
    }

    /// Warns when the socket's group may connect but not read the image cache: `images.request`
    /// would hand its members paths they cannot open (a `SocketGroup=` drop-in for another
    /// service's group does this; the cache's group is photod's). The remedy is in the message.
    static func checkCacheReadable(socket: PathBytes, cache: PathBytes, logger: Logger) {
        guard let s = try? FileStat.of(socket), let c = try? FileStat.of(cache), let d = try? FileStat.of(socket.parent) else { return }
        // Connecting needs write permission on the socket and search permission on its directory.
        let groupCanConnect = s.mode & 0o020 != 0 && d.mode & 0o011 != 0
        let othersCanConnect = s.mode & 0o002 != 0 && d.mode & 0o001 != 0
        let othersCanRead = c.mode & 0o005 == 0o005
        let socketGroup = Groups.name(of: s.gid) ?? String(s.gid), cacheGroup = Groups.name(of: c.gid) ?? String(c.gid)
        if groupCanConnect, s.gid != c.gid, !othersCanRead {
            logger.warning("members of the socket's group '\(socketGroup)' may connect but cannot read the image cache \(cache) "
                           + "(group '\(cacheGroup)'): images.request gives them paths they cannot open. Give the socket the "
                           + "cache's group and add the clients' users to it instead (usermod -aG \(cacheGroup) USER)",
                           [("socket.path", socket.string), ("cache.path", cache.string)])
        } else if othersCanConnect, !othersCanRead {
            logger.warning("anyone may connect to the socket \(socket) but only the group '\(cacheGroup)' can read the image "
                           + "cache \(cache): images.request gives others paths they cannot open",
                           [("socket.path", socket.string), ("cache.path", cache.string)])
        }
    }

    /// Why the command line and configuration file as they are now do not parse, or nil.
    static func invalidConfiguration() -> String? {
        do {
            _ = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
            return nil
        } catch {
            switch error {
            case .usage(let message): return message
            case .print: return "the arguments ask for help or the version"
            }
        }
    }
}
