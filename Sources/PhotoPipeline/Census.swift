import PhotoModel
import PhotoSystem

/// Counts the files a first index will read, ahead of its walk.
///
/// The walk runs only a few hundred files ahead of the readers (it waits while they are behind,
/// so that memory stays bounded), so during a first index what it has seen says little about
/// what is left. The census lists the directories alone — no `stat` of a file whose entry has
/// a type, no read, no database — and counts what the walk will find, by the walk's rules:
/// names that start with a dot or that the exclusions name are skipped, a directory that holds `.nomedia` is skipped with
/// everything below it, symbolic links are not followed, unreadable directories are left out.
/// It is an estimate (a file may come or go meanwhile; mounts the walk finds unavailable are
/// counted), and it costs a directory listing each (about a second at a million files, warm),
/// on a thread of its own.
enum Census {
    /// The files below `roots`; `progress` is told the count so far every `every` files and
    /// at the end; stops early (returning what it counted) when `shouldStop` says so.
    @discardableResult
    static func count(roots: [PathBytes], exclusions: PathExclusions = .none, every: Int = 2_000, shouldStop: () -> Bool,
                      progress: (Int) -> Void) -> Int {
        var files = 0
        var nextReport = every
        // Depth first with an explicit stack: a library may nest thousands of folders deep.
        var pending = roots.reversed().map { $0 }
        while let path = pending.popLast() {
            if shouldStop() { break }
            guard let dir = try? Directory(path: path), let entries = try? dir.entries() else { continue }
            if entries.contains(where: { $0.name == Walk.noMedia }) { continue }
            let names = exclusions.isEmpty ? [] : PathExclusions.names(of: path, roots: roots) ?? []
            var below: [PathBytes] = []
            for entry in entries where !Walk.isHidden(entry.name) && !exclusions.excludes(entry.name, in: names) {
                var kind = entry.kind
                if kind == .unknown {
                    guard let s = try? FileStat.at(dir.descriptor, entry.name) else { continue }
                    kind = s.isRegularFile ? .file : (s.isDirectory ? .directory : .other)
                }
                switch kind {
                case .file: files += 1
                case .directory: below.append(path.appending(entry.name))
                default: continue
                }
            }
            // Visited in name order, like the walk (the stack pops the last first).
            pending += below.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }.reversed()
            if files >= nextReport {
                progress(files)
                nextReport = files + every
            }
        }
        progress(files)
        return files
    }
}
