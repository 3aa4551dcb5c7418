@preconcurrency import Dispatch
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
    /// The library roots, as the kernel reaches them: a root given through a link (or with '..',
    /// a trailing slash) is the same root whether or not its disk is mounted yet.
    let roots: [PathBytes]

    /// `environment` holds what a service manager passes (`NOTIFY_SOCKET`, `WATCHDOG_USEC`,
    /// `LISTEN_FDS`) and the test hooks' switch (`PHOTOD_TEST_HOOKS=1`).
    public init(options: DaemonOptions, logger: Logger, environment: [String: String] = ProcessEnvironment.current) {
        self.options = options
        self.logger = logger
        self.environment = environment
        roots = options.libraries.map { DefaultPaths.resolved($0) }
    }

    /// A startup failure, with the exit code `main` should use.
    public struct StartupError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts everything and never returns: the process exits from the signal handler.
    public func run() throws(StartupError) -> Never {
        let daemon = try compose()
        // Before the socket answers: a client that got an answer may send a stop at once (and a
        // launcher can hand the signals over ignored).
        runningSources = Self.handleSignals(of: daemon)
        try daemon.start()
        dispatchMain()
    }

    /// Composes the daemon and starts it (`RunningDaemon.start`); returns once the socket
    /// answers, the initial scan running on.
    public func start() throws(StartupError) -> RunningDaemon {
        let daemon = try compose()
        try daemon.start()
        return daemon
    }

    /// Opens the index and the socket and wires the pipeline as ARCHITECTURE.md draws it: the
    /// services in the order they depend on each other (the group stops them in reverse).
    /// Nothing runs yet.
    func compose() throws(StartupError) -> RunningDaemon {
        guard let zone = SystemZone.named(options.timeZone) else {
            throw StartupError(description: "unknown time zone '\(options.timeZone ?? "")': use an IANA name such as Europe/Berlin, UTC, or +HH:MM")
        }
        let database = try openDatabase()
        let listener = try openListener()
        let (pipelineLog, live) = (logger.facility("pipeline"), liveOptions())

        // The pipeline: watchers → live loop → indexer (walk, readers) → sort queue → SQLite.
        let sortQueue = SortQueue(database: database, logger: pipelineLog)
        let inbox = LiveInbox(maxQueuedChanges: live.maxQueuedChanges, logger: logger.facility("live"))
        let trees = Trees(roots: roots, database: database, sortQueue: sortQueue, logger: pipelineLog,
                          onAnswer: { _ in inbox.mountsChanged() }, exclusions: options.exclusions)
        let (watcher, watchError) = makeWatcher(for: inbox, options: live)
        let (mountWatcher, mountWatchError) = makeMountWatcher(trees: trees, inbox: inbox, options: live)
        let reads = ReadCounter()
        let indexer = Indexer(database: database, sortQueue: sortQueue, trees: trees, reader: MediaFileReader(zone: zone, reads: reads),
                              logger: pipelineLog, workers: options.workers, exclusions: options.exclusions)
        let liveLoop = LiveLoop(indexer: indexer, sortQueue: sortQueue, trees: trees, inbox: inbox, roots: roots, watcher: watcher,
                                watchError: watchError, mountWatcher: mountWatcher, mountWatchError: mountWatchError,
                                options: live, logger: logger.facility("live"))
        // `--wait` must never see a daemon that has not started its first scan as idle.
        indexer.announceScan()

        // After each commit: subscribers, the image cache, the user-state backup.
        let feed = try openFeed(database)
        let images = ImageService(database: database, options: options.imageOptions, logger: logger.facility("images"))
        if let socketPath = ListenFDs.boundPath(listener.descriptor) {
            Self.checkCacheReadable(socket: socketPath, cache: options.cacheDirectory, logger: logger)
        }
        let backup = UserStateBackupService(database: database, logger: logger.facility("store"))
        let fanOut = CommitFanOut(feed: feed, images: images, backup: backup)
        sortQueue.onCommit { change, _ in fanOut.committed(change) }
        // After a damaged database: user state comes back from the backup once the scan is done.
        // A library indexed before places gets them from the coordinates it holds.
        let placing = PlacingPass(database: database, sortQueue: sortQueue, logger: pipelineLog)
        let restorer = RecoveryRestorer(database: database, live: liveLoop, sortQueue: sortQueue, backup: backup,
                                        logger: logger.facility("store"))

        // At rest: SQLite's caches and malloc's free pages given back.
        let reporter = ServiceReporter(notifier: ServiceNotifier(environment: environment), database: database, indexer: indexer,
                                       trees: trees, sortQueue: sortQueue, live: liveLoop, roots: roots, logger: logger.facility("service"))
        let requests = RequestCounter()
        let rest = restService(database, reporter: reporter, images: images, requests: requests)

        // The socket: clients' requests, answered from the index or as jobs on the sort queue.
        let info = DaemonInfo(pid: getpid(), started: .now, database: options.database, roots: roots,
                              timeZone: (zone as? SystemZone)?.identifier ?? options.timeZone ?? "UTC")
        let server = SocketServer(listener: listener.descriptor, path: listener.ownsPath ? options.socket : nil,
                                  handler: methodTable(Methods(database: database, indexer: indexer, trees: trees, sortQueue: sortQueue,
                                                               live: liveLoop, feed: feed, reads: reads, info: info, liveOptions: live,
                                                               access: WriteAccess(daemonUID: getuid(), writeGroup: options.writeGroup),
                                                               images: images, rest: rest), requests: requests),
                                  logger: logger.facility("wire"))
        feed.attach { [weak server] id in server?.connection(id) }
        images.attach { [weak server] id in server?.connection(id) }
        server.onDisconnect { id in
            feed.unsubscribe(client: id)
            images.disconnected(client: id)
        }

        let group = ServiceGroup([
            .init("database", DatabaseCloser(database, logger: logger.facility("store"))), .init("backup", backup),
            .init("sort queue", sortQueue),
            // Before anything walks the library: renames of a trash that stopped before its commit undone.
            .init("trash recovery", TrashRecovery(sortQueue: sortQueue, trash: LibraryTrash(roots: live.trashRoots, trees: trees),
                                                         logger: pipelineLog)),
            .init("watcher", watcher), .init("mount watcher", mountWatcher),
            .init("live loop", liveLoop), .init("placing", placing), .init("recovery", restorer), .init("images", images),
            .init("rest", rest),
            .init("socket server", server),  // last: a client that got an answer may send a stop at once
        ], logger: logger.facility("service"))
        return RunningDaemon(group: group, server: server, feed: feed, listener: listener,
                             reporter: reporter,
                             logger: logger, started: "photod \(DaemonOptions.version) listening on "
                                 + (listener.activated ? "the inherited socket" : options.socket.string)
                                 + ", database \(options.database), library \(roots.map(\.string).joined(separator: ", "))")
    }

    /// The live options, with the crash tests' hooks (`PHOTOD_TEST_CRASH_AFTER_RENAMES`,
    /// `PHOTOD_TEST_CRASH_AFTER_UNLINKS`).
    private func liveOptions() -> LiveOptions {
        var live = options.liveOptions
        if environment["PHOTOD_TEST_HOOKS"] == "1" {
            live.trashCrashAfterRenames = Int(environment["PHOTOD_TEST_CRASH_AFTER_RENAMES"] ?? "")
            live.trashCrashAfterUnlinks = Int(environment["PHOTOD_TEST_CRASH_AFTER_UNLINKS"] ?? "")
        }
        return live
    }

    private func openFeed(_ database: Database) throws(StartupError) -> ChangeFeed {
        do {
            return try ChangeFeed(database: database, logger: logger.facility("wire"))
        } catch {
            throw StartupError(description: "cannot read the change journal: \(error)")
        }
    }

    /// At rest (nothing asked, nothing moving, nothing rendered): SQLite's caches and malloc's
    /// free pages given back.
    private func restService(_ database: Database, reporter: ServiceReporter, images: ImageService,
                             requests: RequestCounter) -> RestService {
        RestService(policy: restPolicy(), activity: { requests.value &+ reporter.progressCount() &+ images.stats.rendered },
                    busy: { reporter.isBusy() }, rest: { database.releaseMemory(); Heap.returnFreePages() })
    }

    /// When the daemon rests (`RestService`); the test hooks may shorten it
    /// (`PHOTOD_TEST_REST_AFTER_MS`).
    private func restPolicy() -> RestPolicy {
        guard environment["PHOTOD_TEST_HOOKS"] == "1", let ms = Int(environment["PHOTOD_TEST_REST_AFTER_MS"] ?? ""), ms > 0 else {
            return RestPolicy()
        }
        return RestPolicy(quiet: .milliseconds(ms), period: .milliseconds(6 * ms))
    }

    /// The method table the socket answers with: reads, writes, images, and the test hooks
    /// when `PHOTOD_TEST_HOOKS=1`.
    private func methodTable(_ methods: Methods, requests: RequestCounter) -> RPCDispatcher {
        let imageMethods = ImageMethods(images: methods.images)
        var table = methods.table
        table.merge(imageMethods.table) { a, _ in a }
        if environment["PHOTOD_TEST_HOOKS"] == "1" {
            logger.warning("test hooks are on (PHOTOD_TEST_HOOKS=1): never in production")
            table.merge(TestHooks(sortQueue: methods.sortQueue, database: methods.database).table) { a, _ in a }
        }
        return RPCDispatcher(methods: table, admission: methods.admission, deferred: imageMethods.deferred, requests: requests,
                             logger: logger.facility("wire"))
    }

    /// SIGTERM and SIGINT stop the daemon; SIGHUP re-reads the configuration and, when it is
    /// valid, hands the listening socket over to a fresh photod in this same process (exec).
    /// Returns the signal sources, whose handlers hold the running daemon.
    private static func handleSignals(of running: RunningDaemon) -> [any DispatchSourceSignal] {
        let logger = running.logger
        let signalQueue = DispatchQueue(label: "photod.signals")
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: signalQueue)
            source.setEventHandler {
                logger.notice("received \(sig == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                guard running.stop(farewell: "photod.stopping") else { return }
                logger.notice("stopped")
                exit(0)
            }
            source.resume()
            sources.append(source)
        }
        signal(SIGHUP, SIG_IGN)
        let reload = DispatchSource.makeSignalSource(signal: SIGHUP, queue: signalQueue)
        reload.setEventHandler {
            guard !running.isStopping else { return }
            logger.notice("received SIGHUP, reloading the configuration")
            running.reporter.reloading()
            if let reason = Self.invalidConfiguration() {
                logger.error("the new configuration is not valid, keeping the current one: \(reason)")
                running.reporter.reloadFailed(reason)
                return
            }
            guard running.stop(farewell: "photod.reloading") else { return }
            Restart.exec(listener: running.listener.descriptor, ownsSocketPath: running.listener.ownsPath,
                         arguments: CommandLine.arguments, logger: logger)
        }
        reload.resume()
        sources.append(reload)
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
            _ = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current)
            return nil
        } catch {
            switch error {
            case .usage(let message): return message
            case .print: return "the arguments ask for help or the version"
            }
        }
    }
}

/// A started daemon: its services, in the group that stops them, and the socket clients reach.
public final class RunningDaemon: Sendable {
    let group: ServiceGroup
    let server: SocketServer
    let feed: ChangeFeed
    let listener: Daemon.Listener
    let reporter: ServiceReporter
    let logger: Logger
    /// The threads the daemon's services started, and the threads those started in turn.
    public let threads = ThreadOwner()
    private let stopping = Locked(false)

    /// What the log says once it runs.
    private let startedLine: String

    init(group: ServiceGroup, server: SocketServer, feed: ChangeFeed, listener: Daemon.Listener, reporter: ServiceReporter,
         logger: Logger, started: String) {
        self.group = group
        self.server = server
        self.feed = feed
        self.listener = listener
        self.reporter = reporter
        self.logger = logger
        startedLine = started
    }

    /// Starts the services (their threads owned by `threads`), then says it is ready.
    func start() throws(Daemon.StartupError) {
        do {
            try threads.adopt { try group.start() }
        } catch {
            throw Daemon.StartupError(description: "\(error)")
        }
        guard !isStopping else { return }
        logger.notice(startedLine)
        // Ready: the database is open and migrated, the socket answers (the scan may still run).
        reporter.ready()
    }

    /// Whether a stop has begun.
    public var isStopping: Bool { stopping.withLock { $0 } }

    /// Stops the daemon: every client is sent `farewell` (`photod.stopping`, or
    /// `photod.reloading`, which keeps the listening socket open for the successor) with the
    /// current token, then the services stop in reverse order — what has been read is
    /// committed, the rest waits for the next start — and the database is sealed. Returns false
    /// when a stop was already under way.
    @discardableResult
    public func stop(farewell method: String = "photod.stopping") -> Bool {
        guard stopping.withLock({ s -> Bool in defer { s = true }; return !s }) else { return false }
        let reloading = method == "photod.reloading"
        if !reloading { reporter.stopping() }
        let token = (try? feed.journalBounds())?.current ?? 0
        server.prepareStop(farewell: RPCNotification(method: method, params: .object(["token": .int(token)])).encodedLine(),
                           keepListener: reloading)
        group.stop()
        return true
    }
}
