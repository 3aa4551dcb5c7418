import PhotoModel
import PhotoSystem

/// `photod`'s command line.
public struct DaemonOptions: Sendable {
    public var libraries: [PathBytes] = []
    public var database: PathBytes
    public var socket: PathBytes
    /// `--timezone`: the zone times without an offset are shown in (default: the system's).
    public var timeZone: String?
    /// `--workers`: metadata reader threads (default: one per core).
    public var workers: Int?
    public var logLevel: LogLevel = .info
    /// `--poll-interval`: seconds between polls of trees that cannot be watched (default 300).
    public var pollIntervalSeconds = 300
    /// `--retention-days`: days an asset stays in Recently Deleted (default 30; 0 purges at once).
    public var retentionDays = 30
    /// `--max-watches`: the watch budget (default: the system's limit minus a reserve).
    public var maxWatches: Int?
    /// `--socket-group`: the socket file's group (mode 0660: its members may connect and read).
    public var socketGroup: UInt32?
    /// `--write-group`: besides root and photod's own user, who may write (favorites, albums…).
    public var writeGroup: UInt32?
    /// `--journal-max-changes` and `--journal-max-days`: what the change journal keeps.
    public var journalMaxChanges = 100_000
    public var journalMaxDays = 30
    /// `--config`: the configuration file the options were read from (re-read on SIGHUP).
    public var configFile: PathBytes?
    /// `--cache-dir`: where rendered images are kept (default: see `DefaultPaths.cache`).
    public var cacheDirectory: PathBytes
    /// `--cache-size`: bytes of images the cache keeps (default 1 GiB).
    public var cacheBytes: Int64 = 1 << 30
    /// `--image-pixel-limit`: images claiming more pixels are refused (default 100 megapixels).
    public var imagePixelLimit = 100_000_000
    /// `--image-workers`: threads rendering requested images (default 2).
    public var imageWorkers = 2
    /// `--gazetteer on|off`: name places from coordinates with GeoNames (default on); off,
    /// an asset's place is what its files say, and the gazetteer is never loaded.
    public var gazetteer = true
    /// `--trash-root DIR` (repeatable): library roots whose files `assets.trash` may rename to
    /// hidden names, and `assets.deletePermanently` and the retention purge unlink. None by
    /// default: photod then writes nothing to the library.
    public var trashRoots: [PathBytes] = []
    /// `--exclude` (repeatable) and `--default-excludes on|off`: the paths below the roots that
    /// are not part of the library (default: the NAS and OS folders, `PathExclusions.defaultPatterns`).
    public var exclusions = PathExclusions.none
    private var excludePatterns: [String] = []
    private var defaultExcludes = true
    /// `--check-config`: parse and exit (0 when valid, 64 with the reason when not).
    public var checkOnly = false

    public static let version = "0.1.0"

    public static let help = """
        OVERVIEW: photod keeps an always-current index of a photo and video library and answers
        JSON-RPC 2.0 requests on a Unix socket (one JSON object per line).

        USAGE: photod --library DIR [--library DIR ...] [--database FILE] [--socket PATH] [options]

        OPTIONS:
          --library DIR       A library root to index (repeatable; at least one).
          --database FILE     The SQLite index (default: $STATE_DIRECTORY/photod.db, else
                              $XDG_STATE_HOME/photod/photod.db, else ~/.local/state/photod/photod.db;
                              /var/lib/photod/photod.db for root). Env: PHOTOD_DATABASE.
          --socket PATH       The Unix socket to listen on (default: $RUNTIME_DIRECTORY/photod.sock,
                              else $XDG_RUNTIME_DIR/photod.sock, else /run/photod/photod.sock for root,
                              /tmp/photod-$UID/photod.sock otherwise). Env: PHOTOD_SOCKET.
          --timezone ZONE     The zone for times without an offset (video UTC times, file times):
                              an IANA name (Europe/Berlin), UTC, or +HH:MM. Default: the system's.
          --workers N         Metadata reader threads (default: one per core).
          --poll-interval S   Seconds between polls of the trees inotify cannot watch: network and
                              FUSE file systems, directories beyond the watch budget (default 300).
          --retention-days N  Days a deleted file's asset stays in Recently Deleted before it is
                              purged (default 30; 0 purges at the next hourly check).
          --max-watches N     Watch at most N directories; the rest are polled (default: the
                              user's fs.inotify.max_user_watches minus a reserve for other programs).
          --socket-group GROUP
                              The socket's group (mode 0660): its members may connect and read.
          --write-group GROUP Who may write (favorites, hidden, albums, keywords, rescans) besides
                              root and photod's own user; others get permissionDenied.
          --journal-max-changes N, --journal-max-days N
                              What the change journal keeps for clients resuming with a token
                              (default 100000 change sets, 30 days); older tokens get tokenExpired.
          --cache-dir DIR     Where rendered images are kept, for clients to read (default:
                              $CACHE_DIRECTORY, else $XDG_CACHE_HOME/photod, else ~/.cache/photod;
                              /var/cache/photod for root). Env: PHOTOD_CACHE.
          --cache-size SIZE   Bytes of images the cache keeps, least recently used go first
                              (default 1G; suffixes K, M, G).
          --image-pixel-limit N
                              Refuse images whose header claims more than N pixels (default
                              100000000); they get imageFailed (tooLarge).
          --image-workers N   Threads rendering requested images (default 2; pre-caching has one
                              more at the lowest priority).
          --gazetteer on|off  Name the place of a photo whose files name none from its
                              coordinates, offline, with GeoNames' cities (default on). Off, a
                              place is only what the files say, and the gazetteer is not loaded.
          --trash-root DIR    Let writers move assets of the library root DIR to Recently Deleted
                              (assets.trash: its files are renamed in place to hidden .photod-trashed-
                              names), restore them, and delete them for good (repeatable; DIR is
                              one of the --library roots). Without it photod writes nothing to
                              the library (the systemd unit also needs ReadWritePaths=DIR).
          --exclude PATTERN   Leave out the files and folders below a root whose path matches PATTERN
                              (repeatable): a glob over the path below the root, with *, ?, [a-z]
                              and ** (any folders); a pattern without / is a name at any depth.
                              Added to the defaults: NAS and OS folders such as @eaDir, #recycle,
                              #snapshot, @Recycle, $RECYCLE.BIN, lost+found and ._* files
                              (--check-config lists them all). A change takes effect at the next
                              start or reload: what newly matches goes to Recently Deleted.
          --default-excludes on|off
                              Whether those defaults apply (default on).
          --log-level LEVEL   error, warning, notice, info (default) or debug.
          --config FILE       Read options from FILE first (`key = value` lines, the long option
                              names without --; see systemd/photod.conf); the command line's come
                              after (its single-valued options win, libraries add up). SIGHUP
                              re-reads it and restarts photod in place with the new options.
          --check-config      Check the options and configuration file, print what photod would
                              use and exit: 0 when valid, 64 with the reason when not (the unit's
                              ExecReload= runs it, so that systemctl reload fails on a bad file).
          --version           Print the version and exit.
          -h, --help          Show this help and exit.

        photod runs in the foreground (systemd runs it; it never forks) and logs to stderr.
        Exit codes: 0 after a clean stop (SIGTERM, SIGINT), 1 on a runtime error, 64 on a usage or
        configuration error (logged at priority err under systemd, which does not restart photod for it).
        """

    /// A usage error (exit 64) or a request to print something and exit 0.
    public enum ParseOutcome: Error {
        case usage(String)
        case print(String)
    }

    /// Parses the arguments (without the program name).
    public static func parse(_ arguments: [String], environment: [String: String]) throws(ParseOutcome) -> DaemonOptions {
        let defaults = DefaultPaths(environment: environment)
        var options = DaemonOptions(database: defaults.database, socket: defaults.socket, cacheDirectory: defaults.cache)
        // A configuration file's options come first, as if written before the command line's.
        var arguments = arguments
        if let at = arguments.firstIndex(where: { $0 == "--config" || $0.hasPrefix("--config=") }) {
            let flag = arguments[at]
            let file: String
            if flag.hasPrefix("--config=") {
                file = String(flag.dropFirst("--config=".count))
                arguments.remove(at: at)
            } else {
                guard at + 1 < arguments.count, !arguments[at + 1].isEmpty else { throw .usage("--config needs a value") }
                file = arguments[at + 1]
                arguments.removeSubrange(at...(at + 1))
            }
            guard !arguments.contains(where: { $0 == "--config" || $0.hasPrefix("--config=") }) else {
                throw .usage("--config may be given once")
            }
            let path = DefaultPaths.absolute(file)
            let text: String
            do {
                text = try String(decoding: FileDescriptor.readAll(path), as: UTF8.self)
            } catch {
                throw .usage("cannot read the configuration file \(path): \(error)")
            }
            do {
                arguments = try ConfigFile.parse(text: text) + arguments
            } catch {
                throw .usage("\(path): \(error)")
            }
            options.configFile = path
        }
        var i = 0
        func value(_ flag: String) throws(ParseOutcome) -> String {
            i += 1
            guard i < arguments.count, !arguments[i].isEmpty else { throw .usage("\(flag) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            var arg = arguments[i]
            var inline: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                inline = String(arg[arg.index(after: eq)...])
                arg = String(arg[..<eq])
            }
            func next() throws(ParseOutcome) -> String {
                if let inline { return inline }
                return try value(arg)
            }
            switch arg {
            case "-h", "--help", "help": throw .print(help)
            case "--version": throw .print("photod \(version)")
            case "--check-config": options.checkOnly = true
            case "--library": options.libraries.append(DefaultPaths.absolute(try next()))
            case "--database": options.database = DefaultPaths.absolute(try next())
            case "--socket": options.socket = DefaultPaths.absolute(try next())
            case "--timezone": options.timeZone = try next()
            case "--workers":
                let text = try next()
                guard let n = Int(text), (1...64).contains(n) else { throw .usage("--workers must be 1...64 (got '\(text)')") }
                options.workers = n
            case "--poll-interval":
                let text = try next()
                guard let n = Int(text), (1...86_400).contains(n) else {
                    throw .usage("--poll-interval must be 1...86400 seconds (got '\(text)')")
                }
                options.pollIntervalSeconds = n
            case "--retention-days":
                let text = try next()
                guard let n = Int(text), (0...36_500).contains(n) else {
                    throw .usage("--retention-days must be 0...36500 (got '\(text)')")
                }
                options.retentionDays = n
            case "--max-watches":
                let text = try next()
                guard let n = Int(text), (1...100_000_000).contains(n) else {
                    throw .usage("--max-watches must be a positive number (got '\(text)')")
                }
                options.maxWatches = n
            case "--socket-group", "--write-group":
                let name = try next()
                guard let gid = Groups.id(named: name) else { throw .usage("\(arg): no group '\(name)'") }
                if arg == "--socket-group" { options.socketGroup = gid } else { options.writeGroup = gid }
            case "--journal-max-changes":
                let text = try next()
                guard let n = Int(text), (1...100_000_000).contains(n) else {
                    throw .usage("--journal-max-changes must be a positive number (got '\(text)')")
                }
                options.journalMaxChanges = n
            case "--journal-max-days":
                let text = try next()
                guard let n = Int(text), (1...36_500).contains(n) else {
                    throw .usage("--journal-max-days must be 1...36500 (got '\(text)')")
                }
                options.journalMaxDays = n
            case "--cache-dir": options.cacheDirectory = DefaultPaths.absolute(try next())
            case "--cache-size":
                let text = try next()
                guard let n = Self.byteCount(text), n >= 1 << 20 else {
                    throw .usage("--cache-size must be at least 1M, e.g. 500M or 2G (got '\(text)')")
                }
                options.cacheBytes = n
            case "--image-pixel-limit":
                let text = try next()
                guard let n = Int(text), (1_000_000...2_000_000_000).contains(n) else {
                    throw .usage("--image-pixel-limit must be 1000000...2000000000 (got '\(text)')")
                }
                options.imagePixelLimit = n
            case "--image-workers":
                let text = try next()
                guard let n = Int(text), (1...64).contains(n) else { throw .usage("--image-workers must be 1...64 (got '\(text)')") }
                options.imageWorkers = n
            case "--gazetteer":
                let text = try next()
                guard text == "on" || text == "off" else { throw .usage("--gazetteer must be on or off (got '\(text)')") }
                options.gazetteer = text == "on"
            case "--trash-root": options.trashRoots.append(DefaultPaths.absolute(try next()))
            case "--exclude": options.excludePatterns.append(try next())
            case "--default-excludes":
                let text = try next()
                guard text == "on" || text == "off" else { throw .usage("--default-excludes must be on or off (got '\(text)')") }
                options.defaultExcludes = text == "on"
            case "--log-level":
                let text = try next()
                guard let level = LogLevel.allCases.first(where: { $0.name == text }) else {
                    throw .usage("--log-level must be one of error, warning, notice, info, debug (got '\(text)')")
                }
                options.logLevel = level
            default:
                throw .usage(arg.hasPrefix("-") ? "unknown option '\(arg)'" : "unexpected argument '\(arg)'")
            }
            i += 1
        }
        guard !options.libraries.isEmpty else { throw .usage("at least one --library DIR is required") }
        for root in options.trashRoots where !options.libraries.contains(root) {
            throw .usage("--trash-root \(root): not one of the library roots (--library \(options.libraries.map(\.string).joined(separator: ", --library ")))")
        }
        do {
            options.exclusions = try PathExclusions(patterns: options.excludePatterns, defaults: options.defaultExcludes)
        } catch {
            throw .usage("--exclude: \(error)")
        }
        return options
    }

    /// What `--check-config` prints: the paths photod would use.
    public var summary: String {
        "libraries \(libraries.map(\.string).joined(separator: ", ")); database \(database.string); socket \(socket.string); "
            + "cache \(cacheDirectory.string); "
            + (exclusions.isEmpty ? "nothing excluded" : "excluded \(exclusions.patterns.joined(separator: " "))")
            + "; trash \(trashRoots.isEmpty ? "off (nothing in the library is written)" : trashRoots.map(\.string).joined(separator: ", "))"
            + (configFile.map { "; read from \($0.string)" } ?? "")
    }

    /// `1073741824`, `500M`, `2G`, `64k` → bytes.
    static func byteCount(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let u = units[last] {
            unit = u
            digits = digits.dropLast()
        }
        guard let n = Int64(digits), n >= 0, n <= Int64.max / unit else { return nil }
        return n * unit
    }
}
