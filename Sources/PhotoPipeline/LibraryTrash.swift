#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoStore
import PhotoSystem

/// Why photod will not trash, restore or delete an asset: the request's per-asset answer.
public struct TrashRefusal: Error, Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// No asset has the id (or, for a restore or a delete, none is in Recently Deleted).
        case notFound
        /// The asset's root is not one the operator opened to the trash (`--trash-root`).
        case permissionDenied
        /// The asset's tree is unmounted or not answering.
        case unavailable
        /// The file on disk is not the one photod indexed (or trashed): changed, replaced, gone.
        case conflict
    }

    public var id: AssetID
    public var kind: Kind
    public var reason: String

    public init(_ id: AssetID, _ kind: Kind, _ reason: String) {
        self.id = id
        self.kind = kind
        self.reason = reason
    }
}

/// The trash on disk: renames an asset's files to hidden names in their own directories
/// (`TrashName`) and back, and unlinks them for good — the only code that changes a library,
/// and only below the roots the operator named (`--trash-root`). Each name is changed through
/// a directory opened from its root without following links (`ConfinedDirectory`), with
/// `renameat2(RENAME_NOREPLACE)`; nothing is copied, and nothing is unlinked but a trashed file
/// of an asset in Recently Deleted. Every check is made before the first rename, so a refused
/// asset leaves its files as they were.
public struct LibraryTrash: Sendable {
    /// The roots whose files may be renamed and unlinked.
    public let roots: Set<PathBytes>
    /// The unavailable tree a path lies in, with the reason (`Trees.offlineTree(containing:)`).
    let offline: @Sendable (PathBytes) -> (tree: PathBytes, reason: String)?

    public init(roots: Set<PathBytes>, offline: @escaping @Sendable (PathBytes) -> (tree: PathBytes, reason: String)?) {
        self.roots = roots
        self.offline = offline
    }

    public init(roots: Set<PathBytes>, trees: Trees) {
        self.init(roots: roots) { trees.offlineTree(containing: $0) }
    }

    /// How far to look for a free name for a restored file (` (1)` … ` (999)`).
    static let suffixLimit = 999

    // MARK: Trash

    /// Why `asset` (in the library) may not be trashed now; nil when it may: its root is open to
    /// the trash, its tree is available, and every file is, byte for byte as far as the
    /// fingerprint tells, the one indexed (same inode, size, modification time and content).
    public func refusal(trashing asset: AssetFiles, expiresAt seconds: Int64) -> TrashRefusal? {
        if asset.deletedAt != nil { return TrashRefusal(asset.id, .notFound, "the asset is already in Recently Deleted") }
        if let refusal = writable(asset) { return refusal }
        if asset.files.isEmpty { return TrashRefusal(asset.id, .conflict, "the index has no file for the asset") }
        for file in asset.files {
            do {
                let dir = try ConfinedDirectory(file.directory, below: asset.root)
                let st = try dir.stat(file.name)
                let fsid = try dir.fileSystemID()
                guard st.isRegularFile, st.inode == file.identity.inode, st.size == file.identity.size,
                      st.mtimeNanoseconds == file.identity.mtimeNanoseconds, fsid == file.identity.fsid else {
                    return TrashRefusal(asset.id, .conflict, "'\(file.path)' changed since photod read it; it is read again first")
                }
                if let fingerprint = file.fingerprint,
                   MediaFileReader.fingerprint(of: file.name, in: dir.descriptor, size: st.size) != fingerprint {
                    return TrashRefusal(asset.id, .conflict, "'\(file.path)' has other content than photod read; it is read again first")
                }
                if TrashName.make(file.name, expiresAt: seconds) == nil {
                    return TrashRefusal(asset.id, .conflict, "'\(file.path)': the name is too long to take the trash's prefix")
                }
            } catch {
                return TrashRefusal(asset.id, .conflict, "'\(file.path)' cannot be checked: \(error.message)")
            }
        }
        return nil
    }

    /// Renames every file of `asset` to its trashed name (checked by `refusal(trashing:expiresAt:)`
    /// first). All or nothing: when a rename fails, those made are undone.
    public func trash(_ asset: AssetFiles, expiresAt seconds: Int64) throws(TrashRefusal) -> [TrashedFile] {
        var done: [TrashedFile] = []
        for file in asset.files {
            guard let hidden = TrashName.make(file.name, expiresAt: seconds) else {
                undo(done, root: asset.root)
                throw TrashRefusal(asset.id, .conflict, "'\(file.path)': the name is too long to take the trash's prefix")
            }
            do {
                let dir = try ConfinedDirectory(file.directory, below: asset.root)
                try dir.rename(file.name, to: hidden)
                try? dir.sync()
                done.append(TrashedFile(file: file, trashedName: hidden))
            } catch {
                undo(done, root: asset.root)
                throw TrashRefusal(asset.id, .conflict, "'\(file.path)' could not be renamed: \(error.message)")
            }
        }
        return done
    }

    /// Puts trashed files back under their names (a trash whose commit failed).
    public func undo(_ renamed: [TrashedFile], root: PathBytes) {
        for r in renamed.reversed() {
            guard let dir = try? ConfinedDirectory(r.file.directory, below: root) else { continue }
            try? dir.rename(r.trashedName, to: r.file.name)
            try? dir.sync()
        }
    }

    // MARK: Restore

    /// A file of an asset in Recently Deleted, found in its trash.
    public struct Found: Sendable, Hashable {
        public var file: AssetFile
        /// Its hidden name now.
        public var trashedName: [UInt8]
    }

    /// The trashed files of `asset` (in Recently Deleted), each checked to be the file it
    /// trashed; a refusal when the root is closed, the tree unavailable, or a file is gone or
    /// another. `requireAll`: every file of the asset must be in the trash (a restore); else
    /// files deleted by someone else are skipped (a delete for good).
    public func trashedFiles(of asset: AssetFiles, requireAll: Bool) -> Result<[Found], TrashRefusal> {
        guard asset.deletedAt != nil else { return .failure(TrashRefusal(asset.id, .notFound, "the asset is not in Recently Deleted")) }
        if let refusal = writable(asset) { return .failure(refusal) }
        var found: [Found] = []
        for file in asset.files {
            guard let dir = try? ConfinedDirectory(file.directory, below: asset.root) else {
                if !requireAll { continue }
                return .failure(TrashRefusal(asset.id, .conflict, "the folder '\(file.directory)' is gone"))
            }
            if let name = Self.trashedName(of: file, in: dir) {
                found.append(Found(file: file, trashedName: name))
            } else if requireAll {
                let why = file.trashedName == nil
                    ? "'\(file.path)' was deleted outside photod; put the file back and photod restores the asset"
                    : "the trashed file of '\(file.path)' is gone"
                return .failure(TrashRefusal(asset.id, .conflict, why))
            }
        }
        if requireAll, found.isEmpty { return .failure(TrashRefusal(asset.id, .conflict, "the asset has no file in the trash")) }
        return .success(found)
    }

    /// Renames `files` (one asset's, from `trashedFiles`) back: under their own names, or all
    /// with the first suffix ` (n)` free for every one of them. Returns the restores for the
    /// writer (the tombstones become file rows again) and the names that were taken.
    public func restore(_ files: [Found], of asset: AssetFiles) throws(TrashRefusal)
        -> (restores: [FileRestore], renamed: [(from: PathBytes, to: PathBytes)]) {
        var lastError = "no free name"
        for n in 0...Self.suffixLimit {
            var done: [(dir: ConfinedDirectory, found: Found, name: [UInt8])] = []
            var taken = false
            for f in files {
                let name = n == 0 ? f.file.name
                    : TrashName.suffixed(f.file.name, baseLength: ResourcePairing.groupKey(of: f.file.name).count, n)
                do {
                    let dir = try ConfinedDirectory(f.file.directory, below: asset.root)
                    try dir.rename(f.trashedName, to: name)
                    done.append((dir, f, name))
                } catch where error.errno == EEXIST {
                    taken = true
                } catch {
                    lastError = error.message
                    taken = true
                }
                if taken { break }
            }
            if !taken {
                var restores: [FileRestore] = []
                var renamed: [(PathBytes, PathBytes)] = []
                for (dir, f, name) in done {
                    try? dir.sync()
                    // The same inode, size and mtime as trashed (a rename changes neither).
                    restores.append(FileRestore(path: f.file.directory.appending(name), identity: f.file.identity,
                                                tombstone: f.file.tombstone ?? 0))
                    if name != f.file.name { renamed.append((f.file.path, f.file.directory.appending(name))) }
                }
                return (restores, renamed)
            }
            for (dir, f, name) in done.reversed() { try? dir.rename(name, to: f.trashedName) }
            if lastError != "no free name" { break }
        }
        throw TrashRefusal(asset.id, .conflict, "its files could not be put back: \(lastError)")
    }

    /// Puts restored files back in the trash (a restore whose commit failed).
    public func undo(_ restores: [FileRestore], of files: [Found], root: PathBytes) {
        for (r, f) in zip(restores, files) {
            guard let dir = try? ConfinedDirectory(f.file.directory, below: root) else { continue }
            try? dir.rename(r.path.lastComponent, to: f.trashedName)
        }
    }

    // MARK: Delete for good

    /// Unlinks the trashed files of `asset`; the reason when one could not be unlinked.
    public func unlink(_ files: [Found], of asset: AssetFiles) -> TrashRefusal? {
        for f in files {
            do {
                let dir = try ConfinedDirectory(f.file.directory, below: asset.root)
                try dir.unlink(f.trashedName)
                try? dir.sync()
            } catch {
                return TrashRefusal(asset.id, .conflict, "the trashed file of '\(f.file.path)' could not be deleted: \(error.message)")
            }
        }
        return nil
    }

    // MARK: Rules

    /// The root is open to the trash and the asset's tree is available.
    private func writable(_ asset: AssetFiles) -> TrashRefusal? {
        guard roots.contains(asset.root) else {
            return TrashRefusal(asset.id, .permissionDenied,
                                "the root '\(asset.root)' is read-only for photod (start photod with --trash-root \(asset.root) to allow it)")
        }
        let paths = Set(asset.files.map(\.directory))
        for path in paths {
            if let (tree, reason) = offline(path) {
                return TrashRefusal(asset.id, .unavailable, "'\(tree)' is unavailable: \(reason)")
            }
        }
        for path in paths.sorted() {
            guard let dir = try? ConfinedDirectory(path, below: asset.root), let denial = dir.writeDenial() else { continue }
            let hint = denial.errno == EROFS
                ? " (a read-only mount; under systemd: systemctl edit photod.service, [Service] ReadWritePaths=\(asset.root))"
                : " (photod's user needs write permission on the folder)"
            return TrashRefusal(asset.id, .permissionDenied, "photod may not rename files in '\(path)': \(denial.message)" + hint)
        }
        return nil
    }

    /// The hidden name `file` has in `dir` now: the one recorded, else one the index did not
    /// record (photod stopped between the rename and its commit) found by its original name and
    /// identity; nil when there is none, or a file of another identity holds it.
    static func trashedName(of file: AssetFile, in dir: ConfinedDirectory) -> [UInt8]? {
        func isTheFile(_ name: [UInt8]) -> Bool {
            guard let st = try? dir.stat(name) else { return false }
            return st.isRegularFile && st.inode == file.identity.inode && st.size == file.identity.size
        }
        if let name = file.trashedName { return isTheFile(name) ? name : nil }
        guard let listing = try? Directory(path: dir.path).entries() else { return nil }
        return listing.map(\.name).first { TrashName.parse($0)?.original == file.name && isTheFile($0) }
    }
}
