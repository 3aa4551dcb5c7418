import PhotoModel
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// `photod-nats`'s command line.
public struct BridgeOptions: Sendable {
    /// photod's socket; without `--socket`, the ones `photoctl` tries, in its order.
    public var sockets: [PathBytes]
    /// `--nats URL[,URL…]`.
    public var servers = "nats://127.0.0.1:4222"
    /// `--name`: this photod's name in the subjects (`photod.<name>.changes`).
    public var name: String
    /// `--stream`: the JetStream stream that holds the change sets.
    public var stream = "PHOTOD"
    /// `--creds FILE`: NATS credentials (a JWT and NKey seed).
    public var credentials: String?
    /// `--tls-ca FILE`: the CA that signed the servers' certificates (turns TLS on).
    public var caFile: String?
    /// `--config FILE`: where settings were read from.
    public var configFile: String?
    /// `--check`: say what would be done, try both ends, exit.
    public var check = false
    /// `--status`: ask the running bridge of `name` for its status over NATS, print it, exit.
    public var statusQuery = false
    /// `--json`: `--status` prints the bridge's JSON as it is.
    public var json = false
    /// `--allow-writes`: photod's write methods are served on the rpc subject too.
    public var allowWrites = false
    /// `--rpc-only`: serve the rpc and status subjects, publish nothing (a second bridge of one
    /// photod, under another name, for the clients NATS lets write).
    public var rpcOnly = false
    /// `--reply-prefix P` (repeatable): the reply subjects answers may go to; the default is
    /// NATS's inboxes (`_INBOX.`, and per-user prefixes that start `_INBOX`).
    public var replyPrefixes = ["_INBOX"]
    private var replyPrefixesGiven = false
    /// `--rpc-workers N`: requests from NATS served at once.
    public var rpcWorkers = 4
    /// `--rpc-timeout S`: how long a request from NATS waits for photod.
    public var rpcTimeout: Duration = .seconds(30)
    /// `--duplicate-window S`: a stream created here deduplicates over this window.
    public var duplicateWindow: Duration = .seconds(120)
    /// `--replicas N`: a stream created here is replicated this many times.
    public var replicas = 1
    /// `--max-age DAYS`: a stream created here keeps change sets this long (default: for ever).
    public var maxAgeDays: Int?

    public static let version = "0.1.0"

    public static let help = """
        OVERVIEW: photod-nats publishes photod's change sets to NATS JetStream, in token order and
        exactly once, so that clients on other machines (and other photods' clients) can follow them.

        It also answers photod's read methods as NATS request/reply on photod.NAME.rpc (images as
        bytes), and its own status on photod.NAME.bridge.status.

        USAGE: photod-nats [--socket PATH] [--nats URL[,URL...]] [--name NAME] [--stream NAME] [options]
               photod-nats --status [--json] [--nats URL[,URL...]] [--name NAME]

        OPTIONS:
          --socket PATH       photod's socket (default: the ones photoctl tries, in its order).
          --nats URL[,URL...] NATS servers (default nats://127.0.0.1:4222); user and password or a
                              token may be in a URL (nats://user:pass@host:4222).
          --name NAME         This library's name in the subjects photod.NAME.changes and
                              photod.NAME.resync (default: the host name); letters, digits, - and _.
          --stream NAME       The JetStream stream (default PHOTOD). Made when missing, with the
                              subjects photod.*.changes and photod.*.resync, file storage and the
                              options below; an existing stream is used as its operator set it up.
          --duplicate-window S, --replicas N, --max-age DAYS
                              For a stream made here: the deduplication window (30 s or more,
                              default 120), the
                              replicas (default 1) and how long change sets are kept (default: always).
          --allow-writes      Serve photod's write methods (favorites, albums, keywords, rescan) on
                              photod.NAME.rpc too; NATS permissions then decide who may publish
                              there. Without it they are refused (-32003 permissionDenied).
          --rpc-only          Publish nothing: only serve photod.NAME.rpc and its status. With
                              --allow-writes, a second bridge of the same photod under another
                              NAME, for the clients NATS lets write (docs/DISTRIBUTED.md).
          --reply-prefix P    Answer only requests whose reply subject starts with P (repeatable;
                              default _INBOX, NATS's inboxes): a request cannot have the bridge
                              publish its answer on the stream's subjects or JetStream's API.
          --rpc-workers N     Requests from NATS served at once (default 4, 1...64).
          --rpc-timeout S     How long a request from NATS waits for photod (default 30 s).
          --creds FILE        NATS credentials (JWT and NKey seed), as nsc writes them.
          --tls-ca FILE       Connect with TLS, trusting the CA certificates in FILE.
          --config FILE       Read settings from FILE first (photod-nats.conf: "key = value" lines,
                              the long options above without "--"; allow-writes = yes|no); the
                              command line's options win.
          --check             Print what would be done, try photod and NATS, exit 0 when both answer.
          --status            Ask the running bridge of NAME for its status over NATS and print it
                              (--json: as the bridge sends it); exit 1 when no bridge answers.
          --version           Print the version.
          -h, --help          Show this help.

        The bridge keeps no state of its own: it resumes after the token of the last change set the
        stream holds for its subjects. Exit codes: 0 after SIGTERM (and for --check when both
        answer), 1 for --check or --status when one does not, 64 on a usage error. Two photods must not share a
        NAME: their change sets would collide in the stream (the bridge says so when it sees the
        subject move under it).
        """

    public enum ParseOutcome: Error {
        case usage(String)
        case print(String)
    }

    /// A name is one NATS subject token of letters, digits, `-` and `_` (no `.`, `*`, `>`, blank).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
        }
    }

    /// The host name, made a valid name (dots and other characters become `-`).
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "photod" }
        let raw = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let name = String(raw.map { isValidName(String($0)) ? $0 : "-" }.prefix(64))
        return isValidName(name) ? name : "photod"
    }

    /// The keys of `/etc/photod/photod-nats.conf` (`--config FILE`): the long options that take
    /// a value, and `allow-writes = yes|no`, `rpc-only = yes|no`.
    public static let configKeys = ["socket", "nats", "name", "stream", "duplicate-window", "replicas", "max-age",
                                    "allow-writes", "rpc-only", "reply-prefix", "rpc-workers", "rpc-timeout", "creds", "tls-ca"]
        .map { ConfigFile.Key(name: $0, repeatable: $0 == "reply-prefix") }

    /// `--config FILE`'s settings as arguments, put before the command line's (which win).
    static func configArguments(_ file: String) throws(ParseOutcome) -> [String] {
        let path = DefaultPaths.absolute(file)
        let text: String
        do {
            text = try String(decoding: FileDescriptor.readAll(path), as: UTF8.self)
        } catch {
            throw .usage("cannot read the configuration file \(path): \(error)")
        }
        do {
            return try ConfigFile.entries(text: text, keys: configKeys).flatMap { entry throws(ParseOutcome) -> [String] in
                guard entry.key == "allow-writes" || entry.key == "rpc-only" else { return entry.arguments }
                switch entry.value.lowercased() {
                case "yes", "true", "on", "1": return ["--" + entry.key]
                case "no", "false", "off", "0": return []
                default: throw .usage("\(path): line \(entry.line): '\(entry.key)' must be yes or no (got '\(entry.value)')")
                }
            }
        } catch let error as ConfigFile.ParseError {
            throw .usage("\(path): \(error)")
        } catch let error as ParseOutcome {
            throw error
        } catch {
            throw .usage("\(path): \(error)")
        }
    }

    public static func parse(_ arguments: [String], environment: [String: String]) throws(ParseOutcome) -> BridgeOptions {
        var options = BridgeOptions(sockets: DefaultPaths(environment: environment).clientSockets, name: hostName())
        var arguments = arguments
        if let at = arguments.firstIndex(of: "--config") {
            guard at + 1 < arguments.count, !arguments[at + 1].isEmpty else { throw .usage("--config needs a value") }
            let file = arguments[at + 1]
            arguments.removeSubrange(at...(at + 1))
            guard !arguments.contains("--config") else { throw .usage("--config may be given once") }
            options.configFile = file
            arguments = try configArguments(file) + arguments
        }
        var i = 0
        func value(_ flag: String) throws(ParseOutcome) -> String {
            i += 1
            guard i < arguments.count, !arguments[i].isEmpty else { throw .usage("\(flag) needs a value") }
            return arguments[i]
        }
        func number(_ flag: String, _ range: ClosedRange<Int>) throws(ParseOutcome) -> Int {
            let text = try value(flag)
            guard let n = Int(text), range.contains(n) else { throw .usage("\(flag) must be \(range.lowerBound)...\(range.upperBound) (got '\(text)')") }
            return n
        }
        while i < arguments.count {
            let arg = arguments[i]
            switch arg {
            case "-h", "--help": throw .print(help)
            case "--version": throw .print("photod-nats \(version)")
            case "--socket": options.sockets = [DefaultPaths.absolute(try value(arg))]
            case "--nats": options.servers = try value(arg)
            case "--name":
                let name = try value(arg)
                guard isValidName(name) else { throw .usage("--name must be letters, digits, - and _ (got '\(name)')") }
                options.name = name
            case "--stream":
                let name = try value(arg)
                guard isValidName(name) else { throw .usage("--stream must be letters, digits, - and _ (got '\(name)')") }
                options.stream = name
            case "--duplicate-window": options.duplicateWindow = .seconds(try number(arg, 30...86_400))
            case "--replicas": options.replicas = try number(arg, 1...5)
            case "--max-age": options.maxAgeDays = try number(arg, 1...36_500)
            case "--creds": options.credentials = try value(arg)
            case "--tls-ca": options.caFile = try value(arg)
            case "--check": options.check = true
            case "--status": options.statusQuery = true
            case "--json": options.json = true
            case "--allow-writes": options.allowWrites = true
            case "--rpc-only": options.rpcOnly = true
            case "--reply-prefix":
                let prefix = try value(arg)
                guard !prefix.hasPrefix("$"), !prefix.hasPrefix("photod."), !prefix.contains("*"), !prefix.contains(">") else {
                    throw .usage("--reply-prefix must be an inbox prefix, not '\(prefix)' (JetStream's API, photod's subjects, wildcards)")
                }
                if !options.replyPrefixesGiven { options.replyPrefixes = [] }
                options.replyPrefixesGiven = true
                options.replyPrefixes.append(prefix)
            case "--rpc-workers": options.rpcWorkers = try number(arg, 1...64)
            case "--rpc-timeout": options.rpcTimeout = .seconds(try number(arg, 1...3_600))
            default: throw .usage(arg.hasPrefix("-") ? "unknown option '\(arg)'" : "unexpected argument '\(arg)'")
            }
            i += 1
        }
        if options.json && !options.statusQuery { throw .usage("--json goes with --status") }
        for url in options.servers.split(separator: ",") where !(url.hasPrefix("nats://") || url.hasPrefix("tls://")) {
            throw .usage("--nats: '\(url)' is not a nats:// or tls:// URL")
        }
        return options
    }

    /// The subject of the change sets.
    public var changesSubject: String { "photod.\(name).changes" }
    /// The subject of resync events (the change sets from one token to another were not published).
    public var resyncSubject: String { "photod.\(name).resync" }
    /// The subject of requests for photod's methods.
    public var rpcSubject: String { "photod.\(name).rpc" }
    /// The subject of requests for the bridge's status.
    public var statusSubject: String { "photod.\(name).bridge.status" }
}
