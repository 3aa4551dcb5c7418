#if canImport(Glibc)
import Glibc
#endif
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoWire

// The write subcommands: favorite/unfavorite, hide/unhide, album, keywords, rescan. Each is
// one call, answered by photod after its commit with the change token.

/// Prints a write's answer: the JSON object with --json, else `summary` and the change token.
func report(_ result: JSONValue, json: Bool, _ summary: String) {
    if json { return out(result.jsonString) }
    out(summary + (result["token"]?.int64Value.map { " (token \($0))" } ?? ""))
}

/// `favorite`, `unfavorite`, `hide`, `unhide`: `assets.setFavorite` / `assets.setHidden`.
func setFlag(_ command: String, _ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: command)
    guard !a.positional.isEmpty else { throw Failure(code: .usage, message: "\(command) needs at least one asset id") }
    let (method, key, value, verb): (String, String, Bool, String) = switch command {
    case "favorite": ("assets.setFavorite", "favorite", true, "favorited")
    case "unfavorite": ("assets.setFavorite", "favorite", false, "unfavorited")
    case "hide": ("assets.setHidden", "hidden", true, "hidden")
    default: ("assets.setHidden", "hidden", false, "unhidden")
    }
    let result = try call(try connect(sockets), method, ["ids": strings(a.positional), key: .bool(value)])
    let changed = result["updated"]?.arrayValue?.count ?? 0
    let unchanged = a.positional.count - changed
    report(result, json: a.json, "\(verb) \(changed) of \(a.positional.count) asset\(a.positional.count == 1 ? "" : "s")"
                                  + (unchanged > 0 ? " (\(unchanged) already \(unchanged == 1 ? "was" : "were"))" : ""))
}

/// `album list|create|create-folder|rename|move|delete|add|remove`.
func album(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let actions = "list, create, create-folder, rename, move, delete, add, remove"
    guard let action = args.first, !action.hasPrefix("-") else {
        throw Failure(code: .usage, message: "album needs a subcommand (\(actions)); see 'photoctl help album'")
    }
    let command = "album \(action)"
    let rest = Array(args.dropFirst())
    func arguments(flags: Set<String> = [], values: Set<String> = [], count: ClosedRange<Int>, usage: String) throws(Failure) -> Arguments {
        let a = try Arguments(rest, flags: flags.union(["--json"]), values: values, command: command)
        guard count.contains(a.positional.count) else { throw Failure(code: .usage, message: "usage: photoctl \(command) \(usage)") }
        return a
    }
    switch action {
    case "list":
        let a = try arguments(count: 0...0, usage: "[--json]")
        try listUserAlbums(try call(try connect(sockets), "userAlbums.fetch"), json: a.json)
    case "create", "create-folder":
        let a = try arguments(values: ["--folder"], count: 1...1, usage: "TITLE [--folder FOLDER_ID]")
        var params: JSONObject = ["title": .string(a.positional[0])]
        let folderKey = action == "create" ? "folder" : "parent"
        if let folder = a.values["--folder"] { params[folderKey] = .string(folder) }
        let result = try call(try connect(sockets), action == "create" ? "albums.create" : "albums.createFolder", params)
        if a.json { return out(result.jsonString) }
        out(result["id"]?.stringValue ?? "")
    case "rename":
        let a = try arguments(count: 2...2, usage: "ID TITLE")
        let result = try call(try connect(sockets), "albums.rename", ["id": .string(a.positional[0]), "title": .string(a.positional[1])])
        report(result, json: a.json, "renamed \(a.positional[0])")
    case "move":
        let a = try arguments(flags: ["--top"], values: ["--folder"], count: 1...1, usage: "ID (--folder FOLDER_ID | --top)")
        let folder: JSONValue
        switch (a.values["--folder"], a.flags.contains("--top")) {
        case (let id?, false): folder = .string(id)
        case (nil, true): folder = .null
        default: throw Failure(code: .usage, message: "album move needs either --folder FOLDER_ID or --top")
        }
        let result = try call(try connect(sockets), "albums.move", ["id": .string(a.positional[0]), "folder": folder])
        report(result, json: a.json, "moved \(a.positional[0]) to " + (folder.stringValue ?? "the top"))
    case "delete":
        let a = try arguments(count: 1...1, usage: "ID")
        let result = try call(try connect(sockets), "albums.delete", ["id": .string(a.positional[0])])
        report(result, json: a.json, "deleted \(a.positional[0])")
    case "add", "remove":
        let a = try arguments(count: 2...Int.max, usage: "ALBUM_ID ASSET_ID...")
        let ids = Array(a.positional.dropFirst())
        let result = try call(try connect(sockets), action == "add" ? "albums.addAssets" : "albums.removeAssets",
                              ["id": .string(a.positional[0]), "ids": strings(ids)])
        report(result, json: a.json, "\(action == "add" ? "added" : "removed") \(ids.count) asset\(ids.count == 1 ? "" : "s") "
                                     + "\(action == "add" ? "to" : "from") \(a.positional[0])")
    default:
        throw Failure(code: .usage, message: "unknown album subcommand '\(action)' (\(actions)); see 'photoctl help album'")
    }
}

/// `album list`: the folders (by `parentID`) and albums (by `folderID`) of `userAlbums.fetch`
/// as a tree, folders first, each level by title as photod orders them.
func listUserAlbums(_ result: JSONValue, json: Bool) throws(Failure) {
    let folders = result["folders"]?.arrayValue ?? []
    let albums = result["albums"]?.arrayValue ?? []
    if json {
        for (kind, records) in [("folder", folders), ("album", albums)] {
            for record in records {
                guard case .object(var o) = record else { continue }
                o["kind"] = .string(kind)
                out(JSONValue.object(o).jsonString)
            }
        }
        printToken(result["token"])
        return
    }
    let known = Set(folders.compactMap { $0["id"]?.stringValue })
    // The folder a record is in; one whose folder is not listed shows at the top.
    func container(_ record: JSONValue, _ key: String) -> String? {
        record[key]?.stringValue.flatMap { known.contains($0) ? $0 : nil }
    }
    func show(folder: String?, depth: Int) {
        let indent = String(repeating: "  ", count: depth)
        for f in folders where container(f, "parentID") == folder {
            let id = f["id"]?.stringValue ?? ""
            let albumCount = albums.count { container($0, "folderID") == id }
            let folderCount = folders.count { container($0, "parentID") == id }
            out(pad("\(indent)\(f["title"]?.stringValue ?? "?")/", 40) + "  "
                + pad("\(albumCount) album\(albumCount == 1 ? "" : "s"), \(folderCount) folder\(folderCount == 1 ? "" : "s")", 22)
                + "  \(id)")
            show(folder: id, depth: depth + 1)
        }
        for a in albums where container(a, "folderID") == folder {
            out(pad("\(indent)\(a["title"]?.stringValue ?? "?")", 40) + "  " + pad("\(number(a["assetCount"])) asset\(a["assetCount"]?.intValue == 1 ? "" : "s")", 22)
                + "  \(a["id"]?.stringValue ?? "")")
        }
    }
    if folders.isEmpty && albums.isEmpty {
        err("photoctl: no user albums yet (create one with 'photoctl album create TITLE')")
        return
    }
    show(folder: nil, depth: 0)
}

/// `keywords set|add|remove --source NAME ASSET_ID KEYWORD...`.
func keywords(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    guard let action = args.first, !action.hasPrefix("-") else {
        throw Failure(code: .usage, message: "keywords needs a subcommand (set, add, remove); see 'photoctl help keywords'")
    }
    let methods = ["set": "assets.setKeywords", "add": "assets.addKeywords", "remove": "assets.removeKeywords"]
    guard let method = methods[action] else {
        throw Failure(code: .usage, message: "unknown keywords subcommand '\(action)' (set, add, remove); see 'photoctl help keywords'")
    }
    let a = try Arguments(Array(args.dropFirst()), flags: ["--json"], values: ["--source"], command: "keywords \(action)")
    guard let source = a.values["--source"] else { throw Failure(code: .usage, message: "keywords \(action) needs --source NAME") }
    guard let id = a.positional.first, action == "set" || a.positional.count >= 2 else {
        throw Failure(code: .usage, message: "usage: photoctl keywords \(action) --source NAME ASSET_ID "
                                             + (action == "set" ? "[KEYWORD...]" : "KEYWORD..."))
    }
    let words = Array(a.positional.dropFirst())
    let result = try call(try connect(sockets), method, ["ids": strings([id]), "source": .string(source), "keywords": strings(words)])
    let changed = (result["updated"]?.arrayValue?.isEmpty == false) ? "" : " (no change)"
    let verb = ["set": "set", "add": "added", "remove": "removed"][action]!
    report(result, json: a.json, "\(verb) \(words.count) keyword\(words.count == 1 ? "" : "s") of '\(source)' on \(id)\(changed)")
}

/// `rescan [PATH]`: `library.rescan`, a relative path taken from the current directory.
func rescan(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: "rescan")
    guard a.positional.count <= 1 else { throw Failure(code: .usage, message: "usage: photoctl rescan [PATH]") }
    var params: JSONObject = [:]
    if let path = a.positional.first { params["path"] = .string(DefaultPaths.absolute(path).string) }
    let connection = try connect(sockets)
    // A rescan of a large library can take longer than an ordinary call.
    connection.setTimeout(nil)
    let result = try call(connection, "library.rescan", params)
    let trees = result["rescanned"]?.arrayValue?.compactMap(\.stringValue) ?? []
    report(result, json: a.json, "rescanned \(trees.joined(separator: ", "))")
    if !a.json {
        for tree in result["unavailable"]?.arrayValue ?? [] {
            err("photoctl: not compared, unavailable: \(tree["path"]?.stringValue ?? "?"): \(tree["reason"]?.stringValue ?? "?")")
        }
    }
}

/// `adopt PATH`: `library.adopt`, for a library root (or a mount point below one) that really
/// moved to another disk.
func adopt(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: [], command: "adopt")
    guard a.positional.count == 1, let path = a.positional.first else {
        throw Failure(code: .usage, message: "usage: photoctl adopt PATH")
    }
    let connection = try connect(sockets)
    // It reads every file of the tree again: longer than an ordinary call.
    connection.setTimeout(nil)
    let result = try call(connection, "library.adopt", ["path": .string(DefaultPaths.absolute(path).string)])
    let scan = result["scan"]
    report(result, json: a.json, "adopted \(result["adopted"]?.stringValue ?? path): \(scan?["files"]?.intValue ?? 0) files, "
           + "\(scan?["readFiles"]?.intValue ?? 0) read; \(result["recentlyDeleted"]?.intValue ?? 0) assets not found there "
           + "went to Recently Deleted")
}

/// `trash`, `restore`, `delete`: `assets.trash`, `assets.restore`, `assets.deletePermanently`.
/// `delete` asks first unless `--yes`.
func trashCommand(_ command: String, _ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: command == "delete" ? ["--json", "--yes"] : ["--json"], values: [], command: command)
    guard !a.positional.isEmpty else { throw Failure(code: .usage, message: "\(command) needs at least one asset id") }
    let n = a.positional.count
    let assets = "\(n) asset\(n == 1 ? "" : "s")"
    if command == "delete", !a.flags.contains("--yes") {
        writeAll(Array("Delete \(assets) and \(n == 1 ? "its" : "their") files for good? This cannot be undone. [y/N] ".utf8), to: 2)
        let answer = readLine(strippingNewline: true)?.lowercased() ?? ""
        guard answer == "y" || answer == "yes" else {
            throw Failure(code: .failure, message: answer.isEmpty && isatty(0) != 1
                          ? "not deleted: no answer (use --yes to delete without asking)" : "not deleted")
        }
    }
    let method = switch command {
    case "trash": "assets.trash"
    case "restore": "assets.restore"
    default: "assets.deletePermanently"
    }
    let result: JSONValue
    do {
        result = try call(try connect(sockets), method, ["ids": strings(a.positional)])
    } catch {
        // Every refused asset with its reason (the call's message names the first).
        for r in error.rpc?.data?["refused"]?.arrayValue ?? [] where !a.json {
            err("photoctl: refused \(r["id"]?.stringValue ?? "?"): \(r["detail"]?.stringValue ?? "?")")
        }
        throw error
    }
    switch command {
    case "trash":
        report(result, json: a.json, "moved \(assets) to Recently Deleted (their files renamed in place to .photod-trashed- names)")
    case "restore":
        let restored = result["restored"]?.arrayValue?.count ?? 0
        report(result, json: a.json, "restored \(restored) of \(assets)")
        if !a.json {
            for r in result["renamed"]?.arrayValue ?? [] {
                out("  \(r["from"]?.stringValue ?? "?") was taken: restored as \(r["to"]?.stringValue ?? "?")")
            }
        }
    default:
        let deleted = result["deleted"]?.arrayValue?.count ?? 0
        report(result, json: a.json, "deleted \(deleted) of \(assets) for good")
    }
    // Assets left as they were (a trashed file that could not be unlinked, a restore the index
    // could not take back yet): said on stderr, and the exit status is 1.
    let kept = result["kept"]?.arrayValue ?? []
    for k in kept where !a.json {
        err("photoctl: kept \(k["id"]?.stringValue ?? "?"): \(k["reason"]?.stringValue ?? "?")")
    }
    if !kept.isEmpty { throw Failure(code: .failure, message: "\(kept.count) of \(assets) kept as they were") }
}
