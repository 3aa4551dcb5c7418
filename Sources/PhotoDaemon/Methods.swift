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
        let counts = try query { try $0.counts() }
        var o = JSONObject()
        o["state"] = .string(s.state.rawValue)
        o["version"] = .string(DaemonOptions.version)
        o["pid"] = .int(Int64(info.pid))
        o["uptimeSeconds"] = .int(Int64(info.uptimeSeconds()))
        o["database"] = .string(info.database.string)
        o["timeZone"] = .string(info.timeZone)
        o["roots"] = .array(info.roots.map { root in
            var r = JSONObject()
            WireMapping.addPath(root, to: &r)
            if let reason = s.unavailableRoots[root] {
                r["state"] = .string("unavailable")
                r["reason"] = .string(reason)
            } else {
                r["state"] = .string("available")
            }
            return .object(r)
        })
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
        var pipeline = JSONObject()
        pipeline["batchesCommitted"] = .int(Int64(s.batchesCommitted))
        pipeline["batchesFailed"] = .int(Int64(s.batchesFailed))
        pipeline["lastError"] = s.lastError.map { .string($0) } ?? .null
        o["pipeline"] = .object(pipeline)
        return .object(o)
    }

    func errors(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["limit", "offset"])
        let limit = try p.int("limit", default: 100, in: 1...WireLimits.maxPageSize)
        let offset = try p.int("offset", default: 0, in: 0...Int.max)
        let issues = try query { try $0.fileIssues(limit: limit, offset: offset) }
        var o = JSONObject()
        o["errors"] = .array(issues.map(WireMapping.fileIssue))
        o["nextOffset"] = issues.count == limit ? .int(Int64(offset + limit)) : .null
        return .object(o)
    }

    func fetchAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["limit", "offset"])
        let limit = try p.int("limit", default: 100, in: 1...WireLimits.maxPageSize)
        let offset = try p.int("offset", default: 0, in: 0...Int.max)
        let (assets, total) = try query { r in (try r.assets(limit: limit, offset: offset), try r.counts().assets) }
        var o = JSONObject()
        o["assets"] = .array(assets.map(WireMapping.asset))
        o["total"] = .int(Int64(total))
        o["offset"] = .int(Int64(offset))
        o["nextOffset"] = offset + assets.count < total && assets.count == limit ? .int(Int64(offset + limit)) : .null
        return .object(o)
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
