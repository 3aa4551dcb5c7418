import Glibc
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoWire

// The read subcommands: status, assets, moments, albums, smart-albums, folders, errors.

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
        for mount in root["unavailableMounts"]?.arrayValue ?? [] {
            out("    mount     \(mount["path"]?.stringValue ?? "?") (unavailable: \(mount["reason"]?.stringValue ?? "?"))")
        }
    }
    out("  assets      \(number(counts?["assets"])) (\(number(counts?["images"])) images, \(number(counts?["videos"])) videos)")
    out("  files       \(number(counts?["files"])) (\(number(counts?["errors"])) errors, \(number(counts?["ignored"])) not media)")
    if let deleted = counts?["recentlyDeleted"]?.intValue, deleted > 0 {
        out("  deleted     \(number(counts?["recentlyDeleted"])) in Recently Deleted")
    }
    if let scan = result["currentScan"], !scan.isNull {
        let progress = ProgressWords.scan(read: scan["committed"]?.intValue ?? 0,
                                          toRead: scan["expected"]?.intValue ?? scan["toRead"]?.intValue ?? 0,
                                          walkFinished: scan["expectedFinal"]?.boolValue ?? scan["walkFinished"]?.boolValue ?? true,
                                          filesPerSecond: scan["filesPerSecond"]?.doubleValue,
                                          secondsLeft: scan["secondsLeft"]?.doubleValue)
        out("  scanning    \(progress) (\(number(scan["files"])) files seen)")
    }
    if let last = result["lastScan"], !last.isNull {
        let seconds = last["seconds"]?.doubleValue.map { fixedDecimals($0, 2) + " s" } ?? "?"
        out("  last scan   \(number(last["files"])) files, \(number(last["readFiles"])) read, \(seconds), "
            + "finished \(last["finishedAt"]?.stringValue ?? "?")")
        if let busy = last["busyFiles"]?.intValue, busy > 0 {
            out("              \(number(last["busyFiles"])) file(s) held open for writing by another process: read once closed")
        }
    }
    if let queue = result["sortQueue"] {
        out("  sort queue  \(number(queue["jobsRun"])) jobs run, \(number(queue["jobsCancelled"])) merged into newer ones, "
            + "\(number(queue["pending"])) pending")
        if let lastError = queue["lastError"]?.stringValue { out("  last error  \(lastError)") }
        if queue["waitingForSpace"]?.boolValue == true {
            out("  DISK FULL   changes are held and retried until there is space; reads go on, writes are refused")
        }
    }
    if let writes = result["databaseWrites"], writes["state"]?.stringValue == "failing" {
        out("  DISK ERROR  the database cannot be written (\(writes["reason"]?.stringValue ?? "?")): changes are held, "
            + "writes are refused until it can; reads go on")
    }
    if let unreadable = result["unreadableFiles"]?.arrayValue, let first = unreadable.first {
        out("  unreadable  \(unreadable.count) file(s) the disk failed to read, kept as indexed and read again at the next "
            + "scan (e.g. \(first["path"]?.stringValue ?? "?"): \(first["reason"]?.stringValue ?? "?"))")
    }
    if let r = result["recovery"], !r.isNull {
        let restored = r["restored"]
        let at = r["at"]?.int64Value.map { LocalDateTime(unixSeconds: $0 / 1000, offsetSeconds: 0).map { $0.description + "Z" } ?? "?" } ?? "?"
        out("  recovered   the database was \(r["reason"]?.stringValue ?? "damaged") at \(at): "
            + "kept as \(r["damagedFile"]?.stringValue ?? "?"), index rebuilt, user state \(r["state"]?.stringValue ?? "?")"
            + (restored.map { " (\(number($0["favorites"])) favorites, \(number($0["albums"])) albums, "
                + "\(number($0["assetsNotFound"])) assets not found)" } ?? ""))
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
    if let i = result["images"], !i.isNull {
        let megabytes = { (v: JSONValue?) in fixedDecimals(Double(v?.int64Value ?? 0) / 1_048_576, 1) }
        out("  images      \(number(i["cachedImages"])) cached (\(megabytes(i["cacheBytes"])) of \(megabytes(i["cacheCapacity"])) MiB) "
            + "in \(i["cacheDirectory"]?.stringValue ?? "?"); \(number(i["requests"])) requests, \(number(i["cacheHits"])) hits, "
            + "\(number(i["rendered"])) rendered, \(number(i["failed"])) failed")
    }
    if let m = result["memory"], let resident = m["residentBytes"]?.int64Value {
        out("  memory      \(fixedDecimals(Double(resident) / 1_048_576, 1)) MiB resident, rested \(number(m["rests"])) time(s)")
    }
    out("  database    \(result["database"]?.stringValue ?? "?")")
    out("  uptime      \(number(result["uptimeSeconds"])) s")
}

/// Pages through a paged method, calling `each` for every record; returns the first page's
/// change token (the listing reflects every change up to it).
@discardableResult
func page(_ connection: PhotoConnection, _ method: String, key: String, limit: Int?, extra: JSONObject = [:],
          _ each: (JSONValue) -> Void) throws(Failure) -> JSONValue? {
    var offset = 0
    var remaining = limit ?? Int.max
    var token: JSONValue?
    // Even `--limit 0` asks for one page, for its token.
    repeat {
        let pageSize = max(1, min(remaining, WireLimits.maxPageSize))
        var params = extra
        params["limit"] = .int(Int64(pageSize))
        params["offset"] = .int(Int64(offset))
        let result = try call(connection, method, params)
        if token == nil { token = result["token"] }
        let records = (result[key]?.arrayValue ?? []).prefix(remaining)
        records.forEach(each)
        remaining -= records.count
        guard let next = result["nextOffset"]?.intValue, !records.isEmpty else { break }
        offset = next
    } while remaining > 0
    return token
}

/// The last line of a list's `--json` output: `{"token":N}`, the change token the records
/// reflect, so that `photoctl watch --since N` goes on from the listing with no change set
/// missed and none it already shows. Of a paged listing, the first page's: a change committed
/// while later pages were read comes after it, and the watch prints it.
func printToken(_ token: JSONValue?) {
    guard let token = token?.int64Value else { return }
    out(JSONValue.object(["token": .int(token)]).jsonString)
}

func assets(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json", "--include-hidden"], values: ["--limit", "--in", "--where", "--sort"],
                          command: "assets")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "assets takes no arguments (a predicate goes after --where)") }
    var extra: JSONObject = [:]
    if let collection = a.values["--in"] { extra["id"] = .string(collection) }
    try listAssets(a.values["--in"] == nil ? "assets.fetch" : "collections.assets", a, extra: extra, sockets: sockets)
}

/// `photoctl search WORDS...`: the words as one query (`assets.search`), with the options
/// `assets` takes.
func search(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json", "--include-hidden"], values: ["--limit", "--where", "--sort"], command: "search")
    guard !a.positional.isEmpty else { throw Failure(code: .usage, message: "search takes the words to search for") }
    try listAssets("assets.search", a, extra: ["query": .string(a.positional.joined(separator: " "))], sockets: sockets)
}

/// Lists the assets a fetch, a collection or a search pages through, as a table or JSON lines.
private func listAssets(_ method: String, _ a: Arguments, extra given: JSONObject, sockets: [PathBytes]) throws(Failure) {
    let limit = try a.int("--limit", default: nil, range: 0...Int.max)
    let json = a.json
    var extra = given
    if let predicate = a.values["--where"] { extra["predicate"] = .string(predicate) }
    if let sort = a.values["--sort"] { extra["sort"] = .string(sort) }
    if a.flags.contains("--include-hidden") { extra["includeHidden"] = .bool(true) }
    let connection = try connect(sockets)
    var header = false
    let token: JSONValue?
    do {
        token = try page(connection, method, key: "assets", limit: limit, extra: extra) { asset in
            if json { return out(asset.jsonString) }
            if !header {
                out("ID                      DATE                          TYPE   SIZE         PATH")
                header = true
            }
            let size = "\(asset["pixelWidth"]?.int64Value.map(String.init) ?? "?")x\(asset["pixelHeight"]?.int64Value.map(String.init) ?? "?")"
            let date = (asset["localDateTime"]?.stringValue ?? "") + (asset["utcOffset"]?.stringValue ?? "")
            out([pad(asset["id"]?.stringValue ?? "", 23), pad(date, 29), pad(asset["mediaType"]?.stringValue ?? "", 6),
                 pad(size, 12), asset["path"]?.stringValue ?? ""].joined(separator: " "))
        }
    } catch {
        throw queryFailure(error, options: ["predicate": a.values["--where"], "sort": a.values["--sort"],
                                            "query": extra["query"]?.stringValue])
    }
    if json { printToken(token) }
    if !json && !header { out("ID                      DATE                          TYPE   SIZE         PATH") }
}

/// A predicate or sort photod could not parse is the user's mistake (exit 64): its message,
/// then the text with a caret under the spot (`data.position`, in Unicode scalars).
func queryFailure(_ failure: Failure, options: [String: String?]) -> Failure {
    guard let rpc = failure.rpc, rpc.errorCode == .invalidParams, let param = rpc.data?["param"]?.stringValue,
          let text = options[param] ?? nil else { return failure }
    var message = failure.message
    if let position = rpc.data?["position"]?.intValue {
        message += "\n    \(text)\n    \(caretLine(under: text, at: position))"
    }
    return Failure(code: .usage, message: message, rpc: rpc)
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
    let token = try page(connection, "moments.fetch", key: "moments", limit: limit, extra: extra) { m in
        if json { return out(m.jsonString) }
        out([pad(m["id"]?.stringValue ?? "", 12), lpad(number(m["assetCount"]), 6), lpad(number(m["photoCount"]), 6),
             lpad(number(m["videoCount"]), 6),
             // The day, and where (a photod before places sent the day as `title`).
             " " + [m["dateTitle"]?.stringValue ?? m["title"]?.stringValue, m["dateTitle"] == nil ? nil : m["title"]?.stringValue]
                .compactMap { $0 }.joined(separator: " · ")].joined(separator: " "))
    }
    if json { printToken(token) }
}

func albums(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: ["--limit"], command: "albums")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "albums takes no arguments") }
    let limit = try a.int("--limit", default: nil, range: 0...Int.max)
    let json = a.flags.contains("--json")
    let connection = try connect(sockets)
    if !json { out("ID                 ASSETS  TITLE                PATH") }
    let token = try page(connection, "albums.fetch", key: "albums", limit: limit) { album in
        if json { return out(album.jsonString) }
        out([pad(album["id"]?.stringValue ?? "", 18), lpad(number(album["assetCount"]), 6), " " + pad(album["title"]?.stringValue ?? "", 20),
             album["path"]?.stringValue ?? ""].joined(separator: " "))
    }
    if json { printToken(token) }
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
    if a.flags.contains("--json") { printToken(result["token"]) }
}

func places(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: "places")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "places takes no arguments") }
    let result = try call(try connect(sockets), "places.fetch")
    let json = a.flags.contains("--json")
    if !json { out("ID                   ASSETS  PLACE") }
    func show(_ node: JSONValue, depth: Int) {
        out([pad(node["id"]?.stringValue ?? "", 20), lpad(number(node["assetCount"]), 6),
             " " + String(repeating: "  ", count: depth) + (node["title"]?.stringValue ?? "")].joined(separator: " "))
        for child in node["places"]?.arrayValue ?? [] { show(child, depth: depth + 1) }
    }
    for country in result["places"]?.arrayValue ?? [] {
        if json { out(country.jsonString) } else { show(country, depth: 0) }
    }
    if json { printToken(result["token"]) }
}

func folders(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: "folders")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "folders takes no arguments") }
    let connection = try connect(sockets)
    let result = try call(connection, "collectionLists.fetch")
    let lists = result["lists"]?.arrayValue ?? []
    if a.flags.contains("--json") {
        lists.forEach { out($0.jsonString) }
        printToken(result["token"])
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


/// `image ID --size WxH [--mode fit|fill] [--fast]`: `images.request`; prints the final image's
/// path (or, with --fast, whatever photod answered first).
func image(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json", "--fast"], values: ["--size", "--mode"], command: "image")
    guard a.positional.count == 1 else { throw Failure(code: .usage, message: "usage: photoctl image ID --size WxH [--mode fit|fill]") }
    guard let sizeText = a.values["--size"] else { throw Failure(code: .usage, message: "image needs --size WxH, e.g. --size 512x512") }
    let sides = sizeText.lowercased().split(separator: "x", omittingEmptySubsequences: false)
    guard sides.count == 2, let w = Int(sides[0]), let h = Int(sides[1]), (1...16_384).contains(w), (1...16_384).contains(h) else {
        throw Failure(code: .usage, message: "--size must be WxH with each side 1...16384, e.g. 512x512 (got '\(sizeText)')")
    }
    let mode = a.values["--mode"] ?? "fit"
    guard mode == "fit" || mode == "fill" else { throw Failure(code: .usage, message: "--mode must be fit or fill (got '\(mode)')") }
    let result = try call(try connect(sockets), "images.request",
                          ["id": .string(a.positional[0]), "targetSize": .array([.int(Int64(w)), .int(Int64(h))]),
                           "contentMode": .string(mode), "deliveryMode": .string(a.flags.contains("--fast") ? "fast" : "highQuality")])
    if a.json { return out(result.jsonString) }
    guard let path = result["path"]?.stringValue else { throw Failure(code: .failure, message: "images.request: no path in \(result.jsonString)") }
    out(path)
}
