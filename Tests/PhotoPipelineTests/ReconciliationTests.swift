import PhotoMetadata
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import Testing

/// One answer to a question of the table (`Reconciliation.Facts`).
enum Fact: Hashable, Sendable {
    case readable(Bool)
    case indexedContent(Bool)
    case movedFrom(PathBytes?)
    case tombstone(Int64?)
    case openForWriting(Bool)
    case aloneInGroup(Bool)

    /// Which question it answers.
    var question: String {
        switch self {
        case .readable: "readable"
        case .indexedContent: "indexedContent"
        case .movedFrom: "movedFrom"
        case .tombstone: "tombstone"
        case .openForWriting: "openForWriting"
        case .aloneInGroup: "aloneInGroup"
        }
    }
}

/// Answers the table's questions from a row's facts and records which it asked: a question the
/// row has no answer for is answered "no" and shows up as asked.
final class StubFacts: Reconciliation.Facts {
    let answers: [Fact]
    private(set) var asked: [String] = []
    init(_ answers: [Fact]) { self.answers = answers }

    private func answer(_ question: String) -> Fact? {
        asked.append(question)
        return answers.first { $0.question == question }
    }

    func isReadable(_ name: [UInt8]) -> Bool {
        if case .readable(let yes) = answer("readable") { return yes }
        return false
    }

    func hasIndexedContent(_ row: IndexedFile, size: Int64) -> Bool {
        if case .indexedContent(let yes) = answer("indexedContent") { return yes }
        return false
    }

    func movedFrom(_ identity: FileIdentity, to name: [UInt8]) -> PathBytes? {
        if case .movedFrom(let origin) = answer("movedFrom") { return origin }
        return nil
    }

    func tombstone(_ identity: FileIdentity) -> Int64? {
        if case .tombstone(let id) = answer("tombstone") { return id }
        return nil
    }

    func isOpenForWriting(_ name: [UInt8]) -> Bool {
        if case .openForWriting(let yes) = answer("openForWriting") { return yes }
        return false
    }

    func isAloneInGroup(_ name: [UInt8]) -> Bool {
        if case .aloneInGroup(let yes) = answer("aloneInGroup") { return yes }
        return false
    }
}

/// One row of the table for a file on disk: what the index has under its name, how the scan
/// compares, the answers to exactly the questions the table must ask (in order), and the answer.
struct FileRow: Sendable, CustomTestStringConvertible {
    var label: String
    var disk: FileIdentity
    var indexed: IndexedFile?
    var scan: Reconciliation.Scan
    var facts: [Fact]
    var expected: Reconciliation.FileDecision

    init(_ label: String, disk: FileIdentity = Rows.identity, indexed: IndexedFile?, scan: Reconciliation.Scan,
         facts: [Fact] = [], _ action: Reconciliation.FileAction, removesIndexedRow: Bool = false) {
        self.label = label
        self.disk = disk
        self.indexed = indexed
        self.scan = scan
        self.facts = facts
        self.expected = Reconciliation.FileDecision(removesIndexedRow: removesIndexedRow, action: action)
    }

    var testDescription: String { label }
}

/// Names for the rows' inputs.
enum Rows {
    static let name = Array("a.jpg".utf8)
    /// What `stat` says of the file: modified long before the scan's recent cutoff.
    static let identity = FileIdentity(fsid: 1, inode: 10, size: 100, mtimeNanoseconds: 1_000)
    /// The same file, modified after the cutoff.
    static let recent = FileIdentity(fsid: 1, inode: 10, size: 100, mtimeNanoseconds: 9_000)
    static let elsewhere = PathBytes("/lib/old/a.jpg")

    static func row(_ identity: FileIdentity = Rows.identity, status: FileStatus = .media,
                    error: MetadataError.Code? = nil) -> IndexedFile {
        IndexedFile(name: name, identity: identity, status: status, errorCode: error?.rawValue)
    }

    static func changed(size: Int64 = 100, mtime: Int64 = 1_000, inode: UInt64 = 10, fsid: UInt64 = 1) -> IndexedFile {
        row(FileIdentity(fsid: fsid, inode: inode, size: size, mtimeNanoseconds: mtime))
    }

    /// A first index: nothing to look up.
    static let first = Reconciliation.Scan(recentCutoff: 5_000)
    /// A full scan after a stop: new files are looked up, and held back until the removals.
    static let restart = Reconciliation.Scan(lookForMoves: true, deferNewFiles: true, recentCutoff: 5_000)
    /// A subtree scan for the watcher: looked up, read at once.
    static let subtree = Reconciliation.Scan(lookForMoves: true, recentCutoff: 5_000)
    static let newRules = Reconciliation.Scan(readEverything: true, lookForMoves: true, deferNewFiles: true,
                                              recentCutoff: 5_000)
    static let adopt = Reconciliation.Scan(adopting: true, lookForMoves: true, deferNewFiles: true, recentCutoff: 5_000)

    static let notNew = Reconciliation.FileAction.read(isNew: false, isSoleNewMember: false, afterRemovals: false)
}

/// One row of the table for a listed directory.
struct DirectoryRow: Sendable, CustomTestStringConvertible {
    var label: String
    var indexed: DirectorySnapshot?
    var visible = true
    var noMedia = false
    var expected: Reconciliation.DirectoryAction
    var testDescription: String { label }
}

@Suite("Walk reconciliation table")
struct ReconciliationTests {
    static let fileRows: [FileRow] = [
        // The index holds the file as it is.
        FileRow("unchanged: skipped, nothing asked", indexed: Rows.row(), scan: Rows.restart, .skip),
        FileRow("unchanged, first index: skipped", indexed: Rows.row(), scan: Rows.first, .skip),
        FileRow("unchanged and recent: skipped without looking for a writer", disk: Rows.recent,
                indexed: Rows.row(Rows.recent), scan: Rows.restart, .skip),
        FileRow("unchanged in an adopted tree: skipped, content not compared", indexed: Rows.row(), scan: Rows.adopt, .skip),
        FileRow("unchanged, not media: skipped", indexed: Rows.row(status: .ignored), scan: Rows.restart, .skip),
        FileRow("unchanged, corrupt: skipped (reading it again says the same)",
                indexed: Rows.row(status: .error, error: .corrupt), scan: Rows.restart, .skip),
        FileRow("refused for permission, still unreadable: skipped after one access check",
                indexed: Rows.row(status: .error, error: .permissionDenied), scan: Rows.restart, facts: [.readable(false)], .skip),
        FileRow("refused for permission, readable now: read again",
                indexed: Rows.row(status: .error, error: .permissionDenied), scan: Rows.restart, facts: [.readable(true)], Rows.notNew),
        FileRow("refused for permission, newer rules: read again without an access check",
                indexed: Rows.row(status: .error, error: .permissionDenied), scan: Rows.newRules, Rows.notNew),
        FileRow("unchanged, newer reading rules: read again, keeps its row", indexed: Rows.row(), scan: Rows.newRules,
                Rows.notNew),
        FileRow("unchanged and recent, newer rules, being written: busy", disk: Rows.recent,
                indexed: Rows.row(Rows.recent), scan: Rows.newRules, facts: [.openForWriting(true)], .busy),

        // The index has a row under its name with another identity.
        FileRow("size changed: read, keeps its row", indexed: Rows.changed(size: 99), scan: Rows.restart, Rows.notNew),
        FileRow("mtime changed: read", indexed: Rows.changed(mtime: 999), scan: Rows.restart, Rows.notNew),
        FileRow("inode changed (replaced): read", indexed: Rows.changed(inode: 11), scan: Rows.restart, Rows.notNew),
        FileRow("file system changed: read", indexed: Rows.changed(fsid: 2), scan: Rows.restart, Rows.notNew),
        FileRow("changed, first index: read", indexed: Rows.changed(size: 99), scan: Rows.first, Rows.notNew),
        FileRow("changed and recent, no writer: read", disk: Rows.recent, indexed: Rows.changed(size: 99),
                scan: Rows.restart, facts: [.openForWriting(false)], Rows.notNew),
        FileRow("changed and recent, being written: busy", disk: Rows.recent, indexed: Rows.changed(size: 99),
                scan: Rows.restart, facts: [.openForWriting(true)], .busy),
        FileRow("changed in an adopted tree, the indexed content: keeps its row, read", indexed: Rows.changed(inode: 77),
                scan: Rows.adopt, facts: [.indexedContent(true)], Rows.notNew),
        FileRow("changed in an adopted tree, other content: row removed, read as new after the removals",
                indexed: Rows.changed(inode: 77), scan: Rows.adopt,
                facts: [.indexedContent(false), .movedFrom(nil), .tombstone(nil), .aloneInGroup(true)],
                .read(isNew: true, isSoleNewMember: true, afterRemovals: true), removesIndexedRow: true),
        FileRow("changed in an adopted tree, other content indexed elsewhere: row removed, moved",
                indexed: Rows.changed(inode: 77), scan: Rows.adopt,
                facts: [.indexedContent(false), .movedFrom(Rows.elsewhere)], .move(from: Rows.elsewhere),
                removesIndexedRow: true),
        FileRow("changed in an adopted tree, other content in Recently Deleted: row removed, restored",
                indexed: Rows.changed(inode: 77), scan: Rows.adopt,
                facts: [.indexedContent(false), .movedFrom(nil), .tombstone(3)], .restore(tombstone: 3), removesIndexedRow: true),
        FileRow("changed in an adopted tree, other content, being written: row removed, busy", disk: Rows.recent,
                indexed: Rows.changed(inode: 77), scan: Rows.adopt,
                facts: [.indexedContent(false), .movedFrom(nil), .tombstone(nil), .openForWriting(true)], .busy,
                removesIndexedRow: true),

        // The index has no row under its name.
        FileRow("new, first index: read, alone in its group", indexed: nil, scan: Rows.first, facts: [.aloneInGroup(true)],
                .read(isNew: true, isSoleNewMember: true, afterRemovals: false)),
        FileRow("new, first index, with partners (RAW+JPEG): read, not sole", indexed: nil, scan: Rows.first,
                facts: [.aloneInGroup(false)], .read(isNew: true, isSoleNewMember: false, afterRemovals: false)),
        FileRow("new, nothing identifies it: held back until the removals", indexed: nil, scan: Rows.restart,
                facts: [.movedFrom(nil), .tombstone(nil), .aloneInGroup(true)],
                .read(isNew: true, isSoleNewMember: true, afterRemovals: true)),
        FileRow("new in a subtree scan: read at once", indexed: nil, scan: Rows.subtree,
                facts: [.movedFrom(nil), .tombstone(nil), .aloneInGroup(false)],
                .read(isNew: true, isSoleNewMember: false, afterRemovals: false)),
        FileRow("new, indexed elsewhere that no longer holds it: moved", indexed: nil, scan: Rows.restart,
                facts: [.movedFrom(Rows.elsewhere)], .move(from: Rows.elsewhere)),
        FileRow("new, the file of an asset in Recently Deleted: restored", indexed: nil, scan: Rows.restart,
                facts: [.movedFrom(nil), .tombstone(7)], .restore(tombstone: 7)),
        FileRow("new and recent, being written: busy, after the look-ups", disk: Rows.recent, indexed: nil, scan: Rows.restart,
                facts: [.movedFrom(nil), .tombstone(nil), .openForWriting(true)], .busy),
        FileRow("new and recent, no writer: held back", disk: Rows.recent, indexed: nil, scan: Rows.restart,
                facts: [.movedFrom(nil), .tombstone(nil), .openForWriting(false), .aloneInGroup(false)],
                .read(isNew: true, isSoleNewMember: false, afterRemovals: true)),
        FileRow("new, newer rules: looked up like any new file", indexed: nil, scan: Rows.newRules,
                facts: [.movedFrom(Rows.elsewhere)], .move(from: Rows.elsewhere)),
    ]

    @Test("A file on disk × the index's row under its name → what to do, asking only what the rule needs",
          arguments: fileRows)
    func file(_ row: FileRow) {
        let facts = StubFacts(row.facts)
        let decision = Reconciliation.file(Rows.name, row.disk, indexed: row.indexed, scan: row.scan, facts: facts)
        #expect(decision == row.expected)
        #expect(facts.asked == row.facts.map(\.question), "questions asked")
    }

    static let vanishedRows: [(Reconciliation.Vanished, Reconciliation.VanishedAction)] = [
        (.file, .removeFile),
        (.directory(isRecordedMount: false), .removeDirectory),
        (.directory(isRecordedMount: true), .checkMount),
    ]

    @Test("What the index has under a name the disk lacks: a file or folder is removed, a recorded mount point checked",
          arguments: vanishedRows)
    func vanished(_ indexed: Reconciliation.Vanished, _ expected: Reconciliation.VanishedAction) {
        #expect(Reconciliation.vanished(indexed) == expected)
    }

    static func dir(fsid: UInt64? = 1, inode: UInt64? = 5, mtime: Int64? = 50, files: Int = 1) -> DirectorySnapshot {
        DirectorySnapshot(id: 1, fsid: fsid, inode: inode, mtimeNanoseconds: mtime,
                          files: (0..<files).map { _ in Rows.row() }, subdirectories: [])
    }

    static let directoryRows: [DirectoryRow] = [
        DirectoryRow(label: "not indexed: compared, visit written", indexed: nil, expected: .compare(recordVisit: true)),
        DirectoryRow(label: "unchanged: compared, nothing written", indexed: dir(), expected: .compare(recordVisit: false)),
        DirectoryRow(label: "mtime changed: visit written", indexed: dir(mtime: 49), expected: .compare(recordVisit: true)),
        DirectoryRow(label: "inode changed: visit written", indexed: dir(inode: 6), expected: .compare(recordVisit: true)),
        DirectoryRow(label: "visited before inodes were kept: visit written", indexed: dir(inode: nil),
                     expected: .compare(recordVisit: true)),
        DirectoryRow(label: "emptied, same file system: compared (its files are removed)", indexed: dir(), visible: false,
                     expected: .compare(recordVisit: false)),
        DirectoryRow(label: "empty on another file system, the index has files: unavailable", indexed: dir(fsid: 2),
                     visible: false, expected: .unavailable),
        DirectoryRow(label: "empty on another file system, holding only .nomedia: unavailable first",
                     indexed: dir(fsid: 2), visible: false, noMedia: true, expected: .unavailable),
        DirectoryRow(label: "on another file system with entries: compared", indexed: dir(fsid: 2),
                     expected: .compare(recordVisit: false)),
        DirectoryRow(label: "empty on another file system, indexed empty: compared", indexed: dir(fsid: 2, files: 0),
                     visible: false, expected: .compare(recordVisit: false)),
        DirectoryRow(label: "empty, file system not recorded: compared", indexed: dir(fsid: nil), visible: false,
                     expected: .compare(recordVisit: false)),
        DirectoryRow(label: ".nomedia in an indexed directory: excluded, forgotten", indexed: dir(), noMedia: true,
                     expected: .exclude(forget: true)),
        DirectoryRow(label: ".nomedia in a new directory: excluded", indexed: nil, noMedia: true,
                     expected: .exclude(forget: false)),
    ]

    @Test("A listed directory × what the index has of it → unavailable, excluded, or compared", arguments: directoryRows)
    func directory(_ row: DirectoryRow) {
        #expect(Reconciliation.directory(indexed: row.indexed, fsid: 1, inode: 5, mtimeNanoseconds: 50,
                                         hasVisibleEntries: row.visible, hasNoMedia: row.noMedia) == row.expected)
    }
}
