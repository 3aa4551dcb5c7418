import Glibc
import PhotoSystem

// photoctl: the command-line client of photod. Data goes to stdout (human tables, or one
// JSON object per line with --json); diagnostics go to stderr.
// Exit codes: 0 success, 1 failure (a failed write to stdout included), 64 usage error,
// 69 daemon unreachable, 77 permission denied (not in the socket's group).

func run(_ argv: [String]) throws(Failure) {
    var args: [String] = []
    var socketFlag: String?
    var json = false
    // --socket is global: accepted before or after the subcommand (up to a '--').
    var i = 0
    while i < argv.count {
        if argv[i] == "--" {
            args += argv[i...]
            break
        }
        if argv[i] == "--socket" {
            guard i + 1 < argv.count else { throw Failure(code: .usage, message: "--socket needs a value") }
            socketFlag = argv[i + 1]
            i += 2
            continue
        }
        if argv[i].hasPrefix("--socket=") { socketFlag = String(argv[i].dropFirst("--socket=".count)) } else { args.append(argv[i]) }
        i += 1
    }
    while let first = args.first, first.hasPrefix("-") {
        args.removeFirst()
        switch first {
        case "-h", "--help":
            out(overview)
            return
        case "--version":
            out("photoctl 0.1.0")
            return
        case "--json":
            // Before the subcommand as after it: the subcommand's own flag.
            json = true
        default:
            throw Failure(code: .usage, message: "unknown option '\(first)'")
        }
    }
    guard let command = args.first else {
        throw Failure(code: .usage, message: "missing subcommand (\(subcommands.joined(separator: ", "))); see 'photoctl --help'")
    }
    var rest = Array(args.dropFirst())
    if json { rest.insert("--json", at: rest.firstIndex(of: "--") ?? rest.endIndex) }
    if command == "help" {
        // `help album create` shows the album page, like `album create --help`.
        if let topic = rest.first {
            guard let text = help(for: topic) else { throw Failure(code: .usage, message: "no help for '\(topic)'; see 'photoctl --help'") }
            out(text)
        } else {
            out(overview)
        }
        return
    }
    let options = rest.prefix { $0 != "--" }
    if options.contains("-h") || options.contains("--help") {
        guard let text = help(for: command) else { throw Failure(code: .usage, message: "unknown subcommand '\(command)'; see 'photoctl --help'") }
        out(text)
        return
    }
    guard subcommands.contains(command) else {
        throw Failure(code: .usage, message: "unknown subcommand '\(command)'; see 'photoctl --help'")
    }
    let defaults = DefaultPaths(environment: ProcessEnvironment.current)
    let sockets = socketFlag.map { [DefaultPaths.absolute($0)] } ?? defaults.clientSockets
    switch command {
    case "status": try status(rest, sockets: sockets)
    case "assets": try assets(rest, sockets: sockets)
    case "moments": try moments(rest, sockets: sockets)
    case "albums": try albums(rest, sockets: sockets)
    case "smart-albums": try smartAlbums(rest, sockets: sockets)
    case "folders": try folders(rest, sockets: sockets)
    case "places": try places(rest, sockets: sockets)
    case "search": try search(rest, sockets: sockets)
    case "errors": try errors(rest, sockets: sockets)
    case "watch": try watch(rest, sockets: sockets)
    case "favorite", "unfavorite", "hide", "unhide": try setFlag(command, rest, sockets: sockets)
    case "album": try album(rest, sockets: sockets)
    case "keywords": try keywords(rest, sockets: sockets)
    case "image": try image(rest, sockets: sockets)
    case "adopt": try adopt(rest, sockets: sockets)
    case "trash", "restore", "delete": try trashCommand(command, rest, sockets: sockets)
    default: try rescan(rest, sockets: sockets)
    }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
    if let problem = standardOutput.finish() {
        err("photoctl: \(problem)")
        exit(Exit.failure.rawValue)
    }
    exit(Exit.ok.rawValue)
} catch {
    // What was printed before the failure goes out first; a failure to write it is said too.
    let problem = standardOutput.finish()
    err("photoctl: \(error.message)")
    if let problem { err("photoctl: \(problem)") }
    exit(error.code.rawValue)
}
