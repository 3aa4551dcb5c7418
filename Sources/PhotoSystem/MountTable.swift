#if canImport(Glibc)
import Glibc
#endif
import CLinux
import PhotoModel

/// One line of `/proc/self/mountinfo` (proc(5)): a mount in this process's mount namespace.
public struct MountEntry: Sendable, Hashable {
    /// The mount's id (unique while it is mounted; the kernel reuses freed ids).
    public var id: UInt64
    public var parentID: UInt64
    /// The device's major and minor numbers (`st_dev` of the file system's files).
    public var major: UInt32
    public var minor: UInt32
    /// The directory of the file system that is the mount's top (`/` for a whole disk; the
    /// source directory for a bind mount).
    public var root: PathBytes
    /// Where it is mounted, as this process sees it.
    public var mountPoint: PathBytes
    /// `ext4`, `nfs4`, `cifs`, `fuse.sshfs`, ...
    public var fsType: String
    /// The device or share (`/dev/sdb1`, `server:/export`), or what the file system says.
    public var source: String

    public init(id: UInt64, parentID: UInt64, major: UInt32 = 0, minor: UInt32 = 0, root: PathBytes, mountPoint: PathBytes,
                fsType: String, source: String) {
        self.id = id
        self.parentID = parentID
        self.major = major
        self.minor = minor
        self.root = root
        self.mountPoint = mountPoint
        self.fsType = fsType
        self.source = source
    }

    /// The path, inside this mount's file system, of `path` (which lies at or below the mount
    /// point): the mount's root followed by what comes after the mount point.
    public func fileSystemPath(of path: PathBytes) -> PathBytes {
        guard path.isWithin(mountPoint) else { return path }
        let below = mountPoint.bytes == [UInt8(ascii: "/")] ? path.bytes[...] : path.bytes.dropFirst(mountPoint.bytes.count)
        var result = root.bytes
        if result.last == UInt8(ascii: "/"), below.first == UInt8(ascii: "/") { result.removeLast() }
        result += below
        return PathBytes(result.isEmpty ? [UInt8(ascii: "/")] : result)
    }
}

/// The mount table of this process's mount namespace, as `/proc/self/mountinfo` gives it.
public struct MountTable: Sendable, Hashable {
    /// In the file's order: a mount comes after the one it is mounted on, and a later mount on
    /// the same mount point hides an earlier one.
    public var entries: [MountEntry]

    public init(entries: [MountEntry]) { self.entries = entries }

    public static let path = PathBytes("/proc/self/mountinfo")

    /// Reads the table now.
    public static func read() throws(SystemError) -> MountTable {
        let fd = try FileDescriptor.open(path, flags: O_RDONLY | O_CLOEXEC)
        defer { fd.close() }
        return try read(from: fd)
    }

    /// Reads the table through an open `/proc/self/mountinfo` from its start (which also
    /// acknowledges a change `poll` reported on it).
    public static func read(from fd: FileDescriptor) throws(SystemError) -> MountTable {
        _ = try syscall("lseek", context: path.string) { lseek(fd.rawValue, 0, SEEK_SET) }
        var bytes: [UInt8] = []
        // Large reads: the kernel formats whole lines into each, and a table read in few of them
        // is less likely to mix two states of a table that changes meanwhile.
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try syscall("read", context: path.string) {
                chunk.withUnsafeMutableBytes { Glibc.read(fd.rawValue, $0.baseAddress, $0.count) }
            }
            if n == 0 { break }
            bytes += chunk[..<n]
        }
        return parse(bytes)
    }

    /// Parses the file's text; lines that do not have its shape are skipped.
    public static func parse(_ bytes: [UInt8]) -> MountTable {
        var entries: [MountEntry] = []
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            // id parent major:minor root mount-point options [optional...] - type source super-options
            guard fields.count >= 8, let separator = fields[6...].firstIndex(where: { $0.elementsEqual([UInt8(ascii: "-")]) }),
                  separator + 2 < fields.count,
                  let id = UInt64(String(decoding: fields[0], as: UTF8.self)),
                  let parent = UInt64(String(decoding: fields[1], as: UTF8.self)) else { continue }
            let device = fields[2].split(separator: UInt8(ascii: ":")).map { UInt32(String(decoding: $0, as: UTF8.self)) ?? 0 }
            entries.append(MountEntry(id: id, parentID: parent, major: device.first ?? 0, minor: device.count > 1 ? device[1] : 0,
                                      root: PathBytes(unescape(fields[3])),
                                      mountPoint: PathBytes(unescape(fields[4])),
                                      fsType: String(decoding: unescape(fields[separator + 1]), as: UTF8.self),
                                      source: String(decoding: unescape(fields[separator + 2]), as: UTF8.self)))
        }
        return MountTable(entries: entries)
    }

    /// The kernel writes space, tab, newline and backslash in paths as `\ooo` octal escapes.
    static func unescape(_ field: ArraySlice<UInt8>) -> [UInt8] {
        guard field.contains(UInt8(ascii: "\\")) else { return Array(field) }
        var out: [UInt8] = []
        var i = field.startIndex
        while i < field.endIndex {
            let b = field[i]
            if b == UInt8(ascii: "\\"), let value = octal(field[(i + 1)..<min(i + 4, field.endIndex)]) {
                out.append(value)
                i += 4
            } else {
                out.append(b)
                i += 1
            }
        }
        return out
    }

    private static func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
        guard digits.count == 3 else { return nil }
        var value = 0
        for d in digits {
            guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "7") else { return nil }
            value = value * 8 + Int(d - UInt8(ascii: "0"))
        }
        return value <= 255 ? UInt8(value) : nil
    }

    /// The mount with this id.
    public func entry(id: UInt64) -> MountEntry? { entries.last { $0.id == id } }

    /// The mount a path lies on, judged by mount points alone (for kernels that do not report
    /// mount ids): the deepest mount point at or above it, the last one mounted there.
    public func entry(covering path: PathBytes) -> MountEntry? {
        var best: MountEntry?
        for e in entries where path.isWithin(e.mountPoint) {
            if let b = best, e.mountPoint.bytes.count < b.mountPoint.bytes.count { continue }
            best = e
        }
        return best
    }

    /// The mount the open directory at `path` (a canonical path) lies on: by the mount id
    /// `statx` gives, else by mount points. Nil when the table does not have it — it is older
    /// than the mount (or the id was reused: the entry's mount point is not above `path`).
    public func entry(of directory: FileDescriptor, path: PathBytes) -> MountEntry? {
        guard let id = mountID(of: directory) else { return entry(covering: path) }
        return entry(id: id).flatMap { path.isWithin($0.mountPoint) ? $0 : nil }
    }
}

/// A volume id for the file system `entry` is, where its `f_fsid` cannot tell one disk from
/// another: udev's `ID_FS_UUID` for the device (`/run/udev/data/b<major>:<minor>`), else a FAT
/// volume's serial number (`FAT_IOCTL_GET_VOLUME_ID` on `directory`), else the mount's source
/// for a file system without a device (FUSE, a share). Nil when none is known.
public func volumeID(of entry: MountEntry, directory: FileDescriptor) -> String? {
    if entry.major != 0, let data = try? FileDescriptor.open(PathBytes("/run/udev/data/b\(entry.major):\(entry.minor)"),
                                                               flags: O_RDONLY | O_CLOEXEC) {
        defer { data.close() }
        var bytes = [UInt8](repeating: 0, count: 16 << 10)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(data.rawValue, $0.baseAddress, $0.count) }
        if n > 0 {
            for line in bytes[..<n].split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("E:ID_FS_UUID=".utf8)) {
                let uuid = String(decoding: line.dropFirst(13), as: UTF8.self)
                if !uuid.isEmpty { return uuid }
            }
        }
    }
    var serial: UInt32 = 0
    if photo_fat_volume_id(directory.rawValue, &serial) == 0 {
        return hexDigits(serial >> 16, width: 4) + "-" + hexDigits(serial & 0xFFFF, width: 4)
    }
    if entry.major == 0 { return entry.source }
    return nil
}

/// The mount id of an open file or directory (`statx`'s `STX_MNT_ID`), or nil when the
/// kernel does not report it.
public func mountID(of descriptor: FileDescriptor) -> UInt64? {
    var id: UInt64 = 0
    return photo_mount_id(descriptor.rawValue, &id) == 0 ? id : nil
}
