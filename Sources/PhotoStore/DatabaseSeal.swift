import PhotoModel
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// What the database file was when photod closed it cleanly: `<database>.clean`, beside it.
///
/// Written at a clean stop, after the final checkpoint (the WAL empty, the database file
/// complete), and taken (read and removed) at the next open, under the database's lock. When
/// the file is still exactly what the seal says — the same inode, size, modification and
/// change times, no WAL — nothing has touched it since photod closed it, and the start skips
/// what guards against damage done while it was stopped: `PRAGMA quick_check` (a read of every
/// page: seconds at a million assets, more from a cold disk) and the counter recount (a pass
/// over every table). Anything else — no seal after a crash or a power cut, a file truncated,
/// overwritten, copied over or replaced while photod was stopped (each changes the change time
/// or the inode, which no user can set back) — runs both, as every start did before.
public struct DatabaseSeal: Sendable, Hashable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var mtimeNanoseconds: Int64
    var ctimeNanoseconds: Int64

    static let magic = "photod-seal 1"

    /// `<database>.clean`.
    public static func path(forDatabase database: String) -> PathBytes { PathBytes(database + ".clean") }

    /// The seal of the database file as it is now; nil when it cannot be sealed (it is not
    /// there, or its WAL holds frames that the database file lacks).
    static func current(ofDatabase database: String) -> DatabaseSeal? {
        if let wal = try? FileStat.of(PathBytes(database + "-wal")), wal.size != 0 { return nil }
        guard let st = try? FileStat.of(PathBytes(database)), st.isRegularFile else { return nil }
        return DatabaseSeal(device: st.device, inode: st.inode, size: st.size, mtimeNanoseconds: st.mtimeNanoseconds,
                            ctimeNanoseconds: st.ctimeNanoseconds)
    }

    /// The seal's one line.
    var line: String {
        "\(Self.magic) \(device) \(inode) \(size) \(mtimeNanoseconds) \(ctimeNanoseconds)\n"
    }

    /// A seal read back from its line; nil for anything else.
    init?(line: String) {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 7, "\(words[0]) \(words[1])" == Self.magic,
              let device = UInt64(words[2]), let inode = UInt64(words[3]), let size = Int64(words[4]),
              let mtime = Int64(words[5]), let ctime = Int64(words[6].dropLast(words[6].hasSuffix("\n") ? 1 : 0))
        else { return nil }
        self.init(device: device, inode: inode, size: size, mtimeNanoseconds: mtime, ctimeNanoseconds: ctime)
    }

    init(device: UInt64, inode: UInt64, size: Int64, mtimeNanoseconds: Int64, ctimeNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
        self.ctimeNanoseconds = ctimeNanoseconds
    }

    /// Seals the database as it is now; false (and no seal) when its WAL is not empty.
    static func write(forDatabase database: String) throws(SystemError) -> Bool {
        guard let seal = current(ofDatabase: database) else { return false }
        try AtomicFile.write(Array(seal.line.utf8), to: path(forDatabase: database), mode: 0o600)
        return true
    }

    /// Takes the seal: removes it, and says whether the database file is still what it
    /// describes. Call it with the database's lock held and before anything opens the file.
    static func take(forDatabase database: String) -> Bool {
        let sealPath = path(forDatabase: database)
        guard let bytes = try? FileDescriptor.readAll(sealPath, limit: 4096) else { return false }
        // Removed first, and durably: whatever happens next (a crash, a power cut), a later
        // start does not trust it again.
        _ = sealPath.withCString { unlink($0) }
        try? AtomicFile.syncDirectory(sealPath.parent)
        guard let seal = DatabaseSeal(line: String(decoding: bytes, as: UTF8.self)) else { return false }
        return current(ofDatabase: database) == seal
    }
}
