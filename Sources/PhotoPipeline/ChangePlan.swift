import PhotoModel
import PhotoWatch

/// The watcher's changes of one batch, sorted into the steps that apply them. Pure.
///
/// A sort job applies removals, then moves, then writes (`IndexWriter.apply`). A batch whose
/// changes follow that order goes in one step; a change that must come after a later kind
/// (a removal after a move, a move after a write) starts a new step, so the steps applied in
/// order equal the changes applied in order. Scans come after every step (the watcher puts
/// them last in its batch). Paths outside the roots, below a dot-directory or excluded
/// (`PathExclusions`) are dropped: the scan never indexes them either.
///
/// A removal by a rename the watcher saw only half of (`movedOut`: a `MOVED_FROM` without its
/// `MOVED_TO`) that nothing else in the batch touches waits until after the scans
/// (`afterScans`) when there are scans: a file or directory moved into a directory created an
/// instant before (not yet watched) is then found by the new directory's scan while the index
/// still knows it, and moved with its ids and folder album, instead of going to Recently
/// Deleted and coming back. What the scan did not find is removed after it, as before. A
/// deletion is never held back: its inode is free, and a directory made right after it may get
/// the same one.
struct ChangePlan: Equatable {
    struct Step: Equatable {
        var removedDirectories: [PathBytes] = []
        var removedFiles: [PathBytes] = []
        var movedDirectories: [(from: PathBytes, to: PathBytes)] = []
        var movedFiles: [(from: PathBytes, to: PathBytes)] = []
        /// Files to read if they changed (added or modified), in order, without repeats.
        var reads: [PathBytes] = []

        var isEmpty: Bool {
            removedDirectories.isEmpty && removedFiles.isEmpty && movedDirectories.isEmpty && movedFiles.isEmpty
                && reads.isEmpty
        }

        static func == (a: Step, b: Step) -> Bool {
            a.removedDirectories == b.removedDirectories && a.removedFiles == b.removedFiles
                && a.movedDirectories.map(\.from) == b.movedDirectories.map(\.from)
                && a.movedDirectories.map(\.to) == b.movedDirectories.map(\.to)
                && a.movedFiles.map(\.from) == b.movedFiles.map(\.from) && a.movedFiles.map(\.to) == b.movedFiles.map(\.to)
                && a.reads == b.reads
        }
    }

    var steps: [Step] = []
    /// Removals applied after the scans (only removals; see above).
    var afterScans = Step()
    /// Paths removed by a half-seen rename (`movedOut` hints).
    private var movedOut = Set<PathBytes>()
    /// Trees to compare with the disk after the steps (new directories, `.nomedia` changes).
    var scans: [PathBytes] = []
    /// The kernel lost events: compare every root with the disk.
    var overflow = false
    /// Trees the watcher could not watch: poll them.
    var unwatched: [PathBytes] = []
    /// Roots that were moved, deleted or unmounted.
    var rootsGone: [PathBytes] = []

    /// The order of the kinds within a step (`IndexWriter.apply`).
    private enum Phase: Int, Comparable {
        case removeDirectory, removeFile, moveDirectory, moveFile, read
        static func < (a: Phase, b: Phase) -> Bool { a.rawValue < b.rawValue }
    }

    /// - Parameters:
    ///   - roots: the available roots (changes elsewhere are dropped).
    ///   - offline: mount points below them whose file system is not there: changes below them
    ///     are dropped too, but for scans (the walk checks the tree again).
    ///   - exclusions: what below the roots is not part of the library: changes there are
    ///     dropped, scans too (a move out of it reads what is moved in, as from outside the roots).
    init(_ changes: [WatchChange], roots: [PathBytes], offline: [PathBytes] = [], exclusions: PathExclusions = .none) {
        var step = Step()
        var phase = Phase.removeDirectory
        var reading = Set<PathBytes>()
        func enter(_ next: Phase) {
            if next < phase, !step.isEmpty {
                steps.append(step)
                step = Step()
                reading = []
            }
            phase = next
        }
        func inLibrary(_ path: PathBytes) -> Bool {
            Self.isIndexable(path, roots: roots) && !offline.contains { path.isWithin($0) } && !exclusions.excludes(path, roots: roots)
        }

        for change in changes {
            switch change {
            case .added(let p), .modified(let p):
                guard inLibrary(p) else { continue }
                enter(.read)
                if reading.insert(p).inserted { step.reads.append(p) }
            case .removed(let p):
                guard inLibrary(p) else { continue }
                enter(.removeFile)
                step.removedFiles.append(p)
            case .moved(let from, let to):
                switch (inLibrary(from), inLibrary(to)) {
                case (true, true):
                    enter(.moveFile)
                    step.movedFiles.append((from, to))
                case (true, false):
                    enter(.removeFile)
                    step.removedFiles.append(from)
                case (false, true):
                    enter(.read)
                    if reading.insert(to).inserted { step.reads.append(to) }
                case (false, false):
                    continue
                }
            case .directoryAdded(let p), .rescan(let p):
                if (Self.isIndexable(p, roots: roots) && !exclusions.excludes(p, roots: roots)) || roots.contains(p) { scans.append(p) }
            case .directoryRemoved(let p):
                guard inLibrary(p) else { continue }
                enter(.removeDirectory)
                step.removedDirectories.append(p)
            case .directoryMoved(let from, let to):
                switch (inLibrary(from), inLibrary(to)) {
                case (true, true):
                    enter(.moveDirectory)
                    step.movedDirectories.append((from, to))
                case (true, false):
                    enter(.removeDirectory)
                    step.removedDirectories.append(from)
                case (false, true):
                    scans.append(to)
                case (false, false):
                    continue
                }
            case .movedOut(let p):
                movedOut.insert(p)
            case .overflow:
                overflow = true
            case .unwatched(let trees):
                unwatched.append(contentsOf: trees)
            case .rootGone(let root):
                rootsGone.append(root)
            }
        }
        if !step.isEmpty { steps.append(step) }
        scans = Self.outermost(scans)
        deferRemovals()
    }

    /// Moves to `afterScans` the removals by half-seen renames whose paths no other change of
    /// the batch and no scan lies within, above or at: applied later, they have the same result.
    private mutating func deferRemovals() {
        guard !scans.isEmpty, !movedOut.isEmpty,
              steps.contains(where: { !$0.removedDirectories.isEmpty || !$0.removedFiles.isEmpty }) else { return }
        // Every path the batch names (without a trailing slash), each with how often (a removal
        // named once is only itself), and every directory above one of them.
        var named: [PathBytes: Int] = [:]
        var above = Set<PathBytes>()
        func note(_ path: PathBytes) {
            let path = Self.normal(path)
            named[path, default: 0] += 1
            for p in Self.ancestors(of: path) where !above.insert(p).inserted { break }
        }
        for step in steps {
            step.removedDirectories.forEach(note)
            step.removedFiles.forEach(note)
            for (from, to) in step.movedDirectories { note(from); note(to) }
            for (from, to) in step.movedFiles { note(from); note(to) }
            step.reads.forEach(note)
        }
        scans.forEach(note)
        let hinted = Set(movedOut.map(Self.normal))
        func deferrable(_ path: PathBytes) -> Bool {
            let path = Self.normal(path)
            guard hinted.contains(path), named[path] == 1, !above.contains(path) else { return false }
            return !Self.ancestors(of: path).contains { named[$0] != nil }
        }
        for i in steps.indices {
            let (dirs, files) = (steps[i].removedDirectories, steps[i].removedFiles)
            steps[i].removedDirectories = dirs.filter { !deferrable($0) }
            steps[i].removedFiles = files.filter { !deferrable($0) }
            afterScans.removedDirectories += dirs.filter(deferrable)
            afterScans.removedFiles += files.filter(deferrable)
        }
        steps.removeAll { $0.isEmpty }
    }

    /// `path` without a trailing slash (a root may be given as `/srv/photos/`); `/` stays.
    static func normal(_ path: PathBytes) -> PathBytes {
        guard path.bytes.count > 1, path.bytes.last == UInt8(ascii: "/") else { return path }
        return PathBytes(Array(path.bytes.dropLast()))
    }

    /// The directories above `path`, nearest first, up to `/` (or `.` for a relative path).
    static func ancestors(of path: PathBytes) -> [PathBytes] {
        var result: [PathBytes] = []
        var p = path
        while p.parent != p {
            p = p.parent
            result.append(p)
        }
        return result
    }

    /// Whether a path lies strictly below one of the roots and no component below the root
    /// starts with a dot (what the scan skips).
    static func isIndexable(_ path: PathBytes, roots: [PathBytes]) -> Bool {
        guard let root = roots.filter({ path.isWithin($0) && path != $0 }).max(by: { $0.bytes.count < $1.bytes.count }) else {
            return false
        }
        let rest = path.bytes.dropFirst(root.bytes.count)
        var atComponentStart = true
        for byte in rest {
            if byte == UInt8(ascii: "/") {
                atComponentStart = true
            } else {
                if atComponentStart && byte == UInt8(ascii: ".") { return false }
                atComponentStart = false
            }
        }
        return true
    }

    /// The trees with none of their ancestors in the list, in their first order.
    static func outermost(_ trees: [PathBytes]) -> [PathBytes] {
        var result: [PathBytes] = []
        for tree in trees where !trees.contains(where: { $0 != tree && tree.isWithin($0) }) && !result.contains(tree) {
            result.append(tree)
        }
        return result
    }
}
