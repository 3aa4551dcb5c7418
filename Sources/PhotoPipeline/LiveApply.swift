import Dispatch
import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWatch

/// Applies one batch of the watcher's changes: the trees it touches are checked first, then
/// `ChangePlan` sorts it into steps in the writer's order, `LiveChanges` decides each step
/// against the disk and the index, and this shell hands the result to the sort queue — moves
/// waited for (what the writer could not resolve comes back to be read), files read in chunks on
/// the reader pool — and scans the new directories after the steps. Runs on the live loop's
/// thread.
struct LiveApply: Sendable {
    let context: LiveContext
    let treeWork: LiveTrees
    /// The decisions' memory across batches.
    let changes = Locked(LiveChanges())
    let now: @Sendable () -> ContinuousClock.Instant

    private var trees: Trees { context.trees }
    private var indexer: Indexer { context.indexer }
    private var sortQueue: SortQueue { context.sortQueue }

    func apply(_ batch: [WatchChange]) {
        treeWork.check(touchedBy: batch)
        let plan = ChangePlan(batch, roots: context.availableRoots, offline: Array(trees.unavailableMounts.keys),
                              exclusions: indexer.exclusions)
        let offline = trees.offline
        for root in plan.rootsGone where context.roots.contains(root) && !offline.contains(root) {
            treeWork.rootGone(root)
        }
        if !plan.unwatched.isEmpty {
            context.logger.warning("\(plan.unwatched.count) new directory tree(s) are polled, not watched: the watch budget is "
                                   + "used up (raise fs.inotify.max_user_watches)")
        }
        if plan.overflow {
            context.status.withLock { $0.overflows += 1 }
            context.logger.warning("the kernel's event queue overflowed (fs.inotify.max_queued_events)")
            treeWork.fullRescan(lost: true)
            return
        }
        let facts = DiskFacts(database: indexer.database)
        var scans = plan.scans
        for step in plan.steps {
            guard !context.stopping else { return }
            scans += apply(step, facts: facts)
        }
        if !scans.isEmpty, !context.stopping {
            context.settle()
            // New files a scan finds may be copies too (a folder copied in as a whole).
            indexer.scan(subtrees: ChangePlan.outermost(scans), roots: context.availableRoots) { [changes, now] outcomes in
                changes.withLock { $0.remember(outcomes, at: now()) }
            }
            treeWork.syncWatches()
        }
        if !plan.afterScans.isEmpty, !context.stopping {
            // What the scans found moved is no longer where these name it: only the rest goes.
            _ = apply(plan.afterScans, facts: facts)
        }
        indexer.forgetUnreadableFilesGone()  // a removal or a move may have taken one listed
    }

    /// Applies one step; returns the trees to scan after the batch's steps.
    private func apply(_ step: ChangePlan.Step, facts: DiskFacts) -> [PathBytes] {
        facts.beginStep(step.reads)
        let spared = trees.sparingTrees(step.removedDirectories)
        var writes = changes.withLock { $0.decide(step, spared: spared, facts: facts, at: now()) }
        var scans = writes.scans
        if writes.batch.hasMoves {
            // Waited for: a move the index cannot resolve (an unknown source) becomes a read.
            let summary = submitAndWait(writes.batch)
            trees.directoriesMoved(writes.batch.movedDirectories)
            if let report = summary?.report {
                var again = LiveChanges.Writes()
                changes.withLock { $0.decide(reads: report.unresolvedFiles, into: &again, facts: facts, at: now()) }
                if !again.batch.isEmpty { _ = submitAndWait(again.batch) }
                writes.reads += again.reads
                scans += again.scans + report.unresolvedDirectories
            }
        } else if !writes.batch.isEmpty {
            sortQueue.submit(writes.batch)
        }
        for start in stride(from: 0, to: writes.reads.count, by: Indexer.chunkSize) {
            guard !context.stopping else { break }
            read(Array(writes.reads[start..<min(start + Indexer.chunkSize, writes.reads.count)]))
        }
        return scans
    }

    /// Reads a chunk of files on the reader pool and queues their write.
    private func read(_ chunk: [Candidate]) {
        var write = WriteBatch()
        write.files = indexer.read(chunk)
        changes.withLock {
            $0.read(write.files, of: chunk, at: now())
            $0.submitted(chunk)
        }
        context.submitted.enter()
        sortQueue.submit(write) { [changes, context] _ in
            changes.withLock { $0.committed(chunk) }
            context.submitted.leave()
        }
    }

    private func submitAndWait(_ batch: WriteBatch) -> ChangeSet? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<ChangeSet?>(nil)
        sortQueue.submit(batch) { outcome in
            if case .success(let summary) = outcome { result.withLock { $0 = summary } }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}
