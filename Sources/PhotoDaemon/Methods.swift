import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoWire

/// The JSON-RPC methods: what each answers and which parameters it takes (documented in
/// docs/PROTOCOL.md).
struct Methods: Sendable {
    let database: Database
    let indexer: Indexer
    let trees: Trees
    let sortQueue: SortQueue
    let live: LiveLoop
    let feed: ChangeFeed
    let reads: ReadCounter
    let info: DaemonInfo
    let liveOptions: LiveOptions
    let access: WriteAccess
    let images: ImageService
    let rest: RestService

    var table: [String: MethodHandler] {
        readTable.merging(writeTable) { a, _ in a }
    }

    var readTable: [String: MethodHandler] {
        [
            "rpc.hello": { p, _ throws(RPCError) in try hello(p) },
            "library.status": { p, _ throws(RPCError) in try status(p) },
            "library.errors": { p, _ throws(RPCError) in try errors(p) },
            "assets.fetch": { p, _ throws(RPCError) in try fetchAssets(p) },
            "assets.search": { p, _ throws(RPCError) in try searchAssets(p) },
            "collections.search": { p, _ throws(RPCError) in try searchCollections(p) },
            "assets.fetchIDs": { p, _ throws(RPCError) in try fetchIDs(p) },
            "assets.get": { p, _ throws(RPCError) in try getAssets(p) },
            "moments.fetch": { p, _ throws(RPCError) in try fetchMoments(p) },
            "momentLists.fetch": { p, _ throws(RPCError) in try fetchMomentLists(p) },
            "albums.fetch": { p, _ throws(RPCError) in try fetchAlbums(p) },
            "smartAlbums.fetch": { p, _ throws(RPCError) in try fetchSmartAlbums(p) },
            "collectionLists.fetch": { p, _ throws(RPCError) in try fetchCollectionLists(p) },
            "collections.assets": { p, _ throws(RPCError) in try collectionAssets(p) },
            "changes.currentToken": { p, _ throws(RPCError) in try currentToken(p) },
            "changes.since": { p, _ throws(RPCError) in try changesSince(p) },
            "changes.subscribe": { p, c throws(RPCError) in try subscribe(p, c) },
            "changes.unsubscribe": { p, c throws(RPCError) in try unsubscribe(p, c) },
            "userAlbums.fetch": { p, _ throws(RPCError) in try fetchUserAlbums(p) },
            "places.fetch": { p, _ throws(RPCError) in try fetchPlaces(p) },
        ]
    }

    /// The method names, for `rpc.hello`'s capabilities.
    static let names = ["rpc.hello", "library.status", "library.errors", "assets.fetch", "moments.fetch",
                        "momentLists.fetch", "albums.fetch", "smartAlbums.fetch", "collectionLists.fetch",
                        "collections.assets", "changes.currentToken", "changes.since", "changes.subscribe",
                        "changes.unsubscribe", "userAlbums.fetch", "assets.fetchIDs", "assets.get", "images.request", "images.cancel",
                        "images.startCaching", "images.stopCaching", "places.fetch", "assets.search",
                        "collections.search"] + writeNames

    /// Runs store queries on one snapshot and returns their result with the change token that
    /// snapshot reflects: a client can fetch, then subscribe `since` that token, without a gap.
    func snapshot<R: Sendable>(_ body: @escaping (IndexReader) throws -> R) throws(RPCError) -> (R, Int64) {
        try query { r in
            try r.consistent { () throws(StoreError) in
                do {
                    return (try body(r), try r.journalBounds().current)
                } catch {
                    throw StoreError.wrapping(error)
                }
            }
        }
    }

    /// Runs a store query, mapping its failure to `internalError` (the store is ours; a
    /// failure there is not the client's fault).
    func query<R: Sendable>(_ body: (IndexReader) throws -> R) throws(RPCError) -> R {
        do {
            return try database.read(body)
        } catch {
            throw .internalError("index query failed: \(error)")
        }
    }

    func hello(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["client"])
        var limits = JSONObject()
        limits["maxLineBytes"] = .int(Int64(WireLimits.maxLineBytes))
        limits["maxPageSize"] = .int(Int64(WireLimits.maxPageSize))
        limits["maxBatchCount"] = .int(Int64(WireLimits.maxBatchCount))
        var o = JSONObject()
        o["protocolVersion"] = .int(Int64(WireLimits.protocolVersion))
        o["daemonVersion"] = .string(DaemonOptions.version)
        o["limits"] = .object(limits)
        o["capabilities"] = .array(Self.names.map { .string($0) })
        return .object(o)
    }

    func status(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let s = indexer.status
        let (unavailableRoots, unavailableMounts) = (trees.unavailableRoots, trees.unavailableMounts)
        let (counts, byRoot, placing) = try query { r in
            try r.consistent { () throws(StoreError) in (try r.counts(), try r.assetCountsByRoot(), try r.placingProgress()) }
        }
        var o = JSONObject()
        let w = live.status
        // Idle means: no scan running, no watcher change waiting, nothing in the sort queue.
        let busy = s.state == .indexing || sortQueue.isBusy || live.isBusy
        o["state"] = .string(busy ? IndexerStatus.State.indexing.rawValue : IndexerStatus.State.idle.rawValue)
        o["version"] = .string(DaemonOptions.version)
        o["pid"] = .int(Int64(info.pid))
        o["uptimeSeconds"] = .int(Int64(info.uptimeSeconds()))
        o["database"] = .string(info.database.string)
        o["timeZone"] = .string(info.timeZone)
        var roots: [JSONValue] = info.roots.map { root in
            var r = JSONObject()
            WireMapping.addPath(root, to: &r)
            let polled = (w.unwatchedTrees + w.networkTrees).filter { $0.isWithin(root) }
            if let reason = unavailableRoots[root] {
                r["state"] = .string("unavailable")
                r["reason"] = .string(reason)
                r["mode"] = .string("unavailable")
            } else {
                r["state"] = .string("available")
                r["mode"] = .string(w.watchError != nil || polled.contains(root) ? "polled" : "watched")
            }
            r["polledTrees"] = .int(Int64(w.watchError != nil ? 1 : polled.count))
            r["assets"] = .int(Int64(byRoot[root] ?? 0))
            r["unavailableMounts"] = WireMapping.unavailableTrees(unavailableMounts.filter { $0.key.isWithin(root) })
            return .object(r)
        }
        // Roots indexed before but not given this time: their assets stay in the index (and
        // listed) so that ids survive a mistyped command line; the status says so.
        for (root, n) in byRoot.sorted(by: { $0.key < $1.key }) where !info.roots.contains(root) {
            var r = JSONObject()
            WireMapping.addPath(root, to: &r)
            r["state"] = .string("notConfigured")
            r["reason"] = .string("indexed before, not given with --library now; its assets are kept")
            r["assets"] = .int(Int64(n))
            roots.append(.object(r))
        }
        o["roots"] = .array(roots)
        o["metadataReads"] = .int(Int64(reads.value))
        // A library indexed before places: how many of its assets with coordinates are placed.
        if let placing { o["placing"] = .object(["done": .int(Int64(placing.done)), "total": .int(Int64(placing.total))]) }
        o["counts"] = WireMapping.counts(counts)
        if let current = s.current {
            var c = JSONObject()
            c["files"] = .int(Int64(current.files))
            c["toRead"] = .int(Int64(current.toRead))
            c["committed"] = .int(Int64(current.committed))
            c["directories"] = .int(Int64(current.directories))
            let now = Monotonic.nanoseconds
            c["walkFinished"] = .bool(current.walkFinished)
            c["expected"] = .int(Int64(current.expectedToRead))
            c["expectedFinal"] = .bool(current.expectationFinal)
            c["elapsedSeconds"] = .double((current.elapsedSeconds(at: now) * 10).rounded() / 10)
            c["filesPerSecond"] = current.filesPerSecond(at: now).map { .double($0.rounded()) } ?? .null
            c["secondsLeft"] = current.secondsLeft(at: now).map { .double($0.rounded(.up)) } ?? .null
            o["currentScan"] = .object(c)
        } else {
            o["currentScan"] = .null
        }
        o["lastScan"] = s.lastScan.map(WireMapping.scanReport) ?? .null
        let unreadable = s.unreadableDirectories.sorted { $0.key < $1.key }.prefix(Self.maxListedUnreadable)
        o["unreadableDirectories"] = Self.pathsWithReasons(unreadable)
        o["unreadableDirectoriesOmitted"] = .int(Int64(s.unreadableDirectories.count - unreadable.count
                                                       + s.unreadableDirectoriesOmitted))
        let failing = s.unreadableFiles.sorted { $0.key < $1.key }.prefix(Self.maxListedUnreadable)
        o["unreadableFiles"] = Self.pathsWithReasons(failing)
        let q = sortQueue.stats
        var queue = JSONObject()
        queue["jobsRun"] = .int(Int64(q.ran))
        queue["jobsCancelled"] = .int(Int64(q.cancelled))
        queue["jobsFailed"] = .int(Int64(q.failed))
        queue["pending"] = .int(Int64(q.pending))
        queue["lastError"] = q.lastError.map { .string($0) } ?? .null
        queue["waitingForSpace"] = .bool(q.waitingForSpace)
        o["sortQueue"] = .object(queue)
        var writes = JSONObject()
        writes["state"] = .string(q.writeFailure == nil ? "ok" : "failing")
        writes["reason"] = q.writeFailure.map { .string($0) } ?? .null
        writes["reopened"] = .int(Int64(q.reopened))
        o["databaseWrites"] = .object(writes)
        o["watcher"] = watcherStatus(w)
        o["recovery"] = recoveryStatus()
        o["images"] = imageStatus()
        var memory = JSONObject()
        memory["residentBytes"] = Heap.residentBytes().map { .int($0) } ?? .null
        memory["rests"] = .int(Int64(rest.restCount))
        o["memory"] = .object(memory)
        return .object(o)
    }

    /// `library.status`'s `images` object: the cache and the work done since the start.
    func imageStatus() -> JSONValue {
        let usage = images.cache.usage
        let stats = images.stats
        let counts: [(String, Int)] = [("requests", stats.requests), ("cacheHits", stats.cacheHits), ("rendered", stats.rendered),
                                       ("degraded", stats.degraded), ("failed", stats.failed), ("cancelled", stats.cancelled),
                                       ("shared", stats.shared), ("preRendered", stats.preRendered)]
        var o = JSONObject()
        o["cacheDirectory"] = .string(images.cache.root.string)
        o["cacheBytes"] = .int(usage.bytes)
        o["cacheCapacity"] = .int(images.cache.capacity)
        o["cachedImages"] = .int(Int64(usage.files))
        o["evictions"] = .int(Int64(usage.evictions))
        for (key, value) in counts { o[key] = .int(Int64(value)) }
        return .object(o)
    }

    /// `library.status`'s `watcher` object: the watch budget, what is polled and why.
    func watcherStatus(_ w: LiveStatus) -> JSONValue {
        var o = JSONObject()
        o["watches"] = .int(Int64(w.watches))
        o["budget"] = .int(Int64(w.watchBudget))
        o["systemLimit"] = w.systemWatchLimit.map { .int(Int64($0)) } ?? .null
        func trees(_ list: [PathBytes]) -> JSONValue { .array(list.prefix(100).map { .string($0.string) }) }
        o["unwatchedTrees"] = trees(w.unwatchedTrees)
        o["networkTrees"] = trees(w.networkTrees)
        o["pollIntervalSeconds"] = .int(liveOptions.pollInterval.components.seconds)
        o["pendingChanges"] = .int(Int64(w.pendingChanges))
        o["appliedChanges"] = .int(Int64(w.appliedChanges))
        o["overflows"] = .int(Int64(w.overflows))
        o["polls"] = .int(Int64(w.polls))
        o["error"] = w.watchError.map { .string($0) } ?? .null
        o["mountTable"] = .string(w.mountWatchError == nil ? "watched" : "rechecked")
        o["mountChanges"] = .int(Int64(w.mountChanges))
        if !w.unwatchedTrees.isEmpty {
            o["hint"] = .string("the watch budget is used up: \(w.unwatchedTrees.count) tree(s) are polled every "
                                + "\(liveOptions.pollInterval.components.seconds) s. Raise the limit with "
                                + "'sysctl fs.inotify.max_user_watches=524288' (persist it in /etc/sysctl.d/) and restart photod")
        } else {
            o["hint"] = .null
        }
        return .object(o)
    }

    /// Roots reported unavailable: their assets are listed with `isAvailable: false`.
    /// The trees whose assets are offline (an unavailable root, or mount point below one).
    var offlineRoots: [PathBytes] { Array(trees.offline) }

    func errors(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["limit", "offset"])
        let limit = try p.int("limit", default: 100, in: 1...WireLimits.maxPageSize)
        let offset = try p.int("offset", default: 0, in: 0...Int.max)
        let (issues, total) = try query { r in
            try r.consistent { () throws(StoreError) in (try r.fileIssues(limit: limit, offset: offset), try r.fileIssueCount()) }
        }
        var o = JSONObject()
        o["errors"] = .array(issues.map(WireMapping.fileIssue))
        o["total"] = .int(Int64(total))
        o["offset"] = .int(Int64(offset))
        o["nextOffset"] = Self.nextOffset(offset: offset, count: issues.count, total: total)
        return .object(o)
    }

    /// `assets.fetch`: a page of the library's assets, filtered by `predicate`, in `sort`'s order
    /// (capture time by default), with `includeHidden` letting hidden assets in.
    func fetchAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: Self.queryKeys.union(["limit", "offset"]))
        let (limit, offset) = try Self.page(p)
        let query = try Self.assetQuery(p)
        let now = info.now()
        let (found, token) = try snapshot { r in try r.assets(query, in: .library, limit: limit, offset: offset, now: now) }
        guard let (assets, total) = found else { throw .internalError("the library scope did not resolve") }
        return Self.paged("assets", assets.map { WireMapping.asset($0, offline: offlineRoots) }, total: total, offset: offset,
                          token: token)
    }

    /// `assets.search`: the library's assets whose words match `query` (`SearchQuery`: words and
    /// quoted phrases, the last word a prefix), filtered by `predicate`, by relevance then
    /// newest (or `sort`), paged as `assets.fetch` is.
    func searchAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: Self.queryKeys.union(["query", "limit", "offset"]))
        let text = try Self.searchQuery(p)
        let (limit, offset) = try Self.page(p)
        let query = try Self.assetQuery(p)
        let now = info.now()
        let ((assets, total), token) = try snapshot { r in try r.search(text, query, limit: limit, offset: offset, now: now) }
        return Self.paged("assets", assets.map { WireMapping.asset($0, offline: offlineRoots) }, total: total, offset: offset,
                          token: token)
    }

    /// `collections.search`: the places, user albums, folder albums, moments and smart albums
    /// whose own words hold every term of the query, each kind in its order.
    func searchCollections(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["query", "limit"])
        let text = try Self.searchQuery(p)
        let limit = try p.optionalInt("limit", in: 1...1000) ?? 20
        let now = info.now()
        let (records, token) = try snapshot { r in
            let found = try r.collectionMatches(text, limit: limit)
            var records: [JSONValue] = PlaceNode.named(by: found, in: found.placeRows.isEmpty ? [] : try r.placeTree())
                .prefix(limit).map(WireMapping.place(node:))
            let wanted = Set(found.userAlbums)
            records += try r.userAlbums().filter { wanted.contains($0.id) }.map { WireMapping.kind("user", WireMapping.userAlbum($0)) }
            records += try found.folderAlbums.compactMap { id throws(StoreError) in try r.folderAlbum(id: id).map(WireMapping.folderAlbum) }
            for day in found.momentDays {
                guard let m = try r.moments(MomentFilter(firstDay: day, lastDay: day)).first else { continue }
                records.append(WireMapping.kind("moment", WireMapping.moment(m, keyAssetIDs: try r.momentKeyAssets(days: [day])[day] ?? [])))
            }
            let smart = SmartAlbums.all.filter { text.matches($0.title) }
            if !smart.isEmpty {
                let (counts, keys) = (try r.smartAlbumCounts(now: now), try r.smartAlbumKeys(now: now))
                records += smart.prefix(limit).map {
                    WireMapping.kind("smart", WireMapping.smartAlbum($0, count: counts[$0.id] ?? 0, keyAssetIDs: keys[$0.id] ?? []))
                }
            }
            return records
        }
        return .object(["collections": .array(records), "token": .int(token)])
    }

    /// The `query` of a search, parsed; a malformed one is `-32602` with its position.
    static func searchQuery(_ p: RPCParams) throws(RPCError) -> SearchQuery {
        let raw = try p.string("query")
        do {
            return try SearchQuery.parse(raw)
        } catch {
            throw RPCError(.invalidParams, detail: "'query': expected \(error.message) at \(error.position)",
                           extra: ["param": .string("query"), "position": .int(Int64(error.position)), "expected": .string(error.message)])
        }
    }

    /// The fetch options `assets.fetch` and `collections.assets` take besides paging.
    static let queryKeys: Set<String> = ["predicate", "sort", "includeHidden", "includeAllBurstAssets"]
    /// Unreadable directories listed in `library.status`, at most (the rest are counted).
    static let maxListedUnreadable = 100

    /// `[{path (or pathBytes), reason}]`: the unreadable directories and files of `library.status`.
    static func pathsWithReasons(_ entries: some Sequence<(key: PathBytes, value: String)>) -> JSONValue {
        .array(entries.map { path, reason in
            var d = JSONObject()
            WireMapping.addPath(path, to: &d)
            d["reason"] = .string(reason)
            return .object(d)
        })
    }

    /// The fetch options: `predicate` (docs/PREDICATES.md), `sort` (`"localDateTime,-pixelWidth"`
    /// or `[{"key": "localDateTime", "ascending": false}]`), `includeHidden` and
    /// `includeAllBurstAssets`. A predicate or
    /// sort that does not parse is `invalid params` with the position and what was expected
    /// (`data.position`, `data.expected`, `data.found`, `data.reason`).
    static func assetQuery(_ p: RPCParams) throws(RPCError) -> AssetQuery {
        var query = AssetQuery(includeHidden: try p.bool("includeHidden", default: false),
                               includeAllBurstAssets: try p.bool("includeAllBurstAssets", default: false))
        if let text = try p.optionalString("predicate") {
            do {
                query.predicate = try AssetPredicate.parse(text)
            } catch {
                throw Self.invalid(error, param: "predicate")
            }
        }
        switch p["sort"] {
        case nil, .null?: break
        case .string(let text)?:
            do {
                query.sort = try AssetSort.parse(text)
            } catch {
                throw Self.invalid(error, param: "sort")
            }
        case .array(let items)?:
            var descriptors: [AssetSortDescriptor] = []
            for (i, item) in items.enumerated() {
                guard case .object(let o) = item, let name = o["key"]?.stringValue else {
                    throw .invalidParams("'sort[\(i)]' must be an object {\"key\": …, \"ascending\": true|false}", param: "sort")
                }
                guard let key = AssetSortKey(rawValue: name) else {
                    throw .invalidParams("'sort[\(i)].key' must be one of \(AssetSortKey.allCases.map(\.rawValue).joined(separator: ", ")) (got \"\(name)\")",
                                         param: "sort")
                }
                var ascending = true
                switch o["ascending"] {
                case nil, .null?: break
                case .bool(let b)?: ascending = b
                default: throw .invalidParams("'sort[\(i)].ascending' must be true or false", param: "sort")
                }
                if let extra = o.keys.first(where: { $0 != "key" && $0 != "ascending" }) {
                    throw .invalidParams("'sort[\(i)]' has an unknown member '\(extra)'", param: "sort")
                }
                guard !descriptors.contains(where: { $0.key == key }) else {
                    throw .invalidParams("'sort' names '\(name)' twice", param: "sort")
                }
                descriptors.append(AssetSortDescriptor(key, ascending: ascending))
            }
            query.sort = AssetSort(descriptors)
        case let other?:
            throw RPCParams.mismatch("sort", "a string like \"localDateTime,-pixelWidth\" or an array of {key, ascending}", got: other)
        }
        return query
    }

    /// `invalid params` for a predicate or sort, pointing at the spot.
    static func invalid(_ error: AssetPredicateError, param: String) -> RPCError {
        RPCError(.invalidParams, detail: "'\(param)': \(error.message)",
                 extra: ["param": .string(param), "position": .int(Int64(error.position)), "expected": .string(error.expected),
                         "found": .string(error.found), "reason": .string(error.code.rawValue)])
    }

    /// `limit` (1–1000, default 100) and `offset` (≥ 0, default 0).
    static func page(_ p: RPCParams) throws(RPCError) -> (limit: Int, offset: Int) {
        (try p.int("limit", default: 100, in: 1...WireLimits.maxPageSize), try p.int("offset", default: 0, in: 0...Int.max))
    }

    /// A paged result: `key` holds the records; `token` is the change token they reflect.
    static func paged(_ key: String, _ records: [JSONValue], total: Int, offset: Int, token: Int64) -> JSONValue {
        var o = JSONObject()
        o[key] = .array(records)
        o["total"] = .int(Int64(total))
        o["offset"] = .int(Int64(offset))
        o["nextOffset"] = nextOffset(offset: offset, count: records.count, total: total)
        o["token"] = .int(token)
        return .object(o)
    }

    /// `moments.fetch`: moments newest first, optionally of one `year` (and `month`), or
    /// between `from` and `to` (`YYYY-MM-DD`, inclusive).
    func fetchMoments(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["limit", "offset", "year", "month", "from", "to"])
        let (limit, offset) = try Self.page(p)
        var filter = MomentFilter()
        if let year = try p.optionalInt("year", in: LocalDateTime.plausibleYears.lowerBound...LocalDateTime.plausibleYears.upperBound) {
            let month = try p.optionalInt("month", in: 1...12)
            filter.firstDay = CivilTime.daysFromCivil(year: year, month: month ?? 1, day: 1)
            filter.lastDay = CivilTime.daysFromCivil(year: year, month: month ?? 12,
                                                     day: CivilTime.daysInMonth(year: year, month: month ?? 12))
        } else if p.contains("month") {
            throw .invalidParams("'month' needs a 'year'", param: "month")
        }
        for key in ["from", "to"] {
            guard let text = try p.optionalString(key) else { continue }
            guard let day = MomentGrouping.day(ofLocalDate: text) else {
                throw .invalidParams("'\(key)' must be a date YYYY-MM-DD (got \"\(text)\")", param: key)
            }
            if key == "from" { filter.firstDay = max(filter.firstDay ?? Int.min, day) } else { filter.lastDay = min(filter.lastDay ?? Int.max, day) }
        }
        let ((moments, keys, total), token) = try snapshot { r in
            let moments = try r.moments(filter, limit: limit, offset: offset)
            return (moments, try r.momentKeyAssets(days: moments.map(\.day)), try r.momentCount(filter))
        }
        return Self.paged("moments", moments.map { WireMapping.moment($0, keyAssetIDs: keys[$0.day] ?? []) }, total: total,
                          offset: offset, token: token)
    }

    /// `momentLists.fetch`: the moment lists by year and by month, newest first.
    func fetchMomentLists(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["kind"])
        let kind = try p.optionalString("kind", oneOf: ["year", "month"])
        let ((years, months), token) = try snapshot { r in
            let (years, months) = try r.momentLists()
            return try r.withKeyAssets(years: kind == "month" ? [] : years, months: months)
        }
        var o = JSONObject()
        o["token"] = .int(token)
        if kind != "month" { o["years"] = .array(years.map(WireMapping.momentList)) }
        if kind != "year" { o["months"] = .array(months.map(WireMapping.momentList)) }
        return .object(o)
    }

    /// `albums.fetch`: folder albums in path order.
    func fetchAlbums(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["limit", "offset"])
        let (limit, offset) = try Self.page(p)
        let ((albums, total), token) = try snapshot { r in (try r.folderAlbums(limit: limit, offset: offset), try r.folderAlbumCount()) }
        return Self.paged("albums", albums.map(WireMapping.folderAlbum), total: total, offset: offset, token: token)
    }

    /// `smartAlbums.fetch`: every smart album with its count.
    func fetchSmartAlbums(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let now = info.now()
        let ((counts, keys), token) = try snapshot { r in (try r.smartAlbumCounts(now: now), try r.smartAlbumKeys(now: now)) }
        var o = JSONObject()
        o["token"] = .int(token)
        o["smartAlbums"] = .array(SmartAlbums.all.map {
            WireMapping.smartAlbum($0, count: counts[$0.id] ?? 0, keyAssetIDs: keys[$0.id] ?? [])
        })
        return .object(o)
    }

    /// `places.fetch`: countries, their regions and cities, where the visible assets were taken.
    func fetchPlaces(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let (tree, token) = try snapshot { try $0.placeTree() }
        var o = JSONObject()
        o["token"] = .int(token)
        o["places"] = .array(tree.map(WireMapping.place(node:)))
        return .object(o)
    }

    /// `collectionLists.fetch`: the folder tree above the folder albums, a list per root.
    func fetchCollectionLists(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let roots = info.roots
        let (lists, token) = try snapshot { try $0.collectionLists(roots: roots) }
        var o = JSONObject()
        o["token"] = .int(token)
        o["lists"] = .array(lists.map(WireMapping.collectionList))
        return .object(o)
    }

    /// `collections.assets`: the assets of one moment, folder album, smart album or user album, in
    /// its order or `sort`'s, filtered by `predicate`.
    func collectionAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: Self.queryKeys.union(["id", "limit", "offset"]))
        let id = try p.string("id")
        let (limit, offset) = try Self.page(p)
        let scope = try Self.assetScope(collection: id)
        let query = try Self.assetQuery(p)
        let now = info.now()
        let (found, token) = try snapshot { r in try r.assets(query, in: scope, limit: limit, offset: offset, now: now) }
        guard let (assets, total) = found else { throw .notFound("no collection '\(id)'", extra: ["id": .string(id)]) }
        guard case .object(var o) = Self.paged("assets", assets.map { WireMapping.asset($0, offline: offlineRoots) }, total: total,
                                               offset: offset, token: token) else {
            return .null
        }
        o["id"] = .string(id)
        return .object(o)
    }

    /// `userAlbums.fetch` → `{"folders": [...], "albums": [...], "token"}`: the user's albums and
    /// the folders holding them (a tree through `parentID` / `folderID`), by title.
    func fetchUserAlbums(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let ((folders, albums), token) = try snapshot { r in
            let albums = try r.userAlbums()
            return (UserFolder.withKeyAssets(try r.userFolders(), albums: albums), albums)
        }
        return .object(["folders": .array(folders.map(WireMapping.userFolder)), "albums": .array(albums.map(WireMapping.userAlbum)),
                        "token": .int(token)])
    }

    /// The offset of the next page, or null after the last one.
    static func nextOffset(offset: Int, count: Int, total: Int) -> JSONValue {
        offset + count < total && count > 0 ? .int(Int64(offset + count)) : .null
    }
}

/// Facts about the running daemon that `library.status` reports.
struct DaemonInfo: Sendable {
    var pid: Int32
    var started: ContinuousClock.Instant
    var database: PathBytes
    var roots: [PathBytes]
    var timeZone: String

    func uptimeSeconds() -> Int { Int(started.duration(to: .now).components.seconds) }

    /// Wall-clock Unix milliseconds (Recently Added looks back from it).
    func now() -> Int64 { WallClock.milliseconds() }
}
