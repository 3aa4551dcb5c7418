import Foundation
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing

@Suite("The live index's bounded backlog")
struct LiveBacklogTests {
    @Test("Changes beyond the backlog limit are dropped for one full rescan, which finds every file")
    func backlogDroppedForRescan() throws {
        let lib = try TemporaryDirectory("backlog-lib")
        let state = try TemporaryDirectory("backlog-state")
        defer {
            lib.remove()
            state.remove()
        }
        let db = try Database(path: state("b.db").string)
        var options = LiveOptions()
        options.maxQueuedChanges = 5
        let live = try TestLive(db, roots: [lib.path], options: options)
        defer { live.stop() }
        try eventually("the initial scan") { !live.loop.isBusy }

        // 300 files at once: the watcher's batch alone is over the limit.
        for i in 0..<300 { try lib.write("f\(i).jpg", [UInt8(i & 0xFF)]) }
        try live.pipeline.awaitCommit("every file") { try $0.counts().assets == 300 }
        try eventually("the loop idle") { !live.loop.isBusy }
        #expect(live.loop.status.backlogRescans >= 1)
        #expect(live.loop.status.pendingChanges == 0)
    }
}
