import PhotoMetadata
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import Testing

/// The disk and the index as tables, for `LiveChanges`: what `lstat` says of each path, the
/// index's rows by path, and the answers to the costlier questions.
struct TableFacts: LiveFacts {
    var disk: [PathBytes: LiveChanges.Entry] = [:]
    var index: [PathBytes: IndexedFile] = [:]
    var readable: Set<PathBytes> = []
    /// Where a file with this identity was indexed (and is no longer).
    var origins: [FileIdentity: PathBytes] = [:]
    var tombstones: [FileIdentity: Int64] = [:]
    /// The content the index has for each indexed file, and its identity.
    var contents: [PathBytes: IndexedContent] = [:]

    func stat(_ path: PathBytes) -> LiveChanges.Entry? { disk[path] }

    func indexed(_ path: PathBytes) -> (row: IndexedFile?, groupIsEmpty: Bool) {
        let key = ResourcePairing.groupKey(of: path.lastComponent)
        let group = index.keys.filter { $0.parent == path.parent && ResourcePairing.groupKey(of: $0.lastComponent) == key }
        return (index[path], group.isEmpty)
    }

    func isReadable(_ path: PathBytes) -> Bool { readable.contains(path) }
    func movedFrom(_ identity: FileIdentity, to path: PathBytes) -> PathBytes? { origins[identity] }
    func tombstone(_ identity: FileIdentity) -> Int64? { tombstones[identity] }

    func contents(files: [PathBytes], directories: [PathBytes]) -> [IndexedContent] {
        contents.filter { entry in files.contains(entry.key) || directories.contains { entry.key.isWithin($0) } }.map(\.value)
    }

    /// A regular file on disk.
    mutating func file(_ path: PathBytes, inode: UInt64, size: Int64 = 100, mtime: Int64 = 1_000) {
        disk[path] = LiveChanges.Entry(kind: .file, identity: Self.identity(inode, size: size, mtime: mtime))
    }

    /// A file as the index has it.
    mutating func indexed(_ path: PathBytes, inode: UInt64, size: Int64 = 100, mtime: Int64 = 1_000,
                          error: MetadataError.Code? = nil) {
        index[path] = IndexedFile(name: path.lastComponent, identity: Self.identity(inode, size: size, mtime: mtime),
                                  status: error == nil ? .media : .error, errorCode: error?.rawValue)
    }

    static func identity(_ inode: UInt64, size: Int64 = 100, mtime: Int64 = 1_000) -> FileIdentity {
        FileIdentity(fsid: 1, inode: inode, size: size, mtimeNanoseconds: mtime)
    }
}

private let captureDate = CaptureDate(local: LocalDateTime(year: 2024, month: 5, day: 1, hour: 10, minute: 0, second: 0)!,
                                      offset: nil, source: .exifOriginal)
private let a = PathBytes("/lib/d/a.jpg")
private let aRaw = PathBytes("/lib/d/a.cr2")
private let b = PathBytes("/lib/d/b.jpg")

/// The live path's decisions (`LiveChanges`): a step of watcher changes and what the disk and the
/// index say → what is written and read. Tables and synthetic time; the disk is never touched.
@Suite("The live path's decisions")
struct LiveChangesTests {
    static let t0 = ContinuousClock.now

    static func reads(_ paths: [PathBytes]) -> ChangePlan.Step {
        var step = ChangePlan.Step()
        step.reads = paths
        return step
    }

    static func decide(_ step: ChangePlan.Step, _ facts: TableFacts, changes: inout LiveChanges,
                       at offset: Duration = .zero) -> LiveChanges.Writes {
        changes.decide(step, spared: (step.removedDirectories, []), facts: facts, at: t0.advanced(by: offset))
    }

    static func decide(_ step: ChangePlan.Step, _ facts: TableFacts) -> LiveChanges.Writes {
        var changes = LiveChanges()
        return decide(step, facts, changes: &changes)
    }

    /// A row: the disk and the index, the files reported, and what is read (path, new, alone in
    /// its group), moved (from, to) and restored (path, tombstone), and what is scanned.
    struct Row: Sendable, CustomTestStringConvertible {
        var label: String
        var facts: TableFacts
        var reported: [PathBytes]
        var reads: [Read] = []
        var moves: [Move] = []
        var restores: [Restore] = []
        var scans: [PathBytes] = []
        var testDescription: String { label }

        struct Read: Hashable, Sendable {
            var path: PathBytes, isNew: Bool, isSole: Bool
        }

        struct Move: Hashable, Sendable {
            var from: PathBytes, to: PathBytes
        }

        struct Restore: Hashable, Sendable {
            var path: PathBytes, tombstone: Int64
        }
    }


    static let rows: [Row] = {
        var rows: [Row] = []
        var f = TableFacts()
        f.file(a, inode: 1)
        rows.append(Row(label: "a new file, alone in its group: read, the writer's fast path", facts: f, reported: [a],
                        reads: [.init(path: a, isNew: true, isSole: true)]))

        f = TableFacts()
        f.file(a, inode: 1)
        f.file(aRaw, inode: 2)
        rows.append(Row(label: "two new files of one group in one step: the first alone, the second pairs with it", facts: f,
                        reported: [a, aRaw], reads: [.init(path: a, isNew: true, isSole: true), .init(path: aRaw, isNew: true, isSole: false)]))

        f = TableFacts()
        f.file(aRaw, inode: 2)
        f.indexed(a, inode: 1)
        rows.append(Row(label: "a new file beside an indexed one of its group: read, not alone", facts: f, reported: [aRaw],
                        reads: [.init(path: aRaw, isNew: true, isSole: false)]))

        f = TableFacts()
        f.file(a, inode: 1)
        f.indexed(a, inode: 1)
        rows.append(Row(label: "unchanged: nothing", facts: f, reported: [a]))

        f = TableFacts()
        f.file(a, inode: 1, size: 200)
        f.indexed(a, inode: 1)
        rows.append(Row(label: "modified (another size): read again", facts: f, reported: [a],
                        reads: [.init(path: a, isNew: false, isSole: false)]))

        f = TableFacts()
        f.file(a, inode: 1)
        f.indexed(a, inode: 1, error: .permissionDenied)
        f.readable = [a]
        rows.append(Row(label: "refused for want of permission, readable now (a chmod): read again", facts: f, reported: [a],
                        reads: [.init(path: a, isNew: false, isSole: false)]))

        f = TableFacts()
        f.file(a, inode: 1)
        f.indexed(a, inode: 1, error: .permissionDenied)
        rows.append(Row(label: "refused for want of permission, still unreadable: nothing", facts: f, reported: [a]))

        f = TableFacts()
        f.file(b, inode: 7)
        f.origins[TableFacts.identity(7)] = PathBytes("/lib/old/b.jpg")
        rows.append(Row(label: "indexed elsewhere and gone from there (moved where no watch saw it): moved", facts: f,
                        reported: [b], moves: [.init(from: PathBytes("/lib/old/b.jpg"), to: b)]))

        f = TableFacts()
        f.file(b, inode: 8)
        f.tombstones[TableFacts.identity(8)] = 42
        rows.append(Row(label: "the file of an asset in Recently Deleted: restored", facts: f, reported: [b],
                        restores: [.init(path: b, tombstone: 42)]))

        f = TableFacts()
        f.disk[PathBytes("/lib/new")] = LiveChanges.Entry(kind: .directory, identity: TableFacts.identity(9))
        rows.append(Row(label: "a directory reported as a file: scanned", facts: f, reported: [PathBytes("/lib/new")],
                        scans: [PathBytes("/lib/new")]))

        f = TableFacts()
        f.disk[a] = LiveChanges.Entry(kind: .other, identity: TableFacts.identity(1))
        rows.append(Row(label: "a link or a device: nothing", facts: f, reported: [a]))

        rows.append(Row(label: "gone when looked at: nothing (yet)", facts: TableFacts(), reported: [a]))
        return rows
    }()

    @Test("A file reported added or modified × the disk × the index → read, moved, restored, scanned or nothing", arguments: rows)
    func decides(_ row: Row) {
        let writes = Self.decide(Self.reads(row.reported), row.facts)
        #expect(writes.reads.map { Row.Read(path: $0.path, isNew: $0.isNew, isSole: $0.isSoleNewMember) } == row.reads)
        #expect(writes.batch.movedFiles.map { Row.Move(from: $0.from, to: $0.to) } == row.moves)
        #expect(writes.batch.restoredFiles.map { Row.Restore(path: $0.path, tombstone: $0.tombstone) } == row.restores)
        #expect(writes.scans == row.scans)
        #expect(writes.batch.removedFiles.isEmpty && writes.batch.removedDirectories.isEmpty)
    }

    @Test("A file moved in the watcher's sight: moved with its identity; gone again, or now a directory, its old name is removed")
    func moves() {
        var step = ChangePlan.Step()
        let dir = PathBytes("/lib/d/sub")
        step.movedFiles = [(PathBytes("/lib/x.jpg"), a), (PathBytes("/lib/y.jpg"), b), (PathBytes("/lib/z.jpg"), dir)]
        var f = TableFacts()
        f.file(a, inode: 1)
        f.disk[dir] = LiveChanges.Entry(kind: .directory, identity: TableFacts.identity(3))
        let writes = Self.decide(step, f)
        #expect(writes.batch.movedFiles == [FileMove(from: PathBytes("/lib/x.jpg"), to: a, identity: TableFacts.identity(1))])
        #expect(writes.batch.removedFiles.map { $0.0.appending($0.1) } == [PathBytes("/lib/y.jpg"), PathBytes("/lib/z.jpg")])
        #expect(writes.scans == [dir])
    }

    @Test("Removals and directory moves pass as they are; the removals of the spared trees come from Trees")
    func removalsAndDirectoryMoves() {
        var step = ChangePlan.Step()
        step.removedFiles = [a]
        step.removedDirectories = [PathBytes("/lib/gone")]
        step.movedDirectories = [(PathBytes("/lib/p"), PathBytes("/lib/q"))]
        var changes = LiveChanges()
        let writes = changes.decide(step, spared: ([], [(PathBytes("/lib/gone"), Array("left.jpg".utf8))]), facts: TableFacts(),
                                    at: Self.t0)
        #expect(writes.batch.removedDirectories.isEmpty, "the spared tree's directory is not removed whole")
        #expect(writes.batch.removedFiles.map { $0.0.appending($0.1) } == [a, PathBytes("/lib/gone/left.jpg")])
        #expect(writes.batch.movedDirectories == [DirectoryMove(from: PathBytes("/lib/p"), to: PathBytes("/lib/q"))])
    }

    @Test("A file being written (submitted, not committed) is not read again for a second report of it; once committed it is")
    func inFlight() {
        var f = TableFacts()
        f.file(a, inode: 1)
        var changes = LiveChanges()
        let first = Self.decide(Self.reads([a]), f, changes: &changes)
        #expect(first.reads.count == 1)
        changes.submitted(first.reads)
        #expect(Self.decide(Self.reads([a]), f, changes: &changes).reads.isEmpty, "the same file, unchanged, on its way")
        f.file(a, inode: 1, size: 300)
        #expect(Self.decide(Self.reads([a]), f, changes: &changes).reads.count == 1, "changed again meanwhile: read")
        changes.committed(first.reads)
        f.file(a, inode: 1)
        #expect(Self.decide(Self.reads([a]), f, changes: &changes).reads.count == 1, "committed: decided as any other")
    }

    @Test("A file gone when looked at comes back under its new path when a rename of its directory follows; a removal forgets it")
    func unresolvedThenDirectoryRenamed() {
        var changes = LiveChanges()
        let old = PathBytes("/lib/trip/a.jpg"), gone = PathBytes("/lib/trip/b.jpg")
        _ = Self.decide(Self.reads([old, gone]), TableFacts(), changes: &changes)
        #expect(changes.unresolved.count == 2)
        var step = ChangePlan.Step()
        step.removedFiles = [gone]
        step.movedDirectories = [(PathBytes("/lib/trip"), PathBytes("/lib/trip 2019"))]
        var f = TableFacts()
        f.file(PathBytes("/lib/trip 2019/a.jpg"), inode: 5)
        let writes = Self.decide(step, f, changes: &changes, at: .seconds(3))
        #expect(writes.reads.map(\.path) == [PathBytes("/lib/trip 2019/a.jpg")])
        #expect(changes.unresolved.isEmpty)
    }

    @Test("A removal soon after a new file with its content (mv across file systems: copy, then delete) keeps the asset; later it does not")
    func copyThenDelete() {
        let copy = PathBytes("/other/a.jpg")
        let key = ContentKey(size: 100, fingerprint: 77)
        func removal(after offset: Duration) -> [PathBytes] {
            var changes = LiveChanges()
            let outcome = FileOutcome(directory: copy.parent, name: copy.lastComponent, identity: TableFacts.identity(3),
                                      fingerprint: 77, kind: .media(MediaFields(mediaType: .image, format: "jpeg", captureDate: captureDate)))
            changes.read([outcome], of: [Candidate(directory: copy.parent, name: copy.lastComponent, identity: TableFacts.identity(3),
                                                  isNew: true)], at: Self.t0)
            var step = ChangePlan.Step()
            step.removedFiles = [a]
            var f = TableFacts()
            f.contents[a] = IndexedContent(key: key, identity: TableFacts.identity(1))
            return Self.decide(step, f, changes: &changes, at: offset).batch.copiesOfRemoved
        }
        #expect(removal(after: .seconds(5)) == [copy])
        #expect(removal(after: LiveChanges.copyWindow + .seconds(1)).isEmpty, "past the window: another file")
    }

    @Test("Of several new files with the removed file's content, the removal picks the file itself (its inode), else one with its mtime, else the newest; each once")
    func copyOfRemovedPicksTheFileItself() {
        let moved = PathBytes("/lib/d.moved/a.jpg")          // the folder's rename, seen as a new file
        let copy = PathBytes("/lib/incoming/new-1-a.jpg")     // a copy made meanwhile: a new inode and mtime
        let kept = PathBytes("/other/a.jpg")                  // cp -p to another disk: a new inode, the mtime kept
        func read(_ path: PathBytes, _ identity: FileIdentity, at t: Duration, into changes: inout LiveChanges) {
            let outcome = FileOutcome(directory: path.parent, name: path.lastComponent, identity: identity, fingerprint: 77,
                                      kind: .media(MediaFields(mediaType: .image, format: "jpeg", captureDate: captureDate)))
            changes.read([outcome], of: [Candidate(directory: path.parent, name: path.lastComponent, identity: identity, isNew: true)],
                         at: Self.t0 + t)
        }
        func removal(_ removed: [PathBytes: FileIdentity], _ changes: inout LiveChanges) -> [PathBytes] {
            var step = ChangePlan.Step()
            step.removedFiles = removed.keys.sorted()
            var f = TableFacts()
            for (path, identity) in removed { f.contents[path] = IndexedContent(key: ContentKey(size: 100, fingerprint: 77), identity: identity) }
            return Self.decide(step, f, changes: &changes, at: .seconds(10)).batch.copiesOfRemoved
        }
        var changes = LiveChanges()
        read(moved, TableFacts.identity(1), at: .seconds(1), into: &changes)
        read(copy, TableFacts.identity(9, mtime: 5_000), at: .seconds(2), into: &changes)
        read(kept, TableFacts.identity(8), at: .seconds(3), into: &changes)
        #expect(removal([a: TableFacts.identity(1)], &changes) == [moved], "the same inode, though two came later")
        #expect(removal([PathBytes("/lib/e/a.jpg"): TableFacts.identity(2)], &changes) == [kept], "the same mtime")
        #expect(removal([PathBytes("/lib/f/a.jpg"): TableFacts.identity(3, mtime: 7)], &changes) == [copy], "the newest left")
        #expect(removal([PathBytes("/lib/g/a.jpg"): TableFacts.identity(4)], &changes).isEmpty, "each new file is taken once")
    }
}
