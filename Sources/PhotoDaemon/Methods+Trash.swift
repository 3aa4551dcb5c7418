import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoWire

/// `assets.trash`, `assets.restore` and `assets.deletePermanently`: the only methods that change
/// a library, and only below the roots the operator opened to them (`--trash-root`). Each runs
/// on the sort queue, as one job: the index is read, every asset checked, and only when all
/// pass are files renamed (or unlinked) and the change committed, durably, in one change set.
/// A refusal names each asset and its reason, and nothing is touched.
extension Methods {
    var trash: LibraryTrash {
        LibraryTrash(roots: liveOptions.trashRoots, trees: trees, crashAfterRenames: liveOptions.trashCrashAfterRenames,
                     crashAfterUnlinks: liveOptions.trashCrashAfterUnlinks)
    }

    /// `assets.trash {"ids"}` → `{"token", "trashed": [ids]}`: every file of each asset is
    /// renamed in its own directory to its hidden trashed name; the assets go to Recently
    /// Deleted with their ids and user state.
    func trashAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["ids"])
        let ids = Self.unique(try Self.assetIDs(p))
        let (trash, retention) = (self.trash, liveOptions.retentionMilliseconds)
        let refused = Locked<[TrashRefusal]>([])
        let summary = try commit { writer, now in
            let (assets, unknown) = try Self.lookUp(ids, writer)
            let expiresAt = (now + retention) / 1000
            let refusals = unknown + assets.compactMap { trash.refusal(trashing: $0, expiresAt: expiresAt) }
            guard refusals.isEmpty else {
                refused.withLock { $0 = refusals }
                return ChangeSet()
            }
            // Every rename on record, durably, before the first (undone at the next start if
            // photod stops before the commit).
            let plan = LibraryTrash.plan(trashing: assets, expiresAt: expiresAt)
            try writer.plan(plan)
            let leaving = plan.map { $0.directory.appending($0.name) }
            live.expectOwnRenames(removed: leaving)
            var renamed: [(asset: AssetFiles, files: [TrashedFile])] = []
            do {
                for asset in assets { renamed.append((asset, try trash.trash(asset, expiresAt: expiresAt))) }
                return try writer.trash(renamed.flatMap(\.files), now: now)
            } catch {
                for r in renamed.reversed() { trash.undo(r.files, root: r.asset.root) }
                live.forgetOwnRenames(removed: leaving)
                try writer.clearPlan()
                guard let refusal = error as? TrashRefusal else { throw error }
                refused.withLock { $0 = [refusal] }
                return ChangeSet()
            }
        }
        try Self.throwIfRefused(refused.withLock { $0 })
        return Self.written(summary, ["trashed": .array(ids.map { .string($0.rawValue) })])
    }

    /// `assets.restore {"ids"}` → `{"token", "restored": [ids], "renamed": [{"from", "to"}]}`:
    /// the trashed files are renamed back (all of an asset's with ` (n)` when a name is taken)
    /// and the assets return with their ids, favorites and albums.
    func restoreAssets(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["ids"])
        let ids = Self.unique(try Self.assetIDs(p))
        let trash = self.trash
        let refused = Locked<[TrashRefusal]>([])
        let kept = Locked<[TrashRefusal]>([])
        let renamedNames = Locked<[(from: PathBytes, to: PathBytes)]>([])
        let summary = try commit { writer, now in
            let (assets, unknown) = try Self.lookUp(ids, writer)
            var refusals = unknown
            var plans: [(asset: AssetFiles, found: [LibraryTrash.Found])] = []
            for asset in assets {
                switch trash.trashedFiles(of: asset, requireAll: true) {
                case .success(let found): plans.append((asset, found))
                case .failure(let refusal): refusals.append(refusal)
                }
            }
            guard refusals.isEmpty else {
                refused.withLock { $0 = refusals }
                return ChangeSet()
            }
            var named: [(asset: AssetFiles, found: [LibraryTrash.Found], names: [[UInt8]])] = []
            do throws(TrashRefusal) {
                for plan in plans { named.append((plan.asset, plan.found, try trash.restoredNames(plan.found, of: plan.asset))) }
            } catch {
                refused.withLock { $0 = [error] }
                return ChangeSet()
            }
            let plan = named.flatMap { LibraryTrash.plan(restoring: $0.found, to: $0.names, of: $0.asset) }
            try writer.plan(plan)
            var done: [(asset: AssetFiles, found: [LibraryTrash.Found], restores: [FileRestore])] = []
            do {
                var restores: [FileRestore] = []
                for n in named {
                    let (made, renamed) = try trash.restore(n.found, to: n.names, of: n.asset)
                    done.append((n.asset, n.found, made))
                    restores += made
                    renamedNames.withLock { $0 += renamed }
                }
                let changes = try writer.restore(restores, now: now)
                // An asset whose name the index still gave to another file (a deletion not seen
                // yet on a polled tree) stayed in Recently Deleted: its files go back to the trash.
                let after = try writer.assetFiles(done.map(\.asset.id))
                for d in done where after[d.asset.id]?.deletedAt != nil {
                    trash.undo(d.restores, of: d.found, root: d.asset.root)
                    kept.withLock { $0.append(TrashRefusal(d.asset.id, .conflict, "the index still holds another file under its "
                                                           + "name (a change not seen yet): put back in the trash; try again after a rescan")) }
                }
                return changes
            } catch {
                for d in done.reversed() { trash.undo(d.restores, of: d.found, root: d.asset.root) }
                try writer.clearPlan()
                renamedNames.withLock { $0 = [] }
                guard let refusal = error as? TrashRefusal else { throw error }
                refused.withLock { $0 = [refusal] }
                return ChangeSet()
            }
        }
        try Self.throwIfRefused(refused.withLock { $0 })
        let renamed = renamedNames.withLock { $0 }.map { JSONValue.object(["from": .string($0.from.string), "to": .string($0.to.string)]) }
        let failures = kept.withLock { $0 }
        let keptIDs = Set(failures.map(\.id))
        return Self.written(summary, [
            "restored": .array(ids.filter { !keptIDs.contains($0) }.map { .string($0.rawValue) }),
            "renamed": .array(renamed),
            "kept": .array(failures.map { .object(["id": .string($0.id.rawValue), "reason": .string($0.reason)]) }),
        ])
    }

    /// `assets.deletePermanently {"ids"}` → `{"token", "deleted": [ids]}`: for assets in
    /// Recently Deleted: their trashed files are unlinked, then they are purged (with their user
    /// state). An asset whose files someone else deleted is purged without touching the disk.
    func deleteAssetsPermanently(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknownKeys(allowed: ["ids"])
        let ids = Self.unique(try Self.assetIDs(p))
        let trash = self.trash
        let refused = Locked<[TrashRefusal]>([])
        let kept = Locked<[TrashRefusal]>([])
        let summary = try commit { writer, now in
            let (assets, unknown) = try Self.lookUp(ids, writer)
            var refusals = unknown
            var plans: [(asset: AssetFiles, found: [LibraryTrash.Found])] = []
            for asset in assets {
                if asset.deletedAt == nil {
                    refusals.append(TrashRefusal(asset.id, .notFound, "the asset is not in Recently Deleted (assets.trash it first)"))
                } else if !trash.roots.contains(asset.root), !asset.files.contains(where: { $0.trashedName != nil }) {
                    plans.append((asset, []))  // deleted by someone else: nothing on disk to touch
                } else {
                    switch trash.trashedFiles(of: asset, requireAll: false) {
                    case .success(let found): plans.append((asset, found))
                    case .failure(let refusal): refusals.append(refusal)
                    }
                }
            }
            guard refusals.isEmpty else {
                refused.withLock { $0 = refusals }
                return ChangeSet()
            }
            let (purged, failures) = try trash.unlink(plans, recordingIn: writer)
            kept.withLock { $0 = failures }
            return try writer.purge(purged, now: now)
        }
        try Self.throwIfRefused(refused.withLock { $0 })
        let failures = kept.withLock { $0 }
        let keptIDs = Set(failures.map(\.id))
        return Self.written(summary, [
            "deleted": .array(ids.filter { !keptIDs.contains($0) }.map { .string($0.rawValue) }),
            "kept": .array(failures.map { .object(["id": .string($0.id.rawValue), "reason": .string($0.reason)]) }),
        ])
    }

    // MARK: Shared

    /// The ids, each once, in the order given.
    static func unique(_ ids: [AssetID]) -> [AssetID] {
        var seen = Set<AssetID>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// The files of each id the index knows, in the request's order, and a refusal for each
    /// it does not.
    static func lookUp(_ ids: [AssetID], _ writer: IndexWriter) throws -> (known: [AssetFiles], unknown: [TrashRefusal]) {
        let found = try writer.assetFiles(ids)
        return (ids.compactMap { found[$0] },
                ids.filter { found[$0] == nil }.map { TrashRefusal($0, .notFound, "no asset has this id") })
    }

    /// The call's error when any asset was refused: the gravest reason's code (unknown ids,
    /// then a closed root, then an unavailable tree, then a changed file), and every refusal in
    /// `data.refused`.
    static func throwIfRefused(_ refusals: [TrashRefusal]) throws(RPCError) {
        guard let first = refusals.min(by: { rank($0.kind) < rank($1.kind) }) else { return }
        let detail = "\(first.id): \(first.reason)" + (refusals.count > 1 ? " (and \(refusals.count - 1) more refused)" : "")
            + "; nothing was changed"
        let list = JSONValue.array(refusals.map {
            .object(["id": .string($0.id.rawValue), "reason": .string($0.kind.rawValue), "detail": .string($0.reason)])
        })
        var extra: JSONObject = ["refused": list]
        let code: RPCErrorCode
        switch first.kind {
        case .notFound:
            code = .notFound
            extra["ids"] = .array(refusals.filter { $0.kind == .notFound }.map { .string($0.id.rawValue) })
        case .permissionDenied: code = .permissionDenied
        case .unavailable: code = .unavailable
        case .conflict: code = .conflict
        }
        throw RPCError(code, detail: detail, extra: extra)
    }

    private static func rank(_ kind: TrashRefusal.Kind) -> Int {
        switch kind {
        case .notFound: 0
        case .permissionDenied: 1
        case .unavailable: 2
        case .conflict: 3
        }
    }
}
