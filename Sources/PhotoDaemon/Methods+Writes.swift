import Dispatch
import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoWire

/// Who may write: root, photod's own user, and the members of the write group. Checked with
/// the peer's credentials (`SO_PEERCRED`) before a write's parameters are looked at.
struct WriteAccess: Sendable {
    var daemonUID: UInt32
    var writeGroup: UInt32?

    func check(_ client: ClientContext) throws(RPCError) {
        if client.uid == 0 || client.uid == daemonUID { return }
        if let group = writeGroup, client.gid == group || Groups.of(pid: client.pid).contains(group) { return }
        throw .permissionDenied("uid \(client.uid) may read but not write: writes are for root, photod's own user (uid \(daemonUID))"
                                + (writeGroup.map { " and the write group (gid \($0))" } ?? " (no --write-group is set)"))
    }
}

/// The write methods: user state (favorites, hidden, user albums and folders, taggers'
/// keywords) and rescans. Each goes through the sort queue like every other change, in one
/// transaction with its change set, and is answered after its commit, with the token.
extension Methods {
    /// The access check of each write method, for the dispatcher to run before the parameters
    /// are decoded.
    var admission: [String: @Sendable (ClientContext) throws(RPCError) -> Void] {
        let check: @Sendable (ClientContext) throws(RPCError) -> Void = { [access] c throws(RPCError) in try access.check(c) }
        return Dictionary(uniqueKeysWithValues: Self.writeNames.map { ($0, check) })
    }

    /// The write methods, each behind the access check (again: a dispatcher without
    /// `admission` still cannot let a write through).
    var writeTable: [String: MethodHandler] {
        func guarded(_ body: @escaping @Sendable (RPCParams) throws(RPCError) -> JSONValue) -> MethodHandler {
            { [access] p, c throws(RPCError) in
                try access.check(c)
                return try body(p)
            }
        }
        return [
            "assets.setFavorite": guarded { p throws(RPCError) in try setFlag(.favorite, p) },
            "assets.setHidden": guarded { p throws(RPCError) in try setFlag(.hidden, p) },
            "assets.setKeywords": guarded { p throws(RPCError) in try keywords(p) { .replace($0) } },
            "assets.addKeywords": guarded { p throws(RPCError) in try keywords(p) { .add($0) } },
            "assets.removeKeywords": guarded { p throws(RPCError) in try keywords(p) { .remove($0) } },
            "albums.create": guarded { p throws(RPCError) in try createAlbum(p) },
            "albums.createFolder": guarded { p throws(RPCError) in try createFolder(p) },
            "albums.rename": guarded { p throws(RPCError) in try renameCollection(p) },
            "albums.move": guarded { p throws(RPCError) in try moveCollection(p) },
            "albums.delete": guarded { p throws(RPCError) in try deleteCollection(p) },
            "albums.addAssets": guarded { p throws(RPCError) in try albumMembers(p, add: true) },
            "albums.removeAssets": guarded { p throws(RPCError) in try albumMembers(p, add: false) },
            "library.rescan": guarded { p throws(RPCError) in try rescan(p) },
            "library.adopt": guarded { p throws(RPCError) in try adopt(p) },
            "assets.trash": guarded { p throws(RPCError) in try trashAssets(p) },
            "assets.restore": guarded { p throws(RPCError) in try restoreAssets(p) },
            "assets.deletePermanently": guarded { p throws(RPCError) in try deleteAssetsPermanently(p) },
        ]
    }

    static let writeNames = ["assets.setFavorite", "assets.setHidden", "assets.setKeywords", "assets.addKeywords",
                             "assets.removeKeywords", "albums.create", "albums.createFolder", "albums.rename", "albums.move",
                             "albums.delete", "albums.addAssets", "albums.removeAssets", "library.rescan", "library.adopt",
                             "assets.trash", "assets.restore", "assets.deletePermanently"]

    /// Runs a write on the sort queue and waits for its commit.
    func commit(_ operation: @escaping SortQueue.Operation) throws(RPCError) -> ChangeSet {
        do {
            return try sortQueue.commit(operation)
        } catch {
            throw Self.rpcError(error)
        }
    }

    static func rpcError(_ error: StoreError) -> RPCError {
        switch error.code {
        case .notFound: return .notFound(error.message, extra: ["ids": .array(error.missing.map { .string($0) })])
        case .invalid: return .invalidParams(error.message)
        case .full: return .unavailable("the disk is full: \(error.message)")
        case .busy: return .unavailable("the database is busy: \(error.message)")
        case .ioError: return .unavailable("the database cannot be written now: \(error.message)")
        default: return .internalError("the write failed: \(error)")
        }
    }

    static func written(_ summary: ChangeSet, _ extra: JSONObject = [:]) -> JSONValue {
        var o = extra
        o["token"] = summary.token.map { .int($0) } ?? .null
        o["updated"] = .array(summary.updated.map { .string($0.rawValue) })
        return .object(o)
    }

    /// `ids`: asset ids (1–10,000); malformed ones are `invalidParams`.
    static func assetIDs(_ p: RPCParams, key: String = "ids") throws(RPCError) -> [AssetID] {
        let texts = try p.stringArray(key, maxCount: IndexWriter.maxIDsPerWrite)
        guard !texts.isEmpty else { throw .invalidParams("'\(key)' must name at least one asset", param: key) }
        var ids: [AssetID] = []
        for text in texts {
            guard let id = AssetID(rawValue: text) else {
                throw .invalidParams("'\(text)' is not an asset id (they look like a_3ocnwoznuaa7slhsdfeq)", param: key)
            }
            ids.append(id)
        }
        return ids
    }

    /// `assets.setFavorite` `{"ids": [...], "favorite": bool}`, `assets.setHidden` `{"ids", "hidden"}`
    /// → `{"token", "updated": [ids that changed]}`.
    func setFlag(_ flag: UserFlag, _ p: RPCParams) throws(RPCError) -> JSONValue {
        let key = flag == .favorite ? "favorite" : "hidden"
        try p.rejectUnknownKeys(allowed: ["ids", key])
        let ids = try Self.assetIDs(p)
        let value = try p.bool(key)
        return Self.written(try commit { writer, now in try writer.set(flag, value, ids: ids, now: now) })
    }

    /// `assets.setKeywords` / `addKeywords` / `removeKeywords` `{"ids", "source", "keywords"}`.
    func keywords(_ p: RPCParams, _ edit: ([String]) -> KeywordEdit) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["ids", "source", "keywords"])
        let ids = try Self.assetIDs(p)
        let source = try p.string("source")
        let change = edit(try p.stringArray("keywords", maxCount: 1_000))
        return Self.written(try commit { writer, now in try writer.editKeywords(change, source: source, ids: ids, now: now) })
    }

    /// `albums.create` `{"title", "folder"?}` → `{"id", "token"}`.
    func createAlbum(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["title", "folder"])
        let title = try p.string("title")
        let folder = try p.optionalString("folder")
        let made = Locked<String?>(nil)
        let summary = try commit { writer, now in
            let (id, summary) = try writer.createUserAlbum(title: title, folder: folder, now: now)
            made.withLock { $0 = id }
            return summary
        }
        return Self.written(summary, ["id": .string(made.withLock { $0 } ?? "")])
    }

    /// `albums.createFolder` `{"title", "parent"?}` → `{"id", "token"}`.
    func createFolder(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["title", "parent"])
        let title = try p.string("title")
        let parent = try p.optionalString("parent")
        let made = Locked<String?>(nil)
        let summary = try commit { writer, now in
            let (id, summary) = try writer.createUserFolder(title: title, parent: parent, now: now)
            made.withLock { $0 = id }
            return summary
        }
        return Self.written(summary, ["id": .string(made.withLock { $0 } ?? "")])
    }

    /// `albums.rename` `{"id", "title"}` (an album or a folder).
    func renameCollection(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["id", "title"])
        let id = try p.string("id")
        let title = try p.string("title")
        return Self.written(try commit { writer, now in try writer.renameUserCollection(id, title: title, now: now) })
    }

    /// `albums.move` `{"id", "folder": id | null}` (an album or a folder; null: to the top).
    func moveCollection(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["id", "folder"])
        let id = try p.string("id")
        guard p.members["folder"] != nil else { throw .invalidParams("'folder' is required (a folder id, or null for the top)", param: "folder") }
        let folder = try p.optionalString("folder")
        return Self.written(try commit { writer, now in try writer.moveUserCollection(id, to: folder, now: now) })
    }

    /// `albums.delete` `{"id"}`: a user album, or a folder with everything in it. The assets stay.
    func deleteCollection(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["id"])
        let id = try p.string("id")
        return Self.written(try commit { writer, now in try writer.deleteUserCollection(id, now: now) })
    }

    /// `albums.addAssets` / `albums.removeAssets` `{"id", "ids"}`.
    func albumMembers(_ p: RPCParams, add: Bool) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["id", "ids"])
        let album = try p.string("id")
        let ids = try Self.assetIDs(p)
        return Self.written(try commit { writer, now in
            add ? try writer.addToUserAlbum(album, ids: ids, now: now) : try writer.removeFromUserAlbum(album, ids: ids, now: now)
        })
    }

    /// `library.rescan` `{"path"?}`: compares a directory tree inside the library (or every
    /// root) with the disk; answers when done, with the token after it.
    func rescan(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["path"])
        var trees: [PathBytes] = []
        if let text = try p.optionalString("path") {
            let path = try Self.libraryPath(text)
            guard info.roots.contains(where: { path.isWithin($0) }) else {
                let resolved = path.string == text ? "" : " (that is, '\(path)')"
                throw .invalidParams("'\(text)'\(resolved) is not inside a library root (\(info.roots.map(\.string).joined(separator: ", ")))",
                                     param: "path")
            }
            trees = [path]
        }
        live.rescan(trees)
        // Nothing below an unavailable tree was compared with the disk: say so rather than "done".
        let offline = self.trees.unavailableRoots.merging(self.trees.unavailableMounts) { a, _ in a }
        for tree in trees {
            if let (top, reason) = offline.first(where: { tree.isWithin($0.key) }) {
                throw .unavailable("'\(tree)' was not rescanned: \(top) is unavailable (\(reason))")
            }
        }
        let bounds = try feed.journalBounds()
        var result: JSONObject = ["token": .int(bounds.current),
                                  "rescanned": .array((trees.isEmpty ? info.roots : trees).map { .string($0.string) })]
        // What lies in the trees asked for and could not be compared (a mount below them).
        result["unavailable"] = WireMapping.unavailableTrees(
            trees.isEmpty ? offline : offline.filter { t in trees.contains { t.key.isWithin($0) } })
        return .object(result)
    }

    /// A `path` parameter as photod compares it with the roots: absolute; what the kernel
    /// resolves it to when it exists, else taken lexically (`.`, `..`, repeated and trailing
    /// slashes), so that `..` cannot climb out of a root unseen: ROOT/../elsewhere is elsewhere,
    /// not a tree below ROOT.
    static func libraryPath(_ text: String) throws(RPCError) -> PathBytes {
        guard text.hasPrefix("/") else { throw .invalidParams("'path' must be absolute (got '\(text)')", param: "path") }
        return DefaultPaths.canonical(PathBytes(text)) ?? DefaultPaths.normalized(PathBytes(text))
    }

    /// `library.adopt` `{"path"}`: the library root, or the mount point below one, at `path` is
    /// on another file system than the one indexed because the library really moved there (a
    /// new disk): accept it, matching its files to their assets by path and then by content
    /// (ids, favorites and albums carry over); files found nowhere go to Recently Deleted.
    /// Answers when done, with the token after it.
    func adopt(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["path"])
        let text = try p.string("path")
        let path = try Self.libraryPath(text)
        guard info.roots.contains(path) || (info.roots.contains { path.isWithin($0) } && trees.isTree(path)) else {
            throw .invalidParams("'\(text)' is neither a library root nor a mount point below one "
                                 + "(roots: \(info.roots.map(\.string).joined(separator: ", ")))", param: "path")
        }
        let before = try query { try $0.counts() }
        switch live.adopt(path) {
        case .failed(let reason):
            throw .unavailable("'\(path)' was not adopted: \(reason)")
        case .adopted(let report):
            let bounds = try feed.journalBounds()
            let after = try query { try $0.counts() }
            return .object(["token": .int(bounds.current), "adopted": .string(path.string), "scan": WireMapping.scanReport(report),
                            "recentlyDeleted": .int(Int64(max(0, after.recentlyDeleted - before.recentlyDeleted)))])
        }
    }
}
