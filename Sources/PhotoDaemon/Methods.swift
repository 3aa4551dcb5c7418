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
    let sortQueue: SortQueue
    let reads: ReadCounter
    let info: DaemonInfo

    var table: [String: MethodHandler] {
        [
            "rpc.hello": { p, _ throws(RPCError) in try hello(p) },
            "library.status": { p, _ throws(RPCError) in try status(p) },
            "library.errors": { p, _ throws(RPCError) in try errors(p) },
            "assets.fetch": { p, _ throws(RPCError) in try fetchAssets(p) },
        ]
    }

    /// Runs a store query, mapping its failure to `internalError` (the store is ours; a
    /// failure there is not the client's fault).
    private func query<R: Sendable>(_ body: (IndexReader) throws -> R) throws(RPCError) -> R {
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
        o["capabilities"] = .array(["library.status", "library.errors", "assets.fetch"].map { .string($0) })
        return .object(o)
    }

    func status(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: [])
        let s = indexer.status
        let (counts, byRoot) = try query { r in try r.consistent { (try r.counts(), try r.assetCountsByRoot()) } }
        var o = JSONObject()
        // Idle means: no scan running and nothing waiting in the sort queue.
        let busy = s.state == .indexing || sortQueue.isBusy
        o["state"] = .string(busy ? IndexerStatus.State.indexing.rawValue : IndexerStatus.State.idle.rawValue)
        o["version"] = .string(DaemonOptions.version)
        o["pid"] = .int(Int64(info.pid))
        o["uptimeSeconds"] = .int(Int64(info.uptimeSeconds()))
        o["database"] = .string(info.database.string)
        o["timeZone"] = .string(info.timeZone)
        var roots: [JSONValue] = info.roots.map { root in
            var r = JSONObject()
            WireMapping.addPath(root, to: &r)
            if let reason = s.unavailableRoots[root] {
                r["state"] = .string("unavailable")
                r["reason"] = .string(reason)
            } else {
                r["state"] = .string("available")
            }
            r["assets"] = .int(Int64(byRoot[root] ?? 0))
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
        o["counts"] = WireMapping.counts(counts)
        if let current = s.current {
            var c = JSONObject()
            c["files"] = .int(Int64(current.files))
            c["toRead"] = .int(Int64(current.toRead))
            c["committed"] = .int(Int64(current.committed))
            c["directories"] = .int(Int64(current.directories))
            o["currentScan"] = .object(c)
        } else {
            o["currentScan"] = .null
        }
        o["lastScan"] = s.lastScan.map(WireMapping.scanReport) ?? .null
        let q = sortQueue.stats
        var queue = JSONObject()
        queue["jobsRun"] = .int(Int64(q.ran))
        queue["jobsCancelled"] = .int(Int64(q.cancelled))
        queue["jobsFailed"] = .int(Int64(q.failed))
        queue["pending"] = .int(Int64(q.pending))
        queue["lastError"] = q.lastError.map { .string($0) } ?? .null
        o["sortQueue"] = .object(queue)
        return .object(o)
    }

    func errors(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["limit", "offset"])
        let limit = try p.int("limit", default: 100, in: 1...WireLimits.maxPageSize)
        let offset = try p.int("offset", default: 0, in: 0...Int.max)
        let (issues, total) = try query { r in
            try r.consistent { (try r.fileIssues(limit: limit, offset: offset), try r.fileIssueCount()) }
        }
        var o = JSONObject()
        o["errors"] = .array(issues.map(WireMapping.fileIssue))
        o["total"] = .int(Int64(total))
        o["offset"] = .int(Int64(offset))
        o["nextOffset"] = Self.nextOffset(offset: offset, count: issues.count, total: total)
        return .object(o)
    }

    func fetchAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["limit", "offset"])
        let limit = try p.int("limit", default: 100, in: 1...WireLimits.maxPageSize)
        let offset = try p.int("offset", default: 0, in: 0...Int.max)
        let (assets, total) = try query { r in
            try r.consistent { (try r.assets(limit: limit, offset: offset), try r.visibleAssetCount()) }
        }
        var o = JSONObject()
        o["assets"] = .array(assets.map(WireMapping.asset))
        o["total"] = .int(Int64(total))
        o["offset"] = .int(Int64(offset))
        o["nextOffset"] = Self.nextOffset(offset: offset, count: assets.count, total: total)
        return .object(o)
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
}
