import Glibc
import PhotoSystem
import PhotoPipeline
import PhotoStore
import PhotoWire

/// Methods for tests only, registered when `PHOTOD_TEST_HOOKS=1`: they wedge the pipeline on
/// purpose so that a test can watch the watchdog pings stop and resume.
struct TestHooks: Sendable {
    let sortQueue: SortQueue
    let database: Database

    var table: [String: MethodHandler] {
        ["test.wedge": { p, _ throws(RPCError) in try wedge(p) },
         "test.limitPages": { p, _ throws(RPCError) in try limitPages(p) }]
    }

    /// `test.limitPages {"pages": "current" | N | null}`: the database may not grow beyond its
    /// current size, N pages, or (null) is unlimited again — a disk that fills up and frees up.
    func limitPages(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["pages"])
        do {
            let limit: Database.PageLimit?
            switch p["pages"] {
            case .string("current")?: limit = .current
            case .int(let n)?: limit = .pages(n)
            default: limit = nil
            }
            let pages = try database.limitPages(limit)
            return .object(["maxPageCount": .int(pages)])
        } catch {
            throw .internalError("\(error)")
        }
    }

    /// `test.wedge {"seconds": N}`: the sort queue runs an operation that sleeps N seconds
    /// (0.1–60), then the next ones; answered at once.
    func wedge(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["seconds"])
        let seconds = try p.double("seconds", in: 0.1...60)
        sortQueue.submit(operation: { _, _ in
            sleepThread(seconds: seconds)
            return ChangeSet()
        })
        return .object(["wedged": .double(seconds)])
    }
}
