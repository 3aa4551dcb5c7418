#if canImport(Glibc)
import Glibc
#endif
import PhotoModel

/// Unix groups: names to ids, and the groups a process belongs to.
public enum Groups {
    /// The id of the group `name` (or of a numeric `name`), nil when there is none.
    public static func id(named name: String) -> UInt32? {
        if let number = UInt32(name) { return number }
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        let rc = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard rc == 0, let found = result else { return nil }
        return found.pointee.gr_gid
    }

    /// The name of group `gid`, nil when the group database has none.
    public static func name(of gid: UInt32) -> String? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        let rc = getgrgid_r(gid, &group, &buffer, buffer.count, &result)
        guard rc == 0, let found = result, let name = found.pointee.gr_name else { return nil }
        return String(cString: name)
    }

    /// Every group of a running process (its primary and supplementary groups), from
    /// `/proc/PID/status`; empty when it cannot be read (the process is gone).
    public static func of(pid: Int32) -> Set<UInt32> {
        guard pid > 0, let fd = try? FileDescriptor.open(PathBytes("/proc/\(pid)/status")) else { return [] }
        let text = fd.closeAfter { fd -> String in
            var bytes = [UInt8](repeating: 0, count: 8 << 10)
            let n = bytes.withUnsafeMutableBytes { (try? fd.read(into: $0, at: 0)) ?? 0 }
            return String(decoding: bytes[..<n], as: UTF8.self)
        }
        var groups = Set<UInt32>()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("Groups:") {
                for field in line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                    if let id = UInt32(field) { groups.insert(id) }
                }
            } else if line.hasPrefix("Gid:") {
                // Real, effective, saved, file-system: the effective one counts.
                let fields = line.dropFirst("Gid:".count).split(whereSeparator: { $0 == " " || $0 == "\t" })
                if fields.count > 1, let id = UInt32(fields[1]) { groups.insert(id) }
            }
        }
        return groups
    }

    /// Gives `path` to group `gid` (the owner stays).
    public static func chgrp(_ path: PathBytes, to gid: UInt32) throws(SystemError) {
        _ = try path.withCString { p throws(SystemError) in
            try syscall("chown", context: path.string) { chown(p, UInt32.max, gid) }
        }
    }
}
