import CLinux
import Foundation
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoWire

// photoctl: the command-line client of photod. Data goes to stdout (human tables, or one
// JSON object per line with --json); diagnostics go to stderr.
// Exit codes: 0 success, 1 failure, 64 usage error, 69 daemon unreachable.

enum Exit: Int32 {
    case ok = 0, failure = 1, usage = 64, unavailable = 69
}

struct Failure: Error {
    var code: Exit
    var message: String
}

let overview = """
    OVERVIEW: photoctl talks to photod, the photo and video library indexer.

    USAGE: photoctl [--socket PATH] <subcommand> [options]

    OPTIONS:
      --socket PATH     photod's socket (default: $PHOTOD_SOCKET; else $RUNTIME_DIRECTORY/photod.sock,
                        $XDG_RUNTIME_DIR/photod.sock or /tmp/photod-$UID/photod.sock, then the
                        system service's /run/photod/photod.sock). Allowed before or after the subcommand.
      --version         Print the version.
      -h, --help        Show help (also: photoctl help <subcommand>).

    SUBCOMMANDS:
      status            The daemon's state, counts and last scan.
      assets            List assets (the whole library, or one collection with --in ID).
      moments           Moments: the days with photos, newest first.
      albums            Folder albums: the folders that hold photos.
      smart-albums      Smart albums (Favorites, Videos, Screenshots, ...) and their counts.
      folders           The folder tree (collection lists) above the albums.
      errors            Files that could not be indexed, with the reason.

    Exit codes: 0 success, 1 failure, 64 usage error, 69 photod unreachable.
    """

let helps: [String: String] = [
    "status": """
        OVERVIEW: Show photod's state (indexing or idle), counts and last scan.

        USAGE: photoctl status [--wait] [--timeout SECONDS] [--json]

        OPTIONS:
          --wait              Return only once photod is idle (no scan running, nothing pending).
                              A missing or refusing socket is retried until the timeout, so this
                              can follow the daemon's start at once.
          --timeout SECONDS   How long --wait waits (default 120).
          --json              One JSON object (library.status's result) instead of a table.
        """,
    "assets": """
        OVERVIEW: List assets in the default order (capture time, then path, then id), or the
        assets of one collection (a moment, a folder album or a smart album) in its order.

        USAGE: photoctl assets [--in COLLECTION_ID] [--limit N] [--json]

        OPTIONS:
          --in ID             A collection id: m_20190504 (moment), f_... (album), s_favorites (smart album).
          --limit N           At most N assets (default: all, fetched a page at a time).
          --json              One JSON object per asset per line (the asset record).
        """,
    "moments": """
        OVERVIEW: List moments (one per calendar day on the capture clock), newest first.

        USAGE: photoctl moments [--year YYYY [--month M]] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--limit N] [--json]

        OPTIONS:
          --year YYYY         Only this year (with --month: only this month).
          --from, --to        Only days in this range (inclusive).
          --limit N           At most N moments.
          --json              One JSON object per moment per line.
        """,
    "albums": """
        OVERVIEW: List folder albums (every folder that directly holds photos or videos), in path order.

        USAGE: photoctl albums [--limit N] [--json]
        """,
    "smart-albums": """
        OVERVIEW: List the smart albums with their counts and rules.

        USAGE: photoctl smart-albums [--json]
        """,
    "folders": """
        OVERVIEW: Show the folder tree (collection lists) with the albums in it.

        USAGE: photoctl folders [--json]

        OPTIONS:
          --json              One JSON object per collection list per line.
        """,
    "errors": """
        OVERVIEW: List files that could not be indexed, with the reason.

        USAGE: photoctl errors [--json]

        OPTIONS:
          --json              One JSON object per file per line: path, code, message.
        """,
]

func write(_ text: String, to fd: Int32) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { raw in
        var off = 0
        while off < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
            if n <= 0 { return }
            off += n
        }
    }
}

func out(_ line: String) { write(line + "\n", to: 1) }
func err(_ line: String) { write(line + "\n", to: 2) }

/// Parsed options of one subcommand.
struct Arguments {
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var positional: [String] = []

    init(_ args: [String], flags allowedFlags: Set<String>, values allowedValues: Set<String>, command: String) throws(Failure) {
        var i = 0
        while i < args.count {
            var a = args[i]
            var inline: String?
            if a.hasPrefix("--"), let eq = a.firstIndex(of: "=") {
                inline = String(a[a.index(after: eq)...])
                a = String(a[..<eq])
            }
            if allowedFlags.contains(a), inline == nil {
                flags.insert(a)
            } else if allowedValues.contains(a) {
                if let inline {
                    values[a] = inline
                } else {
                    i += 1
                    guard i < args.count else { throw Failure(code: .usage, message: "\(a) needs a value") }
                    values[a] = args[i]
                }
            } else if a.hasPrefix("-") && a != "-" {
                throw Failure(code: .usage, message: "unknown option '\(a)' for '\(command)'")
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    func int(_ key: String, default value: Int?, range: ClosedRange<Int>) throws(Failure) -> Int? {
        guard let text = values[key] else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw Failure(code: .usage, message: "\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
        }
        return n
    }
}

/// How long one call may wait for photod before photoctl gives up (exit 69).
let callTimeout: Duration = .seconds(60)

func connect(_ sockets: [PathBytes], timeout: Duration = callTimeout) throws(Failure) -> PhotoConnection {
    do {
        return try PhotoConnection.connect(anyOf: sockets, timeout: timeout)
    } catch {
        throw Failure(code: .unavailable, message: "\(error) (is photod running? see 'photod --help')")
    }
}

func call(_ connection: PhotoConnection, _ method: String, _ params: JSONObject = [:]) throws(Failure) -> JSONValue {
    do {
        return try connection.call(method, params)
    } catch {
        switch error {
        case .rpc: throw Failure(code: .failure, message: "\(method): \(error)")
        default: throw Failure(code: .unavailable, message: "\(error)")
        }
    }
}

func grouped(_ n: Int64) -> String {
    let s = String(n)
    var out = ""
    for (i, c) in s.reversed().enumerated() {
        if i > 0, i % 3 == 0, c != "-" { out.append(",") }
        out.append(c)
    }
    return String(out.reversed())
}

func number(_ v: JSONValue?) -> String { v?.int64Value.map(grouped) ?? "-" }

// MARK: - Subcommands

func status(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--wait", "--json"], values: ["--timeout"], command: "status")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "status takes no arguments") }
    let timeout = try a.int("--timeout", default: 120, range: 0...86_400)!
    let wait = a.flags.contains("--wait")
    let deadline = ContinuousClock.now + .seconds(timeout)
    var result: JSONValue
    // --wait waits for the daemon at the first socket only: the system service's socket must not
    // stand in for a daemon that is still starting.
    let candidates = wait ? [sockets[0]] : sockets
    while true {
        do {
            // Never wait past the deadline, even on a daemon that accepts but does not answer.
            let remaining = max(.milliseconds(100), ContinuousClock.now.duration(to: deadline))
            let connection = try connect(candidates, timeout: wait ? remaining : callTimeout)
            result = try call(connection, "library.status")
            if !wait || result["state"]?.stringValue == "idle" { break }
        } catch where wait && error.code == .unavailable {
            // The daemon may not be listening yet: keep trying until the deadline.
            if ContinuousClock.now >= deadline { throw error }
            usleep(100_000)
            continue
        }
        if ContinuousClock.now >= deadline {
            throw Failure(code: .failure, message: "timed out after \(timeout) s waiting for photod to become idle "
                                                   + "(state: \(result["state"]?.stringValue ?? "?"))")
        }
        usleep(100_000)
    }
    if a.flags.contains("--json") {
        out(result.jsonString)
        return
    }
    let counts = result["counts"]
    out("photod \(result["version"]?.stringValue ?? "?") (pid \(result["pid"]?.int64Value.map(String.init) ?? "?")): "
        + (result["state"]?.stringValue ?? "?"))
    for root in result["roots"]?.arrayValue ?? [] {
        var line = "  root        \(root["path"]?.stringValue ?? "?") (\(root["state"]?.stringValue ?? "?"), \(number(root["assets"])) assets"
        if let mode = root["mode"]?.stringValue, mode != "unavailable" {
            let polled = root["polledTrees"]?.intValue ?? 0
            line += ", \(mode)" + (mode == "watched" && polled > 0 ? " (\(polled) trees polled)" : "")
        }
        if let reason = root["reason"]?.stringValue { line += ": \(reason)" }
        out(line + ")")
    }
    out("  assets      \(number(counts?["assets"])) (\(number(counts?["images"])) images, \(number(counts?["videos"])) videos)")
    out("  files       \(number(counts?["files"])) (\(number(counts?["errors"])) errors, \(number(counts?["ignored"])) not media)")
    if let deleted = counts?["recentlyDeleted"]?.intValue, deleted > 0 {
        out("  deleted     \(number(counts?["recentlyDeleted"])) in Recently Deleted")
    }
    if let scan = result["currentScan"], !scan.isNull {
        out("  scanning    \(number(scan["files"])) files seen, \(number(scan["committed"])) of \(number(scan["toRead"])) read")
    }
    if let last = result["lastScan"], !last.isNull {
        let seconds = last["seconds"]?.doubleValue.map { String(format: "%.2f s", $0) } ?? "?"
        out("  last scan   \(number(last["files"])) files, \(number(last["readFiles"])) read, \(seconds), "
            + "finished \(last["finishedAt"]?.stringValue ?? "?")")
    }
    if let queue = result["sortQueue"] {
        out("  sort queue  \(number(queue["jobsRun"])) jobs run, \(number(queue["jobsCancelled"])) merged into newer ones, "
            + "\(number(queue["pending"])) pending")
        if let lastError = queue["lastError"]?.stringValue { out("  last error  \(lastError)") }
    }
    if let w = result["watcher"], !w.isNull {
        if let error = w["error"]?.stringValue {
            out("  watching    no: \(error)")
        } else {
            out("  watching    \(number(w["watches"])) directories (budget \(number(w["budget"]))), "
                + "\(number(w["appliedChanges"])) changes applied, \(number(w["overflows"])) overflows")
        }
        let polled = (w["unwatchedTrees"]?.arrayValue?.count ?? 0) + (w["networkTrees"]?.arrayValue?.count ?? 0)
        if polled > 0 {
            out("  polling     \(polled) trees every \(number(w["pollIntervalSeconds"])) s (\(number(w["polls"])) polls so far)")
        }
        if let hint = w["hint"]?.stringValue { out("  hint        \(hint)") }
    }
    out("  database    \(result["database"]?.stringValue ?? "?")")
    out("  uptime      \(number(result["uptimeSeconds"])) s")
}

/// Pages through a paged method, calling `each` for every record.
func page(_ connection: PhotoConnection, _ method: String, key: String, limit: Int?, extra: JSONObject = [:],
          _ each: (JSONValue) -> Void) throws(Failure) {
    var offset = 0
    var remaining = limit ?? Int.max
    while remaining > 0 {
        let pageSize = min(remaining, WireLimits.maxPageSize)
        var params = extra
        params["limit"] = .int(Int64(pageSize))
        params["offset"] = .int(Int64(offset))
        let result = try call(connection, method, params)
        let records = result[key]?.arrayValue ?? []
        records.forEach(each)
        remaining -= records.count
        guard let next = result["nextOffset"]?.intValue, !records.isEmpty else { break }
        offset = next
    }
}

func assets(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: ["--limit", "--in"], command: "assets")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "assets takes no arguments") }
    let limit = try a.int("--limit", default: nil, range: 0...Int.max)
    let json = a.flags.contains("--json")
    let connection = try connect(sockets)
    var method = "assets.fetch"
    var extra: JSONObject = [:]
    if let collection = a.values["--in"] {
        method = "collections.assets"
        extra["id"] = .string(collection)
    }
    if !json { out("ID                      DATE                          TYPE   SIZE         PATH") }
    try page(connection, method, key: "assets", limit: limit, extra: extra) { asset in
        if json {
            out(asset.jsonString)
        } else {
            let size = "\(asset["pixelWidth"]?.int64Value.map(String.init) ?? "?")x\(asset["pixelHeight"]?.int64Value.map(String.init) ?? "?")"
            let date = (asset["localDateTime"]?.stringValue ?? "") + (asset["utcOffset"]?.stringValue ?? "")
            out([pad(asset["id"]?.stringValue ?? "", 23), pad(date, 29), pad(asset["mediaType"]?.stringValue ?? "", 6),
                 pad(size, 12), asset["path"]?.stringValue ?? ""].joined(separator: " "))
        }
    }
}

func errors(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: "errors")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "errors takes no arguments") }
    let connection = try connect(sockets)
    try page(connection, "library.errors", key: "errors", limit: nil) { e in
        if a.flags.contains("--json") {
            out(e.jsonString)
        } else {
            out("\(e["path"]?.stringValue ?? "?"): \(e["code"]?.stringValue ?? "?"): \(e["message"]?.stringValue ?? "")")
        }
    }
}

func moments(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: ["--limit", "--year", "--month", "--from", "--to"], command: "moments")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "moments takes no arguments") }
    let limit = try a.int("--limit", default: nil, range: 0...Int.max)
    var extra: JSONObject = [:]
    if let y = try a.int("--year", default: nil, range: 1...9999) { extra["year"] = .int(Int64(y)) }
    if let m = try a.int("--month", default: nil, range: 1...12) { extra["month"] = .int(Int64(m)) }
    if let f = a.values["--from"] { extra["from"] = .string(f) }
    if let t = a.values["--to"] { extra["to"] = .string(t) }
    let json = a.flags.contains("--json")
    let connection = try connect(sockets)
    if !json { out("ID           ASSETS PHOTOS VIDEOS  TITLE") }
    try page(connection, "moments.fetch", key: "moments", limit: limit, extra: extra) { m in
        if json { return out(m.jsonString) }
        out([pad(m["id"]?.stringValue ?? "", 12), lpad(number(m["assetCount"]), 6), lpad(number(m["photoCount"]), 6),
             lpad(number(m["videoCount"]), 6), " " + (m["title"]?.stringValue ?? "")].joined(separator: " "))
    }
}

func albums(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: ["--limit"], command: "albums")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "albums takes no arguments") }
    let limit = try a.int("--limit", default: nil, range: 0...Int.max)
    let json = a.flags.contains("--json")
    let connection = try connect(sockets)
    if !json { out("ID                 ASSETS  TITLE                PATH") }
    try page(connection, "albums.fetch", key: "albums", limit: limit) { album in
        if json { return out(album.jsonString) }
        out([pad(album["id"]?.stringValue ?? "", 18), lpad(number(album["assetCount"]), 6), " " + pad(album["title"]?.stringValue ?? "", 20),
             album["path"]?.stringValue ?? ""].joined(separator: " "))
    }
}

func smartAlbums(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: "smart-albums")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "smart-albums takes no arguments") }
    let result = try call(try connect(sockets), "smartAlbums.fetch")
    if !a.flags.contains("--json") { out("ID                  ASSETS  TITLE") }
    for album in result["smartAlbums"]?.arrayValue ?? [] {
        if a.flags.contains("--json") { out(album.jsonString); continue }
        out([pad(album["id"]?.stringValue ?? "", 19), lpad(number(album["assetCount"]), 6), " " + (album["title"]?.stringValue ?? "")]
            .joined(separator: " "))
    }
}

func folders(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: "folders")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "folders takes no arguments") }
    let connection = try connect(sockets)
    let lists = try call(connection, "collectionLists.fetch")["lists"]?.arrayValue ?? []
    if a.flags.contains("--json") {
        lists.forEach { out($0.jsonString) }
        return
    }
    var albums: [String: JSONValue] = [:]
    try page(connection, "albums.fetch", key: "albums", limit: nil) { albums[$0["id"]?.stringValue ?? ""] = $0 }
    let byID = Dictionary(lists.map { ($0["id"]?.stringValue ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    func show(_ list: JSONValue, depth: Int) {
        let indent = String(repeating: "  ", count: depth)
        out("\(indent)\(list["title"]?.stringValue ?? "?")/  (\(number(list["assetCount"])) assets in \(number(list["albumCount"])) albums)  \(list["id"]?.stringValue ?? "")")
        for id in list["albumIDs"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
            let album = albums[id]
            out("\(indent)  [\(album?["title"]?.stringValue ?? "?")]  \(number(album?["assetCount"])) assets  \(id)")
        }
        for id in list["listIDs"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
            if let child = byID[id] { show(child, depth: depth + 1) }
        }
    }
    for list in lists where list["parentID"]?.isNull ?? true { show(list, depth: 0) }
}

func lpad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

// MARK: - Main

func run(_ argv: [String]) throws(Failure) {
    var args: [String] = []
    var socketFlag: String?
    // --socket is global: accepted before or after the subcommand.
    var i = 0
    while i < argv.count {
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
        default:
            throw Failure(code: .usage, message: "unknown option '\(first)'")
        }
    }
    guard let command = args.first else {
        throw Failure(code: .usage, message: "missing subcommand (status, assets, moments, albums, smart-albums, folders, errors); see 'photoctl --help'")
    }
    let rest = Array(args.dropFirst())
    if command == "help" {
        if let topic = rest.first {
            guard let text = helps[topic] else { throw Failure(code: .usage, message: "no help for '\(topic)'") }
            out(text)
        } else {
            out(overview)
        }
        return
    }
    if rest.contains("-h") || rest.contains("--help") {
        guard let text = helps[command] else { throw Failure(code: .usage, message: "unknown subcommand '\(command)'") }
        out(text)
        return
    }
    let defaults = DefaultPaths(environment: ProcessInfo.processInfo.environment)
    let sockets = socketFlag.map { [DefaultPaths.absolute($0)] } ?? defaults.clientSockets
    switch command {
    case "status": try status(rest, sockets: sockets)
    case "assets": try assets(rest, sockets: sockets)
    case "errors": try errors(rest, sockets: sockets)
    case "moments": try moments(rest, sockets: sockets)
    case "albums": try albums(rest, sockets: sockets)
    case "smart-albums": try smartAlbums(rest, sockets: sockets)
    case "folders": try folders(rest, sockets: sockets)
    default: throw Failure(code: .usage, message: "unknown subcommand '\(command)'; see 'photoctl --help'")
    }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
    exit(Exit.ok.rawValue)
} catch {
    err("photoctl: \(error.message)")
    exit(error.code.rawValue)
}
