import Glibc
import PhotoModel
import PhotoSystem
import PhotoWire

/// photod's library as a Swift program sees it (PhotoKit's `PHPhotoLibrary` and the fetch
/// methods of `PHAsset` and `PHAssetCollection`): fetches with predicates and sort orders,
/// collections, user-state writes, change tokens, change details and a change stream.
///
/// Calls block the calling thread until the daemon answers: call them from your own thread or
/// queue, not from Swift concurrency's shared pool. One library may be shared between threads
/// (its calls take turns on one connection). The connection opens at the first call; when it
/// breaks, the next call opens a new one, and calls that are safe to repeat (reads, flag and
/// keyword writes) are retried once on it.
public final class PhotoLibrary: Sendable {
    /// The sockets tried in order when connecting.
    public let sockets: [PathBytes]
    /// How long one call may wait for the daemon; nil waits forever.
    public let timeout: Duration?
    private let connection = Locked<PhotoConnection?>(nil)

    /// A library reached through `socket`.
    public convenience init(socket: PathBytes, timeout: Duration? = .seconds(60)) {
        self.init(sockets: [socket], timeout: timeout)
    }

    /// A library reached through the socket at `socketPath`.
    public convenience init(socketPath: String, timeout: Duration? = .seconds(60)) {
        self.init(sockets: [PathBytes(socketPath)], timeout: timeout)
    }

    /// The library of the photod a user's programs find by default: `$PHOTOD_SOCKET`, the
    /// user's runtime directory, then the system service's `/run/photod/photod.sock` (as photoctl).
    public convenience init(timeout: Duration? = .seconds(60)) {
        self.init(sockets: DefaultPaths(environment: ProcessEnvironment.current).clientSockets, timeout: timeout)
    }

    /// A library reached through the first of `sockets` that answers (see
    /// `DefaultPaths.clientSockets` for the usual places).
    public init(sockets: [PathBytes], timeout: Duration? = .seconds(60)) {
        self.sockets = sockets
        self.timeout = timeout
    }

    /// Closes the connection; the next call opens a new one.
    public func close() {
        connection.withLock { c in
            c?.close()
            c = nil
        }
    }

    // MARK: Calls

    /// Calls `method` with `params` and returns its result (for methods this type does not wrap).
    public func call(_ method: String, _ params: JSONObject = [:]) throws(ClientError) -> JSONValue {
        try call(method, params, retry: false)
    }

    /// Calls `method`; when `retry` and a connection kept from earlier calls turns out broken
    /// (the daemon restarted), repeats the call once on a new connection.
    func call(_ method: String, _ params: JSONObject, retry: Bool,
              intercept: (RPCNotification, RPCID) -> Bool = { _, _ in false }) throws(ClientError) -> JSONValue {
        try connection.withLock { (c: inout PhotoConnection?) throws(ClientError) -> JSONValue in
            var attempts = 0
            while true {
                attempts += 1
                let reused = c != nil
                if c == nil { c = try PhotoConnection.connect(anyOf: sockets, timeout: timeout) }
                do throws(ClientError) {
                    return try c!.call(method, params, intercept: intercept)
                } catch {
                    switch error {
                    case .rpc, .malformedReply: throw error
                    case .unreachable, .timedOut, .connection:
                        c?.close()
                        c = nil
                        if retry && reused && attempts == 1 { continue }
                        throw error
                    }
                }
            }
        }
    }

    /// Calls `method` and decodes its result with `decode`.
    func call<T>(_ method: String, _ params: JSONObject = [:], retry: Bool = true,
                 _ decode: (Fields) throws(MalformedReply) -> T) throws(ClientError) -> T {
        let value = try call(method, params, retry: retry)
        do throws(MalformedReply) {
            return try decode(try Fields(value, at: ""))
        } catch {
            throw .malformedReply(method: method, error)
        }
    }

    // MARK: Assets

    /// The library's assets that `options` selects, in its order: the ids, from one snapshot.
    public func fetchAssets(_ options: FetchOptions = FetchOptions()) throws(ClientError) -> FetchResult {
        try fetch(FetchRequest(options: options))
    }

    /// The assets of one collection (a moment, folder, smart or user album) that `options`
    /// selects, in its order (the collection's own when `options` has no sort).
    public func fetchAssets(in collectionID: String, options: FetchOptions = FetchOptions()) throws(ClientError) -> FetchResult {
        try fetch(FetchRequest(collectionID: collectionID, options: options))
    }

    /// Fetches `request`'s ids (again): one `assets.fetchIDs` call, one snapshot.
    public func fetch(_ request: FetchRequest) throws(ClientError) -> FetchResult {
        var params = request.params
        if let limit = request.options.fetchLimit, limit > 0 { params["limit"] = .int(Int64(min(limit, 1_000_000))) }
        return try call("assets.fetchIDs", params) { f throws(MalformedReply) in
            try FetchResult(f, request: request)
        }
    }

    /// Records loaded per page by ``assets(of:in:)``.
    static let assetBatch = 250

    /// The records of `result`'s assets at `range` (clamped to the result), in its order, as
    /// they are now. Pages of the same request are loaded at those offsets; when the library
    /// changed since the fetch and some assets shifted out of their page, the pages around it
    /// are searched too. Assets no longer in the request at all (deleted, no longer matching)
    /// are left out: the change stream reports them.
    public func assets(of result: FetchResult, in range: Range<Int>) throws(ClientError) -> [PhotoAsset] {
        let range = range.clamped(to: result.ids.indices)
        var out: [PhotoAsset] = []
        out.reserveCapacity(range.count)
        var lo = range.lowerBound
        while lo < range.upperBound {
            let hi = min(range.upperBound, lo + Self.assetBatch)
            let wanted = result.ids[lo..<hi]
            var found: [String: PhotoAsset] = [:]
            for a in try assetPage(result.request, offset: lo, limit: hi - lo) { found[a.id] = a }
            if wanted.contains(where: { found[$0] == nil }) {
                let n = hi - lo
                for a in try assetPage(result.request, offset: max(0, lo - n), limit: 3 * n) { found[a.id] = a }
            }
            out += wanted.compactMap { found[$0] }
            lo = hi
        }
        return out
    }

    /// One page of `request`'s asset records (`assets.fetch` or `collections.assets`).
    public func assetPage(_ request: FetchRequest, offset: Int, limit: Int) throws(ClientError) -> [PhotoAsset] {
        var params = request.params
        params["offset"] = .int(Int64(max(0, offset)))
        params["limit"] = .int(Int64(min(max(1, limit), WireLimits.maxPageSize)))
        return try call(request.collectionID == nil ? "assets.fetch" : "collections.assets", params) { f throws(MalformedReply) in
            try f.objects("assets") { v, p throws(MalformedReply) in try PhotoAsset(json: v, path: p) }
        }
    }

    // MARK: Collections

    /// Every page of a paged method, decoded; `token` is the oldest page's (subscribing `since`
    /// it misses nothing any page reflects).
    func allPages<T>(_ method: String, _ key: String, _ params: JSONObject = [:],
                     _ decode: (JSONValue, String) throws(MalformedReply) -> T) throws(ClientError) -> Collections<T> {
        var items: [T] = []
        var token: Int64?
        var offset = 0
        while true {
            var p = params
            p["offset"] = .int(Int64(offset))
            p["limit"] = .int(Int64(WireLimits.maxPageSize))
            let (page, pageToken, next) = try call(method, p) { f throws(MalformedReply) in
                (try f.objects(key, decode), try f.int("token"), try f.optionalInt("nextOffset"))
            }
            items += page
            token = min(token ?? pageToken, pageToken)
            guard let next, next > offset else { return Collections(items: items, token: token ?? pageToken) }
            offset = Int(next)
        }
    }

    /// The moments, newest first; of one `year` (and `month`) when given.
    public func fetchMoments(year: Int? = nil, month: Int? = nil) throws(ClientError) -> Collections<PhotoCollection.Moment> {
        var params = JSONObject()
        if let year { params["year"] = .int(Int64(year)) }
        if let month { params["month"] = .int(Int64(month)) }
        return try allPages("moments.fetch", "moments", params) { v, p throws(MalformedReply) in
            try PhotoCollection.Moment(json: v, path: p)
        }
    }

    /// The moment lists by year and by month, newest first.
    public func fetchMomentLists() throws(ClientError) -> (years: [PhotoCollection.MomentList], months: [PhotoCollection.MomentList], token: Int64) {
        try call("momentLists.fetch") { f throws(MalformedReply) in
            let decode = { (v: JSONValue, p: String) throws(MalformedReply) in try PhotoCollection.MomentList(json: v, path: p) }
            return (try f.objects("years", decode), try f.objects("months", decode), try f.int("token"))
        }
    }

    /// The folder albums (one per directory with assets), in path order.
    public func fetchAlbums() throws(ClientError) -> Collections<PhotoCollection.FolderAlbum> {
        try allPages("albums.fetch", "albums") { v, p throws(MalformedReply) in try PhotoCollection.FolderAlbum(json: v, path: p) }
    }

    /// Every smart album with its count.
    public func fetchSmartAlbums() throws(ClientError) -> Collections<PhotoCollection.SmartAlbum> {
        try call("smartAlbums.fetch") { f throws(MalformedReply) in
            Collections(items: try f.objects("smartAlbums") { v, p throws(MalformedReply) in
                try PhotoCollection.SmartAlbum(json: v, path: p)
            }, token: try f.int("token"))
        }
    }

    /// Assets whose words match `query` (`assets.search`: words and "phrases", case and
    /// accents folded, the last word a prefix), most relevant first: one page and the total.
    public func search(_ query: String, predicate: String? = nil, sort: String? = nil, limit: Int = 100,
                       offset: Int = 0) throws(ClientError) -> (assets: [PhotoAsset], total: Int) {
        var params: JSONObject = ["query": .string(query), "limit": .int(Int64(limit)), "offset": .int(Int64(offset))]
        if let predicate { params["predicate"] = .string(predicate) }
        if let sort { params["sort"] = .string(sort) }
        return try call("assets.search", params) { f throws(MalformedReply) in
            (try f.objects("assets") { v, p throws(MalformedReply) in try PhotoAsset(json: v, path: p) }, try f.count("total"))
        }
    }

    /// The collections whose own words match `query` (`collections.search`): places first,
    /// then user albums, folder albums, moments and smart albums, at most `limit` of each.
    public func searchCollections(_ query: String, limit: Int = 20) throws(ClientError) -> CollectionSearch {
        try call("collections.search", ["query": .string(query), "limit": .int(Int64(limit))]) { f throws(MalformedReply) in
            var found = CollectionSearch(places: [], collections: [], token: try f.int("token"))
            _ = try f.objects("collections") { v, p throws(MalformedReply) -> Bool in
                switch v["kind"]?.stringValue {
                case "country", "region", "city": found.places.append(try PlaceCollection(json: v, path: p))
                case "user": found.collections.append(.userAlbum(try PhotoCollection.UserAlbum(json: v, path: p)))
                case "folder": found.collections.append(.folderAlbum(try PhotoCollection.FolderAlbum(json: v, path: p)))
                case "moment": found.collections.append(.moment(try PhotoCollection.Moment(json: v, path: p)))
                case "smart": found.collections.append(.smartAlbum(try PhotoCollection.SmartAlbum(json: v, path: p)))
                default: break   // a kind this client does not know yet
                }
                return true
            }
            return found
        }
    }

    /// Where the photos were taken: countries, each with its regions and cities.
    public func fetchPlaces() throws(ClientError) -> Collections<PlaceCollection> {
        try call("places.fetch") { f throws(MalformedReply) in
            Collections(items: try f.objects("places") { v, p throws(MalformedReply) in try PlaceCollection(json: v, path: p) },
                        token: try f.int("token"))
        }
    }

    /// The user's albums and the folders holding them, by title.
    public func fetchUserAlbums() throws(ClientError) -> (folders: [PhotoCollection.UserFolder], albums: [PhotoCollection.UserAlbum], token: Int64) {
        try call("userAlbums.fetch") { f throws(MalformedReply) in
            (try f.objects("folders") { v, p throws(MalformedReply) in try PhotoCollection.UserFolder(json: v, path: p) },
             try f.objects("albums") { v, p throws(MalformedReply) in try PhotoCollection.UserAlbum(json: v, path: p) },
             try f.int("token"))
        }
    }

    /// The folder tree above the folder albums, a list per directory.
    public func fetchCollectionLists() throws(ClientError) -> Collections<PhotoCollection.CollectionList> {
        try call("collectionLists.fetch") { f throws(MalformedReply) in
            Collections(items: try f.objects("lists") { v, p throws(MalformedReply) in
                try PhotoCollection.CollectionList(json: v, path: p)
            }, token: try f.int("token"))
        }
    }

    // MARK: Changes

    /// The newest change token.
    public func currentToken() throws(ClientError) -> Int64 {
        try call("changes.currentToken") { f throws(MalformedReply) in try f.int("token") }
    }

    /// Every change set after `since` that passes `filter`, oldest first, read page by page
    /// from the journal; `token` is the last one examined (resume from it). A token older
    /// than the journal keeps is `ClientError.rpc` with code `tokenExpired`: refetch.
    public func fetchChanges(since: Int64, filter: ChangeFilter = .all) throws(ClientError) -> (changes: [ChangeSet], token: Int64) {
        var changes: [ChangeSet] = []
        var token = since
        while true {
            var params = filter.params
            params["since"] = .int(token)
            let (page, last, more) = try call("changes.since", params) { f throws(MalformedReply) in
                (try f.objects("changes") { v, p throws(MalformedReply) in try ChangeSet(json: v, path: p) }, try f.int("token"),
                 try f.bool("more"))
            }
            changes += page
            guard more, last > token else { return (changes, max(token, last)) }
            token = last
        }
    }

    /// The change sets from `since` on (from now when nil), then as they happen, as an
    /// asynchronous sequence that reconnects when the daemon goes away (see ``ChangeStream``).
    public func changes(since: Int64?, filter: ChangeFilter = .all, reconnect: ReconnectPolicy = ReconnectPolicy()) -> ChangeStream {
        ChangeStream(sockets: sockets, since: since, filter: filter, policy: reconnect)
    }

    /// What changed in `result` since its token: a fresh ids-only fetch of its request, diffed
    /// against it, with the objects that the journal's change sets up to the fetch's token
    /// updated marked changed. The details cover every change up to
    /// ``ChangeDetails/coveredThrough`` — which may be later than the change set that prompted
    /// the call; keep ``ChangeDetails/fetchResultAfterChanges`` and skip the change sets it
    /// already covers. "Reload" details (not incremental) when the journal no longer reaches back
    /// to `result`'s token.
    public func changeDetails(for result: FetchResult) throws(ClientError) -> ChangeDetails {
        let after = try fetch(result.request)
        guard after.token > result.token else {
            return ChangeDetails(from: result, to: after, updatedIDs: [String]())
        }
        var updated: [String] = []
        var token = result.token
        do {
            // The journal after `result` up to the refetch's token (later ones are the next call's).
            while token < after.token {
                let (page, last) = try fetchChanges(since: token)
                for change in page where change.token <= after.token { updated += change.assetsUpdated }
                guard last > token else { break }
                token = last
            }
        } catch .rpc(let e) where e.code == -32001 {
            return ChangeDetails.reload(from: result, to: after)
        }
        return ChangeDetails(from: result, to: after, updatedIDs: updated)
    }

    /// What `change` means for `result` (PhotoKit's `changeDetails(for:)`): nil when `result`
    /// already reflects it (its token is not newer than the result's), else the details up to
    /// now (see ``changeDetails(for:)``).
    public func changeDetails(for result: FetchResult, in change: ChangeSet) throws(ClientError) -> ChangeDetails? {
        guard change.token > result.token else { return nil }
        return try changeDetails(for: result)
    }

    /// What a stream event means for `result`: details for a change set it does not yet reflect,
    /// "reload" details (``ChangeDetails/hasIncrementalChanges`` false) after an expired token,
    /// nil otherwise (a change set already covered, the connection's comings and goings).
    public func changeDetails(for result: FetchResult, event: ChangeEvent) throws(ClientError) -> ChangeDetails? {
        switch event {
        case .changes(let change): return try changeDetails(for: result, in: change)
        case .expired: return ChangeDetails.reload(from: result, to: try fetch(result.request))
        case .reconnecting, .reconnected: return nil
        }
    }

    // MARK: Writes

    /// Adds assets to Favorites or takes them out.
    @discardableResult
    public func setFavorite(_ ids: [String], _ favorite: Bool) throws(ClientError) -> WriteResult {
        try write("assets.setFavorite", ["ids": JSONValue(ids), "favorite": .bool(favorite)])
    }

    /// Hides assets or shows them again.
    @discardableResult
    public func setHidden(_ ids: [String], _ hidden: Bool) throws(ClientError) -> WriteResult {
        try write("assets.setHidden", ["ids": JSONValue(ids), "hidden": .bool(hidden)])
    }

    /// Replaces the keywords `source` (a tagger's name) gave these assets.
    @discardableResult
    public func setKeywords(_ keywords: [String], for ids: [String], source: String) throws(ClientError) -> WriteResult {
        try write("assets.setKeywords", ["ids": JSONValue(ids), "source": .string(source), "keywords": JSONValue(keywords)])
    }

    /// Adds keywords from `source` to these assets.
    @discardableResult
    public func addKeywords(_ keywords: [String], to ids: [String], source: String) throws(ClientError) -> WriteResult {
        try write("assets.addKeywords", ["ids": JSONValue(ids), "source": .string(source), "keywords": JSONValue(keywords)])
    }

    /// Removes keywords `source` gave these assets.
    @discardableResult
    public func removeKeywords(_ keywords: [String], from ids: [String], source: String) throws(ClientError) -> WriteResult {
        try write("assets.removeKeywords", ["ids": JSONValue(ids), "source": .string(source), "keywords": JSONValue(keywords)])
    }

    /// Makes a user album, in a user folder when `folderID` is given; returns its id.
    public func createAlbum(title: String, folderID: String? = nil) throws(ClientError) -> (id: String, result: WriteResult) {
        var params: JSONObject = ["title": .string(title)]
        if let folderID { params["folder"] = .string(folderID) }
        return try created("albums.create", params)
    }

    /// Makes a user folder, in another when `parentID` is given; returns its id.
    public func createFolder(title: String, parentID: String? = nil) throws(ClientError) -> (id: String, result: WriteResult) {
        var params: JSONObject = ["title": .string(title)]
        if let parentID { params["parent"] = .string(parentID) }
        return try created("albums.createFolder", params)
    }

    /// Renames a user album or folder.
    @discardableResult
    public func renameAlbum(_ id: String, title: String) throws(ClientError) -> WriteResult {
        try write("albums.rename", ["id": .string(id), "title": .string(title)])
    }

    /// Moves a user album or folder into a folder, or to the top when `folderID` is nil.
    @discardableResult
    public func moveAlbum(_ id: String, to folderID: String?) throws(ClientError) -> WriteResult {
        try write("albums.move", ["id": .string(id), "folder": folderID.map { .string($0) } ?? .null])
    }

    /// Deletes a user album, or a folder with everything in it; the assets stay.
    @discardableResult
    public func deleteAlbum(_ id: String) throws(ClientError) -> WriteResult {
        try write("albums.delete", ["id": .string(id)], retry: false)
    }

    /// Adds assets to the end of a user album.
    @discardableResult
    public func addAssets(_ ids: [String], toAlbum albumID: String) throws(ClientError) -> WriteResult {
        try write("albums.addAssets", ["id": .string(albumID), "ids": JSONValue(ids)])
    }

    /// Takes assets out of a user album.
    @discardableResult
    public func removeAssets(_ ids: [String], fromAlbum albumID: String) throws(ClientError) -> WriteResult {
        try write("albums.removeAssets", ["id": .string(albumID), "ids": JSONValue(ids)])
    }

    /// Compares a directory tree inside the library (every root when nil) with the disk;
    /// returns when done, with the token after it.
    @discardableResult
    public func rescan(_ path: PathBytes? = nil) throws(ClientError) -> Int64 {
        try call("library.rescan", path.map { ["path": .string($0.string)] } ?? [:]) { f throws(MalformedReply) in try f.int("token") }
    }

    /// Moves assets to Recently Deleted: every file of each is renamed in its own folder to a
    /// hidden `.photod-trashed-` name (photod must run with `--trash-root` for its root). All or
    /// nothing: a refusal (`data.refused`) changes nothing. Not retried (a second attempt finds
    /// the assets gone from the library).
    @discardableResult
    public func trash(_ ids: [String]) throws(ClientError) -> WriteResult {
        try write("assets.trash", ["ids": JSONValue(ids)], retry: false)
    }

    /// Brings trashed assets back with their ids, favorites and albums; `renamed` lists the
    /// files restored under another name (theirs was taken).
    @discardableResult
    public func restore(_ ids: [String]) throws(ClientError) -> (result: WriteResult, renamed: [(from: String, to: String)]) {
        try call("assets.restore", ["ids": JSONValue(ids)], retry: false) { f throws(MalformedReply) in
            (try WriteResult(f), try f.objects("renamed") { v, at throws(MalformedReply) in
                let r = try Fields(v, at: at)
                return (try r.string("from"), try r.string("to"))
            })
        }
    }

    /// Deletes assets in Recently Deleted for good: their trashed files are unlinked, they and
    /// their user state are purged. Returns the ids deleted (an asset whose file could not be
    /// unlinked stays, and is not among them).
    @discardableResult
    public func deletePermanently(_ ids: [String]) throws(ClientError) -> (result: WriteResult, deleted: [String]) {
        try call("assets.deletePermanently", ["ids": JSONValue(ids)], retry: false) { f throws(MalformedReply) in
            (try WriteResult(f), try f.strings("deleted"))
        }
    }

    private func write(_ method: String, _ params: JSONObject, retry: Bool = true) throws(ClientError) -> WriteResult {
        try call(method, params, retry: retry) { f throws(MalformedReply) in try WriteResult(f) }
    }

    private func created(_ method: String, _ params: JSONObject) throws(ClientError) -> (id: String, result: WriteResult) {
        // Not retried: a second attempt would make a second album.
        try call(method, params, retry: false) { f throws(MalformedReply) in (try f.string("id"), try WriteResult(f)) }
    }
}

/// Collections of one kind and the change token they reflect.
public struct Collections<Element: Sendable>: Sendable {
    /// The collections, in the method's order.
    public var items: [Element]
    /// The change token they reflect: subscribe `since` it to hear of every later change.
    public var token: Int64
}

/// What a write did.
public struct WriteResult: Sendable, Hashable {
    /// The change token of the write's commit; nil when it changed nothing.
    public var token: Int64?
    /// The assets or collections whose state changed.
    public var updated: [String]

    init(_ f: Fields) throws(MalformedReply) {
        token = try f.optionalInt("token")
        updated = try f.strings("updated")
    }
}
